"""`pstar hostswitch --hosts N --radix R [--switches M] [--time S] [--seed K] [--out FILE]`.

Optimizes a host-switch graph for the h-ASPL by simulated annealing (2-neighbor swing or swap)
and reports it with the Theorem 2 lower bound and the continuous Moore bound (host-switch paper).
Without --switches it uses m_opt, the minimizer of the continuous Moore bound.
"""
from __future__ import annotations

import json
import math
import sys

from topologies.errors import ParameterError
from topologies.spec import check_memory

from ..outputs import Output, check_output
from . import Result, add_quiet, integer, table

# Above this many hosts the m_opt search (optimal_switches, one Moore bound per m in 1..2n+1)
# alone takes minutes; the annealer's all-sources BFS is O(m²) per step anyway.
HOSTS_LIMIT = 100_000


def add_parser(sub):
    p = sub.add_parser("hostswitch", help="optimize a host-switch graph (h-ASPL) by simulated annealing")
    p.add_argument("--hosts", type=integer, required=True, help="number of hosts n")
    p.add_argument("--radix", type=integer, required=True, help="ports per switch r")
    p.add_argument("--switches", type=integer, default=None, help="number of switches m (default: m_opt)")
    p.add_argument("--time", type=float, default=None, help="time budget in seconds (default 10 when --steps is not given)")
    p.add_argument("--steps", type=integer, default=None, help="fixed number of SA steps instead of a time budget")
    p.add_argument("--seed", type=integer, default=0,
                   help="seed of the random start graph and of the annealing (default 0)")
    p.add_argument("--operation", choices=("swing", "swap"), default="swing",
                   help="2-neighbor swing (default) or swap only (keeps the host distribution)")
    p.add_argument("--t0", type=float, default=5e-5, help="start temperature (h-ASPL units)")
    p.add_argument("--t1", type=float, default=1e-7, help="end temperature (h-ASPL units)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="write the edge list in Graph Golf form: a first line n m r, then the edges "
                        "(hosts 0..n-1, switches n..n+m-1)")
    add_quiet(p)
    return p


def check_budget(hosts: int, radix: int, switches: int | None) -> None:
    """Refuse, before anything is built, host counts whose search or annealing state cannot fit."""
    if hosts > HOSTS_LIMIT:
        raise ParameterError(f"hosts={hosts}: at most {HOSTS_LIMIT:,} (the m_opt search and the annealer's "
                             f"all-pairs BFS grow with hosts²)")
    if radix < 3 or hosts < 3:
        return                       # optimize() names the bad value
    m = switches if switches is not None and switches > 0 else math.ceil((hosts - 2) / (radix - 2))
    words = (m + 63) // 64
    # reach/frontier/next bitsets (m × words uint64 each) and the adjacency/edge-id tables (m × r int64)
    check_memory(3 * m * words * 8 + 5 * m * radix * 8, f"hostswitch: {m:,} switches of radix {radix}")


def run(args) -> Result:
    if args.time is not None and args.steps is not None:
        raise ParameterError("time/steps: give one budget, not both")
    out = check_output(args.out, "--out") if args.out is not None else None
    check_budget(args.hosts, args.radix, args.switches)
    from topologies.hostswitch import optimize

    seconds = args.time if args.time is not None else (None if args.steps is not None else 10.0)
    res, bounds = optimize(args.hosts, args.radix, args.switches, steps=args.steps, seconds=seconds, seed=args.seed,
                           operation=args.operation, progress=not args.quiet and sys.stderr.isatty(),
                           t0=args.t0, t1=args.t1)
    g = res.graph
    check = g.stats()
    data = {"hosts": g.n, "radix": g.r, "switches": g.m, "h_aspl": check["h_aspl"], "h_diameter": check["h_diameter"],
            "lower_bound": bounds["lower_bound"], "moore_bound": bounds["moore_bound"], "m_opt": bounds["m_opt"],
            "diameter_lower_bound": bounds["diameter_lower_bound"], "initial_h_aspl": res.initial_h_aspl,
            "steps": res.steps, "evaluations": res.evaluations, "accepted": res.accepted,
            "seconds": round(res.seconds, 3), "operation": args.operation, "seed": args.seed,
            "switch_links": int(len(g.edges)),
            "host_distribution": {str(k): int(v) for k, v in zip(*_hist(g.hosts))}}
    outputs = []
    if out is not None:
        outputs.append(Output("--out", out, g.write_edge_list, key="out"))
        data["out"] = str(out)
    rows = [(k, f"{v:.6f}" if isinstance(v, float) else (json.dumps(v) if isinstance(v, dict) else v)) for k, v in data.items()]
    return Result(data, table(rows), outputs)


def _hist(hosts):
    import numpy as np

    vals, counts = np.unique(hosts, return_counts=True)
    return vals.tolist(), counts.tolist()
