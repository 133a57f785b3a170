"""The Amaranth `NetworkTop` (one `Router` per router, ids and tables as constants) in the Amaranth
simulator, in lockstep with `sim`: a small network under random traffic, every ejected flit
compared with the model's trace (cycle, endpoint, packet, seq, contents), and with garbage flits
(`NetworkSim.add_garbage`) the top's `dropped` compared with the model's drop count in every
cycle. This exercises the allocators, credit logic and wiring of the Amaranth top without
Verilator; the Verilated shared-module networks are in tests/test_cocotb_network.py."""
import numpy as np
import pytest
import tiers
from amaranth.hdl import Array, ResetInserter, Signal

import hdl.crossbar
from amaranth.sim import Simulator

from cosim.endpoints import EjectChecker, Endpoints

from hdl.network import NetworkTop
from sim.engine import GARBAGE_KINDS
from contract.flit import index_bits
from sim.network_sim import NetworkSim  # noqa: E402
from contract.params import RouterParams  # noqa: E402
from topologies import build  # noqa: E402

SPEC = "polarstar:q=2,supernode=complete,degree=0"       # 7 routers, 3 network ports, 1 endpoint each


PIPELINED = {"va_stages": 2, "sa_stages": 2, "st_stage": 1}
SA3 = {**PIPELINED, "sa_stages": 3}     # the switch allocator's grants registered too


# CI runs the configurations of the FPGA builds (the 100 MHz target's with its ECP5 crossbar, the
# 26-router network's with LUTRAM fronts and the registered drop sum, each with garbage and a
# reset); every other option alone is in the PSTAR_COSIM=full tier (CI budget). Each case is 30-130 s.
FULL = tiers.full_only("CI budget: one option alone")


