"""Cycle-accurate model: exact zero-load timing, conservation, determinism, minimality of the
routes it takes, the watchdog, traffic patterns, bad parameters."""
import numba as nb
import numpy as np
import pytest

from routing_logic.registry import make_routing
from sim import engine
from sim.experiment import build_routing, run_point
from sim.network_sim import DeadlockDetected, NetworkSim
from contract.params import RouterParams
from sim.traffic import make_pattern
from topologies import Network, ParameterError, distance_matrix, polarstar

ROUTINGS = ["min", "polarstar", "polarized", "valiant", "ugal"]


@pytest.fixture(scope="module")
def ps104():
    return polarstar(3, "iq", 3)


@pytest.fixture(scope="module")
def ps26():
    return polarstar(3, "iq", 0)


def vcs_for(net, routing):
    return max(4, make_routing(routing, net, check_deadlock=False, vcs=1).default_vcs())


def check_trace(sim):
    """Independent of the engine's own checks: every flit once, at its destination, in order."""
    ej = sim.trace[:sim.trace_len[0]]
    pk = sim.packets()
    L = sim.params.packet_flits
    assert len(ej) == sim.ejected_flits
    keys = ej[:, 2] * L + ej[:, 3]
    assert len(np.unique(keys)) == len(keys)                      # never twice
    assert (pk["dst"][ej[:, 2]] == ej[:, 1]).all()                # at its destination endpoint
    order = np.lexsort((ej[:, 0], ej[:, 2]))
    by_pkt = ej[order]
    same = by_pkt[1:, 2] == by_pkt[:-1, 2]
    assert (by_pkt[1:, 3][same] == by_pkt[:-1, 3][same] + 1).all()  # in order within a packet
    assert (by_pkt[1:, 0][same] > by_pkt[:-1, 0][same]).all()


