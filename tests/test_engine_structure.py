"""The shape of the engine (sim/engine.py): one small function per router stage over named
structures, the state NetworkSim exposes, and state carried whole from one call to the next.

Bit-identity of the engine's results is checked by the tests that compare it with independent
references: tests/test_sim.py (exact latencies, conservation, routing_logic's choices),
tests/test_hdl_network_sim.py and the cocotb lockstep tests (the RTL, cycle for cycle)."""
import ast
from pathlib import Path

import numpy as np
import pytest

from contract.params import RouterParams
from sim import engine
from sim.network_sim import NetworkSim
from topologies import polarstar

ENGINE = Path(engine.__file__)


def _functions():
    tree = ast.parse(ENGINE.read_text())
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]


def test_every_engine_function_is_short_with_few_parameters():
    long, wide = [], []
    for f in _functions():
        lines = f.end_lineno - f.lineno + 1
        params = len(f.args.args) + len(f.args.kwonlyargs)
        if lines > 100:
            long.append((f.name, lines))
        if params > 8:
            wide.append((f.name, params))
    assert not long, f"functions over 100 lines: {long}"
    assert not wide, f"functions over 8 parameters (pass a structure): {wide}"


def test_run_cycles_takes_structures():
    names = {f.name: f for f in _functions()}
    params = [a.arg for a in names["run_cycles"].args.args]
    assert params == ["t0", "t1", "cfg", "tables", "rt", "world", "tmp", "skip"]


@pytest.fixture(scope="module")
def ps26():
    return polarstar(3, "iq", 0)


def test_flat_names_are_the_structures_arrays(ps26):
    """sim.external and the tests read the engine's arrays by their flat names: they are the
    arrays of the structures (no copies), and read-only (assigning one would leave the engine's
    structure behind)."""
    sim = NetworkSim(ps26, "min", RouterParams(), load=0.1, trace=10)
    for path, struct in (("tables", engine.Tables), ("routers.inputs", engine.InputUnits),
                         ("routers.va", engine.VCAllocator), ("routers.sa", engine.SwitchAllocator),
                         ("routers.outputs", engine.OutputUnits), ("links", engine.Links),
                         ("endpoints", engine.Endpoints), ("obs", engine.Observed)):
        part = sim
        for name in path.split("."):
            part = getattr(part, name)
        assert isinstance(part, struct)
        for name in struct._fields:
            assert getattr(sim, name) is getattr(part, name), name
    with pytest.raises(AttributeError):
        sim.credits = np.zeros(3)


def _run(net, chunk, cycles=1200):
    """Explicit packets and garbage (load 0: the Bernoulli draws depend on the chunking), polarized
    routing with every pipeline option, run in calls of `chunk` cycles."""
    prm = RouterParams(vcs=8, va_stages=2, sa_stages=3, st_stage=1, va_separable=1, va_choice_stage=1)
    sim = NetworkSim(net, "polarized", prm, load=0.0, trace=10**5, endpoint_trace=10**5)
    rng = np.random.default_rng(2)
    E, n = net.num_endpoints, 3000
    sim.add_packets(rng.integers(E, size=n), rng.integers(E, size=n), np.sort(rng.integers(0, 1000, size=n)))
    sim.add_garbage(rng.integers(E, size=60), rng.integers(0, 1000, size=60),
                    [sim.garbage_kinds()[k % 4] for k in range(60)])
    done = 0
    while done < cycles:
        step = min(chunk, cycles - done)
        sim.run(step, chunk=step)
        done += step
    return sim


def test_state_carries_over_between_calls(ps26):
    """Every register of the model lives in the structures, none in a call: running cycle by
    cycle gives the same ejections, endpoint events, drops and final state as long calls (the
    pipelined allocators, the registered VC choice and garbage all on)."""
    whole, steps = _run(ps26, 1200), _run(ps26, 1)
    assert whole.ejected_flits > 1000 and whole.dropped > 0
    for name in ("trace", "etrace", "counters", "eject_hist", "f_cnt", "credits", "owner", "nom", "gnt",
                 "pend_o", "ch_cred", "ep_credit", "g_drop"):
        assert np.array_equal(getattr(whole, name), getattr(steps, name)), name
    # the separable VA's requests: their output VC means nothing where none is in the allocator
    assert np.array_equal(whole.sep_st, steps.sep_st)
    for name in ("sep_o", "sep_w"):
        held = [np.where(s.sep_st != 0, getattr(s, name), -1) for s in (whole, steps)]
        assert np.array_equal(*held), name
