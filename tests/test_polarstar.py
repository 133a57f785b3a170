"""PolarStar: the star product against Definition 1 built independently, the paper's examples,
diameter <= 3 on every small configuration, the design space claims."""
import pytest

from topologies import ParameterError, design_space, distance_stats, largest, polarstar
from topologies.er import ERGraph
from topologies.field import prime_powers
from topologies.supernodes import make_supernode, supernode_order


def definition_edges(q, name, d):
    """Edge set of ER_q * G' straight from Definition 1 (+ the loop rule), by plain loops."""
    er = ERGraph(q)
    sn = make_supernode(name, d)
    m = sn.order
    f = [int(v) for v in sn.f]
    inv = sn.is_involution
    vec = er.vectors.tolist()
    F = er.F
    dot = lambda u, v: int(F.add[F.add[F.mul[u[0], v[0]], F.mul[u[1], v[1]]], F.mul[u[2], v[2]]])
    E = set()
    for x in range(er.n):
        for a in range(m):
            for b in sn.adj[a]:
                E.add(frozenset({(x, a), (x, int(b))}))
        for y in range(x, er.n):
            if dot(vec[x], vec[y]) != 0:
                continue
            for a in range(m):
                if x != y:
                    E.add(frozenset({(x, a), (y, f[a])}))
                elif inv and f[a] != a:
                    E.add(frozenset({(x, a), (x, f[a])}))
    return E


@pytest.mark.parametrize("q,name,d", [(2, "iq", 3), (3, "iq", 3), (4, "iq", 4), (3, "paley", 2), (5, "paley", 4),
                                      (4, "complete", 3), (7, "iq", 0)])
def test_star_product_matches_definition(q, name, d):
    net = polarstar(q, name, d)
    m = net.structure.sn.order
    got = {frozenset({divmod(ra, m), divmod(rb, m)}) for ra, _, rb, _ in net.links().tolist()}
    assert len(got) == net.num_links  # no parallel links
    assert got == definition_edges(q, name, d)


def test_ports_follow_the_contract(ps_q3_iq3):
    net = ps_q3_iq3
    st = net.structure
    d = st.sn.degree
    pr, pp = net.peer_table()
    for r in range(net.num_routers):
        x, a = divmod(r, st.sn.order)
        for port in range(net.ports[r]):
            g = net.offsets[r] + port
            y, b = divmod(int(pr[g]), st.sn.order)
            if port < d:
                assert y == x and b == st.sn.adj[a][port]
            else:
                assert st.er.slots[x, port - d] == y
                assert b == st.sn.f[a]


def test_example_q3_iq3(ps_q3_iq3):
    st = distance_stats(ps_q3_iq3)
    assert ps_q3_iq3.num_routers == 104
    assert st.histogram == [0, 728, 3936, 6048]
    assert round(st.mean_distance, 6) == 2.496639


def test_example_q11_iq3(ps_q11_iq3):
    net = ps_q11_iq3
    assert net.num_routers == 1064
    assert (net.degree == 15).all()
    assert distance_stats(net).diameter == 3


MAX_ROUTERS = 20_000
MAX_RADIX = 40


def small_configs():
    out = []
    for q in prime_powers(2, MAX_RADIX):
        for name in ("iq", "paley"):
            for d in range(0, MAX_RADIX - q):
                m = supernode_order(name, d)
                if m and (q * q + q + 1) * m <= MAX_ROUTERS:
                    out.append((q, name, d))
    return out


CONFIGS = small_configs()


def test_config_count():
    # stated in docs/topologies.md / the closing note: every IQ and Paley configuration with
    # <= 20,000 routers and radix <= 40
    assert len(CONFIGS) == 373


@pytest.mark.parametrize("q,name,d", CONFIGS, ids=[f"q{q}-{n}-{d}" for q, n, d in CONFIGS])
def test_diameter_at_most_3(q, name, d):
    net = polarstar(q, name, d)
    m = supernode_order(name, d)
    assert net.num_routers == (q * q + q + 1) * m
    assert net.radix == q + 1 + d
    st = distance_stats(net)
    assert st.diameter is not None and st.diameter <= 3


def test_design_space_claims():
    paley_wins = [r for r in range(8, 129) if largest(r).supernode != "iq"]
    assert paley_wins == [23, 50, 56, 80]
    best = largest(15)
    assert (best.q, best.supernode, best.degree, best.routers) == (11, "iq", 3, 1064)
    assert largest(64).routers == 79_506 and largest(128).routers == 627_570
    for c in design_space(40):
        assert c.q + 1 + c.degree == 40
        assert c.routers == (c.q ** 2 + c.q + 1) * supernode_order(c.supernode, c.degree)


def test_bad_parameters():
    with pytest.raises(ParameterError, match="q=6"):
        polarstar(6, "iq", 3)
    with pytest.raises(ParameterError, match="degree=5"):
        polarstar(3, "iq", 5)
    with pytest.raises(ParameterError, match="radix"):
        design_space(2)
