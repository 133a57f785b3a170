"""`pstar metrics SPEC [--fail-step STEP] [--trials N] [--plot FILE]`: structural metrics of a topology.

Distances (diameter, mean, histogram; h-ASPL over endpoints), spectrum (λ, Ramanujan, μ1),
METIS bisection, Moore efficiency; with --fail-step/--trials/--plot also the link-failure
resilience study (median disconnection ratio, curves of the median trial, PolarStar Fig. 14).
"""
from __future__ import annotations

import argparse

import time

from topologies import build
from topologies.errors import ParameterError, check_seed

from ..outputs import PLOT_SUFFIXES, Output, check_output
from . import SPEC_HELP, Result, add_quiet, integer, progress, table


def add_parser(sub):
    p = sub.add_parser("metrics", help="structural metrics: distances, spectrum, bisection, Moore efficiency, resilience")
    p.add_argument("spec", metavar="SPEC", help=SPEC_HELP.format(example="lps:p=11,q=7"))
    p.add_argument("-p", type=integer, default=None, help="endpoints per router (default: family's choice)")
    p.add_argument("--fail-step", type=float, default=None, metavar="STEP",
                   help="run the link-failure study, removing this fraction of the links per step (e.g. 0.05); "
                        "not `sim`'s --fail-links, the fraction failed in one network")
    # the name before --fail-step, kept working (hidden): in sim and sweep --fail-links is a fraction
    p.add_argument("--fail-links", type=float, dest="fail_step", help=argparse.SUPPRESS)
    p.add_argument("--trials", type=integer, default=None, help="random failure orders for the study (default 100)")
    p.add_argument("--plot", default=None, metavar="FILE",
                   help="plot diameter/mean distance vs failed links (.png, .svg or .pdf)")
    p.add_argument("--seed", type=integer, default=0, help="seed of the failure orders, reported in the output (default 0)")
    p.add_argument("--bisection-seeds", type=integer, default=8, help="METIS runs, the best is kept (default 8)")
    p.add_argument("--no-spectrum", action="store_true", help="skip the eigenvalues")
    add_quiet(p)
    return p


def run(args) -> Result:
    from topologies.metrics import metrics, plot_resilience, resilience

    t0 = time.perf_counter()
    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES) if args.plot is not None else None
    study = args.fail_step is not None or args.trials is not None or plot is not None
    step = 0.05 if args.fail_step is None else args.fail_step
    trials = 100 if args.trials is None else args.trials
    if study:
        if not 0 < step < 1:
            raise ParameterError(f"--fail-step={step}: the failure step must be a fraction in (0, 1), e.g. 0.05")
        if trials < 1:
            raise ParameterError(f"trials={trials}: must be an integer >= 1")
        check_seed(args.seed, "--seed")
    net = build(args.spec, p=args.p)
    data = metrics(net, bisection_seeds=args.bisection_seeds, spectral=not args.no_spectrum)
    outputs = []
    if study:
        bar = progress(args, 1.0, "failure trials", bar_format="{l_bar}{bar}| {elapsed}<{remaining}")
        try:
            res = resilience(net, step=step, trials=trials, seed=args.seed, progress=bar.update)
        finally:
            bar.close()
        data["resilience"] = res.as_dict()
        data["disconnection_ratio"] = res.median_ratio
        data["seed"] = args.seed
        if plot is not None:
            title = f"{net.name}: {trials} trials, median trial shown"
            outputs.append(Output("--plot", plot, lambda tmp: plot_resilience(res, tmp, title=title), key="plot"))
            data["plot"] = str(plot)
    data["seconds"] = round(time.perf_counter() - t0, 3)
    rows = [(k, _fmt(v)) for k, v in data.items() if k not in ("distance_histogram", "resilience") and v is not None]
    text = table(rows)
    if "distance_histogram" in data:
        text += "\ndistance histogram (ordered pairs): " + " ".join(f"{h}:{c}" for h, c in enumerate(data["distance_histogram"]) if c)
    if "resilience" in data:
        r = data["resilience"]
        text += "\n\nfailed   diameter  mean distance   (median trial)\n"
        text += "\n".join(f"{c['failed_fraction']:6.2f}   {c['diameter']!s:>8}  {c['mean_distance']:.4f}" for c in r["curve"])
    return Result(data, text, outputs)


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return v
