"""Supernodes: IQ order/regularity/involution/R*, Paley R1, checked by plain loops (independent of
the vectorized property methods, which are checked against them too)."""
import itertools

import numpy as np
import pytest

from topologies import ParameterError, complete, inductive_quad, make_supernode, paley

IQ_DEGREES = [0, 3, 4, 7, 8, 11, 12, 15, 16, 19, 20]
PALEY_P = [5, 9, 13, 17, 25, 29]


def edges_of(sn):
    return {(a, int(b)) for a in range(sn.order) for b in sn.adj[a]}


def r_star_by_loops(sn):
    E, f = edges_of(sn), sn.f
    return all(y == x or y == f[x] or (x, y) in E or (int(f[x]), int(f[y])) in E
               for x in range(sn.order) for y in range(sn.order))


def r1_by_loops(sn):
    E, f = edges_of(sn), [int(v) for v in sn.f]
    f2 = [f[f[a]] for a in range(sn.order)]
    auto = all(((f2[a], f2[b]) in E) == ((a, b) in E) for a in range(sn.order) for b in range(sn.order))
    cover = all((a, b) in E or (f.index(a), f.index(b)) in E
                for a, b in itertools.combinations(range(sn.order), 2))
    return auto and cover


@pytest.mark.parametrize("d", IQ_DEGREES)
def test_inductive_quad(d):
    sn = inductive_quad(d)
    assert sn.order == 2 * d + 2
    A = sn.adjacency_matrix()
    assert (A == A.T).all() and not A.diagonal().any()
    assert (A.sum(1) == d).all()
    f = sn.f
    assert (f[f] == np.arange(sn.order)).all() and (f != np.arange(sn.order)).all()
    assert r_star_by_loops(sn) and sn.has_property_r_star()


@pytest.mark.parametrize("p", PALEY_P)
def test_paley(p):
    sn = paley(p)
    assert sn.order == p and sn.degree == (p - 1) // 2
    A = sn.adjacency_matrix()
    assert (A == A.T).all() and (A.sum(1) == (p - 1) // 2).all()
    assert r1_by_loops(sn) and sn.has_property_r1()
    assert not sn.is_involution


def test_property_checks_reject_broken_graphs():
    sn = inductive_quad(3)
    from dataclasses import replace
    broken = replace(sn, adj=np.roll(sn.adj, 1, axis=0))  # relabel neighbourhoods
    assert r_star_by_loops(broken) == broken.has_property_r_star()
    bad_f = replace(sn, f=np.arange(8))
    assert not bad_f.has_property_r_star()
    pal = paley(13)
    assert not replace(pal, f=np.arange(13, dtype=np.int32)).has_property_r1()


def test_complete():
    sn = complete(4)
    assert sn.order == 5 and sn.has_property_r_star() and sn.has_property_r1()


@pytest.mark.parametrize("name,deg,word", [("iq", 5, "degree=5"), ("iq", 1, "degree=1"), ("paley", 3, "p = 2d'+1"),
                                           ("paley", 5, "degree=5"), ("foo", 3, "supernode='foo'")])
def test_bad_supernodes(name, deg, word):
    with pytest.raises(ParameterError, match=word.replace("+", r"\+")):
        make_supernode(name, deg)
    with pytest.raises(ParameterError):
        paley(7)
