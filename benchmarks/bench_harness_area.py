"""ECP5 area of a network build's traffic harness, part by part (Yosys synth_ecp5, each part alone).

A network build (`pstar fpga build --design network`) is its routers plus, per endpoint, a traffic
generator and a checker, and one status block (UART commands, the counter bank, the report).
`pstar fpga area` breaks the router down; this breaks the harness down. Each part of a preset's
top (generator and checker of endpoint `--endpoint`, the status block) is written to Verilog
alone and synthesized flat as the build does (its kept registers, its abc9 script, wide LUTs as the
preset says), and its cells are printed with LUT sites (`fpga.area.lut_sites`) and the part's
total over the top (E generators and checkers, one status block).

  python benchmarks/bench_harness_area.py [--preset net26] [--endpoint 5]
"""
from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CELLS = ("LUT4", "CCU2C", "PFUMX", "L6MUX21", "TRELLIS_DPR16X4", "TRELLIS_FF", "MULT18X18D")


def part_cells(component, name: str, wide_luts: bool, abc: str) -> dict:
    """Cell counts of one component synthesized alone and flat for the ECP5."""
    from fpga.area import stat_script
    from fpga.build import abc_script, tool_env
    from hdl.verilog_out import to_verilog

    env = tool_env("ecp5")
    with tempfile.TemporaryDirectory(prefix="harness-area-") as d:
        work = pathlib.Path(d)
        (work / "part.v").write_text(to_verilog(component, name))
        (work / "part.ys").write_text(stat_script("part.v", name, "stat.json", True, wide_luts, abc_script(abc)))
        subprocess.run([env["YOSYS"], "-q", "-s", "part.ys"], cwd=work, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        return json.loads((work / "stat.json").read_text())["design"]["num_cells_by_type"]


def main() -> None:
    from fpga import presets
    from fpga.area import lut_sites
    from fpga.build import make_inner, validate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="net26", help="a network preset of fpga/presets.toml")
    ap.add_argument("--endpoint", type=int, default=5, help="the endpoint whose generator and checker are built")
    a = ap.parse_args()
    cfg, _ = presets.configure({}, a.preset)
    if cfg.design != "network":
        sys.exit(f"bench_harness_area: preset {a.preset!r} builds a {cfg.design}, not a network")
    _, net, params, _, routing = validate(cfg)
    # the parts not built here are never elaborated (Amaranth warns as they are collected)
    warnings.filterwarnings("ignore", message=".*created but never used")
    top = make_inner(cfg, net, params, 100.0, routing)
    if not 0 <= a.endpoint < top.E:
        sys.exit(f"bench_harness_area: --endpoint {a.endpoint}: the network has endpoints 0..{top.E - 1}")
    parts = [("generator", top.generators[a.endpoint], top.E), ("checker", top.checkers[a.endpoint], top.E),
             ("status", top.control, 1)]
    print(f"traffic harness of preset {a.preset} (E = {top.E}), each part alone, synth_ecp5"
          f"{'' if cfg.wide_luts else ' -nowidelut'}")
    print(f"{'part':<10} {'LUT sites':>9} {'x count':>8} {'total':>7}  " + " ".join(f"{c:>8}" for c in CELLS))
    for name, comp, count in parts:
        cells = part_cells(comp, name, cfg.wide_luts, cfg.abc)
        sites = lut_sites(cells)
        print(f"{name:<10} {sites:>9} {count:>8} {sites * count:>7}  "
              + " ".join(f"{cells.get(c, 0):>8}" for c in CELLS))


if __name__ == "__main__":
    main()
