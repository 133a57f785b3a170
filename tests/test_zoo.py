"""Topology zoo: LPS/SpectralFly against Definition 3 and the SpectralFly paper's Table I, the
baselines against independent constructions (networkx, the definitions) and the papers' sizes."""
import math
import warnings

import networkx as nx
import numpy as np
import pytest

from pstar.cli import main
from topologies import ParameterError, build, distance_stats
from topologies.lps import four_square_solutions, legendre, lps, lps_order
from topologies.metrics import is_bipartite, simple_adjacency, spectrum
from topologies.supernodes import paley
from topologies.zoo import bundlefly, dragonfly, fattree, hyperx, jellyfish, mms_delta, mms_slots, slimfly, torus


def edge_set(net):
    return {frozenset((int(a), int(b))) for a, _, b, _ in net.links()}


# ---- LPS / SpectralFly ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lps_nets():
    return {pq: lps(*pq) for pq in [(3, 5), (11, 7), (23, 11)]}


def test_lps_3_5_bipartite_4_regular(lps_nets):
    net = lps_nets[(3, 5)]
    assert net.num_routers == 120 and net.structure.group == "PGL"
    assert (net.degree == 4).all()
    g = nx.Graph([tuple(e) for e in edge_set(net)])
    assert nx.is_bipartite(g) and is_bipartite(simple_adjacency(net))
    assert nx.is_connected(g)


@pytest.mark.parametrize("pq,n,k,diam,mean", [((11, 7), 168, 12, 3, 2.39), ((23, 11), 660, 24, 3, 2.35)])
def test_lps_table1(lps_nets, pq, n, k, diam, mean):
    net = lps_nets[pq]
    st = distance_stats(net)
    assert net.num_routers == n == lps_order(*pq)
    assert (net.degree == k).all() and net.num_links == n * k // 2
    assert st.diameter == diam
    assert round(st.mean_distance, 2) == mean
    assert not is_bipartite(simple_adjacency(net))


def test_lps_ramanujan(lps_nets):
    for (p, q), net in lps_nets.items():
        s = spectrum(net)
        assert s.lam <= 2 * math.sqrt(p) + 1e-9 and s.ramanujan
        # independent check with the full dense spectrum
        ev = np.sort(np.linalg.eigvalsh(simple_adjacency(net).toarray()))
        nontrivial = ev[1:-1] if s.bipartite else ev[:-1]
        assert abs(np.abs(nontrivial).max() - s.lam) < 1e-8
        assert abs(ev[-1] - (p + 1)) < 1e-8


def _proj_equal(A, B, q):
    """A = c·B for some c != 0 (all 2x2 minors of the pair of 4-vectors vanish)."""
    return all((A[i] * B[j] - A[j] * B[i]) % q == 0 for i in range(4) for j in range(i + 1, 4))


def test_lps_is_the_cayley_graph(lps_nets):
    """Port j of u leads to u·s_j with s_j built from the four-square solution (Definition 3)."""
    net = lps_nets[(11, 7)]
    st = net.structure
    p, q = 11, 7
    x, y = st.xy
    assert (x * x + y * y + 1) % q == 0
    sols = four_square_solutions(p)
    assert len(sols) == p + 1
    assert all(sum(v * v for v in a) == p for a in sols)
    rng = np.random.default_rng(0)
    for u in rng.choice(net.num_routers, 20, replace=False):
        a, b, c, d = (int(v) for v in st.elements[u])
        for j, (a0, a1, a2, a3) in enumerate(sols):
            s = [a0 + a1 * x + a3 * y, -a1 * y + a2 + a3 * x, -a1 * y - a2 + a3 * x, a0 - a1 * x - a3 * y]
            prod = [a * s[0] + b * s[2], a * s[1] + b * s[3], c * s[0] + d * s[2], c * s[1] + d * s[3]]
            v, _ = net.neighbor(int(u), j)
            assert _proj_equal(prod, [int(t) for t in st.elements[v]], q)


@pytest.mark.parametrize("p,q", [(3, 7), (5, 13), (7, 5), (13, 5)])
def test_lps_order_formula(p, q):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # (7, 5), (13, 5): q <= 2·sqrt(p) warns, tested below
        net = lps(p, q)
    leg = legendre(p, q)
    assert leg == (1 if any((t * t - p) % q == 0 for t in range(q)) else -1)
    assert net.num_routers == (3 - leg) * (q ** 3 - q) // 4
    assert (net.degree == p + 1).all()
    assert is_bipartite(simple_adjacency(net)) == (leg == -1)


@pytest.mark.parametrize("spec,bad", [("lps:p=4,q=7", "p=4"), ("lps:p=7,q=7", "q=7"), ("lps:p=2,q=5", "p=2"),
                                      ("lps:p=3,q=9", "q=9"), ("lps:p=3", "q")])
