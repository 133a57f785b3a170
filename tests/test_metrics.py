"""Metrics against independent computations: networkx distances, dense spectra, known exact
bisections, explicit host vertices, brute-force link removal, and the papers' figures."""
import json
import time

import networkx as nx
import numpy as np
import pytest

from pstar.cli import main
from topologies import Network, build, distance_stats, largest, polarstar
from topologies.distances import host_distance_stats
from topologies.metrics import (bisection, cut_size, disconnection_point, is_bipartite, moore_efficiency,
                                resilience, simple_adjacency, spectrum)
from topologies.zoo import dragonfly, fattree, hyperx, jellyfish, slimfly, torus


def from_nx(g, name="g", endpoints=None):
    g = nx.convert_node_labels_to_integers(g)
    return Network.from_edges(name, g.number_of_nodes(), list(g.edges()), endpoints=endpoints)


def nx_graph(net):
    g = nx.Graph()
    g.add_nodes_from(range(net.num_routers))
    g.add_edges_from((int(a), int(b)) for a, _, b, _ in net.links())
    return g


# ---- distances -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("net", [jellyfish(80, 4, seed=3), fattree(6), slimfly(5), torus("4x5"), dragonfly(3, 2, 1)],
                         ids=lambda n: n.name)
def test_distances_match_networkx(net):
    st = distance_stats(net)
    g = nx_graph(net)
    assert st.diameter == nx.diameter(g)
    assert abs(st.mean_distance - nx.average_shortest_path_length(g)) < 1e-12


def test_host_distances_match_explicit_hosts():
    """h-ASPL over endpoints = ASPL between explicit degree-1 host vertices (host-switch paper §2.1)."""
    rng = np.random.default_rng(1)
    for net in (jellyfish(30, 3, seed=2), fattree(4), torus("3x4")):
        hosts = rng.integers(0, 4, net.num_routers) if net.name != "FatTree(k=4)" else net.endpoints
        g = nx_graph(net)
        hid = []
        for r, k in enumerate(hosts):
            for i in range(int(k)):
                g.add_edge(("h", r, i), r)
                hid.append(("h", r, i))
        lengths = [d for s in hid for t, d in nx.single_source_shortest_path_length(g, s).items() if t in set(hid) and t != s]
        hs = host_distance_stats(net, hosts)
        assert abs(hs["h_aspl"] - np.mean(lengths)) < 1e-12
        assert hs["h_diameter"] == max(lengths)


@pytest.mark.parametrize("net,hosts,paper", [
    (fattree(16), None, 5.86),                                           # Table 2 fat-tree
    (dragonfly(8, 4, 4), np.r_[np.full(256, 4), np.zeros(8, int)], 4.68),  # Table 2 dragonfly, 1024 hosts in order
    (torus("3x3x3x3x3"), np.full(243, 4) + np.isin(np.arange(243), np.linspace(0, 242, 52).astype(int)), 5.34),
], ids=["fattree16", "dragonfly8", "torus3^5"])
def test_host_switch_table2_existing_topologies(net, hosts, paper):
    hs = host_distance_stats(net, hosts)
    assert hs["hosts"] == 1024
    assert round(hs["h_aspl"], 2) == paper


def test_bfs_1064_polarstar_is_fast(ps_q11_iq3):
    distance_stats(ps_q11_iq3)
    t = time.perf_counter()
    st = distance_stats(ps_q11_iq3)
    assert time.perf_counter() - t < 1.0
    assert ps_q11_iq3.num_routers == 1064 and st.diameter == 3


# ---- spectrum ------------------------------------------------------------------------------------------------

