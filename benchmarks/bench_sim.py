"""Speed of the cycle-accurate model: router-cycles per second and peak memory.

Configuration of issue 5 (the BookSim2 comparison point): PolarStar q=11, IQ d'=3 (1,064 routers),
5 endpoints per router, 4 VCs x 32 flits, 4-flit packets, MIN routing, uniform traffic.
Each load runs in a fresh process (peak RSS is its own); the first, untimed run warms the
Numba cache. Usage: python benchmarks/bench_sim.py [--cycles N] [--loads 0.1,0.3,0.5]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
from topologies import polarstar
from sim.network_sim import NetworkSim
from contract.params import RouterParams
load, cycles = float(sys.argv[1]), int(sys.argv[2])
net = polarstar(11, "iq", 3, p=5)
sim = NetworkSim(net, "min", RouterParams(vcs=4, depth=32, packet_flits=4), "uniform", load, seed=1)
sim.run(1000)                      # warm-up (and JIT) not timed
t = time.perf_counter()
sim.run(cycles)
dt = time.perf_counter() - t
print(json.dumps({"load": load, "cycles": cycles, "seconds": round(dt, 2),
                  "router_cycles_per_second": round(net.num_routers * cycles / dt),
                  "accepted": round(sim.ejected_flits / (net.num_endpoints * (cycles + 1000)), 3),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=3000)
    ap.add_argument("--loads", default="0.1,0.3,0.5")
    a = ap.parse_args()
    subprocess.run([sys.executable, "-c", CHILD, "0.1", "10"], check=True, capture_output=True)
    for load in a.loads.split(","):
        out = subprocess.run([sys.executable, "-c", CHILD, load, str(a.cycles)], check=True, capture_output=True,
                             text=True)
        d = json.loads(out.stdout)
        print(f"load {d['load']:.2f}: {d['router_cycles_per_second']:,} router-cycles/s "
              f"({d['cycles']} cycles in {d['seconds']} s), accepted {d['accepted']}, peak RSS {d['peak_rss_mb']} MB",
              flush=True)


if __name__ == "__main__":
    main()
