"""Channel dependency graphs: verdicts, named cycles, the VC counts each routing needs."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from topologies import Network, build, distance_matrix, polarstar
from routing_logic.deadlock import (DeadlockError, channel_dependency_graph, check_deadlock, deadlock_verdict,
                                    min_vcs)
from routing_logic.base import walk_idle
from routing_logic.registry import make_routing

PS1064 = polarstar(11, "iq", 3)


@pytest.fixture(scope="module")
def bfs1064():
    return distance_matrix(PS1064).astype(np.int64)


def _assert_real_min_cycle(rep, net, dist):
    """Consecutive channels chain up, and each pair is a dependency of some minimal route."""
    cyc = rep.cycle
    assert len(cyc) >= 2
    for (r, p, nr, v), (r2, p2, nr2, v2) in zip(cyc, cyc[1:] + cyc[:1]):
        assert net.neighbor(r, p)[0] == nr and r2 == nr and v == v2 == rep.vcs - 1
        # some destination t has the path r -> nr -> nr2 on a shortest path
        assert ((dist[r] == dist[nr] + 1) & (dist[nr] == dist[nr2] + 1)).any()


@pytest.mark.slow
@pytest.mark.parametrize("routing", ["min", "polarstar"])
def test_min_on_polarstar_1064_needs_three_hop_indexed_vcs(routing, bfs1064):
    rep3 = check_deadlock(make_routing(routing, PS1064, check_deadlock=False, vcs=3))
    assert rep3.deadlock_free and rep3.method == "cdg" and rep3.cycle == []
    assert rep3.channels == 3 * 2 * PS1064.num_links       # every (link direction, VC) is used
    for v in (1, 2):
        rep = check_deadlock(make_routing(routing, PS1064, check_deadlock=False, vcs=v))
        assert not rep.deadlock_free
        _assert_real_min_cycle(rep, PS1064, bfs1064)


def test_building_a_cyclic_pair_fails_naming_the_cycle():
    net = polarstar(4, "iq", 3)
    with pytest.raises(DeadlockError) as e:
        make_routing("min", net, vcs=1)
    msg = str(e.value)
    assert "\n" not in msg and "channel dependency cycle" in msg and msg.count("vc0") >= 3
    assert make_routing("min", net).num_vcs == 3          # default: deadlock-free by construction
    assert make_routing("min", net, vcs=3, check_deadlock=False).num_vcs == 3


def _contracted(routing):
    """Channel -> channel dependencies of the module's graph (state nodes contracted)."""
    adj, n_ch, _ = channel_dependency_graph(routing)
    adj = adj.tocsr()
    deps = set()
    rows = adj.T.tocsr()
    for node in range(n_ch, adj.shape[0]):
        ins = rows.indices[rows.indptr[node]:rows.indptr[node + 1]]
        outs = adj.indices[adj.indptr[node]:adj.indptr[node + 1]]
        deps.update(itertools.product(ins[ins < n_ch].tolist(), outs[outs < n_ch].tolist()))
    return deps


def _brute_force_deps(net, routing):
    """Enumerate every route explicitly (DFS over candidates) and collect consecutive channel pairs."""
    V = routing.num_vcs
    deps = set()
    for s in range(net.num_routers):
        for t in range(net.num_routers):
            if s == t:
                continue
            stack = [(s, routing.inject(s, t), None)]
            while stack:
                c, st, prev = stack.pop()
                for cand in routing.route(c, st):
                    if cand.port < 0:
                        continue
                    ch = (int(net.offsets[c]) + cand.port) * V + cand.vc
                    if prev is not None:
                        deps.add((prev, ch))
                    stack.append((net.neighbor(c, cand.port)[0], routing.advance(c, st, cand.port), ch))
    return deps


@pytest.mark.parametrize("name,vcs", [("min", 1), ("min", 2), ("polarized", 3), ("polarized", 9)])
def test_graph_matches_brute_force_route_enumeration(name, vcs):
    net = polarstar(2, "iq", 0)       # 14 routers
    r = make_routing(name, net, check_deadlock=False, vcs=vcs)
    assert _contracted(r) == _brute_force_deps(net, r)


def test_ring_classic_example():
    ring = Network.from_edges("ring8", 8, [(i, (i + 1) % 8) for i in range(8)])
    assert not check_deadlock(make_routing("min", ring, check_deadlock=False, vcs=1)).deadlock_free
    rep = check_deadlock(make_routing("min", ring, check_deadlock=False, vcs=4))
    assert rep.deadlock_free