def test_spectrum_petersen_and_bipartite():
    s = spectrum(from_nx(nx.petersen_graph()))          # eigenvalues 3, 1, -2
    assert abs(s.lam - 2) < 1e-9 and abs(s.lambda2 - 1) < 1e-9 and s.ramanujan
    assert abs(s.mu1 - (1 - 2 / 3)) < 1e-9 and abs(s.laplacian_mu1 - (1 - 1 / 3)) < 1e-9
    cube = spectrum(from_nx(nx.hypercube_graph(4)))      # bipartite: ±4 trivial, λ = 2
    assert cube.bipartite and abs(cube.lam - 2) < 1e-9
    cyc = from_nx(nx.cycle_graph(9))
    assert not is_bipartite(simple_adjacency(cyc))


def test_spectrum_not_ramanujan_and_irregular():
    s = spectrum(dragonfly(6))                          # λ = a - 1 > 2·sqrt(a - 1)
    assert abs(s.lam - 5) < 1e-9 and s.ramanujan is False
    ft = spectrum(fattree(4))
    assert ft.ramanujan is None and not ft.regular
    A = simple_adjacency(fattree(4)).toarray()
    d = A.sum(1)
    nev = np.sort(np.linalg.eigvalsh(A / np.sqrt(np.outer(d, d))))
    assert abs(ft.laplacian_mu1 - (1 - nev[-2])) < 1e-9


@pytest.mark.parametrize("spec", ["lps:p=11,q=7", "slimfly:q=7", "fattree:k=6", "lps:p=3,q=5"])
def test_sparse_spectrum_equals_dense(spec):
    net = build(spec)
    d, s = spectrum(net), spectrum(net, dense_limit=10)
    assert d.method == "dense" and s.method == "sparse"
    for a, b in ((d.lam, s.lam), (d.mu1, s.mu1), (d.lambda2, s.lambda2), (d.laplacian_mu1, s.laplacian_mu1)):
        assert abs(a - b) < 1e-6


# ---- bisection ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("g,cut", [(nx.cycle_graph(20), 2), (nx.hypercube_graph(6), 32), (nx.complete_graph(10), 25),
                                   (nx.complete_bipartite_graph(6, 6), 18)], ids=["C20", "Q6", "K10", "K66"])
def test_bisection_exact_small(g, cut):
    net = from_nx(g)
    b = bisection(net, seeds=4)
    assert b.cut == cut == cut_size(net, b.parts)
    assert abs((b.parts == 0).sum() - (b.parts == 1).sum()) <= 1


def test_bisection_hyperx_paper():
    """HyperX 9x9x8: halving the size-8 dimension cuts 16·81 = 1296 of 7452 links = 17.4% (PolarStar §11.1)."""
    b = bisection(hyperx("9x9x8"), seeds=8)
    assert b.cut == 1296 and round(100 * b.fraction, 1) == 17.4


def test_bisection_fattree_balances_endpoints():
    net = fattree(8)
    b = bisection(net, seeds=4)
    assert b.balance_by == "endpoints"
    ep = net.endpoints
    assert ep[b.parts == 0].sum() == ep[b.parts == 1].sum() == 64
    L = net.links()
    assert b.links == int(((ep[L[:, 0]] > 0) | (ep[L[:, 2]] > 0)).sum()) == 128


