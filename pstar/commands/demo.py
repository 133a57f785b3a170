"""`pstar demo`: the main job, end to end on a small PolarStar (grows as stages land)."""
from __future__ import annotations

from pathlib import Path

from topologies import build, export
from topologies.polarstar import largest

from . import Result, table
from .topology import properties


def add_parser(sub):
    p = sub.add_parser("demo", help="build a PolarStar, print its properties and write its netlist")
    p.add_argument("--spec", default="polarstar:q=11,supernode=iq,degree=3")
    p.add_argument("--out-dir", default="pstar-demo", help="where netlists and plots go")
    return p


def run(args) -> Result:
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    net = build(args.spec)
    data = {"topology": properties(net)}
    written = []
    for suffix in (".json", ".anynet", ".dot"):
        path = out / f"network{suffix}"
        export(net, path)
        written.append(str(path))
    best = largest(net.radix)
    data["largest_for_radix"] = best.as_dict()
    from topologies.plots import plot_design_space

    plot = out / "design_space.png"
    plot_design_space(range(8, 65), plot)
    written.append(str(plot))
    data["files"] = written
    t = data["topology"]
    text = table([(k, v) for k, v in t.items() if v is not None and v != ""])
    text += (f"\nlargest PolarStar at radix {net.radix}: q={best.q}, {best.supernode}, d'={best.degree}, "
             f"{best.routers} routers (Moore efficiency {best.moore_efficiency:.3f})")
    text += "\nwrote: " + ", ".join(written)
    return Result(data, text)
