"""`pstar route SPEC --routing R [--check] [--vcs V] [--vc-policy P]`: build a routing, verify it against BFS.

Without --check: build the routing (which refuses a routing/VC pair with a channel dependency
cycle, naming the cycle) and print its VCs and storage. With --check: every ordered router pair
(or, for big networks, every destination from --sources sampled sources) is checked against BFS:
  minimal       every route the routing can produce has the BFS length
  max_hops      longest route it can produce (Polarized: exact longest path of its route graph)
  mean_hops     mean hops of the route taken on an idle network (select rule: priority, port)
plus the deadlock verdict (exact channel dependency graph when it fits, else the VC-monotone
argument or a sampled graph), the VC count and the storage bits per router.
"""
from __future__ import annotations

import time

import numpy as np

from topologies import build
from topologies.distances import distance_matrix
from topologies.errors import ParameterError

from contract.cli import add_router_arguments
from routing_logic.base import EJECT, select, walk_idle
from routing_logic.deadlock import check_deadlock, deadlock_verdict
from routing_logic.polarstar import PolarStarArithmetic, verify_against_bfs
from routing_logic.registry import ROUTINGS, make_routing
from routing_logic.table import ORACLES, table_storage_bits

from . import SPEC_HELP, Result, add_quiet, integer, progress, table

ALL_PAIRS_LIMIT = 12_000        # BFS all pairs up to this many routers, else sampled sources
POLARIZED_ALL_SOURCES = 300     # Polarized route graphs from every source up to this size
WALK_PAIRS = 200_000            # idle-network walks on at most this many pairs
EXACT_CDG_STATES = 5_000_000    # build the exact channel dependency graph up to about this many states


def add_parser(sub):
    p = sub.add_parser("route", help="build a routing on a topology; --check verifies it against BFS")
    p.add_argument("spec", metavar="SPEC", help=SPEC_HELP.format(example="polarstar:q=11,supernode=iq,degree=3"))
    p.add_argument("--routing", required=True, metavar="R", help=f"one of: {', '.join(ROUTINGS)}")
    p.add_argument("--check", action="store_true", help="verify routes, deadlock freedom and storage")
    add_router_arguments(p, only=("vcs", "vc_policy"), computed={"vcs": "the routing's, deadlock-free by construction"})
    p.add_argument("--distances", default="auto",
                   help=f"distance source for polarized/valiant/ugal: {', '.join(ORACLES)}")
    p.add_argument("--paths", default=None, help="polarstar only: single (default) or all minimal ports")
    p.add_argument("--sources", type=integer, default=None,
                   help="check only this many sampled sources (default: all when small)")
    p.add_argument("--seed", type=integer, default=0, help="RNG seed for sampling and Valiant intermediates")
    p.add_argument("--exact-deadlock", action="store_true", help="always build the exact channel dependency graph")
    p.add_argument("--pair", default=None, metavar="S,T", help="print the idle-network route from router S to T")
    add_quiet(p)
    return p


def _params(args) -> dict:
    params = {}
    if args.vcs is not None:
        params["vcs"] = args.vcs
    if args.routing in ("polarized", "valiant", "ugal"):
        params["distances"] = args.distances
    elif args.distances != "auto":
        raise ParameterError(f"--distances: only for polarized, valiant, ugal (routing={args.routing})")
    if args.paths is not None:
        if args.routing != "polarstar":
            raise ParameterError(f"--paths: only for routing polarstar (routing={args.routing})")
        params["paths"] = args.paths
    return params


def _bfs_rows(net, sources):
    """BFS distances from `sources` to every router, (len(sources), n) int."""
    import scipy.sparse.csgraph as csg

    d = csg.shortest_path(net.adjacency(), unweighted=True, indices=sources)
    if np.isinf(d).any():
        raise ParameterError(f"network {net.name!r}: not connected")
    return d.astype(np.int64)


