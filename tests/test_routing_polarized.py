"""Polarized routing: the paper's candidate rules, penalties, symmetry, termination, route length.

Topologies: PolarStar (table and arithmetic distances), SlimFly (MMS, q=5) and a Jellyfish
random regular graph whose degree meets the paper's condition d > 2.885 ln n.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from topologies import Network, build, distance_matrix, polarstar
from topologies.errors import ParameterError
from routing_logic.base import EJECT, RouteState, StateArrays, walk_idle
from routing_logic.polarized import Polarized


def _reference_candidates(dist, nbr, s, t, c, paper=True):
    """The paper's Table 1, written out independently: {port: Δμ}."""
    if c == t:
        return {EJECT: None}
    a, b = dist[c, s], dist[c, t]
    out = {}
    for p, m in enumerate(nbr[c]):
        if m < 0:
            continue
        ds, dt = dist[m, s] - a, dist[m, t] - b
        dmu = ds - dt
        if dmu > 0:
            out[p] = dmu
        elif (ds, dt) == (1, 1) and a < b:
            out[p] = 0
        elif (ds, dt) == (-1, -1) and (a >= b if paper else a > b):
            out[p] = 0
    if not out:         # a dead end: the packet escapes to the minimal ports (priority 0)
        out = {p: "escape" for p, m in enumerate(nbr[c]) if m >= 0 and dist[m, t] == b - 1}
    return out


def _nets():
    return {
        "polarstar": polarstar(3, "paley", 2),
        "slimfly": build("slimfly:q=5"),
        "jellyfish": build("jellyfish:n=60,d=12,seed=1"),
    }


NETS = _nets()


@pytest.mark.parametrize("name", list(NETS))
@pytest.mark.parametrize("symmetric", [False, True])
def test_candidates_follow_the_paper_table(name, symmetric):
    net = NETS[name]
    r = Polarized(net, distances="table", symmetric=symmetric)
    dist = distance_matrix(net).astype(int)
    nbr = r.oracle.nbr
    rng = np.random.default_rng(0)
    n = net.num_routers
    for s, t, c in rng.integers(n, size=(400, 3)).tolist():
        ref = _reference_candidates(dist, nbr, s, t, c, paper=not symmetric)
        got = r.route(c, RouteState(s, t, hops=2))
        assert [x.port for x in got] == sorted(ref)
        for x in got:
            if x.port != EJECT:
                assert x.priority == {2: 0, 1: 64, 0: 80, "escape": 0}[ref[x.port]]
                assert x.vc == 2


def test_penalties_scale_with_buffer_depth_and_are_a_parameter():
    net = NETS["slimfly"]
    assert Polarized(net, buffer_depth=64).penalty == {2: 0, 1: 32, 0: 40}
    assert Polarized(net, buffer_depth=256).penalty == {2: 0, 1: 128, 0: 160}
    assert Polarized(net, penalties={2: 0, 1: 10, 0: 20}).penalty == {2: 0, 1: 10, 0: 20}
    with pytest.raises(ParameterError, match="buffer_depth=0"):
        Polarized(net, buffer_depth=0)
    with pytest.raises(ParameterError, match="penalties"):
        Polarized(net, penalties={2: 0, 1: 10})


@pytest.mark.parametrize("name", list(NETS))
def test_every_route_terminates_within_4D_minus_3(name):
    net = NETS[name]
    r = Polarized(net, distances="table")
    dist = distance_matrix(net).astype(np.int64)
    D = int(dist.max())
    L = r.route_lengths()
    off = ~np.eye(net.num_routers, dtype=bool)
    assert L["dead_ends"] == 0 and L["cyclic"] == 0
    assert np.array_equal(L["shortest"][off], dist[off])        # minimal routes are polarized routes
    assert (L["longest"][off] <= 4 * D - 3).all()
    assert L["longest"][off].max() > D                         # and it does take non-minimal ones
    assert np.array_equal(L["zero_load"][off], dist[off])      # idle network: Δμ = 2 first = minimal
    print(f"{net.name}: D={D}, longest Polarized route {L['longest'][off].max()} (bound {4 * D - 3})")


