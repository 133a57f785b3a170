"""`pstar design-space --radix R [--plot FILE]`: feasible PolarStar configurations for a radix."""
from __future__ import annotations

from topologies.errors import ParameterError
from topologies.polarstar import design_space, largest

from . import Result, table


def add_parser(sub):
    p = sub.add_parser("design-space", help="feasible PolarStar (q, supernode, d') for a radix")
    p.add_argument("--radix", type=int, required=True, help="network radix d* = q + 1 + d'")
    p.add_argument("--plot", default=None, metavar="FILE",
                   help="plot order and Moore efficiency vs radix (8..max(R, 32)) to FILE (.png/.svg)")
    return p


def run(args) -> Result:
    configs = design_space(args.radix)
    if not configs:
        raise ParameterError(f"radix={args.radix}: no feasible PolarStar configuration")
    data = {"radix": args.radix, "largest": configs[0].as_dict(), "configs": [c.as_dict() for c in configs]}
    if args.plot:
        from topologies.plots import plot_design_space

        plot_design_space(range(8, max(args.radix, 32) + 1), args.plot)
        data["plot"] = args.plot
    rows = [(c.q, c.supernode, c.degree, c.routers, f"{c.moore_efficiency:.3f}") for c in configs]
    text = table(rows, ["q", "supernode", "d'", "routers", "moore_eff"])
    text += f"\nlargest: q={configs[0].q}, {configs[0].supernode}, d'={configs[0].degree} -> {configs[0].routers} routers"
    return Result(data, text)
