"""`RoutingUnitTop` (fpga/tops.py, `pstar fpga build --design unit`): the routing unit alone, fed by
query registers. In the Amaranth simulator every lane's answer must be routing_logic's candidates for
its registered query (so the top times the real unit, lane by lane), or with the router id as an
input, the candidates at the registered id (arithmetic) or the row last written through the load
port (table RAM); and the LED signature must be the fold of the answers (so every answer bit
reaches a pin)."""
import pytest
from amaranth.sim import Simulator

from fpga.build import FpgaConfig, validate
from fpga.tops import RoutingUnitTop
from contract.params import RouterParams
from test_hdl_routing import want_of
from topologies import build

SPEC = "polarstar:q=3,supernode=iq,degree=3"      # 104 routers, R = 7, one endpoint: 8 lanes


def simulate(top, cycles):
    regs = {"router": top.router_reg, "load": top.load_reg}
    trace = []

    async def bench(ctx):
        for _ in range(cycles):
            trace.append({"q": [ctx.get(q.as_value()) for q in top.queries],
                          "a": [ctx.get(a.as_value()) for a in top.answers],
                          "misr": ctx.get(top.misr), "leds": ctx.get(top.leds),
                          **{k: ctx.get(r) for k, r in regs.items() if r is not None}})
            await ctx.tick()

    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return trace


def check_fold(top, trace):
    size = top.unit.answer_layout.size
    for now, nxt in zip(trace, trace[1:]):
        assert now["leds"] == now["misr"] & 0xFF
        fold = 0
        for a in now["a"]:
            for k in range(0, size, 32):
                fold ^= (a >> k) & 0xFFFFFFFF
        sig = now["misr"]
        assert nxt["misr"] == (((sig << 1) | (sig >> 31)) & 0xFFFFFFFF) ^ fold


@pytest.mark.parametrize("routing", ["polarstar", "min", "polarized"])
def test_unit_top_answers_are_routing_logic(routing):
    cfg = FpgaConfig(design="unit", spec=SPEC, routing=routing, ports=8, vcs=4, depth=8, router=5)
    _, net, params, _, routing_obj = validate(cfg)
    top = RoutingUnitTop(net, routing, params, router=5, routing_obj=routing_obj)
    u = top.unit
    assert top.lanes == 8 and u.lanes == 8 and top.router_reg is None
    n, R, pb = net.num_routers, u.ports, u.prio_bits
    trace = simulate(top, 120)
    check_fold(top, trace)
    checked, nonzero, dsts = 0, 0, set()
    for t, now in enumerate(trace):
        for lane, (qv, av) in enumerate(zip(now["q"], now["a"])):
            q = u.query_layout.from_bits(qv)
            if q.src >= n or q.dst >= n:
                continue                    # not a router: the unit's answer is unspecified
            want_mask, want_prio = want_of(routing_obj, 5, q.src, q.dst, q.hops, q.phase)
            mask = av & ((1 << R) - 1)
            assert mask == want_mask, (t, lane, q, mask, want_mask)
            for p, pr in want_prio.items():
                if pb:
                    assert (av >> (R + p * pb)) & ((1 << pb) - 1) == pr, (t, lane, q, p)
            checked += 1
            nonzero += mask != 0
            dsts.add(q.dst)
    assert checked > 300 and nonzero > checked // 2 and len(dsts) > 50, (checked, nonzero, len(dsts))


@pytest.mark.parametrize("routing", ["polarstar", "min"])
def test_unit_top_with_the_router_id_as_input(routing):
    cfg = FpgaConfig(design="unit", spec=SPEC, routing=routing, ports=8, id_input=True)
    _, net, params, _, routing_obj = validate(cfg)
    top = RoutingUnitTop(net, routing, params, router=None, routing_obj=routing_obj)
    u = top.unit
    n, R = net.num_routers, u.ports
    assert top.router_reg is not None and (top.load_reg is not None) == (routing == "min") == u.loadable
    trace = simulate(top, 150)
    check_fold(top, trace)
    rows = [0] * n                          # the table RAM starts empty; `load` writes it
    checked, ids, writes = 0, set(), 0
    for t, now in enumerate(trace):
        for qv, av in zip(now["q"], now["a"]):
            q = u.query_layout.from_bits(qv)
            if q.src >= n or q.dst >= n or now["router"] >= n:
                continue
            want = (want_of(routing_obj, now["router"], q.src, q.dst, q.hops, q.phase)[0] if routing == "polarstar"
                    else rows[q.dst])
            assert av & ((1 << R) - 1) == want, (t, q, now["router"])
            checked += 1
            ids.add(now["router"])
        if routing == "min" and now["load"] & 1:
            load = u.load_layout.from_bits(now["load"] >> 1)
            if load.addr < n:
                rows[load.addr] = load.data
                writes += 1
    assert checked > 200 and len(ids) > 20 and (routing != "min" or writes > 20), (checked, len(ids), writes)


def test_unit_top_bad_router():
    net = build(SPEC)
    with pytest.raises(ValueError, match="router=104: must be None or a router id"):
        RoutingUnitTop(net, "polarstar", RouterParams(), router=104)
