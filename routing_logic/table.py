"""Table-based minimal routing on any Network, and the distance oracles the other routings use.

A table router stores, per destination, one bit per port ("this port lies on a shortest path",
all minimal ports) — n·P bits per router — or a single port number, n·⌈log2 P⌉ bits. Both are
initialized by BFS (`topologies.distances.distance_matrix`).

Distance oracles answer the two questions every routing here asks, for arrays of routers:
  dist(c, t)   hop distance D(c, t)
  delta(c, t)  (..., P) int8: D(neighbour at port p, t) - D(c, t), or NO_PORT for a port
               without a link. Polarized reads it twice (Δs and Δt, Micro'22 Fig. 3b);
               minimal routing takes the ports with delta == -1.
`TableOracle` reads a BFS distance matrix (any Network); `ArithmeticOracle` (PolarStar only)
computes both without any per-router-count table.
"""
from __future__ import annotations

import numpy as np

from topologies.distances import UNREACHABLE, distance_matrix
from topologies.errors import ParameterError
from topologies.network import Network

from .base import EJECT, Candidate, Routing, RouteState, StateArrays, bits

NO_PORT = 9      # delta of a port without a link: never -1, 0 or +1, so no rule ever selects it
DELTA_TABLE_LIMIT = 64 << 20   # precompute the (n, n, P) delta table up to this many entries
TABLE_LIMIT = 30_000           # n x n distance matrix at most
ARITHMETIC_ABOVE = 20_000      # routers: above this, `min` on an intact PolarStar (and the simulator)
                               # computes distances with the arithmetic unit instead of an n x n table


class TableOracle:
    """Distances from BFS on any connected Network."""

    kind = "table"

    def __init__(self, net: Network, dist: np.ndarray | None = None):
        self.net = net
        self.n = n = net.num_routers
        if dist is None and n > TABLE_LIMIT:
            raise ParameterError(f"network {net.name!r}: {n} routers is too many for BFS routing tables "
                                 f"(max {TABLE_LIMIT}); on PolarStar use distances=arithmetic or routing=polarstar")
        self.dist = distance_matrix(net) if dist is None else dist
        if n and (self.dist == UNREACHABLE).any():
            raise ParameterError(f"network {net.name!r}: not connected; routing needs a connected network")
        self.diameter = int(self.dist.max()) if n else 0
        self.ports = int(net.ports.max()) if n else 0
        peer_router, _ = net.peer_table()
        nbr = np.full((n, self.ports), -1, dtype=np.int64)
        local = np.arange(len(peer_router)) - np.repeat(net.offsets[:-1], net.ports)
        nbr[net.port_router.astype(np.int64), local] = peer_router
        self.nbr = nbr                                    # (n, P) neighbour router or -1
        self._delta = None
        if n * n * max(self.ports, 1) <= DELTA_TABLE_LIMIT:
            self._delta = self._compute_delta(np.arange(n)[:, None], np.arange(n)[None, :])

    def dist_of(self, c, t):
        return self.dist[c, t].astype(np.int64)

    def _compute_delta(self, c, t):
        c, t = np.broadcast_arrays(np.asarray(c, dtype=np.int64), np.asarray(t, dtype=np.int64))
        nb = self.nbr[c]                                  # (..., P)
        dn = self.dist[np.where(nb >= 0, nb, 0), t[..., None]].astype(np.int16)
        d = dn - self.dist[c, t].astype(np.int16)[..., None]
        return np.where(nb >= 0, d, NO_PORT).astype(np.int8)

    def delta(self, c, t):
        if self._delta is not None:
            return self._delta[c, t]
        return self._compute_delta(c, t)

    def neighbor(self, c, port):
        return self.nbr[c, port]

    def storage_bits(self, per_port_bits: int = 1) -> dict:
        """Per-router table: one entry per destination of `per_port_bits` bits per port."""
        b = {"table": self.n * self.ports * per_port_bits}
        b["total"] = b["table"]
        return b


