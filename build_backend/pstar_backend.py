"""The project's build backend: setuptools', plus the cycle model compiled at an editable install.

After building an editable install (`pip install -e .`) it runs `python -m sim.precompile`,
which compiles `sim.engine` into the user's Numba cache (`sim.numba_cache_dir()`), so the first
`pstar sim` loads the engine instead of compiling it (about 80 s on 2 cores, paid by the install
instead). Only the editable build: Numba keys its cache by the source file's path and time, and
an editable install runs the sources where they are; a wheel's are copied elsewhere.

The compile runs in pip's build environment, which gets the packages it imports from the
project's own dependencies (`get_requires_for_build_editable`). `PSTAR_PRECOMPILE=0` skips it;
a failure only prints a line (pip shows it with -v), and the first run compiles as before.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403 - every other hook is setuptools' own

ROOT = Path(__file__).resolve().parent.parent
PRECOMPILE_IMPORTS = ("numpy", "numba", "scipy", "galois")   # what `sim.precompile` imports
TIMEOUT = 1800                                               # seconds; a compile takes ~80 s


def _enabled() -> bool:
    return os.environ.get("PSTAR_PRECOMPILE", "1") != "0"


def precompile_requirements() -> list[str]:
    """The project's dependencies (pyproject.toml) that `sim.precompile` imports, as written there."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return [d for d in deps if re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower() in PRECOMPILE_IMPORTS]


def get_requires_for_build_editable(config_settings=None):
    extra = precompile_requirements() if _enabled() else []
    return _setuptools.get_requires_for_build_editable(config_settings) + extra


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    if _enabled():
        _precompile()
    return name


def _precompile() -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    code, why = None, ""
    try:
        code = subprocess.run([sys.executable, "-m", "sim.precompile"], cwd=ROOT, env=env, timeout=TIMEOUT,
                              check=False).returncode
    except (OSError, subprocess.SubprocessError) as e:
        why = f" ({e})"
    if code not in (0, 2):              # 2: sim.precompile has said why in its own line
        print(f"pstar: the engine was not precompiled{why}; the first run compiles it", file=sys.stderr)
