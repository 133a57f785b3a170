"""Cycle-accurate reference model of the router and network, traffic patterns and experiments.

Importing `sim` chooses where Numba caches the compiled engine (`sim.engine`, `cache=True`):
`$NUMBA_CACHE_DIR` when set, else `cache_root()/numba`, i.e. `$PSTAR_CACHE_DIR/numba`, or
`$XDG_CACHE_HOME/pstar/numba`, or `~/.cache/pstar/numba`. A user folder, so that an install
into a read-only site-packages still keeps its compiled engine. An editable install compiles it
there (`sim.precompile`); otherwise the first run on a machine does (tens of seconds), and every
later run loads it. Set before `sim.engine` is compiled.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path


def cache_root() -> Path:
    """The toolkit's user cache folder: $PSTAR_CACHE_DIR, $XDG_CACHE_HOME/pstar or ~/.cache/pstar."""
    if os.environ.get("PSTAR_CACHE_DIR"):
        return Path(os.environ["PSTAR_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pstar"


def numba_cache_dir() -> Path:
    """Where the compiled engine is cached: $NUMBA_CACHE_DIR, else cache_root()/numba."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    return cache_root() / "numba"


def _use_user_cache() -> None:
    if not os.environ.get("NUMBA_CACHE_DIR"):
        os.environ["NUMBA_CACHE_DIR"] = str(numba_cache_dir())     # read when numba is imported
    if "numba" in sys.modules:                                     # imported already (e.g. by galois)
        from numba.core import config
        config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]


_use_user_cache()
