"""Host-switch graphs: the bounds against the paper's Table 2 and an independent complete-tree
construction, the numba h-ASPL kernel against explicit host vertices, and short SA runs."""
import json
import math

import networkx as nx
import numpy as np
import pytest

from pstar.cli import main
from topologies.errors import ParameterError
from topologies.hostswitch import (HostSwitchGraph, anneal, continuous_moore_bound, diameter_lower_bound, h_aspl_numba,
                                   lower_bound, moore_aspl, optimal_switches, optimize, random_host_switch_graph,
                                   use_free_ports)


def complete_tree_aspl(n, r):
    """Single-source h-ASPL from the root of the complete host-switch tree, built by the
    definition's operations (A) add a host to a switch with a free port, (B) replace a host
    closest to the root by a switch with two hosts (§2.2)."""
    hosts = [2]                  # depths of the non-root hosts; root - s1 - host
    free = {1: r - 2}            # switch depth -> free ports of the (single) open switch
    while len(hosts) + 1 < n:
        if free and max(free.values()) > 0:
            dep = next(d for d, f in free.items() if f > 0)
            hosts.append(dep + 1)
            free[dep] -= 1
        else:
            hosts.sort()
            dep = hosts.pop(0)   # a host closest to the root becomes a switch
            hosts += [dep + 1, dep + 1]
            free = {dep: r - 3}
    return sum(hosts) / len(hosts)


@pytest.mark.parametrize("r", [3, 4, 5, 8, 15])
def test_lower_bound_is_complete_tree(r):
    for n in list(range(3, 80)) + [200, 1024]:
        assert abs(lower_bound(n, r) - complete_tree_aspl(n, r)) < 1e-12, (n, r)


def test_lower_bound_table2_and_full_tree():
    assert round(lower_bound(1024, 15), 2) == 3.87
    assert round(lower_bound(1024, 16), 2) == 3.84
    assert diameter_lower_bound(1024, 15) == 4
    assert lower_bound(14 ** 2 + 1, 15) == 3.0        # a full host-switch tree: h-ASPL = D exactly


def moore_aspl_integer(N, K):
    """Integer Moore bound on the ASPL of a K-regular graph on N vertices (layer by layer)."""
    left, total, layer, i = N - 1, 0, K, 1
    while left:
        take = min(layer, left)
        total += i * take
        left -= take
        layer *= K - 1
        i += 1
    return total / (N - 1)


def test_continuous_moore_bound_table2():
    table2 = {(15, 243): 4.47, (15, 264): 4.48, (15, 194): 4.45, (15, 184): 4.45, (15, 284): 4.49,
              (16, 320): 4.44, (16, 183): 4.34, (16, 165): 4.34, (16, 259): 4.38}
    for (r, m), v in table2.items():
        assert round(continuous_moore_bound(1024, m, r), 2) == v, (r, m)
    # where n/m is an integer the bound is eq. (3) with the ordinary Moore bound
    for n, m, r in [(1024, 128, 16), (1024, 256, 12), (512, 64, 14)]:
        K = r - n // m
        ref = moore_aspl_integer(m, K) * (m * n - n) / (m * n - m) + 2
        assert abs(continuous_moore_bound(n, m, r) - ref) < 1e-12
    assert moore_aspl(10, 9) == 1.0 and math.isinf(moore_aspl(100, 1.5))


def test_m_opt_close_to_paper():
    assert abs(optimal_switches(1024, 15) - 194) <= 2
    assert optimal_switches(1024, 16) == 183
    m = optimal_switches(1024, 15)
    assert continuous_moore_bound(1024, m, 15) <= min(continuous_moore_bound(1024, k, 15) for k in range(100, 400))


def explicit_h_aspl(g: HostSwitchGraph):
    G = nx.Graph()
    G.add_edges_from((int(a), int(b)) for a, b in g.edges)
    hosts = []
    for s, k in enumerate(g.hosts):
        G.add_node(s)
        for i in range(int(k)):
            G.add_edge(("h", s, i), s)
            hosts.append(("h", s, i))
    hs = set(hosts)
    d = [l for h in hosts for t, l in nx.single_source_shortest_path_length(G, h).items() if t in hs and t != h]
    return np.mean(d), max(d)


def test_kernels_agree_with_explicit_hosts():
    for n, m, r, seed in [(40, 8, 8, 0), (100, 17, 10, 1), (200, 70, 6, 2), (64, 1, 70, 0)]:
        g = random_host_switch_graph(n, m, r, seed=seed)
        g.validate()
        ref, diam = explicit_h_aspl(g) if m > 1 else (2.0, 2)
        st = g.stats()
        assert abs(h_aspl_numba(g) - ref) < 1e-12
        assert abs(st["h_aspl"] - ref) < 1e-12 and st["h_diameter"] == diam


def test_kernel_after_host_moves():
    """The SA kernel state after moving hosts between switches (what a swing does) evaluates exactly."""
    from topologies.hostswitch import _State

    n, r = 120, 12
    g = random_host_switch_graph(n, 20, r, seed=5)
    st = _State(g)
    rng = np.random.default_rng(0)
    for _ in range(10):
        b, c = rng.choice(g.m, 2, replace=False)
        if st.w[c] == 0:
            continue
        st.w[b] += 1
        st.w[c] -= 1
        moved = HostSwitchGraph(n, r + 10, st.w.copy(), g.edges)
        assert abs(st.h_aspl(st.evaluate()) - explicit_h_aspl(moved)[0]) < 1e-12


