"""`pstar sweep SPEC --routing R[,R2..] --traffic T --loads ... [--plot FILE] [--saturation]
[--scheduler ADDRESS | --workers N]`: latency–throughput curves on the cycle-accurate model, each
(routing, load) point a task on a Dask cluster, or all of them in this process
(`sim.distributed_sweep`)."""
from __future__ import annotations

from topologies.errors import ParameterError

from ..outputs import PLOT_SUFFIXES, Output, check_output
from . import Result, integer, progress, table
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
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run each point as a task on this Dask distributed scheduler (e.g. tcp://host:8786)")
    p.add_argument("--workers", type=integer, default=None, metavar="N",
                   help="run the points on a local Dask cluster of N processes (1: serially in this process; "
                        "default: one per free core when the sweep is long enough to pay for the cluster's "
                        "start, else 1)")
    p.add_argument("--threads", type=integer, default=None, metavar="N",
                   help="threads of each simulation; any N gives the same results (default: every core, "
                        "or one per point on a Dask cluster)")
    return p


def check_cluster(args) -> None:
    if args.scheduler is not None and args.workers is not None:
        raise ParameterError("--scheduler, --workers: give one (--workers starts a cluster on this machine)")
    if args.workers is not None and args.workers < 1:
        raise ParameterError(f"--workers={args.workers}: must be an integer >= 1")
    if args.scheduler is not None and not args.scheduler.strip():
        raise ParameterError("--scheduler='': expected an address such as tcp://host:8786")


def run(args) -> Result:
    from sim.distributed_sweep import SweepJob, client_for, default_workers, probe, run_sweep
    from sim.experiment import build_routing, plot_sweeps
    from sim.network_sim import DeadlockDetected

    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES) if args.plot is not None else None
    check_names(args)
    check_cluster(args)
    loads = parse_loads(args.loads)
    if args.scheduler:
        probe(args.scheduler)           # a bad address fails before the work
    net = network_from(args)
    routings = list(dict.fromkeys(r.strip() for r in args.routing.split(",") if r.strip()))
    params = {}
    for r in routings:                  # each routing's VCs, checked before any cluster starts
        args.routing = r
        params[r] = params_from(args, net)
        build_routing(net, r, params[r], vc_policy=args.vc_policy)
    job = SweepJob(params, args.traffic, args.warmup, args.cycles, args.seed, args.vc_policy, args.threads)
    points = len(loads) * len(routings)
    workers = args.workers if args.workers is not None or args.scheduler else default_workers(net, job, points)
    bar = progress(args, points, "load points", delay=1)
    try:
        with client_for(args.scheduler, workers) as client:
            curves, sats = run_sweep(net, job, loads, args.saturation, client=client,
                                     progress=lambda d: (bar.set_postfix(routing=d["routing"], load=d["load"],
                                                                         acc=d["accepted"]), bar.update(1)))
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
