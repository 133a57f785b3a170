"""The per-hop routing interface shared by the routing functions, the simulator and the RTL.

One call per head flit per router, shaped like a hardware routing unit:

    route(c, state, in_port=-1, in_vc=0) -> tuple[Candidate, ...]

`c` is the current router, `state` the routing fields of the packet header (`RouteState`:
source router, destination router, hops taken so far, and for Valiant/UGAL the intermediate
router and a phase bit), `in_port`/`in_vc` where the flit arrived (-1 = injected here; none of
the routings in this package read them, they are in the signature so that VC policies which do,
e.g. datelines, fit the same interface). The answer is a tuple of candidates
`Candidate(port, vc, priority)` — never empty (Polarized at a dead end, a "corner" of graphs it
does not suit or of a damaged network, escapes to minimal ports: routing_logic.polarized):

  * `port` is an output port of c (0 .. ports(c)-1) or `EJECT` (-1) at the destination;
  * `vc` is the only VC the packet may take on that output (the VC policy decides it);
  * `priority` is the static term of an adaptive choice (Polarized: the penalty by Δμ;
    0 for everything else). Lower is better.

Selection rule (written once here; the simulator and the RTL implement exactly this): the
simulator adds the dynamic occupancy of each candidate, i.e. the credits used on (port, vc) of
the output, and takes the candidate with the smallest `occupancy + priority`; ties go to the
lowest port, then the lowest VC. `select()` below is the reference implementation. Candidates
are always returned sorted by (port, vc).

Source-side decisions happen once, at injection, in

    inject(s, t, occupancy=None, rng=None) -> RouteState

which receives `occupancy(port) -> int` (credits used on that output port of s, summed over
its VCs) and a `numpy.random.Generator`. Valiant draws its intermediate router there, UGAL-L
compares queue-weighted path lengths there; MIN and Polarized only fill in s and t. Everything is
deterministic given the generator.

After the packet leaves c through `port`, the header becomes `advance(c, state, port)`: hops + 1,
and the phase bit set once the intermediate router has been reached.

VC policy: hop-indexed, `vc = min(hops, num_vcs - 1)` (`HopVC`). With enough VCs every hop
climbs to a higher VC and the channel dependency graph is acyclic by construction; with fewer,
the last VC is shared by the tail of long routes and `routing_logic.deadlock` decides.

Batched forms for the simulator: `candidates_batch(c, states)` returns the candidates of many
head flits at once as parallel arrays, in the same order as `route()` would; tables such as the
(router, destination) minimal-port masks are precomputed where that is cheap.

`Routing.check_router(r)` raises `ParameterError` for a router id out of range.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, NamedTuple

import numpy as np

from topologies.errors import ParameterError
from topologies.network import Network

EJECT = -1          # Candidate.port at the destination router
NO_ROUTER = -1      # RouteState.inter when there is no intermediate router


class Candidate(NamedTuple):
    port: int       # output port, or EJECT
    vc: int         # VC on that output
    priority: int   # static priority term (lower is better); the simulator adds occupancy


@dataclass(frozen=True)
class RouteState:
    """The routing fields of a packet header."""
    src: int                 # source router s
    dst: int                 # destination router t
    hops: int = 0            # hops taken so far (0 at the source router)
    inter: int = NO_ROUTER   # Valiant/UGAL intermediate router, NO_ROUTER if none
    phase: int = 1           # 0 = heading to `inter`, 1 = heading to `dst`

    def target(self, c: int) -> tuple[int, int]:
        """(phase, router the packet heads for) as seen at router c."""
        phase = 1 if self.phase or c == self.inter else 0
        return phase, (self.dst if phase else self.inter)


class StateArrays(NamedTuple):
    """Many RouteStates as parallel int64 arrays (batched API)."""
    src: np.ndarray
    dst: np.ndarray
    hops: np.ndarray
    inter: np.ndarray
    phase: np.ndarray

    @classmethod
    def make(cls, src, dst, hops=0, inter=NO_ROUTER, phase=1) -> "StateArrays":
        arrs = np.broadcast_arrays(*(np.asarray(v, dtype=np.int64) for v in (src, dst, hops, inter, phase)))
        return cls(*(np.ascontiguousarray(a).ravel() for a in arrs))

    def __getitem__(self, i):
        if isinstance(i, (int, np.integer)):
            return RouteState(*(int(a[i]) for a in self))
        return StateArrays(*(a[i] for a in self))


@dataclass(frozen=True)
class HopVC:
    """Hop-indexed VC classes (docs/microarchitecture.md): a packet that has taken h hops may use
    the VCs of class c = min(h, C-1), C = min(num_vcs, classes); class c owns VCs
    c·k .. c·k+k-1 with k = num_vcs // C, and the last class also the num_vcs mod C leftovers.
    With num_vcs >= the routing's proven route length, classes rise strictly along every route
    and the channel dependency graph is acyclic by construction; with fewer, every class has
    one VC (vc = min(h, num_vcs-1)) and `routing_logic.deadlock` decides."""
    num_vcs: int
    classes: int | None = None

    def __post_init__(self):
        if not isinstance(self.num_vcs, (int, np.integer)) or self.num_vcs < 1:
            raise ParameterError(f"vcs={self.num_vcs!r}: must be an integer >= 1")

    @property
    def num_classes(self) -> int:
        return int(min(self.num_vcs, self.classes or self.num_vcs))

    def vc_range(self, hops):
        """(first, last + 1) VC of the class of a packet that has taken `hops` hops."""
        C = self.num_classes
        k = self.num_vcs // C
        c = np.minimum(hops, C - 1)
        lo = c * k
        hi = np.where(c == C - 1, self.num_vcs, lo + k)
        return lo, hi

    def vc(self, hops):
        """First VC of the class (the only one when num_vcs <= classes)."""
        return self.vc_range(hops)[0]

    def describe(self) -> str:
        C = self.num_classes
        k = self.num_vcs // C
        if k == 1 and C == self.num_vcs:
            return f"hop-indexed, vc = min(hops, {self.num_vcs - 1})"
        return f"hop-indexed classes: {C} classes of {k} VCs (last class {self.num_vcs - k * (C - 1)})"


def select(candidates, occupancy: Callable[[int, int], int]) -> Candidate:
    """Reference selection: min occupancy(port, vc) + priority; ties -> lowest port, then lowest VC."""
    best = None
    for cand in candidates:
        occ = 0 if cand.port == EJECT else occupancy(cand.port, cand.vc)
        key = (occ + cand.priority, cand.port, cand.vc)
        if best is None or key < best[0]:
            best = (key, cand)
    if best is None:
        raise ValueError("select: no candidates")
    return best[1]


class Routing:
    """Base class of every routing function; subclasses implement `_route` and `_batch`."""

    name = "routing"
    uses_source = False        # does route() read state.src? (Polarized does)
    max_route_length = None    # proven bound on route length in hops (None: unknown)

    def __init__(self, net: Network, vcs: int | None = None):
        self.net = net
        self.n = net.num_routers
        self.vc_policy = HopVC(self.default_vcs() if vcs is None else vcs, classes=self.default_vcs())
        self._peer_router, self._peer_port = net.peer_table()

    # ---- VCs --------------------------------------------------------------------------------
    def default_vcs(self) -> int:
        """VCs that make the hop-indexed policy deadlock-free by construction."""
        return int(self.max_route_length) if self.max_route_length else 1

    @property
    def num_vcs(self) -> int:
        return self.vc_policy.num_vcs

    # ---- the per-hop interface --------------------------------------------------------------
    def check_router(self, r, what: str = "router") -> int:
        if not isinstance(r, (int, np.integer)) or not 0 <= r < self.n:
            raise ParameterError(f"{what}={r!r}: must be a router id in 0..{self.n - 1}")
        return int(r)

    def inject(self, s: int, t: int, occupancy: Callable[[int], int] | None = None,
               rng: np.random.Generator | None = None) -> RouteState:
        """Routing state at injection (source-side decisions live here)."""
        return RouteState(self.check_router(s, "src"), self.check_router(t, "dst"))

    def route(self, c: int, state: RouteState, in_port: int = -1, in_vc: int = 0) -> tuple[Candidate, ...]:
        self.check_router(c)
        self.check_router(state.src, "src")
        self.check_router(state.dst, "dst")
        if state.inter != NO_ROUTER:
            self.check_router(state.inter, "inter")
        return self._expand_vcs(self._route(int(c), state), state.hops)

    def _expand_vcs(self, cands, hops) -> tuple[Candidate, ...]:
        """Each network candidate on every VC of the packet's class (the routings name the first)."""
        lo, hi = (int(v) for v in self.vc_policy.vc_range(hops))
        if hi - lo == 1:
            return tuple(cands)
        return tuple(Candidate(c.port, w, c.priority) if c.port != EJECT else c
                     for c in cands for w in ((lo + i for i in range(hi - lo)) if c.port != EJECT else (0,)))

    def _route(self, c: int, state: RouteState) -> tuple[Candidate, ...]:
        raise NotImplementedError

    def advance(self, c: int, state: RouteState, port: int) -> RouteState:
        """Header after leaving router c through `port`."""
        phase, _ = state.target(c)
        return replace(state, hops=state.hops + 1, phase=phase)

    def neighbor(self, c: int, port: int) -> int:
        """Router at the far end of `port` of c (-1 if unconnected)."""
        return int(self._peer_router[self.net.offsets[c] + port])

    # ---- batched interface ------------------------------------------------------------------
    def candidates_batch(self, c, states: StateArrays):
        """Candidates of many head flits: arrays (index into c/states, port, vc, priority),
        grouped by index and sorted by (port, vc) within a group, same as route()."""
        c = np.asarray(c, dtype=np.int64).ravel()
        states = _broadcast(states, len(c))
        idx, port, prio = self._batch(c, states)
        lo, hi = self.vc_policy.vc_range(states.hops[idx])
        width = np.where(port == EJECT, 1, hi - lo)
        rep = np.repeat(np.arange(len(idx)), width)
        offset = np.arange(len(rep)) - np.repeat(np.cumsum(width) - width, width)
        idx, port, prio = idx[rep], port[rep], prio[rep]
        vc = np.where(port == EJECT, 0, lo[rep] + offset)
        order = np.lexsort((vc, port, idx))
        return idx[order], port[order], vc[order], prio[order]

    def _batch(self, c: np.ndarray, states: StateArrays):
        """(index, port, priority) arrays; default: loop over route() (subclasses vectorize)."""
        out = [], [], []
        for i in range(len(c)):
            for cand in self._route(int(c[i]), states[i]):
                out[0].append(i)
                out[1].append(cand.port)
                out[2].append(cand.priority)
        return tuple(np.asarray(v, dtype=np.int64) for v in out)

    def advance_batch(self, c, states: StateArrays) -> StateArrays:
        c = np.asarray(c, dtype=np.int64).ravel()
        states = _broadcast(states, len(c))
        phase = np.where((states.phase == 1) | (c == states.inter), 1, 0)
        return states._replace(hops=states.hops + 1, phase=phase)

    def inject_batch(self, s, t, rng: np.random.Generator | None = None) -> StateArrays:
        """inject() for many packets on an idle network (every occupancy 0)."""
        return StateArrays.make(s, t)

    # ---- deadlock-check hooks (routing_logic.deadlock) --------------------------------------
    # The checker enumerates abstract routing states: header fields route() does not read are
    # blanked (-1) so that equivalent states merge, and hops are capped at num_vcs - 1 (they
    # only choose the VC).
    def cdg_state_estimate(self) -> int:
        """Upper bound on the states an exact deadlock check enumerates (to decide whether to try)."""
        n = self.n
        return n * n * self.num_vcs * (n if self.uses_source else 1)

    def cdg_initial(self, sources):
        """(c, states) at injection for every source in `sources` and every destination t != s."""
        n = self.n
        s = np.repeat(np.asarray(sources, dtype=np.int64), n)
        t = np.tile(np.arange(n), len(sources))
        keep = s != t
        return s[keep], StateArrays.make(s[keep], t[keep])

    def cdg_canonical(self, c, states: StateArrays) -> StateArrays:
        if self.uses_source:
            return states
        return states._replace(src=np.full_like(states.src, -1))

    def cdg_expand(self, c, states: StateArrays):
        """Zero-hop continuations (parent index, router, child states); states with children
        have no candidates of their own. Default: none."""
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, StateArrays.make(empty, empty)

    def storage_bits(self) -> dict:
        """Bits of routing state per router for this unit (breakdown + 'total')."""
        raise NotImplementedError

    def describe(self) -> str:
        return f"{self.name} on {self.net.name}, {self.vc_policy.describe()}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()}>"


