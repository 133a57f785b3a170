"""PolarStar bisection (PolarStar paper §11.1, Fig. 13): METIS cut fraction of the largest
PolarStar-IQ for each radix, next to the best "f-closed" cut (every IQ f-pair {2i, 2i+1} on one
side, so no ER link (x,a)-(y,f(a)) crosses; only supernode links are cut), which exists whenever
the number of f-pairs d'+1 is even.

    /work/venv/bin/python benchmarks/bench_bisection.py --radix 8 32
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from topologies import largest, polarstar  # noqa: E402
from topologies.metrics import bisection, cut_size  # noqa: E402


def best_f_closed_cut(net):
    sn = net.structure.sn
    pairs = sn.order // 2
    if pairs % 2 or not (sn.f == np.arange(sn.order) ^ 1).all():
        return None
    best = None
    for left in itertools.combinations(range(1, pairs), pairs // 2 - 1):      # pair 0 always on side 0
        side = np.ones(pairs, dtype=np.int8)
        side[[0, *left]] = 0
        parts_sn = side[np.arange(sn.order) // 2]
        c = sum(int(parts_sn[a] != parts_sn[b]) for a in range(sn.order) for b in sn.adj[a]) // 2
        if best is None or c < best[0]:
            best = (c, parts_sn)
    parts = np.tile(best[1], net.num_routers // sn.order)
    return cut_size(net, parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--radix", type=int, nargs=2, default=[8, 32], metavar=("LO", "HI"))
    ap.add_argument("--seeds", type=int, default=8)
    args = ap.parse_args(argv)
    print(f"{'radix':>5} {'q':>3} {'d_':>3} {'routers':>7} {'links':>7} {'METIS cut':>9} {'METIS %':>8} {'f-closed %':>10} {'s':>6}")
    fr, fc = [], []
    for radix in range(args.radix[0], args.radix[1] + 1):
        c = largest(radix, ("iq",))
        net = polarstar(c.q, "iq", c.degree)
        t = time.perf_counter()
        b = bisection(net, seeds=args.seeds)
        dt = time.perf_counter() - t
        s = best_f_closed_cut(net)
        fr.append(b.fraction)
        if s is not None:
            fc.append(min(s, b.cut) / net.num_links)
        sc = f"{100 * s / net.num_links:10.2f}" if s is not None else f"{'-':>10}"
        print(f"{radix:5d} {c.q:3d} {c.degree:3d} {net.num_routers:7d} {net.num_links:7d} {b.cut:9d} {100 * b.fraction:8.2f} {sc} {dt:6.2f}")
    print(f"mean METIS cut fraction over radix {args.radix[0]}-{args.radix[1]}: {100 * np.mean(fr):.2f}% "
          f"(paper, Fig. 13, radix 8-128: 29.5%)")
    if fc:
        print(f"where an f-closed split exists ({len(fc)} radixes), best of METIS and f-closed: {100 * np.mean(fc):.2f}%")


if __name__ == "__main__":
    main()
