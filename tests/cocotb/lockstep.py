"""Run the `sim` model and the Verilated network on the same packets (pytest-free, shared by
tests/test_cocotb_network.py and benchmarks/bench_hdl.py).

`lockstep(spec, routing, vcs, load, cycles)` runs `NetworkSim` (uniform random traffic), builds
(or reuses) the Verilator model of the whole network (`hdl.network.network_verilog`, packed
endpoint buses, one router module as a Verilator hierarchical block), replays the model's packets
through network_bench.py and returns (cocotb results, report, build info, model).
"""
from __future__ import annotations

import json
import pathlib
import tempfile

import numpy as np

import harness
from hdl.network import network_verilog
from hdl.routing_units import table_rows
from sim.flit import bits_for, flit_layout
from sim.network_sim import NetworkSim
from sim.params import RouterParams
from topologies import build


def lockstep(spec: str, routing: str, vcs: int, load: float, cycles: int, seed: int = 1, tmp=None, name=None,
             tamper=None):
    """`tamper(trace) -> trace` alters the model's trace before the comparison (to test the report)."""
    net = build(spec)
    params = RouterParams(vcs=vcs)
    model = NetworkSim(net, routing, params, "uniform", load, seed=seed, trace=4 * cycles * net.num_endpoints + 16)
    model.run(cycles)
    pk = model.packets()
    key = f"{spec}|{routing}|{params}"
    name = name or f"net-{net.num_routers}-{routing}-v{vcs}"

    def make_verilog():
        text, _ = network_verilog(net, routing, params, shared=True, packed=True, routing_obj=model.routing)
        return text, {"routers": net.num_routers, "endpoints": net.num_endpoints}

    meta = harness.build(name, key, make_verilog, "pstar_network", hier_blocks=["pstar_router"])
    lay = flit_layout(net.num_routers, int(net.endpoints.max()), params)
    eps = net.endpoints.astype(np.int64)
    first = np.concatenate([[0], np.cumsum(eps)])
    ep_router = np.repeat(np.arange(net.num_routers), eps)
    cfg = {
        "E": net.num_endpoints, "V": vcs, "B": params.depth, "L": params.packet_flits, "cycles": cycles,
        "W": lay.size, "vb": bits_for(vcs),
        "fields": {k: [f.offset, f.width] for k, f in lay},
        "ep_router": ep_router.tolist(), "ep_local": (np.arange(net.num_endpoints) - first[ep_router]).tolist(),
    }
    if routing != "polarstar":
        cfg["load"] = [table_rows(routing, model.routing, r) for r in range(net.num_routers)]
        cfg["load_bits"] = [bits_for(net.num_routers), bits_for(net.num_routers)]
    tmp = pathlib.Path(tmp or tempfile.mkdtemp(prefix="lockstep-"))
    base = tmp / "lockstep"
    base.parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(str(base) + ".json").write_text(json.dumps(cfg))
    np.savez(str(base) + ".npz", src=pk["src"], dst=pk["dst"], created=pk["created"],
             trace=(tamper or (lambda tr: tr))(model.trace[:model.trace_len[0]].copy()))
    results = harness.run(meta, "network_bench", {"PSTAR_LOCKSTEP": str(base)})
    report_file = pathlib.Path(str(base) + ".report.json")
    report = json.loads(report_file.read_text()) if report_file.exists() else {}
    return results, report, meta, model
