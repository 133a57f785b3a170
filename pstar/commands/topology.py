"""`pstar topology SPEC [-p P] [--out FILE]`: build a topology, print its properties, export it."""
from __future__ import annotations

import time

from topologies import build, distance_stats, export
from topologies.exports import SUFFIXES

from ..outputs import Output, check_output
from . import SPEC_HELP, Result, integer, table

DISTANCE_LIMIT = 20_000


def add_parser(sub):
    p = sub.add_parser("topology", help="build a topology, print its properties, export its netlist")
    p.add_argument("spec", metavar="SPEC", help=SPEC_HELP.format(example="polarstar:q=11,supernode=iq,degree=3"))
    p.add_argument("-p", type=integer, default=None, help="endpoints per router (default: family's choice)")
    p.add_argument("--out", default=None, metavar="FILE", help="export netlist (.json, .anynet, .graphml, .dot)")
    return p


def properties(net, with_distances: bool | None = None) -> dict:
    d = {"name": net.name, "spec": net.spec, "routers": net.num_routers, "links": net.num_links,
         "radix": net.radix, "min_degree": int(net.degree.min()), "ports_per_router": net.uniform_ports,
         "endpoints": net.num_endpoints}
    if with_distances is None:
        with_distances = net.num_routers <= DISTANCE_LIMIT
    if with_distances:
        d.update(distance_stats(net).as_dict())
    return d


def describe(data: dict) -> str:
    rows = [(k, v) for k, v in data.items() if v is not None and v != ""]
    return table(rows)


def run(args) -> Result:
    t0 = time.perf_counter()
    out = check_output(args.out, "--out", SUFFIXES) if args.out is not None else None
    net = build(args.spec, p=args.p)
    data = properties(net)
    outputs = []
    if out is not None:
        outputs.append(Output("--out", out, lambda tmp: export(net, tmp), key="out"))
        data["format"] = out.suffix.lower()[1:]
        data["out"] = str(out)
    data["seconds"] = round(time.perf_counter() - t0, 3)
    return Result(data, describe(data), outputs)
