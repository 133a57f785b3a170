"""Erdős–Rényi polarity graphs ER_q (PolarStar paper §6.1.2).

Vertices are the left-normalized nonzero vectors of GF(q)^3 (the points of the projective plane
PG(2, q)); x ~ y when x·y = 0. Self-orthogonal points are the q+1 quadrics (self-loops in ER_q).

Numbering contracts, read by the routing model and the RTL (both compute them arithmetically):
  * vertex ids: (1, a, b) -> a*q + b;  (0, 1, b) -> q^2 + b;  (0, 0, 1) -> q^2 + q.
  * neighbour slots: the neighbours of x are the points of the line x^⊥. With the basis (u, v) of
    x^⊥ below, slot k < q holds normalize(u + k*v) and slot q holds normalize(v) (k is the field
    element with integer value k). A quadric has itself in one slot (its self-loop).
        x = (1, x1, x2): u = (-x1, 1, 0), v = (-x2, 0, 1)
        x = (0, 1, x2):  u = (1, 0, 0),   v = (0, -x2, 1)
        x = (0, 0, 1):   u = (1, 0, 0),   v = (0, 1, 0)
    `slot_of(x, y)` inverts it with one field division, so "which port leads to ER vertex y" needs
    no table.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from .field import FiniteField, field


class ERGraph:
    """ER_q with vectorized GF(q) arithmetic on vertex arrays."""

    def __init__(self, q: int):
        self.F: FiniteField = field(q)
        self.q = q
        self.n = q * q + q + 1

    # ---- vertex <-> vector ------------------------------------------------------------------
    @cached_property
    def vectors(self) -> np.ndarray:
        """(n, 3) int array: the normalized vector of every vertex id."""
        return self.vector(np.arange(self.n))

    def vector(self, ids) -> np.ndarray:
        q = self.q
        ids = np.asarray(ids, dtype=np.int64)
        out = np.zeros(ids.shape + (3,), dtype=np.int64)
        a = ids < q * q
        b = (ids >= q * q) & (ids < q * q + q)
        c = ids == q * q + q
        out[a, 0], out[a, 1], out[a, 2] = 1, ids[a] // q, ids[a] % q
        out[b, 1], out[b, 2] = 1, ids[b] - q * q
        out[c, 2] = 1
        return out

    def index(self, vec) -> np.ndarray:
        """Vertex id of normalized vectors (..., 3)."""
        q = self.q
        v = np.asarray(vec, dtype=np.int64)
        v0, v1, v2 = v[..., 0], v[..., 1], v[..., 2]
        return np.where(v0 == 1, v1 * q + v2, np.where(v1 == 1, q * q + v2, q * q + q))

    # ---- arithmetic -------------------------------------------------------------------------
    def normalize(self, vec) -> np.ndarray:
        """Scale so that the leftmost nonzero entry is 1 (zero vectors stay zero)."""
        F = self.F
        v = np.asarray(vec, dtype=np.int64)
        lead = np.where(v[..., 0] != 0, v[..., 0], np.where(v[..., 1] != 0, v[..., 1], v[..., 2]))
        s = F.inv[lead].astype(np.int64)
        return F.mul[v, s[..., None]].astype(np.int64)

    def dot(self, x, y) -> np.ndarray:
        F = self.F
        x = np.asarray(x, dtype=np.int64)
        y = np.asarray(y, dtype=np.int64)
        m = F.mul[x, y]
        return F.add[F.add[m[..., 0], m[..., 1]], m[..., 2]].astype(np.int64)

    def cross(self, x, y) -> np.ndarray:
        """Normalized cross product x × y: the common neighbour of distinct points x, y (§6.1.2)."""
        F = self.F
        x = np.asarray(x, dtype=np.int64)
        y = np.asarray(y, dtype=np.int64)

        def det(i, j):
            return F.sub(F.mul[x[..., i], y[..., j]], F.mul[x[..., j], y[..., i]])

        w = np.stack([det(1, 2), det(2, 0), det(0, 1)], axis=-1).astype(np.int64)
        return self.normalize(w)

    def cross_id(self, x_id, y_id) -> np.ndarray:
        return self.index(self.cross(self.vectors[x_id], self.vectors[y_id]))

    # ---- structure --------------------------------------------------------------------------
    @cached_property
    def quadric(self) -> np.ndarray:
        """Boolean mask of the self-orthogonal vertices (q+1 of them)."""
        v = self.vectors
        return self.dot(v, v) == 0

    def line_basis(self, x) -> tuple[np.ndarray, np.ndarray]:
        F = self.F
        x = np.asarray(x, dtype=np.int64)
        u = np.zeros_like(x)
        v = np.zeros_like(x)
        first = x[..., 0] == 1
        second = (x[..., 0] == 0) & (x[..., 1] == 1)
        last = ~first & ~second
        u[first, 0], u[first, 1] = F.neg[x[first, 1]], 1
        v[first, 0], v[first, 2] = F.neg[x[first, 2]], 1
        u[second, 0] = 1
        v[second, 1], v[second, 2] = F.neg[x[second, 2]], 1
        u[last, 0] = 1
        v[last, 1] = 1
        return u, v

    @cached_property
    def slots(self) -> np.ndarray:
        """(n, q+1) int32: slots[x, k] = the neighbour of x in slot k (x itself for a quadric's loop)."""
        F = self.F
        u, v = self.line_basis(self.vectors)
        t = np.arange(self.q)
        pts = F.add[u[:, None, :], F.mul[t[None, :, None], v[:, None, :]]].astype(np.int64)
        pts = np.concatenate([pts, v[:, None, :]], axis=1)
        return self.index(self.normalize(pts)).astype(np.int32)

    def slot_of(self, x_id, y_id) -> np.ndarray:
        """The slot k with slots[x, k] == y, for orthogonal x, y, by one field division."""
        F, q = self.F, self.q
        x = self.vectors[np.asarray(x_id)]
        y = self.vectors[np.asarray(y_id)]
        # pick the coordinate that carries t and the one that carries the scale (see module doc)
        first = x[..., 0] == 1
        second = (x[..., 0] == 0) & (x[..., 1] == 1)
        num = np.where(first, y[..., 2], np.where(second, y[..., 2], y[..., 1]))
        den = np.where(first, y[..., 1], y[..., 0])
        t = F.mul[num, F.inv[den]].astype(np.int64)
        return np.where(den == 0, q, t)

    def adjacent(self, x_id, y_id) -> np.ndarray:
        return self.dot(self.vectors[x_id], self.vectors[y_id]) == 0
