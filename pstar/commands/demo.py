"""`pstar demo [--spec SPEC] [--out-dir DIR]`: the whole pipeline on a small PolarStar.

Build the network, check the arithmetic PolarStar routing against BFS on every router pair,
simulate one load point on the cycle-accurate model, write the network's Verilog, run that
Verilog in Verilator in lockstep with the model (every ejected flit compared: "RTL = model"),
and write a short report with the files to DIR. Progress lines go to stderr.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from topologies import build, export
from topologies.errors import ParameterError
from topologies.polarstar import PolarStarStructure

from ..outputs import check_output_dir
from . import Result, add_quiet

DEFAULT_SPEC = "polarstar:q=3,supernode=iq,degree=0"       # 26 routers, 52 endpoints
LARGE_SPEC = "polarstar:q=11,supernode=iq,degree=3"        # the paper's 1,064 routers
COSIM_MAX_ROUTERS = 128      # larger networks: the Verilator build takes many minutes
ROUTING, VCS = "polarstar", 4
STEPS = 6


def add_parser(sub):
    p = sub.add_parser("demo", help="the whole pipeline on a small PolarStar: build, check the routing, "
                                    "simulate, write Verilog, co-simulate it in Verilator")
    p.add_argument("--spec", default=DEFAULT_SPEC, metavar="SPEC",
                   help=f"the PolarStar (SPEC or netlist file; default: the 26-router {DEFAULT_SPEC}; "
                        f"the 1,064-router network: {LARGE_SPEC}; co-simulated up to {COSIM_MAX_ROUTERS} routers)")
    p.add_argument("--out-dir", default="pstar-demo", metavar="DIR",
                   help="folder for the report, netlists and Verilog (created; its parent must exist; "
                        "default: %(default)s)")
    p.add_argument("--load", type=float, default=0.4, metavar="X",
                   help="offered load of the simulated point and the co-simulation, flits/cycle/endpoint "
                        "(default: %(default)s)")
    p.add_argument("--cycles", type=int, default=3000, metavar="N",
                   help="cycles of the simulated point (after 1,000 of warm-up) and of the co-simulation "
                        "(default: %(default)s)")
    p.add_argument("--no-cosim", action="store_true", help="skip the Verilator co-simulation")
    add_quiet(p)
    return p


def _progress(quiet: bool):
    """say(step, text): one progress line on stderr, unless --quiet."""
    def say(step: int, text: str) -> None:
        if not quiet:
            print(f"[{step}/{STEPS}] {text}", file=sys.stderr, flush=True)
    return say


def run(args) -> Result:
    if not 0 < args.load <= 1:
        raise ParameterError(f"--load={args.load}: must be in (0, 1] flits/cycle/endpoint")
    if not 1 <= args.cycles <= 1_000_000:
        raise ParameterError(f"--cycles={args.cycles}: must be in 1..1,000,000")
    out = check_output_dir(args.out_dir, "--out-dir")
    say = _progress(args.quiet)
    t0 = time.perf_counter()
    net = build(args.spec)
    if not isinstance(net.structure, PolarStarStructure):
        raise ParameterError(f"--spec {args.spec}: not a PolarStar; the demo runs its arithmetic routing "
                             f"(e.g. --spec {DEFAULT_SPEC})")
    try:
        out.mkdir(exist_ok=True)
    except OSError as e:
        raise ParameterError(f"--out-dir {out}: {e.strerror}") from None
    data = {"spec": net.spec or args.spec, "name": net.name, "routers": net.num_routers, "links": net.num_links,
            "radix": net.radix, "endpoints": net.num_endpoints, "files": []}
    for suffix in (".json", ".anynet"):
        export(net, out / f"network{suffix}")
        data["files"].append(f"network{suffix}")
    say(1, f"built {net.name}: {net.num_routers} routers, {net.num_links} links, radix {net.radix}, "
            f"{net.num_endpoints} endpoints ({time.perf_counter() - t0:.1f} s); netlists written")
    data["routing_check"] = _check_routing(net, say)
    from contract.params import RouterParams
    from sim.experiment import build_routing
    params = RouterParams(vcs=VCS)
    routing = build_routing(net, ROUTING, params)
    data["simulation"] = _simulate(net, routing, params, args, say)
    data["verilog"] = _write_verilog(net, routing, params, out, say)
    data["files"].append("network.v")
    data["cosim"] = _cosimulate(args, net, out, say)
    data["seconds"] = round(time.perf_counter() - t0, 1)
    text = _report(data)
    (out / "report.md").write_text(text + "\n")
    data["files"].append("report.md")
    say(6, f"report written: {out / 'report.md'}")
    data["out_dir"] = str(out)
    failed = not data["routing_check"]["minimal"] or data["cosim"].get("rtl_equals_model") is False
    return Result(data, text, failed=failed)


def _check_routing(net, say) -> dict:
    from routing_logic.polarstar import PolarStarArithmetic, verify_against_bfs
    from topologies.distances import distance_matrix

    t = time.perf_counter()
    res = verify_against_bfs(PolarStarArithmetic(net.structure), net, distance_matrix(net))
    bad = {k: int(res[k]) for k in ("distance_mismatches", "next_hop_failures", "minimal_port_mismatches")}
    ok = not any(bad.values())
    say(2, f"arithmetic PolarStar routing on all {res['pairs']} router pairs: "
            + ("minimal, equal to BFS" if ok else f"WRONG: {bad}") + f" ({time.perf_counter() - t:.1f} s)")
    return {"pairs": int(res["pairs"]), "minimal": ok, "max_hops": int(res["max_hops"]), **bad}


def _simulate(net, routing, params, args, say) -> dict:
    from sim.experiment import run_point

    d = run_point(net, ROUTING, "uniform", args.load, params, warmup=1000, cycles=args.cycles, routing_obj=routing)
    keys = ("load", "offered", "accepted", "latency_mean", "latency_p99", "hops_mean", "lost", "vcs", "seconds")
    say(3, f"cycle model, uniform traffic at load {args.load}: accepted {d['accepted']:.3f} flits/cycle/endpoint, "
            f"latency {d['latency_mean']} cycles mean, {d['lost']} flits lost ({d['seconds']:.1f} s)")
    out = {k: d[k] for k in keys}
    if out["latency_p99"] is not None:
        out["latency_p99"] = round(out["latency_p99"], 1)
    return out


def _write_verilog(net, routing, params, out: Path, say) -> dict:
    from hdl.network import network_verilog

    t = time.perf_counter()
    text, _ = network_verilog(net, ROUTING, params, shared=True, packed=True, routing_obj=routing, flit="wide")
    (out / "network.v").write_text(text)
    lines = text.count("\n")
    say(4, f"Verilog of the network: {out / 'network.v'} ({lines} lines, one router module instantiated "
            f"{net.num_routers} times; {time.perf_counter() - t:.1f} s)")
    return {"file": "network.v", "lines": lines, "bytes": len(text)}


def _cosimulate(args, net, out: Path, say) -> dict:
    from pstar import cosim

    why = ("--no-cosim" if args.no_cosim else
           f"{net.num_routers} routers (the demo co-simulates up to {COSIM_MAX_ROUTERS})"
           if net.num_routers > COSIM_MAX_ROUTERS else cosim.unavailable())
    if why:
        say(5, f"co-simulation skipped: {why}")
        return {"skipped": why}
    say(5, "co-simulation: Verilator build of network.v (about a minute on 2 cores the first time, "
            "then cached in build/cocotb/) ...")
    rep = cosim.cosimulate(args.spec, ROUTING, VCS, args.load, args.cycles,
                           progress=None if args.quiet else lambda s: print(f"      {s}", file=sys.stderr, flush=True))
    ran = Path(rep["build"]["build_dir"]) / "pstar_network.v"
    same_file = ran.read_bytes() == (out / "network.v").read_bytes()
    equal = rep["mismatch"] is None and same_file
    d = {"rtl_equals_model": equal, "cycles": rep["cycles"], "flits_matched": rep["flits_matched"],
         "credits_matched": rep["credits_matched"], "verilog_is_network_v": same_file,
         "mismatch": rep["mismatch"], "cycles_per_s": rep["cycles_per_s"], "build": rep["build"]}
    say(5, (f"RTL = model: {rep['flits_matched']} flits matched in cycle, endpoint and contents over "
             f"{rep['cycles']} cycles" if equal else
             f"RTL != model: {rep['mismatch'] or 'the co-simulated Verilog is not network.v'}"))
    return d


def _report(d: dict) -> str:
    rc, s, v, c = d["routing_check"], d["simulation"], d["verilog"], d["cosim"]
    lines = [f"# pstar demo: {d['name']}", "",
             f"- network: `{d['spec']}`: {d['routers']} routers, {d['links']} links, radix {d['radix']}, "
             f"{d['endpoints']} endpoints (network.json, network.anynet)",
             f"- routing: arithmetic PolarStar on all {rc['pairs']} router pairs: "
             + (f"minimal (equal to BFS), at most {rc['max_hops']} hops" if rc["minimal"] else
                f"NOT minimal: {rc['distance_mismatches']} distance, {rc['next_hop_failures']} next-hop, "
                f"{rc['minimal_port_mismatches']} port mismatches"),
             f"- cycle model: uniform traffic, offered {s['offered']}, accepted {s['accepted']} flits/cycle/endpoint, "
             f"latency mean {s['latency_mean']} / p99 {s['latency_p99']} cycles, {s['hops_mean']} hops, "
             f"{s['vcs']} VCs, {s['lost']} lost",
             f"- Verilog: {v['file']} ({v['lines']} lines)"]
    if "skipped" in c:
        lines.append(f"- co-simulation skipped: {c['skipped']}")
    elif c["rtl_equals_model"]:
        lines.append(f"- Verilator co-simulation of network.v: RTL = model, {c['flits_matched']} flits and "
                     f"{c['credits_matched']} credits matched over {c['cycles']} cycles")
    else:
        lines.append(f"- Verilator co-simulation: RTL != model: {c['mismatch'] or 'Verilog differs from network.v'}")
    lines.append(f"- total {d['seconds']} s")
    return "\n".join(lines)
