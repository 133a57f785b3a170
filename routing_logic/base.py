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
the phase bit set once the intermediate router has been reached, and the turn fields below.

VC policies (`VC_POLICIES`; `make_routing(..., vc_policy=)`), both VC *classes* over router ids:

  * `hops` (`HopVC`, the default): class = min(hops, C - 1). With C = the longest route, every
    hop climbs a class and the channel dependency graph is acyclic by construction; with fewer,
    the last class is shared by the tail of long routes and `routing_logic.deadlock` decides.
  * `turns` (`TurnVC`): a hop r -> m is *up* if m > r, *down* if m < r; the class rises by one
    only at a down-then-up turn, class = min(turns, C - 1). Within a class a route is up* down*,
    so the dependencies inside a class only go up-up, up-down or down-down: ids strictly rise,
    then strictly fall, and no dependency returns to a channel (the argument of up*/down*,
    Schroeder et al., Autonet, 1991, over a total order of the routers). Two down-then-up turns
    need a hop between them, so an h-hop route makes at most floor(h / 2): C = floor(L / 2) + 1
    classes for routes of at most L hops. PolarStar's minimal routes (L = 3) need 2 VCs instead
    of 3; Valiant's (L = 2D) D + 1 instead of 2D. The header carries `turns` and `down` (the last
    hop went down); the RTL reads the same from the input VC's class and the input port's
    neighbour (`class_step`), without header bits.

Batched forms for the simulator: `candidates_batch(c, states)` returns the candidates of many
head flits at once as parallel arrays, in the same order as `route()` would; tables such as the
(router, destination) minimal-port masks are precomputed where that is cheap.

`Routing.check_router(r)` raises `ParameterError` for a router id out of range.
"""
from __future__ import annotations

import copy
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
    turns: int = 0           # down-then-up turns taken (the `turns` VC policy's class)
    down: int = 0            # 1 if the last hop went to a lower router id

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
    turns: np.ndarray
    down: np.ndarray

    @classmethod
    def make(cls, src, dst, hops=0, inter=NO_ROUTER, phase=1, turns=0, down=0) -> "StateArrays":
        arrs = np.broadcast_arrays(*(np.asarray(v, dtype=np.int64) for v in (src, dst, hops, inter, phase, turns, down)))
        return cls(*(np.ascontiguousarray(a).ravel() for a in arrs))

    @classmethod
    def of(cls, state: RouteState) -> "StateArrays":
        """One packet's header as arrays of length 1."""
        return cls.make(**{f: getattr(state, f) for f in cls._fields})

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
    name = "hops"
    spare_first = False     # where the num_vcs mod C leftover VCs go: the last class (False) or class 0

    def __post_init__(self):
        if not isinstance(self.num_vcs, (int, np.integer)) or self.num_vcs < 1:
            raise ParameterError(f"vcs={self.num_vcs!r}: must be an integer >= 1")

    @staticmethod
    def classes_for(route_length: int) -> int:
        """Classes that make every route of at most `route_length` hops climb (acyclic CDG)."""
        return max(1, int(route_length))

    @property
    def num_classes(self) -> int:
        return int(min(self.num_vcs, self.classes or self.num_vcs))

    def counter(self, c, states: StateArrays, nxt):
        """Uncapped class of the hop c -> nxt (arrays) for packets in `states`."""
        return states.hops

    def after_hop(self, c, states: StateArrays, nxt):
        """(turns, down) after the hop c -> nxt."""
        return states.turns, states.down

    @staticmethod
    def class_step(prev: int, c: int, nxt: int) -> int:
        """Classes a head climbs at router c when it came from router prev and leaves to nxt:
        the class of its next hop is min(class of its input VC + step, C - 1) (0 when injected)."""
        return 1

    @staticmethod
    def class_step_arrays(prev, c, nxt) -> np.ndarray:
        """`class_step` of every (prev, c, nxt) of three equal-shape arrays, as int64."""
        return np.ones(np.shape(c), dtype=np.int64)

    def canonical(self, states: StateArrays) -> StateArrays:
        """Blank what does not select a VC (the deadlock check merges equal states)."""
        zero = np.zeros_like(states.turns)
        return states._replace(hops=np.minimum(states.hops, self.num_classes - 1), turns=zero, down=zero)

    def vc_range(self, counter):
        """(first, last + 1) VC of class min(counter, C - 1): k = num_vcs // C VCs per class, and
        the leftovers to the last class (hop classes: it carries the tail of every long route)
        or to class 0 (turn classes: most hops are taken before the first turn)."""
        C = self.num_classes
        k = self.num_vcs // C
        x = self.num_vcs - k * C
        c = np.minimum(counter, C - 1)
        if self.spare_first:
            lo = np.where(c == 0, 0, c * k + x)
            return lo, c * k + x + k
        lo = c * k
        return lo, np.where(c == C - 1, self.num_vcs, lo + k)

    def for_vcs(self, vcs: int, classes: int) -> "HopVC":
        """The same policy over `vcs` VCs in `classes` classes (what a run or an RTL build uses:
        C is capped at V where a lone router has fewer VCs than classes)."""
        return replace(self, num_vcs=vcs, classes=classes)

    def class_ranges(self) -> list[tuple[int, int]]:
        """(first, last + 1) VC of each class 0..C-1."""
        return [tuple(int(v[0]) for v in self.vc_range(np.array([c]))) for c in range(self.num_classes)]

    def vc_class_table(self) -> list[int]:
        """The class of each VC 0..num_vcs-1 (the simulator and the RTL read this table)."""
        out = [0] * self.num_vcs
        for c, (lo, hi) in enumerate(self.class_ranges()):
            out[lo:hi] = [c] * (hi - lo)
        return out

    def vc(self, counter):
        """First VC of the class (the only one when num_vcs <= classes)."""
        return self.vc_range(counter)[0]

    def describe(self) -> str:
        C = self.num_classes
        k = self.num_vcs // C
        kind, what = ("turn", "down-then-up turns") if self.name == "turns" else ("hop", "hops")
        if k == 1 and C == self.num_vcs:
            return f"{kind}-indexed, vc = min({what}, {self.num_vcs - 1})"
        which = "first" if self.spare_first else "last"
        return f"{kind}-indexed classes: {C} classes of {k} VCs ({which} class {self.num_vcs - k * (C - 1)})"


