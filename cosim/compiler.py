"""The C++ compiler of the lockstep's plain executables (engines `netlist` and `top`).

`PSTAR_CXX` if set (e.g. `c++`), else clang from the `ziglang` wheel (`zig c++`), whose code
runs the 104-router lockstep 16-25 % faster than the system's g++ 12 (docs/hdl.md). The cocotb
builds keep make's `c++`: cocotb's VPI library is built with it, against its C++ runtime.
A module of its own, importing only the standard library: `pstar.cosim.unavailable` asks it
without loading the harness (which hashes the RTL's sources on import).
"""
from __future__ import annotations

import functools
import importlib.util
import os
import pathlib
import subprocess


def missing() -> str | None:
    """Why the executables cannot be compiled here (in a few words), or None."""
    if not os.environ.get("PSTAR_CXX") and importlib.util.find_spec("ziglang") is None:
        return "the replay's compiler is not installed (pip install ziglang, or set PSTAR_CXX)"
    return None


def exe_compiler() -> list[str]:
    """The compiler command: `PSTAR_CXX` split into words, else `zig c++`."""
    chosen = os.environ.get("PSTAR_CXX")
    if chosen:
        return chosen.split()
    import ziglang
    # -fno-sanitize: zig turns UBSan traps on in files compiled without -O (Verilator's _Slow)
    return [str(pathlib.Path(ziglang.__file__).parent / "zig"), "c++", "-fno-sanitize=undefined"]


def compiler_version() -> str:
    """The compiler and its version (part of an executable's build key)."""
    return _version_of(tuple(exe_compiler()))


@functools.lru_cache(maxsize=None)
def _version_of(cxx: tuple) -> str:
    """`cxx --version`'s first line, asked once per process and compiler (every build looks it up,
    also one already built)."""
    try:
        out = subprocess.run([*cxx, "--version"], capture_output=True, text=True, timeout=60).stdout
    except OSError as e:
        raise RuntimeError(f"C++ compiler {' '.join(cxx)!r} not found ({e}); set PSTAR_CXX") from None
    return f"{' '.join(cxx)} {out.splitlines()[0] if out else ''}"


__all__ = ["compiler_version", "exe_compiler", "missing"]
