"""Logic depth of the switch allocator alone: LUT levels of its longest path (generic Yosys).

The SA (`hdl.router.switch_allocator.SwitchAllocator`, one iteration) is built alone for P ports
and V VCs, flattened and mapped to 4-input LUTs, and Yosys's `ltp -noff` gives its longest path
in cells (registers cut paths). A quick proxy for the SA's share of a router's critical path,
without placing and routing (the pipelined SA's input stage must not wait for the output
stage's `won`: docs/microarchitecture.md, "Switch allocation").

  python benchmarks/bench_sa_depth.py [--ports 8] [--vcs 4] [--stages 1,2,3] [--flow abc|lut4]

flow abc: `synth -flatten; abc -lut 4` (ABC's area-oriented mapping); lut4: `synth -flatten -lut 4`.
Prints one row per sa_stages: LUT levels and LUT cells. P = 8, V = 4 is the target router's
shape (fpga/presets.toml, target-100mhz); P = 5, V = 3 the formal harnesses'.
"""
from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile
from types import SimpleNamespace

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FLOWS = {"abc": "synth -flatten -top top; abc -lut 4; opt_clean", "lut4": "synth -flatten -top top -lut 4"}


def sa_depth(P: int, V: int, sa_stages: int, flow: str) -> tuple[int, int]:
    """(LUT levels of the longest path, LUT cells) of the SA alone."""
    from amaranth.back import rtlil

    from contract.params import RouterParams
    from fpga.build import tool_env
    from hdl.router.switch_allocator import SwitchAllocator

    cfg = SimpleNamespace(P=P, V=V, params=RouterParams(vcs=V, sa_stages=sa_stages, alloc_iters=1))
    env = tool_env("ecp5")
    with tempfile.TemporaryDirectory(prefix="sa-depth-") as d:
        work = pathlib.Path(d)
        (work / "sa.il").write_text(rtlil.convert(SwitchAllocator(cfg), name="top"))
        script = f"read_rtlil sa.il; {FLOWS[flow]}; tee -q -o ltp.txt ltp -noff; tee -q -o stat.txt stat"
        subprocess.run([env["YOSYS"], "-q", "-p", script], cwd=work, env=env, check=True)
        ltp, stat = (work / "ltp.txt").read_text(), (work / "stat.txt").read_text()
    levels = int(re.search(r"\(length=(\d+)\)", ltp).group(1))
    luts = re.search(r"(\d+)\s+\$lut\b", stat)
    return levels, int(luts.group(1)) if luts else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ports", type=int, default=8)
    ap.add_argument("--vcs", type=int, default=4)
    ap.add_argument("--stages", default="1,2,3", help="sa_stages values, comma-separated")
    ap.add_argument("--flow", choices=sorted(FLOWS), default="abc")
    a = ap.parse_args()
    print(f"switch allocator alone, P={a.ports} V={a.vcs}, flow {a.flow}")
    print(f"{'sa_stages':>9} {'LUT levels':>10} {'LUT cells':>9}")
    for k in (int(x) for x in a.stages.split(",")):
        levels, luts = sa_depth(a.ports, a.vcs, k, a.flow)
        print(f"{k:>9} {levels:>10} {luts:>9}", flush=True)


if __name__ == "__main__":
    main()
