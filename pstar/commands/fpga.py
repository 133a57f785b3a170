"""`pstar fpga build|sweep`: FPGA prototypes through Yosys + nextpnr (YoWASP tools from PyPI).

  pstar fpga build --board {ulx3s-85f,icebreaker} --design {router,network,unit} SPEC [--routing R]
                   [--ports P] [--vcs V] [--depth B] [--flit-width W] [--va-stages S] [--sa-stages S]
                   [--st-stage S] [--link-latency N] [--credit-latency N] [--vc-policy P] [--freq MHZ]
                   [--router N] [--id-input] [--seed N] [--pnr-router {router1,router2}] [--placer {heap,static}] [--tmg-ripup]
                   [--pnr-margin PCT] [--no-wide-luts] [--abc {default,depth}] [--census N] [--json]
  pstar fpga area SPEC [--routing R] [--ports P] [--vcs V] [--depth B] [--flit-width W] [--va-stages S] [--sa-stages S]
                  [--st-stage S] [--link-latency N] [--credit-latency N] [--vc-policy P] [--router N]
                  [--no-wide-luts] [--json]
  pstar fpga sweep [--quick] [--out docs/fpga_sweep] [--only NAMES | --no-build] [--pnr-router R] [--placer P] [--tmg-ripup]
                   [--no-wide-luts] [--json]

`build` runs the flow to a bitstream and prints LUT4, FF, BRAM, DSP use and nextpnr's maximum
frequency; `area` synthesizes the bare router with its hierarchy kept and prints its cells per
component (fpga/area.py); `sweep` builds the area/Fmax table of docs/fpga.md (fpga/sweep.py).
"""
from __future__ import annotations

from pathlib import Path

from contract.cli import add_router_arguments, values_from_args
from topologies.errors import ParameterError

from ..outputs import check_output, check_output_dir
from . import SPEC_HELP, Result, add_quiet, integer, table


def _pnr_router(p):
    p.add_argument("--pnr-router", default="router1", metavar="{router1,router2}",
                   help="nextpnr's router (default router1; router2 finishes congested large designs)")
    p.add_argument("--placer", default="heap", metavar="{heap,static}",
                   help="nextpnr's placer (default heap; static: electrostatic, shorter wires on dense designs)")
    p.add_argument("--tmg-ripup", action="store_true",
                   help="nextpnr's timing-driven rip-up: the router also reroutes nets on failing paths")
    p.add_argument("--pnr-margin", type=float, default=0.0, metavar="PCT",
                   help="ECP5: nextpnr times the clock PCT %% faster than the PLL makes it (over-constraint: "
                        "the placer and router keep working on paths that would just pass; timing_met is "
                        "still judged at the clock; default 0)")


def _wide_luts(p):
    p.add_argument("--no-wide-luts", action="store_true",
                   help="ECP5: synthesize with synth_ecp5 -nowidelut (LUT4s only, no PFUMX/L6MUX wide LUTs)")


def _abc(p):
    p.add_argument("--abc", default="default", metavar="{default,depth}",
                   help="ECP5: synth_ecp5's abc9 mapping script (default), or depth: the AIG mapped as it "
                        "comes (&if, then &mfs), without the passes that deepen every path to the deepest "
                        "one's depth (fewer logic levels: on the 100 MHz target router, a post-placement "
                        "estimate of 62 MHz against 46 with the default script; docs/fpga.md)")


def _router_options(p):
    """The router's flags: the contract's parameters a build takes (fpga.build.ROUTER_SPECS, with the
    FPGA prototypes' ranges), then the buffer options only the FPGA builds have."""
    from fpga.build import ROUTER_SPECS
    add_router_arguments(p, only=[spec.name for spec in ROUTER_SPECS.values()], fpga=True)
    p.add_argument("--front", default="reg", metavar="{reg,lutram}",
                   help="each input VC's front: a register loaded as the FIFO moves (reg, default: the "
                        "faster router) or read from the port's LUTRAM (lutram: fewer LUTs, for the dense "
                        "network builds); the same cycles either way")
    p.add_argument("--body-bram", default="off", choices=("auto", "off"),
                   help="with --st-stage 1 or 2: keep each input buffer's body (the flit fields only the crossbar "
                        "reads) in block RAM as far as the device's EBRs go, 36 bits per EBR and buffer "
                        "(auto: fewer LUTs for network prototypes), or all in LUTRAM (off, default)")


def _router_options_of(args) -> dict:
    """The options `_router_options` adds, as FpgaConfig fields."""
    from fpga.build import ROUTER_SPECS
    given = values_from_args(args)
    return {field: given[spec.name] for field, spec in ROUTER_SPECS.items()} | {
        "body_bram": args.body_bram, "front": args.front}


def _common_build(p):
    p.add_argument("--routing", default="polarstar", metavar="R", help="polarstar (arithmetic), min (table), polarized")
    _router_options(p)
    p.add_argument("--freq", type=float, default=None, metavar="MHZ",
                   help="design clock (ECP5: made by the PLL, default 100; iCE40: the 12 MHz board clock)")
    p.add_argument("--seed", type=integer, default=1, help="nextpnr placement seed (default 1)")
    _pnr_router(p)
    _wide_luts(p)
    _abc(p)
    p.add_argument("--build-dir", default=None, help="build directory (default build/fpga/<board>-<design>-<hash>)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--dry-run", action="store_true", help="check the options and print what would be built")


