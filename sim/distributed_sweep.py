"""Load sweeps over many processes or machines on Dask `distributed`, or serially in-process.

`run_sweep(net, job, loads, saturation, progress, client)` runs every (routing, load) point of
`job`. With `client=None` it runs them here, one after another (`sim.experiment.sweep`); with a
`distributed.Client` each point is one task, and each routing's saturation search (when asked)
another. A point's result does not depend on where or in what order it runs: each point draws
from its own generator seeded with `job.seed` (as the serial sweep does), so both give the same
numbers (all but `seconds` and `router_cycles_per_second`, which are wall-clock figures).

The network is sent to the workers once: `client.scatter` of its bytes (`sim.netcache.dumps`,
the finite fields as tables), which each worker process unpickles once and keeps, with its
routings (`sim.experiment`'s per-process memo), for every later task.

`client_for(scheduler, workers)` gives the client: `scheduler` an address of a running
cluster (`dask scheduler` + `dask worker ADDRESS` on the machines), or `workers` > 1 processes
of a `LocalCluster` on this machine; `default_workers` chooses when neither is given.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import socket
import time
from dataclasses import dataclass

from contract.params import VC_POLICY
from sim import threads
from topologies.errors import ParameterError

CONNECT_TIMEOUT = 10        # seconds to reach a scheduler before giving up
# a LocalCluster's start (4-5 s) and its workers' first tasks (imports, engine load: done ~9 s
# after the start on a loaded 2-core machine, benchmarks/bench_startup.py --cluster) pay off only
# for sweeps longer than this many seconds of serial work
PAYOFF_SECONDS = 30.0
RATE = 3e5                  # router-cycles per second the estimate assumes (1,064 routers, load 0.3)


@dataclass(frozen=True)
class SweepJob:
    """What every point of a sweep shares: per routing its RouterParams, and the run's settings."""
    params: dict             # routing name -> RouterParams
    traffic: str = "uniform"
    warmup: int = 1000
    cycles: int = 5000
    seed: int = 1
    vc_policy: str = VC_POLICY.default
    threads: int | None = None   # of each simulation: None = every core serially, 1 per task on a cluster

    @property
    def task_threads(self) -> int:
        """Threads of a point run as a task: one, unless asked (a cluster's workers share the cores)."""
        return self.threads or 1

    @property
    def routings(self) -> list[str]:
        return list(self.params)


def default_workers(net, job: SweepJob, points: int) -> int:
    """1 (serial) unless the sweep has several points, at least two cores are free (the cores
    of this process's affinity minus the load average of the other jobs) and its estimated
    serial run time exceeds PAYOFF_SECONDS; then one worker per free core, at most one per point."""
    cores = threads.cores()
    busy = max(0.0, os.getloadavg()[0] - 1.0) if hasattr(os, "getloadavg") else 0.0
    free = int(cores - busy)
    seconds = points * net.num_routers * (job.warmup + job.cycles) / RATE
    if points < 2 or free < 2 or seconds < PAYOFF_SECONDS:
        return 1
    return min(free, points)


