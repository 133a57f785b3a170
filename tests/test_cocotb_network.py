"""Whole-network co-simulation: the Verilated RTL in lockstep with `sim` (tests/cocotb/network_bench.py).

The model runs first (uniform random traffic near saturation), then its packets are replayed
into the RTL and every ejected flit must match the model's trace in cycle, endpoint, packet,
seq and contents; a mismatch names the first diverging flit and its cycle. One Verilator build
per (network, routing, VCs), kept in build/cocotb and shared between runs.
"""
import os

import pytest

import tiers
from cosim.lockstep import lockstep
from topologies import build

PS26 = "polarstar:q=3,supernode=iq,degree=0"
PS104 = "polarstar:q=3,supernode=iq,degree=3"
CYCLES = int(os.environ.get("PSTAR_LOCKSTEP_CYCLES", "20000"))
# CI must stay under 20 minutes on 2 cores, so the 104-router cocotb runs (Verilator builds of 1.5-2.5
# minutes each, then 100-400 cycles/s through cocotb) are in the full tier; CI runs the 26-router
# PolarStar configuration and a fault run here, and the same three 104-router configurations through the
# C++ netlist replay (tests/test_replay.py, 200-600 cycles/s).
full_only = tiers.full_only("long co-simulation")
pytestmark = pytest.mark.slow

CASES = [
    # spec, routing, VCs, load near saturation. VCs: 4, or for Polarized the fewest its channel
    # dependency graph accepts (exact longest routes 5 and 8; the 4D-3 = 9 bound is not needed)
    pytest.param(PS26, "polarstar", 4, 0.75, id="ps26-polarstar"),
    # min's tables: in CI through the replay of the 104-router network (tests/test_replay.py)
    pytest.param(PS26, "min", 4, 0.75, id="ps26-min", marks=full_only),
    # CI: Polarized's unit runs in the Verilator network with failed links (tables and escapes)
    pytest.param(PS26, "polarized", 5, 0.65, id="ps26-polarized", marks=full_only),
    pytest.param(PS104, "polarstar", 4, 0.7, id="ps104-polarstar", marks=full_only),
    pytest.param(PS104, "min", 4, 0.7, id="ps104-min", marks=full_only),
    pytest.param(PS104, "polarized", 8, 0.6, id="ps104-polarized", marks=full_only),
]


FAULT_CYCLES = int(os.environ.get("PSTAR_FAULT_CYCLES", "4000"))


# VCs: 4 for min/polarstar; Polarized with escapes needs the fewest its damaged channel dependency
# graph accepts (8 on the 26-router network at 10%; 11, 11, 12 on the 104-router one at 5/10/20%)
# all in the full tier (CI budget), as the netlist replay of Polarized on the damaged 26-router
# network (tests/test_replay.py): CI checks the Polarized unit (recomputed tables, dead-end
# escapes) and PolarStar's exception CAM on damaged networks in the Amaranth simulator
# (test_hdl_routing.py); min's recomputed tables are the same mechanism as Polarized's
FAULT_CASES = [pytest.param(PS26, r, f, v, id=f"ps26-{r}-{int(f * 100)}pct", marks=full_only) for r, f, v in
               (("min", 0.10, 4), ("polarstar", 0.10, 4), ("polarized", 0.10, 8))]
FAULT_CASES += [pytest.param(PS104, r, f, 4, id=f"ps104-{r}-{int(f * 100)}pct", marks=full_only) for r in
                ("min", "polarstar") for f in (0.05, 0.10, 0.20)]
FAULT_CASES += [pytest.param(PS104, "polarized", f, v, id=f"ps104-polarized-{int(f * 100)}pct", marks=full_only)
                for f, v in ((0.05, 11), (0.10, 11), (0.20, 12))]


@pytest.mark.parametrize("spec,routing,fail,vcs", FAULT_CASES)
def test_network_lockstep_with_failed_links(spec, routing, fail, vcs, tmp_path):
    """Links failed: the model routes the damaged network; the RTL keeps its wiring and gets the
    recomputed tables (min, polarized: dead-end escapes included) or the PolarStar exception CAM
    through `load`. Every flit matches."""
    results, report, meta, model = lockstep(spec, routing, vcs, 0.5, FAULT_CYCLES, tmp=tmp_path, fail=fail)
    assert results and all(r["passed"] for r in results), (results, report)
    assert report["ejected"] == report["expected"] == model.ejected_flits > 0.3 * FAULT_CYCLES * model.net.num_endpoints
    if routing == "polarized":
        assert (model.pk_phase[:model.num_packets] == 0).any()        # some packets escaped dead ends
    failed = model.net.attrs["failed_links"]
    assert len(failed) == round(fail * build(spec).num_links)
    print(f"\n{routing} on {model.net.name}: {report['cycles']} cycles, {report['ejected']} flits match, "
          f"{report['cycles_per_s']} cycles/s; build {meta['elaborate_s']} + {meta['verilator_s']} s")


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


