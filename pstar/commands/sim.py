"""`pstar sim SPEC --routing R --traffic T --load X`: one load point on the cycle-accurate model."""
from __future__ import annotations

from contract.cli import add_router_arguments, router_params_from_args
from contract.params import PARAMS
from topologies.errors import ParameterError, check_seed

from . import SPEC_HELP, Result, add_quiet, integer, progress, table

# the contract's parameters and options `pstar sim` and `pstar sweep` take (contract.params)
ROUTER_FLAGS = ("vcs", "vc_policy", "depth", "packet_flits", "alloc_iters", "va_stages", "sa_stages", "st_stage",
                "va_separable", "va_choice_stage", "link_latency", "credit_latency")
VCS_DEFAULT = f"max({PARAMS['vcs'].default}, what the routing needs to be deadlock-free)"


def add_common(p):
    p.add_argument("spec", metavar="SPEC", help=SPEC_HELP.format(example="polarstar:q=11,supernode=iq,degree=3"))
    p.add_argument("-p", type=integer, default=None, help="endpoints per router")
    p.add_argument("--routing", default="min",
                   help="min, polarstar, polarized, valiant, ugal (default: %(default)s)")
    p.add_argument("--traffic", default="uniform",
                   help="uniform, permutation, shuffle, reverse, adversarial, neighbor (default: %(default)s)")
    p.add_argument("--cycles", type=integer, default=5000, help="measurement window in cycles (default: %(default)s)")
    p.add_argument("--warmup", type=integer, default=1000, help="warm-up cycles before measuring (default: %(default)s)")
    p.add_argument("--seed", type=integer, default=1,
                   help="seed of the traffic (injections and destinations) (default: %(default)s)")
    add_router_arguments(p, only=ROUTER_FLAGS, computed={"vcs": VCS_DEFAULT})
    p.add_argument("--fail-links", type=float, default=0.0, metavar="F",
                   help="fail this fraction of the links at random (network stays connected); routing is "
                        "recomputed for the damaged network (default: %(default)s)")
    p.add_argument("--fail-seed", type=integer, default=0,
                   help="seed of the failed-link draw, reported in the output (default: %(default)s)")
    add_quiet(p)


def check_names(args):
    """Routing and traffic names, checked before any progress bar starts."""
    from sim.network_sim import MODES
    from sim.traffic import PATTERNS
    for r in str(args.routing).split(","):
        if r.strip() not in MODES:
            raise ParameterError(f"--routing={r.strip()!r}: unknown; allowed: {', '.join(MODES)}")
    if args.traffic not in PATTERNS:
        raise ParameterError(f"--traffic={args.traffic!r}: unknown; allowed: {', '.join(PATTERNS)}")
    if args.cycles < 1 or args.warmup < 0:
        raise ParameterError(f"--cycles={args.cycles}, --warmup={args.warmup}: need cycles >= 1 and warmup >= 0")
    if args.threads is not None:
        from sim.threads import check_threads
        check_threads(args.threads, "--threads")


def network_from(args):
    """The SPEC's network, with --fail-links applied (its options checked before the build)."""
    if args.fail_links and not 0 < args.fail_links < 1:
        raise ParameterError(f"--fail-links={args.fail_links}: must be a fraction in (0, 1)")
    from sim.netcache import build_network

    seed = check_seed(args.fail_seed, "--fail-seed")
    net = build_network(args.spec, p=args.p)
    if args.fail_links:
        net = net.without_links(fraction=args.fail_links, seed=seed)
    return net


def failure_info(args, net) -> dict:
    """How many links failed and, when some did, the seed of that random draw."""
    d = {"failed_links": len(net.attrs.get("failed_links", ()))}
    if args.fail_links:
        d["fail_seed"] = args.fail_seed
    return d


def params_from(args, net):
    """RouterParams of the flags; V, when not given, as `sim.experiment.default_vcs` chooses it."""
    from sim.experiment import default_vcs

    vcs = args.vcs if args.vcs is not None else default_vcs(net, args.routing, args.vc_policy, args.depth)
    return router_params_from_args(args, vcs=vcs)


def add_parser(sub):
    p = sub.add_parser("sim", help="simulate one load point (cycle-accurate model)",
                       description="Simulate one load point on the cycle-accurate model; defaults in parentheses.")
    add_common(p)
    p.add_argument("--load", type=float, required=True, help="offered load, flits/cycle/endpoint (0..1)")
    p.add_argument("--threads", type=integer, default=None, metavar="N",
                   help="threads of the simulation; any N gives the same results (default: every core)")
    return p


def run(args) -> Result:
    from sim.experiment import run_point
    from sim.network_sim import DeadlockDetected

    if not 0 <= args.load <= 1:
        raise ParameterError(f"--load={args.load}: must be in 0..1 flits/cycle/endpoint")
    check_names(args)
    net = network_from(args)
    params = params_from(args, net)
    bar = progress(args, args.warmup + args.cycles, "cycles", unit="cyc", delay=1)
    try:
        d = run_point(net, args.routing, args.traffic, args.load, params, args.warmup, args.cycles, seed=args.seed,
                      progress=lambda k: bar.update(min(k, bar.total - bar.n)), vc_policy=args.vc_policy,
                      threads=args.threads)
    except DeadlockDetected as e:
        raise ParameterError(str(e)) from None
    finally:
        bar.close()
    d = {"spec": net.spec or net.name, "routers": net.num_routers, **failure_info(args, net), **d,
         "seed": args.seed, "vc_policy": args.vc_policy}
    keys = ["routing", "failed_links", *(["fail_seed"] if "fail_seed" in d else []), "seed", "traffic", "load", "offered", "accepted", "latency_mean", "latency_p99", "hops_mean",
            "lost", "vcs", "vc_policy", "depth", "threads", "seconds", "router_cycles_per_second"]
    return Result(d, table([(k, d[k]) for k in keys]))
