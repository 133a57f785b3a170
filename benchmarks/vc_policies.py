"""Hop-indexed vs turn-indexed VC classes (routing_logic.base) in the cycle-accurate model:
latency and accepted load against offered load on a diameter-3 PolarStar, for the VC counts
each policy makes deadlock-free, plus saturation points. With `--latencies`, each configuration
is also run at those link / credit latencies (registered links, docs/fpga_results_log.md).

Prints one line per (configuration, load) and the saturation load of each configuration; writes
<out>.json and <out>.png (latency up to saturation, accepted throughput).
Usage: python benchmarks/vc_policies.py [--spec S] [--routing R] [--depth B] [--pipelined]
                                         [--configs hops:3,turns:2,...] [--latencies 1/1,2/2,...]
                                         [--cycles N] [--out docs/vc_policies]
e.g. the FPGA network's registered links:
  python benchmarks/vc_policies.py --spec polarstar:q=2,supernode=iq,degree=0 --depth 4 --pipelined \
      --configs turns:2 --latencies 1/1,2/1,1/2,2/2 --out docs/link_latency
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tqdm import tqdm

from sim.experiment import plot_sweeps, saturation, sweep
from contract.params import RouterParams
from topologies import build

CONFIGS = (("hops", 3), ("turns", 2), ("turns", 3), ("turns", 4), ("hops", 4))
LOADS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="polarstar:q=3,supernode=iq,degree=0")
    ap.add_argument("--routing", default="min")
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--pipelined", action="store_true", help="--va-stages 2 --sa-stages 2 --st-stage 1")
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--cycles", type=int, default=5000)
    ap.add_argument("--configs", default=",".join(f"{p}:{v}" for p, v in CONFIGS),
                    help="VC policy:VCs pairs (default: %(default)s)")
    ap.add_argument("--latencies", default="1/1", help="link/credit latency pairs (default 1/1)")
    ap.add_argument("--out", default="docs/vc_policies")
    a = ap.parse_args()
    try:
        configs = [(p, int(v)) for p, v in (c.split(":") for c in a.configs.split(","))]
        latencies = [(int(ll), int(cl)) for ll, cl in (c.split("/") for c in a.latencies.split(","))]
    except ValueError:
        ap.error(f"--configs {a.configs!r} / --latencies {a.latencies!r}: expected e.g. turns:2,hops:3 and 1/1,2/2")
    net = build(a.spec)
    stages = {"va_stages": 2, "sa_stages": 2, "st_stage": 1} if a.pipelined else {}
    curves, sats = {}, {}
    runs = [(policy, vcs, ll, cl) for policy, vcs in configs for ll, cl in latencies]
    bar = tqdm(total=len(runs) * len(LOADS), desc="load points", file=sys.stderr, leave=False)
    for policy, vcs, ll, cl in runs:
        label = f"{policy}, {vcs} VCs" + (f", link/credit {ll}/{cl}" if latencies != [(1, 1)] else "")
        params = RouterParams(vcs=vcs, depth=a.depth, link_latency=ll, credit_latency=cl, **stages)
        curves[label] = sweep(net, a.routing, "uniform", LOADS, params, a.warmup, a.cycles, vc_policy=policy,
                              progress=lambda d: bar.update(1))
        sats[label] = saturation(net, a.routing, "uniform", params, a.warmup, a.cycles, vc_policy=policy)["saturation_load"]
        for d in curves[label]:
            print(f"{label:16s} load {d['load']:.2f}  accepted {d['accepted']:.3f}  latency {d['latency_mean']}")
        print(f"{label:16s} saturation {sats[label]:.3f}")
    bar.close()
    title = f"{net.name}, {a.routing}, B={a.depth}{', pipelined' if a.pipelined else ''}"
    out = Path(a.out)
    out.with_suffix(".json").write_text(json.dumps({"spec": a.spec, "routing": a.routing, "depth": a.depth,
                                                    "pipelined": a.pipelined, "cycles": a.cycles,
                                                    "latencies": latencies,
                                                    "saturation": sats, "curves": curves}, indent=1))
    plot_sweeps(curves, out.with_suffix(".png"), title)
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
