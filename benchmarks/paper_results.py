"""Reproduce the PolarStar paper's qualitative results (§9.5, §9.6) on PS-IQ (q=11, IQ d'=3,
1,064 routers, 5 endpoints per router) with the cycle-accurate model, and plot them.

Prints saturation throughput (accepted flits/cycle/endpoint at offered load 0.95) per routing and
traffic pattern, and latency at low loads; writes docs/ps1064_results.json and a PNG.
Usage: python benchmarks/paper_results.py [--warmup 1000] [--cycles 1000] [--vcs 12] [--iters 3] [--depth 16]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tqdm import tqdm

from sim.experiment import run_point
from contract.params import RouterParams
from topologies import polarstar


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--vcs", type=int, default=12)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--depth", type=int, default=16)
    ap.add_argument("--out", default="docs/ps1064_results")
    a = ap.parse_args()
    net = polarstar(11, "iq", 3, p=5)
    params = RouterParams(vcs=a.vcs, depth=a.depth, alloc_iters=a.iters)
    jobs = [(r, t, 0.95) for t in ("uniform", "permutation", "shuffle", "reverse") for r in ("min", "ugal")]
    jobs += [(r, "adversarial", 0.95) for r in ("min", "ugal", "polarized")]
    jobs += [(r, "uniform", x) for r in ("min", "ugal", "polarized") for x in (0.1, 0.3, 0.5)]
    results = []
    for r, t, load in tqdm(jobs, file=sys.stderr):
        d = run_point(net, r, t, load, params, a.warmup, a.cycles, drain=0 if load > 0.9 else None)
        results.append(d)
        print(f"{r:10s} {t:12s} load {load:.2f}: accepted {d['accepted']:.3f}  latency {d['latency_mean']}  "
              f"hops {d['hops_mean']}", flush=True)
    Path(a.out + ".json").write_text(json.dumps({"params": params.as_dict(), "results": results}, indent=1))
    plot(results, a.out + ".png")


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    sat = [d for d in results if d["load"] > 0.9]
    pats = list(dict.fromkeys(d["traffic"] for d in sat))
    routs = list(dict.fromkeys(d["routing"] for d in sat))
    w = 0.8 / len(routs)
    for i, r in enumerate(routs):
        xs = [pats.index(d["traffic"]) + i * w for d in sat if d["routing"] == r]
        ax1.bar(xs, [d["accepted"] for d in sat if d["routing"] == r], w, label=r)
    ax1.set_xticks([k + 0.4 - w / 2 for k in range(len(pats))], pats)
    ax1.set_ylabel("saturation throughput (flits/cycle/endpoint)")
    ax1.set_title("PS-IQ 1,064 routers, offered load 0.95")
    ax1.legend()
    for r in routs:
        pts = sorted((d["load"], d["latency_mean"]) for d in results if d["routing"] == r
                     and d["traffic"] == "uniform" and d["load"] <= 0.9)
        if pts:
            ax2.plot(*zip(*pts), "o-", label=r)
    ax2.set_xlabel("offered load (uniform)")
    ax2.set_ylabel("mean latency (cycles)")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    main()