@pytest.mark.parametrize("routing,vcs,alloc_iters,vc_policy,spec,extra", [
    pytest.param("polarstar", 4, 1, "hops", SPEC, {}, marks=FULL), pytest.param("min", 3, 2, "hops", SPEC, {}, marks=FULL),
    # turn classes: 2 VCs on a diameter-3 PolarStar, each router's class steps from its neighbours
    pytest.param("polarstar", 2, 1, "turns", "polarstar:q=2,supernode=iq,degree=0", {}, marks=FULL),
    # 3 VCs in 2 turn classes: the spare VC goes to class 0 (the policy's VC table)
    pytest.param("min", 3, 1, "turns", "polarstar:q=2,supernode=iq,degree=0", {}, marks=FULL),
    # registered links and credits (the FPGA network's --link-latency 2 --credit-latency 2), pipelined router
    pytest.param("min", 2, 1, "turns", "polarstar:q=2,supernode=iq,degree=0",
                 {"link_latency": 2, "credit_latency": 2, **PIPELINED}, marks=FULL),
    # with the VC choice from last cycle's output state (va_choice_stage): one-stage central VA,
    # whose arbiters must then check that the chosen VC is still free
    pytest.param("polarstar", 4, 1, "hops", SPEC, {"link_latency": 3, "credit_latency": 1, "va_choice_stage": 1},
                 marks=FULL),
    pytest.param("polarstar", 4, 1, "hops", SPEC, {"link_latency": 1, "credit_latency": 3}, marks=FULL),
    # lean flits (the header in heads only), as the 26-router FPGA network takes them
    pytest.param("polarstar", 4, 1, "hops", SPEC, {"flit": "lean"}, marks=FULL),
    pytest.param("min", 2, 1, "turns", "polarstar:q=2,supernode=iq,degree=0",
                 {"flit": "lean", "packet_id_bits": 8, "link_latency": 2, "credit_latency": 2, **PIPELINED}, marks=FULL),
    # malformed flits of every kind: `dropped` (one counter of the routers' per-cycle drops)
    # must step with the model's drops in every cycle
    pytest.param("polarstar", 2, 1, "turns", "polarstar:q=2,supernode=iq,degree=0", {"garbage": 12}, marks=FULL),
    # the same with every level of the drop sum registered (the FPGA tops' network; in CI: with
    # the 26-router build's configuration below)
    pytest.param("polarstar", 2, 1, "turns", "polarstar:q=2,supernode=iq,degree=0",
                 {"garbage": 12, "registered_drop_sum": True}, marks=FULL),
    # (with the three-stage SA: also the separable-VA case below, in CI)
    pytest.param("min", 2, 1, "turns", "polarstar:q=2,supernode=iq,degree=0", {"garbage": 12, **SA3}, marks=FULL),
    # a reset in the middle of heavy traffic and garbage (flits in every buffer, link and
    # pipeline register): afterwards the network must behave as a fresh one, so no register
    # left without a reset (link and pipeline data, generator headers) may be read before it is
    # written
    # (in CI: with the LUTRAM fronts below)
    pytest.param("min", 2, 1, "turns", "polarstar:q=2,supernode=iq,degree=0",
                 {"flit": "lean", "packet_id_bits": 8, "link_latency": 2, "credit_latency": 2, **PIPELINED,
                  "reset_after": 150}, marks=FULL),
    pytest.param("polarstar", 4, 1, "hops", SPEC, {"link_latency": 2, **PIPELINED, "garbage": 6, "reset_after": 120},
                 marks=FULL),
    # the separable pipelined VC allocator (hdl/separable_va.py): alone, behind the two-stage
    # request register with registered links, garbage and a reset in the middle (there with the
    # registered VC choice and the three-stage switch allocator too: the 100 MHz target's configuration)
    pytest.param("min", 3, 2, "turns", "polarstar:q=2,supernode=iq,degree=0", {"va_separable": 1, "garbage": 8},
                 marks=FULL),
    # (in CI: with the ECP5 crossbar below)
    pytest.param("polarstar", 4, 1, "hops", SPEC,
                 {"link_latency": 2, "credit_latency": 2, **SA3, "va_separable": 1, "va_choice_stage": 1, "garbage": 6,
                  "reset_after": 120}, marks=FULL),
    # the same with the body read registered twice (st_stage 2: a block RAM's clock-to-output ends
    # at a register)
    pytest.param("polarstar", 4, 1, "hops", SPEC,
                 {"link_latency": 2, "credit_latency": 2, **SA3, "st_stage": 2, "va_separable": 1, "va_choice_stage": 1,
                  "garbage": 6, "reset_after": 120}, marks=FULL),
    # the crossbar of an ECP5 build (`ecp5_muxes`: each output's select encoded into an index
    # among the inputs that can reach it, in front of the last traversal register), its slice
    # multiplexers simulated by Array indexing (test_hdl_units proves the cells equal to that): the
    # target's whole configuration, with garbage and a reset in the middle
    ("polarstar", 4, 1, "hops", SPEC, {"link_latency": 2, "credit_latency": 2, **SA3, "st_stage": 2, "va_separable": 1,
                                       "va_choice_stage": 1, "garbage": 6, "reset_after": 120, "ecp5_muxes": True}),
    # the fronts read from each port's LUTRAM instead of registers (`--front lutram`, the dense
    # network build): the 26-router network's configuration with garbage, its registered drop sum
    # and a reset in the middle; and the three-stage SA's peek
    ("min", 2, 1, "turns", "polarstar:q=2,supernode=iq,degree=0",
     {"flit": "lean", "packet_id_bits": 8, "link_latency": 2, "credit_latency": 2, **PIPELINED, "garbage": 6,
      "registered_drop_sum": True, "reset_after": 150, "registered_fronts": False}),
    pytest.param("min", 2, 1, "turns", "polarstar:q=2,supernode=iq,degree=0", {"garbage": 12, **SA3, "registered_fronts": False},
                 marks=FULL),
    # the 26-router network's configuration (fpga/presets.toml net26): the separable VC allocator
    # without its request register, the two-stage SA, the body read registered twice, the fronts
    # read from LUTRAM, the ECP5 crossbar, with garbage, its registered drop sum and a reset in the
    # middle
    pytest.param("polarstar", 2, 1, "turns", "polarstar:q=2,supernode=iq,degree=0",
                 {"flit": "lean", "packet_id_bits": 8, "link_latency": 2, "credit_latency": 2, "va_stages": 1,
                  "va_separable": 1, "sa_stages": 2, "st_stage": 2, "garbage": 6, "registered_drop_sum": True,
                  "reset_after": 150, "ecp5_muxes": True, "registered_fronts": False}, marks=FULL)])
