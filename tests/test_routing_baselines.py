"""Table-based minimal, Valiant and UGAL-L on any Network; the selection rule; registry and CLI."""
from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from pstar.cli import main
from topologies import Network, build, distance_matrix, polarstar
from topologies.errors import ParameterError
from routing_logic.base import EJECT, Candidate, RouteState, StateArrays, select, walk_idle
from routing_logic.registry import ROUTINGS, make_routing
from routing_logic.table import MinimalTable, TableOracle
from routing_logic.valiant import UGAL, Valiant

NETS = {
    "polarstar": polarstar(4, "iq", 3),
    "slimfly": build("slimfly:q=5"),
    "jellyfish": build("jellyfish:n=80,d=8,seed=2"),
}


@pytest.mark.parametrize("name", list(NETS))
def test_min_table_candidates_are_exactly_the_minimal_ports(name):
    net = NETS[name]
    r = MinimalTable(net)
    g = net.to_networkx()
    sp = dict(nx.all_pairs_shortest_path_length(g))
    n = net.num_routers
    rng = np.random.default_rng(0)
    for c, t in rng.integers(n, size=(300, 2)).tolist():
        got = [x.port for x in r.route(c, RouteState(c, t, hops=1))]
        if c == t:
            assert got == [EJECT]
            continue
        want = [p for p in range(net.ports[c]) if net.neighbor(c, p)[0] >= 0
                and sp[net.neighbor(c, p)[0]][t] == sp[c][t] - 1]
        assert got == want
    mask = r.port_mask()
    assert mask.shape == (n, n, r.oracle.ports)
    nh = r.next_hop_table()
    assert (nh[np.arange(n), np.arange(n)] == EJECT).all()
    s = np.repeat(np.arange(n), n)
    t = np.tile(np.arange(n), n)
    hops, _ = walk_idle(r, s, t)
    assert np.array_equal(hops, distance_matrix(net)[s, t].astype(np.int64))
    assert r.num_vcs == int(distance_matrix(net).max())


def test_valiant_goes_through_its_intermediate_router():
    net = NETS["slimfly"]
    r = Valiant(net)
    dist = distance_matrix(net).astype(np.int64)
    rng = np.random.default_rng(5)
    for _ in range(200):
        s, t = (int(v) for v in rng.integers(net.num_routers, size=2))
        st = r.inject(s, t, rng=rng)
        if s == t:
            assert st.phase == 1 and r.route(s, st)[0].port == EJECT
            continue
        assert st.phase == 0 and 0 <= st.inter < net.num_routers
        c, seen_inter, hops = s, False, 0
        while True:
            cands = r.route(c, st)
            if cands[0].port == EJECT:
                break
            seen_inter |= c == st.inter
            for x in cands:        # every candidate is minimal toward the current target
                tgt = st.inter if st.target(c)[0] == 0 else t
                assert dist[net.neighbor(c, x.port)[0], tgt] == dist[c, tgt] - 1
                assert x.vc == min(hops, r.num_vcs - 1)
            x = cands[-1]          # take the highest port: any candidate must work
            st = r.advance(c, st, x.port)
            c = net.neighbor(c, x.port)[0]
            hops += 1
        seen_inter |= c == st.inter
        assert c == t and seen_inter and st.target(c)[0] == 1
        assert hops == dist[s, st.inter] + dist[st.inter, t]


def test_valiant_is_deterministic_given_the_generator():
    r = Valiant(NETS["jellyfish"])
    a = [r.inject(1, 2, rng=g) for g in [np.random.default_rng(9)] for _ in range(5)]
    b = [r.inject(1, 2, rng=g) for g in [np.random.default_rng(9)] for _ in range(5)]
    assert a == b
    assert len({x.inter for x in a}) > 1
    with pytest.raises(ParameterError, match="rng"):
        r.inject(1, 2)


def test_ugal_compares_queue_weighted_path_lengths():
    net = polarstar(3, "paley", 2)
    r = UGAL(net)
    dist = distance_matrix(net).astype(np.int64)
    s, t = 0, int(np.argmax(dist[0]))
    assert dist[s, t] == 3
    min_ports = {x.port for x in r.route(s, RouteState(s, t))}
    # idle network: minimal
    st = r.inject(s, t, occupancy=lambda p: 0, rng=np.random.default_rng(0))
    assert st.inter == -1 and st.phase == 1
    # minimal ports congested, the others idle: a Valiant path through the best sample
    st = r.inject(s, t, occupancy=lambda p: 50 if p in min_ports else 1, rng=np.random.default_rng(0))
    assert st.phase == 0 and st.inter >= 0
    rng = np.random.default_rng(0)
    samples = rng.integers(net.num_routers, size=4).tolist()
    assert st.inter in samples
    costs = []
    for rr in samples:
        first = {x.port for x in r.route(s, RouteState(s, rr))} if rr != s else min_ports
        q = min(50 if p in min_ports else 1 for p in first)
        h = dist[s, t] if rr == s else dist[s, rr] + dist[rr, t]
        costs.append(h * q)
    assert st.inter == samples[int(np.argmin(costs))]
    # a large threshold keeps it minimal
    r2 = UGAL(net, threshold=10_000)
    assert r2.inject(s, t, occupancy=lambda p: 50 if p in min_ports else 1, rng=np.random.default_rng(0)).phase == 1
    assert UGAL(net, samples=2).samples == 2
    with pytest.raises(ParameterError, match="samples=0"):
        UGAL(net, samples=0)