@full_only          # CI budget: the pipelined configurations run in lockstep in the Amaranth simulator (test_hdl_network_sim.py)
def test_network_lockstep_pipelined_router(tmp_path):
    """The pipelined router (two-stage VC and switch allocators, switch traversal stage) in every router of the
    26-router network, near saturation: every flit as the model delivers it, cycle for cycle."""
    load = 0.7
    results, report, meta, model = lockstep(PS26, "polarstar", 4, load, CYCLES // 2, tmp=tmp_path, va_stages=2,
                                            sa_stages=2, st_stage=1)
    assert results and all(r["passed"] for r in results), (results, report)
    assert report["mismatch"] is None
    trace = model.trace[:model.trace_len[0]]
    assert report["ejected"] == report["expected"] == int((trace[:, 0] <= CYCLES // 2).sum())
    # the model's last cycle's ejections are due one cycle after the run's end (switch traversal)
    assert 0 <= model.ejected_flits - report["expected"] <= model.net.num_endpoints
    assert model.ejected_flits > 0.5 * load * (CYCLES // 2) * model.net.num_endpoints


@full_only          # CI budget: turn classes run in lockstep in the Amaranth simulator (test_hdl_network_sim.py)
def test_network_lockstep_turn_classes(tmp_path):
    """Turn VC classes (routing_logic.base.TurnVC) with 2 VCs on the diameter-3 26-router network,
    the shared router module (its class steps from its `up` input, tied per instance in the
    network top), near saturation: every flit as the model delivers it, cycle for cycle."""
    load = 0.6
    results, report, meta, model = lockstep(PS26, "polarstar", 2, load, CYCLES // 2, tmp=tmp_path, vc_policy="turns")
    assert results and all(r["passed"] for r in results), (results, report)
    assert report["mismatch"] is None
    assert model.routing.vc_policy.name == "turns" and model.vc_classes == 2
    assert report["ejected"] == report["expected"] == model.ejected_flits
    assert model.ejected_flits > 0.5 * load * (CYCLES // 2) * model.net.num_endpoints
    print(f"\nturn classes, 2 VCs, {model.net.num_routers} routers: {report['cycles']} cycles, {report['ejected']} "
          f"flits; build {meta['elaborate_s']} s elaborate + {meta['verilator_s']} s Verilator")


@full_only          # CI budget: the same configuration runs in lockstep in the Amaranth simulator (test_hdl_network_sim.py)
def test_network_lockstep_registered_links(tmp_path):
    """Link and credit latency 2 (a register on every link, `--link-latency 2 --credit-latency 2`
    of the FPGA build) with the pipelined router and 2 turn VCs, the 26-router network near
    saturation: every flit as the model delivers it, cycle for cycle. As the FPGA build of this
    network has it on the ECP5-85F (`--flit lean --packet-id-bits 8 --body-bram auto`): lean flits
    (35 bits: the header in heads only) with 8-bit packet ids, and each buffer's whole body (32
    bits; 208 EBRs for 130 buffers give each one 36) in block RAM, read synchronously."""
    load = 0.45
    results, report, meta, model = lockstep(PS26, "min", 2, load, CYCLES // 4, tmp=tmp_path, vc_policy="turns",
                                            va_stages=2, sa_stages=2, st_stage=1, link_latency=2, credit_latency=2,
                                            body_block_bits=36, flit="lean", packet_id_bits=8)
    assert results and all(r["passed"] for r in results), (results, report)
    assert report["mismatch"] is None
    assert model.params.link_latency == model.params.credit_latency == 2
    trace = model.trace[:model.trace_len[0]]
    assert report["ejected"] == report["expected"] == int((trace[:, 0] <= CYCLES // 4).sum())
    assert report["ejected"] > 0.5 * load * (CYCLES // 4) * model.net.num_endpoints
    print(f"\nregistered links, {model.net.num_routers} routers: {report['cycles']} cycles, {report['ejected']} flits; "
          f"build {meta['elaborate_s']} s elaborate + {meta['verilator_s']} s Verilator")


@full_only          # CI budget: a second 26-router run; the replay's report is checked in CI (test_replay.py)
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
