"""The PolarStar pipeline from Python, top to bottom, on a small network (under a minute).

    python examples/pipeline.py [OUT_DIR] [--cosim]

1. build the 104-router PolarStar (q=3, Inductive-Quad supernode, d'=3) and export its netlist;
2. route it: the arithmetic PolarStar routing, one route hop by hop, then every router pair
   checked against BFS distances;
3. simulate a latency/throughput sweep on the cycle-accurate model;
4. write the Verilog of the 26-router PolarStar (one router module, instantiated per router);
5. with --cosim: run that network in Verilator in lockstep with the model (the first Verilator
   build takes about a minute of both cores, then it is cached in build/cocotb/).
"""
import sys
import tempfile
from pathlib import Path

from contract.params import RouterParams
from hdl.network import network_verilog
from pstar.cosim import cosimulate, unavailable
from routing_logic.base import EJECT, select
from routing_logic.polarstar import PolarStarArithmetic, verify_against_bfs
from routing_logic.registry import make_routing
from sim.experiment import sweep
from topologies import build, distance_matrix, export

args = [a for a in sys.argv[1:] if not a.startswith("--")]
out = Path(args[0] if args else tempfile.mkdtemp(prefix="pstar-example-"))
out.mkdir(exist_ok=True)

# 1. build and export (a netlist file is accepted wherever a SPEC is: build("ps104.json"))
net = build("polarstar:q=3,supernode=iq,degree=3")
print(net)
export(net, out / "ps104.json")
assert build(str(out / "ps104.json")).same_netlist(net)

# 2. route: candidates per hop from router 0 to router 57, then all pairs against BFS
routing = make_routing("polarstar", net, vcs=4)
c, state, path = 0, routing.inject(0, 57), [0]
while True:
    choice = select(routing.route(c, state), lambda port, vc: 0)     # idle network: first candidate
    if choice.port == EJECT:
        break
    state = routing.advance(c, state, choice.port)
    c = routing.neighbor(c, choice.port)
    path.append(c)
print("route 0 -> 57:", path)
check = verify_against_bfs(PolarStarArithmetic(net.structure), net, distance_matrix(net))
bad = check["distance_mismatches"] + check["next_hop_failures"] + check["minimal_port_mismatches"]
print(f"{check['pairs']} router pairs: {'minimal' if bad == 0 else f'{bad} mismatches'}")

# 3. a latency/throughput sweep on the cycle-accurate model (uniform traffic)
params = RouterParams(vcs=4)
for point in sweep(net, "polarstar", "uniform", [0.1, 0.3, 0.5], params, warmup=500, cycles=2000):
    print(f"load {point['load']:.1f}: accepted {point['accepted']:.3f}, latency {point['latency_mean']} cycles")

# 4. Verilog of the 26-router network (one pstar_router module, 26 instances)
small = build("polarstar:q=3,supernode=iq,degree=0")
text, top = network_verilog(small, "polarstar", params, packed=True)
(out / "ps26.v").write_text(text)
print(f"wrote {out / 'ps26.v'}: {text.count(chr(10))} lines, {small.num_routers} routers")

# 5. co-simulation: RTL and model in lockstep, every ejected flit compared
if "--cosim" in sys.argv:
    why = unavailable()
    if why:
        print(f"co-simulation skipped: {why}")
    else:
        rep = cosimulate(small.spec, "polarstar", vcs=4, load=0.5, cycles=2000)
        print("RTL = model" if rep["mismatch"] is None else f"RTL != model: {rep['mismatch']}",
              f"({rep['flits_matched']} flits)")
