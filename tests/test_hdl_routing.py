"""Routing units (hdl/routing_units.py) against routing_logic, in the Amaranth simulator.

Every (router, destination) pair of PolarStar q=3 IQ d'=0 (26 routers), IQ d'=3 (104) and Paley
d'=2 (65); the sources vary with the pair for the units that do not read the source, and a sweep
over every source on sampled pairs shows that their answer indeed does not depend on it.
Polarized (which reads the source) is checked on every (router, source, destination) triple of
the 26- and 65-router networks and of 8 routers of the 104-router one. The reference is always
`Routing.route()` of routing_logic: the candidate ports, and for Polarized their priorities.
"""
import numpy as np
import pytest
import tiers
from amaranth.hdl import Shape
from amaranth.sim import Simulator

from hdl.routing_units import (PolarizedTableUnit, PolarStarUnit, TableMinimalUnit, make_unit, min_table_rows,
                               query_layout)
from routing_logic.base import EJECT, RouteState
from routing_logic.polarized import Polarized
from routing_logic.polarstar import PolarStarMinimal
from routing_logic.table import MinimalTable
from topologies import ParameterError, polarstar

NETS = {"ps26": ("iq", 0), "ps104": ("iq", 3), "paley65": ("paley", 2)}


# CI: every triple of the 26-router network (and every pair of the 104-router one for the
# arithmetic unit, below); the 104- and 65-router ones for every unit in the PSTAR_COSIM=full tier
@pytest.fixture(scope="module", params=[n if n == "ps26" else pytest.param(n, marks=tiers.full_only("CI budget"))
                                        for n in NETS])
def net(request):
    sn, d = NETS[request.param]
    return polarstar(3, sn, d)


def run_queries(dut, queries):
    """queries: iterable of (router, src, dst, hops[, phase = 1]). Returns [(mask, [prio per
    port])], or with units that escape (answer.escape) [(mask, [prio per port], escape)]. A unit
    with several lanes answers as many queries of one router at a time."""
    lay = query_layout(dut.num_routers)
    off = {k: f.offset for k, f in lay}
    alay = dut.answer_layout
    mask_w = alay["mask"].width
    pb = dut.prio_bits
    queries = list(queries)
    out = [None] * len(queries)
    batches, k = [], 0
    while k < len(queries):          # runs of one router, at most `lanes` long
        end = k + 1
        while end < len(queries) and end - k < dut.lanes and queries[end][0] == queries[k][0]:
            end += 1
        batches.append((k, end))
        k = end

    def answer(a):
        mask = a & ((1 << mask_w) - 1)
        pr = [(a >> (mask_w + p * pb)) & ((1 << pb) - 1) for p in range(mask_w)] if pb else []
        return (mask, pr, (a >> alay["escape"].offset) & 1) if dut.escapes else (mask, pr)

    async def tb(ctx):
        qv = [dut.query[j].as_value() for j in range(dut.lanes)]
        av = [dut.answer[j].as_value() for j in range(dut.lanes)]
        for lo, hi in batches:
            ctx.set(dut.router, queries[lo][0])
            for j, (r, s, t, h, *ph) in enumerate(queries[lo:hi]):
                phase = ph[0] if ph else 1
                ctx.set(qv[j], (s << off["src"]) | (t << off["dst"]) | (h << off["hops"]) | (phase << off["phase"]))
            for j in range(hi - lo):
                out[lo + j] = answer(ctx.get(av[j]))

    sim = Simulator(dut)
    sim.add_testbench(tb)
    sim.run()
    return out


def want_of(routing, c, s, t, hops=0, phase=1):
    """(mask, {port: priority}) from routing_logic; mask 0 at the destination (EJECT)."""
    cands = routing.route(c, RouteState(s, t, hops, phase=phase))
    if cands[0].port == EJECT:
        assert len(cands) == 1
        return 0, {}
    mask = 0
    prio = {}
    for cand in cands:
        mask |= 1 << cand.port
        prio[cand.port] = cand.priority
    return mask, prio


def pairs_with_sources(n, seed=0):
    rng = np.random.default_rng(seed)
    return [(c, int(rng.integers(n)), t, int(rng.integers(4))) for c in range(n) for t in range(n)]


SHAPES = ("eq", "S", "Q", "E", "SS", "SQ", "QS", "ES", "SE", "EE", "QE", "EQ")