def test_observed_longest_routes():
    """Measured maxima (docs/routing.md): 8 on PolarStar (D=3), 4 = 2D on SlimFly, 9 = 4D-3 on this RRG."""
    got = {k: int(Polarized(net, distances="table").route_lengths()["longest"].max()) for k, net in NETS.items()}
    assert got == {"polarstar": 8, "slimfly": 4, "jellyfish": 9}


def test_route_lengths_agree_with_walks_through_the_api():
    net = NETS["jellyfish"]
    r = Polarized(net, distances="table")
    n = net.num_routers
    s = np.repeat(np.arange(n), n)
    t = np.tile(np.arange(n), n)
    hops, _ = walk_idle(r, s, t, limit=16)
    assert np.array_equal(hops.reshape(n, n), r.route_lengths()["zero_load"])


def _hop_allowed(r, s, t):
    """(n, P) hops the paper's rule allows for the pair (s, t) (without the dead-end escape:
    the symmetric rule has dead ends at states no route reaches)."""
    o, c = r.oracle, np.arange(r.n)
    ok, _ = r.allowed(o.delta(c, s), o.delta(c, t), o.dist_of(c, s), o.dist_of(c, t))
    ok[t] = False                                   # at t the packet ejects
    return ok


@pytest.mark.parametrize("name", ["polarstar", "jellyfish"])
def test_symmetry(name):
    """Hop c->n is a candidate for (s,t) iff n->c is one for (t,s) — except Δμ = 0 hops at a
    tie D(c,s) = D(c,t): the paper allows (-1,-1) there, and its reverse is a (+1,+1) hop from
    a tie, which it forbids. symmetric=True drops those hops and is symmetric everywhere."""
    net = NETS[name]
    dist = distance_matrix(net).astype(int)
    nbr = Polarized(net, distances="table").oracle.nbr
    peer_port = net.peer_table()[1]
    n = net.num_routers
    tie_hops = 0
    for symmetric in (False, True):
        r = Polarized(net, distances="table", symmetric=symmetric)
        for s in range(0, n, 3):
            for t in range(n):
                if s == t:
                    continue
                fwd, rev = _hop_allowed(r, s, t), _hop_allowed(r, t, s)
                c, p = np.nonzero(nbr >= 0)
                m = nbr[c, p]
                mirror = rev[m, peer_port[net.offsets[c] + p]]
                # at c = t the packet ejects (no hop) while (t, s) may leave its source t
                differ = (fwd[c, p] != mirror) & (c != t) & (m != s)
                # Δμ = 0 hops at a tie D(c,s) = D(c,t): toward both (allowed), away from both (not)
                even = dist[c, s] == dist[c, t]
                down = even & (dist[m, s] == dist[c, s] - 1) & (dist[m, t] == dist[c, t] - 1)
                up = even & (dist[m, s] == dist[c, s] + 1) & (dist[m, t] == dist[c, t] + 1)
                if symmetric:
                    assert not differ.any()
                else:
                    ends = (c != t) & (m != s)
                    assert (differ == ((down | up) & ends)).all()
                    assert (fwd[c, p][differ] == down[differ]).all()
                    tie_hops += int(differ.sum())
    assert tie_hops > 0     # the paper rule really is asymmetric on these graphs


def test_symmetric_variant_route_sets_are_reversals():
    net = NETS["polarstar"]
    r = Polarized(net, distances="table", symmetric=True)

    def edges(s, t):
        ok = _hop_allowed(r, s, t)
        g = nx.DiGraph()
        c, p = np.nonzero(ok)
        g.add_edges_from(zip(c.tolist(), r.oracle.nbr[c, p].tolist()))
        on = nx.descendants(g, s) | {s}
        on &= nx.ancestors(g, t) | {t}
        return {(a, b) for a, b in g.edges if a in on and b in on}

    for s, t in [(0, 17), (3, 64), (20, 21), (40, 5)]:
        assert edges(s, t) == {(b, a) for a, b in edges(t, s)}


