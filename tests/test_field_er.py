"""GF(q) tables against galois, and ER_q structure for every prime power q <= 32."""

import galois
import numpy as np
import pytest

from topologies import build, distance_stats
from topologies.er import ERGraph
from topologies.field import field, is_prime_power, prime_powers

QS = prime_powers(2, 32)


def test_prime_powers_list():
    assert QS == [2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 17, 19, 23, 25, 27, 29, 31, 32]
    assert all(is_prime_power(q) == galois.is_prime_power(q) for q in range(1, 300))


@pytest.mark.parametrize("q", QS + [64, 81, 125, 128])
def test_field_tables_match_galois(q):
    F = field(q)
    gf = galois.GF(q)
    rng = np.random.default_rng(q)
    a, b = rng.integers(0, q, 500), rng.integers(0, q, 500)
    assert (F.add[a, b] == np.asarray(gf(a) + gf(b))).all()
    assert (F.mul[a, b] == np.asarray(gf(a) * gf(b))).all()
    nz = np.arange(1, q)
    assert (F.mul[nz, F.inv[nz]] == 1).all()
    assert (F.antilog[F.log[nz]] == nz).all()
    assert len(set(F.antilog.tolist())) == q - 1


@pytest.mark.parametrize("q", QS)
def test_er_structure(q):
    er = ERGraph(q)
    n = q * q + q + 1
    assert er.n == n == len(np.unique(er.index(er.vectors)))
    v = er.vectors
    # independent orthogonality matrix from plain integer arithmetic over galois
    gf = galois.GF(q)
    G = gf(v)
    ortho = np.asarray(G @ G.T) == 0
    assert er.quadric.sum() == q + 1
    assert (np.diag(ortho) == er.quadric).all()
    for x in range(n):
        assert sorted(er.slots[x].tolist()) == np.nonzero(ortho[x])[0].tolist()
    k = np.arange(q + 1)
    xs = np.repeat(np.arange(n), q + 1)
    assert (er.slot_of(xs, er.slots.ravel()) == np.tile(k, n)).all()
    # degrees q+1, and q for quadrics once their loop is dropped
    deg = ortho.sum(1) - np.diag(ortho)
    assert set(deg[er.quadric]) == {q} and set(deg[~er.quadric]) == {q + 1}
    # cross product: common neighbour of x and y, or one of them
    x, y = np.nonzero(~np.eye(n, dtype=bool))
    w = er.cross_id(x, y)
    common = ortho[x, w] & ortho[y, w]
    assert common.all()
    assert ((w != x) & (w != y) | ortho[x, y]).all()


@pytest.mark.parametrize("q", QS)
def test_er_network_diameter_two(q):
    net = build(f"er:q={q}")
    st = distance_stats(net)
    assert st.diameter == 2
    assert net.num_routers == q * q + q + 1
    # links = (sum of loop-free degrees) / 2
    assert 2 * net.num_links == (q * q + q + 1) * (q + 1) - (q + 1)