def test_vc_counts_each_routing_needs_on_polarstar():
    """Measured on PolarStar(q=3, Paley, d'=2): MIN 3, Valiant/UGAL 6 (= 2D), Polarized 7."""
    net = polarstar(3, "paley", 2)
    need = {}
    for name in ("min", "polarstar", "valiant", "ugal", "polarized"):
        kw = {"distances": "table"} if name in ("polarized", "valiant", "ugal") else {}
        v, rep = min_vcs(lambda V: make_routing(name, net, check_deadlock=False, vcs=V, **kw), max_vcs=9)
        need[name] = v
    assert need == {"min": 3, "polarstar": 3, "valiant": 6, "ugal": 6, "polarized": 7}


def test_verdict_by_construction_when_vcs_cover_the_longest_route():
    net = build("slimfly:q=5")
    r = make_routing("polarized", net, check_deadlock=False)
    assert r.num_vcs == r.max_route_length == 5
    rep = deadlock_verdict(r)
    assert rep.deadlock_free and rep.method == "vc-monotone"
    exact = deadlock_verdict(r, exact=True)
    assert exact.deadlock_free and exact.method == "cdg" and exact.states > 0
    assert check_deadlock(make_routing("valiant", net, check_deadlock=False, vcs=2)).deadlock_free is False


@pytest.mark.parametrize("q", [2, 3, 4])
def test_polarstar_with_a_one_vertex_supernode_needs_two_vcs(q):
    """A one-vertex supernode leaves ER_q (diameter 2): the arithmetic routing's bound is 2, and the
    exact CDG check agrees that 2 hop-indexed VCs are deadlock-free and 1 is not."""
    net = build(f"polarstar:q={q},supernode=complete,degree=0")
    assert int(distance_matrix(net).max()) == 2
    r = make_routing("polarstar", net, check_deadlock=False)
    assert r.max_route_length == r.default_vcs() == 2
    assert deadlock_verdict(make_routing("polarstar", net, check_deadlock=False, vcs=2), exact=True).deadlock_free
    assert not check_deadlock(make_routing("polarstar", net, check_deadlock=False, vcs=1)).deadlock_free
    n = net.num_routers
    s, t = np.divmod(np.arange(n * n), n)
    hops, _ = walk_idle(r, s, t)
    assert (hops == distance_matrix(net)[s, t]).all() and hops.max() == 2


# ---- turn-indexed VC classes (routing_logic.base.TurnVC) ------------------------------------
def _turn_routes(routing, net):
    """Every route of every (s, t) (DFS over candidates): lists of (router, next router, vc)."""
    out = []
    for s in range(net.num_routers):
        for t in range(net.num_routers):
            if s == t:
                continue
            stack = [(s, routing.inject(s, t), [])]
            while stack:
                c, st, path = stack.pop()
                for cand in routing.route(c, st):
                    if cand.port < 0:
                        out.append(path)
                        continue
                    nxt = net.neighbor(c, cand.port)[0]
                    stack.append((nxt, routing.advance(c, st, cand.port), path + [(c, nxt, cand.vc)]))
    return out


@pytest.mark.parametrize("spec", ["polarstar:q=2,supernode=iq,degree=0", "polarstar:q=3,supernode=iq,degree=0",
                                  "polarstar:q=3,supernode=paley,degree=2"])
def test_turn_classes_rise_only_at_down_then_up_turns(spec):
    """Along every minimal route the VC stays while the route goes up (to higher ids) then down,
    and rises by one exactly at each down-then-up turn; a diameter-3 route has at most one."""
    net = build(spec)
    r = make_routing("min", net, vcs=2, vc_policy="turns")
    routes = _turn_routes(r, net)
    assert len(routes) > net.num_routers ** 2 - net.num_routers
    turns_seen = 0
    for path in routes:
        assert path[0][2] == 0
        for (a, b, v), (_, d, w) in zip(path, path[1:]):
            turn = b < a and d > b
            assert w == v + turn, path
            turns_seen += turn
    assert turns_seen > 0


@pytest.mark.parametrize("spec", ["polarstar:q=2,supernode=iq,degree=0", "polarstar:q=3,supernode=iq,degree=0",
                                  "polarstar:q=3,supernode=paley,degree=2", "polarstar:q=3,supernode=iq,degree=3"])
