"""How many threads one simulation runs on (`NetworkSim(threads=...)`, `pstar sim --threads`).

The engine's router stages run on Numba's threads (`sim.engine.run_cycles_parallel`), one block
of routers per thread; the results are the same for every thread count. Numba starts its pool
with NUMBA_NUM_THREADS threads (by default one per core); a run can use that many at most.
"""
from __future__ import annotations

import os

from topologies.errors import ParameterError

# routers per thread below which a run stays on one thread: a parallel cycle costs a fork and a
# join (a few µs), more than the stages of a few routers (~1-2 µs each)
MIN_ROUTERS_PER_THREAD = 128
# router-cycles below which a call of NetworkSim.run stays on one thread (about 8 s on one): the
# parallel engine is compiled on its first use (about 70 s), which a short run would not repay
MIN_PARALLEL_WORK = 10**6


def cores() -> int:
    """The cores this process may run on (its CPU affinity)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # not on Linux
        return os.cpu_count() or 1


def max_threads() -> int:
    """The most threads a simulation can use: Numba's pool (NUMBA_NUM_THREADS)."""
    from numba import config
    return int(config.NUMBA_NUM_THREADS)


def check_threads(threads: int | None, name: str = "threads") -> int:
    """The thread count of a run: `threads`, or (None) every core of this process, up to Numba's
    pool. A bad value is a one-line ParameterError."""
    if threads is None:
        return max(1, min(cores(), max_threads()))
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ParameterError(f"{name}={threads!r}: must be an integer >= 1")
    if threads > max_threads():
        raise ParameterError(f"{name}={threads}: at most {max_threads()} here (Numba's threads: NUMBA_NUM_THREADS, "
                             "one per core by default)")
    return threads


def blocks_for(threads: int, routers: int, cycles: int) -> int:
    """Router blocks of `cycles` cycles on `threads` threads: one per thread, or 1 (the serial
    engine) when the network has fewer than MIN_ROUTERS_PER_THREAD routers per thread or the
    call fewer than MIN_PARALLEL_WORK router-cycles."""
    big = routers >= MIN_ROUTERS_PER_THREAD * threads and routers * cycles >= MIN_PARALLEL_WORK
    return threads if threads > 1 and big else 1
