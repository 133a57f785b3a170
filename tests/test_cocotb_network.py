"""Whole-network co-simulation: the Verilated RTL in lockstep with `sim` (tests/cocotb/network_bench.py).

The model runs first (uniform random traffic near saturation), then its packets are replayed
into the RTL and every ejected flit must match the model's trace in cycle, endpoint, packet,
seq and contents; a mismatch names the first diverging flit and its cycle. One Verilator build
per (network, routing, VCs), kept in build/cocotb and shared between runs.
"""
import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent / "cocotb"))

from lockstep import lockstep  # noqa: E402

PS26 = "polarstar:q=3,supernode=iq,degree=0"
PS104 = "polarstar:q=3,supernode=iq,degree=3"
CYCLES = int(os.environ.get("PSTAR_LOCKSTEP_CYCLES", "20000"))

CASES = [
    # spec, routing, VCs (the routing's deadlock-free count, at least 4), load near saturation
    pytest.param(PS26, "polarstar", 4, 0.75, id="ps26-polarstar"),
    pytest.param(PS26, "min", 4, 0.75, id="ps26-min"),
    pytest.param(PS26, "polarized", 9, 0.65, id="ps26-polarized"),
    pytest.param(PS104, "polarstar", 4, 0.7, id="ps104-polarstar"),
    pytest.param(PS104, "min", 4, 0.7, id="ps104-min"),
    pytest.param(PS104, "polarized", 9, 0.6, id="ps104-polarized"),
]


@pytest.mark.parametrize("spec,routing,vcs,load", CASES)
def test_network_lockstep(spec, routing, vcs, load, tmp_path):
    cycles = CYCLES
    results, report, meta, model = lockstep(spec, routing, vcs, load, cycles, tmp=tmp_path)
    assert results and all(r["passed"] for r in results), (results, report)
    assert report["mismatch"] is None
    assert report["ejected"] == report["expected"] == model.ejected_flits
    assert model.ejected_flits > 0.5 * load * cycles * model.net.num_endpoints   # near saturation, moving
    print(f"\n{routing} on {model.net.num_routers} routers: {report['cycles']} cycles, {report['ejected']} flits, "
          f"{report['cycles_per_s']} cycles/s; build {meta['elaborate_s']} s elaborate + {meta['verilator_s']} s Verilator")


def test_mismatch_report_names_first_divergence(tmp_path):
    """Move one flit of the model's trace a cycle later: the report must name that cycle and flit."""
    k = 500
    moved = {}

    def tamper(trace):
        moved["row"] = trace[k].tolist()
        trace[k, 0] += 1
        return trace

    results, report, meta, model = lockstep(PS26, "polarstar", 4, 0.75, 2000, tmp=tmp_path, tamper=tamper)
    cycle, endpoint, packet, seq = moved["row"]
    assert results and not results[0]["passed"]
    mm = report["mismatch"]
    assert mm["cycle"] == cycle
    assert any(e == endpoint and f["packet"] == packet & 0xFFFF and f["seq"] == seq for e, f in mm["rtl_only"])
