"""Channel dependency graph (Dally & Seitz) of a routing + VC policy on a Network, and its cycles.

A channel is (directed link, VC): global port g of the sending router and a VC, id g*V + vc.
A packet that holds channel a and may request channel b next makes a -> b a dependency; the
routing + VC policy is deadlock-free (for wormhole/VC flow control with these routings) when the
graph has no cycle.

The graph is built by enumerating every routing state a packet can be in. A state is the router
plus the header fields route() reads (`Routing.cdg_canonical` blanks the rest; hops are capped at
V - 1 because they only select the VC), so equivalent packets share one node. Instead of the
quadratic product "every in-channel × every out-channel" the graph keeps the state nodes:
in-channel -> state -> out-channel, whose cycles are exactly those of the channel graph.
Strongly connected components come from scipy; a cycle is read off a non-trivial component and
named channel by channel.

`assert_deadlock_free` is what `registry.make_routing` calls, so building a routing with a VC
count that allows a cycle fails with a one-line message naming it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from topologies.errors import ParameterError

from .base import EJECT, Routing, StateArrays


class DeadlockError(ParameterError):
    """The routing/VC pair has a channel dependency cycle (the message names it)."""


@dataclass
class CDGReport:
    deadlock_free: bool
    method: str                      # "cdg" (all sources), "cdg-sampled", "vc-monotone", "turn-classes"
    vcs: int
    channels: int = 0                # channels that carry some dependency
    states: int = 0                  # routing states enumerated
    dependencies: int = 0            # edges of the state graph
    cycle: list = field(default_factory=list)   # [(router, port, next router, vc), ...]
    seconds: float = 0.0

    def cycle_text(self, limit: int = 8) -> str:
        hops = [f"r{r}.p{p}->r{nr} vc{v}" for r, p, nr, v in self.cycle]
        if len(hops) > limit:
            hops = hops[:limit] + ["..."]
        return " -> ".join(hops + hops[:1]) if hops else ""

    def as_dict(self) -> dict:
        d = {"deadlock_free": self.deadlock_free, "deadlock_check": self.method}
        if self.method not in ("vc-monotone", "turn-classes"):
            d.update(cdg_channels=self.channels, cdg_states=self.states, cdg_dependencies=self.dependencies)
        if self.cycle:
            d["deadlock_cycle"] = self.cycle_text()
            d["deadlock_cycle_length"] = len(self.cycle)
        return d


def _unique_sorted(a: np.ndarray) -> np.ndarray:
    """np.unique by sorting (numpy's hash path is slow on tens of millions of int64)."""
    a = np.sort(a)
    return a[np.concatenate([[True], a[1:] != a[:-1]])] if len(a) else a


def _unique_inverse(a: np.ndarray):
    """(unique sorted values, index of first occurrence of each, inverse), by a stable sort."""
    order = np.argsort(a, kind="stable")
    sa = a[order]
    head = np.concatenate([[True], sa[1:] != sa[:-1]]) if len(a) else np.zeros(0, dtype=bool)
    group = np.cumsum(head) - 1
    inv = np.empty(len(a), dtype=np.int64)
    inv[order] = group
    return sa[head], order[head], inv


def _pack(c, st: StateArrays, n: int, V: int) -> np.ndarray:
    B = n + 1
    hops = np.minimum(st.hops, V - 1)
    turns = np.minimum(st.turns, V - 1)
    return ((((((c * B + st.src + 1) * B + st.dst + 1) * B + st.inter + 1) * 2 + st.phase) * V + hops) * V
            + turns) * 2 + st.down


MAX_STATES = 10_000_000     # abort an exact check beyond this many states (about 1 GB)


def channel_dependency_graph(routing: Routing, sources=None, progress=None, max_states: int = MAX_STATES):
    """Enumerate states from injection at `sources` (default: every router).

    Returns (csr adjacency over nodes [channels..., states...], number of channel nodes, stats).
    """
    net, n, V = routing.net, routing.n, routing.num_vcs
    too_big = ParameterError(
        f"routing={routing.name} vcs={V} on {net.name}: more than {max_states} routing states, too many for an "
        f"exact deadlock check; use vcs >= {routing.default_vcs()} (deadlock-free by construction)")
    if n >= 20_000:
        raise too_big
    sources = np.arange(n) if sources is None else np.asarray(sources, dtype=np.int64)
    n_ch = int(net.offsets[-1]) * V
    peer = net.peer.astype(np.int64)
    port_router = net.port_router.astype(np.int64)
    offsets = net.offsets.astype(np.int64)

    c, st = routing.cdg_initial(sources)
    c = np.asarray(c, dtype=np.int64)
    in_node = np.full(len(c), -1, dtype=np.int64)
    keys = np.zeros(0, dtype=np.int64)        # sorted keys of known states
    key_ids = np.zeros(0, dtype=np.int64)     # node id of each
    edges_src, edges_dst = [], []
    n_states = 0
    while len(c):
        st = routing.cdg_canonical(c, st)
        key = _pack(c, st, n, V)
        uk, first, inv = _unique_inverse(key)
        pos = np.searchsorted(keys, uk)
        known = pos < len(keys)
        known[known] = keys[pos[known]] == uk[known]
        ids = np.empty(len(uk), dtype=np.int64)
        ids[known] = key_ids[pos[known]]
        new = np.nonzero(~known)[0]
        ids[new] = n_ch + n_states + np.arange(len(new))
        n_states += len(new)
        if n_states > max_states:
            raise too_big
        if len(new):
            keys = np.concatenate([keys, uk[new]])
            key_ids = np.concatenate([key_ids, ids[new]])
            order = np.argsort(keys, kind="stable")
            keys, key_ids = keys[order], key_ids[order]
        node = ids[inv]
        entered = in_node >= 0
        edges_src.append(in_node[entered])
        edges_dst.append(node[entered])
        # expand only the states seen for the first time
        rep = first[new]
        cs, ss, nodes = c[rep], st[rep], ids[new]
        parent, c_child, child = routing.cdg_expand(cs, ss)
        junction = np.zeros(len(cs), dtype=bool)
        junction[parent] = True
        live = np.nonzero(~junction)[0]
        idx, port, vc, _ = routing.candidates_batch(cs[live], ss[live])
        idx = live[idx]
        moving = port != EJECT
        idx, port, vc = idx[moving], port[moving], vc[moving]
        g = offsets[cs[idx]] + port
        if (peer[g] < 0).any():
            bad = np.nonzero(peer[g] < 0)[0][0]
            raise RuntimeError(f"{routing.name}: candidate port {port[bad]} of router {cs[idx][bad]} has no link")
        ch = g * V + vc
        edges_src.append(nodes[idx])
        edges_dst.append(ch)
        nxt_c = port_router[peer[g]]
        nxt_st = routing.advance_batch(cs[idx], ss[idx], nxt_c)
        if len(nxt_c) + len(c_child) > 2 * max_states:
            raise too_big
        c = np.concatenate([nxt_c, np.asarray(c_child, dtype=np.int64)])
        st = StateArrays(*(np.concatenate([a, b]) for a, b in zip(nxt_st, child)))
        in_node = np.concatenate([ch, nodes[parent]])
        if progress:
            progress(len(new))
    src = np.concatenate(edges_src) if edges_src else np.zeros(0, dtype=np.int64)
    dst = np.concatenate(edges_dst) if edges_dst else np.zeros(0, dtype=np.int64)
    total = n_ch + n_states
    e = _unique_sorted(src * total + dst)
    src, dst = e // total, e % total
    adj = sp.csr_matrix((np.ones(len(e), dtype=np.int8), (src, dst)), shape=(total, total))
    used = np.union1d(src[src < n_ch], dst[dst < n_ch])
    return adj, n_ch, {"states": n_states, "dependencies": len(e), "channels": len(used)}


def find_cycle(adj, n_ch: int):
    """A cycle of channel nodes, or [] when the graph is acyclic."""
    ncomp, labels = connected_components(adj, directed=True, connection="strong")
    sizes = np.bincount(labels, minlength=ncomp)
    big = np.nonzero(sizes > 1)[0]
    if not len(big):
        return []
    comp = big[0]
    members = np.nonzero(labels == comp)[0]
    start = members[members < n_ch][0]
    indptr, indices = adj.indptr, adj.indices
    seen = {}
    path = []
    u = int(start)
    while u not in seen:
        seen[u] = len(path)
        path.append(u)
        nbrs = indices[indptr[u]:indptr[u + 1]]
        u = int(nbrs[labels[nbrs] == comp][0])
    cyc = path[seen[u]:]
    return [v for v in cyc if v < n_ch]


def check_deadlock(routing: Routing, sources=None, progress=None, max_states: int = MAX_STATES) -> CDGReport:
    """Build the CDG (from every source, or the given ones) and look for a cycle."""
    t0 = time.perf_counter()
    V = routing.num_vcs
    adj, n_ch, stats = channel_dependency_graph(routing, sources, progress, max_states)
    cyc = find_cycle(adj, n_ch)
    net = routing.net
    peer_router, _ = net.peer_table()
    named = []
    for ch in cyc:
        g, vc = divmod(int(ch), V)
        r = int(net.port_router[g])
        named.append((r, g - int(net.offsets[r]), int(peer_router[g]), vc))
    method = "cdg" if sources is None or len(np.unique(sources)) == routing.n else "cdg-sampled"
    return CDGReport(not named, method, V, stats["channels"], stats["states"], stats["dependencies"], named,
                     round(time.perf_counter() - t0, 3))


def deadlock_verdict(routing: Routing, exact: bool = False, sources=None, progress=None) -> CDGReport:
    """Verdict for a routing/VC pair.

    When the VC policy's classes cover the longest possible route (V >= routing.default_vcs():
    the route length for `hops`, every hop moves to a higher VC, "vc-monotone"; half of it plus
    one for `turns`, up*/down* within each class, "turn-classes"; routing_logic.base), the CDG
    is acyclic by construction; the graph is built only when that argument does not apply or
    `exact` is set.
    """
    if not exact and routing.max_route_length and routing.num_vcs >= routing.default_vcs():
        method = "turn-classes" if routing.vc_policy.name == "turns" else "vc-monotone"
        return CDGReport(True, method, routing.num_vcs)
    return check_deadlock(routing, sources, progress)


def assert_deadlock_free(routing: Routing, exact: bool = False, sources=None) -> CDGReport:
    rep = deadlock_verdict(routing, exact, sources)
    if not rep.deadlock_free:
        raise DeadlockError(f"routing={routing.name} with vcs={routing.num_vcs} on {routing.net.name} is not "
                            f"deadlock-free: channel dependency cycle of {len(rep.cycle)} channels: "
                            f"{rep.cycle_text()}")
    return rep


def min_vcs(make, max_vcs: int = 16, sources=None) -> tuple[int, CDGReport]:
    """Smallest V for which make(V) has an acyclic CDG (make: vcs -> Routing)."""
    rep = None
    for v in range(1, max_vcs + 1):
        rep = check_deadlock(make(v), sources)
        if rep.deadlock_free:
            return v, rep
    return -1, rep
