"""Table-free minimal routing on PolarStar (PolarStar paper §9.2), exact distance D(c, t).

Router c = (x, a): x an ER_q vertex (a point of PG(2, q)), a a supernode vertex. Everything is
computed from the two router ids, GF(q) arithmetic, the bijection f and one |V(G')|² supernode
table; nothing is indexed by a router id, so the state per router does not grow with the network.

Moves of the star product (topologies/star_product.py):
  S  (x, a) -> (x, b)        b ~ a in G'                          ports 0 .. d'-1
  E  (x, a) -> (y, φ_xy(a))  y ~ x in ER_q, y != x                ER slot ports d' + slot_of(x, y)
  Q  (x, a) -> (x, f(a))     x quadric (self-loop), f an involution, f(a) != a (IQ only)
with φ_xy = f for an involution, else f when x < y and f⁻¹ when x > y (Paley arc orientation).

Distance. ER_q has diameter 2 and any two distinct points x, y have exactly one common
neighbour w = x × y, counting self-loops (w = x when x is a quadric adjacent to y). So the
walks of length ≤ 2 between supernodes x and y are known in closed form and D ≤ 2 is decided
by a handful of table lookups:
  x = y        D=1: a ~ b, or Q;  D=2: G' distance 2, or SQ / QS (a ~ f(b), f(a) ~ b; quadric x)
  x ~ y        D=1: b = φ_xy(a);  D=2: ES (φ_xy(a) ~ b), SE (a ~ φ_yx(b)), EE through w when
               w ∉ {x, y} (b = φ_wy(φ_xw(a))), QE / EQ when w ∈ {x, y} (b = f(f(a)) = a)
  x ≁ y        D=2: EE through w
and otherwise D = 3, since PolarStar has diameter 3 (Theorems 1 and 2; the exhaustive tests
check D against BFS on every pair).

Minimal next hop. D = 1 and 2: the first hop of the shape that matched. D = 3 (§9.2, with
Property R* for IQ and R1 for Paley doing the work):
  x = y               first ER slot that is not x's own loop (IQ: b = f(a) or f(a) ~ f(b));
  w = x × y ∉ {x, y}  E toward w: from (w, φ_xw(a)) the target is ≤ 2 hops away for every b;
  w = x (x quadric)   Q if x has the matching edge (IQ), else E toward y;
  w = y (y quadric)   E toward y.
Within one supernode a 2-hop path inside the supernode (or through the quadric matching) is
taken when it exists, never an ER detour. The D = 3 rule relies on R* / R1, so the unit accepts
only the IQ, Paley and complete supernodes (complete: f = identity, ER_q x K_{d'+1}).

All functions broadcast over NumPy arrays of router ids: the same code is the per-hop golden
model (scalars) and the vectorized all-pairs check.
"""
from __future__ import annotations

import numpy as np

from topologies.errors import ParameterError
from topologies.network import Network
from topologies.polarstar import PolarStarStructure

from .base import EJECT, Candidate, Routing, RouteState, StateArrays, bits
from .table import NO_PORT


