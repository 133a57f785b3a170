"""The parallel engine (sim.engine.run_cycles_parallel, `--threads`): the same run, flit for flit,
as the serial engine, for every routing mode and pipeline option, with garbage, in blocks of
any size; and the thread count's checks."""
import json

import numpy as np
import pytest
from cli_run import run_cli

import sim.network_sim as network_sim
import sim.threads
from contract.params import RouterParams
from sim import engine
from sim.network_sim import NetworkSim
from topologies import polarstar
from topologies.errors import ParameterError

PIPELINE = {"va_stages": 2, "sa_stages": 3, "st_stage": 2, "va_separable": 1, "va_choice_stage": 1,
            "link_latency": 2, "credit_latency": 3}


@pytest.fixture(scope="module")
def ps104():
    return polarstar(3, "iq", 3)


def _run(net, routing, params, blocks, monkeypatch, cycles=600):
    """A loaded run with garbage at 40 endpoints, its routers' stages in `blocks` blocks (1: the
    serial engine)."""
    monkeypatch.setattr(network_sim, "blocks_for", lambda threads, routers, cycles: blocks)
    run = NetworkSim(net, routing, params, load=0.45, seed=5, trace=10**6, endpoint_trace=10**6,
                     threads=min(2, sim.threads.max_threads()))
    rng = np.random.default_rng(3)
    kinds = run.garbage_kinds()
    run.add_garbage(rng.integers(run.E, size=40), rng.integers(0, 400, size=40),
                    [kinds[k % len(kinds)] for k in range(40)])
    run.run(cycles, chunk=250)
    assert (run._blocks is not None) == (blocks > 1)
    return run


def _state(s):
    """Every array of the run: router state, delay lines, endpoints, packets, garbage, traces."""
    parts = [*s.routers, s.links, s.endpoints, s.obs]
    out = {f"{type(p).__name__}.{f}": getattr(p, f) for p in parts for f in p._fields}
    for f in ("pk_hops", "pk_done", "pk_eseq", "pk_phase", "pk_inter", "g_sent", "g_drop"):
        out[f] = getattr(s, f)
    return out


# one test for all routings: its items would otherwise go to both pytest-xdist workers, and each
# would compile the parallel engine (about 70 s)
CONFIGS = [("min", RouterParams(alloc_iters=2)),
           ("polarstar", RouterParams(**PIPELINE)),        # the next-hop table, every pipeline register
           ("ugal", RouterParams(vcs=8)),
           ("polarized", RouterParams(vcs=9, sa_stages=2))]


def test_blocks_run_as_the_serial_engine(ps104, monkeypatch):
    """Two and three blocks (uneven: 35/35/34 routers) against one, for four routings: every
    array equal after 600 loaded cycles, so every ejection, credit, drop and register was the
    same in every cycle."""
    for routing, params in CONFIGS:
        serial = _run(ps104, routing, params, 1, monkeypatch)
        assert serial.ejected_flits > 10_000 and serial.dropped > 0
        want = _state(serial)
        for blocks in (2, 3):
            got = _state(_run(ps104, routing, params, blocks, monkeypatch))
            diff = [k for k in want if not np.array_equal(want[k], got[k])]
            assert not diff, f"{routing}, {blocks} blocks: {diff}"


def test_blocks_split_the_routers_in_order():
    b = engine.new_blocks(np.arange(105) * 4, 8, 4, 6, (True, False), 3)
    assert b.lo.tolist() == [0, 35, 69, 104]
    assert b.links.a_r.shape[:2] == (3, 6) and b.trace.shape[1] >= 35 * 8
    assert b.injected.a_r.shape[2] >= 35 * 4 and b.etrace.shape[1] == 0


def test_small_networks_and_short_runs_stay_serial():
    blocks_for, per_thread = sim.threads.blocks_for, sim.threads.MIN_ROUTERS_PER_THREAD
    assert blocks_for(2, 26, 10**6) == 1 and blocks_for(1, 10**5, 10**6) == 1
    assert blocks_for(2, 2 * per_thread, 10**6) == 2 and blocks_for(2, 2 * per_thread, 10) == 1


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "2"])
def test_bad_thread_counts_are_refused(bad):
    with pytest.raises(ParameterError, match="threads"):
        sim.threads.check_threads(bad)
    with pytest.raises(ParameterError, match="at most"):
        sim.threads.check_threads(sim.threads.max_threads() + 1)
    assert sim.threads.check_threads(None) == min(sim.threads.cores(), sim.threads.max_threads())


@pytest.mark.parametrize("command", ["sim", "sweep"])
@pytest.mark.parametrize("flag", ["0", "99999", "x"])
def test_cli_refuses_a_bad_thread_count_in_one_line(command, flag, capsys):
    load = ["--load", "0.1"] if command == "sim" else ["--loads", "0.1"]
    code, _, err = run_cli([command, "polarstar:q=3,supernode=iq,degree=0", *load, "--threads", flag], capsys)
    assert code == 2
    assert "--threads" in err and "\n" not in err.strip() and "Traceback" not in err


def test_cli_reports_its_threads(capsys):
    code, out, _ = run_cli(["sim", "polarstar:q=3,supernode=iq,degree=0", "--load", "0.2", "--cycles", "200",
                            "--warmup", "50", "--threads", "1", "--json", "--quiet"], capsys)
    d = json.loads(out)
    assert code == 0 and d["threads"] == 1 and d["accepted"] > 0.1
