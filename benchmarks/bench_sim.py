"""Speed of the cycle-accurate model: router-cycles per second, peak memory, Numba compile time.

Configuration of issue 5 (the BookSim2 comparison point): PolarStar q=11, IQ d'=3 (1,064 routers),
5 endpoints per router, 4 VCs x 32 flits, 4-flit packets, MIN routing, uniform traffic.
Each load runs in a fresh process (peak RSS is its own); the first, untimed run warms the
Numba cache. Speed is given per wall-clock second and per CPU second of the process (on a
machine shared with other jobs the CPU figure is the steadier one).

`--compile` measures instead the first `run` of a fresh process on the 26-router PolarStar with
an empty Numba cache (a new NUMBA_CACHE_DIR: the engine is compiled) and again with that cache
warm (the compiled engine is loaded), `--repeat` times each.

`--threads 1,2` runs each load on each thread count (`NetworkSim(threads=N)`, the parallel
engine above one thread); the accepted throughput must be the same for all.

`--routing R` times another routing (Polarized, Valiant, UGAL: with the VCs its policy needs,
`default_vcs`, unless `--vcs`); `--spec SPEC` another network, with the toolkit's default
endpoints and router parameters instead of issue 5's (e.g. `--spec
polarstar:q=3,supernode=iq,degree=3 --routing polarized --loads 0.6`, the 104-router lockstep's).

Usage: python benchmarks/bench_sim.py [--cycles N] [--loads 0.1,0.3,0.5] [--threads 1,2] [--repeat K]
       [--routing R] [--vcs V] [--spec SPEC] [--compile]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, sys, time
from topologies import build, polarstar
from sim.experiment import default_vcs
from sim.network_sim import NetworkSim
from contract.params import RouterParams
load, cycles, threads, routing, vcs, spec = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:7]
net = build(spec) if spec else polarstar(11, "iq", 3, p=5)
shape = {} if spec else {"depth": 32, "packet_flits": 4}
# 4 as in issue 5 (min, arithmetic PolarStar), or what the routing's VC policy needs
vcs = int(vcs) or default_vcs(net, routing, depth=RouterParams(**shape).depth)
params = RouterParams(vcs=vcs, **shape)
sim = NetworkSim(net, routing, params, "uniform", load, seed=1, threads=threads)
sim.run(1000)                      # warm-up (and JIT) not timed
t, c = time.perf_counter(), time.process_time()
sim.run(cycles)
dt, dc = time.perf_counter() - t, time.process_time() - c
print(json.dumps({"load": load, "cycles": cycles, "threads": threads, "routing": routing, "vcs": int(vcs),
                  "routers": net.num_routers, "seconds": round(dt, 2), "cpu_seconds": round(dc, 2),
                  "router_cycles_per_second": round(net.num_routers * cycles / dt),
                  "router_cycles_per_cpu_second": round(net.num_routers * cycles / dc),
                  "accepted": round(sim.ejected_flits / (net.num_endpoints * (cycles + 1000)), 3),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""

# the first run of a process: compiles the engine (empty cache) or loads it (warm cache)
COMPILE_CHILD = r"""
import json, time
from topologies import polarstar
from sim.network_sim import NetworkSim
from contract.params import RouterParams
sim = NetworkSim(polarstar(3, "iq", 0), "min", RouterParams(), "uniform", 0.3, seed=1)
t, c = time.perf_counter(), time.process_time()
sim.run(10)
print(json.dumps({"seconds": round(time.perf_counter() - t, 2), "cpu_seconds": round(time.process_time() - c, 2)}))
"""


def _child(code, args=(), env=None):
    """The JSON a child process prints; its error's last line and exit 2 if it fails (an unknown
    routing or spec, too few VCs)."""
    out = subprocess.run([sys.executable, "-c", code, *args], check=False, capture_output=True, text=True, env=env)
    if out.returncode:
        lines = out.stderr.strip().splitlines() or [f"exit {out.returncode}"]
        print(f"bench_sim: {lines[-1]}", file=sys.stderr)
        sys.exit(2)
    return json.loads(out.stdout)


def _spread(values, fmt=".2f"):
    """The median (min, max) of repeated runs."""
    if len(values) == 1:
        return format(values[0], fmt)
    return f"{format(statistics.median(values), fmt)} (min {format(min(values), fmt)}, max {format(max(values), fmt)})"


def compile_times(repeat):
    cold, warm = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            cold.append(_child(COMPILE_CHILD, env=env))
            warm.append(_child(COMPILE_CHILD, env=env))
    for name, runs in (("compile (empty cache)", cold), ("load (warm cache)", warm)):
        print(f"{name}: {_spread([r['seconds'] for r in runs])} s wall, "
              f"{_spread([r['cpu_seconds'] for r in runs])} s CPU", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=3000, help="timed cycles per load (after 1,000 warm-up cycles)")
    ap.add_argument("--loads", default="0.1,0.3,0.5", help="offered loads, comma-separated")
    ap.add_argument("--threads", default="1", help="thread counts, comma-separated (default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per load (or per compile measurement): "
                                                          "median (min, max)")
    ap.add_argument("--routing", default="min", help="the routing timed (default: %(default)s)")
    ap.add_argument("--vcs", type=int, default=0, help="VCs (default: sim.experiment.default_vcs, 4 or "
                                                       "what the routing needs)")
    ap.add_argument("--spec", default="", help="another network (default: issue 5's PolarStar q=11 IQ d'=3, p=5)")
    ap.add_argument("--compile", action="store_true", help="measure Numba compile and cache-load time instead")
    a = ap.parse_args()
    if a.vcs < 0:
        ap.error(f"--vcs {a.vcs}: must be >= 1 (or 0: the default)")
    if a.compile:
        compile_times(a.repeat)
        return
    threads = a.threads.split(",")
    for n in threads:                   # warm the Numba cache of each engine
        _child(CHILD, ("0.1", "10", n, a.routing, str(a.vcs), a.spec))
    for load in a.loads.split(","):
        for n in threads:
            _report(load, n, a)


def _report(load, threads, a):
    runs = [_child(CHILD, (load, str(a.cycles), threads, a.routing, str(a.vcs), a.spec)) for _ in range(a.repeat)]
    d = runs[0]
    wall = _spread([r['router_cycles_per_second'] for r in runs], ',.0f')
    print(f"{d['routers']} routers, {d['routing']} V={d['vcs']}, load {d['load']:.2f}, {threads} thread(s): "
          f"{wall} router-cycles/s, "
          f"{_spread([r['router_cycles_per_cpu_second'] for r in runs], ',.0f')} per CPU second "
          f"({d['cycles']} cycles in {_spread([r['seconds'] for r in runs])} s), accepted {d['accepted']}, "
          f"peak RSS {max(r['peak_rss_mb'] for r in runs)} MB", flush=True)


if __name__ == "__main__":
    main()