def shape_counts(net) -> dict:
    """Pairs (router, destination) per path shape of the arithmetic routing (routing_logic.polarstar:
    the first shape that matches, in the order its next hop is chosen; D3 when none does)."""
    u = PolarStarMinimal(net).unit
    c, t = np.meshgrid(np.arange(net.num_routers), np.arange(net.num_routers), indexing="ij")
    s, _ = u._shapes(c // u.m, c % u.m, t // u.m, t % u.m)
    taken, counts = np.zeros(c.shape, bool), {}
    for k in SHAPES:
        counts[k] = int((s[k] & ~taken).sum())
        taken |= s[k]
    counts["D3"] = int((~taken).sum())
    return counts


def test_polarstar_unit_every_pair(net):
    routing = PolarStarMinimal(net)
    n = net.num_routers
    queries = pairs_with_sources(n)
    got = run_queries(PolarStarUnit(net), queries)
    bad = [(q, g[0], want_of(routing, q[0], q[1], q[2])[0]) for q, g in zip(queries, got)
           if g[0] != want_of(routing, q[0], q[1], q[2])[0]]
    assert not bad, f"{len(bad)} of {len(queries)} (router, src, dst) differ, first: {bad[:3]}"
    print(f"\n{net.name}: pairs per shape {shape_counts(net)}")


def test_polarstar_unit_every_pair_every_shape_104():
    """Every (router, destination) of the 104-router PolarStar (q=3 IQ d'=3) against routing_logic.
    Its supernodes have internal links, so every shape of the unit has pairs of its own (the
    26-router one, d' = 0, never reaches S, SS, ES or SE); SQ and QS are taken by SS first on IQ
    supernodes. The full tier runs the same check through the `net` fixture."""
    net = polarstar(3, "iq", 3)
    counts = shape_counts(net)
    assert {k for k, v in counts.items() if v == 0} == {"SQ", "QS"}, counts
    assert sum(counts.values()) == 104 * 104
    routing = PolarStarMinimal(net)
    queries = pairs_with_sources(net.num_routers)
    got = run_queries(PolarStarUnit(net), queries)
    want = [want_of(routing, c, s, t)[0] for c, s, t, _ in queries]
    bad = [(q, g[0], w) for q, g, w in zip(queries, got, want) if g[0] != w]
    assert not bad, f"{len(bad)} of {len(queries)} (router, src, dst) differ, first: {bad[:3]}"
    print(f"\nps104: {len(queries)} pairs agree; pairs per shape {counts}")


def test_single_port_claims_hold():
    """RoutingUnit.single_port lets the VC allocator take the route's one port without choosing
    among ports, so a unit that claims it must answer at most one port for every query, also a
    destination beyond the network's routers (a malformed flit's, which the router drops). The
    arithmetic unit claims it; the minimal table, whose rows hold every minimal port, must not."""
    net = polarstar(3, "iq", 0)
    n = net.num_routers
    top = 1 << Shape.cast(query_layout(n)["dst"].shape).width
    rng = np.random.default_rng(3)
    queries = [(c, int(rng.integers(n)), t, int(rng.integers(4))) for c in range(n) for t in range(top)]
    assert PolarStarUnit.single_port and not TableMinimalUnit.single_port and not PolarizedTableUnit.single_port
    masks = [g[0] for g in run_queries(PolarStarUnit(net), queries)]
    assert all(mk & (mk - 1) == 0 for mk in masks)
    assert sum(mk != 0 for mk in masks) > n * (n - 1) * 0.9      # the check saw ports, not only 0
    routing = MinimalTable(net)
    several = [t for t in range(n) if bin(want_of(routing, 0, 0, t)[0]).count("1") > 1]
    assert several, "every minimal route of router 0 is unique: the min unit would be single-port here"


def test_polarstar_unit_ignores_source(net):
    routing = PolarStarMinimal(net)
    n = net.num_routers
    rng = np.random.default_rng(1)
    pairs = [(int(rng.integers(n)), int(rng.integers(n))) for _ in range(4)]
    queries = [(c, s, t, 0) for c, t in pairs for s in range(n)]
    got = run_queries(PolarStarUnit(net), queries)
    for q, g in zip(queries, got):
        assert g[0] == want_of(routing, q[0], q[1], q[2])[0], q


def test_table_minimal_unit_every_pair(net):
    routing = MinimalTable(net)
    n = net.num_routers
    bad = []
    for c in range(n):
        queries = [(c, (c * 7 + t * 3) % n, t, t % 3) for t in range(n)]
        got = run_queries(TableMinimalUnit(net, router=c, routing=routing), queries)
        bad += [q for q, g in zip(queries, got) if g[0] != want_of(routing, *q[:3])[0]]
    assert not bad, f"{len(bad)} (router, src, dst) differ, first: {bad[:3]}"


def test_table_unit_load_port():
    """The loadable unit (one module for all routers): rows written through `load` then read."""
    net = polarstar(3, "iq", 0)
    routing = MinimalTable(net)
    n = net.num_routers
    dut = TableMinimalUnit(net, routing=routing)
    assert dut.loadable
    got = {}

    async def tb(ctx):
        for c in (0, 5, 17):
            rows = min_table_rows(routing, c)
            for t, row in enumerate(rows):
                ctx.set(dut.load.valid, 1)
                ctx.set(dut.load.payload.addr, t)
                ctx.set(dut.load.payload.data, row)
                await ctx.tick()
            ctx.set(dut.load.valid, 0)
            ctx.set(dut.router, c)
            for t in range(n):
                ctx.set(dut.query[0].dst, t)
                got[c, t] = ctx.get(dut.answer[0].mask)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()
    for (c, t), mask in got.items():
        assert mask == want_of(routing, c, c, t)[0], (c, t)


def check_polarized(net, routers, routing, phases=(1,)):
    """Every (src, dst, phase) at `routers`: mask and priorities as routing_logic's candidates,
    and `escape` exactly where routing_logic's advance clears the phase bit."""
    n = net.num_routers
    bad = []
    escapes = 0
    for c in routers:
        queries = [(c, s, t, 0, ph) for s in range(n) for t in range(n) for ph in phases]
        got = run_queries(PolarizedTableUnit(net, router=c, routing=routing), queries)
        for q, (mask, prio, esc) in zip(queries, got):
            wm, wp = want_of(routing, q[0], q[1], q[2], phase=q[4])
            st = RouteState(q[1], q[2], phase=q[4])
            want_esc = int(q[0] != q[2] and routing.advance(q[0], st, 0).phase == 0)
            escapes += want_esc
            if mask != wm or any(prio[p] != wp[p] for p in wp) or esc != want_esc:
                bad.append((q, mask, wm, prio, wp, esc, want_esc))
    assert not bad, f"{len(bad)} (router, src, dst, phase) differ, first: {bad[:2]}"
    return escapes


def test_polarized_unit_every_triple(net):
    routing = Polarized(net, buffer_depth=8)
    n = net.num_routers
    if n <= 26:
        routers = range(n)
    elif n == 65:  # every (src, dst) of 17 routers: 4 is prime to the supernode size 5, so every ER vertex and slot
        routers = range(0, n, 4)
    else:          # 104 routers: every (src, dst) of 8 routers (quadric / non-quadric, all supernode slots)
        routers = [0, 9, 18, 27, 36, 45, 100, 103]
    check_polarized(net, routers, routing)


def test_polarized_unit_escapes_on_a_damaged_network():
    """10% of the 26-router PolarStar's links failed: the unit built with the damaged network's
    tables gives routing_logic's candidates for every (router, src, dst, phase), dead-end escapes
    (minimal ports, priority 0, `escape` set) included; on the intact network nothing escapes
    unless the head arrives with phase 0."""
    net = polarstar(3, "iq", 0)
    damaged = net.without_links(fraction=0.10, seed=1)
    routing = Polarized(damaged, buffer_depth=8)
    assert routing.route_lengths()["dead_ends"] > 0
    n = net.num_routers
    escapes = check_polarized(damaged, range(n), routing, phases=(0, 1))
    assert escapes > n * n * (n - 1)          # every phase-0 query (t != router), and dead ends
    intact = Polarized(net, buffer_depth=8)
    assert check_polarized(net, [0, 7], intact, phases=(0, 1)) == 2 * n * (n - 1)


def test_polarized_unit_penalties_scale_with_depth():
    net = polarstar(3, "iq", 0)
    for depth in (8, 128):
        routing = Polarized(net, buffer_depth=depth)
        check_polarized(net, [3], routing)


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
def test_unit_parameter_checks():
    net = polarstar(3, "iq", 0)
    with pytest.raises(ValueError, match="lanes"):
        PolarStarUnit(net, lanes=0)
    with pytest.raises(TypeError, match="net"):
        PolarStarUnit("net")
    with pytest.raises(ValueError, match="router"):
        TableMinimalUnit(net, router=26)
    with pytest.raises(ValueError, match="routing"):
        make_unit("valiant", net)
    with pytest.raises(ParameterError):
        from topologies import build
        PolarStarUnit(build("er:q=3"))


@pytest.mark.parametrize("q,sn,d", [(4, "iq", 0), (5, "iq", 0)])
def test_polarstar_unit_other_fields(q, sn, d):
    """A prime power (GF(4): log/antilog multiplication, XOR addition) and another prime."""
    net = polarstar(q, sn, d)
    routing = PolarStarMinimal(net)
    queries = pairs_with_sources(net.num_routers, seed=q)
    got = run_queries(PolarStarUnit(net), queries)
    bad = [q_ for q_, g in zip(queries, got) if g[0] != want_of(routing, *q_[:3])[0]]
    assert not bad, f"{len(bad)} of {len(queries)} differ, first: {bad[:3]}"


@pytest.mark.parametrize("fraction", [0.10, 0.20])
def test_polarstar_unit_exception_cam_on_damaged(fraction):
    """With links failed, the arithmetic unit plus its exception CAM (loaded per router through
    `load`) answers routing_logic's fallback routing for every destination of 16 routers; without
    the CAM rows it would route over failed links."""
    from hdl.routing_units import exception_entries, polarstar_exception_rows
    from routing_logic.registry import make_routing
    net = polarstar(3, "iq", 3).without_links(fraction=fraction, seed=1)
    routing = make_routing("polarstar", net)
    K = exception_entries(routing)
    dut = PolarStarUnit(net, 1, K, routing)
    lay = query_layout(net.num_routers)
    off = {k: f.offset for k, f in lay}
    rb = Shape.cast(dut.load_layout["addr"].shape).width
    routers = np.random.default_rng(3).choice(net.num_routers, 16, replace=False).tolist()
    got, differs = {}, 0
    intact = PolarStarMinimal(polarstar(3, "iq", 3), cache=False)

    async def tb(ctx):
        qv = dut.query[0].as_value()
        for r in routers:
            ctx.set(dut.router, r)
            for k, row in enumerate(polarstar_exception_rows(routing, r, net.num_routers, dut.ports, K)):
                ctx.set(dut.load.valid, 1)
                ctx.set(dut.load.payload.as_value(), k | (row << rb))
                await ctx.tick()
            ctx.set(dut.load.valid, 0)
            for t in range(net.num_routers):
                ctx.set(qv, (r << off["src"]) | (t << off["dst"]) | (1 << off["phase"]))
                got[r, t] = ctx.get(dut.answer[0].mask)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()
    for r in routers:
        for t in range(net.num_routers):
            want = want_of(routing, r, r, t)[0]
            assert got[r, t] == want, f"router {r} -> {t}: RTL mask {got[r, t]:b}, routing_logic {want:b}"
            differs += want != want_of(intact, r, r, t)[0]
    assert differs > 0 and K > 0


@pytest.mark.parametrize("name", ["min", "polarstar", "polarized"])
def test_units_read_only_the_header_fields_they_declare(name):
    """A flit carries only the optional header fields its unit declares (`header_reads`,
    hdl.network header="routing"); the others reach the query as 0. So the answer must not change
    when an undeclared field does: every (router, destination) of the 26-router network with a
    source, hop count, intermediate and phase drawn at random, against the same query with the
    undeclared fields zeroed (phase 1 where it is declared: the unit reads it)."""
    from hdl.routing_units import unit_reads
    net = polarstar(3, "iq", 0)
    n = net.num_routers
    declared = set(unit_reads(name))
    assert declared <= {"hops", "inter", "phase"}
    rng = np.random.default_rng(7)
    lay = query_layout(n)
    off = {k: f.offset for k, f in lay}
    full, zeroed = [], []
    for r in range(n):
        for t in range(n):
            s, h, i, ph = int(rng.integers(n)), int(rng.integers(16)), int(rng.integers(n)), int(rng.integers(2))
            full.append((r, s, t, h, i, ph))
            zeroed.append((r, s, t, h if "hops" in declared else 0, i if "inter" in declared else 0,
                           ph if "phase" in declared else 0))

    def answers(queries):
        got = []
        for r in range(n):           # the table units of router r: ROMs of its rows
            dut = make_unit(name, net, router=None if name == "polarstar" else r)

            async def tb(ctx):
                for q in queries[r * n:(r + 1) * n]:
                    assert q[0] == r
                    _, s, t, h, i, ph = q
                    ctx.set(dut.router, r)
                    ctx.set(dut.query[0].as_value(), (s << off["src"]) | (t << off["dst"]) | (h << off["hops"])
                            | (i << off["inter"]) | (ph << off["phase"]))
                    got.append((ctx.get(dut.answer[0].mask), ctx.get(dut.answer[0].as_value())))

            sim = Simulator(dut)
            sim.add_testbench(tb)
            sim.run()
        return got

    a, b = answers(full), answers(zeroed)
    assert sum(mask != 0 for mask, _ in a) == n * n - n         # a candidate everywhere but at the destination
    assert a == b
