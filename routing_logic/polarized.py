"""Polarized routing (Camarero, Martínez, Beivide, IEEE Micro 2022) on any Network.

Weight μ_{s,t}(c) = D(c, s) - D(c, t). For the hop c -> n through a port, Δs = D(n, s) - D(c, s)
and Δt = D(n, t) - D(c, t) (each in {-1, 0, +1}), Δμ = Δs - Δt. The candidate rules (paper
Table 1):
  Δμ = 2, 1                always (departs s and/or approaches t);
  (Δs, Δt) = (+1, +1)      only when D(c, s) < D(c, t);
  (Δs, Δt) = (-1, -1)      only when D(c, s) >= D(c, t);
  (0, 0) and Δμ < 0        never.
Damaged networks (failed links). The rules can leave a reachable router with no candidate at
all (every Δt = -1 port is (-1, -1) while D(c, s) < D(c, t)): a random 5% of the 104-router
PolarStar's links already make such dead ends. Allowing the (-1, -1) ports there makes routes
cycle (measured: 626 (s, t) pairs on that network). So a packet at a dead end *escapes*: it
clears the header's phase bit (1 at injection) and from then on takes minimal hops only (the
Δt = -1 ports, priority 0, still chosen by occupancy). D(c, t) falls by one per escaped hop, so
no escaped route cycles; its length is the hops to the dead end plus D(c, t). On an intact
network no state is a dead end and nothing changes. `route_lengths` counts the dead ends and
gives the exact longest route including escapes, which becomes `max_route_length`; the
constructor still refuses a network whose Polarized routes cycle (none measured).
Priority of a candidate = penalty[Δμ] (paper: 0 / 64 / 80 for Δμ = 2 / 1 / 0 with 128-flit
buffers; scaled here by buffer_depth/128); the simulator adds the occupancy in credits. The
paper says the candidates with the greatest Δμ get no penalty; subtracting that constant from
every candidate does not change which one has the smallest sum, so absolute penalties are used.

Distances come from an oracle: BFS tables on any Network, or the arithmetic D of PolarStar
(`routing_logic.polarstar`), in which case no table is stored at all.

Symmetry. μ_{t,s} = -μ_{s,t}, so a hop with Δμ > 0 for (s, t) is allowed in reverse for (t, s),
and so is a Δμ = 0 hop taken where μ != 0. At a tie μ = 0 (D(c, s) = D(c, t)) the paper's rule
allows (-1, -1), whose reverse is a (+1, +1) hop from a tie, which it forbids: candidate sets are
symmetric except for Δμ = 0 hops at a tie, and route sets differ for most pairs of PolarStar and
random graphs (docs/routing.md). `symmetric=True` drops Δμ = 0 hops at a tie (it requires
D(c,s) > D(c,t) for (-1, -1)) and is exactly symmetric; the default follows the paper.

Route length ≤ 4D - 3 for diameter D ≥ 2 (the paper's bound); with hop-indexed VCs that many
VCs make it deadlock-free by construction. `route_lengths` computes the exact longest route.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from topologies.errors import ParameterError
from topologies.network import Network

from .base import EJECT, Candidate, Routing, RouteState, StateArrays, _broadcast, bits
from .table import make_oracle


def _pack(bits2d: np.ndarray) -> np.ndarray:
    """(rows, T) bool -> (rows, ceil(T/64)) uint64 bitsets, bit j of word j//64 = column j."""
    rows, t = bits2d.shape
    w = (t + 63) // 64
    padded = np.zeros((rows, w * 64), dtype=bool)
    padded[:, :t] = bits2d
    return np.packbits(padded, axis=1, bitorder="little").view(np.uint64).reshape(rows, w)


PAPER_PENALTIES = {2: 0, 1: 64, 0: 80}    # Micro'22, for 128-flit buffers
PAPER_BUFFER = 128


