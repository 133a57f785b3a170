"""The Amaranth `NetworkTop` (one `Router` per router, ids and tables as constants) in the Amaranth
simulator, in lockstep with `sim`: a small network under random traffic, every ejected flit
compared with the model's trace (cycle, endpoint, packet, seq, contents). This exercises the
allocators, credit logic and wiring of the Amaranth top without Verilator; the Verilated shared-
module networks are in tests/test_cocotb_network.py."""
import pathlib
import sys

import numpy as np
import pytest
from amaranth.sim import Simulator

sys.path.insert(0, str(pathlib.Path(__file__).parent / "cocotb"))

from endpoints import EjectChecker, Endpoints  # noqa: E402

from hdl.network import NetworkTop  # noqa: E402
from sim.flit import bits_for  # noqa: E402
from sim.network_sim import NetworkSim  # noqa: E402
from sim.params import RouterParams  # noqa: E402
from topologies import build  # noqa: E402

SPEC = "polarstar:q=2,supernode=complete,degree=0"       # 7 routers, 3 network ports, 1 endpoint each


@pytest.mark.parametrize("routing,vcs,alloc_iters", [("polarstar", 4, 1), ("min", 3, 2)])
def test_amaranth_network_lockstep(routing, vcs, alloc_iters):
    net = build(SPEC)
    params = RouterParams(vcs=vcs, alloc_iters=alloc_iters)
    cycles = 250
    model = NetworkSim(net, routing, params, "uniform", 0.7, seed=5, trace=100_000)
    model.run(cycles)
    top = NetworkTop(net, routing, params, routing_obj=model.routing, shared=False)
    eps_n = net.endpoints.astype(np.int64)
    first = np.concatenate([[0], np.cumsum(eps_n)])
    ep_router = np.repeat(np.arange(net.num_routers), eps_n)
    cfg = {"E": top.E, "V": vcs, "B": params.depth, "L": params.packet_flits,
           "fields": {k: [f.offset, f.width] for k, f in top.layout},
           "ep_router": ep_router.tolist(), "ep_local": (np.arange(top.E) - first[ep_router]).tolist()}
    pk = model.packets()
    eps = Endpoints(cfg, (pk["src"], pk["dst"], pk["created"]))
    checker = EjectChecker(eps, model.trace[:model.trace_len[0]])

    async def tb(ctx):
        pending = []
        for t in range(cycles):
            for e, v in pending:
                eps.credit[e][v] += 1
            pending = []
            got = []
            for e in range(top.E):
                if ctx.get(top.eject[e].valid):
                    got.append((e, ctx.get(top.eject[e].payload.as_value())))
                if ctx.get(top.credit[e].valid):
                    pending.append((e, ctx.get(top.credit[e].payload)))
            if not checker.check(t + 1, got):
                break
            sends = dict(eps.step(t))
            for e in range(top.E):
                ctx.set(top.inject[e].valid, e in sends)
                if e in sends:
                    ctx.set(top.inject[e].payload.as_value(), sends[e])
            await ctx.tick()
        assert ctx.get(top.dropped) == 0

    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()
    assert checker.mismatch is None, f"first divergence from the model: {checker.mismatch}"
    expected = int((model.trace[:model.trace_len[0], 0] <= cycles).sum())
    assert checker.count == expected > 200
    assert bits_for(vcs) == top.layout["vc"].width
