"""Exact all-pairs hop distances by bit-parallel BFS.

All sources advance together: reach[v] is a bitset over sources (packed uint64 words), and one
BFS level is reach'[v] = reach[v] | OR_{u ~ v} reach[u]. Sources are processed in blocks so the
working set stays bounded (`block` sources at a time). Cost per level is O(links · block/64)
word operations, all inside NumPy: one cache-sized gather per port column, no per-link temporary.
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
    bits = np.arange(len(sources))
    word, one = bits // 64, np.left_shift(np.uint64(1), (bits % 64).astype(np.uint64))
    reach = np.zeros((n, words), dtype=np.uint64)
    reach[sources, word] = one
    if max_levels < 1:
        return
    # level 1 straight from the adjacency lists (no gather over all links)
    deg = np.diff(indptr)[sources]
    nbr = np.concatenate([indices[indptr[s]:indptr[s + 1]] for s in sources]) if len(sources) else indices[:0]
    frontier = np.zeros_like(reach)
    np.bitwise_or.at(frontier, (nbr, np.repeat(word, deg)), np.repeat(one, deg))
    frontier &= ~reach
    full = np.zeros(words, dtype=np.uint64)
    np.bitwise_or.at(full, word, one)
    table = _padded_neighbors(indptr, indices, n)
    level = 1
    while True:
        if not frontier.any():
            return
        reach |= frontier
        yield level, frontier
        if level >= max_levels or (reach == full).all():
            return
        level += 1
        padded = np.concatenate([frontier, np.zeros((1, words), dtype=np.uint64)])
        nxt = padded[table[:, 0]]
        for j in range(1, table.shape[1]):   # one (n, words) gather per port column: cache-sized
            nxt |= padded[table[:, j]]
        nxt &= ~reach
        frontier = nxt


def _padded_neighbors(indptr, indices, n) -> np.ndarray:
    """(n, max degree) neighbour table, padded with the sentinel row n."""
    deg = np.diff(indptr)
    width = max(int(deg.max()) if n else 0, 1)
    table = np.full((n, width), n, dtype=np.int64)
    rows = np.repeat(np.arange(n), deg)
    cols = np.arange(len(indices)) - np.repeat(indptr[:-1], deg)
    table[rows, cols] = indices
    return table


def _block_size(n: int, links2: int, budget_bytes: int = 1 << 28) -> int:
    per_source_bytes = 5 * n / 8
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


def host_distance_stats(net: Network, hosts=None, block: int | None = None, router_pairs: bool = False) -> dict:
    """Host-to-host distances of a host-switch graph (host-switch paper §2.1, §4.2.1).

    Router r carries hosts[r] hosts (default: its endpoints). Two hosts on routers s, t are
    ℓ(s, t) + 2 hops apart (2 on the same router), so with N hosts
        h-ASPL = 2 + Σ_{s≠t} ℓ(s, t)·w_s·w_t / (N(N−1)),
    accumulated level by level from the same bit-parallel BFS, with per-source host counts as
    bit planes (popcount of new ∧ plane_b, weighted by 2^b). With `router_pairs`, also the
    diameter and mean distance between distinct routers that carry hosts (the PolarStar paper's
    Fig. 14 convention for indirect networks).
    Returns h_aspl / h_diameter (None when some host pair is disconnected) and counts.
    """
    n = net.num_routers
    w = np.asarray(net.endpoints if hosts is None else hosts, dtype=np.int64)
    if w.shape != (n,) or (w < 0).any():
        raise ValueError("hosts: need one count >= 0 per router")
    N = int(w.sum())
    indptr, indices = net.csr()
    block = block or _block_size(n, len(indices))
    has = w > 0
    B = max(1, int(w.max()).bit_length()) if N else 1
    total = 0
    reached = 0
    hdiam = 2 if N >= 2 else None
    rp_sum = rp_cnt = 0
    rp_diam = 0
    for s0 in range(0, n, block):
        src = np.arange(s0, min(n, s0 + block))
        if not has[src].any():
            continue
        words = (len(src) + 63) // 64
        bits = np.arange(len(src))
        planes = np.zeros((B + 1, words), dtype=np.uint64)
        one = np.left_shift(np.uint64(1), (bits % 64).astype(np.uint64))
        for b in range(B):
            sel = ((w[src] >> b) & 1).astype(bool)
            np.bitwise_or.at(planes[b], bits[sel] // 64, one[sel])
        np.bitwise_or.at(planes[B], bits[has[src]] // 64, one[has[src]])
        scale = (1 << np.arange(B)).astype(np.int64)
        for level, new in _levels(indptr, indices, n, src, n):
            cnt = np.bitwise_count(new[has][:, None, :] & planes[None, :, :]).sum(axis=2).astype(np.int64)
            wsum = cnt[:, :B] @ scale                      # host-weighted sources reached, per target
            contrib = int((w[has] * wsum).sum())
            if contrib:
                total += level * contrib
                reached += contrib
                hdiam = max(hdiam or 0, level + 2)
            rc = int(cnt[:, B].sum())
            if rc:
                rp_sum += level * rc
                rp_cnt += rc
                rp_diam = max(rp_diam, level)
    cross = N * N - int((w * w).sum())
    connected = reached == cross
    out = {"hosts": N, "h_aspl": (2 + total / (N * (N - 1))) if connected and N >= 2 else None,
           "h_diameter": hdiam if connected else None, "host_pair_hops": total + 2 * N * (N - 1)}
    if router_pairs:
        k = int(has.sum())
        ok = rp_cnt == k * (k - 1)
        out["router_diameter"] = rp_diam if ok else None
        out["router_mean_distance"] = (rp_sum / rp_cnt) if ok and rp_cnt else None
    return out