class Polarized(Routing):
    """`polarized`: adaptive non-minimal routing by the weight μ = D(c,s) - D(c,t)."""

    name = "polarized"
    uses_source = True

    def __init__(self, net: Network, vcs: int | None = None, distances: str = "auto",
                 buffer_depth: int = PAPER_BUFFER, penalties: dict | None = None, symmetric: bool = False,
                 cache="auto", oracle=None):
        self.oracle = oracle if oracle is not None else make_oracle(net, distances, cache)
        if not isinstance(buffer_depth, (int, np.integer)) or buffer_depth < 1:
            raise ParameterError(f"buffer_depth={buffer_depth!r}: must be an integer >= 1 (flits per VC buffer)")
        pen = dict(PAPER_PENALTIES if penalties is None else penalties)
        if sorted(pen) != [0, 1, 2]:
            raise ParameterError(f"penalties={penalties!r}: need one value for each of Δμ = 0, 1, 2")
        self.buffer_depth = int(buffer_depth)
        self.penalty = {k: int(round(v * self.buffer_depth / PAPER_BUFFER)) for k, v in pen.items()}
        # lookup by Δμ + 2 (Δμ in -2..2; negative entries never used)
        self._pen = np.array([0, 0, self.penalty[0], self.penalty[1], self.penalty[2]], dtype=np.int64)
        self.symmetric = bool(symmetric)
        D = self.oracle.diameter
        self.max_route_length = max(4 * D - 3, 2 * D)
        if len(net.attrs.get("failed_links", ())):
            self.n = net.num_routers
            lengths = self.route_lengths()
            if lengths["cyclic"]:
                raise ParameterError(f"network: on {net.name!r} Polarized routes cycle for {lengths['cyclic']} "
                                     f"(s, t) pairs; use min or polarstar routing on this damaged network")
            if (lengths["longest"] < 0).any():
                raise ParameterError(f"network: on {net.name!r} some routers cannot reach each other")
            self.max_route_length = max(self.max_route_length, int(lengths["longest"].max()))
        super().__init__(net, vcs)

    # ---- the candidate rule (shared by scalar and batched forms) -----------------------------
    def allowed(self, ds, dt, a, b):
        """Polarized rule on per-port Δs, Δt (..., P) with a = D(c,s), b = D(c,t) (...)."""
        a = np.asarray(a)[..., None]
        b = np.asarray(b)[..., None]
        dmu = ds.astype(np.int8) - dt       # a port without a link has Δs = Δt = NO_PORT: Δμ = 0
        up = (ds == 1) & (dt == 1)
        down = (ds == -1) & (dt == -1)
        zero_ok = (up & (a < b)) | (down & ((a > b) if self.symmetric else (a >= b)))
        return (dmu > 0) | zero_ok, dmu

    def _rule(self, c, s, t, phase):
        """(ok, dmu, escaped) per port for heads at c: the Polarized candidates, or, for a packet
        that escaped (phase 0) or is at a dead end (no candidate), the minimal ports."""
        o = self.oracle
        dt = o.delta(c, t)
        ok, dmu = self.allowed(o.delta(c, s), dt, o.dist_of(c, s), o.dist_of(c, t))
        escaped = (np.asarray(phase) == 0) | ~ok.any(axis=-1)
        ok = np.where(escaped[..., None], dt == -1, ok)
        return ok, dmu, escaped

    def _route(self, c: int, state: RouteState):
        s, t = state.src, state.dst
        if c == t:
            return (Candidate(EJECT, 0, 0),)
        ok, dmu, escaped = self._rule(c, s, t, state.phase)
        vc = 0                      # the VC policy sets each candidate's VCs (Routing._expand_vcs)
        ports = np.nonzero(ok)[0]
        return tuple(Candidate(int(p), vc, 0 if escaped else int(self._pen[dmu[p] + 2])) for p in ports)

    def advance(self, c: int, state: RouteState, port: int) -> RouteState:
        escaped = c != state.dst and bool(self._rule(c, state.src, state.dst, state.phase)[2])
        return replace(state, hops=state.hops + 1, phase=0 if escaped else state.phase,
                       **self._turns_after(c, state, port))

    def advance_batch(self, c, states: StateArrays, nxt) -> StateArrays:
        c = np.asarray(c, dtype=np.int64).ravel()
        states = _broadcast(states, len(c))
        escaped = self._rule(c, states.src, states.dst, states.phase)[2] & (c != states.dst)
        return self._hop(c, states, nxt)._replace(phase=np.where(escaped, 0, states.phase))

    def _batch(self, c, states: StateArrays):
        s, t = states.src, states.dst
        ok, dmu, escaped = self._rule(c, s, t, states.phase)
        at_t = c == t
        ok &= ~at_t[:, None]
        idx, port = np.nonzero(ok)
        prio = np.where(escaped[idx], 0, self._pen[dmu[idx, port] + 2])
        ej = np.nonzero(at_t)[0]
        return (np.concatenate([idx, ej]), np.concatenate([port, np.full(len(ej), EJECT)]),
                np.concatenate([prio, np.zeros(len(ej), dtype=np.int64)]))

    # ---- whole-route analysis ----------------------------------------------------------------
    def route_lengths(self, sources=None, targets=None, progress=None) -> dict:
        """Exact route structure for every (s, t), s in `sources`, t in `targets` (default all).

        Returns arrays (len(sources), len(targets)): `shortest`, `longest` (hops of the shortest
        and longest Polarized route, escapes included), `zero_load` (route taken when every
        occupancy is 0: lowest priority, then lowest port), and counts `dead_ends` (states
        reachable from s, not t, with no candidate: the packet escapes there) and `cyclic`
        (pairs whose route graph did not drain: a livelock).
        """
        n, o = self.n, self.oracle
        sources = np.arange(n) if sources is None else np.asarray(sources, dtype=np.int64)
        targets = np.arange(n) if targets is None else np.asarray(targets, dtype=np.int64)
        nbr = np.stack([o.neighbor(np.arange(n), p) for p in range(o.ports)], axis=1)     # (n, P)
        # links (c, p) grouped by far-end router, for a pull-style OR over each router's in-links
        c_e, p_e = np.nonzero(nbr >= 0)
        order = np.argsort(nbr[c_e, p_e], kind="stable")
        c_e, p_e = c_e[order], p_e[order]
        heads = nbr[c_e, p_e]
        starts = np.searchsorted(heads, np.arange(n))
        has_in = np.isin(np.arange(n), heads)
        cols = np.arange(n)
        dist_ct = o.dist_of(cols[None, :], targets[:, None])                              # (T, n)
        delta_ct = o.delta(cols[None, :], targets[:, None])                               # (T, n, P)
        limit = 4 * max(o.diameter, 1) + 4
        out = {k: np.zeros((len(sources), len(targets)), dtype=np.int64)
               for k in ("shortest", "longest", "zero_load")}
        dead = cyc = 0
        T = np.arange(len(targets))
        for i, s in enumerate(sources):
            ds = o.delta(cols, np.full(n, s))                                             # (n, P)
            a = o.dist_of(cols, np.full(n, s))
            ok, dmu = self.allowed(ds[None], delta_ct, a[None], dist_ct)                  # (T, n, P)
            ok &= (cols[None, :] != targets[:, None])[..., None]
            # reachability as bitsets over targets: reach[c] has bit j when (s, targets[j]) can be at c
            ok_e = _pack(ok[:, c_e, p_e].T)                                               # (links, W)
            stuck = _pack((~ok.any(axis=2)).T)                                            # (n, W)
            stuck[targets, T // 64] &= ~(np.uint64(1) << (T % 64).astype(np.uint64))
            reach = np.zeros((n, ok_e.shape[1]), dtype=np.uint64)
            reach[s] = _pack(np.ones((1, len(targets)), dtype=bool))[0]
            shortest = np.full(len(targets), -1)
            longest = np.full(len(targets), -1)
            for k in range(limit + 1):
                at_t = (reach[targets, T // 64] >> (T % 64).astype(np.uint64)) & np.uint64(1) == 1
                shortest = np.where(at_t & ((shortest < 0) | (k < shortest)), k, shortest)
                longest = np.where(at_t, np.maximum(longest, k), longest)
                hit = reach & stuck                       # dead ends reached after k hops: escape
                if hit.any():
                    dead += int(np.bitwise_count(hit).sum())
                    bitmap = np.unpackbits(hit.view(np.uint8), axis=1, bitorder="little")[:, :len(targets)]
                    hc, hj = np.nonzero(bitmap)
                    length = k + dist_ct[hj, hc]          # then D(c, t) minimal hops
                    np.maximum.at(longest, hj, length)
                    first = np.full(len(targets), np.iinfo(np.int64).max)
                    np.minimum.at(first, hj, length)
                    shortest = np.where((first < np.iinfo(np.int64).max) & ((shortest < 0) | (first < shortest)),
                                        first, shortest)
                moved = reach[c_e] & ok_e
                reach = np.bitwise_or.reduceat(moved, np.minimum(starts, len(heads) - 1), axis=0)
                reach[~has_in] = 0
                if not reach.any():
                    break
            else:
                cyc += int(np.bitwise_count(np.bitwise_or.reduce(reach, axis=0)).sum())
            out["shortest"][i], out["longest"][i] = shortest, longest
            # zero-load walk: smallest penalty, then lowest port
            pen = np.where(ok, self._pen[np.clip(dmu, -2, 2) + 2], np.iinfo(np.int64).max)
            choice = pen.argmin(axis=2)                                                   # (T, n)
            cur = np.full(len(targets), s)
            hops = np.zeros(len(targets), dtype=np.int64)
            for _ in range(limit):
                go = np.nonzero(cur != targets)[0]
                if not len(go):
                    break
                p = choice[go, cur[go]]
                okp = ok[go, cur[go], p]
                esc = go[~okp]                            # a dead end: escape, D(c, t) minimal hops
                hops[esc] += dist_ct[esc, cur[esc]]
                cur[esc] = targets[esc]
                mv = go[okp]
                cur[mv] = nbr[cur[mv], p[okp]]
                hops[mv] += 1
            out["zero_load"][i] = np.where(cur == targets, hops, -1)
            if progress:
                progress(1)
        out["dead_ends"] = dead
        out["cyclic"] = cyc
        return out

    def storage_bits(self) -> dict:
        if self.oracle.kind == "arithmetic":
            return self.oracle.storage_bits()
        # per destination: Δt ∈ {-1, 0, +1} per port (2 bits) and D(c, t) for the D(c,s) < D(c,t) test
        n, P = self.n, self.oracle.ports
        b = {"delta_table": n * P * 2, "distance_table": n * bits(self.oracle.diameter + 1)}
        b["total"] = sum(b.values())
        return b