def test_polarstar_bisection_vs_f_closed_cut():
    """The cut that keeps every IQ f-pair {2i, 2i+1} on one side keeps all ER links (x,a)-(y,f(a))
    inside and cuts only supernode links: |ER_q| x (supernode links across). METIS finds it (or
    as good) within a few percent, so PolarStar-IQ bisections are well below the paper's 29.5%."""
    fracs = []
    for radix in (8, 9, 11, 12):                   # largest IQ has d' = 3: four f-pairs, split 2 + 2
        c = largest(radix, ("iq",))
        assert c.degree % 2 == 1
        net = polarstar(c.q, "iq", c.degree)
        sn = net.structure.sn
        assert (sn.f == np.arange(sn.order) ^ 1).all()
        parts_sn = ((np.arange(sn.order) // 2) >= (c.degree + 1) // 2).astype(np.int8)
        parts = np.tile(parts_sn, net.num_routers // sn.order)
        structural = cut_size(net, parts)
        sn_cut = sum(parts_sn[a] != parts_sn[b] for a in range(sn.order) for b in sn.adj[a]) // 2
        assert structural == sn_cut * (c.q * c.q + c.q + 1)
        fracs.append(structural / net.num_links)
        b = bisection(net, seeds=8)
        assert b.cut <= 1.05 * structural          # METIS finds this cut or one as good (within 5%)
    assert np.mean(fracs) < 0.25                   # well below the paper's ~29.5% (Fig. 13)


# ---- Moore efficiency ---------------------------------------------------------------------------------------------

def test_moore_efficiency():
    assert moore_efficiency(slimfly(5))["moore_efficiency"] == 1.0          # Hoffman–Singleton
    assert moore_efficiency(from_nx(nx.petersen_graph()))["moore_efficiency"] == 1.0
    m = moore_efficiency(lps_ := build("lps:p=11,q=7"))
    assert m["moore_bound"] == 1 + 12 + 12 * 11 + 12 * 121 and m["moore_efficiency"] == 168 / m["moore_bound"]
    del lps_


# ---- resilience ------------------------------------------------------------------------------------------------------

def test_disconnection_point_brute_force():
    rng = np.random.default_rng(5)
    net = jellyfish(40, 3, seed=4)
    L = net.links()
    for _ in range(5):
        order = rng.permutation(len(L))
        g = nx_graph(net)
        k = 0
        for e in order:
            g.remove_edge(int(L[e, 0]), int(L[e, 2]))
            if not nx.is_connected(g):
                break
            k += 1
        assert disconnection_point(net, order) == k


def test_resilience_polarstar_1064(ps_q11_iq3):
    """PolarStar §11.2: the 1,064-router PolarStar stays connected until about 60% failed links."""
    res = resilience(ps_q11_iq3, step=0.1, trials=20, seed=1)
    assert len(res.ratios) == 20
    assert 0.5 <= res.median_ratio <= 0.7
    curve = res.curves[res.median_trial]
    st = distance_stats(ps_q11_iq3)
    assert curve[0] == (0.0, st.diameter, st.mean_distance)
    assert all(c[0] < res.ratios[res.median_trial] for c in curve)
    assert all(b[2] >= a[2] for a, b in zip(curve, curve[1:]))           # removing links never shortens paths


def test_resilience_indirect_uses_endpoint_routers():
    res = resilience(fattree(6), step=0.2, trials=3, curves="all")
    f0 = res.curves[0][0]
    assert f0[1] == 4                                                     # edge-to-edge diameter of a fat-tree


# ---- CLI ------------------------------------------------------------------------------------------------------------------

def test_cli_metrics_json(capsys, tmp_path):
    plot = tmp_path / "fig14.png"
    assert main(["metrics", "lps:p=11,q=7", "--trials", "3", "--fail-step", "0.2", "--plot", str(plot), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    for k in ("diameter", "mean_distance", "lambda", "ramanujan", "mu1", "bisection_fraction", "moore_efficiency",
              "distance_histogram", "h_aspl", "h_diameter", "resilience", "disconnection_ratio"):
        assert k in d
    assert d["diameter"] == 3 and d["ramanujan"] is True and len(d["resilience"]["disconnection_ratios"]) == 3
    assert plot.exists() and plot.stat().st_size > 1000


def test_cli_metrics_warning_key(capsys):
    assert main(["metrics", "lps:p=23,q=7", "--json", "--bisection-seeds", "1"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert any("Ramanujan property is not guaranteed" in w for w in d["warnings"])


@pytest.mark.parametrize("argv", [["metrics", "nosuch:q=3"], ["metrics", "lps:p=11,q=7", "--fail-step", "1.5"],
                                  ["metrics", "lps:p=11,q=7", "--trials", "0"]])
def test_cli_metrics_errors(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err
