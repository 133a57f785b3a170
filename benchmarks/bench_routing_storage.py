"""Routing state per router: arithmetic PolarStar unit vs table-based routing, across the design space.

For every radix (network degree q + 1 + d') from 8 to 128 (step --step), the largest IQ and the
largest Paley PolarStar; columns are bits per router:
  arith       arithmetic unit (GF(q) log/antilog, m×m supernode table, f, f⁻¹, adjacency, own id)
  tbl_port    table with one output port per destination          n·⌈log2 P⌉
  tbl_min     table with all minimal ports per destination         n·P
  tbl_polar   Polarized table (Δt ∈ {-1,0,1} per port + distance)  2·n·P + 2·n
Run:  python benchmarks/bench_routing_storage.py [--step 8] [--time]
--time also measures the vectorized arithmetic next hop and D on the 1,064-router network.
"""
from __future__ import annotations

import argparse
import time

from topologies.polarstar import design_space
from routing_logic.base import bits
from routing_logic.polarstar import arithmetic_storage_bits
from routing_logic.table import table_storage_bits


def rows(radixes):
    out = []
    for radix in radixes:
        for sn in ("iq", "paley"):
            pts = [p for p in design_space(radix, supernodes=(sn,))]
            if not pts:
                continue
            p = pts[0]
            m = p.routers // (p.q * p.q + p.q + 1)
            P = p.degree + p.q + 1
            a = arithmetic_storage_bits(p.q, m, p.degree)["total"]
            t = table_storage_bits(p.routers, P)
            polar = 2 * p.routers * P + p.routers * bits(4)
            out.append((radix, sn, p.q, p.degree, p.routers, a, t["single_port"], t["all_minimal_ports"], polar))
    return out


def fmt(n: int) -> str:
    for unit, k in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= 10 * k:
            return f"{n / k:.1f}{unit}"
    return str(n)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=8)
    ap.add_argument("--time", action="store_true")
    args = ap.parse_args(argv)
    radixes = sorted(set(range(8, 129, args.step)) | {15, 128})
    data = rows(radixes)
    head = ("radix", "sn", "q", "d'", "routers", "arith", "tbl_port", "tbl_min", "tbl_polar", "tbl_min/arith")
    print("  ".join(f"{h:>9}" for h in head))
    for r, sn, q, d, n, a, tp, tm, pol in data:
        cells = (r, sn, q, d, n, a, fmt(tp), fmt(tm), fmt(pol), f"{tm / a:.0f}x")
        print("  ".join(f"{str(c):>9}" for c in cells))
    ratios = [tm / a for *_, a, tp, tm, pol in data]
    print(f"\n{len(data)} configurations; table (all minimal ports) / arithmetic: "
          f"{min(ratios):.0f}x .. {max(ratios):.0f}x; arithmetic bits: "
          f"{min(a for *_, a, tp, tm, pol in data)} .. {max(a for *_, a, tp, tm, pol in data)}")
    if args.time:
        import numpy as np

        from topologies import polarstar
        from routing_logic.polarstar import PolarStarArithmetic

        net = polarstar(11, "iq", 3)
        unit = PolarStarArithmetic(net.structure)
        c = np.arange(net.num_routers)
        for name, fn in (("distance", unit.distance), ("next_port", unit.next_port)):
            t0 = time.perf_counter()
            fn(c[:, None], c[None, :])
            dt = time.perf_counter() - t0
            print(f"{name}: all {net.num_routers ** 2} pairs of the 1,064-router PolarStar in {dt:.2f} s "
                  f"({dt / net.num_routers ** 2 * 1e9:.0f} ns/pair, NumPy)")


if __name__ == "__main__":
    main()