def test_swing_changes_host_distribution():
    n, r = 256, 10
    g = random_host_switch_graph(n, optimal_switches(n, r), r, seed=3)
    res = anneal(g, steps=4000, seed=3, operation="swing")
    assert sorted(res.graph.hosts) != sorted(g.hosts)          # swings move hosts (§4.2.3)
    assert res.graph.hosts.sum() == n


@pytest.mark.parametrize("operation", ["swing", "swap"])
def test_anneal_improves_and_stays_valid(operation):
    n, r = 256, 10
    m = optimal_switches(n, r)
    g = random_host_switch_graph(n, m, r, seed=3)
    res = anneal(g, steps=4000, seed=3, operation=operation)
    out = res.graph
    out.validate()
    assert res.h_aspl < res.initial_h_aspl
    assert abs(res.h_aspl - out.stats()["h_aspl"]) < 1e-12       # the incremental value is the real one
    assert res.h_aspl >= continuous_moore_bound(n, m, r) - 0.05 and res.h_aspl >= lower_bound(n, r)
    if operation == "swap":
        assert sorted(out.hosts) == sorted(g.hosts)
    assert res.steps == 4000 and res.evaluations > 0
    again = anneal(g, steps=4000, seed=3, operation=operation)
    assert again.h_aspl == res.h_aspl                               # reproducible for a seed


def test_edge_list_roundtrip(tmp_path):
    res, bounds = optimize(64, 8, steps=500, seed=1)
    g = res.graph
    path = tmp_path / "g.txt"
    g.write_edge_list(str(path))
    header, *lines = path.read_text().splitlines()
    assert header == f"{g.n} {g.m} {g.r}"                          # Graph Golf: n m r
    E = [tuple(map(int, line.split())) for line in lines]
    n, m = g.n, g.m
    host_edges = [e for e in E if e[0] < n]
    assert sorted(e[0] for e in host_edges) == list(range(n))
    G = nx.Graph(E)
    assert all(G.degree(v) <= g.r for v in range(n, n + m)) and all(G.degree(h) == 1 for h in range(n))
    d = [l for h in range(n) for t, l in nx.single_source_shortest_path_length(G, h).items() if t < n and t != h]
    assert abs(np.mean(d) - res.h_aspl) < 1e-12
    assert bounds["m_opt"] == m


@pytest.mark.parametrize("n,r,m", [(40, 8, 8), (64, 8, 15), (100, 6, 40), (30, 10, 5), (256, 10, 46), (9, 3, 7)])
def test_random_start_leaves_no_usable_port_free(n, r, m):
    """Annealing keeps each switch's port count, so the start must use every port it can: at
    most one switch port stays free (an odd count). The greedy pairing alone left 2-4 free on
    (40, 8, 8), (64, 8, 15), (100, 6, 40) for some of these seeds."""
    for seed in range(20):
        g = random_host_switch_graph(n, m, r, seed=seed)
        g.validate()
        assert (r - g.degrees()).sum() == (m * r - n) % 2, (seed, (r - g.degrees()).tolist())
        assert nx.is_connected(nx.Graph([tuple(e) for e in g.edges.tolist()]))


def test_use_free_ports_rewires_a_link():
    """A switch with two free ports next to a link it is not on takes that link over."""
    free = np.array([0, 0, 2])
    adj = [{1}, {0}, set()]
    edges = [(0, 1)]
    use_free_ports(free, adj, edges, np.random.default_rng(0))
    assert free.tolist() == [0, 0, 0] and sorted(tuple(sorted(e)) for e in edges) == [(0, 2), (1, 2)]


def test_parameter_errors():
    with pytest.raises(ParameterError, match="switches=5"):
        random_host_switch_graph(1000, 5, 10)
    with pytest.raises(ParameterError, match="hosts=2"):
        lower_bound(2, 10)
    with pytest.raises(ParameterError, match="radix=2"):
        optimal_switches(100, 2)
    g = random_host_switch_graph(40, 8, 8)
    with pytest.raises(ParameterError, match="operation"):
        anneal(g, steps=1, operation="flip")


def test_cli_hostswitch(capsys, tmp_path):
    out = tmp_path / "edges.txt"
    assert main(["hostswitch", "--hosts", "128", "--radix", "8", "--steps", "1000", "--seed", "2", "--out", str(out),
                 "--json", "--no-progress"]) == 0
    d = json.loads(capsys.readouterr().out)
    for k in ("h_aspl", "h_diameter", "switches", "lower_bound", "moore_bound", "steps", "seconds"):
        assert k in d
    assert d["switches"] == optimal_switches(128, 8) and d["steps"] == 1000
    assert d["lower_bound"] <= d["h_aspl"] <= d["initial_h_aspl"]
    assert len(out.read_text().splitlines()) == 1 + 128 + d["switch_links"]


@pytest.mark.parametrize("argv", [["--hosts", "1000", "--radix", "10", "--switches", "5"], ["--hosts", "2", "--radix", "8"],
                                  ["--hosts", "100", "--radix", "8", "--time", "1", "--steps", "5"]])
def test_cli_hostswitch_errors(argv, capsys):
    assert main(["hostswitch", *argv, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err
