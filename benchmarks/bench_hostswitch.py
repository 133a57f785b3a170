"""Simulated annealing on host-switch graphs: h-ASPL reached against wall-clock time.

Runs the paper's Table 2 "minimum h-ASPL" cases (n = 1024; r = 15, m = 194 and r = 16, m = 183)
for a time budget each and prints the best h-ASPL at checkpoints, next to the Theorem 2 lower
bound, the continuous Moore bound and the paper's SA result (4.45 and 4.36).

    /work/venv/bin/python benchmarks/bench_hostswitch.py --time 600          # 10 minutes per case
    /work/venv/bin/python benchmarks/bench_hostswitch.py --time 60 --cases 15
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from topologies.hostswitch import (anneal, continuous_moore_bound, lower_bound, optimal_switches,  # noqa: E402
                                   random_host_switch_graph)

CASES = {15: (1024, 15, 194, 4.45), 16: (1024, 16, 183, 4.36)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time", type=float, default=600.0, help="seconds per case")
    ap.add_argument("--cases", type=int, nargs="*", default=[15, 16], help="radixes to run (15, 16)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--t0", type=float, default=5e-5, help="start temperature (h-ASPL units)")
    ap.add_argument("--t1", type=float, default=1e-7, help="end temperature (h-ASPL units)")
    ap.add_argument("--out", default=None, help="write the best graphs' edge lists to OUT-r<radix>.txt")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    report = []
    for r in args.cases:
        n, r, m, paper = CASES[r]
        g = random_host_switch_graph(n, m, r, seed=args.seed)
        marks = sorted({t for t in (1, 5, 10, 30, 60, 120, 300, 600, 1200) if t < args.time} | {args.time})
        rows = []

        def cb(h, marks=marks, rows=rows):
            while marks and h[0] >= marks[0]:
                rows.append((marks.pop(0), h[1], h[3]))

        t = time.perf_counter()
        res = anneal(g, seconds=args.time, seed=args.seed, t0=args.t0, t1=args.t1, progress=sys.stderr.isatty(),
                     callback=cb)
        wall = time.perf_counter() - t
        if not rows or rows[-1][1] != res.steps:
            rows.append((round(res.seconds, 1), res.steps, res.h_aspl))
        check = res.graph.stats()["h_aspl"]
        print(f"\n(n={n}, r={r}, m={m})  Theorem 2 lower bound {lower_bound(n, r):.4f}  continuous Moore bound "
              f"{continuous_moore_bound(n, m, r):.4f}  m_opt {optimal_switches(n, r)}  paper SA {paper}")
        print(f"{'seconds':>8} {'steps':>10} {'best h-ASPL':>12}")
        for s, k, h in rows:
            print(f"{s:8.1f} {k:10d} {h:12.5f}")
        print(f"final {res.h_aspl:.5f} (independent BFS check {check:.5f}), initial {res.initial_h_aspl:.5f}, "
              f"{res.evaluations} evaluations in {res.seconds:.1f} s ({res.evaluations / res.seconds:,.0f}/s), "
              f"wall {wall:.1f} s")
        if args.out:
            res.graph.write_edge_list(f"{args.out}-r{r}.txt")
        report.append({"hosts": n, "radix": r, "switches": m, "h_aspl": res.h_aspl, "check": check,
                       "seconds": res.seconds, "steps": res.steps, "evaluations": res.evaluations,
                       "paper": paper, "curve": rows})
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