@pytest.mark.slow
def test_amaranth_network_lockstep(routing, vcs, alloc_iters, vc_policy, spec, extra, monkeypatch):
    net = build(spec)
    extra = dict(extra)
    ecp5_muxes = extra.pop("ecp5_muxes", False)
    if ecp5_muxes:
        monkeypatch.setattr(hdl.crossbar, "ecp5_index_select", lambda m, index, values, name: Array(values)[index])
    flit = extra.pop("flit", "wide")
    per_kind = extra.pop("garbage", 0)
    reset_after = extra.pop("reset_after", 0)
    registered_fronts = extra.pop("registered_fronts", True)
    registered_drop_sum = extra.pop("registered_drop_sum", False)
    params = RouterParams(vcs=vcs, alloc_iters=alloc_iters, **extra)
    cycles = 200
    model = NetworkSim(net, routing, params, "uniform", 0.7, seed=5, trace=100_000, vc_policy=vc_policy)
    garbage = _garbage(net, per_kind, cycles)
    if garbage is not None:
        model.add_garbage(*garbage)
    model.run(cycles)
    g_drop = model.garbage()["dropped"]
    dropped_before = np.concatenate([[0], np.cumsum(np.bincount(g_drop[g_drop >= 0], minlength=cycles + 1))])
    top = NetworkTop(net, routing, params, routing_obj=model.routing, shared=False, flit=flit,
                     registered_fronts=registered_fronts, registered_drop_sum=registered_drop_sum, ecp5_muxes=ecp5_muxes)
    lag = top.drop_lag
    assert lag == ((net.num_routers - 1).bit_length() if registered_drop_sum else 0)
    rst = Signal()
    dut = ResetInserter({"sync": rst})(top)
    cfg = _endpoint_cfg(net, top, params)
    pk = model.packets()
    eps = Endpoints(cfg, (pk["src"], pk["dst"], pk["created"]), garbage)
    checker = EjectChecker(eps, model.trace[:model.trace_len[0]])
    drops, router_sums = [], []

    # other packets and garbage, at full load, before the reset
    pre_eps = _pre_reset_endpoints(net, routing, params, vc_policy, cfg, reset_after) if reset_after else None

    async def tb(ctx):
        if reset_after:
            await _traffic_then_reset(ctx, top, pre_eps, reset_after, rst)
        pending = []
        for t in range(cycles):
            drops.append(ctx.get(top.dropped))
            # each router's own counter (what a lone router reports) sums to the same (`lag`
            # cycles earlier with the registered sum)
            router_sums.append(sum(ctx.get(rt.dropped) for rt in top.routers))
            assert (router_sums[t - lag] if t >= lag else 0) == drops[-1], t
            # three-stage SA: every allocated input VC's own copy of its output VC's credit flags
            # equals those flags, and a free VC's copy is 0 (Router._held_credits)
            assert not any(ctx.get(rt.held_credit_error) for rt in top.routers if rt.held_credit_error is not None), t
            got, pending = _collect(ctx, top, eps, pending)
            if not checker.check(t + 1, got):
                break
            _inject(ctx, top, eps, t)
            await ctx.tick()
        drops.append(ctx.get(top.dropped))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()
    assert checker.mismatch is None, f"first divergence from the model: {checker.mismatch}"
    expected = int((model.trace[:model.trace_len[0], 0] <= cycles).sum())
    assert checker.count == expected > 200
    # `dropped` in cycle t counts the drops of cycles < t (< t - lag)
    assert drops == [int(dropped_before[max(t - lag, 0)]) for t in range(cycles + 1)]
    assert drops[-1] == model.dropped == eps.garbage_sent == (len(garbage[0]) if garbage else 0)
    assert index_bits(vcs) == top.layout["vc"].width
    # with ecp5_muxes every crossbar selects by index (the traversal stage and <= 8 inputs hold here)
    assert top.routers and all((rt.shape.ecp5_muxes, _indexed(rt)) == (ecp5_muxes,) * 2 for rt in top.routers)


def _indexed(router) -> bool:
    """Whether the router's crossbar selects by index among its outputs' sources."""
    return router.traversal.sources is not None


def _garbage(net, per_kind: int, cycles: int):
    """`per_kind` garbage flits of each kind (NetworkSim.add_garbage's arguments), or None."""
    if not per_kind:
        return None
    rng = np.random.default_rng(9)
    n = per_kind * len(GARBAGE_KINDS)
    return (rng.integers(net.num_endpoints, size=n), rng.integers(0, cycles - 100, size=n),
            np.repeat(np.arange(len(GARBAGE_KINDS)), per_kind))