def run(args) -> Result:
    t0 = time.perf_counter()
    if args.routing not in ROUTINGS:
        raise ParameterError(f"routing={args.routing!r}: unknown; allowed: {', '.join(ROUTINGS)}")
    if args.sources is not None and args.sources < 1:
        raise ParameterError(f"--sources={args.sources}: must be >= 1")
    net = build(args.spec)
    n = net.num_routers
    params = _params(args)
    routing = make_routing(args.routing, net, check_deadlock=not args.check, vc_policy=args.vc_policy, **params)
    data = {"spec": net.spec, "network": net.name, "routers": n, "routing": routing.name,
            "vcs": routing.num_vcs, "vc_policy": routing.vc_policy.describe()}
    if getattr(routing, "oracle", None) is not None:
        data["distances"] = routing.oracle.kind
    sb = routing.storage_bits()
    data["storage_bits_per_router"] = sb["total"]
    data["storage_breakdown"] = {k: v for k, v in sb.items() if k != "total"}
    data["table_min_storage_bits_per_router"] = table_storage_bits(n, int(net.ports.max()))["total"]
    if args.pair is not None:
        data.update(_pair(routing, args))
    if args.check:
        data.update(_check(net, routing, args))
    else:
        data.update(deadlock_verdict(routing).as_dict())
    data["seconds"] = round(time.perf_counter() - t0, 3)
    return Result(data, table([(k, v) for k, v in data.items() if k != "route"]))


def _pair(routing, args) -> dict:
    try:
        s, t = (int(v) for v in args.pair.split(","))
    except ValueError:
        raise ParameterError(f"--pair={args.pair!r}: expected two router ids S,T") from None
    routing.check_router(s, "src")
    routing.check_router(t, "dst")
    st = routing.inject(s, t, occupancy=lambda port: 0, rng=np.random.default_rng(args.seed))
    c, path, steps = s, [s], []
    for _ in range(int(routing.max_route_length or routing.n) + 1):
        cands = routing.route(c, st)
        pick = select(cands, lambda port, vc: 0)
        steps.append({"router": c, "candidates": [list(x) for x in cands], "chosen": list(pick)})
        if pick.port == EJECT:
            break
        st = routing.advance(c, st, pick.port)
        c = routing.neighbor(c, pick.port)
        path.append(c)
    return {"path": path, "hops": len(path) - 1, "route": steps}


def _deadlock(routing, args, rng):
    """Exact CDG when it is small enough (or --exact-deadlock), else the VC-monotone argument,
    else a CDG from a few sampled sources (which can only prove a cycle)."""
    if args.exact_deadlock or routing.cdg_state_estimate() <= EXACT_CDG_STATES:
        bar = progress(args, None, "channel dependency graph")
        try:
            return check_deadlock(routing, progress=bar.update)
        except ParameterError:
            if args.exact_deadlock:
                raise
        finally:
            bar.close()
    rep = deadlock_verdict(routing)          # vc-monotone when V covers the longest route
    if rep.method == "vc-monotone":
        return rep
    k = min(routing.n, 4)
    return check_deadlock(routing, sources=np.sort(rng.choice(routing.n, size=k, replace=False)))


