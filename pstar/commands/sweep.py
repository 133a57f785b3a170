"""`pstar sweep SPEC --routing R[,R2..] --traffic T --loads ... [--plot FILE] [--saturation]`:
latency–throughput curves on the cycle-accurate model."""
from __future__ import annotations

import sys

from tqdm import tqdm

from topologies.errors import ParameterError

from . import Result, table
from .sim import add_common, check_names, network_from, params_from


def parse_loads(text: str) -> list[float]:
    try:
        loads = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise ParameterError(f"--loads={text!r}: expected comma-separated numbers in 0..1") from None
    if not loads or any(not 0 <= x <= 1 for x in loads):
        raise ParameterError(f"--loads={text!r}: expected comma-separated numbers in 0..1")
    return loads


def add_parser(sub):
    p = sub.add_parser("sweep", help="latency/throughput vs load (comma-separated routings allowed)")
    add_common(p)
    p.add_argument("--loads", default="0.05,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9")
    p.add_argument("--plot", default=None, metavar="FILE", help="latency/throughput plot (.png/.svg)")
    p.add_argument("--saturation", action="store_true", help="also bisect for the saturation load")
    return p


def run(args) -> Result:
    from sim.experiment import plot_sweeps, saturation, sweep
    from sim.network_sim import DeadlockDetected

    check_names(args)
    net = network_from(args)
    loads = parse_loads(args.loads)
    routings = [r.strip() for r in args.routing.split(",") if r.strip()]
    curves, sats = {}, {}
    bar = tqdm(total=len(loads) * len(routings), desc="load points", file=sys.stderr, leave=False, delay=1)
    try:
        for r in routings:
            args.routing = r
            params = params_from(args, net)
            curves[r] = sweep(net, r, args.traffic, loads, params, args.warmup, args.cycles, args.seed,
                              progress=lambda d: (bar.set_postfix(routing=d["routing"], load=d["load"],
                                                                  acc=d["accepted"]), bar.update(1)),
                              vc_policy=args.vc_policy)
            if args.saturation:
                sats[r] = saturation(net, r, args.traffic, params, args.warmup, args.cycles, args.seed,
                                     vc_policy=args.vc_policy)["saturation_load"]
    except DeadlockDetected as e:
        raise ParameterError(str(e)) from None
    finally:
        bar.close()
    data = {"spec": net.spec or net.name, "traffic": args.traffic, "curves": curves}
    if sats:
        data["saturation"] = sats
    if args.plot:
        plot_sweeps(curves, args.plot, f"{net.name}, {args.traffic}")
        data["plot"] = args.plot
    rows = [(r, p["load"], p["accepted"], p["latency_mean"], p["latency_p99"], p["lost"])
            for r, pts in curves.items() for p in pts]
    text = table(rows, ["routing", "load", "accepted", "lat_mean", "lat_p99", "lost"])
    if sats:
        text += "\nsaturation: " + ", ".join(f"{r} {s:.3f}" for r, s in sats.items())
    return Result(data, text)
