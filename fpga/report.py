"""Read what Yosys and nextpnr say about a build: resource use, maximum frequency, fit errors.

`read_report(build_dir, name, family)` returns the figures of a finished build (keys `lut4`, `ff`,
`bram`, `dsp`, `lutram`, `fmax_mhz`, `constraint_mhz`, `timing_met`, `utilization`), from
nextpnr's `--report` JSON and its log (`NAME.tim`), and the Yosys log (`NAME.rpt`) for the cell
counts nextpnr does not list. `diagnose(build_dir, name)` turns a failed build's logs into one
line: the resource that overflowed (nextpnr's device utilisation over 100 %), or the first error
the tools printed.

Conventions. ECP5: `lut4` = TRELLIS_COMB (LUT4 sites used: logic, carry halves and distributed-RAM
logic), `ff` = TRELLIS_FF, `bram` = DP16KD, `dsp` = MULT18X18D, `lutram` = TRELLIS_RAMW.
iCE40: `lut4` and `ff` = SB_LUT4 and SB_DFF* cells of the synthesized netlist, `lc` =
ICESTORM_LC (logic cells after packing), `bram` = ICESTORM_RAM (+ SPRAM in `spram`), `dsp` =
ICESTORM_DSP. `fmax_mhz` is the lowest "Max frequency for clock" nextpnr printed after routing.
"""
from __future__ import annotations

import json
import pathlib
import re

RESOURCE_NAMES = {
    "ecp5": {"lut4": "TRELLIS_COMB", "ff": "TRELLIS_FF", "bram": "DP16KD", "dsp": "MULT18X18D",
             "lutram": "TRELLIS_RAMW", "io": "TRELLIS_IO"},
    "ice40": {"lc": "ICESTORM_LC", "bram": "ICESTORM_RAM", "spram": "ICESTORM_SPRAM", "dsp": "ICESTORM_DSP",
              "io": "SB_IO"},
}
# what a user calls these cells, for the "does not fit" line
FRIENDLY = {"TRELLIS_COMB": "LUT4", "TRELLIS_FF": "FF", "DP16KD": "block RAM (DP16KD)",
            "MULT18X18D": "DSP (MULT18X18D)", "TRELLIS_RAMW": "distributed RAM (TRELLIS_RAMW)",
            "TRELLIS_IO": "I/O", "ICESTORM_LC": "logic cells (ICESTORM_LC)", "ICESTORM_RAM": "block RAM",
            "ICESTORM_SPRAM": "SPRAM", "ICESTORM_DSP": "DSP", "SB_IO": "I/O"}

_UTIL = re.compile(r"Info:\s+([A-Za-z0-9_$]+):\s+(\d+)/\s*(\d+)\s+(\d+)%")
_FMAX = re.compile(r"Max frequency for clock\s+'([^']+)':\s+([\d.]+) MHz \((PASS|FAIL) at ([\d.]+) MHz\)")


def utilisation_tables(log: str) -> list[dict]:
    """Every "Device utilisation" table in a nextpnr log, in order: {cell type: (used, available)}."""
    tables, cur = [], None
    for line in log.splitlines():
        if "Device utilisation" in line or "Device utilization" in line:
            cur = {}
            tables.append(cur)
            continue
        mt = _UTIL.search(line)
        if cur is not None and mt:
            cur[mt.group(1)] = (int(mt.group(2)), int(mt.group(3)))
        elif cur is not None and cur and line.strip() and not mt:
            cur = None
    return tables


def overflow(log: str) -> str | None:
    """"LUT4: 90123 used of 83640" for the first resource used beyond the device, else None."""
    for tab in utilisation_tables(log):
        for cell, (used, avail) in tab.items():
            if used > avail:
                return f"{FRIENDLY.get(cell, cell)}: {used} needed, the device has {avail}"
    m = re.search(r"no BELs remaining to implement cell type '([^']+)'", log)
    if m:
        return f"{FRIENDLY.get(m.group(1), m.group(1))}: more needed than the device has"
    return None


def yosys_cells(rpt: str) -> dict:
    """Cell counts of the last `stat` in a Yosys log (the synthesized top, submodules included)."""
    blocks = re.split(r"\n\s*=== ", rpt)
    for block in reversed(blocks):
        cells = {}
        for m in re.finditer(r"^\s+(\d+)\s+([A-Za-z_$][\w$]*)\s*$", block, flags=re.M):
            cells[m.group(2)] = cells.get(m.group(2), 0) + int(m.group(1))
        if any(k.startswith(("LUT4", "SB_LUT4", "TRELLIS_FF", "SB_DFF")) for k in cells):
            return cells
    return {}


def read_report(build_dir, name: str, family: str) -> dict:
    build_dir = pathlib.Path(build_dir)
    rep = json.loads((build_dir / "report.json").read_text())
    log = (build_dir / f"{name}.tim").read_text(errors="replace")
    util = {k: (v["used"], v["available"]) for k, v in rep.get("utilization", {}).items()}
    out = {}
    for key, cell in RESOURCE_NAMES[family].items():
        if cell in util:
            out[key] = util[cell][0]
    if family == "ice40":
        cells = yosys_cells((build_dir / f"{name}.rpt").read_text(errors="replace"))
        out["lut4"] = cells.get("SB_LUT4", 0)
        out["ff"] = sum(v for k, v in cells.items() if k.startswith("SB_DFF"))
        out.setdefault("lutram", 0)
    freqs = [(clk, float(f), ok == "PASS", float(c)) for clk, f, ok, c in _FMAX.findall(log)]
    if freqs:
        last = {}
        for clk, f, ok, c in freqs:            # the last report per clock is the post-route one
            last[clk] = (f, ok, c)
        clk, (f, ok, c) = min(last.items(), key=lambda kv: kv[1][0])
        out.update(fmax_mhz=round(f, 2), constraint_mhz=round(c, 2), timing_met=ok, clock=clk)
    else:
        fm = rep.get("fmax", {})
        if fm:
            clk, v = min(fm.items(), key=lambda kv: kv[1]["achieved"])
            out.update(fmax_mhz=round(v["achieved"], 2), constraint_mhz=round(v["constraint"], 2),
                       timing_met=v["achieved"] >= v["constraint"], clock=clk)
    out["utilization"] = {k: {"used": u, "available": a} for k, (u, a) in util.items() if u}
    return out


def diagnose(build_dir, name: str) -> str:
    """One line saying why a build failed (for a ParameterError / the CLI)."""
    build_dir = pathlib.Path(build_dir)
    tim = build_dir / f"{name}.tim"
    if tim.exists():
        log = tim.read_text(errors="replace")
        over = overflow(log)
        if over:
            return f"design does not fit: {over}"
        m = re.search(r"^ERROR: (.*)$", log, flags=re.M)
        if m:
            return f"nextpnr: {m.group(1).strip()}"
    rpt = build_dir / f"{name}.rpt"
    if rpt.exists():
        m = re.search(r"^ERROR: (.*)$", rpt.read_text(errors="replace"), flags=re.M)
        if m:
            return f"yosys: {m.group(1).strip()}"
    return "the toolchain failed (see the log)"


__all__ = ["diagnose", "overflow", "read_report", "utilisation_tables", "yosys_cells"]
