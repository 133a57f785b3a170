"""`pstar fpga build|presets|area|sweep`: FPGA prototypes through Yosys + nextpnr (YoWASP tools from PyPI).

  pstar fpga build [SPEC] [--preset NAME] [--board B] [--design D] [router and build flags] [--dry-run]
                   [--census N] [--json]
  pstar fpga presets [--json]
  pstar fpga area [SPEC] [--preset NAME] [router flags] [--json]
  pstar fpga sweep [--quick] [--out docs/fpga_sweep] [--only NAMES | --no-build] [--preset NAME] [--seeds LIST]
                   [flow flags] [--json]

`build` runs the flow to a bitstream and prints LUT4, FF, BRAM, DSP use and nextpnr's maximum
frequency; `presets` lists the named configurations of fpga/presets.toml with their last measured
figures; `area` synthesizes the bare router with its hierarchy kept and prints its cells per
component (fpga/area.py); `sweep` builds the area/Fmax table of docs/fpga_sweep.md (fpga/sweep.py).
Every build flag, its default and its help come from FpgaConfig (fpga/build.py) through fpga/cli.py,
the router's from the contract; a flag given beats the preset's value (fpga/presets.py).
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from topologies.errors import ParameterError

from ..outputs import check_output, check_output_dir
from . import SPEC_HELP, Result, add_quiet, integer, table

# the FpgaConfig fields each command takes as flags (fpga/cli.py makes them from FpgaConfig)
# (what is built, before the router's flags; the buffer options only FPGA builds have; the rest)
FLOW = ("seed", "pnr_router", "placer", "tmg_ripup", "pnr_margin")
BUILD_DESIGN = ("board", "design", "routing", "ports", "router", "id_input")
BUFFER_FLAGS = ("front", "body_bram")
BUILD_REST = ("freq_mhz", *FLOW, "wide_luts", "abc", "build_dir")
AREA_DESIGN = ("board", "routing", "ports", "router")
SWEEP_FLAGS = (*FLOW, "wide_luts", "abc")


def _preset_flag(p, default_note: str) -> None:
    p.add_argument("--preset", default=None, metavar="NAME",
                   help="start from a named configuration of fpga/presets.toml (pstar fpga presets lists them); "
                        "every flag given overrides the preset's value, the others take it" + default_note)


def _spec_arg(p, example: str) -> None:
    from fpga.build import BUILD_OPTIONS
    p.add_argument("spec", metavar="SPEC", nargs="?", default=None,
                   help=SPEC_HELP.format(example=example) + f" (default: the preset's, else {BUILD_OPTIONS['spec'].default})")


def _build_parser(fsub):
    from fpga.cli import add_build_arguments, add_router_flags
    b = fsub.add_parser("build", help="build one design to a bitstream and report its area and Fmax")
    _spec_arg(b, "polarstar:q=3,supernode=iq,degree=3")
    from fpga.presets import load
    starts = "; ".join(f"a {design} on the {board} from {name}" for (board, design), name in load()[1].items())
    _preset_flag(b, f". Without --preset: {starts} (the best configuration measured there), the whole preset with "
                    "no SPEC, its build options when SPEC and the sizes are the preset's (fpga/presets.toml)")
    add_build_arguments(b, BUILD_DESIGN)
    add_router_flags(b)
    add_build_arguments(b, (*BUFFER_FLAGS, *BUILD_REST))
    b.add_argument("--quiet", action="store_true", help="no progress on stderr")
    b.add_argument("--dry-run", action="store_true", help="check the options and print what would be built")
    b.add_argument("--census", type=integer, default=0, metavar="N",
                   help="ECP5: stop after synthesis and list the N register groups with the longest "
                        "estimated paths (fpga/logic_depth.py; minutes, no place and route)")
    _seed_flags(b, "")
    b.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def _seed_flags(p, each: str) -> None:
    """--seeds, --jobs, --minutes (fpga/seeds.py) of `build` and `sweep` (each: "" or " of each point")."""
    p.add_argument("--seeds", metavar="LIST", default=None,
                   help=f"place and route{each} at each of these nextpnr seeds (1-5, 1,3,7) after one synthesis, keep "
                        "the best bitstream and report every seed with the median, min and max Fmax (fpga/seeds.py)")
    p.add_argument("--jobs", type=integer, default=None, metavar="N",
                   help="with --seeds: seeds placed and routed at once (default: the cores)")
    p.add_argument("--minutes", type=float, default=None, metavar="M",
                   help="with --seeds: stop a seed not routed in M minutes (it counts as 0 MHz)")


def _seed_run(args):
    """The SeedRun of --seeds/--jobs/--minutes, or None."""
    if args.seeds is None:
        if args.jobs is not None or args.minutes is not None:
            raise ParameterError("jobs, minutes: options of --seeds")
        return None
    from fpga.seeds import SeedRun, parse_seeds
    return SeedRun(parse_seeds(args.seeds), args.jobs if args.jobs is not None else (os.cpu_count() or 1),
                   args.minutes)


def _seeds_table(rep) -> str:
    rows = [(r["seed"], r["status"], r.get("fmax_mhz", "-"), r.get("timing_met", "-"), r["minutes"])
            for r in rep["seeds"]]
    return ("\n\n" + table(rows, ("seed", "status", "Fmax MHz", "timing met", "minutes")) +
            f"\n\nFmax over {rep['seeds_run']} seeds (one not routed counts as 0): median {rep['fmax_median_mhz']}, "
            f"min {rep['fmax_min_mhz']}, max {rep['fmax_max_mhz']}; {rep['seeds_met']} met timing; "
            f"the bitstream is seed {rep['seed']}'s")


def add_parser(sub):
    from fpga.cli import add_build_arguments, add_router_flags
    p = sub.add_parser("fpga", help="FPGA builds: bitstream, utilization and Fmax (Yosys + nextpnr)")
    fsub = p.add_subparsers(dest="fpga_command", metavar="{build,presets,area,sweep}", parser_class=type(p))
    fsub.required = True
    _build_parser(fsub)
    ps = fsub.add_parser("presets", help="the named build configurations and their last measured figures")
    ps.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    a = fsub.add_parser("area", help="where one router's area goes: its ECP5 cells per component (Yosys)")
    _spec_arg(a, "polarstar:q=3,supernode=iq,degree=0")
    _preset_flag(a, " (its router: SPEC, sizes, router options)")
    add_build_arguments(a, AREA_DESIGN)
    add_router_flags(a)
    add_build_arguments(a, (*BUFFER_FLAGS, "wide_luts", "abc"))
    a.add_argument("--quiet", action="store_true", help="no progress on stderr")
    a.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    s = fsub.add_parser("sweep", help="the area/Fmax table: router P, V, B, W and routing unit vs q (ECP5)")
    s.add_argument("--quick", action="store_true", help="a few small points only")
    from fpga.sweep import OUT
    s.add_argument("--out", default=OUT, help=f"write OUT.json, OUT.md and OUT.png (default {OUT})")
    s.add_argument("--only", default=None, help="comma-separated point names to (re)build")
    s.add_argument("--no-build", action="store_true", help="build nothing: rewrite OUT.md and OUT.png from OUT.json")
    from fpga.sweep import default_preset
    _preset_flag(s, f" (its options only: pipeline, flits, synthesis, placement, seed; each point keeps its "
                    f"own SPEC and sizes; default: {default_preset() or 'none'}, the board's router default)")
    add_build_arguments(s, SWEEP_FLAGS)
    _seed_flags(s, " each point")
    add_quiet(s)
    s.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    return p


def check_sweep_out(out: str, no_build: bool) -> None:
    """`fpga sweep --out OUT` writes OUT.json, OUT.md and OUT.png: each a writable file name in an
    existing folder; with --no-build the table is made from OUT.json, which must then exist."""
    base = Path(out)
    if not base.name or base.name in (".", ".."):
        raise ParameterError(f"--out={out!r}: expected a file name prefix, e.g. docs/fpga_sweep")
    for suffix in (".json", ".md", ".png"):
        check_output(base.with_suffix(suffix), "--out")
    if no_build and not base.with_suffix(".json").is_file():
        raise ParameterError(f"--out {out}: --no-build makes the table from {base.with_suffix('.json')}, "
                             f"which does not exist")


def _presets_result() -> Result:
    """`pstar fpga presets`: name, board, design, what it is, its last measured Fmax and LUTs."""
    from fpga.presets import load, measured_fmax
    known, defaults = load()
    default_of = {name: f"{board} {design}" for (board, design), name in defaults.items()}
    rows, data = [], []
    for name, p in known.items():
        m = p.measured
        fmax = measured_fmax(p)
        rows.append((name + (" *" if name in default_of else ""), p.values["board"], p.values["design"], p.about,
                     fmax, f"{m['lut4']:,}" if "lut4" in m else "", m.get("commit", "")))
        data.append({"name": name, "about": p.about, "board": p.values["board"], "design": p.values["design"],
                     "default_for": default_of.get(name), "config": dataclasses.asdict(p.config()),
                     "measured": m})
    text = table(rows, ("preset", "board", "design", "what", "last measured Fmax", "LUT4", "commit"))
    text += ("\n\n* the default of `pstar fpga build` for its board and design; figures are one build each, "
             "or the median over the seeds shown (pstar fpga presets --json has every field, docs/fpga.md what "
             "they mean)")
    return Result({"presets": data}, text)


def _area_result(args) -> Result:
    from fpga.area import area, table as area_table
    from fpga.cli import given_values
    from fpga.presets import configure
    cfg, source = configure(given_values(args), args.preset, board_default=False)
    cfg = dataclasses.replace(cfg, design="router")
    rep = area(cfg, progress=not args.quiet) | source
    head = (f"router {rep['router']} of {rep['spec']}, {rep['routing']} unit: P={rep['ports']} V={rep['vcs']} "
            f"B={rep['depth']} W={rep['flit_width']} ({rep['flit_bits']}-bit {rep['flit']} flits, header {rep['header']}, "
            f"{rep['packet_id_bits']}-bit packet ids)"
            f"{', two-stage VA' if rep['va_stages'] == 2 else ''}"
            f"{', %s-stage SA' % ('two' if rep['sa_stages'] == 2 else 'three') if rep['sa_stages'] > 1 else ''}{('', ', ST stage', ', two ST stages')[rep['st_stage']]}"
            f"{', separable VA' if rep['va_separable'] else ''}"
            f"{', registered VC choice' if rep['va_choice_stage'] else ''}"
            f"{', turn VC classes' if rep['vc_policy'] == 'turns' else ''}"
            f"{', link latency %d' % rep['link_latency'] if rep['link_latency'] > 1 else ''}"
            f"{', credit latency %d' % rep['credit_latency'] if rep['credit_latency'] > 1 else ''}"
            ", ECP5 cells with the hierarchy kept"
            f"{'' if rep['wide_luts'] else ', no wide LUTs'}"
            f"{'' if rep['abc'] == 'default' else ', abc ' + rep['abc']}"
            f"{'; preset ' + rep['preset'] if rep['preset'] else ''}")
    return Result(rep, head + "\n\n" + area_table(rep))


def _sweep_result(args) -> Result:
    seeds = _seed_run(args)
    if seeds is not None and args.no_build:
        raise ParameterError("--seeds: places and routes, and --no-build builds nothing")
    check_sweep_out(args.out, args.no_build)
    from fpga.cli import given_values
    from fpga.sweep import markdown, run_sweep
    rows = run_sweep(quick=args.quick, out=args.out, only=args.only, no_build=args.no_build, progress=not args.quiet,
                     preset=args.preset, seeds=seeds, **given_values(args))
    return Result({"points": rows, "out": args.out, "preset": args.preset}, markdown(rows))


BUILD_KEYS = ["preset", "board", "design", "spec", "routing", "routers", "network_routers", "lanes", "id_input",
              "ports", "vcs", "depth", "flit_width", "flit_bits", "flit", "header", "packet_id_bits",
              "body_bram_bits", "body_bram_routers", "va_stages", "sa_stages", "st_stage", "va_separable",
              "va_choice_stage", "link_latency", "credit_latency", "vc_policy", "clock_mhz", "wide_luts", "abc",
              "nextpnr", "lut4", "ff", "bram", "dsp", "lutram", "lc", "fmax_mhz", "constraint_mhz", "timing_met",
              "slack_ns", "critical_path", "seconds", "build_dir", "bitstream", "log"]


def run(args) -> Result:
    if args.fpga_command == "presets":
        return _presets_result()
    if args.fpga_command == "sweep":
        return _sweep_result(args)
    if getattr(args, "build_dir", None) is not None:
        check_output_dir(args.build_dir, "--build-dir")
    if args.fpga_command == "area":
        return _area_result(args)
    from fpga.build import build
    from fpga.cli import given_values
    from fpga.presets import configure
    from fpga.report import describe_critical_path
    cfg, source = configure(given_values(args), args.preset)
    rep = build(cfg, progress=not args.quiet, dry_run=args.dry_run, census=args.census, seeds=_seed_run(args)) | source
    if "census" in rep:
        lines = [f"{g['estimate_ns']:6.2f} ns {g['cells']:3d} cells {g['bits']:4d} bits  {g['register']}  (from {g['from']})"
                 for g in rep["census"]]
        return Result(rep, "\n".join([f"estimated worst path per register group (fpga/logic_depth.py), "
                                       f"{rep['endpoints_over_10ns']} endpoints over 10 ns:"] + lines))
    shown = dict(rep)
    if "critical_path" in rep:
        shown["critical_path"] = describe_critical_path(rep["critical_path"])
    shown["preset"] = f"{rep['preset']} ({rep['preset_from']})" if rep["preset"] else "none (FpgaConfig's defaults)"
    text = table([(k, shown[k]) for k in BUILD_KEYS if k in shown])
    return Result(rep, text + (_seeds_table(rep) if "seeds" in rep else ""))
