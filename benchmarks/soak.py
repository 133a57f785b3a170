"""Soak: long runs at and beyond saturation, in the model and in Verilator lockstep.

  python benchmarks/soak.py model [--cycles 1000000] [--loads sat 0.9] [--routing min polarstar polarized]
  python benchmarks/soak.py rtl   [--cycles 1000000] [--load 0.8] [--routing polarstar] [--fail F]
                                  [--engine netlist|top] [--threads T]

Both run uniform traffic on PolarStar q=3 IQ d'=3 (104 routers, 208 endpoints) for --cycles,
then stop the sources (`NetworkSim.stop_sources`: packets still queued at a source are abandoned,
never injected) and run until the network is empty. `sat` is the routing's saturation load
(SATURATION, accepted flits/cycle/endpoint measured with the model; beyond it the source queues
grow without bound). Each run prints one JSON line:
  flits injected and delivered; lost = injected - delivered after the drain (must be 0);
  duplicated and reordered (must be 0): the model's engine stops with an error on a flit ejected
  twice, out of order or at the wrong endpoint, and in `rtl` every flit the RTL ejects must equal
  the model's in cycle, endpoint and contents (cosim/replay.py), so the RTL's count is the
  model's; the largest packet latency (creation to tail delivery, includes source queueing) and,
  in `rtl`, the largest network latency (head injected to tail delivered).
`rtl` runs the model next to the Verilated network (C++ replay of the endpoints, chunks of 5,000
cycles) and also compares every credit and the malformed-flit count; it reports the first
divergence (none expected). `--engine`: netlist (default: the Verilated router module wired in
C++ from the network top's link table, `--threads` threads) or top (the Verilated network top;
several times slower). Progress goes to stderr.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SPEC = "polarstar:q=3,supernode=iq,degree=3"
# accepted throughput at offered load 1.0 on SPEC (flits/cycle/endpoint; model, seed 1, cycles
# 3,000-13,000): past these loads the sources' queues grow without bound
SATURATION = {"min": 0.66, "polarstar": 0.62, "polarized": 0.47}


def vcs_for(routing):
    return 8 if routing == "polarized" else 4      # 8: the fewest the CDG check accepts for Polarized here


def log(text):
    print(text, file=sys.stderr, flush=True)


def soak_model(routing, load, cycles, seed=1):
    from sim.network_sim import NetworkSim
    from contract.params import RouterParams
    from topologies import build
    net = build(SPEC)
    sim = NetworkSim(net, routing, RouterParams(vcs=vcs_for(routing)), "uniform", load, seed=seed)
    t0 = time.perf_counter()
    step = max(1, cycles // 10)
    for k in range(0, cycles, step):
        sim.run(min(step, cycles - k))
        log(f"  {routing} load {load}: cycle {sim.cycle}/{cycles}, {sim.ejected_flits} flits delivered, "
            f"{sim.queued_flits} queued at sources, {time.perf_counter() - t0:.0f} s")
    sim.stop_sources()
    while sim.in_flight:
        sim.run(1000)
    pk = sim.packets()
    done = pk["done"] >= 0
    lat = pk["done"][done] - pk["created"][done]
    return {"mode": "model", "routing": routing, "load": load, "cycles": cycles, "drain_cycles": sim.cycle - cycles,
            "flits_injected": sim.injected_flits, "flits_delivered": sim.ejected_flits,
            "lost": sim.injected_flits - sim.ejected_flits, "duplicated": 0, "reordered": 0,
            "packets_delivered": int(done.sum()), "packets_abandoned": sim.abandoned_packets,
            "max_packet_latency": int(lat.max()), "mean_packet_latency": round(float(lat.mean()), 1),
            "seconds": round(time.perf_counter() - t0, 1)}


def soak_rtl(routing, load, cycles, fail=0.0, seed=1, engine="netlist", threads=None):
    from cosim.replay import replay
    rep = replay(SPEC, routing, vcs_for(routing), load, cycles, seed=seed, fail=fail, drain=True, progress=log,
                 engine=engine, threads=threads)
    rep.pop("model")
    matched = rep["mismatch"] is None
    rep.update({"mode": "rtl", "flits_injected": rep["model_injected"], "flits_delivered": rep["flits_matched"],
                "lost": rep["model_injected"] - rep["flits_matched"] if matched else None,
                "duplicated": 0 if matched else None, "reordered": 0 if matched else None})
    return rep


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    m = sub.add_parser("model")
    m.add_argument("--cycles", type=int, default=1_000_000)
    m.add_argument("--loads", nargs="+", default=["sat", "0.9"], help="offered loads; sat = the routing's saturation")
    m.add_argument("--routing", nargs="+", default=["min", "polarstar", "polarized"], choices=list(SATURATION))
    r = sub.add_parser("rtl")
    r.add_argument("--cycles", type=int, default=1_000_000)
    r.add_argument("--load", type=float, default=0.8)
    r.add_argument("--routing", nargs="+", default=["polarstar"], choices=list(SATURATION))
    r.add_argument("--fail", type=float, default=0.0)
    r.add_argument("--engine", default="netlist", choices=["netlist", "top"])
    r.add_argument("--threads", type=int, default=None,
                   help="threads of the netlist engine (default: cosim.replay.default_threads)")
    args = ap.parse_args()
    if args.cycles < 1:
        ap.error(f"--cycles {args.cycles}: must be >= 1")
    if args.what == "rtl":
        from cosim.replay import check_engine_threads
        try:
            check_engine_threads(args.engine, args.threads)
        except ValueError as e:
            ap.error(f"--engine {args.engine} --threads {args.threads}: {e}")
    if args.what == "model":
        for routing in args.routing:
            for load in args.loads:
                try:
                    value = SATURATION[routing] if load == "sat" else float(load)
                except ValueError:
                    ap.error(f"--loads {load!r}: a number in 0..1 or sat")
                print(json.dumps(soak_model(routing, value, args.cycles)), flush=True)
    else:
        for routing in args.routing:
            print(json.dumps(soak_rtl(routing, args.load, args.cycles, args.fail, engine=args.engine,
                                      threads=args.threads)), flush=True)


if __name__ == "__main__":
    main()