def _endpoint_cfg(net, top, params) -> dict:
    """The endpoint configuration `Endpoints` reads (as cosim.lockstep writes it for a build)."""
    eps_n = net.endpoints.astype(np.int64)
    first = np.concatenate([[0], np.cumsum(eps_n)])
    ep_router = np.repeat(np.arange(net.num_routers), eps_n)
    return {"E": top.E, "V": params.vcs, "B": params.depth, "L": params.packet_flits,
            "fields": {k: [f.offset, f.width] for k, f in top.layout},
            "ep_router": ep_router.tolist(), "ep_local": (np.arange(top.E) - first[ep_router]).tolist(),
            "N": net.num_routers, "p": int(eps_n.max())}


def _pre_reset_endpoints(net, routing, params, vc_policy, cfg, cycles: int) -> Endpoints:
    """The endpoints of other traffic, at full load with garbage, for the `cycles` before a reset."""
    pre = NetworkSim(net, routing, params, "uniform", 1.0, seed=23, vc_policy=vc_policy)
    rng = np.random.default_rng(29)
    n = 4 * len(GARBAGE_KINDS)
    pre_garbage = (rng.integers(net.num_endpoints, size=n), rng.integers(0, cycles, size=n),
                   np.tile(np.arange(len(GARBAGE_KINDS)), 4))
    pre.add_garbage(*pre_garbage)
    pre.run(cycles)
    ppk = pre.packets()
    return Endpoints(cfg, (ppk["src"], ppk["dst"], ppk["created"]), pre_garbage)


def _collect(ctx, top, ends, pending):
    """This cycle's ejections; last cycle's returned credits go to `ends` now (the endpoint
    side of the credit contract) -> (ejections, this cycle's credits)."""
    for e, v in pending:
        ends.credit[e][v] += 1
    got, pending = [], []
    for e in range(top.E):
        if ctx.get(top.eject[e].valid):
            got.append((e, ctx.get(top.eject[e].payload.as_value())))
        if ctx.get(top.credit[e].valid):
            pending.append((e, ctx.get(top.credit[e].payload)))
    return got, pending


def _inject(ctx, top, ends, t):
    """Drive this cycle's sends of `ends` (none with `ends` None) on the top's inject ports."""
    sends = dict(ends.step(t)) if ends is not None else {}
    for e in range(top.E):
        ctx.set(top.inject[e].valid, e in sends)
        if e in sends:
            ctx.set(top.inject[e].payload.as_value(), sends[e])


async def _traffic_then_reset(ctx, top, ends, cycles: int, rst):
    """`cycles` of `ends`' traffic (it must reach the network), then a reset with nothing sent."""
    ejected = 0
    pending = []
    for t in range(cycles):
        got, pending = _collect(ctx, top, ends, pending)
        ejected += len(got)
        _inject(ctx, top, ends, t)
        await ctx.tick()
    assert ejected > 50 and ctx.get(top.dropped) > 0       # the traffic did reach the network
    _inject(ctx, top, None, cycles)
    ctx.set(rst, 1)
    await ctx.tick()
    ctx.set(rst, 0)


@pytest.mark.parametrize("spec", ["polarstar:q=3,supernode=iq,degree=0", "hyperx:dims=3x3",
                                  "polarstar:q=2,supernode=complete,degree=0"])
def test_link_table_is_the_netlist(spec):
    """`NetworkTop.link_table` (the wiring of the Amaranth top, `top_verilog` and the C++ netlist
    replay) holds each link of `Network.links()` once in each direction and nothing else, and
    `endpoint_ports` puts endpoint e on local port R + k of its router."""
    from hdl.network import plan
    net = build(spec)
    top = plan(net, "min", RouterParams(vcs=4))
    table = top.link_table()
    wired = {(r, k, int(table[r, k, 0]), int(table[r, k, 1]))
             for r in range(net.num_routers) for k in range(top.R) if table[r, k, 0] >= 0}
    links = {tuple(int(x) for x in row) for row in net.links()}
    assert wired == links | {(c, d, a, b) for a, b, c, d in links}
    assert all(k < int(net.ports[r]) for r, k, _, _ in wired)
    ep = top.endpoint_ports()
    assert len(ep) == net.num_endpoints
    for r in range(net.num_routers):
        mine = ep[ep[:, 0] == r, 1]
        assert mine.tolist() == list(range(top.R, top.R + int(net.endpoints[r])))
