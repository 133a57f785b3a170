"""The cycle-accurate model at scale (issue 43, item 4): PolarStar networks up to the radix-64
design point (q=43, IQ d'=20: 79,506 routers), one load point each.

The ladder: q=11 IQ d'=3 (1,064 routers), then the radix-64 supernode (IQ d'=20) with q=11
(5,586) and q=23 (23,226); `--full` adds q=43 (79,506). Endpoints per router p = network radix
// 3 (5 on the 1,064-router network, 21 on the radix-64 one). MIN routing, uniform traffic at
0.3 flits/cycle/endpoint, the router defaults of contract/params.py (4 VCs x 8 flits, 4-flit
packets), 2,000 cycles (half warm-up, half measured; then the drain, as `pstar sim`).

Each run is a fresh process (its peak RSS its own, Numba's cache warm). Printed per size:
routers, endpoints, network build s (no network cache), routing build s, simulator set-up s
(state allocation), cycle s, peak RSS, RSS bytes/router, the estimate of the state alone
(`sim.network_sim.estimate_bytes` without packets) per router, router-cycles/s over the
cycles (warm-up, window, drain), mean packet latency, accepted throughput; with `--repeat K`
the median of K runs (and each run). A run prints a progress line every ~10% of its cycles.
Run it under `ulimit -v` (a run that would not fit is refused before allocating: exit 2).

Usage: python benchmarks/bench_scale.py [--full | --only 79506] [--repeat K] [--cycles N]
       [--load X] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

LADDER = [(11, 3), (11, 20), (23, 20)]     # (q, IQ d') ; --full adds the radix-64 point
FULL = (43, 20)

CHILD = r"""
import json, resource, sys, time
q, d, p, load, cycles = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
t = time.perf_counter()
from topologies import build
from sim import experiment, network_sim
from contract.params import RouterParams
t_import = time.perf_counter() - t

t = time.perf_counter()
net = build(f"polarstar:q={q},supernode=iq,degree={d}", p=p)
t_build = time.perf_counter() - t
n = net.num_routers
t = time.perf_counter()
params = RouterParams(vcs=experiment.default_vcs(net, "min"))
routing = experiment.build_routing(net, "min", params)
t_routing = time.perf_counter() - t
setup = {}

class Timed(network_sim.NetworkSim):
    def __init__(self, *a, **k):
        t0 = time.perf_counter()
        super().__init__(*a, **k)
        setup["seconds"] = time.perf_counter() - t0

experiment.NetworkSim = Timed
warm, total = cycles // 2, cycles
done = [0, 0]
t_start = time.perf_counter()

def progress(k):
    done[0] += k
    if done[0] * 10 // total > done[1] or done[0] == total:
        done[1] = done[0] * 10 // total
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"  {n} routers: cycle {done[0]}/{total}, {time.perf_counter() - t_start:.0f} s, "
              f"peak RSS {rss:.2f} GB", file=sys.stderr, flush=True)

est = network_sim.estimate_bytes(net, params, arith=network_sim.uses_arithmetic(net))
res = experiment.run_point(net, "min", "uniform", load, params, warmup=warm, cycles=total - warm, seed=1,
                           progress=progress, routing_obj=routing)
sim_cycles = total + res["drain_cycles"]
cycle_s = res["seconds"] - setup["seconds"]
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({
    "q": q, "degree": d, "p": p, "routers": n, "endpoints": net.num_endpoints, "load": load, "cycles": total,
    "drain_cycles": res["drain_cycles"], "import_s": round(t_import, 2), "build_s": round(t_build, 2),
    "routing_s": round(t_routing, 2), "setup_s": round(setup["seconds"], 2), "cycle_s": round(cycle_s, 2),
    "peak_rss_gb": round(rss / 1e9, 3), "rss_bytes_per_router": round(rss / n),
    "state_bytes_per_router": round((est["total"] - est["packets"]) / n),
    "router_cycles_per_second": round(n * sim_cycles / cycle_s),
    "latency_mean": res["latency_mean"], "accepted": res["accepted"], "offered": res["offered"],
    "hops_mean": res["hops_mean"], "lost": res["lost"], "measured_packets": res["measured_packets"]}))
"""

FIELDS = [("routers", "{:,}"), ("endpoints", "{:,}"), ("build_s", "{:.1f}"), ("routing_s", "{:.1f}"),
          ("setup_s", "{:.1f}"), ("cycle_s", "{:.0f}"), ("peak_rss_gb", "{:.2f}"), ("rss_bytes_per_router", "{:,}"),
          ("state_bytes_per_router", "{:,}"), ("router_cycles_per_second", "{:.3g}"), ("latency_mean", "{:.2f}"),
          ("accepted", "{:.4f}")]


def run_one(q: int, d: int, load: float, cycles: int) -> dict:
    """One size in a fresh process (no network or routing cache: the builds are timed)."""
    p = (d + q + 1) // 3
    env = dict(os.environ, PSTAR_NETWORK_CACHE="0")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", CHILD, str(q), str(d), str(p), str(load), str(cycles)],
                         stdout=subprocess.PIPE, text=True, env=env, cwd=root)
    if out.returncode:
        raise SystemExit(f"q={q} d'={d}: the run failed with exit status {out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_of(runs: list[dict]) -> dict:
    med = dict(runs[0])
    for key, _ in FIELDS:
        med[key] = statistics.median(r[key] for r in runs)
    med["runs"] = len(runs)
    return med


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="add the radix-64 point (q=43, IQ d'=20: 79,506 routers)")
    ap.add_argument("--only", type=int, default=None, metavar="ROUTERS", help="run only the size with this many routers")
    ap.add_argument("--repeat", type=int, default=1, help="runs per size; the median is printed (default: 1)")
    ap.add_argument("--cycles", type=int, default=2000, help="cycles per run, half warm-up (default: 2000)")
    ap.add_argument("--load", type=float, default=0.3, help="offered load (default: 0.3)")
    ap.add_argument("--json", default=None, metavar="FILE", help="also write every run to FILE")
    args = ap.parse_args(argv)
    sizes = LADDER + ([FULL] if args.full or args.only else [])
    if args.only:
        sizes = [(q, d) for q, d in sizes if (q * q + q + 1) * (2 * d + 2) == args.only]
        if not sizes:
            raise SystemExit(f"--only {args.only}: not a size of the ladder")
    print("  ".join(k for k, _ in FIELDS), flush=True)
    results = []
    for q, d in sizes:
        runs = [run_one(q, d, args.load, args.cycles) for _ in range(args.repeat)]
        med = median_of(runs)
        results.append({"median": med, "runs": runs})
        print("  ".join(fmt.format(med[k]) for k, fmt in FIELDS), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
