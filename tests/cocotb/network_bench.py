"""cocotb: a whole network (PackedNetwork) in lockstep with the `sim` model's trace.

The pytest side (tests/test_cocotb_network.py) runs `sim.network_sim.NetworkSim`, stores its
packets (source/destination endpoint, creation cycle) and its ejection trace, and points
PSTAR_LOCKSTEP at them. Here a Python endpoint model that follows the contract (source queue,
a new packet takes the VC with the most credits, one flit per cycle, credits from the router)
replays those packets into the RTL, and every flit the RTL ejects is compared with the model's
trace: cycle, endpoint, packet, seq, and the flit's contents. The first difference is reported
with its cycle and flit. Garbage flits scheduled in the model are sent by the same endpoint rule,
and the RTL's `dropped` (drops in cycles < t, read in cycle t) must equal the model's count of
garbage dropped before t in every cycle, and its total at the end.
"""
from __future__ import annotations

import json
import os
import time

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from cosim.endpoints import EjectChecker, Endpoints


async def reset_and_load(dut, cfg):
    dut.rst.value = 1
    dut.inject_valid.value = 0
    if cfg.get("load"):
        dut.load_valid.value = 0
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    rows = cfg.get("load")
    if rows:
        rb, ab = cfg["load_bits"]               # router bits, addr bits
        for r, table in enumerate(rows):
            for t, row in enumerate(table):
                dut.load_valid.value = 1
                dut.load_data.value = r | (t << rb) | (row << (rb + ab))
                await FallingEdge(dut.clk)
        dut.load_valid.value = 0
        await FallingEdge(dut.clk)


@cocotb.test()
async def lockstep(dut):
    path = os.environ["PSTAR_LOCKSTEP"]
    cfg = json.loads(open(path + ".json").read())
    arrays = np.load(path + ".npz")
    packets = (arrays["src"], arrays["dst"], arrays["created"])
    trace = arrays["trace"]                     # (n, 4): cycle, endpoint, packet, seq
    cycles = int(cfg["cycles"])
    garbage = (arrays["g_ep"], arrays["g_time"], arrays["g_kind"]) if "g_ep" in arrays else None
    # the model's drops per cycle: the RTL's `dropped` in cycle t counts those of cycles < t
    g_drop = arrays["g_drop"] if "g_drop" in arrays else np.zeros(0, dtype=np.int64)
    drops_at = np.bincount(g_drop[g_drop >= 0], minlength=cycles + 1)
    dropped_before = np.concatenate([[0], np.cumsum(drops_at)])
    drop_mismatch = None
    cocotb.start_soon(Clock(dut.clk, 2, unit="ns").start())
    await reset_and_load(dut, cfg)
    eps = Endpoints(cfg, packets, garbage)
    W, vb = cfg["W"], cfg["vb"]
    wmask, vmask = (1 << W) - 1, (1 << vb) - 1
    checker = EjectChecker(eps, trace)
    pending_credits = []
    t_start = time.perf_counter()
    for t in range(cycles):
        if t:
            await FallingEdge(dut.clk)
        # credits returned in cycle t-1 are counted now (credit latency is inside the RTL)
        for e, v in pending_credits:
            eps.credit[e][v] += 1
        # outputs of cycle t
        ev = int(dut.eject_valid.value)
        got = []
        if ev:
            data = int(dut.eject_data.value)
            while ev:
                low = ev & -ev
                e = low.bit_length() - 1
                got.append((e, (data >> (e * W)) & wmask))
                ev ^= low
        cv = int(dut.credit_valid.value)
        pending_credits = []
        if cv:
            cd = int(dut.credit_vc.value)
            while cv:
                low = cv & -cv
                e = low.bit_length() - 1
                pending_credits.append((e, (cd >> (e * vb)) & vmask))
                cv ^= low
        # a flit ejected in cycle t reaches its endpoint at t + 1
        if not checker.check(t + 1, got):
            break
        if garbage is not None and drop_mismatch is None:
            d = int(dut.dropped.value)
            if d != dropped_before[t]:
                drop_mismatch = {"cycle": t, "rtl_dropped": d, "model_dropped": int(dropped_before[t])}
        # inputs of cycle t
        sends = eps.step(t)
        if sends:
            iv = 0
            idata = 0
            for e, fl in sends:
                iv |= 1 << e
                idata |= fl << (e * W)
            dut.inject_valid.value = iv
            dut.inject_data.value = idata
        else:
            dut.inject_valid.value = 0
    await FallingEdge(dut.clk)                  # `dropped` now counts the drops of cycles < cycles
    dropped = int(dut.dropped.value)
    seconds = time.perf_counter() - t_start
    mismatch = checker.mismatch
    expected_drops = int(cfg.get("dropped", 0))
    report = {"cycles": cycles, "ejected": checker.count, "expected": int((trace[:, 0] <= cycles).sum()),
              "mismatch": mismatch, "seconds": round(seconds, 2), "cycles_per_s": round(cycles / seconds, 1),
              "dropped": dropped, "dropped_expected": expected_drops, "garbage_sent": eps.garbage_sent,
              "drop_mismatch": drop_mismatch}
    with open(path + ".report.json", "w") as fh:
        json.dump(report, fh)
    assert mismatch is None, f"first divergence from the model: {mismatch}"
    assert drop_mismatch is None, f"`dropped` diverges from the model: {drop_mismatch}"
    assert dropped == expected_drops, f"{dropped} flits dropped as malformed, the model dropped {expected_drops}"
