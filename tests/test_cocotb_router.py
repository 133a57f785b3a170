"""Single-router co-simulation (one Verilator build of the PolarStar q=3 IQ d'=0 router, its id an input).

* directed (tests/cocotb/router_bench.py), for the one-cycle router and the pipelined one
  (`va_stages = 2`, `sa_stages = 3`, `st_stage = 1`): routes against routing_logic, timing, back-pressure,
  credit exhaustion and return, VC contention, all ports busy, malformed flits;
* router in the loop (tests/cocotb/loop_bench.py): the network is the `sim` model with one
  router replaced by the RTL; its ejection trace must equal the pure model's.
"""
import functools
import json
import os
import pathlib

import numpy as np

import pytest

import tiers
from cosim import harness

from hdl.network import plan
from hdl.router import class_of_vc
from hdl.verilog_out import to_verilog
from routing_logic.base import EJECT, RouteState
from contract.params import RouterParams
from sim.network_sim import NetworkSim
from topologies import build

ME = 5
pytestmark = pytest.mark.slow          # two Verilator builds
TESTS = ["zero_load_route_and_timing", "back_pressure_and_credit_return", "vc_contention", "all_ports_busy",
         "hop_class_comes_from_the_input_vc", "malformed_flits_are_dropped"]


SPEC = "polarstar:q=3,supernode=iq,degree=0"
LOOP_CYCLES = int(os.environ.get("PSTAR_LOOP_CYCLES", "6000"))


@functools.lru_cache(maxsize=None)
def build_router(va_stages: int, st_stage: int, sa_stages: int = 1):
    net = build(SPEC)
    params = RouterParams(va_stages=va_stages, st_stage=st_stage, sa_stages=sa_stages)
    # every optional header field (hops, inter, phase): the bench checks the hop count a head gains;
    # u-turns kept: the directed tests send heads to every destination in by every port
    top = plan(net, "polarstar", params, header="all", uturns=True)

    def make_verilog():
        return to_verilog(top.proto, "pstar_router", flatten=True), {}

    meta = harness.build(f"router-ps26-polarstar-va{va_stages}-st{st_stage}" + (f"-sa{sa_stages}" if sa_stages > 1 else ""),
                         f"router|{params}|header=all|uturns", make_verilog,
                         "pstar_router")
    return net, params, top, meta


# the one-cycle router of the contract, and the pipelined one (two-stage VA, three-stage SA, switch
# traversal stage)
@pytest.fixture(scope="module", params=[(1, 0, 1), (2, 1, 3)], ids=["va1-st0", "va2-sa3-st1"])
def router_build(request):
    return build_router(*request.param)


@pytest.fixture(scope="module")
def router_run(router_build, tmp_path_factory):
    net, params, top, meta = router_build
    route = []
    for t in range(net.num_routers):
        c = top.routing.route(ME, RouteState(ME, t))
        route.append(-1 if c[0].port == EJECT else c[0].port)
    cfg = {"R": top.R, "p": top.p, "V": params.vcs, "B": params.depth, "L": params.packet_flits, "C": top.C,
           "va_stages": params.va_stages, "sa_stages": params.sa_stages, "st_stage": params.st_stage,
           "N": net.num_routers, "router": ME, "route": route,
           "class_of_vc": [class_of_vc(w, params.vcs, top.C) for w in range(params.vcs)],
           "fields": {k: [f.offset, f.width] for k, f in top.layout}}
    path = tmp_path_factory.mktemp("router") / "router.json"
    path.write_text(json.dumps(cfg))
    results = harness.run(meta, "router_bench", {"PSTAR_ROUTER": str(path)})
    return {r["name"].split(".")[-1]: r for r in results}


@pytest.mark.parametrize("name", TESTS)
def test_router_directed(router_run, name):
    assert name in router_run, sorted(router_run)
    assert router_run[name]["passed"], router_run[name]["message"]


def canonical(trace):
    """Ejections (cycle, endpoint, packet, seq) in cycle order; within a cycle by endpoint (the
    model lists a cycle's ejections in router order, the loop lists the RTL router's last)."""
    trace = np.asarray(trace)
    return trace[np.lexsort((trace[:, 3], trace[:, 2], trace[:, 1], trace[:, 0]))]


# each pipeline option alone costs a Verilator build of its own: in the full tier (PSTAR_COSIM=full,
# as tests/test_cocotb_network.py); CI runs the one-cycle router and the fully pipelined one
full_only = tiers.full_only("one pipeline option alone")


# stages: (va_stages, st_stage, sa_stages)
@pytest.mark.parametrize("stages,router,load", [
    ((1, 0, 1), ME, 0.7), pytest.param((1, 0, 1), 0, 0.9, marks=full_only),
    pytest.param((1, 0, 1), 17, 0.5, marks=full_only), ((2, 1, 3), 17, 0.9),
    pytest.param((2, 1, 2), 17, 0.9, marks=full_only),
    pytest.param((2, 0, 1), ME, 0.8, marks=full_only), pytest.param((1, 1, 1), 0, 0.8, marks=full_only),
    pytest.param((1, 0, 2), 17, 0.8, marks=full_only), pytest.param((2, 1, 1), 0, 0.9, marks=full_only)])
def test_router_in_the_loop(stages, router, load, tmp_path):
    """The model with router `router` replaced by the RTL delivers exactly what the pure model does."""
    net, params, top, meta = build_router(*stages)
    src_model = NetworkSim(net, "polarstar", params, "uniform", load, seed=router + 1)
    src_model.run(LOOP_CYCLES)
    pk = src_model.packets()
    ref = NetworkSim(net, "polarstar", params, "uniform", 0.0, trace=len(pk["src"]) * params.packet_flits + 16)
    ref.add_packets(pk["src"], pk["dst"], pk["created"])
    ref.run(LOOP_CYCLES)
    want = canonical(ref.trace[:ref.trace_len[0]])
    assert len(want) > 0.5 * load * LOOP_CYCLES * net.num_endpoints      # loaded, moving
    base = tmp_path / "loop"
    cfg = {"spec": SPEC, "routing": "polarstar", "params": params.as_dict(),
           "router": router, "cycles": LOOP_CYCLES, "R": top.R, "P": top.R + top.p,
           "fields": {k: [f.offset, f.width] for k, f in top.layout}}
    pathlib.Path(str(base) + ".json").write_text(json.dumps(cfg))
    np.savez(str(base) + ".npz", src=pk["src"], dst=pk["dst"], created=pk["created"])
    results = harness.run(meta, "loop_bench", {"PSTAR_LOOP": str(base)})
    assert results and all(r["passed"] for r in results), results
    out = np.load(str(base) + ".out.npz")
    got = canonical(out["trace"])
    # the loop reads the RTL router's outputs for `cycles` cycles, so an ejection it makes later
    # (a flit switched in the last cycle leaves a cycle later with the traversal stage) is not
    # in its trace: compare up to the cycle by which both runs have recorded every ejection
    horizon = LOOP_CYCLES + params.link_latency - 1
    want, got = want[want[:, 0] <= horizon], got[got[:, 0] <= horizon]
    assert int(out["through"]) > 0.2 * len(want) / net.num_routers      # the RTL router carried traffic
    assert int(out["dropped"]) == 0
    first = next((k for k in range(min(len(got), len(want))) if not np.array_equal(got[k], want[k])), None)
    assert first is None and len(got) == len(want), (
        f"first difference at trace entry {first}: loop {got[first] if first is not None else None} vs "
        f"model {want[first] if first is not None else None}; lengths {len(got)} vs {len(want)}")