def test_select_rule_occupancy_plus_priority_then_lowest_port_then_vc():
    c = [Candidate(3, 1, 0), Candidate(1, 2, 64), Candidate(2, 0, 0), Candidate(2, 1, 0)]
    assert select(c, lambda p, v: 0) == Candidate(2, 0, 0)
    assert select(c, lambda p, v: 100 if p == 2 else 0) == Candidate(3, 1, 0)
    assert select(c, lambda p, v: {3: 70, 2: 70, 1: 0}[p]) == Candidate(1, 2, 64)
    assert select([Candidate(EJECT, 0, 0)], lambda p, v: 5).port == EJECT


def test_batched_forms_match_route_for_every_routing():
    net = NETS["polarstar"]
    rng = np.random.default_rng(2)
    n = net.num_routers
    s, t, c, inter = rng.integers(n, size=(4, 500))
    phase = rng.integers(0, 2, size=500)
    hops = rng.integers(0, 8, size=500)
    for name in ROUTINGS:
        r = make_routing(name, net)
        st = StateArrays.make(s, t, hops, inter if name in ("valiant", "ugal") else -1,
                              phase if name in ("valiant", "ugal") else 1)
        idx, port, vc, prio = r.candidates_batch(c, st)
        for i in range(0, 500, 7):
            want = r.route(int(c[i]), st[i])
            got = [Candidate(int(p), int(v), int(q)) for p, v, q in zip(port[idx == i], vc[idx == i], prio[idx == i])]
            assert got == list(want), name


def test_registry_errors_are_one_line():
    net = NETS["slimfly"]
    with pytest.raises(ParameterError, match=r"routing='dor': unknown; allowed: min, polarstar, polarized, valiant"):
        make_routing("dor", net)
    with pytest.raises(ParameterError, match="paths"):
        make_routing("min", net, paths="all")
    with pytest.raises(ParameterError, match="vcs=0"):
        make_routing("min", net, vcs=0)
    r = make_routing("valiant", net)
    with pytest.raises(ParameterError, match=r"src=50: must be a router id in 0\.\.49"):
        r.inject(50, 1, rng=np.random.default_rng())
    with pytest.raises(ParameterError, match="router=-3"):
        r.route(-3, RouteState(0, 1))
    with pytest.raises(ParameterError, match="not connected"):
        TableOracle(Network.from_edges("two", 4, [(0, 1), (2, 3)]))
    with pytest.raises(ParameterError, match="distances='bfs'"):
        make_routing("polarized", net, distances="bfs")
    with pytest.raises(ParameterError, match="needs a PolarStar"):
        make_routing("polarized", net, distances="arithmetic")


def _cli(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_route_check_json(capsys):
    rc, out, err = _cli(capsys, "route", "polarstar:q=3,supernode=paley,degree=2", "--routing", "polarstar",
                        "--check", "--json")
    assert rc == 0
    d = json.loads(out)
    for key in ("minimal", "pairs_checked", "max_hops", "mean_hops", "vcs", "deadlock_free", "storage_bits_per_router"):
        assert key in d
    assert d["minimal"] is True and d["pairs_checked"] == 65 * 64 and d["max_hops"] == 3
    assert d["vcs"] == 3 and d["deadlock_free"] is True and d["deadlock_check"] == "cdg"
    assert d["storage_bits_per_router"] < d["table_min_storage_bits_per_router"]
    rc, out, err = _cli(capsys, "route", "slimfly:q=5", "--routing", "valiant", "--check", "--json")
    d = json.loads(out)
    assert rc == 0 and d["minimal"] is False and d["max_hops"] == 4 and d["vcs"] == 4 and d["deadlock_free"]


def test_cli_errors_exit_2_with_one_line(capsys):
    rc, out, err = _cli(capsys, "route", "slimfly:q=5", "--routing", "nope")
    assert rc == 2 and err.count("\n") == 1 and "routing='nope'" in err
    rc, out, err = _cli(capsys, "route", "polarstar:q=3,supernode=iq,degree=3", "--routing", "min", "--vcs", "1")
    assert rc == 2 and err.count("\n") == 1 and "channel dependency cycle" in err and "vc0" in err
    rc, out, err = _cli(capsys, "route", "slimfly:q=5", "--routing", "min", "--pair", "3,50")
    assert rc == 2 and err.count("\n") == 1 and "dst=50" in err


def test_cli_pair_prints_the_route(capsys):
    rc, out, err = _cli(capsys, "route", "polarstar:q=3,supernode=iq,degree=3", "--routing", "polarstar",
                        "--pair", "0,100", "--json")
    d = json.loads(out)
    assert rc == 0 and d["path"][0] == 0 and d["path"][-1] == 100 and d["hops"] == len(d["path"]) - 1 <= 3
