"""Supernode graphs G' with their bijection f (PolarStar paper §5.1.2, §6.2, Table 2).

* Inductive-Quad IQ_{d'} (d' ≡ 0 or 3 mod 4): 2d'+2 vertices, d'-regular, f a fixed-point-free
  involution, Property R*. Vertex pairs {2i, 2i+1} are the f-pairs.
* Paley(p) (p ≡ 1 mod 4 a prime power): p vertices, (p-1)/2-regular, f(a) = g·a for a primitive
  g (a non-square), so f(E) is the complement of E and f² (multiplication by g²) is an
  automorphism: Property R1. f is not an involution.
* Complete K_{d'+1}: f = identity (both R* and R1 hold trivially).
"""
from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from functools import lru_cache

import numpy as np

from .errors import ParameterError
from .field import field, is_prime_power

# IQ_3 on vertices {x, f(x), y, f(y), z, f(z), w, f(w)} = 0..7 with f(i) = i ^ 1. Found by
# exhaustive search over 3-regular graphs on 8 vertices with R* for this f (it is unique up to
# isomorphism); the inductive step joins {x, f(x), z, f(z)} = {0, 1, 4, 5} to A and
# {y, f(y), w, f(w)} = {2, 3, 6, 7} to f(A) (Fig. 6b).
IQ3_EDGES = ((0, 2), (0, 3), (0, 4), (1, 4), (1, 6), (1, 7), (2, 4), (2, 5), (3, 6), (3, 7), (5, 6), (5, 7))
SUPERNODES = ("iq", "paley", "complete")


@dataclass(frozen=True, eq=False)
class Supernode:
    name: str            # "iq", "paley", "complete"
    degree: int          # d'
    adj: np.ndarray      # (m, d') int32, neighbours of each vertex in increasing order
    f: np.ndarray        # (m,) the bijection
    extra: dict = dc_field(default_factory=dict)

    @property
    def order(self) -> int:
        return len(self.f)

    @property
    def f_inv(self) -> np.ndarray:
        inv = np.empty_like(self.f)
        inv[self.f] = np.arange(len(self.f))
        return inv

    @property
    def is_involution(self) -> bool:
        return bool((self.f[self.f] == np.arange(self.order)).all())

    def adjacency_matrix(self) -> np.ndarray:
        m = self.order
        a = np.zeros((m, m), dtype=bool)
        a[np.repeat(np.arange(m), self.degree), self.adj.ravel()] = True
        return a

    def has_property_r_star(self) -> bool:
        """R*: f an involution and for all x, y: y = x, y = f(x), x~y or f(x)~f(y)."""
        if not self.is_involution:
            return False
        a = self.adjacency_matrix()
        m = self.order
        ok = a | a[np.ix_(self.f, self.f)] | np.eye(m, dtype=bool)
        ok[np.arange(m), self.f] = True
        return bool(ok.all())

    def has_property_r1(self) -> bool:
        """R1: f² is an automorphism and E ∪ f(E) is the complete graph."""
        a = self.adjacency_matrix()
        f2 = self.f[self.f]
        if not (a[np.ix_(f2, f2)] == a).all():
            return False
        img = np.zeros_like(a)
        img[np.ix_(self.f, self.f)] = a  # img[f(x), f(y)] = a[x, y]
        cover = a | img | np.eye(self.order, dtype=bool)
        return bool(cover.all())


def _from_matrix(name: str, a: np.ndarray, f: np.ndarray, **extra) -> Supernode:
    deg = a.sum(axis=1)
    assert (deg == deg[0]).all(), "supernodes are regular"
    adj = np.nonzero(a)[1].reshape(len(a), int(deg[0])).astype(np.int32)
    return Supernode(name, int(deg[0]), adj, np.asarray(f, dtype=np.int32), extra)


def iq_degrees_ok(d: int) -> bool:
    return d >= 0 and d % 4 in (0, 3)