@pytest.mark.parametrize("hops_case", range(6))
def test_zero_load_latency_is_exact(ps104, hops_case):
    """One packet in an empty network: latency = 2h + L + 2 (docs/microarchitecture.md), one
    cycle more per router on the path (h + 1 of them) with the two-stage VC allocator, one more
    with the two-stage switch allocator (two with three stages), one more with the switch traversal stage (two with st_stage 2), and four more
    with the separable VC allocator; none with the registered VC choice (its state a cycle old is
    the same at zero load)."""
    net = ps104
    D = distance_matrix(net)
    p = int(net.endpoints[0])
    rng = np.random.default_rng(hops_case)
    s_ep, t_ep = rng.choice(net.num_endpoints, 2, replace=False)
    for L, vs, ss, st, sep, ch in ((1, 1, 1, 0, 0, 0), (4, 1, 1, 0, 0, 0), (1, 2, 1, 0, 0, 0), (4, 2, 1, 0, 0, 0),
                                   (4, 1, 1, 1, 0, 0), (4, 2, 1, 1, 0, 0), (1, 1, 2, 0, 0, 0), (4, 1, 2, 0, 0, 0),
                                   (4, 2, 2, 1, 0, 0), (1, 1, 1, 0, 1, 0), (4, 2, 2, 1, 1, 0), (4, 1, 1, 0, 0, 1),
                                   (4, 2, 2, 1, 1, 1), (1, 1, 3, 0, 0, 0), (4, 1, 3, 0, 0, 0), (4, 2, 3, 1, 1, 1),
                                   (1, 1, 1, 2, 0, 0), (4, 2, 3, 2, 1, 1)):
        sim = NetworkSim(net, "min", RouterParams(vcs=4, packet_flits=L, va_stages=vs, sa_stages=ss, st_stage=st,
                                                  va_separable=sep, va_choice_stage=ch), load=0.0, trace=100)
        sim.add_packets([s_ep], [t_ep], [5])
        sim.run(100)
        h = int(D[s_ep // p, t_ep // p])
        pk = sim.packets()
        assert pk["hops"][0] == h
        assert pk["done"][0] - pk["created"][0] == 2 * h + L + 2 + (vs - 1 + ss - 1 + st + 4 * sep) * (h + 1)


@pytest.mark.parametrize("routing,va_stages,sa_stages,st,sep,ch", [(r, 1, 1, 0, 0, 0) for r in ROUTINGS]
                         + [(r, 2, 2, 1, 0, 0) for r in ("min", "polarized", "ugal")]
                         + [("polarstar", 2, 1, 0, 0, 0), ("polarstar", 1, 2, 0, 0, 0), ("polarstar", 1, 1, 0, 1, 0),
                            ("polarized", 2, 2, 1, 1, 0), ("valiant", 2, 1, 0, 1, 0), ("polarized", 1, 1, 0, 0, 1),
                            ("polarstar", 2, 2, 1, 1, 1), ("polarized", 1, 3, 0, 0, 0), ("polarstar", 2, 3, 1, 1, 1),
                            ("polarstar", 2, 3, 2, 1, 1)])
def test_conservation_and_order(ps104, routing, va_stages, sa_stages, st, sep, ch):
    """Every flit once, at its destination, in order (with the two-stage VA too: its stale-request
    rules keep each output VC to one packet at a time; with the two-stage SA: a nomination is sent
    only if still eligible), on the routes each routing promises."""
    V = vcs_for(ps104, routing)
    sim = NetworkSim(ps104, routing, RouterParams(vcs=V, va_stages=va_stages, sa_stages=sa_stages, st_stage=st,
                                                  va_separable=sep, va_choice_stage=ch), "uniform", 0.4, seed=3,
                     trace=10**6)
    sim.run(3000)
    sim.stop_injection()
    sim.run(3000)
    assert sim.in_flight == 0 and sim.queued_flits == 0
    assert sim.injected_flits == sim.num_packets * 4 == sim.ejected_flits
    check_trace(sim)
    pk = sim.packets()
    D = distance_matrix(ps104)
    s, t = pk["src"] // 2, pk["dst"] // 2
    if routing in ("min", "polarstar"):
        assert (pk["hops"] == D[s, t]).all()                     # minimal, every packet
    elif routing == "polarized":
        assert (pk["hops"] >= D[s, t]).all() and pk["hops"].max() <= 4 * 3 - 3
    else:
        inter = sim.pk_inter[:sim.num_packets]
        via = inter >= 0
        assert (pk["hops"][~via] == D[s, t][~via]).all()
        assert (pk["hops"][via] == D[s[via], inter[via]] + D[inter[via], t[via]]).all()
        if routing == "valiant":
            assert via.all()


def test_deterministic(ps104):
    def trace(seed):
        sim = NetworkSim(ps104, "ugal", RouterParams(vcs=6), "uniform", 0.5, seed=seed, trace=10**6)
        sim.run(1500)
        return sim.trace[:sim.trace_len[0]].copy()
    a, b, c = trace(7), trace(7), trace(8)
    assert np.array_equal(a, b)
    assert not np.array_equal(a[:1000], c[:1000])


@pytest.mark.parametrize("routing", ROUTINGS)
def test_long_run_at_saturation(ps26, routing):
    """>= 10^5 cycles beyond saturation: nothing lost, duplicated or reordered, no deadlock."""
    V = vcs_for(ps26, routing)
    sim = NetworkSim(ps26, routing, RouterParams(vcs=V), "uniform", 1.0, seed=11, trace=0)
    sim.run(100_000, chunk=5000)
    sim.stop_injection()
    while sim.in_flight or sim.queued_flits:
        sim.run(5000, chunk=5000)
    assert sim.injected_flits == sim.ejected_flits == sim.num_packets * 4
    pk = sim.packets()
    assert (pk["done"] >= 0).all() and (pk["eseq"] == 4).all()


@pytest.mark.parametrize("routing", ["min", "polarstar"])
def test_two_turn_classes_carry_saturation_on_diameter_three(ps26, routing):
    """PolarStar minimal routing with 2 VCs: hop classes deadlock under saturation (the CDG has a
    cycle; the watchdog fires with min), turn classes (routing_logic.base.TurnVC) run 10^5 cycles
    at load 1 and drain every packet, in order."""
    params = RouterParams(vcs=2, depth=4)
    if routing == "min":
        hops = make_routing(routing, ps26, vcs=2, check_deadlock=False)
        sim = NetworkSim(ps26, routing, params, "uniform", 1.0, seed=11, routing_obj=hops)
        with pytest.raises(DeadlockDetected):
            sim.run(100_000, chunk=5000)
    sim = NetworkSim(ps26, routing, params, "uniform", 1.0, seed=11, trace=10**7, vc_policy="turns")
    assert sim.vc_classes == 2 and sim.routing.vc_policy.name == "turns"
    sim.run(100_000, chunk=5000)
    sim.stop_injection()
    while sim.in_flight or sim.queued_flits:
        sim.run(5000, chunk=5000)
    assert sim.injected_flits == sim.ejected_flits == sim.num_packets * 4 > 10**6
    check_trace(sim)
    D = distance_matrix(ps26)
    pk = sim.packets()
    assert (pk["hops"] == D[sim.ep_router[pk["src"]], sim.ep_router[pk["dst"]]]).all()


def test_watchdog_reports_deadlock():
    ring = Network.from_edges("ring", 8, [(i, (i + 1) % 8) for i in range(8)], endpoints=1)
    r = make_routing("min", ring, check_deadlock=False, vcs=1)    # 1 VC on a ring: cyclic CDG
    sim = NetworkSim(ring, "min", RouterParams(vcs=1, depth=2, packet_flits=16, watchdog=200), "permutation",
                     1.0, seed=1, routing_obj=r)
    sim.pattern.fixed = (np.arange(8) + 3) % 8          # everyone sends three hops clockwise
    sim.active = np.ones(8, dtype=bool)
    with pytest.raises(DeadlockDetected, match="no flit moved for 200 cycles"):
        sim.run(20_000)


def test_traffic_patterns(ps104):
    rng = np.random.default_rng(0)
    net = ps104
    E = net.num_endpoints
    perm = make_pattern("permutation", net, rng)
    assert sorted(perm.router_map.tolist()) == list(range(104))
    nb = make_pattern("neighbor", net, rng)
    A = net.adjacency().toarray() > 0
    assert sorted(nb.router_map.tolist()) == list(range(104)) and A[np.arange(104), nb.router_map].all()
    adv = make_pattern("adversarial", net, rng)
    D = distance_matrix(net)
    assert (D[np.arange(104), adv.router_map] == 3).all()
    m = net.structure.sn.order
    sx, tx = np.arange(104) // m, adv.router_map // m
    assert not net.structure.er.adjacent(sx, tx).any() and (sx != tx).all()
    assert len({(a, b) for a, b in zip(sx, tx)}) == net.structure.er.n        # one target per supernode
    sh = make_pattern("shuffle", net, rng)
    b = 7                                                   # 208 endpoints -> 128 used
    src = np.arange(128)
    exp = ((src << 1) | (src >> (b - 1))) & 127
    exp = np.where(exp == src, -1, exp)
    assert np.array_equal(sh.fixed[:128], exp) and (sh.fixed[128:] == -1).all()
    rv = make_pattern("reverse", net, rng)
    exp = np.array([int(format(x, "07b")[::-1], 2) for x in range(128)])
    assert np.array_equal(rv.fixed[:128], np.where(exp == src, -1, exp))
    un = make_pattern("uniform", net, rng)
    d = un.destinations(np.zeros(10000, dtype=np.int64), rng)
    assert d.min() >= 1 and d.max() == E - 1


def test_polarized_beats_min_on_neighbor_permutation(ps104):
    """Polarized paper §5: with a switch permutation onto neighbours MIN funnels each router's
    traffic through one link; Polarized spreads it."""
    out = {}
    for r in ("min", "polarized"):
        d = run_point(ps104, r, "neighbor", 0.9, RouterParams(vcs=vcs_for(ps104, r)), 500, 1500)
        assert d["lost"] == 0
        out[r] = d["accepted"]
    assert out["min"] <= 0.5                      # one link, two endpoints
    assert out["polarized"] > 1.3 * out["min"], out


def test_bad_parameters(ps104):
    with pytest.raises(ParameterError, match="load=1.5"):
        NetworkSim(ps104, "min", load=1.5)
    with pytest.raises(ParameterError, match="traffic='zigzag'"):
        NetworkSim(ps104, "min", traffic="zigzag")
    with pytest.raises(ParameterError, match="routing='fast'"):
        build_routing(ps104, "fast", RouterParams())
    with pytest.raises(ParameterError, match="vcs=1"):
        build_routing(ps104, "min", RouterParams(vcs=1))           # CDG check: cyclic
    with pytest.raises(ParameterError, match="vcs=0"):
        RouterParams(vcs=0)
    with pytest.raises(ParameterError, match="seed=-1: must be a non-negative integer"):
        NetworkSim(ps104, "min", seed=-1)
    big = polarstar(11, "iq", 3)
    with pytest.raises(ParameterError, match="needs 6 hop-indexed VCs"):
        build_routing(big, "valiant", RouterParams(vcs=4))


@nb.njit(cache=True)
def _engine_choice(r, cin, step, route, cfg, tables, state):
    """The engine's VA choice for a head at router r, as its stage makes it (`choose_vc` and
    `polarized_candidates` are inlined into the engine, without a Python entry of their own).
    route = (source router, destination router, intermediate router, phase); state = (credits,
    owner)."""
    src_r, dst_r, inter, phase = route
    dmus = np.full(cfg.R, engine.NOT_POLARIZED, dtype=np.int8)
    if cfg.mode == engine.POLARIZED:
        engine.polarized_candidates(r, src_r, dst_r, tables, dmus)
    return engine.choose_vc(r, cin, step, (src_r, dst_r, inter, phase, dmus), cfg, tables, state[0], state[1])


@pytest.mark.parametrize("routing,V,policy", [("min", 4, "hops"), ("min", 12, "hops"), ("polarstar", 7, "hops"),
                                              ("polarized", 9, "hops"), ("valiant", 6, "hops"), ("min", 2, "turns"),
                                              ("polarstar", 5, "turns"), ("valiant", 4, "turns"),
                                              ("polarized", 6, "turns"), ("min", 3, "turns"), ("valiant", 7, "turns")])
def test_engine_choice_equals_routing_logic(ps104, routing, V, policy):
    """The engine's VA choice is routing_logic's candidates + `select` (occupancy + priority,
    lowest port, lowest VC), over random credit and busy-VC states. routing_logic reads the VC
    class from the header (hops, or turns and the down bit); the engine, like the RTL, from the
    input VC's class and the class step of (input port, output port): both must agree for a
    head that arrived as the header says."""
    from routing_logic.base import RouteState, select
    from routing_logic.registry import make_routing

    kw = {"buffer_depth": 8} if routing == "polarized" else {}
    ro = make_routing(routing, ps104, vcs=V, vc_policy=policy, **kw)
    sim = NetworkSim(ps104, routing, RouterParams(vcs=V, depth=8), load=0.0, routing_obj=ro)
    r, C = sim.routing, sim.vc_classes
    rng = np.random.default_rng(5)
    n, B = ps104.num_routers, 8
    checked = 0
    for _ in range(400):
        c, s, t, x = (int(v) for v in rng.integers(n, size=4))
        if c == t:
            continue
        inter, phase = (x, 0) if routing == "valiant" and c != x else (-1, 1)
        if rng.random() < 0.2:                   # injected here: a local input, class 0
            i, hops, turns, down, cin = sim.R, 0, 0, 0, 0
        else:                                    # arrived from the neighbour on network port i
            i = int(rng.integers(ps104.ports[c]))
            hops, turns = int(rng.integers(1, 5)), int(rng.integers(0, 3))
            down = int(sim.nbr_r[c, i] > c)
            cin = min(turns if policy == "turns" else hops - 1, C - 1)
        v = int(rng.integers(*sim.crange[cin]))                                  # a VC of class cin
        assert sim.vcls[v] == cin
        credits = rng.integers(0, B + 1, size=sim.credits.shape)
        owner = np.where(rng.random(sim.owner.shape) < 0.3, 1, -1)
        got = _engine_choice(c, int(sim.vcls[v]) if i < sim.R else 0, sim.cstep[c, i], (s, t, inter, phase),
                             sim.config, sim.tables, (credits, owner))
        state = RouteState(s, t, hops, inter, phase, turns, down)
        cands = [cd for cd in r.route(c, state) if owner[c, cd.port, cd.vc] < 0]
        exp = select(cands, lambda p, w: B - credits[c, p, w]) if cands else None
        assert got == ((exp.port, exp.vc) if exp else (-1, -1)), (c, s, t, hops, turns, down)
        checked += 1
    assert checked > 300


# ---- garbage flits at endpoints (issue 8; the RTL's drop rule, docs/microarchitecture.md) ---------

def test_garbage_timing_at_zero_load(ps26):
    """Exact cycles: due garbage goes before the endpoint's next packet, one flit per cycle, each on
    the VC with the most credits; it is dropped in the cycle it reaches the front of its VC if its
    input port sends nothing then, else later; its credit comes back like a sent flit's."""
    L = 4
    sim = NetworkSim(ps26, "min", RouterParams(vcs=4), load=0.0, trace=100)
    D = distance_matrix(ps26)
    assert sim.garbage_kinds() == ("bad_dst", "bad_ep", "body", "tail")
    sim.add_garbage([0, 0], [5, 5], ["body", "bad_dst"])        # endpoint 0: two garbage flits, then a packet
    sim.add_packets([0], [7], [5])
    sim.add_packets([3], [9], [5])                              # endpoint 3: a packet, then garbage behind it
    sim.add_garbage([3], [6], ["tail"])
    sim.add_garbage([5], [20], ["bad_ep"])
    sim.run(60)
    g = sim.garbage()
    assert g["sent"].tolist() == [5, 6, 9, 20]                  # endpoint 3 waits for the end of its packet
    # endpoint 0: arrive at 6 and 7 (VCs 0 and 1) and are dropped at once; endpoint 3: its garbage
    # arrives at 10 on VC 1 while the port sends the packet's tail from VC 0 -> dropped at 11
    assert g["dropped"].tolist() == [6, 7, 11, 21]
    assert sim.dropped == sim.garbage_sent == 4
    pk = sim.packets()
    h0, h3 = int(D[0, 7]), int(D[3, 9])
    assert pk["done"][0] - pk["created"][0] == 2 * h0 + L + 2 + 2     # two cycles behind the garbage
    assert pk["done"][1] - pk["created"][1] == 2 * h3 + L + 2
    assert (sim.ep_credit == 8).all() and (sim.f_cnt == 0).all() and (sim.r_garbage == 0).all()


@pytest.mark.parametrize("netname,routing", [("ps26", "polarstar"), ("ps104", "min"), ("ps104", "ugal")])
def test_garbage_does_not_change_legit_delivery(request, netname, routing):
    """Hundreds of garbage flits of every representable kind (ps26: all four; ps104, 2 endpoints
    per router: no spare dst_ep value) at random endpoints and cycles, near saturation: the same
    packets are delivered, each flit once, at its destination, in order; only timing moves. Every
    garbage flit is dropped and counted, none is ejected, and the network drains."""
    net = request.getfixturevalue(netname)
    V = vcs_for(net, routing)

    def run(garbage):
        sim = NetworkSim(net, routing, RouterParams(vcs=V), "uniform", 0.6, seed=4, trace=10**6)
        if garbage:
            rng = np.random.default_rng(9)
            n = 400
            kinds = sim.garbage_kinds()
            sim.add_garbage(rng.integers(net.num_endpoints, size=n), rng.integers(0, 2500, size=n),
                            [kinds[k % len(kinds)] for k in range(n)])
        sim.run(3000)
        sim.stop_injection()
        sim.run(3000)
        return sim

    base, dirty = run(False), run(True)
    for sim in (base, dirty):
        check_trace(sim)
        assert sim.in_flight == 0 and sim.queued_flits == 0
        assert sim.injected_flits == sim.ejected_flits == sim.num_packets * 4
    pb, pd = base.packets(), dirty.packets()
    for k in ("src", "dst", "created"):
        assert np.array_equal(pb[k], pd[k])                       # the same legit traffic
    key = lambda s: sorted(map(tuple, s.trace[:s.trace_len[0], 1:].tolist()))   # noqa: E731
    assert key(base) == key(dirty)                                # same (endpoint, packet, seq), each once
    assert not np.array_equal(base.trace[:base.trace_len[0]], dirty.trace[:dirty.trace_len[0]])
    g = dirty.garbage()
    assert dirty.garbage_sent == dirty.dropped == 400 and base.dropped == 0
    assert (g["sent"] >= g["created"]).all() and (g["dropped"] > g["sent"]).all()
    assert (dirty.ep_credit == 8).all() and (dirty.r_garbage == 0).all() and (dirty.f_cnt == 0).all()


def test_garbage_bad_parameters(ps26):
    sim = NetworkSim(ps26, "min", load=0.0)
    with pytest.raises(ParameterError, match="'junk' unknown"):
        sim.add_garbage([0], [0], ["junk"])
    with pytest.raises(ParameterError, match="endpoint ids"):
        sim.add_garbage([26], [0], ["body"])
    sim.run(10)
    with pytest.raises(ParameterError, match="cycle >= 10"):
        sim.add_garbage([0], [5], ["body"])
    sim.add_garbage([0], [20], ["tail"])
    with pytest.raises(ParameterError, match="skip=0"):
        sim.run(1, skip=0)
    ring = Network.from_edges("ring", 8, [(i, (i + 1) % 8) for i in range(8)], endpoints=2)
    r8 = NetworkSim(ring, "min", RouterParams(vcs=4), load=0.0)
    assert r8.garbage_kinds() == ("body", "tail")                 # 8 routers, 2 endpoints: no spare values
    with pytest.raises(ParameterError, match="'bad_dst' is not representable"):
        r8.add_garbage([0], [0], ["bad_dst"])
