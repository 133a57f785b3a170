"""Compile the cycle model's engine into Numba's cache, so that a later run loads it.

Numba compiles `sim.engine` on its first use and keeps the result in the user's cache
(`sim.numba_cache_dir()`): about 35 s for the serial engine and 55 s more for the parallel one
on a 2-core machine. An editable install (`pip install -e .`) runs this module at the end of the
install (`build_backend/pstar_backend.py`), so the first `pstar sim` only loads the engine. Run
it by hand after an install that skipped it (a wheel install, `PSTAR_PRECOMPILE=0`, a failure):

    python -m sim.precompile [--quiet]

It simulates a 456-router PolarStar briefly with three routings, on one thread and (with two
or more of Numba's threads) on two: the engine's argument types do not depend on the network or
the routing, so every run then finds its engine compiled. The network is built, not read from
or written to the user's network cache. Exit status 0 when done, 2 when it failed.
"""
from __future__ import annotations

import argparse
import sys
import time

SPEC = "polarstar:q=7,supernode=iq,degree=3"      # 456 routers: two parallel blocks of 228
# one routing per kind of table the engine reads (distances, PolarStar next hops, UGAL's samples):
# today they share one compilation; a type that came to differ would be compiled here
ROUTINGS = ("min", "polarstar", "ugal")


def _engines() -> list[tuple[str, int]]:
    """(routing, threads) of each run: every routing serially, then in parallel if Numba can."""
    from .threads import max_threads
    runs = [(r, 1) for r in ROUTINGS]
    if max_threads() >= 2:
        runs += [(r, 2) for r in ROUTINGS]
    return runs


def precompile(say=print) -> float:
    """Compile (or load) every engine a run can use; returns the seconds it took."""
    from topologies import build

    from contract.params import RouterParams

    from . import numba_cache_dir
    from .experiment import default_vcs
    from .network_sim import NetworkSim
    from .threads import MIN_PARALLEL_WORK
    t0 = time.perf_counter()
    say(f"pstar: compiling the cycle model into {numba_cache_dir()} (about 2 minutes, once per install)")
    net = build(SPEC)                              # not the user's network cache
    for routing, threads in _engines():
        t = time.perf_counter()
        sim = NetworkSim(net, routing, RouterParams(vcs=default_vcs(net, routing)), load=0.1, threads=threads)
        # a parallel call needs MIN_PARALLEL_WORK router-cycles (sim.threads.blocks_for)
        sim.run(10 if threads == 1 else -(-MIN_PARALLEL_WORK // net.num_routers))
        engine = "serial" if threads == 1 else "parallel"
        say(f"pstar:   {engine} engine, {routing} routing: {time.perf_counter() - t:.1f} s")
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sim.precompile", description=__doc__.splitlines()[0])
    ap.add_argument("--quiet", action="store_true", help="print nothing but an error")
    a = ap.parse_args(argv)
    say = (lambda s: None) if a.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    try:
        seconds = precompile(say)
    except Exception as e:                         # noqa: BLE001 - one line, the run compiles on first use
        print(f"pstar: the engine was not precompiled ({type(e).__name__}: {e}); the first run compiles it",
              file=sys.stderr)
        return 2
    say(f"pstar: the cycle model is compiled ({seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