def test_table_and_arithmetic_distances_give_identical_candidates():
    net = polarstar(4, "iq", 3)
    rt = Polarized(net, distances="table")
    ra = Polarized(net, distances="arithmetic")
    assert ra.oracle.kind == "arithmetic" and rt.oracle.kind == "table"
    rng = np.random.default_rng(3)
    n = net.num_routers
    s, t, c = rng.integers(n, size=(3, 20_000))
    st = StateArrays.make(s, t, hops=rng.integers(0, 12, size=len(s)))
    a = ra.candidates_batch(c, st)
    b = rt.candidates_batch(c, st)
    for x, y in zip(a, b):
        assert np.array_equal(x, y)
    assert ra.route(5, RouteState(7, 100)) == rt.route(5, RouteState(7, 100))
    # the same through the arithmetic itself, per hop (no tabulation at all)
    rn = Polarized(net, distances="arithmetic", cache=False)
    for i in range(0, len(s), 97):
        assert rn.route(int(c[i]), st[i]) == rt.route(int(c[i]), st[i])
    # no per-router-count table in the arithmetic unit
    assert ra.storage_bits()["total"] < 1000 < rt.storage_bits()["total"]


def test_polarized_on_the_1064_router_polarstar_sampled():
    net = polarstar(11, "iq", 3)
    r = Polarized(net, distances="arithmetic")
    assert r.max_route_length == 9 and r.num_vcs == 9
    targets = np.arange(0, 1064, 7)
    L = r.route_lengths(sources=[0, 517, 1063], targets=targets)
    dist = distance_matrix(net).astype(np.int64)[np.ix_([0, 517, 1063], targets)]
    assert L["dead_ends"] == 0 and L["cyclic"] == 0
    assert np.array_equal(L["shortest"], dist)
    assert L["longest"].max() <= 9
    assert np.array_equal(L["zero_load"], dist)


def test_source_router_allows_every_port():
    """At c = s, D(c,s) = 0 < D(c,t): every hop departs s (Δs = +1) and is a candidate."""
    net = NETS["slimfly"]
    r = Polarized(net)
    cands = r.route(7, RouteState(7, 30))
    assert [c.port for c in cands] == list(range(net.degree[7]))


def test_corners_of_a_path_graph_escape_to_minimal_routing():
    """The paper: Polarized does not suit a path graph, a route can walk away into a corner.
    There the packet escapes: it takes the minimal port and clears its phase bit, and from then
    on routes minimally (route length: hops into the corner + D(corner, t))."""
    path = Network.from_edges("path5", 5, [(i, i + 1) for i in range(4)])
    r = Polarized(path)
    assert [c.port for c in r.route(1, RouteState(2, 4))] == [0]                 # only toward router 0
    assert path.neighbor(1, 0) == (0, 0)
    assert r.allowed(r.oracle.delta(0, 2), r.oracle.delta(0, 4), 2, 4)[0].sum() == 0   # the corner
    esc = r.route(0, RouteState(2, 4, hops=2))
    assert [(c.port, c.priority) for c in esc] == [(0, 0)]                       # minimal, no penalty
    after = r.advance(0, RouteState(2, 4, hops=2), 0)
    assert after.phase == 0 and r.advance(1, RouteState(2, 4, hops=1), 0).phase == 1
    # escaped: only minimal ports, even where the rule would allow more (at the source, every port)
    assert [c.port for c in r.route(2, RouteState(2, 4, phase=0))] == [1]
    assert [c.port for c in r.route(2, RouteState(2, 4))] == [0, 1]
    L = r.route_lengths()
    assert L["dead_ends"] > 0 and L["cyclic"] == 0
    assert L["longest"][2, 4] == 2 + 4 and L["shortest"][2, 4] == 2 and L["zero_load"][2, 4] == 2
