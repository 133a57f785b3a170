"""Soak: long runs at and beyond saturation, in the model and in Verilator lockstep.

  python benchmarks/soak.py model [--cycles 1000000] [--loads 0.6 0.9] [--routing min polarstar polarized]
      The model on PolarStar q=3 IQ d'=3 (104 routers): each routing and load for --cycles, then
      injection stops and the network drains. Prints flits delivered, lost (created but never
      delivered after the drain), duplicated / reordered (the engine stops with an error on
      either, so a finished run has 0), and the largest packet latency.
  python benchmarks/soak.py rtl [--cycles 1000000] [--load 0.6] [--routing polarstar] [--fail F]
      The same in Verilator lockstep (tests/cocotb/soak_bench.py): the model runs in chunks next
      to the RTL and every ejected flit is compared (cycle, endpoint, contents); the report adds
      the RTL's delivered flits and the first divergence (none expected).
Progress is printed as the runs go.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile
import time


ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "cocotb"))

SPEC = "polarstar:q=3,supernode=iq,degree=3"


def vcs_for(routing):
    return 8 if routing == "polarized" else 4      # 8: the fewest the CDG check accepts for Polarized here


def soak_model(routing, load, cycles, seed=1):
    from sim.network_sim import NetworkSim
    from sim.params import RouterParams
    from topologies import build
    net = build(SPEC)
    sim = NetworkSim(net, routing, RouterParams(vcs=vcs_for(routing)), "uniform", load, seed=seed)
    t0 = time.perf_counter()
    step = max(1, cycles // 10)
    for k in range(0, cycles, step):
        sim.run(min(step, cycles - k))
        print(f"  {routing} load {load}: cycle {sim.cycle}/{cycles}, {sim.ejected_flits} flits delivered, "
              f"{sim.queued_flits} queued at sources, {time.perf_counter() - t0:.0f} s", flush=True)
    created = sim.num_packets * sim.params.packet_flits
    sim.stop_injection()
    while sim.in_flight or sim.queued_flits:
        sim.run(20_000)
    pk = sim.packets()
    lat = pk["done"] - pk["created"]
    return {"routing": routing, "load": load, "cycles": cycles, "drain_cycles": sim.cycle - cycles,
            "flits_created": created, "flits_delivered": sim.ejected_flits,
            "lost": int(created - sim.ejected_flits), "packets_undelivered": int((pk["done"] < 0).sum()),
            "duplicated": 0, "reordered": 0,        # the engine raises on either (BAD_EJECT)
            "max_packet_latency": int(lat.max()), "mean_packet_latency": round(float(lat.mean()), 1),
            "seconds": round(time.perf_counter() - t0, 1)}


def soak_rtl(routing, load, cycles, fail=0.0, chunk=2000, seed=1):
    import harness
    from lockstep import network_build
    meta, top, cfg = network_build(SPEC, routing, vcs_for(routing), fail=fail, seed=seed)
    cfg.update({"spec": SPEC, "routing": routing, "offered": load, "seed": seed, "fail": fail, "chunk": chunk,
                "cycles": cycles - cycles % chunk})
    with tempfile.TemporaryDirectory() as d:
        base = pathlib.Path(d) / "soak"
        pathlib.Path(str(base) + ".json").write_text(json.dumps(cfg))
        results = harness.run(meta, "soak_bench", {"PSTAR_SOAK": str(base)})
        rep = json.loads(pathlib.Path(str(base) + ".report.json").read_text())
    rep.update({"routing": routing, "load": load, "fail": fail, "passed": all(r["passed"] for r in results)})
    return rep


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    m = sub.add_parser("model")
    m.add_argument("--cycles", type=int, default=1_000_000)
    m.add_argument("--loads", type=float, nargs="+", default=[0.6, 0.9])
    m.add_argument("--routing", nargs="+", default=["min", "polarstar", "polarized"])
    r = sub.add_parser("rtl")
    r.add_argument("--cycles", type=int, default=1_000_000)
    r.add_argument("--load", type=float, default=0.6)
    r.add_argument("--routing", nargs="+", default=["polarstar"])
    r.add_argument("--fail", type=float, default=0.0)
    args = ap.parse_args()
    if args.what == "model":
        for routing in args.routing:
            for load in args.loads:
                print(json.dumps(soak_model(routing, load, args.cycles)), flush=True)
    else:
        for routing in args.routing:
            print(json.dumps(soak_rtl(routing, args.load, args.cycles, args.fail)), flush=True)


if __name__ == "__main__":
    main()