@lru_cache(maxsize=None)
def inductive_quad(degree: int) -> Supernode:
    """IQ_{d'}: base IQ_0 (one f-pair, no edge) or IQ_3, then +4 per step (Fig. 6)."""
    if not isinstance(degree, int) or not iq_degrees_ok(degree):
        raise ParameterError(f"degree={degree!r}: the IQ supernode needs d' ≡ 0 or 3 (mod 4), d' >= 0 (0, 3, 4, 7, 8, ...)")
    iq3 = np.zeros((8, 8), dtype=bool)
    for i, j in IQ3_EDGES:
        iq3[i, j] = iq3[j, i] = True
    a = iq3 if degree % 4 == 3 else np.zeros((2, 2), dtype=bool)
    while len(a) < 2 * degree + 2:
        m = len(a)
        b = np.zeros((m + 8, m + 8), dtype=bool)
        b[:m, :m] = a
        b[m:, m:] = iq3
        A = np.arange(0, m, 2)       # one vertex of each f-pair; f(A) = A + 1
        for new in (0, 1, 4, 5):
            b[m + new, A] = b[A, m + new] = True
        for new in (2, 3, 6, 7):
            b[m + new, A + 1] = b[A + 1, m + new] = True
        a = b
    return _from_matrix("iq", a, np.arange(len(a)) ^ 1)


def paley_orders_ok(p: int) -> bool:
    return p >= 5 and p % 4 == 1 and is_prime_power(p)


@lru_cache(maxsize=None)
def paley(p: int) -> Supernode:
    """Paley(p): x ~ y iff x - y is a nonzero square in GF(p); f(a) = g·a, g primitive."""
    if not isinstance(p, int) or not paley_orders_ok(p):
        raise ParameterError(f"p={p!r}: Paley needs a prime power p ≡ 1 (mod 4) (5, 9, 13, 17, 25, 29, ...)")
    F = field(p)
    sq = np.zeros(p, dtype=bool)
    sq[F.squares] = True
    diff = F.sub(np.arange(p)[:, None], np.arange(p)[None, :])
    a = sq[diff]
    f = F.mul[F.primitive_element, np.arange(p)]
    return _from_matrix("paley", a, f, p=p)


@lru_cache(maxsize=None)
def complete(degree: int) -> Supernode:
    if not isinstance(degree, int) or degree < 0:
        raise ParameterError(f"degree={degree!r}: the complete supernode needs d' >= 0")
    m = degree + 1
    return _from_matrix("complete", ~np.eye(m, dtype=bool), np.arange(m))


def make_supernode(name: str, degree: int) -> Supernode:
    """The supernode family `name` with network degree d' (Paley: p = 2d'+1)."""
    if name == "iq":
        return inductive_quad(degree)
    if name == "paley":
        if not isinstance(degree, int) or degree < 2 or degree % 2 or not is_prime_power(2 * degree + 1):
            raise ParameterError(
                f"degree={degree!r}: Paley(p) has p = 2d'+1 vertices and needs p a prime power ≡ 1 (mod 4); "
                f"allowed d': 2, 4, 6, 8, 12, 14, ...")
        return paley(2 * degree + 1)
    if name == "complete":
        return complete(degree)
    raise ParameterError(f"supernode={name!r}: allowed values are {', '.join(SUPERNODES)}")


def supernode_order(name: str, degree: int) -> int | None:
    """Order of the supernode, or None when it does not exist for this degree (no construction)."""
    if name == "iq":
        return 2 * degree + 2 if iq_degrees_ok(degree) else None
    if name == "paley":
        return 2 * degree + 1 if degree >= 2 and degree % 2 == 0 and is_prime_power(2 * degree + 1) else None
    if name == "complete":
        return degree + 1 if degree >= 0 else None
    raise ParameterError(f"supernode={name!r}: allowed values are {', '.join(SUPERNODES)}")
