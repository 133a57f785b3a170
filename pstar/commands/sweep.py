"""`pstar sweep SPEC --routing R[,R2..] --traffic T --loads ... [--plot FILE] [--saturation]`:
latency–throughput curves on the cycle-accurate model."""
from __future__ import annotations

from topologies.errors import ParameterError

from ..outputs import PLOT_SUFFIXES, Output, check_output
from . import Result, progress, table
from .sim import add_common, check_names, failure_info, network_from, params_from


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
    p.add_argument("--loads", default="0.05,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9", metavar="X,Y,...",
                   help="offered loads, flits/cycle/endpoint in 0..1, comma-separated (default: %(default)s)")
    p.add_argument("--plot", default=None, metavar="FILE",
                   help="latency/throughput plot (.png, .svg or .pdf), written after the sweep")
    p.add_argument("--saturation", action="store_true", help="also bisect for the saturation load")
    return p


def run(args) -> Result:
    from sim.experiment import plot_sweeps, saturation, sweep
    from sim.network_sim import DeadlockDetected

    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES) if args.plot is not None else None
    check_names(args)
    loads = parse_loads(args.loads)
    net = network_from(args)
    routings = [r.strip() for r in args.routing.split(",") if r.strip()]
    curves, sats = {}, {}
    bar = progress(args, len(loads) * len(routings), "load points", delay=1)
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
    data = {"spec": net.spec or net.name, "traffic": args.traffic, **failure_info(args, net), "curves": curves}
    if sats:
        data["saturation"] = sats
    outputs = []
    if plot is not None:
        title = f"{net.name}, {args.traffic}"
        outputs.append(Output("--plot", plot, lambda tmp: plot_sweeps(curves, tmp, title), key="plot"))
        data["plot"] = str(plot)
    rows = [(r, p["load"], p["accepted"], p["latency_mean"], p["latency_p99"], p["lost"])
            for r, pts in curves.items() for p in pts]
    text = table(rows, ["routing", "load", "accepted", "lat_mean", "lat_p99", "lost"])
    if sats:
        text += "\nsaturation: " + ", ".join(f"{r} {s:.3f}" for r, s in sats.items())
    if "fail_seed" in data:
        text += f"\nfailed links: {data['failed_links']} (--fail-seed {data['fail_seed']})"
    return Result(data, text, outputs)