def test_lps_bad_parameters(spec, bad, capsys):
    with pytest.raises(ParameterError, match=bad):
        build(spec)
    assert main(["metrics", spec]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("odd primes" in err or "required" in err)


def test_lps_small_q_warns():
    with pytest.warns(UserWarning, match="Ramanujan property is not guaranteed"):
        net = lps(23, 7)           # 7 <= 2·sqrt(23)
    assert net.num_routers == lps_order(23, 7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lps(11, 7)                 # 7 > 2·sqrt(11): no warning


# ---- Table I baselines -----------------------------------------------------------------------------

@pytest.mark.parametrize("spec,n,radix,diam,mean,mu1", [
    ("slimfly:q=7", 98, 11, 2, 1.89, 0.62),
    ("dragonfly:a=12", 156, 12, 3, 2.70, 0.08),
    ("bundlefly:p=13,s=3", 234, 11, 3, 2.56, 0.27),
    ("lps:p=11,q=7", 168, 12, 3, 2.39, 0.50),
    ("lps:p=23,q=11", 660, 24, 3, 2.35, 0.65),
])
def test_table1(spec, n, radix, diam, mean, mu1):
    net = build(spec)
    st = distance_stats(net)
    assert net.num_routers == n and net.radix == radix and (net.degree == radix).all()
    assert st.diameter == diam and round(st.mean_distance, 2) == mean
    assert abs(spectrum(net).mu1 - mu1) <= 0.01     # the paper truncates or rounds to 2 decimals


# ---- Slim Fly / MMS --------------------------------------------------------------------------------

@pytest.mark.parametrize("q", [3, 4, 5, 7, 8, 9, 11])
def test_slimfly_mms(q):
    net = slimfly(q)
    delta = mms_delta(q)
    assert net.num_routers == 2 * q * q
    assert (net.degree == (3 * q - delta) // 2).all()
    assert distance_stats(net).diameter == 2
    slots = mms_slots(q)                 # the relation is symmetric and simple
    A = np.zeros((2 * q * q,) * 2, dtype=int)
    np.add.at(A, (np.repeat(np.arange(len(slots)), slots.shape[1]), slots.ravel()), 1)
    assert (A == A.T).all() and A.max() == 1 and np.trace(A) == 0


def test_slimfly_5_is_hoffman_singleton():
    """MMS(5): 50 vertices, 7-regular, diameter 2 -> the unique Moore graph of degree 7."""
    net = slimfly(5)
    hs = nx.hoffman_singleton_graph()
    assert net.num_routers == hs.number_of_nodes() == 1 + 7 * 7
    g = nx.Graph([tuple(e) for e in edge_set(net)])
    assert nx.girth(g) == nx.girth(hs) == 5
    assert sorted(nx.adjacency_spectrum(g).real.round(6)) == sorted(nx.adjacency_spectrum(hs).real.round(6))


# ---- Dragonfly -----------------------------------------------------------------------------------------

def test_dragonfly_balanced_polarstar_table3():
    net = dragonfly(12, 6, 6)
    assert net.num_routers == 876 and net.radix == 17 and net.num_endpoints == 5256
    g, a = 73, 12
    group = np.arange(net.num_routers) // a
    L = net.links()
    ga, gb = group[L[:, 0]], group[L[:, 2]]
    glob = ga != gb
    pairs = {frozenset((int(x), int(y))) for x, y in zip(ga[glob], gb[glob])}
    assert glob.sum() == len(pairs) == g * (g - 1) // 2           # one link between every pair of groups
    assert ((~glob).sum()) == g * a * (a - 1) // 2                 # groups are complete
    assert distance_stats(net).diameter == 3


@pytest.mark.parametrize("a", [4, 7, 12])
def test_dragonfly_canonical_histogram(a):
    """Per router: a at distance 1, 2(a-1) at 2, (a-1)^2 at 3 (counted from the definition)."""
    net = dragonfly(a)
    n = a * (a + 1)
    assert net.num_routers == n and (net.degree == a).all()
    assert distance_stats(net).histogram == [0, n * a, n * 2 * (a - 1), n * (a - 1) ** 2]
    assert edge_set(net) == edge_set(dragonfly(a, 1))


# ---- HyperX, torus, fat-tree, jellyfish ---------------------------------------------------------------------

def _mixed(dims, t):
    return int(np.ravel_multi_index(t, dims))


def test_hyperx_is_hamming_graph():
    net = hyperx("9x9x8")
    assert net.num_routers == 648 and net.radix == 23 and net.num_endpoints == 648 * 8   # PolarStar Table 3
    dims = (4, 3, 5)
    small = hyperx(dims)
    g = nx.cartesian_product(nx.cartesian_product(nx.complete_graph(4), nx.complete_graph(3)), nx.complete_graph(5))
    ref = {frozenset((_mixed(dims, (u[0][0], u[0][1], u[1])), _mixed(dims, (v[0][0], v[0][1], v[1])))) for u, v in g.edges()}
    assert edge_set(small) == ref


def test_torus_matches_networkx():
    dims = (3, 4, 5)
    net = torus(dims)
    g = nx.grid_graph(dim=list(reversed(dims)), periodic=True)
    ref = {frozenset((_mixed(dims, u), _mixed(dims, v))) for u, v in g.edges()}   # tuples in dims order
    assert edge_set(net) == ref
    assert distance_stats(torus("3x3x3x3x3")).diameter == 5


# README: "-p sets the endpoints per router; the default is ⌊radix/3⌋ for polarstar and er (the
# paper's Table 3) and round(radix/3), at least 1, for the other direct families" (the balanced
# Dragonfly's p is its own key, h by default: Kim et al.)
@pytest.mark.parametrize("spec,rule", [
    ("torus:dims=8x8x8", "round"), ("torus:dims=5x5x5x5x5", "round"), ("torus:dims=4", "round"),
    ("hyperx:dims=9x9x8", "round"), ("slimfly:q=5", "round"), ("lps:p=11,q=7", "round"),
    ("dragonfly:a=6", "round"), ("bundlefly:p=5,s=5", "round"), ("jellyfish:n=40,d=7,seed=1", "round"),
    ("polarstar:q=5,supernode=iq,degree=3", "floor"), ("er:q=7", "floor"), ("dragonfly:a=4,h=2", "h"),
])
def test_default_endpoints_follow_the_readme(spec, rule):
    net = build(spec)
    radix = int(net.degree.max())
    want = {"round": max(1, math.floor(radix / 3 + 0.5)), "floor": radix // 3, "h": 2}[rule]
    assert (net.endpoints == want).all(), (spec, radix, set(net.endpoints.tolist()))


def test_fattree_structure():
    net = fattree(4)
    assert net.num_routers == 20 and net.num_endpoints == 16
    assert (net.endpoints[:8] == 2).all() and (net.endpoints[8:] == 0).all()
    assert (net.degree[:8] == 2).all() and (net.degree[8:] == 4).all()
    big = fattree(16)
    assert big.num_routers == 320 and big.num_endpoints == 1024     # host-switch paper Table 2
    g = nx.Graph([tuple(e) for e in edge_set(net)])
    assert nx.is_bipartite(g) and nx.diameter(g) == 4


def test_jellyfish():
    a, b, c = jellyfish(60, 5, seed=1), jellyfish(60, 5, seed=1), jellyfish(60, 5, seed=2)
    assert (a.degree == 5).all() and a.num_routers == 60
    assert edge_set(a) == edge_set(b) != edge_set(c)
    with pytest.raises(ParameterError, match="d=5"):
        jellyfish(7, 5)


# ---- Bundlefly = MMS * Paley -------------------------------------------------------------------------------

@pytest.mark.parametrize("p,s", [(5, 3), (13, 3), (5, 4)])
def test_bundlefly_definition(p, s):
    """Against Definition 1 built by loops: (x,a)~(x,b) Paley edges, (x,a)~(y,g·a) for MMS arcs x<y."""
    net = bundlefly(p, s)
    sn = paley(p)
    slots = mms_slots(s)
    m = sn.order
    E = set()
    for x in range(len(slots)):
        for a in range(m):
            for b in sn.adj[a]:
                E.add(frozenset((x * m + a, x * m + int(b))))
            for y in slots[x]:
                if x < y:
                    E.add(frozenset((x * m + a, int(y) * m + int(sn.f[a]))))
    assert edge_set(net) == E
    assert net.num_routers == 2 * p * s * s
    assert net.radix == (p - 1) // 2 + (3 * s - mms_delta(s)) // 2
    assert distance_stats(net).diameter <= 3


@pytest.mark.parametrize("spec,word", [("dragonfly:a=1", "a=1"), ("fattree:k=5", "k=5"), ("slimfly:q=6", "q=6"),
                                       ("bundlefly:p=7,s=3", "p=7"), ("bundlefly:p=5,s=6", "s=6"),
                                       ("hyperx:dims=9x1", "dims"), ("torus:dims=axb", "dims"),
                                       ("dragonfly:a=4,h=0", "h=0")])
def test_bad_parameters_one_line(spec, word, capsys):
    with pytest.raises(ParameterError, match=word):
        build(spec)
    assert main(["metrics", spec]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and word.split("=")[0] in err