class PolarStarArithmetic:
    """The arithmetic routing unit of one PolarStar: D(c, t), neighbours, next hop, minimal ports."""

    def __init__(self, structure: PolarStarStructure):
        if not isinstance(structure, PolarStarStructure):
            raise ParameterError("network: arithmetic PolarStar routing needs a PolarStar network "
                                 "(polarstar:q=..,supernode=..,degree=..)")
        er, sn = structure.er, structure.sn
        if sn.name not in ("iq", "paley", "complete"):
            raise ParameterError(f"supernode={sn.name!r}: arithmetic routing supports iq, paley, complete")
        self.er, self.sn = er, sn
        self.q, self.m, self.dp = er.q, sn.order, sn.degree
        self.n_er = er.n
        self.n = er.n * sn.order
        self.ports = self.dp + self.q + 1
        self.f = sn.f.astype(np.int64)
        self.f_inv = sn.f_inv.astype(np.int64)
        self.involution = sn.is_involution
        self.adj = sn.adj.astype(np.int64).reshape(self.m, self.dp)
        self.sn_dist, self.sn_port = _supernode_table(self.adj, self.m)

    # ---- ER_q pieces (arithmetic on the vector of a vertex id) --------------------------------
    def _er(self, x, y):
        """Closed-form relation of ER vertices x, y: same, adjacent, w = x × y, quadric x/y."""
        er = self.er
        vx, vy = er.vector(x), er.vector(y)
        same = x == y
        adj = (er.dot(vx, vy) == 0) & ~same
        qx = er.dot(vx, vx) == 0
        w = np.where(same, x, er.index(er.cross(vx, vy)))
        return same, adj, w, qx

    def _phi(self, lt, a):
        """Image of supernode vertex a along an ER arc whose tail id < head id iff `lt`."""
        if self.involution:
            return self.f[a]
        return np.where(lt, self.f[a], self.f_inv[a])

    def er_port(self, x, y):
        """Port of (x, ·) toward ER neighbour y (y = x: the quadric's loop slot)."""
        return self.dp + self.er.slot_of(x, y)

    # ---- exact distance ---------------------------------------------------------------------
    def _shapes(self, x, a, y, b):
        """Boolean arrays of every ≤ 2-hop shape from (x, a) to (y, b) (see module doc)."""
        same, adj, w, qx = self._er(x, y)
        f, sd = self.f, self.sn_dist
        fa = f[a]
        has_q = qx & (fa != a) if self.involution else np.zeros_like(qx & (fa != a))
        pa = self._phi(x < y, a)                    # (y, pa) is the E-neighbour of (x, a)
        pb = self._phi(y < x, b)                    # (x, pb) is the E-neighbour of (y, b)
        mid = ~same & (w != x) & (w != y)
        a2 = self._phi(w < y, self._phi(x < w, a))  # a after x -> w -> y
        quad_walk = adj & ~mid                      # w ∈ {x, y}: the 2-walk uses a loop
        s = {}
        s["eq"] = same & (a == b)
        s["S"] = same & (sd[a, b] == 1)
        s["Q"] = same & has_q & (b == fa)
        s["E"] = adj & (b == pa)
        s["SS"] = same & (sd[a, b] == 2)
        if self.involution:
            s["SQ"] = same & qx & (sd[a, f[b]] == 1)
            s["QS"] = same & has_q & (sd[fa, b] == 1)
        else:
            s["SQ"] = s["QS"] = np.zeros_like(s["SS"])
        s["ES"] = adj & (sd[pa, b] == 1)
        s["SE"] = adj & (sd[a, pb] == 1)
        s["EE"] = mid & (b == a2)
        # QE (w = x) or EQ (w = y): f(f(a)) = a, and the loop edge needs f(a) != a
        loop_ok = (fa != a) if self.involution else np.zeros_like(fa != a)
        s["QE"] = quad_walk & (w == x) & loop_ok & (b == a)
        s["EQ"] = quad_walk & (w == y) & loop_ok & (b == a)
        return s, (same, adj, w, qx, has_q, mid, pb)

    def distance(self, c, t):
        """Exact hop distance D(c, t) (int8 array), for router ids or arrays of them."""
        c, t = np.asarray(c, dtype=np.int64), np.asarray(t, dtype=np.int64)
        return self.distance_xa(c // self.m, c % self.m, t // self.m, t % self.m)

    def distance_xa(self, x, a, y, b):
        s, _ = self._shapes(x, a, y, b)
        d1 = s["S"] | s["Q"] | s["E"]
        d2 = s["SS"] | s["SQ"] | s["QS"] | s["ES"] | s["SE"] | s["EE"] | s["QE"] | s["EQ"]
        return np.where(s["eq"], 0, np.where(d1, 1, np.where(d2, 2, 3))).astype(np.int8)

    # ---- neighbours -------------------------------------------------------------------------
    def neighbor(self, c, port):
        """Router at `port` of c, computed (S: adj table; E: u + k·v on the line x^⊥); -1 if none."""
        c, port = np.asarray(c, dtype=np.int64), np.asarray(port, dtype=np.int64)
        x, a = c // self.m, c % self.m
        return self.neighbor_xa(x, a, port)

    def neighbor_xa(self, x, a, port):
        er, F, m, dp = self.er, self.er.F, self.m, self.dp
        x, a, port = np.broadcast_arrays(x, a, port)
        s_nb = x * m + self.adj[a, np.clip(port, 0, max(dp - 1, 0))] if dp else np.full(x.shape, -1)
        k = np.clip(port - dp, 0, self.q)
        u, v = er.line_basis(er.vector(x))
        kk = np.minimum(k, self.q - 1)[..., None]
        pt = np.where((k < self.q)[..., None], F.add[u, F.mul[kk, v]], v).astype(np.int64)
        y = er.index(er.normalize(pt))
        loop = y == x
        fa = self.f[a]
        loop_nb = np.where(self.involution & (fa != a), x * m + fa, -1)
        e_nb = np.where(loop, loop_nb, y * m + self._phi(x < y, a))
        out = np.where(port < dp, s_nb, e_nb)
        return np.where((port < 0) | (port >= self.ports), -1, out)

    # ---- routing ----------------------------------------------------------------------------
    def next_port(self, c, t):
        """The minimal next-hop port from c toward t (EJECT where c == t)."""
        c, t = np.asarray(c, dtype=np.int64), np.asarray(t, dtype=np.int64)
        return self.next_port_xa(c // self.m, c % self.m, t // self.m, t % self.m)

    def next_port_xa(self, x, a, y, b):
        x, a, y, b = _align(x, a, y, b)
        s, (same, adj, w, qx, has_q, mid, pb) = self._shapes(x, a, y, b)
        sp, f = self.sn_port, self.f
        # ports are computed everywhere and used only where their move exists
        p_y = self.er_port(x, y)
        p_w = self.er_port(x, w)
        p_q = self.er_port(x, x)
        # D = 3 from one supernode: first ER slot that is not x's own loop
        slot0_loop = qx & (self.er_port(x, x) == self.dp)
        p_z = np.where(slot0_loop, self.dp + 1, self.dp)
        d3_port = np.where(same, p_z, np.where(mid, p_w, np.where((w == x) & has_q, p_q, p_y)))
        conds = [s["eq"], s["S"], s["Q"], s["E"],
                 s["SS"], s["SQ"], s["QS"], s["ES"], s["SE"], s["EE"], s["QE"], s["EQ"]]
        choices = [np.int64(EJECT), sp[a, b], p_q, p_y,
                   sp[a, b], sp[a, f[b]], p_q, p_y, sp[a, pb], p_w, p_q, p_y]
        return np.select(conds, choices, default=d3_port).astype(np.int64)

    def minimal_mask(self, c, t):
        """(..., ports) bool: ports of c whose neighbour is one hop closer to t (all minimal ports)."""
        c, t = np.asarray(c, dtype=np.int64), np.asarray(t, dtype=np.int64)
        return self.minimal_mask_xa(c // self.m, c % self.m, t // self.m, t % self.m)

    def minimal_mask_xa(self, x, a, y, b, d=None):
        x, a, y, b = _align(x, a, y, b)
        if d is None:
            d = self.distance_xa(x, a, y, b)
        ports = np.arange(self.ports)
        nb = self.neighbor_xa(x[..., None], a[..., None], ports)
        nx_, na = nb // self.m, nb % self.m
        dn = self.distance_xa(nx_, na, y[..., None], b[..., None])
        return (nb >= 0) & (dn == np.asarray(d)[..., None] - 1)

    def delta(self, c, t):
        """(..., ports) int8: D(neighbour, t) - D(c, t) per port, NO_PORT where unconnected."""
        c, t = _align(c, t)
        nb = self.neighbor(c[..., None], np.arange(self.ports))
        dn = self.distance(np.where(nb >= 0, nb, c[..., None]), t[..., None])
        d = dn - self.distance(c, t)[..., None]
        return np.where(nb >= 0, d, NO_PORT).astype(np.int8)

    # ---- whole-network tables (simulation speed-ups; every entry comes from the arithmetic) -----
    def _factored(self, fn):
        ne, m = self.n_er, self.m
        out = fn(np.arange(ne)[:, None, None, None], np.arange(m)[None, None, :, None],
                 np.arange(ne)[None, :, None, None], np.arange(m)[None, None, None, :])
        return out.transpose(0, 2, 1, 3).reshape(self.n, self.n)

    def distance_table(self) -> np.ndarray:
        """(n, n) int8 D for every pair, from the arithmetic (not BFS)."""
        return self._factored(self.distance_xa)

    def next_port_table(self) -> np.ndarray:
        """(n, n) int16 next-hop port for every pair, from the arithmetic."""
        return self._factored(self.next_port_xa).astype(np.int16)

    def neighbor_table(self) -> np.ndarray:
        """(n, ports) neighbour router per port (-1 if none), from the arithmetic."""
        return self.neighbor(np.arange(self.n)[:, None], np.arange(self.ports)[None, :])

    # ---- state --------------------------------------------------------------------------------
    def storage_bits(self) -> dict:
        """Bits of state one router's arithmetic unit needs (hardware view).

        GF(q) multiplication/inversion via log and antilog tables (q entries each); addition is
        digit-wise mod p and needs no table. Supernode: one m×m table of (G' distance capped at 3,
        first port) plus f, f⁻¹ and the adjacency list (port -> neighbour). Own id: (x, a).
        The Python model uses full q×q add/mul tables only for vectorization speed.
        """
        return arithmetic_storage_bits(self.q, self.m, self.dp)


def arithmetic_storage_bits(q: int, m: int, dp: int) -> dict:
    """Bits per router of the arithmetic unit for ER_q * G' with |V(G')| = m, degree d'."""
    b = {
        "gf_log_antilog": 2 * q * bits(q),
        "supernode_table": m * m * (2 + bits(max(dp, 1))),
        "f_and_f_inv": 2 * m * bits(m),
        "supernode_adjacency": m * dp * bits(m),
        "router_id": bits(q * q + q + 1) + bits(m),
    }
    b["total"] = sum(b.values())
    return b


def supports_arithmetic(net: Network) -> bool:
    """The arithmetic unit routes `net`: an intact PolarStar with an IQ, Paley or complete supernode."""
    st = net.structure
    return (isinstance(st, PolarStarStructure) and st.sn.name in ("iq", "paley", "complete")
            and not len(net.attrs.get("failed_links", ())))


CACHE_LIMIT = 4096     # cache="auto": tabulate the arithmetic up to this many routers


def _use_cache(cache, n: int) -> bool:
    if cache not in (True, False, "auto"):
        raise ParameterError(f"cache={cache!r}: allowed values are True, False, auto")
    return n <= CACHE_LIMIT if cache == "auto" else bool(cache)


class ArithmeticOracle:
    """Distance oracle for PolarStar with no per-router-count table (see table.TableOracle).

    cache=True (default "auto": up to 4,096 routers) tabulates D and the neighbours *computed by
    the arithmetic unit* once, so that per-hop calls in the Python simulator are fast; the unit
    being modelled still stores nothing per router (`storage_bits`).
    """

    kind = "arithmetic"
    diameter = 3   # Theorems 1 and 2 (an upper bound; smaller factor graphs may have less)

    def __init__(self, net: Network, cache="auto"):
        self.net = net
        self.unit = PolarStarArithmetic(net.structure)
        self.n = self.unit.n
        self.ports = self.unit.ports
        self._dist = self._nbr = None
        if _use_cache(cache, self.n):
            self._dist = self.unit.distance_table()
            self._nbr = self.unit.neighbor_table()

    def dist_of(self, c, t):
        if self._dist is not None:
            return self._dist[c, t].astype(np.int64)
        return self.unit.distance(c, t).astype(np.int64)

    def delta(self, c, t):
        if self._dist is None:
            return self.unit.delta(c, t)
        c, t = np.broadcast_arrays(np.asarray(c, dtype=np.int64), np.asarray(t, dtype=np.int64))
        nb = self._nbr[c]
        d = self._dist[np.maximum(nb, 0), t[..., None]].astype(np.int8) - self._dist[c, t][..., None]
        return np.where(nb >= 0, d, NO_PORT).astype(np.int8)

    def neighbor(self, c, port):
        if self._nbr is not None:
            return self._nbr[c, port]
        return self.unit.neighbor(c, port)

    def storage_bits(self, per_port_bits: int = 1) -> dict:
        return self.unit.storage_bits()


def _align(*arrays):
    """Give int64 arrays a common number of dimensions (leading 1s), without broadcasting."""
    arrays = [np.asarray(v, dtype=np.int64) for v in arrays]
    nd = max(v.ndim for v in arrays)
    return [v.reshape((1,) * (nd - v.ndim) + v.shape) for v in arrays]


def _supernode_table(adj: np.ndarray, m: int):
    """G' all-pairs (distance capped at 3, first port of a shortest path), vectorized."""
    dp = adj.shape[1]
    A = np.zeros((m, m), dtype=bool)
    A[np.repeat(np.arange(m), dp), adj.ravel()] = True
    dist = np.full((m, m), 3, dtype=np.int64)
    port = np.full((m, m), -1, dtype=np.int64)
    if dp:
        two = (A.astype(np.float32) @ A.astype(np.float32)) > 0
        dist[two] = 2
        # first port toward b at distance 2: lowest i with adj[a][i] ~ b (chunked over a)
        step = max(1, (1 << 24) // max(1, dp * m))
        for a0 in range(0, m, step):
            hit = A[adj[a0:a0 + step]]                                   # (k, d', m)
            port[a0:a0 + step] = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)
        dist[A] = 1
        port[np.repeat(np.arange(m), dp), adj.ravel()] = np.tile(np.arange(dp), m)
    np.fill_diagonal(dist, 0)
    port[dist != 2] = np.where(A, port, -1)[dist != 2]
    return dist, port


class PolarStarMinimal(Routing):
    """`polarstar`: table-free minimal routing on PolarStar.

    paths="single" (default): the one arithmetic next hop of §9.2 (deterministic).
    paths="all": every minimal port, from D over the computed neighbours (adaptive, no tables).
    Hop-indexed VCs: 3 (the diameter) make it deadlock-free. cache: as `ArithmeticOracle`
    (the next-hop answers of the unit tabulated once for simulation speed).
    """

    name = "polarstar"
    max_route_length = 3

    def __init__(self, net: Network, vcs: int | None = None, paths: str = "single", cache="auto"):
        self.unit = PolarStarArithmetic(net.structure)
        if paths not in ("single", "all"):
            raise ParameterError(f"paths={paths!r}: allowed values are single, all")
        self.paths = paths
        self._next = self._oracle = None
        self.exceptions = None
        if len(net.attrs.get("failed_links", ())):
            if paths != "single":
                raise ParameterError(f"paths={paths!r}: on a network with failed links only paths=single")
            self._damaged(net)
            super().__init__(net, vcs)
            return
        if self.unit.m == 1:
            # a one-vertex supernode leaves ER_q itself, of diameter 2 (§3), and the routes are minimal
            self.max_route_length = 2
        if _use_cache(cache, self.unit.n):
            if paths == "single":
                self._next = self.unit.next_port_table()
            else:
                self._oracle = ArithmeticOracle(net, cache=True)
        super().__init__(net, vcs)

    def _damaged(self, net: Network) -> None:
        """Failed links: the arithmetic unit cannot see them, so a per-router exception list
        (destination -> port) overrides its answer wherever its port is failed or no longer on a
        shortest path of the damaged network; the exception port is the lowest port that is. Every
        hop then shortens the damaged distance: loop-free, minimal, routes <= the damaged diameter.
        The RTL loads the exceptions into a small CAM next to the arithmetic unit."""
        from topologies.distances import distance_matrix

        n = self.unit.n
        dist = distance_matrix(net).astype(np.int64)
        if (dist == 255).any():
            raise ParameterError(f"network: {net.name!r} is disconnected; routing needs a connected network")
        arith = self.unit.next_port_table().astype(np.int64)
        pr, _ = net.peer_table()
        R = int(net.ports.max())
        nbr = np.full((n, R), -1, dtype=np.int64)
        rows = net.port_router.astype(np.int64)
        nbr[rows, np.arange(len(net.peer)) - net.offsets[rows]] = pr
        c, t = np.divmod(np.arange(n * n), n)
        off = c != t
        c, t = c[off], t[off]
        hop = nbr[c, arith[c, t]]
        ok = (hop >= 0) & (dist[np.maximum(hop, 0), t] == dist[c, t] - 1)
        self.exceptions = {}
        table = arith.copy()
        for cc, tt in zip(c[~ok].tolist(), t[~ok].tolist()):
            nb = nbr[cc]
            good = np.nonzero((nb >= 0) & (dist[np.maximum(nb, 0), tt] == dist[cc, tt] - 1))[0]
            table[cc, tt] = good[0]
            self.exceptions.setdefault(cc, {})[tt] = int(good[0])
        self._next = table
        self.max_route_length = int(dist.max())

    def exception_counts(self) -> np.ndarray:
        """Exceptions per router (0 everywhere on the intact network)."""
        out = np.zeros(self.unit.n, dtype=np.int64)
        for c, ex in (self.exceptions or {}).items():
            out[c] = len(ex)
        return out

    def _next_port(self, c, t):
        return self._next[c, t].astype(np.int64) if self._next is not None else self.unit.next_port(c, t)

    def _mask(self, c, t):
        return self._oracle.delta(c, t) == -1 if self._oracle is not None else self.unit.minimal_mask(c, t)

    def _route(self, c: int, state: RouteState):
        t = state.dst
        vc = 0                      # the VC policy sets each candidate's VCs (Routing._expand_vcs)
        if c == t:
            return (Candidate(EJECT, 0, 0),)
        if self.paths == "single":
            return (Candidate(int(self._next_port(c, t)), vc, 0),)
        ports = np.nonzero(self._mask(c, t))[0]
        return tuple(Candidate(int(p), vc, 0) for p in ports)

    def _batch(self, c, states: StateArrays):
        t = states.dst
        if self.paths == "single":
            return np.arange(len(c)), self._next_port(c, t), np.zeros(len(c), dtype=np.int64)
        mask = self._mask(c, t)
        idx, port = np.nonzero(mask)
        ej = np.nonzero(c == t)[0]
        return (np.concatenate([idx, ej]), np.concatenate([port, np.full(len(ej), EJECT)]),
                np.zeros(len(idx) + len(ej), dtype=np.int64))

    def storage_bits(self) -> dict:
        return self.unit.storage_bits()


def verify_against_bfs(unit: PolarStarArithmetic, net: Network, bfs: np.ndarray, masks: bool = True,
                       chunk: int = 1 << 22, progress=None) -> dict:
    """Check D, the next hop and (optionally) all minimal ports on every ordered pair against BFS.

    Works ER vertex by ER vertex on factored arrays (x, y, a, b) so that 10^8 pairs fit in memory.
    The next hop is followed through the Network's own port table (not the unit's neighbour
    arithmetic): "one hop closer on every pair" is, by induction, "every produced path has the
    BFS length". Returns counts of mismatches (all 0 when correct) and the hop statistics.
    """
    ne, m, P, n = unit.n_er, unit.m, unit.ports, unit.n
    bv = bfs.reshape(ne, m, ne, m)
    peer_router = net.peer_table()[0].reshape(n, P)
    per_x = ne * m * m * (P if masks else 2)
    step = max(1, chunk // per_x)
    y = np.arange(ne)[None, :, None, None]
    a = np.arange(m)[None, None, :, None]
    b = np.arange(m)[None, None, None, :]
    res = {"pairs": n * (n - 1), "distance_mismatches": 0, "next_hop_failures": 0, "minimal_port_mismatches": 0,
           "hist": np.zeros(4, dtype=np.int64)}
    for x0 in range(0, ne, step):
        x = np.arange(x0, min(ne, x0 + step))[:, None, None, None]
        ref = bv[x0:x0 + len(x)].transpose(0, 2, 1, 3).astype(np.int16)      # [x, y, a, b]
        d = unit.distance_xa(x, a, y, b)
        res["distance_mismatches"] += int((d != ref).sum())
        res["hist"] += np.bincount(np.minimum(ref, 3).ravel(), minlength=4)[:4]
        c = x * m + a
        t = y * m + b
        port = unit.next_port_xa(x, a, y, b)
        here = c == t
        nb = peer_router[c, np.clip(port, 0, P - 1)]
        closer = (port >= 0) & (nb >= 0) & (bfs[np.maximum(nb, 0), t] == ref - 1)
        res["next_hop_failures"] += int((~np.where(here, port == EJECT, closer)).sum())
        if masks:
            mm = unit.minimal_mask_xa(x, a, y, b, d)
            nbs = peer_router[c]                                            # (X, 1, m, 1, P)
            want = (nbs >= 0) & (bfs[np.maximum(nbs, 0), t[..., None]] == ref[..., None] - 1)
            res["minimal_port_mismatches"] += int((mm != want).sum())
        if progress:
            progress(len(x))
    h = res.pop("hist")
    res["max_hops"] = int(np.nonzero(h)[0].max()) if h[1:].any() else 0
    res["mean_hops"] = float((h * np.arange(4)).sum() / max(1, h[1:].sum()))
    return res