def add_parser(sub):
    p = sub.add_parser("fpga", help="FPGA builds: bitstream, utilization and Fmax (Yosys + nextpnr)")
    fsub = p.add_subparsers(dest="fpga_command", metavar="{build,area,sweep}", parser_class=type(p))
    fsub.required = True
    b = fsub.add_parser("build", help="build one design to a bitstream and report its area and Fmax")
    b.add_argument("spec", metavar="SPEC", help=SPEC_HELP.format(example="polarstar:q=3,supernode=iq,degree=0"))
    b.add_argument("--board", required=True, metavar="BOARD", help="ulx3s-85f or icebreaker")
    b.add_argument("--design", default="router", metavar="DESIGN",
                   help="router (one router with traffic generators on every port), network, or unit "
                        "(the router's routing unit alone; default router)")
    b.add_argument("--ports", type=integer, default=None, metavar="P",
                   help="ports per router (network radix + endpoints; default: the family's endpoints)")
    b.add_argument("--router", type=integer, default=0,
                   help="which router of SPEC the router or unit design builds (default 0)")
    b.add_argument("--id-input", action="store_true",
                   help="unit design: the router id is an input, one design for every router "
                        "(table units become a RAM loaded through the load port)")
    _common_build(b)
    b.add_argument("--census", type=integer, default=0, metavar="N",
                   help="ECP5: stop after synthesis and list the N register groups with the longest "
                        "estimated paths (fpga/logic_depth.py; minutes, no place and route)")
    b.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    a = fsub.add_parser("area", help="where one router's area goes: its ECP5 cells per component (Yosys)")
    a.add_argument("spec", metavar="SPEC", help=SPEC_HELP.format(example="polarstar:q=3,supernode=iq,degree=0"))
    a.add_argument("--board", default="ulx3s-85f", metavar="BOARD", help="an ECP5 board (default ulx3s-85f)")
    a.add_argument("--routing", default="polarstar", metavar="R", help="polarstar (arithmetic), min (table), polarized")
    a.add_argument("--ports", type=integer, default=None, metavar="P",
                   help="ports per router (network radix + endpoints; default: the family's endpoints)")
    a.add_argument("--router", type=integer, default=0, help="which router of SPEC (default 0)")
    _router_options(a)
    _wide_luts(a)
    a.add_argument("--quiet", action="store_true", help="no progress on stderr")
    a.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    s = fsub.add_parser("sweep", help="the area/Fmax table: router P, V, B, W and routing unit vs q (ECP5)")
    s.add_argument("--quick", action="store_true", help="a few small points only")
    s.add_argument("--out", default="docs/fpga_sweep", help="write OUT.json, OUT.md and OUT.png (default docs/fpga_sweep)")
    s.add_argument("--only", default=None, help="comma-separated point names to (re)build")
    s.add_argument("--no-build", action="store_true", help="build nothing: rewrite OUT.md and OUT.png from OUT.json")
    _pnr_router(s)
    _wide_luts(s)
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


def run(args) -> Result:
    if args.fpga_command == "sweep":
        check_sweep_out(args.out, args.no_build)
        from fpga.sweep import run_sweep
        rows = run_sweep(quick=args.quick, out=args.out, only=args.only, pnr_router=args.pnr_router,
                         placer=args.placer, no_build=args.no_build, wide_luts=not args.no_wide_luts,
                         tmg_ripup=args.tmg_ripup, pnr_margin=args.pnr_margin, progress=not args.quiet)
        from fpga.sweep import markdown
        return Result({"points": rows, "out": args.out}, markdown(rows))
    if getattr(args, "build_dir", None) is not None:
        check_output_dir(args.build_dir, "--build-dir")
    from fpga.build import FpgaConfig, build
    from fpga.report import describe_critical_path
    if args.fpga_command == "area":
        from fpga.area import area, table as area_table
        cfg = FpgaConfig(board=args.board, design="router", spec=args.spec, routing=args.routing, ports=args.ports,
                         router=args.router, **_router_options_of(args), wide_luts=not args.no_wide_luts)
        rep = area(cfg, progress=not args.quiet)
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
                f"{'' if rep['wide_luts'] else ', no wide LUTs'}")
        return Result(rep, head + "\n\n" + area_table(rep))
    cfg = FpgaConfig(board=args.board, design=args.design, spec=args.spec, routing=args.routing,
                     ports=args.ports, **_router_options_of(args), freq_mhz=args.freq, router=args.router,
                     id_input=args.id_input, seed=args.seed, pnr_router=args.pnr_router, placer=args.placer, wide_luts=not args.no_wide_luts,
                     tmg_ripup=args.tmg_ripup, pnr_margin=args.pnr_margin, abc=args.abc, build_dir=args.build_dir)
    rep = build(cfg, progress=not args.quiet, dry_run=args.dry_run, census=args.census)
    if "census" in rep:
        lines = [f"{g['estimate_ns']:6.2f} ns {g['cells']:3d} cells {g['bits']:4d} bits  {g['register']}  (from {g['from']})"
                 for g in rep["census"]]
        return Result(rep, "\n".join([f"estimated worst path per register group (fpga/logic_depth.py), "
                                       f"{rep['endpoints_over_10ns']} endpoints over 10 ns:"] + lines))
    keys = ["board", "design", "spec", "routing", "routers", "network_routers", "lanes", "id_input", "ports", "vcs",
            "depth", "flit_width", "flit_bits", "flit", "header", "packet_id_bits", "body_bram_bits", "va_stages", "sa_stages", "st_stage", "va_separable",
            "va_choice_stage", "link_latency",
            "credit_latency", "vc_policy",
            "clock_mhz", "wide_luts", "lut4", "ff", "bram", "dsp", "lutram", "lc", "fmax_mhz", "constraint_mhz", "timing_met",
            "slack_ns", "critical_path", "seconds", "build_dir", "bitstream", "log"]
    shown = {**rep, "critical_path": describe_critical_path(rep["critical_path"])} if "critical_path" in rep else rep
    return Result(rep, table([(k, shown[k]) for k in keys if k in shown]))
