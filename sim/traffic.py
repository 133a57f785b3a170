"""Traffic patterns: which endpoint each new packet goes to (PolarStar §9.4, §9.6; Polarized §5).

Endpoints are numbered contiguously per router (router r owns endpoints first[r] .. first[r+1]-1).
A pattern is built once per run (`make_pattern`) and then maps arrays of source endpoints to
destination endpoints with the run's RNG. Endpoints a pattern leaves idle (bit patterns beyond
the largest power of two) get destination -1 and never inject.
"""
from __future__ import annotations

import numpy as np

from topologies.errors import ParameterError
from topologies.network import Network

PATTERNS = ("uniform", "permutation", "shuffle", "reverse", "adversarial", "neighbor")


class Pattern:
    def __init__(self, name: str, net: Network, rng: np.random.Generator):
        self.name = name
        self.net = net
        eps = net.endpoints.astype(np.int64)
        self.first = np.concatenate([[0], np.cumsum(eps)])
        self.E = int(self.first[-1])
        self.ep_router = np.repeat(np.arange(net.num_routers), eps)
        self.ep_local = np.arange(self.E) - self.first[self.ep_router]
        self.fixed = None          # fixed destination per endpoint (-1 = idle), or None = random
        self.router_map = None     # destination router per router for router-level patterns
        n = net.num_routers
        if name == "uniform":
            pass
        elif name in ("shuffle", "reverse"):
            b = max(int(self.E).bit_length() - 1, 0)
            size = 1 << b
            src = np.arange(size)
            if name == "shuffle":
                dst = ((src << 1) | (src >> (b - 1))) & (size - 1) if b else src
            else:
                dst = np.zeros_like(src)
                for i in range(b):
                    dst |= ((src >> i) & 1) << (b - 1 - i)
            self.fixed = np.full(self.E, -1, dtype=np.int64)
            self.fixed[:size] = dst
            self.fixed[self.fixed == np.arange(self.E)] = -1   # a fixed point would not use the network
        elif name == "permutation":
            self.router_map = rng.permutation(n)
        elif name == "neighbor":
            self.router_map = neighbor_permutation(net, rng)
        elif name == "adversarial":
            self.router_map = adversarial_map(net, rng)
        else:
            raise ParameterError(f"traffic={name!r}: unknown; allowed: {', '.join(PATTERNS)}")
        if self.router_map is not None:
            # endpoints on router r send to the corresponding endpoints on router map[r]
            tr = self.router_map[self.ep_router]
            cnt = eps[tr]
            self.fixed = np.where(cnt > 0, self.first[tr] + self.ep_local % np.maximum(cnt, 1), -1)
            self.fixed[self.fixed == np.arange(self.E)] = -1

    def active(self) -> np.ndarray:
        """Endpoints that inject under this pattern."""
        if self.fixed is None:
            return np.ones(self.E, dtype=bool) if self.E > 1 else np.zeros(self.E, dtype=bool)
        return self.fixed >= 0

    def destinations(self, src: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if self.fixed is not None:
            return self.fixed[src]
        d = rng.integers(self.E - 1, size=len(src))
        return d + (d >= src)        # uniform over the other endpoints


def neighbor_permutation(net: Network, rng: np.random.Generator) -> np.ndarray:
    """A random permutation π of routers with π(r) adjacent to r (a cycle cover, via matching)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching

    n = net.num_routers
    perm = rng.permutation(n)
    A = net.adjacency().tocsr()
    A = A[perm][:, perm]                           # random relabelling randomizes the matching
    match = maximum_bipartite_matching(sp.csr_matrix(A), perm_type="column")
    if (match < 0).any():
        raise ParameterError("traffic=neighbor: this network has no permutation onto neighbours")
    out = np.empty(n, dtype=np.int64)
    out[perm] = perm[match]
    return out


def min_global_hops(net: Network, D: np.ndarray, is_global: np.ndarray) -> np.ndarray:
    """(n, n): fewest global (inter-supernode) links over the shortest paths between each pair."""
    n = net.num_routers
    indptr, indices = net.csr()
    ok = net.peer >= 0
    glob = is_global[ok].astype(np.int64)              # per CSR entry
    src = np.repeat(np.arange(n), np.diff(indptr))
    G = np.full((n, n), 255, dtype=np.int64)
    np.fill_diagonal(G, 0)
    for level in range(1, int(D[D < 255].max()) + 1):
        # edge u -> v continues a shortest path from s when D[s,u] = level-1 and D[s,v] = level
        for s0 in range(0, n, 256):
            rows = slice(s0, min(n, s0 + 256))
            on = (D[rows][:, src] == level - 1) & (D[rows][:, indices] == level)
            cand = np.where(on, G[rows][:, src] + glob[None, :], 255)
            best = np.full((cand.shape[0], n), 255, dtype=np.int64)
            np.minimum.at(best.T, indices, cand.T)
            G[rows] = np.where(D[rows] == level, best, G[rows])
    return G


def adversarial_map(net: Network, rng: np.random.Generator) -> np.ndarray:
    """PolarStar §9.6: all routers of supernode x send to the routers of one other supernode π(x),
    router (x, a) to (π(x), b) with a -> b a bijection, chosen so that as many pairs as possible
    are at the largest distance (3) AND every shortest path between them crosses 3 global
    (inter-supernode) links; π is an optimal assignment of that score (scipy)."""
    import scipy.sparse as sp
    from scipy.optimize import linear_sum_assignment
    from scipy.sparse.csgraph import maximum_bipartite_matching

    from topologies.distances import distance_matrix
    from topologies.polarstar import PolarStarStructure

    st = net.structure
    if not isinstance(st, PolarStarStructure):
        raise ParameterError("traffic=adversarial: needs a PolarStar network (polarstar:q=..,supernode=..,degree=..)")
    if net.num_routers > 20_000:
        raise ParameterError("traffic=adversarial: supported up to 20,000 routers")
    m, n_er = st.sn.order, st.er.n
    D = distance_matrix(net).astype(np.int64)
    port = np.arange(len(net.peer)) - net.offsets[net.port_router]
    G = min_global_hops(net, D, port >= st.sn.degree)
    dmax = int(D.max())
    # score of a pair: 2 if at the diameter with all shortest paths fully global, 1 if at the diameter
    score = np.where(D == dmax, 1 + (G == dmax), 0)

    def bijection(x, y, levels):
        s = score[x * m:(x + 1) * m, y * m:(y + 1) * m]
        match = -np.ones(m, dtype=np.int64)
        for level in levels:
            free_a = np.nonzero(match < 0)[0]
            used = np.zeros(m, dtype=bool)
            used[match[match >= 0]] = True
            sub = (s[free_a] >= level) & ~used[None, :]
            mm = maximum_bipartite_matching(sp.csr_matrix(sub.astype(np.int8)), perm_type="column")
            match[free_a[mm >= 0]] = mm[mm >= 0]
        return match

    value = np.zeros((n_er, n_er))
    for x in range(n_er):
        for y in range(n_er):
            if x != y:
                mt = bijection(x, y, (2, 1))
                value[x, y] = (score[x * m + np.arange(m), y * m + np.maximum(mt, 0)] * (mt >= 0)).sum()
    noise = rng.random((n_er, n_er)) * 1e-3          # random choice among equally good assignments
    cost = -(value + noise)
    np.fill_diagonal(cost, 1e9)
    _, pi = linear_sum_assignment(cost)
    out = np.empty(net.num_routers, dtype=np.int64)
    for x in range(n_er):
        mt = bijection(x, pi[x], (2, 1, 0))
        out[x * m + np.arange(m)] = pi[x] * m + mt
    return out


def make_pattern(name: str, net: Network, rng: np.random.Generator) -> Pattern:
    if name not in PATTERNS:
        raise ParameterError(f"traffic={name!r}: unknown; allowed: {', '.join(PATTERNS)}")
    return Pattern(name, net, rng)
