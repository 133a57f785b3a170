"""Valiant and UGAL-L routing on any Network (minimal sub-routes from a distance oracle).

Valiant: at injection draw an intermediate router r uniformly from all routers (r may be s or t);
route minimally s -> r (phase 0), then r -> t (phase 1); a packet with s = t ejects at once.
Candidates are all minimal ports toward the current target, priority 0 (the simulator's
occupancy picks among them).

UGAL-L (PolarStar paper §9.3, Singh's thesis): at injection sample `samples` (default 4)
intermediates; estimate each path as hops × occupancy of the best first-hop port at s, where
occupancy(port) is the credits used on that output of s; take the minimal path when
H_min · q_min <= H_val · q_val + threshold (Booksim's rule, threshold 0 by default), otherwise
the Valiant path through the best sample (first sampled on ties).

Route length ≤ 2D, so hop-indexed VCs with 2D VCs (6 on PolarStar) are deadlock-free by
construction; the channel dependency graph decides whether fewer suffice.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from topologies.errors import ParameterError
from topologies.network import Network

from .base import EJECT, NO_ROUTER, Candidate, Routing, RouteState, StateArrays
from .table import make_oracle


class Valiant(Routing):
    """`valiant`: minimal to a random intermediate router, then minimal to the destination."""

    name = "valiant"

    def __init__(self, net: Network, vcs: int | None = None, distances: str = "auto", cache="auto", oracle=None):
        self.oracle = oracle if oracle is not None else make_oracle(net, distances, cache)
        self.max_route_length = 2 * max(self.oracle.diameter, 1)
        super().__init__(net, vcs)

    def inject(self, s, t, occupancy=None, rng=None) -> RouteState:
        s, t = self.check_router(s, "src"), self.check_router(t, "dst")
        if rng is None:
            raise ParameterError("rng: Valiant needs a numpy Generator to draw the intermediate router")
        r = int(rng.integers(self.n))
        if s == t:                      # delivered at the source, no detour
            return RouteState(s, t)
        return RouteState(s, t, inter=r, phase=0)

    def inject_batch(self, s, t, rng: np.random.Generator) -> StateArrays:
        s, t = np.broadcast_arrays(np.asarray(s, dtype=np.int64), np.asarray(t, dtype=np.int64))
        r = rng.integers(self.n, size=s.shape)
        home = s == t
        return StateArrays.make(s, t, inter=np.where(home, NO_ROUTER, r), phase=np.where(home, 1, 0))

    def _route(self, c: int, state: RouteState):
        phase, target = state.target(c)
        if phase == 1 and c == state.dst:
            return (Candidate(EJECT, 0, 0),)
        vc = 0                      # the VC policy sets each candidate's VCs (Routing._expand_vcs)
        ports = np.nonzero(self.oracle.delta(c, target) == -1)[0]
        return tuple(Candidate(int(p), vc, 0) for p in ports)

    def _batch(self, c, states: StateArrays):
        phase = np.where((states.phase == 1) | (c == states.inter), 1, 0)
        target = np.where(phase == 1, states.dst, states.inter)
        eject = (phase == 1) & (c == states.dst)
        idx, port = np.nonzero((self.oracle.delta(c, target) == -1) & ~eject[:, None])
        ej = np.nonzero(eject)[0]
        return (np.concatenate([idx, ej]), np.concatenate([port, np.full(len(ej), EJECT)]),
                np.zeros(len(idx) + len(ej), dtype=np.int64))

    # ---- deadlock-check hooks -----------------------------------------------------------------
    def cdg_state_estimate(self) -> int:
        return 2 * self.n * self.n * self.num_vcs

    def cdg_initial(self, sources):
        """Phase-0 states (c = s, inter = r) for every r; dst is not looked at before r."""
        n = self.n
        s = np.repeat(np.asarray(sources, dtype=np.int64), n)
        r = np.tile(np.arange(n), len(sources))
        return s, StateArrays.make(-1, -1, 0, r, 0)

    def cdg_canonical(self, c, states: StateArrays) -> StateArrays:
        # phase 0 reads (c, inter) only, phase 1 (c, dst) only
        phase1 = states.phase == 1
        return states._replace(src=np.full_like(states.src, -1),
                               dst=np.where(phase1, states.dst, -1),
                               inter=np.where(phase1, NO_ROUTER, states.inter))

    def cdg_expand(self, c, states: StateArrays):
        """A phase-0 state at its intermediate router continues toward every destination."""
        hit = np.nonzero((states.phase == 0) & (c == states.inter))[0]
        parent = np.repeat(hit, self.n)
        dst = np.tile(np.arange(self.n), len(hit))
        keep = dst != c[parent] if len(hit) else np.zeros(0, dtype=bool)
        parent, dst = parent[keep], dst[keep]
        child = StateArrays.make(-1, dst, states.hops[parent], NO_ROUTER, 1, states.turns[parent], states.down[parent])
        return parent, c[parent], child

    def storage_bits(self) -> dict:
        return self.oracle.storage_bits()


class UGAL(Valiant):
    """`ugal`: UGAL-L, minimal or Valiant chosen once at injection from local queue lengths.

    Its routes are Valiant's (r = s gives exactly the minimal ones), so it shares Valiant's
    channel dependency graph and VC needs."""

    name = "ugal"

    def __init__(self, net: Network, vcs: int | None = None, distances: str = "auto", samples: int = 4,
                 threshold: int = 0, cache="auto", oracle=None):
        if not isinstance(samples, (int, np.integer)) or samples < 1:
            raise ParameterError(f"samples={samples!r}: must be an integer >= 1")
        self.samples = int(samples)
        self.threshold = int(threshold)
        super().__init__(net, vcs, distances, cache, oracle)

    def inject(self, s, t, occupancy: Callable[[int], int] | None = None, rng=None) -> RouteState:
        s, t = self.check_router(s, "src"), self.check_router(t, "dst")
        if rng is None:
            raise ParameterError("rng: UGAL needs a numpy Generator to sample intermediate routers")
        occ = occupancy or (lambda port: 0)
        inters = rng.integers(self.n, size=self.samples)
        if s == t:
            return RouteState(s, t)
        o = self.oracle

        def best_queue(target):
            return min(occ(int(p)) for p in np.nonzero(o.delta(s, target) == -1)[0])

        h_min = int(o.dist_of(s, t))
        cost_min = h_min * best_queue(t)
        best = None
        for r in inters.tolist():
            if r == s:
                h, qv = h_min, best_queue(t)
            else:
                h, qv = int(o.dist_of(s, r) + o.dist_of(r, t)), best_queue(r)
            if best is None or h * qv < best[0]:
                best = (h * qv, r)
        if cost_min <= best[0] + self.threshold:
            return RouteState(s, t)
        return RouteState(s, t, inter=best[1], phase=0)

    def inject_batch(self, s, t, rng: np.random.Generator) -> StateArrays:
        """Injection with every occupancy 0 (an idle network): always the minimal path."""
        return StateArrays.make(s, t)
