"""Host-switch graphs: h-ASPL, its bounds, and simulated annealing (Yasudo et al., TPDS; "host-switch paper").

A host-switch graph has n hosts (degree 1) and m switches (degree ≤ r); hosts on switches s ≠ t
are ℓ(s, t) + 2 hops apart, two hosts on one switch 2 hops (§2.1). With w_s hosts on switch s,
    h-ASPL = 2 + Σ_{s≠t} ℓ(s, t)·w_s·w_t / (n(n−1))         (§4.2.1)
so only the switch graph and the host counts matter; hosts are interchangeable.

* `lower_bound(n, r)`: Theorem 2 (single-source h-ASPL of a complete host-switch tree),
  D⁻ − α/(n−1) with D⁻ = ⌈log_{r−1}(n−1)⌉ + 1 and α = (r−1)^{D⁻−2} − ⌈(n−1−(r−1)^{D⁻−2})/(r−2)⌉ (§2.2).
* `continuous_moore_bound(n, m, r)`: eq. (3) with the switch degree K = r − n/m allowed to be
  rational (§4.2.4), and `optimal_switches(n, r)` = m_opt, its minimizer (Observation 1).
* `anneal(...)`: simulated annealing with the swap operation (§4.2.2) or the 2-neighbor swing
  (§4.2.3: SWING(a, b, c) = {a,b},{c,h} -> {a,c},{b,h}; if rejected, SWING(d, c, b), which nets a
  swap). Each candidate is evaluated exactly by a bit-parallel all-sources BFS over the switches
  in a numba kernel (host counts as bit planes, popcount per plane); the SA acceptance threshold
  is drawn first, so evaluation stops as soon as the partial sum plus (level + 1) × the
  unreached host pairs proves the candidate will be rejected.

The edge-list output is Graph Golf's order/radix format: a first line `n m r`, then one edge per
line, hosts numbered 0..n−1 and switches n..n+m−1; `HostSwitchGraph.to_network()` gives the switches as a `Network` whose
endpoints are the host counts.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from .errors import ParameterError, check_seed

try:  # numba is a dependency; the pure-NumPy checker below does not need it
    import numba
    from numba import njit, types
    from numba.extending import intrinsic
except ImportError:  # pragma: no cover
    numba = None


# ---- bounds ----------------------------------------------------------------------------------------

def check_params(n, r, m=None) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 3:
        raise ParameterError(f"hosts={n!r}: must be an integer >= 3")
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 3:
        raise ParameterError(f"radix={r!r}: must be an integer >= 3")
    if m is not None:
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise ParameterError(f"switches={m!r}: must be an integer >= 1")
        cap = m * r - 2 * (m - 1)
        if n > cap:
            lo = math.ceil((n - 2) / (r - 2))
            raise ParameterError(f"switches={m}: {m} switches of radix {r} connect at most {cap} hosts (Lemma 1); "
                                 f"need switches >= {lo}")


def diameter_lower_bound(n: int, r: int) -> int:
    """Corollary 1: ⌈log_{r−1}(n−1)⌉ + 1 (integer arithmetic)."""
    check_params(n, r)
    e, p = 0, 1
    while p < n - 1:
        p *= r - 1
        e += 1
    return e + 1


def lower_bound(n: int, r: int) -> float:
    """Theorem 2 lower bound on the h-ASPL of any host-switch graph with n hosts and radix r."""
    D = diameter_lower_bound(n, r)
    if n == (r - 1) ** (D - 1) + 1:
        return float(D)
    base = (r - 1) ** (D - 2)
    alpha = base - -(-(n - 1 - base) // (r - 2))
    return D - alpha / (n - 1)


def moore_aspl(N: float, K: float) -> float:
    """Moore bound on the ASPL of a K-regular graph on N vertices, K allowed rational (§4.2.4)."""
    if N <= 1:
        return 0.0
    if K >= N - 1:
        return 1.0
    if K <= 1:
        return math.inf
    remaining = N - 1
    total = 0.0
    layer = K
    i = 1
    while remaining > 1e-12:
        take = min(layer, remaining)
        total += i * take
        remaining -= take
        layer *= K - 1
        i += 1
        if i > 10_000:
            return math.inf
    return total / (N - 1)


def continuous_moore_bound(n: int, m: int, r: int) -> float:
    """Eq. (3) with K = r − n/m rational: M(m, K)·(mn − n)/(mn − m) + 2 (∞ when infeasible)."""
    if m == 1:
        return 2.0 if n <= r else math.inf
    K = r - n / m
    M = moore_aspl(m, K)
    if not math.isfinite(M):
        return math.inf
    return M * (m * n - n) / (m * n - m) + 2


def optimal_switches(n: int, r: int) -> int:
    """m_opt: the m minimizing the continuous Moore bound (Observation 1)."""
    check_params(n, r)
    best = None
    for m in range(1, 2 * n + 2):
        b = continuous_moore_bound(n, m, r)
        if best is None or b < best[0] - 1e-15:
            best = (b, m)
    return best[1]


# ---- the graph ------------------------------------------------------------------------------------

@dataclass
class HostSwitchGraph:
    n: int                      # hosts
    r: int                      # radix (ports per switch)
    hosts: np.ndarray           # (m,) hosts on each switch
    edges: np.ndarray           # (E, 2) switch-switch edges
    info: dict = field(default_factory=dict)

    @property
    def m(self) -> int:
        return len(self.hosts)

    def degrees(self) -> np.ndarray:
        return np.bincount(self.edges.ravel(), minlength=self.m) + self.hosts

    def validate(self) -> None:
        if int(self.hosts.sum()) != self.n or (self.hosts < 0).any():
            raise ParameterError("hosts: host counts must be >= 0 and sum to n")
        if (self.degrees() > self.r).any():
            raise ParameterError(f"radix={self.r}: a switch uses more than r ports")
        e = np.sort(self.edges, axis=1)
        if (e[:, 0] == e[:, 1]).any() or len(np.unique(e, axis=0)) != len(e):
            raise ParameterError("edges: the switch graph must be simple")

    def to_network(self):
        from .network import Network

        return Network.from_edges(f"HostSwitch(n={self.n}, m={self.m}, r={self.r})", self.m, self.edges,
                                  endpoints=self.hosts, attrs={"family": "hostswitch", "radix": self.r})

    def stats(self) -> dict:
        """h-ASPL / h-diameter by the NumPy bit-parallel BFS of distances.py (independent of the SA kernel)."""
        from .distances import host_distance_stats

        return host_distance_stats(self.to_network())

    def edge_list(self) -> list[tuple[int, int]]:
        """Hosts 0..n−1, switches n..n+m−1; host edges first (hosts in switch order), then switch edges."""
        owner = np.repeat(np.arange(self.m), self.hosts)
        out = [(h, self.n + int(s)) for h, s in enumerate(owner)]
        out += [(self.n + int(a), self.n + int(b)) for a, b in self.edges]
        return out

    def write_edge_list(self, path: str) -> None:
        """Graph Golf's host-switch format: a first line `n m r` (hosts, switches, radix), then one
        edge `a b` per line, hosts 0..n−1 and switches n..n+m−1."""
        with open(path, "w") as f:
            f.write(f"{self.n} {self.m} {self.r}\n")
            for a, b in self.edge_list():
                f.write(f"{a} {b}\n")


def use_free_ports(free: np.ndarray, adj: list, edges: list, rng) -> None:
    """Rewire so that no two free switch ports that could carry a link stay unused (annealing keeps
    every switch's port count, so a port left free here would stay free for the whole run). Two
    free ports u, v (u = v: one switch with two) not yet linked become the link (u, v); otherwise
    a link (a, b) with a, b not in {u, v} and not adjacent to them becomes (u, a), (v, b), which
    keeps the graph simple and connected. `free`, `adj` and `edges` are updated in place."""
    while free.sum() >= 2:
        open_ = [int(v) for v in rng.permutation(np.nonzero(free > 0)[0])]
        pairs = [(u, v) for i, u in enumerate(open_) for v in open_[i + (free[u] < 2):]]
        for u, v in pairs:
            if u != v and v not in adj[u]:
                adj[u].add(v), adj[v].add(u)
                edges.append((u, v))
                break
            k = _takeover(edges, adj, u, v, rng)
            if k is not None:
                a, b = edges[k]
                adj[a].discard(b), adj[b].discard(a)
                edges[k] = (u, a)
                edges.append((v, b))
                adj[u].add(a), adj[a].add(u), adj[v].add(b), adj[b].add(v)
                break
        else:
            return                                  # no rewiring can use the free ports
        free[u] -= 1
        free[v] -= 1


def _takeover(edges: list, adj: list, u: int, v: int, rng):
    """Index of a link (a, b), oriented in place, that can become (u, a), (v, b); or None."""
    for k in rng.permutation(len(edges)):
        a, b = edges[k]
        for a, b in ((a, b), (b, a)):
            if a not in (u, v) and b not in (u, v) and a not in adj[u] and b not in adj[v]:
                edges[k] = (a, b)
                return int(k)
    return None


def _link(adj: list, free: np.ndarray, edges: list, u: int, v: int) -> None:
    """Switches u and v linked: a free port of each taken."""
    adj[u].add(v), adj[v].add(u)
    free[u] -= 1
    free[v] -= 1
    edges.append((u, v))


def random_host_switch_graph(n: int, m: int, r: int, seed: int = 0, tries: int = 100) -> HostSwitchGraph:
    """Hosts spread evenly, then a random simple switch graph on the free ports (greedy random
    pairing; `use_free_ports` then rewires until at most one usable port is left free)."""
    check_params(n, r, m)
    rng = np.random.default_rng(check_seed(seed))
    for _ in range(tries):
        hosts = np.full(m, n // m, dtype=np.int64)
        hosts[rng.permutation(m)[: n % m]] += 1
        if (hosts > r).any():
            raise ParameterError(f"switches={m}: too few switches for {n} hosts of radix {r}")
        free = r - hosts
        adj = [set() for _ in range(m)]
        edges = []
        # connect a random spanning tree first (hosts' switches must be connected), then fill ports
        order = rng.permutation(m)
        ok = True
        for i in range(1, m):
            v = int(order[i])
            cand = [int(u) for u in order[:i] if free[u] > 0]
            if not cand or free[v] <= 0:
                ok = False
                break
            _link(adj, free, edges, cand[rng.integers(len(cand))], v)
        if not ok:
            continue
        stuck = np.zeros(m, dtype=bool)         # free ports but every open switch already adjacent
        while True:
            open_ = np.nonzero((free > 0) & ~stuck)[0]
            if len(open_) < 2:
                break
            v = int(open_[np.argmax(free[open_] + rng.random(len(open_)))])
            cand = [int(u) for u in open_ if u != v and u not in adj[v]]
            if not cand:
                stuck[v] = True
                continue
            _link(adj, free, edges, cand[rng.integers(len(cand))], v)
        use_free_ports(free, adj, edges, rng)
        return HostSwitchGraph(n, r, hosts, np.array(edges, dtype=np.int64).reshape(-1, 2))
    raise ParameterError(f"switches={m}: could not build a connected switch graph with radix {r}")


# ---- numba kernel ---------------------------------------------------------------------------------

if numba is not None:
    @intrinsic
    def _popcount(typingctx, x):
        sig = types.uint64(types.uint64)

        def codegen(context, builder, signature, args):
            return builder.ctpop(args[0])
        return sig, codegen

    @njit(cache=True)
    def _evaluate(adj, deg, w, m, words, B, reach, frontier, nxt, planes, limit):
        """Σ_{s≠t} ℓ(s,t) w_s w_t by all-sources bit-parallel BFS; -1 if provably > limit, -2 if disconnected."""
        one = np.uint64(1)
        N = 0
        W2 = 0
        for v in range(m):
            N += w[v]
            W2 += w[v] * w[v]
        target = N * N - W2                  # ordered host pairs on different switches
        for v in range(m):
            for k in range(words):
                reach[v, k] = 0
                frontier[v, k] = 0
            reach[v, v >> 6] = one << np.uint64(v & 63)
            frontier[v, v >> 6] = reach[v, v >> 6]
        for b in range(B):
            for k in range(words):
                planes[b, k] = 0
        for v in range(m):
            for b in range(B):
                if (w[v] >> b) & 1:
                    planes[b, v >> 6] |= one << np.uint64(v & 63)
        S = 0
        reached = 0
        level = 0
        while True:
            level += 1
            anynew = np.uint64(0)
            lvl = 0
            for v in range(m):
                wv = w[v]
                cnt = 0
                for k in range(words):
                    acc = np.uint64(0)
                    for i in range(deg[v]):
                        acc |= frontier[adj[v, i], k]
                    new = acc & ~reach[v, k]
                    nxt[v, k] = new
                    anynew |= new
                    if wv > 0 and new != 0:
                        for b in range(B):
                            cnt += np.int64(_popcount(new & planes[b, k])) << b
                lvl += wv * cnt
            for v in range(m):
                for k in range(words):
                    reach[v, k] |= nxt[v, k]
                    frontier[v, k] = nxt[v, k]
            S += level * lvl
            reached += lvl
            if reached == target:
                return S
            if anynew == 0:
                return -2
            if S + (level + 1) * (target - reached) > limit:
                return -1

    @njit(cache=True)
    def _remove(adj, eid, deg, v, u):
        for i in range(deg[v]):
            if adj[v, i] == u:
                e = eid[v, i]
                last = deg[v] - 1
                adj[v, i] = adj[v, last]
                eid[v, i] = eid[v, last]
                deg[v] = last
                return e
        return -1

    @njit(cache=True)
    def _adjacent(adj, deg, v, u):
        for i in range(deg[v]):
            if adj[v, i] == u:
                return True
        return False

    @njit(cache=True)
    def _rewire(adj, eid, deg, edges, x, y, u, v):
        """Replace edge {x, y} by {u, v} (same edge id)."""
        e = _remove(adj, eid, deg, x, y)
        _remove(adj, eid, deg, y, x)
        adj[u, deg[u]] = v
        eid[u, deg[u]] = e
        deg[u] += 1
        adj[v, deg[v]] = u
        eid[v, deg[v]] = e
        deg[v] += 1
        edges[e, 0] = u
        edges[e, 1] = v

    @njit(cache=True)
    def _swing(adj, eid, deg, edges, w, a, b, c):
        """SWING(a, b, c) (host-switch paper §4.2): edge {a, b} becomes {a, c} and a host moves
        from c to b. SWING(a, c, b) undoes it."""
        _rewire(adj, eid, deg, edges, a, b, a, c)
        w[b] += 1
        w[c] -= 1

    @njit(cache=True)
    def _seed(s):
        np.random.seed(s)

    @njit(cache=True)
    def _anneal(adj, eid, deg, w, edges, m, scratch, schedule, best):
        """Run `steps` SA steps, temperature t0 -> t1 geometrically (h-ASPL units). `scratch`:
        _evaluate's (words, B, reach, frontier, nxt, planes); `schedule`: (scale, S, steps, t0, t1,
        swap_only); `best`: (best_adj, best_deg, best_w, best_S), the arrays updated in place.
        Returns (S, best_S, accepted, evals)."""
        words, B, reach, frontier, nxt, planes = scratch
        scale, S, steps, t0, t1, swap_only = schedule
        best_adj, best_deg, best_w, best_S = best
        E = edges.shape[0]
        accepted = 0
        evals = 0
        big = np.int64(1) << np.int64(62)
        ratio = t1 / t0 if t0 > 0 else 1.0
        for step in range(steps):
            T = t0 * ratio ** (step / max(steps - 1, 1)) * scale
            u = max(np.random.random(), 1e-300)
            limit = S + np.int64(-T * np.log(u)) if T > 0 else S
            if limit < S:
                limit = big
            e = np.random.randint(E)
            if np.random.random() < 0.5:
                a, b = edges[e, 0], edges[e, 1]
            else:
                a, b = edges[e, 1], edges[e, 0]
            if swap_only:
                f = np.random.randint(E)
                if np.random.random() < 0.5:
                    c, d = edges[f, 0], edges[f, 1]
                else:
                    c, d = edges[f, 1], edges[f, 0]
                if a == c or a == d or b == c or b == d or _adjacent(adj, deg, a, d) or _adjacent(adj, deg, b, c):
                    continue
                _rewire(adj, eid, deg, edges, a, b, a, d)
                _rewire(adj, eid, deg, edges, c, d, c, b)
                evals += 1
                Snew = _evaluate(adj, deg, w, m, words, B, reach, frontier, nxt, planes, limit)
                if Snew >= 0 and Snew <= limit:
                    S = Snew
                    accepted += 1
                else:
                    _rewire(adj, eid, deg, edges, a, d, a, b)
                    _rewire(adj, eid, deg, edges, c, b, c, d)
            else:
                c = np.random.randint(m)
                if w[c] == 0 or c == a or c == b or _adjacent(adj, deg, a, c):
                    continue
                _swing(adj, eid, deg, edges, w, a, b, c)       # the 1-neighbour solution
                evals += 1
                Snew = _evaluate(adj, deg, w, m, words, B, reach, frontier, nxt, planes, limit)
                if Snew >= 0 and Snew <= limit:
                    S = Snew
                    accepted += 1
                else:
                    # 2-neighbour solution: SWING(d, c, b) with d a neighbour of c other than a
                    done = False
                    if deg[c] > 1:
                        d = adj[c, np.random.randint(deg[c])]
                        if d != a and d != b and not _adjacent(adj, deg, d, b):
                            _swing(adj, eid, deg, edges, w, d, c, b)
                            evals += 1
                            Snew = _evaluate(adj, deg, w, m, words, B, reach, frontier, nxt, planes, limit)
                            if Snew >= 0 and Snew <= limit:
                                S = Snew
                                accepted += 1
                                done = True
                            else:
                                _swing(adj, eid, deg, edges, w, d, b, c)
                    if not done:
                        _swing(adj, eid, deg, edges, w, a, c, b)
            if S < best_S:
                best_S = S
                best_adj[:, :] = adj
                best_deg[:] = deg
                best_w[:] = w
        return S, best_S, accepted, evals


class _State:
    """Arrays for the numba kernel, built from a HostSwitchGraph."""

    def __init__(self, g: HostSwitchGraph):
        if numba is None:  # pragma: no cover
            raise ParameterError("numba: required for simulated annealing (pip install numba)")
        m, r = g.m, g.r
        self.m, self.r, self.n = m, r, g.n
        self.adj = np.zeros((m, r), dtype=np.int64)
        self.eid = np.zeros((m, r), dtype=np.int64)
        self.deg = np.zeros(m, dtype=np.int64)
        self.edges = g.edges.astype(np.int64).copy()
        for e, (a, b) in enumerate(self.edges):
            self.adj[a, self.deg[a]] = b
            self.eid[a, self.deg[a]] = e
            self.deg[a] += 1
            self.adj[b, self.deg[b]] = a
            self.eid[b, self.deg[b]] = e
            self.deg[b] += 1
        self.w = g.hosts.astype(np.int64).copy()
        self.words = (m + 63) // 64
        self.B = max(1, int(r).bit_length())
        self.reach = np.zeros((m, self.words), dtype=np.uint64)
        self.frontier = np.zeros_like(self.reach)
        self.nxt = np.zeros_like(self.reach)
        self.planes = np.zeros((self.B, self.words), dtype=np.uint64)
        self.scale = g.n * (g.n - 1)                            # S units per h-ASPL unit
        self.best_adj = self.adj.copy()
        self.best_deg = self.deg.copy()
        self.best_w = self.w.copy()

    def scratch(self) -> tuple:
        """_evaluate's work arrays, as `_anneal` takes them."""
        return self.words, self.B, self.reach, self.frontier, self.nxt, self.planes

    def best(self, best_S: int) -> tuple:
        """The best solution so far (updated in place by `_anneal`) and its S."""
        return self.best_adj, self.best_deg, self.best_w, best_S

    def evaluate(self) -> int:
        big = np.int64(1) << np.int64(62)
        return int(_evaluate(self.adj, self.deg, self.w, self.m, *self.scratch(), big))

    def h_aspl(self, S: int) -> float:
        return 2 + S / self.scale if S >= 0 else math.inf

    def graph(self, best: bool = True) -> HostSwitchGraph:
        adj, deg, w = (self.best_adj, self.best_deg, self.best_w) if best else (self.adj, self.deg, self.w)
        edges = [(a, int(adj[a, i])) for a in range(self.m) for i in range(deg[a]) if a < adj[a, i]]
        return HostSwitchGraph(self.n, self.r, w.copy(), np.array(edges, dtype=np.int64).reshape(-1, 2))