def bits(n: int) -> int:
    """Bits to encode n distinct values (at least 1)."""
    return max(1, int(n - 1).bit_length())


def walk_idle(routing: Routing, s, t, rng: np.random.Generator | None = None, limit: int = 64):
    """Follow many packets through an idle network (every occupancy 0, the `select` rule).

    Returns (hops, paths): hops per packet (-1 if it did not eject within `limit` hops) and the
    (len(s), limit + 1) array of routers visited (-1 after ejection).
    """
    s = np.asarray(s, dtype=np.int64).ravel()
    t = np.asarray(t, dtype=np.int64).ravel()
    states = routing.inject_batch(s, t, rng)
    c = s.copy()
    hops = np.full(len(s), -1, dtype=np.int64)
    paths = np.full((len(s), limit + 1), -1, dtype=np.int64)
    paths[:, 0] = s
    active = np.arange(len(s))
    offsets = routing.net.offsets
    for h in range(limit + 1):
        if not len(active):
            break
        idx, port, vc, prio = routing.candidates_batch(c[active], states[active])
        # per packet: smallest priority, then lowest port, then lowest VC (candidates are sorted)
        order = np.lexsort((vc, port, prio, idx))
        idx, port, vc = idx[order], port[order], vc[order]
        first = np.concatenate([[True], idx[1:] != idx[:-1]])
        if first.sum() != len(active):
            raise RuntimeError(f"{routing.name}: a packet has no candidate")
        port = port[first]
        done = port == EJECT
        hops[active[done]] = h
        go = ~done
        moving = active[go]
        g = offsets[c[moving]] + port[go]
        states_m = routing.advance_batch(c[moving], states[moving])
        c[moving] = routing._peer_router[g]
        states = _scatter(states, moving, states_m)
        if h < limit:
            paths[moving, h + 1] = c[moving]
        active = moving
    return hops, paths


def _broadcast(states: StateArrays, n: int) -> StateArrays:
    if len(states.src) == n:
        return states
    return StateArrays(*(np.broadcast_to(a, (n,)) for a in states))


def _scatter(states: StateArrays, where, sub: StateArrays) -> StateArrays:
    out = StateArrays(*(a.copy() for a in states))
    for a, b in zip(out, sub):
        a[where] = b
    return out