def _check(net, routing, args) -> dict:
    n = net.num_routers
    rng = np.random.default_rng(args.seed)
    out = {}
    exhaustive = args.sources is None and n <= ALL_PAIRS_LIMIT
    if routing.name == "polarized" and args.sources is None and n > POLARIZED_ALL_SOURCES:
        exhaustive = False
    if exhaustive:
        sources = np.arange(n)
    else:
        k = min(n, args.sources or (16 if routing.name == "polarized" else 64))
        sources = np.sort(rng.choice(n, size=k, replace=False))
    out["pairs_checked"] = int(len(sources) * (n - 1))
    out["sampled"] = not exhaustive
    full_bfs = n <= ALL_PAIRS_LIMIT
    bfs = distance_matrix(net) if full_bfs else None
    rows = bfs[sources].astype(np.int64) if full_bfs else _bfs_rows(net, sources)
    off = np.ones(rows.shape, dtype=bool)
    off[np.arange(len(sources)), sources] = False
    out["bfs_max_hops"] = int(rows[off].max()) if off.any() else 0
    out["bfs_mean_hops"] = round(float(rows[off].mean()), 6) if off.any() else 0.0

    ok = True
    if routing.name == "polarstar":
        unit = PolarStarArithmetic(net.structure)
        if exhaustive:
            bar = progress(args, unit.n_er, "polarstar all pairs")
            res = verify_against_bfs(unit, net, bfs, masks=routing.paths == "all" or unit.ports <= 32,
                                     progress=bar.update)
            bar.close()
            for key in ("distance_mismatches", "next_hop_failures", "minimal_port_mismatches"):
                out[key] = res[key]
                ok &= res[key] == 0
        else:
            # D against BFS on the sampled rows; the produced paths are walked below
            d = unit.distance(sources[:, None], np.arange(n)[None, :])
            out["distance_mismatches"] = int((d != rows).sum())
            ok = out["distance_mismatches"] == 0

    # idle-network walk on (a sample of) the checked pairs
    s_w = np.repeat(sources, n)
    t_w = np.tile(np.arange(n), len(sources))
    keep = s_w != t_w
    s_w, t_w = s_w[keep], t_w[keep]
    if len(s_w) > WALK_PAIRS:
        pick = rng.choice(len(s_w), size=WALK_PAIRS, replace=False)
        s_w, t_w = s_w[pick], t_w[pick]
    limit = int(routing.max_route_length or 4 * out["bfs_max_hops"]) + 2
    hops, _ = walk_idle(routing, s_w, t_w, rng, limit=limit)
    pos = {int(s): i for i, s in enumerate(sources)}
    ref = rows[np.array([pos[int(s)] for s in s_w], dtype=np.int64), t_w] if len(s_w) else np.zeros(0, int)
    if (hops < 0).any():
        raise RuntimeError(f"{routing.name}: {int((hops < 0).sum())} idle-network routes did not terminate")
    out["walked_pairs"] = int(len(s_w))
    out["mean_hops"] = round(float(hops.mean()), 6) if len(hops) else 0.0
    walk_minimal = bool((hops == ref).all())

    name = routing.name
    if name in ("min", "polarstar"):
        out["minimal"] = bool(ok and walk_minimal)
        out["max_hops"] = int(hops.max()) if len(hops) else 0
        if name == "polarstar" and exhaustive:
            out["max_hops"] = max(out["max_hops"], res["max_hops"])
        if name == "min":
            out["max_hops"] = out["bfs_max_hops"]   # every candidate is minimal (BFS table)
    elif name == "polarized":
        bar = progress(args, len(sources), "polarized route graphs")
        L = routing.route_lengths(sources, progress=bar.update)
        bar.close()
        longest = L["longest"][off]
        out["max_hops"] = int(longest.max())
        out["minimal"] = bool((longest == rows[off]).all())
        out["shortest_is_minimal"] = bool((L["shortest"][off] == rows[off]).all())
        out["route_length_bound"] = int(routing.max_route_length)
        out["dead_ends"] = int(L["dead_ends"])
        out["livelocked_pairs"] = int(L["cyclic"])
        out["longest_route_histogram"] = np.bincount(longest).tolist()
    else:  # valiant / ugal: every intermediate router r is possible: max_r D(s,r) + D(r,t)
        if full_bfs:
            inter = np.arange(n)
            d_rt = bfs.astype(np.int64)
        else:
            inter = np.sort(rng.choice(n, size=min(n, 256), replace=False))
            d_rt = routing.oracle.dist_of(inter[:, None], np.arange(n)[None, :])
            out["intermediates_sampled"] = len(inter)
        longest = np.zeros(rows.shape, dtype=np.int64)
        step = max(1, (1 << 26) // max(1, len(inter) * n))
        for i in range(0, len(sources), step):
            longest[i:i + step] = (rows[i:i + step, inter][:, :, None] + d_rt[None]).max(axis=1)
        out["max_hops"] = int(longest[off].max())
        out["minimal"] = bool((longest[off] == rows[off]).all() and walk_minimal)

    out["vcs"] = routing.num_vcs
    out.update(_deadlock(routing, args, rng).as_dict())
    if out.get("deadlock_check") == "cdg-sampled" and out["deadlock_free"]:
        out["deadlock_free"] = None          # no cycle among the sampled sources: not a proof
    return out
