"""Bad input at the endpoints (issue 8): garbage flits in the Verilated network, in lockstep with `sim`.

Random malformed flits of every kind (`NetworkSim.add_garbage`: a head to a router >= N, a head to
its own router with an endpoint index >= p, a body and a tail following no head) are injected at
random endpoints and cycles into uniform traffic near saturation. The model runs with them first;
tests/cocotb/network_bench.py sends the RTL the same flits by the same endpoint rule. Every legit
flit must match the model cycle for cycle (cycle, endpoint, packet, seq, contents), the RTL's
`dropped` must equal the model's drop count in every cycle, and at the end every garbage flit is
dropped: RTL `dropped` == model count == number injected. Reuses the 26-router builds of
tests/test_cocotb_network.py (same configuration, same build directory).
"""
import os

import numpy as np
import pytest
import tiers

from cosim.lockstep import lockstep
from sim.engine import GARBAGE_KINDS
from topologies import build

PS26 = "polarstar:q=3,supernode=iq,degree=0"
CYCLES = int(os.environ.get("PSTAR_GARBAGE_CYCLES", "6000"))
PER_KIND = 75                       # 300 garbage flits per run
LAST = 1000                         # no garbage created in the last LAST cycles: all of it is dropped


def garbage_schedule(net, cycles, seed):
    rng = np.random.default_rng(seed)
    n = PER_KIND * len(GARBAGE_KINDS)
    eps = rng.integers(net.num_endpoints, size=n)
    when = rng.integers(0, cycles - LAST, size=n)
    kinds = np.repeat(np.arange(len(GARBAGE_KINDS)), PER_KIND)
    return eps, when, kinds


# PSTAR_COSIM=full tier (CI budget): in CI, garbage goes through the Verilated routers in the
# replay (tests/test_replay.py, with a drain: every drop compared) and through the Amaranth
# network lockstep (test_hdl_network_sim.py), PolarStar's arithmetic unit and the tables alike
@pytest.mark.parametrize("routing", [pytest.param(r, marks=tiers.full_only("CI budget")) for r in ("polarstar", "min")])
def test_garbage_dropped_in_lockstep(routing, tmp_path):
    net = build(PS26)
    load = 0.75
    garbage = garbage_schedule(net, CYCLES, seed={"polarstar": 21, "min": 22}[routing])
    n = len(garbage[0])
    results, report, meta, model = lockstep(PS26, routing, 4, load, CYCLES, tmp=tmp_path, garbage=garbage)
    assert results and all(r["passed"] for r in results), (results, report)
    assert report["mismatch"] is None and report["drop_mismatch"] is None
    assert report["ejected"] == report["expected"] == model.ejected_flits
    assert model.ejected_flits > 0.5 * load * CYCLES * net.num_endpoints          # near saturation, moving
    g = model.garbage()
    assert (g["dropped"] >= g["sent"]).all() and (g["sent"] >= g["created"]).all()
    assert report["dropped"] == report["dropped_expected"] == model.dropped == n
    assert report["garbage_sent"] == model.garbage_sent == n
    # the rule was exercised beyond the trivial case: some garbage waited behind a busy port
    waited = int((g["dropped"] > g["sent"] + 1).sum())
    assert waited > 0
    print(f"\n{routing}: {CYCLES} cycles, {report['ejected']} flits match, {n} garbage flits dropped "
          f"({waited} not dropped on arrival), {report['cycles_per_s']} cycles/s; "
          f"build {meta['elaborate_s']} + {meta['verilator_s']} s (cached when built before)")
