"""Time and peak memory to build the largest PolarStar Network at given radixes.

Each build runs in a fresh subprocess so its peak RSS is its own.
Usage: python benchmarks/bench_build.py [RADIX ...]   (default: 64 128)
"""
from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from topologies.field import field
from topologies.polarstar import largest, polarstar
best = largest(int(sys.argv[1]))
field(best.q)  # galois field construction (JIT warm-up) timed separately
t1 = time.perf_counter()
net = polarstar(best.q, best.supernode, best.degree)
t2 = time.perf_counter()
print(json.dumps({"radix": int(sys.argv[1]), "q": best.q, "supernode": best.supernode, "degree": best.degree,
                  "routers": net.num_routers, "links": net.num_links, "field_seconds": round(t1 - t0, 2),
                  "build_seconds": round(t2 - t1, 2), "total_seconds": round(t2 - t0, 2),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def main(radixes):
    rows = []
    for r in radixes:
        out = subprocess.run([sys.executable, "-c", CHILD, str(r)], capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout))
        d = rows[-1]
        print(f"radix {r:4d}: q={d['q']} {d['supernode']} d'={d['degree']}  {d['routers']:,} routers  "
              f"{d['links']:,} links  build {d['build_seconds']} s (total incl. imports/field {d['total_seconds']} s)  "
              f"peak RSS {d['peak_rss_mb']} MB", flush=True)
    return rows


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [64, 128])
