"""The star product G * G' (PolarStar paper §4.2, Definition 1) onto a `Network`.

G is given by its neighbour-slot table (n, K): slots[x, k] = neighbour in slot k, x itself for a
self-loop, -1 for none. One bijection f for every arc; arcs are oriented from the lower to the
higher vertex id (this only matters when f is not an involution). A self-loop of G at x becomes
the matching (x, a) — (x, f(a)) when f is an involution (dropped where a = f(a)); with a
non-involutive f (Paley, Property R1) loops are dropped, since Theorem 2 does not need them and
the edges a — f(a) would not form a matching.

Port numbering of router (x, a) = x*|V(G')| + a:
  ports 0 .. d'-1      -> supernode neighbours adj[a][0..d'-1] (increasing vertex id)
  ports d' .. d'+K-1   -> structure slot k = port - d' (unconnected where the slot is empty)
"""
from __future__ import annotations

import numpy as np

from .network import Network, index_dtype
from .supernodes import Supernode


def reverse_slots(slots: np.ndarray) -> np.ndarray:
    """rev[x, k] = the slot of x in the table of y = slots[x, k] (-1 for empty slots)."""
    n, K = slots.shape
    x = np.repeat(np.arange(n, dtype=np.int64), K)
    y = slots.ravel().astype(np.int64)
    k = np.tile(np.arange(K, dtype=np.int64), n)
    key = x * n + y
    order = np.argsort(key)
    rev = np.full(n * K, -1, dtype=np.int64)
    ok = y >= 0
    pos = np.searchsorted(key[order], y[ok] * n + x[ok])
    rev[ok] = k[order][pos]
    return rev.reshape(n, K)


def star_product(name: str, slots: np.ndarray, sn: Supernode, rev: np.ndarray | None = None,
                 endpoints=0, spec: str = "", structure=None) -> Network:
    n, K = slots.shape
    m, d = sn.order, sn.degree
    P = d + K
    N = n * m
    total = N * P
    dt = index_dtype(total)
    if rev is None:
        rev = reverse_slots(slots)
    peer = np.full((n, m, P), -1, dtype=dt)
    # supernode ports: (x, a) port i <-> (x, b) port j where b = adj[a, i], adj[b, j] = a
    sn_rev = np.argmax(sn.adj[sn.adj] == np.arange(m)[:, None, None], axis=2) if d else np.zeros((m, 0), int)
    base = (np.arange(n, dtype=np.int64) * m * P)[:, None]
    for a in range(m):
        if d:
            peer[:, a, :d] = base + (sn.adj[a] * P + sn_rev[a])[None, :]
    involution = sn.is_involution
    f, f_inv = sn.f.astype(np.int64), sn.f_inv.astype(np.int64)
    x = np.arange(n, dtype=np.int64)[:, None]
    y = slots.astype(np.int64)
    loop = y == x
    empty = y < 0
    fwd = (x < y) | involution           # arc x -> y: (x, a) -> (y, f(a)); else (x, a) -> (y, f^-1(a))
    ports = d + rev.astype(np.int64)
    for a in range(m):
        b = np.where(fwd, f[a], f_inv[a])
        g = (y * m + b) * P + ports
        if involution and f[a] != a:
            g = np.where(loop, (x * m + f[a]) * P + d + np.arange(K)[None, :], g)
        else:
            g = np.where(loop, -1, g)
        peer[:, a, d:] = np.where(empty, -1, g)
    offsets = np.arange(N + 1, dtype=np.int64) * P
    eps = np.broadcast_to(np.asarray(endpoints, dtype=np.int32), (N,)).copy()
    return Network(name, offsets, peer.reshape(total), eps, spec=spec, structure=structure)
