"""Formal proofs (SymbiYosys from PyPI) of the router's flow-control building blocks.

hdl/formal/properties.py has the harnesses; each proof must pass, and a broken arbiter (its
pointer never moves) and a dishonest downstream must make theirs fail, so the proofs are not
vacuous. The VC buffer's proof (k-induction at 3 VCs x 4 entries, both front forms, with its
planted bug) and the other stages' are in tests/test_formal_stages.py; the 12-cycle BMC of the
FIFO that was here is superseded by it.
"""

import pytest
import tiers

from hdl.formal.properties import arbiter_harness, pick_harness, router_harness
from hdl.formal.runner import prove

# (name, harness, mode, depth): k-induction where it closes, else bounded from reset
PROOFS = [
    ("round_robin_pick", lambda: pick_harness(5), "prove", 2),
    ("round_robin_arbiter_fairness", lambda: arbiter_harness(4), "prove", 8),
    ("round_robin_arbiter_fairness_own_commit", lambda: arbiter_harness(5, own_commit=True), "prove", 10),
    # a whole router (2 VCs, 2-flit buffers, 2-flit packets) of a 4-router ring with one endpoint:
    # 3 ports, so two inputs (a neighbour and the local port) contend for the third. 6 cycles let
    # two packets from different inputs contend for one output VC and exhaust its credits. About
    # 2 minutes with boolector on a loaded core; depth 7 takes more than 3 times as long. Bounded,
    # and superseded in CI by the k-induction proofs of tests/test_formal_stages.py (credits and
    # ownership at P=5, V=3, B=4; packet order at P=4, V=2, B=2): full tier (CI budget)
    pytest.param("router_credits_and_packet_order", lambda: router_harness(2, 2, 2, spec="torus:dims=4"), "bmc", 6,
                 marks=tiers.full_only("bounded proof superseded in CI")),
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
