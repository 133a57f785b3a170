"""`pstar design-space --radix R [--plot FILE]`: feasible PolarStar configurations for a radix."""
from __future__ import annotations

from topologies.errors import ParameterError
from topologies.polarstar import design_space

from ..outputs import PLOT_SUFFIXES, Output, check_output
from . import Result, integer, table

RADIX_LIMIT = 100_000   # design_space(R) tries every q < R: 0.04 s at R = 10^4
PLOT_RADIX_LIMIT = 512  # the plot runs design_space for every radix 8..R: a few seconds at this one


def add_parser(sub):
    p = sub.add_parser("design-space", help="feasible PolarStar (q, supernode, d') for a radix")
    p.add_argument("--radix", type=integer, required=True, help="network radix d* = q + 1 + d'")
    p.add_argument("--plot", default=None, metavar="FILE",
                   help="plot order and Moore efficiency vs radix (8..max(R, 32)) to FILE (.png, .svg or .pdf)")
    return p


def run(args) -> Result:
    plot = check_output(args.plot, "--plot", PLOT_SUFFIXES) if args.plot is not None else None
    if args.radix > RADIX_LIMIT:
        raise ParameterError(f"radix={args.radix}: at most {RADIX_LIMIT}")
    if plot is not None and args.radix > PLOT_RADIX_LIMIT:
        raise ParameterError(f"radix={args.radix}: --plot covers radixes up to {PLOT_RADIX_LIMIT}")
    configs = design_space(args.radix)
    if not configs:
        raise ParameterError(f"radix={args.radix}: no feasible PolarStar configuration")
    data = {"radix": args.radix, "largest": configs[0].as_dict(), "configs": [c.as_dict() for c in configs]}
    outputs = []
    if plot is not None:
        from topologies.plots import plot_design_space

        radixes = range(8, max(args.radix, 32) + 1)
        outputs.append(Output("--plot", plot, lambda tmp: plot_design_space(radixes, tmp), key="plot"))
        data["plot"] = str(plot)
    rows = [(c.q, c.supernode, c.degree, c.routers, f"{c.moore_efficiency:.3f}") for c in configs]
    text = table(rows, ["q", "supernode", "d'", "routers", "moore_eff"])
    text += f"\nlargest: q={configs[0].q}, {configs[0].supernode}, d'={configs[0].degree} -> {configs[0].routers} routers"
    return Result(data, text, outputs)
