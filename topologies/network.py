"""The `Network` netlist every later stage consumes.

Routers 0..n-1, each with a numbered list of ports; ports of all routers are numbered globally
in CSR form (router r owns global ports offsets[r] .. offsets[r+1]-1). `peer[g]` is the global
port at the other end of the link on port g, or -1 when that port is unconnected (a topology may
keep a uniform port numbering with holes, e.g. a PolarStar quadric router whose f(a) = a).
`endpoints[r]` is the number of endpoints (concentration) at router r; 0 marks a router without
endpoints (indirect networks). Arrays only, so the 627,570-router radix-128 PolarStar fits.
`structure` carries construction data the routing needs (e.g. `PolarStarStructure`).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from .errors import ParameterError, check_seed


def index_dtype(limit: int):
    return np.int32 if limit < 2**31 - 1 else np.int64


@dataclass(frozen=True, eq=False)
class Network:
    name: str
    offsets: np.ndarray          # (n+1,) int64
    peer: np.ndarray             # (total ports,) global port of the far end, -1 if unconnected
    endpoints: np.ndarray        # (n,) int32
    spec: str = ""               # SPEC string that rebuilds it (empty when loaded from a netlist)
    structure: Any = None        # family-specific construction data
    attrs: dict = field(default_factory=dict)

    # ---- construction -----------------------------------------------------------------------
    def without_links(self, links=None, fraction: float | None = None, seed: int = 0,
                      connected: bool = True) -> "Network":
        """The same netlist with links failed: their two ports become holes (peer -1); router ids,
        port numbers, endpoints and `structure` are unchanged, and `attrs["failed_links"]` lists
        the failed links as rows of `links()`. Give `links` (rows [ra, pa, rb, pb] or indices into
        `links()`) or `fraction` (round(fraction * m) links drawn at random with `seed`; with
        `connected`, draws are repeated with seeds seed, seed+1, ... until the rest is connected)."""
        all_links = self.links()
        m = len(all_links)
        if (links is None) == (fraction is None):
            raise ParameterError("without_links: give either links= or fraction=")
        if fraction is not None:
            if not isinstance(fraction, (int, float)) or not 0 <= fraction < 1:
                raise ParameterError(f"fraction={fraction!r}: must be in [0, 1)")
            check_seed(seed)
            k = int(round(fraction * m))
            for attempt in range(100):
                pick = np.random.default_rng(seed + attempt).choice(m, size=k, replace=False)
                out = self.without_links(np.sort(pick))
                if not connected or out.is_connected():
                    return out
            raise ParameterError(f"fraction={fraction}: 100 random draws of {k} links all disconnect the network")
        links = np.asarray(links, dtype=np.int64)
        if links.ndim == 1:
            if len(links) and (links.min() < 0 or links.max() >= m):
                raise ParameterError(f"links: indices must be in 0..{m - 1}")
            idx = links
        else:
            rows = {tuple(r): i for i, r in enumerate(all_links.tolist())}
            rows.update({(rb, pb, ra, pa): i for (ra, pa, rb, pb), i in list(rows.items())})
            idx = []
            for r in links.reshape(-1, 4).tolist():
                if tuple(r) not in rows:
                    raise ParameterError(f"links: {r} is not a link of {self.name}")
                idx.append(rows[tuple(r)])
            idx = np.asarray(idx, dtype=np.int64)
        failed = all_links[np.unique(idx)]
        peer = self.peer.copy()
        ga = self.offsets[failed[:, 0]] + failed[:, 1]
        gb = self.offsets[failed[:, 2]] + failed[:, 3]
        peer[ga] = -1
        peer[gb] = -1
        prev = self.attrs.get("failed_links", np.zeros((0, 4), dtype=np.int64))
        attrs = {**self.attrs, "failed_links": np.concatenate([prev, failed])}
        return replace(self, name=f"{self.name} minus {len(attrs['failed_links'])} links", peer=peer, spec="",
                       attrs=attrs)

    def is_connected(self) -> bool:
        import scipy.sparse.csgraph as csg
        return csg.connected_components(self.adjacency(), directed=False)[0] <= 1
    @classmethod
    def from_links(cls, name: str, ports: np.ndarray, links: np.ndarray, endpoints=None, **kw) -> "Network":
        """Build from per-router port counts and links [[ra, pa, rb, pb], ...] (validated)."""
        ports = np.asarray(ports, dtype=np.int64)
        n = len(ports)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(ports, out=offsets[1:])
        links = np.asarray(links, dtype=np.int64).reshape(-1, 4)
        _check_links(ports, links)
        total = int(offsets[-1])
        peer = np.full(total, -1, dtype=index_dtype(total))
        ga = offsets[links[:, 0]] + links[:, 1]
        gb = offsets[links[:, 2]] + links[:, 3]
        peer[ga] = gb
        peer[gb] = ga
        if endpoints is None:
            endpoints = np.zeros(n, dtype=np.int32)
        endpoints = np.broadcast_to(np.asarray(endpoints, dtype=np.int32), (n,)).copy()
        if (endpoints < 0).any():
            raise ParameterError("endpoints: counts must be >= 0")
        return cls(name, offsets, peer, endpoints, **kw)

    @classmethod
    def from_edges(cls, name: str, n: int, edges, endpoints=None, **kw) -> "Network":
        """Simple graph (u, v) pairs -> ports numbered per router in edge order."""
        edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        if len(edges) and (edges.min() < 0 or edges.max() >= n):
            raise ParameterError(f"edges: router ids must be in 0..{n - 1}")
        ends = edges.ravel()
        order = np.argsort(ends, kind="stable")
        counts = np.bincount(ends, minlength=n)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        port = np.empty(len(ends), dtype=np.int64)
        port[order] = np.arange(len(ends)) - np.repeat(starts, counts)
        port = port.reshape(-1, 2)
        links = np.stack([edges[:, 0], port[:, 0], edges[:, 1], port[:, 1]], axis=1)
        return cls.from_links(name, counts, links, endpoints, **kw)

    def with_endpoints(self, p) -> "Network":
        ep = np.broadcast_to(np.asarray(p, dtype=np.int32), (self.num_routers,)).copy()
        if (ep < 0).any():
            raise ParameterError(f"p={p!r}: endpoints per router must be >= 0")
        return replace(self, endpoints=ep)

    # ---- queries ----------------------------------------------------------------------------
    @property
    def num_routers(self) -> int:
        return len(self.offsets) - 1

    @cached_property
    def ports(self) -> np.ndarray:
        """(n,) number of ports of each router (connected or not)."""
        return np.diff(self.offsets)

    @cached_property
    def port_router(self) -> np.ndarray:
        """(total ports,) router that owns each global port."""
        return np.repeat(np.arange(self.num_routers, dtype=index_dtype(self.num_routers)), self.ports)

    @cached_property
    def degree(self) -> np.ndarray:
        """(n,) connected ports per router."""
        c = np.zeros(len(self.peer) + 1, dtype=np.int64)
        np.cumsum(self.peer >= 0, out=c[1:])
        return c[self.offsets[1:]] - c[self.offsets[:-1]]

    @property
    def radix(self) -> int:
        """Maximum network degree (connected network ports)."""
        return int(self.degree.max()) if self.num_routers else 0

    @property
    def num_links(self) -> int:
        return int((self.peer >= 0).sum()) // 2

    @property
    def num_endpoints(self) -> int:
        return int(self.endpoints.sum())

    @property
    def uniform_ports(self) -> int | None:
        p = self.ports
        return int(p[0]) if len(p) and (p == p[0]).all() else None

    def neighbor(self, router: int, port: int) -> tuple[int, int]:
        """(router, port) at the far end of `port` of `router`, or (-1, -1) if unconnected."""
        self._check_port(router, port)
        g = int(self.peer[self.offsets[router] + port])
        if g < 0:
            return -1, -1
        r = int(self.port_router[g])
        return r, g - int(self.offsets[r])

    def peer_table(self) -> tuple[np.ndarray, np.ndarray]:
        """(peer router, peer port) per global port; -1 where unconnected."""
        g = self.peer.astype(np.int64)
        ok = g >= 0
        r = np.full(len(g), -1, dtype=np.int64)
        r[ok] = self.port_router[g[ok]]
        p = np.full(len(g), -1, dtype=np.int64)
        p[ok] = g[ok] - self.offsets[r[ok]]
        return r, p

    def links(self) -> np.ndarray:
        """(m, 4) int64 [router_a, port_a, router_b, port_b], each link once (a's global port < b's)."""
        g = np.nonzero(self.peer > np.arange(len(self.peer)))[0]
        gb = self.peer[g].astype(np.int64)
        ra = self.port_router[g].astype(np.int64)
        rb = self.port_router[gb].astype(np.int64)
        return np.stack([ra, g - self.offsets[ra], rb, gb - self.offsets[rb]], axis=1)

    def csr(self):
        """Router adjacency (indptr, indices) over connected ports, in port order (multi-edges kept)."""
        ok = self.peer >= 0
        c = np.zeros(len(self.peer) + 1, dtype=np.int64)
        np.cumsum(ok, out=c[1:])
        indptr = c[self.offsets]
        indices = self.port_router[self.peer[ok]]
        return indptr, indices

    def adjacency(self):
        """scipy.sparse CSR adjacency matrix (router x router, 1 per link)."""
        import scipy.sparse as sp

        indptr, indices = self.csr()
        n = self.num_routers
        return sp.csr_matrix((np.ones(len(indices), dtype=np.int8), indices, indptr), shape=(n, n))

    def to_networkx(self, max_routers: int = 200_000):
        import networkx as nx

        if self.num_routers > max_routers:
            raise ParameterError(f"to_networkx: {self.num_routers} routers is more than max_routers={max_routers}")
        g = nx.MultiGraph(name=self.name)
        for r in range(self.num_routers):
            g.add_node(r, endpoints=int(self.endpoints[r]))
        for ra, pa, rb, pb in self.links().tolist():
            g.add_edge(ra, rb, port_a=pa, port_b=pb)
        return g

    def same_netlist(self, other: "Network") -> bool:
        return (np.array_equal(self.offsets, other.offsets) and np.array_equal(self.peer, other.peer)
                and np.array_equal(self.endpoints, other.endpoints))

    def _check_port(self, router: int, port: int) -> None:
        if not 0 <= router < self.num_routers:
            raise ParameterError(f"router={router}: must be in 0..{self.num_routers - 1}")
        if not 0 <= port < self.ports[router]:
            raise ParameterError(f"port={port}: router {router} has ports 0..{self.ports[router] - 1}")

    def __repr__(self) -> str:
        return (f"Network({self.name!r}, routers={self.num_routers}, links={self.num_links}, "
                f"radix={self.radix}, endpoints={self.num_endpoints})")


def _check_links(ports: np.ndarray, links: np.ndarray) -> None:
    """Raise ParameterError naming the first bad link: range, self-link, port used twice."""
    n = len(ports)
    for col, what in ((0, "router_a"), (2, "router_b")):
        bad = np.nonzero((links[:, col] < 0) | (links[:, col] >= n))[0]
        if len(bad):
            raise ParameterError(f"links[{bad[0]}]: {what}={links[bad[0], col]} is not a router (0..{n - 1})")
    for col, what in ((1, "port_a"), (3, "port_b")):
        r = links[:, col - 1]
        bad = np.nonzero((links[:, col] < 0) | (links[:, col] >= ports[r]))[0]
        if len(bad):
            i = bad[0]
            raise ParameterError(f"links[{i}]: {what}={links[i, col]} out of range for router {r[i]} (0..{ports[r[i]] - 1})")
    bad = np.nonzero(links[:, 0] == links[:, 2])[0]
    if len(bad):
        raise ParameterError(f"links[{bad[0]}]: self-link on router {links[bad[0], 0]}")
    offsets = np.concatenate([[0], np.cumsum(ports)])
    g = np.concatenate([offsets[links[:, 0]] + links[:, 1], offsets[links[:, 2]] + links[:, 3]])
    order = np.argsort(g, kind="stable")
    dup = np.nonzero(g[order][1:] == g[order][:-1])[0]
    if len(dup):
        i = int(order[dup[0] + 1]) % len(links)
        side = "a" if int(order[dup[0] + 1]) < len(links) else "b"
        raise ParameterError(f"links[{i}]: port_{side} of router {links[i, 0 if side == 'a' else 2]} is already used by another link")