@pytest.mark.parametrize("name", ["min", "polarstar"])
def test_turn_classes_make_polarstar_minimal_routing_deadlock_free_with_two_vcs(spec, name):
    """Diameter 3: hop classes need 3 VCs (2 leave a cycle); turn classes need 2 (the exact CDG
    agrees with the up*/down* argument) and 1 is cyclic."""
    net = build(spec)
    assert int(distance_matrix(net).max()) == 3
    turns = make_routing(name, net, check_deadlock=False, vc_policy="turns")
    assert turns.default_vcs() == 2 and turns.num_vcs == 2
    assert deadlock_verdict(turns).method == "turn-classes"
    assert deadlock_verdict(turns, exact=True).deadlock_free
    assert not check_deadlock(make_routing(name, net, check_deadlock=False, vcs=1, vc_policy="turns")).deadlock_free
    assert not check_deadlock(make_routing(name, net, check_deadlock=False, vcs=2)).deadlock_free


def test_turn_classes_for_valiant_and_the_brute_force_graph():
    """Valiant (routes up to 2D = 6 hops): D + 1 = 4 turn classes, exact CDG acyclic, 3 cyclic; and
    the module's graph equals brute-force route enumeration under the turn policy."""
    net = polarstar(2, "iq", 0)
    r = make_routing("valiant", net, check_deadlock=False, vc_policy="turns")
    assert r.default_vcs() == 4 and deadlock_verdict(r, exact=True).deadlock_free
    assert not check_deadlock(make_routing("valiant", net, check_deadlock=False, vcs=3, vc_policy="turns")).deadlock_free
    m = make_routing("min", net, check_deadlock=False, vcs=2, vc_policy="turns")
    assert _contracted(m) == _brute_force_deps(net, m)


def test_unknown_vc_policy_is_one_line():
    with pytest.raises(Exception, match="vc_policy='zigzag': unknown; allowed: hops, turns"):
        make_routing("min", polarstar(2, "iq", 0), vc_policy="zigzag")


def test_vc_tables_of_the_two_policies():
    """k = V // C VCs per class; the V mod C leftovers go to the last hop class (the tail of long
    routes) but to turn class 0 (every hop before the first down-then-up turn); both policies
    list the same VCs per class in route() as in their table."""
    from routing_logic.base import HopVC, TurnVC
    assert HopVC(4, classes=3).vc_class_table() == [0, 1, 2, 2]
    assert HopVC(7, classes=3).vc_class_table() == [0, 0, 1, 1, 2, 2, 2]
    assert TurnVC(3, classes=2).vc_class_table() == [0, 0, 1]
    assert TurnVC(5, classes=2).vc_class_table() == [0, 0, 0, 1, 1]
    assert TurnVC(2, classes=2).vc_class_table() == [0, 1]
    net = polarstar(2, "iq", 0)
    r = make_routing("min", net, vcs=3, vc_policy="turns")
    table = r.vc_policy.vc_class_table()
    from routing_logic.base import RouteState
    for c in range(net.num_routers):
        for t in range(net.num_routers):
            if c != t:
                for turns in (0, 1):
                    for cand in r.route(c, RouteState(c, t, turns=turns)):
                        assert table[cand.vc] == turns


@pytest.mark.parametrize("policy", ["hops", "turns"])
def test_class_steps_table_equals_the_policys_class_step(policy):
    """`Routing.class_steps()` (the table the simulator and the RTL take) agrees, entry by entry,
    with the VC policy's scalar `class_step` over every connected (input, output) port pair."""
    from routing_logic.base import VC_POLICIES
    net = polarstar(3, "iq", 3)
    r = make_routing("min", net, check_deadlock=False, vc_policy=policy)
    table = r.class_steps()
    step = VC_POLICIES[policy].class_step
    R = int(net.ports.max())
    nbr = np.full((net.num_routers, R), -1)
    for c in range(net.num_routers):
        for i in range(int(net.ports[c])):
            nbr[c, i] = net.neighbor(c, i)[0]          # (router, port) at the other end
    want = np.zeros_like(table)
    for c in range(net.num_routers):
        for i in range(R):
            for o in range(R):
                if nbr[c, i] >= 0 and nbr[c, o] >= 0:
                    want[c, i, o] = step(int(nbr[c, i]), c, int(nbr[c, o]))
    assert np.array_equal(table, want)
    assert policy == "hops" or 0 < table.sum() < table.size      # turns: some steps 0, some 1