def probe(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Reach the scheduler at `address` within `timeout`, or a one-line ParameterError. A TCP
    address is tried with a plain socket first, so that a refused port fails at once (Dask's
    connect retries until its timeout)."""
    from distributed.comm import connect, parse_address
    from distributed.comm.addressing import parse_host_port

    async def handshake():
        comm = await asyncio.wait_for(connect(address, timeout=timeout), timeout + 1)
        await comm.close()

    start = time.monotonic()
    try:
        scheme, location = parse_address(address)
        if scheme == "tcp":
            socket.create_connection(parse_host_port(location), timeout=timeout).close()
        timeout = max(1.0, timeout - (time.monotonic() - start))      # one deadline for both steps
        asyncio.run(handshake())
    except (OSError, ValueError, TypeError, asyncio.TimeoutError) as e:
        reason = str(e).strip() or type(e).__name__
        raise ParameterError(f"--scheduler={address}: cannot reach a Dask scheduler ({reason})") from None
    except Exception as e:  # noqa: BLE001  (something answered, not as a Dask scheduler does)
        raise ParameterError(f"--scheduler={address}: no Dask scheduler there ({type(e).__name__})") from None


@contextlib.contextmanager
def client_for(scheduler: str | None = None, workers: int | None = None, timeout: float = CONNECT_TIMEOUT):
    """A distributed.Client on `scheduler`, or on a new LocalCluster of `workers` single-threaded
    processes (closed on exit); None (run serially) when neither asks for one (workers <= 1)."""
    if not scheduler and (workers is None or workers <= 1):
        yield None
        return
    from distributed import Client, LocalCluster

    if scheduler:
        probe(scheduler, timeout)
        with Client(scheduler, timeout=timeout) as client:
            yield client
        return
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        yield client


# ---- on the workers -------------------------------------------------------------------------
_NETWORKS: dict = {}        # per worker process: digest of the network's bytes -> Network


def _network(digest: str, data: bytes):
    net = _NETWORKS.get(digest)
    if net is None:
        from .netcache import loads
        _NETWORKS.clear()                           # one sweep's network at a time
        net = _NETWORKS[digest] = loads(data)
    return net


def _point(digest: str, data: bytes, job: SweepJob, routing: str, load: float) -> dict:
    from .experiment import build_routing, run_point

    net = _network(digest, data)
    params = job.params[routing]
    r = build_routing(net, routing, params, vc_policy=job.vc_policy)
    return run_point(net, routing, job.traffic, load, params, job.warmup, job.cycles, seed=job.seed,
                     routing_obj=r, threads=job.task_threads)


def _saturation(digest: str, data: bytes, job: SweepJob, routing: str) -> float:
    from .experiment import saturation

    net = _network(digest, data)
    return saturation(net, routing, job.traffic, job.params[routing], job.warmup, job.cycles, job.seed,
                      vc_policy=job.vc_policy, threads=job.task_threads)["saturation_load"]


# ---- the sweep --------------------------------------------------------------------------------
def run_sweep(net, job: SweepJob, loads: list[float], saturation: bool = False, progress=None,
              client=None) -> tuple[dict, dict]:
    """(curves: routing -> list of run_point dicts in load order, saturation: routing -> load);
    `progress(point)` is called as each point completes."""
    if client is None:
        return _serial(net, job, loads, saturation, progress)
    from distributed import as_completed

    data = _dumps(net)
    digest = hashlib.sha256(data).hexdigest()
    blob = client.scatter(data, broadcast=True, hash=False)
    futures = {client.submit(_point, digest, blob, job, r, load, pure=False): (r, i)
               for r in job.routings for i, load in enumerate(loads)}
    sats = {r: client.submit(_saturation, digest, blob, job, r, pure=False) for r in job.routings} if saturation else {}
    curves = {r: [None] * len(loads) for r in job.routings}
    try:
        for fut in as_completed(futures):
            r, i = futures[fut]
            curves[r][i] = fut.result()
            if progress:
                progress(curves[r][i])
        return curves, {r: f.result() for r, f in sats.items()}
    finally:
        client.cancel(list(futures) + list(sats.values()))


def _dumps(net) -> bytes:
    from .netcache import dumps
    return dumps(net)


def _serial(net, job: SweepJob, loads, saturation, progress) -> tuple[dict, dict]:
    from .experiment import saturation as bisect, sweep

    curves, sats = {}, {}
    for r in job.routings:
        params = job.params[r]
        curves[r] = sweep(net, r, job.traffic, loads, params, job.warmup, job.cycles, job.seed, progress=progress,
                          vc_policy=job.vc_policy, threads=job.threads)
        if saturation:
            sats[r] = bisect(net, r, job.traffic, params, job.warmup, job.cycles, job.seed,
                             vc_policy=job.vc_policy, threads=job.threads)["saturation_load"]
    return curves, sats


__all__ = ["CONNECT_TIMEOUT", "SweepJob", "client_for", "default_workers", "probe", "run_sweep"]
