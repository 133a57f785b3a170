"""Where a router's area goes (`pstar fpga area`): the bare router, without the traffic harness
of `fpga.tops`, synthesized for the ECP5 by Yosys with its hierarchy kept, and its cells summed
per component of hdl/router.py.

The router is built exactly as the `router` design builds it (`NetworkPlan.make_router`, constant
id; with a minimal unit, without u-turn paths, as in a network), so the figures are those of one
router of SPEC with P ports, V VCs, B-deep buffers and W-bit flit data. With the hierarchy kept,
Yosys cannot optimize across component boundaries, so the total differs from (mostly exceeds) a
flattened synthesis's. That one is run too, in parallel, with the build's abc9 script (`--abc`;
the kept hierarchy takes synth_ecp5's own), and reported as `flattened`: what a build's router
costs before nextpnr packs it. The component shares are of the unflattened total. LUT sites count
a CCU2C (carry) cell as two LUT4s; with wide LUTs (the default) a PFUMX / L6MUX21 joins LUT4s
into a 5- / 6-input function inside a slice and takes no LUT site of its own.
"""
from __future__ import annotations

import dataclasses
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time

from hdl.delay import KEEP_REGISTERS_YOSYS
from topologies.errors import ParameterError

from .build import FpgaConfig, abc_script, body_block_bits, ecp5_muxes, get_board, pipeline_report, tool_env, validate

# (key, what it is, module-name pattern below the router); "core" takes the router module itself
COMPONENTS = (
    ("input_units", "input units: per port the link registers and V FIFOs of B entries (LUTRAM, the body partly in "
                    "EBR with --body-bram), the front fields read at every VC, the body at the chosen VC", r"input\d+"),
    ("vc_allocator", "VC allocator: each head's best free output VC, one round-robin arbiter per output VC over the "
                     "input VCs of its class", r"vc_alloc"),
    ("switch_allocator", "switch allocator: round-robin arbiters per input port over its V VCs, per output port "
                         "over the P inputs", r"sw_alloc"),
    ("switch_traversal", "switch traversal: per input a V:1 of the front fields, per output a P:1 of the flits",
     r"traversal"),
    ("output_unit", "output unit: credit counters and flags, output-VC ownership", r"outputs"),
    ("unit", "routing unit: one lane per input port", r"unit"),
    ("core", "the rest: the input VCs' allocation state, held credit flags, drop count", None),
)
CELLS = ("LUT4", "CCU2C", "PFUMX", "L6MUX21", "TRELLIS_DPR16X4", "DP16KD", "TRELLIS_FF")


def stat_script(source: str, top: str, stat_json: str, flatten: bool, wide_luts: bool, abc: str) -> str:
    """The Yosys script that synthesizes Verilog file `source` for the ECP5 as a build does
    (register copies kept, `abc`: an `abc_script`) and writes its cell counts to `stat_json`."""
    flags = ("" if flatten else " -noflatten") + ("" if wide_luts else " -nowidelut")
    return (f"read_verilog {source}\nproc\n{KEEP_REGISTERS_YOSYS}{abc}\n"
            f"synth_ecp5{flags} -top {top}\ntee -q -o {stat_json} stat -json\n")


def lut_sites(cells: dict) -> int:
    return cells.get("LUT4", 0) + 2 * cells.get("CCU2C", 0)


def component_of(module: str, top: str = "router") -> str:
    """The COMPONENTS key of a Yosys module name (`router`, `router.va_arb_4_2.pick`, ...)."""
    name = module.lstrip("\\")
    if name == top:
        return "core"
    first = name.split(".")[1] if name.startswith(top + ".") else name
    for key, _, pattern in COMPONENTS:
        if pattern and re.fullmatch(pattern + r".*", first):
            return key
    raise ValueError(f"module {module!r}: not a component of the router")


def breakdown(stat: dict, top: str = "router") -> dict:
    """{component: {cell type: count}} from Yosys `stat -json` of the hierarchical router."""
    out = {key: dict.fromkeys(CELLS, 0) for key, _, _ in COMPONENTS}
    for module, info in stat["modules"].items():
        comp = out[component_of(module, top)]
        for cell, n in info.get("num_cells_by_type", {}).items():
            if cell in comp:
                comp[cell] += int(n)
    return out


