"""Exact all-pairs hop distances by bit-parallel BFS.

All sources advance together: reach[v] is a bitset over sources (packed uint64 words), and one
BFS level is reach'[v] = reach[v] | OR_{u ~ v} reach[u]. Sources are processed in blocks so the
working set stays bounded (`block` sources at a time). Cost per level is O(links · block/64)
word operations, all inside NumPy.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .network import Network

UNREACHABLE = 255


@dataclass
class DistanceStats:
    histogram: list[int]   # histogram[h] = ordered router pairs (s != t) at distance h (h >= 1; [0] = 0)
    unreachable: int       # ordered pairs with no path
    routers: int

    @property
    def diameter(self) -> int | None:
        return None if self.unreachable else len(self.histogram) - 1

    @property
    def mean_distance(self) -> float | None:
        pairs = sum(self.histogram)
        if self.unreachable or not pairs:
            return None
        return sum(h * c for h, c in enumerate(self.histogram)) / pairs

    def as_dict(self) -> dict:
        return {"diameter": self.diameter, "mean_distance": self.mean_distance,
                "distance_histogram": self.histogram, "unreachable_pairs": self.unreachable}


def _levels(indptr, indices, n, sources, max_levels):
    """Yield (level, newly reached bitsets (n, words)) for one block of sources."""
    words = (len(sources) + 63) // 64
    reach = np.zeros((n, words), dtype=np.uint64)
    bits = np.arange(len(sources))
    reach[sources, bits // 64] |= np.left_shift(np.uint64(1), (bits % 64).astype(np.uint64))
    frontier = reach.copy()
    deg = np.diff(indptr)
    nonempty = deg > 0
    starts = indptr[:-1][nonempty]
    level = 0
    while level < max_levels:
        level += 1
        gathered = frontier[indices]
        nxt = np.zeros_like(reach)
        if len(gathered):
            nxt[nonempty] = np.bitwise_or.reduceat(gathered, starts, axis=0)
        nxt &= ~reach
        if not nxt.any():
            return
        reach |= nxt
        frontier = nxt
        yield level, nxt


def _block_size(n: int, links2: int, budget_bytes: int = 1 << 28) -> int:
    per_source_bytes = (max(links2, n) * 2 + 3 * n) / 8
    b = int(budget_bytes / max(per_source_bytes, 1))
    return max(64, min(n, (b // 64) * 64 or 64))


def distance_stats(net: Network, block: int | None = None, progress=None) -> DistanceStats:
    n = net.num_routers
    indptr, indices = net.csr()
    block = block or _block_size(n, len(indices))
    hist = [0]
    reached = 0
    for s0 in range(0, n, block):
        src = np.arange(s0, min(n, s0 + block))
        for level, new in _levels(indptr, indices, n, src, n):
            cnt = int(np.bitwise_count(new).sum())
            while len(hist) <= level:
                hist.append(0)
            hist[level] += cnt
            reached += cnt
        if progress:
            progress(len(src))
    return DistanceStats(hist, n * (n - 1) - reached, n)


def distance_matrix(net: Network, block: int | None = None) -> np.ndarray:
    """(n, n) uint8 hop distances; 255 where unreachable. dist[s, t] (symmetric)."""
    n = net.num_routers
    indptr, indices = net.csr()
    block = block or _block_size(n, len(indices))
    dist = np.full((n, n), UNREACHABLE, dtype=np.uint8)
    np.fill_diagonal(dist, 0)
    for s0 in range(0, n, block):
        src = np.arange(s0, min(n, s0 + block))
        for level, new in _levels(indptr, indices, n, src, 254):
            bits = np.unpackbits(new.view(np.uint8), axis=1, bitorder="little")[:, :len(src)]
            v, s = np.nonzero(bits)
            dist[s0 + s, v] = level
    return dist