class MinimalTable(Routing):
    """`min`: all minimal ports from BFS tables, on any Network (n·P bits per router).

    Every candidate has priority 0, so the simulator's occupancy picks among the minimal ports.
    Hop-indexed VCs: the diameter makes it deadlock-free.
    """

    name = "min"

    def __init__(self, net: Network, vcs: int | None = None, oracle=None):
        self.oracle = oracle if oracle is not None else _min_oracle(net)
        self.max_route_length = max(self.oracle.diameter, 1)
        super().__init__(net, vcs)

    def _route(self, c: int, state: RouteState):
        t = state.dst
        if c == t:
            return (Candidate(EJECT, 0, 0),)
        vc = 0                      # the VC policy sets each candidate's VCs (Routing._expand_vcs)
        ports = np.nonzero(self.oracle.delta(c, t) == -1)[0]
        return tuple(Candidate(int(p), vc, 0) for p in ports)

    def _batch(self, c, states: StateArrays):
        t = states.dst
        idx, port = np.nonzero(self.oracle.delta(c, t) == -1)
        ej = np.nonzero(c == t)[0]
        return (np.concatenate([idx, ej]), np.concatenate([port, np.full(len(ej), EJECT)]),
                np.zeros(len(idx) + len(ej), dtype=np.int64))

    def port_mask(self, c=None) -> np.ndarray:
        """(n, n, P) (or (n, P) for one router c) bool: minimal ports toward every destination."""
        n = self.n
        if c is None:
            return self.oracle.delta(np.arange(n)[:, None], np.arange(n)[None, :]) == -1
        return self.oracle.delta(np.full(n, c), np.arange(n)) == -1

    def next_hop_table(self) -> np.ndarray:
        """(n, n) int16: lowest minimal port from c to t (EJECT on the diagonal)."""
        m = self.port_mask()
        out = m.argmax(axis=-1).astype(np.int16)
        out[~m.any(axis=-1)] = EJECT
        return out

    def storage_bits(self) -> dict:
        return table_storage_bits(self.n, self.oracle.ports)


def _min_oracle(net: Network):
    """BFS tables; on an intact PolarStar of more than ARITHMETIC_ABOVE routers the arithmetic
    distances instead (the same answers, no n x n table)."""
    from .polarstar import ArithmeticOracle, supports_arithmetic

    if net.num_routers > ARITHMETIC_ABOVE and supports_arithmetic(net):
        return ArithmeticOracle(net, cache=False)
    return TableOracle(net)


def table_storage_bits(n: int, ports: int) -> dict:
    """Bits per router of table-based minimal routing: all minimal ports (n·P) and one port (n·⌈log2 P⌉)."""
    return {"all_minimal_ports": n * ports, "single_port": n * bits(ports), "total": n * ports}


ORACLES = ("auto", "table", "arithmetic")


def make_oracle(net: Network, distances: str = "auto", cache="auto"):
    """Distance oracle: "table" (BFS, any Network), "arithmetic" (PolarStar, no tables), "auto"."""
    from topologies.polarstar import PolarStarStructure

    from .polarstar import ArithmeticOracle

    if distances not in ORACLES:
        raise ParameterError(f"distances={distances!r}: allowed values are {', '.join(ORACLES)}")
    polar = isinstance(net.structure, PolarStarStructure)
    failed = len(net.attrs.get("failed_links", ()))
    if distances == "arithmetic" or (distances == "auto" and polar and not failed):
        if not polar:
            raise ParameterError(f"distances='arithmetic': needs a PolarStar network, got {net.name!r}")
        if failed:
            raise ParameterError(f"distances='arithmetic': the arithmetic distances are those of the intact "
                                 f"PolarStar; {net.name!r} has {failed} failed links (use distances=table)")
        return ArithmeticOracle(net, cache=cache)
    return TableOracle(net)