def area(cfg: FpgaConfig, progress: bool = True) -> dict:
    """Synthesize router `cfg.router` of `cfg.spec` (ECP5, hierarchy kept) and return its cells per
    component, with each component's share of the LUT sites."""
    from hdl.network import NetworkPlan
    from hdl.verilog_out import to_verilog

    board = get_board(cfg.board)
    if board.family != "ecp5":
        raise ParameterError(f"board={cfg.board!r}: the area breakdown maps to the ECP5 (ulx3s-85f)")
    _, net, params, _, routing = validate(dataclasses.replace(cfg, design="router"))
    t0 = time.monotonic()

    def say(text):
        if progress:
            sys.stderr.write(f"[area] {text} ({time.monotonic() - t0:.0f} s)\n")

    plan = NetworkPlan(net, cfg.routing, params, routing_obj=routing, header=cfg.header,
                       body_block_bits=body_block_bits(cfg, net, params), flit=cfg.flit,
                       registered_fronts=cfg.front == "reg", ecp5_muxes=ecp5_muxes(cfg))
    router = plan.make_router(cfg.router)
    verilog = to_verilog(router, "router")
    wide = "" if cfg.wide_luts else " -nowidelut"
    say(f"elaborated; synthesizing twice, in parallel (Yosys synth_ecp5{wide}, with and without -noflatten)")
    env = tool_env("ecp5")
    with tempfile.TemporaryDirectory(prefix="pstar-area-") as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "router.v").write_text(verilog)
        runs = {}
        for kind in ("kept", "flat"):
            # as the build synthesizes (fpga.build): register copies kept, wide LUTs or not, and
            # flattened, its abc9 script (`depth` on the kept hierarchy ran for over 13 minutes)
            abc = abc_script(cfg.abc) if kind == "flat" else ""
            (tmp / f"{kind}.ys").write_text(stat_script("router.v", "router", f"{kind}.json", kind == "flat",
                                                        cfg.wide_luts, abc))
            runs[kind] = subprocess.Popen([env["YOSYS"], "-q", "-l", f"{kind}.log", "-s", f"{kind}.ys"], cwd=tmp, env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        stats = {}
        for kind, proc in runs.items():
            code = proc.wait()
            if code != 0 or not (tmp / f"{kind}.json").exists():
                log = tmp / f"{kind}.log"
                tail = log.read_text()[-400:] if log.exists() else ""
                raise ParameterError(f"yosys: synthesis of the router failed (exit {code}): {tail.strip()}")
            stats[kind] = json.loads((tmp / f"{kind}.json").read_text())
    say("done")
    parts = breakdown(stats["kept"])
    total = {c: sum(p[c] for p in parts.values()) for c in CELLS}
    flat = breakdown(stats["flat"])["core"]          # flattened: one module, the router
    sites = lut_sites(total)
    P, V = router.P, params.vcs
    return {
        "spec": net.spec or cfg.spec, "routing": cfg.routing, "router": cfg.router, "ports": P, "vcs": V,
        "depth": params.depth, "flit_width": params.payload_bits, "flit_bits": router.layout.size, "header": cfg.header, "flit": cfg.flit,
        "body_bram_bits": router.body_block_bits,
        **pipeline_report(params, routing.vc_policy.name),
        "va_arbiters": P * V, "wide_luts": cfg.wide_luts, "abc": cfg.abc,
        "components": [{"component": key, "what": what, **parts[key], "lut_sites": lut_sites(parts[key]),
                        "share": round(lut_sites(parts[key]) / sites, 4) if sites else 0.0}
                       for key, what, _ in COMPONENTS],
        "total": {**total, "lut_sites": sites},
        "flattened": {**flat, "lut_sites": lut_sites(flat)},
        "seconds": round(time.monotonic() - t0, 1),
    }


def table(rep: dict) -> str:
    head = "| component | LUT sites | share | LUT4 | CCU2C | PFUMX + L6MUX21 | DPR16X4 | DP16KD | FF | what |\n" \
           "|---|---|---|---|---|---|---|---|---|---|"
    rows = [head]
    flat = {"component": "flattened", "share": None, **rep["flattened"],
            "what": "the same router synthesized flat, as a build synthesizes it (optimized across components)"}
    for c in rep["components"] + [{"component": "total", "what": "", "share": 1.0, **rep["total"]}, flat]:
        share = "" if c["share"] is None else f"{100 * c['share']:.1f} %"
        rows.append(f"| {c['component']} | {c['lut_sites']} | {share} | {c['LUT4']} | {c['CCU2C']} | "
                    f"{c['PFUMX'] + c['L6MUX21']} | {c['TRELLIS_DPR16X4']} | {c['DP16KD']} | {c['TRELLIS_FF']} | "
                    f"{c['what']} |")
    return "\n".join(rows)


__all__ = ["COMPONENTS", "area", "breakdown", "component_of", "stat_script", "table"]
