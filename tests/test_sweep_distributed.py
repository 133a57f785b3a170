"""Sweeps on Dask distributed (sim.distributed_sweep, `pstar sweep --scheduler/--workers`) give the
serial sweep's results; a bad scheduler address is one line and exit 2; the start-up shortcuts
(network and routing caches, the vectorized class-step table) equal what they replace."""
from __future__ import annotations

import socket
import time

import numpy as np
import pytest

from contract.params import RouterParams
from pstar.cli import main
from routing_logic.registry import make_routing
from sim.distributed_sweep import CONNECT_TIMEOUT, SweepJob, run_sweep
from sim.experiment import build_routing, default_vcs
from topologies import build

SPEC = "polarstar:q=3,supernode=iq,degree=0"
LOADS = [0.1, 0.4, 0.7]
# how a point ran (wall clock, its threads: every core serially, one on a cluster's worker):
# the only fields that may differ
CLOCK = ("seconds", "router_cycles_per_second", "threads")


def without_clock(curves: dict) -> dict:
    return {r: [{k: v for k, v in p.items() if k not in CLOCK} for p in pts] for r, pts in curves.items()}


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    import logging
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as c, distributed.Client(c) as client:
        yield c, client


@pytest.fixture(scope="module")
def job():
    net = build(SPEC)
    params = {r: RouterParams(vcs=default_vcs(net, r)) for r in ("min", "ugal")}
    return net, SweepJob(params, "uniform", warmup=50, cycles=200, seed=7)


def test_local_cluster_sweep_equals_the_serial_sweep(cluster, job):
    _, client = cluster
    net, sj = job
    done = []
    curves, sats = run_sweep(net, sj, LOADS, saturation=False, client=client, progress=done.append)
    serial, _ = run_sweep(net, sj, LOADS, saturation=False, client=None)
    assert without_clock(curves) == without_clock(serial)
    assert len(done) == len(LOADS) * 2 and sats == {}            # the bar moved once per point
    # real runs: every point measured packets, and UGAL's random intermediates drew from the seed
    assert all(p["measured_packets"] > 0 and p["lost"] == 0 for pts in curves.values() for p in pts)
    assert [p["load"] for p in curves["ugal"]] == LOADS
    other, _ = run_sweep(net, SweepJob(sj.params, "uniform", 50, 200, seed=8), LOADS[:1], client=client)
    assert without_clock(other)["ugal"][0] != without_clock(curves)["ugal"][0]     # the seed matters


def test_cli_on_a_scheduler_equals_workers_1(cluster, capsys):
    c, _ = cluster
    argv = ["sweep", SPEC, "--routing", "min", "--loads", "0.2,0.6", "--warmup", "50", "--cycles", "200",
            "--saturation", "--json", "--quiet"]
    import json
    assert main([*argv, "--scheduler", c.scheduler_address]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert main([*argv, "--workers", "1"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert without_clock(remote["curves"]) == without_clock(local["curves"])
    assert remote["saturation"] == local["saturation"] and 0 < local["saturation"]["min"] < 1


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# the closed port is chosen in the test: a parameter that differs between pytest-xdist's workers
# makes their collections differ, and the whole run stops
@pytest.mark.parametrize("address,message", [
    ("tcp://127.0.0.1:{closed_port}", "cannot reach a Dask scheduler"),
    ("nonsense", "missing port number"),
], ids=["closed-port", "no-port"])
def test_bad_scheduler_is_one_line_and_exit_2(address, message, capsys):
    address = address.format(closed_port=closed_port())
    t = time.monotonic()
    rc = main(["sweep", SPEC, "--loads", "0.1", "--cycles", "10", "--warmup", "0", "--scheduler", address, "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err
    assert time.monotonic() - t < CONNECT_TIMEOUT                   # refused at once, not after the timeout


def test_workers_flags_are_checked(capsys):
    assert main(["sweep", SPEC, "--workers", "0", "--quiet"]) == 2
    assert main(["sweep", SPEC, "--workers", "2", "--scheduler", "tcp://127.0.0.1:1", "--quiet"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "--workers=0: must be an integer >= 1" in err[0] and "give one" in err[1]


# ---- start-up shortcuts -----------------------------------------------------------------------
def test_network_cache_round_trip(tmp_path, monkeypatch):
    from sim.netcache import LoadedField, build_network
    monkeypatch.setenv("PSTAR_CACHE_DIR", str(tmp_path))
    fresh = build(SPEC)
    first = build_network(SPEC)
    again = build_network(SPEC)
    assert len(list((tmp_path / "networks").glob("*.pkl"))) == 1
    F, G = again.structure.er.F, fresh.structure.er.F
    assert isinstance(F, LoadedField) and not isinstance(first.structure.er.F, LoadedField)
    for name in ("add", "mul", "neg", "inv", "log", "antilog"):
        assert np.array_equal(getattr(F, name), getattr(G, name))
    assert np.array_equal(again.peer, fresh.peer) and np.array_equal(again.endpoints, fresh.endpoints)
    assert (again.spec, again.name) == (fresh.spec, fresh.name)


@pytest.mark.parametrize("policy", ["hops", "turns"])
def test_reused_routing_and_class_steps_equal_a_fresh_build(policy):
    from sim.network_sim import NetworkSim
    net = build("polarstar:q=3,supernode=iq,degree=3")
    default_vcs(net, "min", policy)                                 # memoizes the routing with 1 VC
    reused = build_routing(net, "min", RouterParams(vcs=6), vc_policy=policy)
    fresh = make_routing("min", net, check_deadlock=False, vcs=6, vc_policy=policy)
    assert reused.num_vcs == fresh.num_vcs == 6
    assert reused.vc_policy == fresh.vc_policy
    sim = NetworkSim(net, "min", RouterParams(vcs=6), routing_obj=reused)
    assert np.array_equal(sim.cstep[:, :int(net.ports.max()), :], fresh.class_steps())


def test_default_workers_start_a_cluster_only_when_it_pays(monkeypatch, job):
    import os

    from sim import distributed_sweep as ds
    net, sj = job
    big = build("polarstar:q=3,supernode=iq,degree=3")
    long_job = SweepJob(sj.params, "uniform", warmup=1000, cycles=100_000, seed=1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.0, 1.0, 1.0))          # this process only
    assert ds.default_workers(big, long_job, points=10) == 4
    assert ds.default_workers(big, long_job, points=3) == 3                 # at most one per point
    assert ds.default_workers(big, long_job, points=1) == 1                 # one point: no cluster
    assert ds.default_workers(net, sj, points=10) == 1                      # too short to pay off
    monkeypatch.setattr(os, "getloadavg", lambda: (4.0, 4.0, 4.0))          # 3 cores busy elsewhere
    assert ds.default_workers(big, long_job, points=10) == 1
