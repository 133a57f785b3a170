"""All-pairs BFS speed (topologies/distances.py, bit-parallel over sources).

Prints wall time of distance_stats (diameter, mean, histogram) and of host_distance_stats (h-ASPL)
for the 1,064-router PolarStar and ~10,000-router networks.

    /work/venv/bin/python benchmarks/bench_bfs.py
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from topologies import build  # noqa: E402
from topologies.distances import distance_stats, host_distance_stats  # noqa: E402

SPECS = ["polarstar:q=11,supernode=iq,degree=3", "lps:p=23,q=13", "polarstar:q=23,supernode=iq,degree=8",
         "polarstar:q=37,supernode=iq,degree=3", "jellyfish:n=10000,d=16,seed=1", "slimfly:q=71"]


def best_of(fn, repeat):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return min(ts), out


def main():
    print(f"{'network':<44} {'routers':>8} {'links':>9} {'diam':>4} {'mean':>7} {'BFS s':>8} {'h-ASPL s':>9}")
    for spec in sys.argv[1:] or SPECS:
        net = build(spec)
        rep = 5 if net.num_routers < 3000 else 1
        t, st = best_of(lambda: distance_stats(net), rep)
        th, _ = best_of(lambda: host_distance_stats(net), rep)
        print(f"{net.name:<44} {net.num_routers:8d} {net.num_links:9d} {st.diameter!s:>4} {st.mean_distance:7.4f} "
              f"{t:8.3f} {th:9.3f}")


if __name__ == "__main__":
    main()
