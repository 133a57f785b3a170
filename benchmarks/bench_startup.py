"""Start-up of `pstar sim`: wall time of a 10-cycle run of the 1,064-router PolarStar, each in a
fresh process.

* warm: the user's caches as they are (one untimed run first fills them): the compiled engine
  (Numba), the network and its routing tables (sim.netcache);
* install: an editable install's compile of the engine (`python -m sim.precompile`, what
  `pip install -e .` runs) into a new empty NUMBA_CACHE_DIR and PSTAR_CACHE_DIR;
* cold: the first run after that install: the engine loaded, the network and tables built;
* uncompiled: the first run with both caches empty (an install that skipped the compile), so the
  engine is compiled too.

Prints per case the median (min, max) of the wall seconds and of the CPU seconds (user + system
of the child; on a machine shared with other jobs the CPU figure is the steadier one).
`--cluster` also times a Dask LocalCluster of 2 workers: its start, and until both workers have
run one task that imports the simulator, reads a cached network and loads the compiled engine
(what `pstar sweep --workers` pays before its first point's cycles).

Usage: python benchmarks/bench_startup.py [--repeat K] [--cold-repeat K] [--cluster] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

SPEC = "polarstar:q=11,supernode=iq,degree=3"
ARGV = ["-m", "pstar.cli", "sim", SPEC, "--cycles", "10", "--warmup", "0", "--load", "0.1", "--quiet", "--json"]

CLUSTER_CHILD = r"""
import json, logging, time
t = time.perf_counter()
from distributed import Client, LocalCluster

def first_task():                     # what a sweep's first point costs a worker before its cycles
    from sim.netcache import build_network
    from sim.network_sim import NetworkSim
    NetworkSim(build_network("polarstar:q=3,supernode=iq,degree=0"), "min").run(10)   # loads the engine
    return 1

with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                  silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
    started = time.perf_counter() - t
    client.run(first_task)
    print(json.dumps({"cluster_start": round(started, 2), "first_tasks": round(time.perf_counter() - t, 2)}))
"""


def timed(argv, env=None) -> tuple[float, float]:
    """(wall, cpu) seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, *argv], check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def summary(xs) -> dict:
    return {"median": round(statistics.median(xs), 2), "min": round(min(xs), 2), "max": round(max(xs), 2)}


def warm(repeat: int) -> dict:
    timed(ARGV)                                   # fills the caches
    runs = [timed(ARGV) for _ in range(repeat)]
    return {"wall": summary([w for w, _ in runs]), "cpu": summary([c for _, c in runs])}


def cold(repeat: int, precompiled: bool) -> dict:
    """First runs on empty caches; `precompiled`: after `sim.precompile` (timed as "install")."""
    runs, installs = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(d, "numba"), PSTAR_CACHE_DIR=d)
            if precompiled:
                installs.append(timed(["-m", "sim.precompile", "--quiet"], env))
            runs.append(timed(ARGV, env))
    res = {"cold" if precompiled else "uncompiled": runs}
    if precompiled:
        res["install"] = installs
    return {case: {"wall": summary([w for w, _ in r]), "cpu": summary([c for _, c in r])} for case, r in res.items()}


def cluster(repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", CLUSTER_CHILD], check=True, capture_output=True, text=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {k: summary([r[k] for r in runs]) for k in runs[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="warm runs (default: %(default)s)")
    ap.add_argument("--cold-repeat", type=int, default=3,
                    help="installs, cold and uncompiled runs each, 0 for none (default: %(default)s)")
    ap.add_argument("--cluster", action="store_true", help="also time a 2-worker LocalCluster's start")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.repeat < 1 or a.cold_repeat < 0:
        ap.error("--repeat: at least 1; --cold-repeat: 0 (no cold runs) or more")
    res = {"command": "python " + " ".join(ARGV), "load_average": os.getloadavg()[0], "cpus": os.cpu_count(),
           "warm": warm(a.repeat)}
    if a.cold_repeat:
        res.update(cold(a.cold_repeat, True))
        res.update(cold(a.cold_repeat, False))
    if a.cluster:
        res["cluster"] = cluster(max(1, a.cold_repeat))
    if a.json:
        print(json.dumps(res))
        return
    print(f"{res['command']}  (load average {res['load_average']:.1f} on {res['cpus']} CPUs)")
    for case in ("warm", "install", "cold", "uncompiled")[:1 + 3 * bool(a.cold_repeat)]:
        w, c = res[case]["wall"], res[case]["cpu"]
        print(f"{case:10s} wall {w['median']:6.2f} s ({w['min']:.2f}..{w['max']:.2f})   "
              f"cpu {c['median']:6.2f} s ({c['min']:.2f}..{c['max']:.2f})")
    for k, v in res.get("cluster", {}).items():
        print(f"LocalCluster(2) {k}: {v['median']:.2f} s ({v['min']:.2f}..{v['max']:.2f})")


if __name__ == "__main__":
    main()