def h_aspl_numba(g: HostSwitchGraph) -> float:
    """h-ASPL by the SA kernel (for cross-checking against distances.host_distance_stats)."""
    st = _State(g)
    return st.h_aspl(st.evaluate())


@dataclass
class AnnealResult:
    graph: HostSwitchGraph
    h_aspl: float
    initial_h_aspl: float
    steps: int
    evaluations: int
    accepted: int
    seconds: float
    history: list            # [(seconds, steps, current h-ASPL, best h-ASPL)]


def anneal(g: HostSwitchGraph, steps: int | None = None, seconds: float | None = None, seed: int = 0,
           t0: float = 5e-5, t1: float = 1e-7, operation: str = "swing", progress: bool = False,
           chunk: int = 2000, callback=None) -> AnnealResult:
    """Simulated annealing on the h-ASPL (host-switch paper §4.2).

    Budget: `steps` (deterministic for a seed) or wall-clock `seconds` (temperature follows the
    elapsed fraction). t0/t1: start/end temperatures in h-ASPL units. operation: "swing"
    (2-neighbor swing, changes host counts) or "swap" (keeps them).
    """
    if operation not in ("swing", "swap"):
        raise ParameterError(f"operation={operation!r}: allowed values are swing, swap")
    if steps is None and seconds is None:
        raise ParameterError("steps/seconds: give a step count or a time budget")
    if steps is not None and (not isinstance(steps, int) or steps < 0):
        raise ParameterError(f"steps={steps!r}: must be an integer >= 0")
    if seconds is not None and not seconds > 0:
        raise ParameterError(f"time={seconds!r}: must be a positive number of seconds")
    if not (t0 > 0 and t1 > 0):
        raise ParameterError("temperature: t0 and t1 must be > 0")
    st = _State(g)
    _seed(check_seed(seed))
    S = st.evaluate()
    if S == -2:
        raise ParameterError("graph: the switches carrying hosts are not connected")
    init = st.h_aspl(S)
    best_S = S
    total_steps = total_evals = total_acc = 0
    history = [(0.0, 0, init, init)]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=float(seconds) if seconds else steps, file=sys.stderr, unit="s" if seconds else "step",
                   bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} {unit} [{elapsed}<{remaining}{postfix}]")
    swap_only = operation == "swap"
    # compile (or load the cached machine code) before the clock starts: zero steps
    _anneal(st.adj, st.eid, st.deg, st.w, st.edges, st.m, st.scratch(), (st.scale, S, 0, t0, t1, swap_only),
            st.best(best_S))
    start = time.perf_counter()
    if len(st.edges) == 0:
        steps, seconds = 0, None
    try:
        while True:
            elapsed = time.perf_counter() - start
            if seconds is not None:
                if elapsed >= seconds:
                    break
                rate = total_steps / elapsed if total_steps and elapsed > 0 else None
                n_steps = chunk if rate is None else max(100, min(int(rate * 0.2), 1_000_000))
                fa = elapsed / seconds
                fb = min(1.0, (elapsed + n_steps / rate) / seconds) if rate else fa
            else:
                if total_steps >= steps:
                    break
                n_steps = min(chunk, steps - total_steps)
                fa = total_steps / steps
                fb = (total_steps + n_steps) / steps
            ta, tb = t0 * (t1 / t0) ** fa, t0 * (t1 / t0) ** fb
            S, best_S, acc, ev = _anneal(st.adj, st.eid, st.deg, st.w, st.edges, st.m, st.scratch(),
                                         (st.scale, S, n_steps, ta, tb, swap_only), st.best(best_S))
            total_steps += n_steps
            total_evals += ev
            total_acc += acc
            now = time.perf_counter() - start
            history.append((now, total_steps, st.h_aspl(S), st.h_aspl(best_S)))
            if bar is not None:
                bar.update((min(now, seconds) if seconds else total_steps) - bar.n)
                bar.set_postfix_str(f"h-ASPL {st.h_aspl(S):.5f} best {st.h_aspl(best_S):.5f}", refresh=False)
            if callback:
                callback(history[-1])
    finally:
        if bar is not None:
            bar.close()
    out = st.graph(best=True)
    return AnnealResult(out, st.h_aspl(best_S), init, total_steps, total_evals, total_acc,
                        time.perf_counter() - start, history)


def optimize(n: int, r: int, m: int | None = None, steps: int | None = None, seconds: float | None = None,
             seed: int = 0, operation: str = "swing", progress: bool = False, **kw) -> tuple[AnnealResult, dict]:
    """Build a random host-switch graph with m (default m_opt) switches and anneal it."""
    check_params(n, r, m)
    m_opt = optimal_switches(n, r)
    if m is None:
        m = m_opt
    check_params(n, r, m)
    g = random_host_switch_graph(n, m, r, seed=seed)
    res = anneal(g, steps=steps, seconds=seconds, seed=seed, operation=operation, progress=progress, **kw)
    bounds = {"lower_bound": lower_bound(n, r), "moore_bound": continuous_moore_bound(n, m, r), "m_opt": m_opt,
              "diameter_lower_bound": diameter_lower_bound(n, r)}
    return res, bounds
