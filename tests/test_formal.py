"""Formal proofs (SymbiYosys from PyPI) of the router's flow-control building blocks.

hdl/formal/properties.py has the harnesses; each proof must pass, and a deliberately broken FIFO
(its full flag off by one) must make the FIFO proof fail, so the proofs are not vacuous.
"""

import pytest
import tiers

from hdl.buffer import VCBuffer
from hdl.formal.properties import arbiter_harness, fifo_harness, pick_harness, router_harness
from hdl.formal.runner import prove

# (name, harness, mode, depth): k-induction where it closes; the FIFO's induction needs invariants
# on its internal pointers, so it is checked bounded: 12 cycles from reset reach every
# head/tail/count combination of 2 VCs x 3 entries (one write per cycle).
PROOFS = [
    ("round_robin_pick", lambda: pick_harness(5), "prove", 2),
    ("round_robin_arbiter_fairness", lambda: arbiter_harness(4), "prove", 8),
    ("round_robin_arbiter_fairness_own_commit", lambda: arbiter_harness(5, own_commit=True), "prove", 10),
    ("vc_fifo_order_no_overflow", lambda: fifo_harness(2, 3, 2), "bmc", 12),
    # the fronts read from LUTRAM (--front lutram): about 2.5 minutes on a loaded CI machine, so
    # in the full tier; the buffer tests and an Amaranth lockstep case cover that form in CI
    pytest.param("vc_fifo_order_no_overflow_lutram_fronts", lambda: fifo_harness(2, 3, 2, registered_front=False),
                 "bmc", 12, marks=tiers.full_only("long proof")),
    # a whole router (2 VCs, 2-flit buffers, 2-flit packets) of a 4-router ring with one endpoint:
    # 3 ports, so two inputs (a neighbour and the local port) contend for the third. 6 cycles let
    # two packets from different inputs contend for one output VC and exhaust its credits. About
    # 2 minutes with boolector on a loaded core; depth 7 takes more than 3 times as long.
    ("router_credits_and_packet_order", lambda: router_harness(2, 2, 2, spec="torus:dims=4"), "bmc", 6),
    # the same on a 4-port router (ER_2 + one endpoint, three inputs per output): 4 minutes alone
    # on a core, past 10 on a loaded CI machine, so in the full tier (PSTAR_COSIM=full)
    pytest.param("router4_credits_and_packet_order", lambda: router_harness(2, 2, 2, spec="er:q=2"), "bmc", 6,
                 marks=tiers.full_only("long proof")),
]


@pytest.mark.parametrize("name,make,mode,depth", PROOFS,
                         ids=[p.values[0] if hasattr(p, "values") else p[0] for p in PROOFS])
def test_proof_passes(name, make, mode, depth, tmp_path):
    harness, ports = make()
    # the 4-port router's BMC takes about 4 minutes alone on a core; the limit leaves room for a loaded machine
    r = prove(harness, ports, name, mode=mode, depth=depth, workdir=tmp_path, timeout=1800)
    assert r.passed, f"{name}: {r.status}, log {r.log}"


class OffByOneFIFO(VCBuffer):
    _slack = 1          # accepts a write when full


@pytest.mark.parametrize("registered_front", [True, pytest.param(False, marks=tiers.full_only("long proof"))])
def test_broken_fifo_fails_the_proof(registered_front, tmp_path):
    harness, ports = fifo_harness(2, 3, 2, buffer_cls=OffByOneFIFO, registered_front=registered_front)
    r = prove(harness, ports, "broken_fifo", mode="bmc", depth=12, workdir=tmp_path)
    assert not r.passed and "FAIL" in r.status, r.status


def test_pointer_that_never_moves_fails_fairness(tmp_path):
    """Without pointer updates a requester can starve: the fairness property must fail."""
    harness, ports = arbiter_harness(4, commit=False)
    r = prove(harness, ports, "stuck_arbiter", mode="prove", depth=8, workdir=tmp_path)
    assert not r.passed and "FAIL" in r.status, r.status


def test_dishonest_downstream_breaks_credit_conservation(tmp_path):
    """Credits returned for flits never sent push a counter past depth: the check must fail."""
    harness, ports = router_harness(2, 2, 2, honest_downstream=False, spec="torus:dims=4")
    r = prove(harness, ports, "router_bad_env", mode="bmc", depth=3, workdir=tmp_path)
    assert not r.passed and "FAIL" in r.status, r.status
