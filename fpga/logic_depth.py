"""A timing census of a synthesized ECP5 netlist, before placement: every register's worst path.

nextpnr reports one critical path per build, after 10-30 minutes of placing and routing. This
reads the Yosys JSON that `synth_ecp5` writes (minutes earlier) and estimates, for every timing
endpoint (flip-flop D/CE/LSR, LUT-RAM write port, block-RAM input), the arrival time of its
slowest input over the cells between registers, with a fixed delay per cell and per net (a net's
real delay depends on placement; `ROUTE_NS` is a typical one for this design on the 85F). The
estimate ranks paths by logic depth and fan-in structure; it is not a sign-off figure.

`census(json_path)` -> list of `Endpoint` (worst first), grouped by register name (the bits of one
Amaranth signal together); `python -m fpga.logic_depth top.json [--top N] [--over NS]` prints
the groups over a threshold with the cells of each group's worst path.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field

ROUTE_NS = 0.9          # a general-routing net between two cells (placement unknown)
CLK_TO_Q_NS = 0.5
SETUP_NS = 0.2
EBR_CLK_TO_Q_NS = 4.0   # DP16KD without its output register
# (input port pattern, output port pattern) -> delay in ns of the cell itself; `local` arcs are
# inside a slice (PFUMX / L6MUX21 data inputs, carry chains): no general routing in front of them
ARCS = {
    "LUT4": [(r"[ABCD]", r"Z", 0.45, False)],
    "PFUMX": [(r"ALUT|BLUT", r"Z", 0.2, True), (r"C0", r"Z", 0.3, False)],
    "L6MUX21": [(r"D0|D1", r"Z", 0.2, True), (r"SD", r"Z", 0.3, False)],
    "CCU2C": [(r"[ABCD]0", r"S0", 0.5, False), (r"[ABCD]0|[ABCD]1", r"S1|COUT", 0.55, False),
              (r"CIN", r"COUT", 0.05, True), (r"CIN", r"S0|S1", 0.3, True)],
    "TRELLIS_DPR16X4": [(r"RAD", r"DO", 0.6, False)],
}
START_PORTS = {"TRELLIS_FF": ("Q", CLK_TO_Q_NS), "DP16KD": ("DO", EBR_CLK_TO_Q_NS),
               "TRELLIS_DPR16X4": ("DO", CLK_TO_Q_NS)}
END_PORTS = {"TRELLIS_FF": r"DI|M|CE|LSR", "DP16KD": r"AD|DI|CE|WE|OCE|CS|RST",
             "TRELLIS_DPR16X4": r"DI|WAD|WRE"}


@dataclass
class Endpoint:
    name: str                    # register (group) name
    arrival_ns: float            # worst arrival over the group's bits, setup included
    bits: int                    # endpoints in the group
    path: list = field(default_factory=list)   # [(cell name, cell type, arrival ns)] source first


def group_name(cell: str) -> str:
    """inner.router.sa_gnt_3_TRELLIS_FF_Q_2 -> inner.router.sa_gnt_3."""
    return re.sub(r"_TRELLIS_FF_Q(_\d+)?(_.*)?$", "", cell)


def census(json_path: str, top: str = "top", route_ns: float = ROUTE_NS, sources: str | None = None) -> list[Endpoint]:
    """`sources`: a regular expression; only paths from the start cells whose names match it
    count (what a register's fanout reaches, e.g. `sa_gnt`); endpoints reached by none are left out."""
    src_re = re.compile(sources) if sources else None
    with open(json_path) as f:
        cells = json.load(f)["modules"][top]["cells"]
    driver = {}                                   # net bit -> (cell, output port)
    for name, c in cells.items():
        for port, bits in c["connections"].items():
            if c["port_directions"].get(port) == "output":
                for b in bits:
                    if isinstance(b, int):
                        driver[b] = (name, port)
    memo: dict = {}                               # (cell, output port) -> (arrival, predecessor)

    def arcs_into(cell: str, port: str):
        c = cells[cell]
        out = []
        for ip, op, d, local in ARCS.get(c["type"], []):
            if re.fullmatch(op, port):
                for p, bits in c["connections"].items():
                    if c["port_directions"].get(p) == "input" and re.match(ip, p):
                        for b in bits:
                            out.append((b, d, local))
        return out

    def arrival(key):
        """Longest arrival at the output (cell, port), iteratively (deep carry chains)."""
        stack = [key]
        while stack:
            k = stack[-1]
            if k in memo:
                stack.pop()
                continue
            cell, port = k
            ctype = cells[cell]["type"]
            start = START_PORTS.get(ctype)
            base = (-1e9, None)           # no path reaches a cell fed by none (pins, constants)
            if start and re.fullmatch(start[0], port):
                base = (start[1] if src_re is None or src_re.search(cell) else -1e9, None)
                if ctype != "TRELLIS_DPR16X4":          # LUT-RAM: also a read through RAD
                    memo[k] = base
                    stack.pop()
                    continue
            ins = arcs_into(cell, port)
            pending = [driver[b] for b, _, _ in ins if isinstance(b, int) and b in driver and driver[b] not in memo]
            if pending:
                stack.extend(pending)
                continue
            best = base
            for b, d, local in ins:
                if isinstance(b, int) and b in driver:
                    t = memo[driver[b]][0] + d + (0.0 if local else route_ns)
                    if t > best[0]:
                        best = (t, driver[b])
            memo[k] = best
            stack.pop()
        return memo[key]

    groups: dict[str, Endpoint] = {}
    for name, c in cells.items():
        pat = END_PORTS.get(c["type"])
        if not pat:
            continue
        worst = (-1.0, None)
        for p, bits in c["connections"].items():
            if c["port_directions"].get(p) != "input" or not re.match(pat, p) or p.startswith("CLK"):
                continue
            for b in bits:
                if isinstance(b, int) and b in driver:
                    t = arrival(driver[b])[0] + route_ns + SETUP_NS
                    if t > worst[0]:
                        worst = (t, driver[b])
        if worst[1] is None or worst[0] < 0:
            continue
        g = group_name(name)
        e = groups.setdefault(g, Endpoint(g, -1.0, 0))
        e.bits += 1
        if worst[0] > e.arrival_ns:
            e.arrival_ns = worst[0]
            path, k = [], worst[1]
            while k is not None:
                path.append((k[0], cells[k[0]]["type"], round(memo[k][0], 2)))
                k = memo[k][1]
            e.path = path[::-1] + [(name, c["type"], round(worst[0], 2))]
    return sorted(groups.values(), key=lambda e: -e.arrival_ns)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m fpga.logic_depth", description=__doc__.splitlines()[0])
    ap.add_argument("json", help="Yosys JSON after synth_ecp5 (a build's top.json)")
    ap.add_argument("--top", type=int, default=40, help="groups to print (default 40)")
    ap.add_argument("--over", type=float, default=0.0, help="only groups whose estimate exceeds this many ns")
    ap.add_argument("--paths", type=int, default=8, help="print the worst path of this many groups")
    ap.add_argument("--route-ns", type=float, default=ROUTE_NS, help=f"delay of one net (default {ROUTE_NS})")
    ap.add_argument("--from", dest="sources", default=None, metavar="REGEX",
                    help="only paths starting at cells whose names match REGEX")
    a = ap.parse_args(argv)
    eps = census(a.json, route_ns=a.route_ns, sources=a.sources)
    shown = [e for e in eps if e.arrival_ns > a.over][:a.top]
    n_over = sum(e.bits for e in eps if e.arrival_ns > a.over)
    print(f"{len(eps)} register groups; {n_over} endpoints over {a.over} ns")
    for e in shown:
        print(f"{e.arrival_ns:6.2f} ns  {len(e.path) - 2:2d} cells  {e.bits:4d} bits  {e.name}")
    for e in shown[:a.paths]:
        print(f"\n{e.name} ({e.arrival_ns:.2f} ns):")
        for cell, ctype, t in e.path:
            print(f"  {t:6.2f}  {ctype:16s} {cell[:150]}")


if __name__ == "__main__":
    sys.exit(main())
