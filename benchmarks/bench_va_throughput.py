"""Throughput and latency of the FPGA target's router options, central or separable VC allocator.

The 104-router PolarStar (q=3, IQ d'=3, 2 endpoints per router) under PolarStar routing and
uniform traffic, with the target-100mhz preset's router options (V 4, B 8, va_stages 2,
va_choice_stage 1, sa_stages 3, st_stage 2), in the cycle model (exact to the RTL). Per offered
load: accepted flits/cycle/endpoint over the measured cycles, and the mean latency (creation to
ejection, source queueing included) of the packets delivered in them.

Usage: python benchmarks/bench_va_throughput.py [--va separable|central] [--loads 0.2,0.4,...]
       [--warmup 1000] [--cycles 3000] [--seed 5]
"""
from __future__ import annotations

import argparse

import numpy as np

from contract.params import RouterParams
from sim.network_sim import NetworkSim
from topologies.spec import build


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--va", choices=("separable", "central"), default="separable")
    ap.add_argument("--loads", default="0.2,0.4,0.6,0.8,1.0")
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--cycles", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    net = build("polarstar:q=3,supernode=iq,degree=3")
    prm = RouterParams(vcs=4, depth=8, va_stages=2, va_choice_stage=1, sa_stages=3, st_stage=2,
                       va_separable=int(a.va == "separable"))
    for load in (float(x) for x in a.loads.split(",")):
        sim = NetworkSim(net, "polarstar", prm, "uniform", load, seed=a.seed)
        sim.run(a.warmup)
        before = sim.ejected_flits
        sim.run(a.cycles)
        accepted = (sim.ejected_flits - before) / a.cycles / net.num_endpoints
        pk = sim.packets()
        done = pk["done"] >= a.warmup
        latency = float(np.mean(pk["done"][done] - pk["created"][done])) if done.any() else float("nan")
        print(f"{a.va} VA, offered {load:.2f}: accepted {accepted:.3f} flits/cycle/endpoint, "
              f"mean latency {latency:.1f} cycles", flush=True)


if __name__ == "__main__":
    main()