@dataclass(frozen=True)
class TurnVC(HopVC):
    """Turn-indexed VC classes (module docstring): the class rises only at a down-then-up turn."""
    name = "turns"
    spare_first = True

    @staticmethod
    def classes_for(route_length: int) -> int:
        return max(1, int(route_length)) // 2 + 1

    def counter(self, c, states: StateArrays, nxt):
        return states.turns + (states.down & (np.asarray(nxt) > c))

    def after_hop(self, c, states: StateArrays, nxt):
        nxt = np.asarray(nxt)
        return states.turns + (states.down & (nxt > c)), (nxt < c).astype(np.int64)

    @staticmethod
    def class_step(prev: int, c: int, nxt: int) -> int:
        return int(prev > c and nxt > c)

    @staticmethod
    def class_step_arrays(prev, c, nxt) -> np.ndarray:
        return ((np.asarray(prev) > c) & (np.asarray(nxt) > c)).astype(np.int64)

    def canonical(self, states: StateArrays) -> StateArrays:
        return states._replace(hops=np.zeros_like(states.hops), turns=np.minimum(states.turns, self.num_classes - 1))


VC_POLICIES = {"hops": HopVC, "turns": TurnVC}


def vc_policy_class(name, param: str = "vc_policy") -> type[HopVC]:
    """The VC policy class called `name`; a one-line ParameterError naming `param` otherwise."""
    cls = VC_POLICIES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ParameterError(f"{param}={name!r}: unknown; allowed: {', '.join(VC_POLICIES)}")
    return cls


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
        self._vcs_arg = vcs
        self.set_vc_policy("hops")
        self._peer_router, self._peer_port = net.peer_table()

    # ---- VCs --------------------------------------------------------------------------------
    def set_vc_policy(self, name: str) -> None:
        """Use VC policy `name` (VC_POLICIES); V stays as given, or becomes its default_vcs()."""
        cls = vc_policy_class(name)
        need = cls.classes_for(self.max_route_length) if self.max_route_length else 1
        self.vc_policy = cls(need if self._vcs_arg is None else self._vcs_arg, classes=need)

    def with_vcs(self, vcs: int) -> "Routing":
        """A copy with V = `vcs` under the same VC policy, sharing every table (V enters a routing
        only through its VC policy)."""
        r = copy.copy(self)
        r._vcs_arg = vcs
        r.set_vc_policy(self.vc_policy.name)
        return r

    def class_steps(self, dtype=np.int64, chunk: int = 4096) -> np.ndarray:
        """(routers, R, R) `dtype`, R = the most network ports of a router: the VC policy's class
        step of a head that enters router r on network port i and leaves on network port o (0
        where either port is unconnected). The simulator and the RTL derive a head's class from
        this and the class of its input VC, with no header bits (`HopVC.class_step`, `TurnVC.class_step`).
        Computed `chunk` routers at a time, so that the temporaries stay small on large networks."""
        n, R = self.n, int(self.net.ports.max())
        nbr = np.full((n, R), -1, dtype=np.int64)
        rows = self.net.port_router.astype(np.int64)
        nbr[rows, np.arange(len(rows)) - self.net.offsets[rows]] = self._peer_router
        out = np.zeros((n, R, R), dtype=dtype)
        for r0 in range(0, n, chunk):
            nb = nbr[r0:r0 + chunk]
            r, i, o = np.nonzero((nb[:, :, None] >= 0) & (nb[:, None, :] >= 0))    # connected port pairs
            out[r0 + r, i, o] = self.vc_policy.class_step_arrays(nb[r, i], r0 + r, nb[r, o])
        return out

    def default_vcs(self) -> int:
        """VCs that make the VC policy deadlock-free by construction (its classes for the
        longest route)."""
        return int(self.vc_policy.classes)

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
        return self._expand_vcs(int(c), self._route(int(c), state), state)

    def _expand_vcs(self, c: int, cands, state: RouteState) -> tuple[Candidate, ...]:
        """Each network candidate on every VC of its hop's class (the VC policy's; the VC the
        routings name is replaced)."""
        st = StateArrays.of(state)
        out = []
        for cand in cands:
            if cand.port == EJECT:
                out.append(cand)
                continue
            nxt = np.array([self.neighbor(c, cand.port)])
            lo, hi = (int(v[0]) for v in self.vc_policy.vc_range(self.vc_policy.counter(c, st, nxt)))
            out.extend(Candidate(cand.port, w, cand.priority) for w in range(lo, hi))
        return tuple(out)

    def _route(self, c: int, state: RouteState) -> tuple[Candidate, ...]:
        raise NotImplementedError

    def advance(self, c: int, state: RouteState, port: int) -> RouteState:
        """Header after leaving router c through `port`."""
        phase, _ = state.target(c)
        return replace(state, hops=state.hops + 1, phase=phase, **self._turns_after(c, state, port))

    def _turns_after(self, c: int, state: RouteState, port: int) -> dict:
        """The turn fields after the hop from c through `port` (scalar form of VCPolicy.after_hop)."""
        st = StateArrays.of(state)
        turns, down = self.vc_policy.after_hop(c, st, np.array([self.neighbor(c, port)]))
        return {"turns": int(turns[0]), "down": int(down[0])}

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
        ci = c[idx]
        nxt = np.where(port == EJECT, -1, self._peer_router[self.net.offsets[ci] + np.maximum(port, 0)])
        lo, hi = self.vc_policy.vc_range(self.vc_policy.counter(ci, states[idx], nxt))
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

    def advance_batch(self, c, states: StateArrays, nxt) -> StateArrays:
        """advance() for many packets; nxt: the router each one moves to."""
        c = np.asarray(c, dtype=np.int64).ravel()
        states = _broadcast(states, len(c))
        phase = np.where((states.phase == 1) | (c == states.inter), 1, 0)
        return self._hop(c, states, nxt)._replace(phase=phase)

    def _hop(self, c, states: StateArrays, nxt) -> StateArrays:
        """hops + 1 and the turn fields after the hops c -> nxt."""
        turns, down = self.vc_policy.after_hop(c, states, np.asarray(nxt, dtype=np.int64).ravel())
        return states._replace(hops=states.hops + 1, turns=np.asarray(turns, dtype=np.int64),
                               down=np.asarray(down, dtype=np.int64))

    def inject_batch(self, s, t, rng: np.random.Generator | None = None) -> StateArrays:
        """inject() for many packets on an idle network (every occupancy 0)."""
        return StateArrays.make(s, t)

    # ---- deadlock-check hooks (routing_logic.deadlock) --------------------------------------
    # The checker enumerates abstract routing states: header fields route() does not read are
    # blanked (-1) so that equivalent states merge, and the VC policy blanks what does not choose
    # a VC (hops capped at C - 1 for `hops`; turns capped, hops blanked for `turns`).
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
        states = self.vc_policy.canonical(states)
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
        states_m = routing.advance_batch(c[moving], states[moving], routing._peer_router[g])
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
