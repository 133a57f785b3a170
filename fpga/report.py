"""Read what Yosys and nextpnr say about a build: resource use, maximum frequency, fit errors.

`read_report(build_dir, name, family, clock_mhz)` returns the figures of a finished build (keys
`lut4`, `ff`, `bram`, `dsp`, `lutram`, `fmax_mhz`, `constraint_mhz`, `timing_met` and `slack_ns`
at the design clock `clock_mhz` (nextpnr's constraint when None), `utilization`, `critical_path`), from nextpnr's `--report` JSON and its log (`NAME.tim`), and the Yosys log
(`NAME.rpt`) for the cell counts nextpnr does not list. `critical_path(report)` summarizes the
path that sets the Fmax (`describe_critical_path` as one line): what a designer reads first.
`diagnose(build_dir, name)` turns a failed build's logs into one line: the resource that
overflowed (nextpnr's device utilisation over 100 %), or the first error the tools printed.

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


def overflow_so_far(log_path: pathlib.Path) -> str | None:
    """`overflow` of a running nextpnr's log (its head: the utilisation table comes after
    packing), or None. nextpnr's static placer goes on placing a design that does not fit until
    the build's time limit; the build stops it when this says so."""
    try:
        with open(log_path, errors="replace") as f:
            return overflow(f.read(1 << 18))
    except OSError:
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


# the suffixes nextpnr / Yosys add to a cell's name (the signal it came from comes first)
_CELL_SUFFIX = re.compile(r"(_(TRELLIS|LUT4|CCU2C|PFUMX|L6MUX21|DPR16X4|SB_|ICESTORM)|\$).*$")


def short_cell(name: str) -> str:
    """A placed cell's name without the suffixes technology mapping appended: the signal it is."""
    return _CELL_SUFFIX.sub("", name) or name


def critical_path(report: dict) -> dict | None:
    """The longest clock-to-same-clock path in nextpnr's report JSON (`critical_paths`), or None:
    total, logic (clock-to-output, LUTs, setup) and routing delay in ns, the logic cells passed
    (LUT4s, wide-LUT multiplexers, carry steps), the start and end cells with their tiles (x, y),
    and the longest net on the way."""
    paths = [p for p in report.get("critical_paths", [])
             if p.get("from") == p.get("to") and not str(p.get("from", "")).startswith("<async>") and p.get("path")]
    if not paths:
        return None

    def total(p):
        return sum(step["delay"] for step in p["path"])

    best = max(paths, key=total)
    steps, delay = best["path"], total(best)
    nets = [step for step in steps if step["type"] == "routing"]
    routing = sum(step["delay"] for step in nets)
    longest = max(nets, key=lambda step: step["delay"]) if nets else None

    def end(point):
        return {"cell": short_cell(point["cell"]), "loc": list(point["loc"])}

    return {
        "clock": best["from"], "total_ns": round(delay, 2), "logic_ns": round(delay - routing, 2),
        "routing_ns": round(routing, 2), "logic_cells": sum(1 for step in steps if step["type"] == "logic"),
        "from": end(steps[0]["from"]), "to": end(steps[-1]["to"]),
        "longest_net": None if longest is None else {
            "net": short_cell(longest["net"]), "ns": round(longest["delay"], 2),
            "from_loc": list(longest["from"]["loc"]), "to_loc": list(longest["to"]["loc"])},
    }


def describe_critical_path(cp: dict | None) -> str:
    """One line: "19.64 ns (1.94 logic, 17.70 routing; 6 logic cells): A (72,35) -> B (82,75);
    longest net 5.94 ns N (23,17) -> (80,41)"."""
    if not cp:
        return "not reported"
    loc = "({},{})".format
    text = (f"{cp['total_ns']:.2f} ns ({cp['logic_ns']:.2f} logic, {cp['routing_ns']:.2f} routing; "
            f"{cp['logic_cells']} logic cells): {cp['from']['cell']} {loc(*cp['from']['loc'])} -> "
            f"{cp['to']['cell']} {loc(*cp['to']['loc'])}")
    net = cp.get("longest_net")
    if net:
        text += f"; longest net {net['ns']:.2f} ns {net['net']} {loc(*net['from_loc'])} -> {loc(*net['to_loc'])}"
    return text


def read_report(build_dir, name: str, family: str, clock_mhz: float | None = None) -> dict:
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
    if "fmax_mhz" in out and clock_mhz is not None:   # met at the clock the bitstream runs at, not an over-constraint
        out["timing_met"] = out["fmax_mhz"] >= clock_mhz
        out["slack_ns"] = round(1000 / clock_mhz - 1000 / out["fmax_mhz"], 3)
    out["utilization"] = {k: {"used": u, "available": a} for k, (u, a) in util.items() if u}
    out["critical_path"] = critical_path(rep)
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


__all__ = ["critical_path", "describe_critical_path", "diagnose", "overflow", "overflow_so_far", "read_report", "short_cell",
           "utilisation_tables", "yosys_cells"]
