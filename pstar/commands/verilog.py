"""`pstar verilog SPEC [--routing R] [-V N] [--out FILE] [--per-router] [--vc-policy P]`: the network as Verilog.

One top module (`pstar_network`) with every router and link of the netlist; endpoints are its
inject/eject streams and credit outputs (hdl/network.py). By default one router module
(`pstar_router`, id an input tied at each instance, and with turn classes an `up` input too)
serves all routers, so the file holds one copy of the router logic; table routings load their
rows through the top's `load` port.
`--per-router` writes one module per router instead (id and table contents as constants), for
area studies.
"""
from __future__ import annotations

import time

from contract.cli import add_router_arguments, router_params_from_args
from contract.params import PARAMS
from topologies import build
from topologies.errors import ParameterError

from ..outputs import Output, check_output
from . import SPEC_HELP, Result, integer, table

ROUTINGS = ("polarstar", "min", "polarized")


def add_parser(sub):
    p = sub.add_parser("verilog", help="write the network (routers + links) as Verilog")
    p.add_argument("spec", metavar="SPEC", help=SPEC_HELP.format(example="polarstar:q=3,supernode=iq,degree=0"))
    p.add_argument("--routing", default="polarstar", metavar="R",
                   help=f"routing unit: {', '.join(ROUTINGS)} (default polarstar)")
    add_router_arguments(p, only=("vcs", "depth"), computed={
        "vcs": f"max({PARAMS['vcs'].default}, the routing's deadlock-free VC count)"})
    p.add_argument("-p", type=integer, default=None, help="endpoints per router (default: family's choice)")
    p.add_argument("--out", default="pstar_network.v", metavar="FILE",
                   help="output file (default pstar_network.v)")
    p.add_argument("--per-router", action="store_true", help="one Verilog module per router (area studies)")
    add_router_arguments(p, only=("vc_policy", "header", "flit"),
                         notes={"vc_policy": "; with turns the shared module's `up` input gives each router its class steps"})
    return p


def run(args) -> Result:
    from hdl.network import build_routing, network_verilog
    from routing_logic.registry import make_routing

    if args.routing not in ROUTINGS:
        raise ParameterError(f"routing={args.routing!r}: the RTL has units for {', '.join(ROUTINGS)}")
    t0 = time.perf_counter()
    out = check_output(args.out, "--out")
    net = build(args.spec, p=args.p)
    if net.num_endpoints < 1:
        raise ParameterError("p: the network has no endpoints (use -p P)")
    vcs = args.vcs
    if vcs is None:
        probe = make_routing(args.routing, net, check_deadlock=False, vcs=1, vc_policy=args.vc_policy)
        vcs = max(PARAMS["vcs"].default, int(probe.default_vcs()))
    params = router_params_from_args(args, vcs=vcs)
    routing_obj = build_routing(net, args.routing, params, args.vc_policy)
    text, top = network_verilog(net, args.routing, params, shared=not args.per_router, routing_obj=routing_obj,
                                header=args.header, flit=args.flit)
    data = {"spec": net.spec or net.name, "routers": net.num_routers, "endpoints": net.num_endpoints,
            "routing": args.routing, "vcs": vcs, "vc_policy": args.vc_policy, "depth": params.depth, "ports_per_router": top.R + top.p,
            "vc_classes": top.C, "flit_bits": top.layout.size, "header": args.header, "flit": args.flit, "per_router": bool(args.per_router),
            "router_modules": net.num_routers if args.per_router else 1, "out": str(out), "bytes": len(text),
            "seconds": round(time.perf_counter() - t0, 2)}
    return Result(data, table(list(data.items())), [Output("--out", out, lambda tmp: tmp.write_text(text), key="out")])
