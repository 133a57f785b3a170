"""cocotb: a long lockstep run (soak) with the `sim` model running alongside, chunk by chunk.

Like network_bench.py, but the model runs in this process, `chunk` cycles ahead of the RTL, and
its trace is consumed and dropped as the RTL catches up, so memory stays flat over 10^6 cycles.
Reports flits delivered, lost (in flight in the model but never ejected by the RTL: checked by
the per-cycle comparison), duplicated and reordered (the model's engine refuses both; the RTL's
ejections are compared flit by flit), and the largest packet latency, to PSTAR_SOAK.report.json.
"""
from __future__ import annotations

import json
import os
import time

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

from endpoints import EjectChecker, Endpoints
from network_bench import reset_and_load
from sim.network_sim import NetworkSim
from sim.params import RouterParams
from topologies import build


@cocotb.test()
async def soak(dut):
    path = os.environ["PSTAR_SOAK"]
    with open(path + ".json") as fh:
        cfg = json.load(fh)
    net = build(cfg["spec"])
    if cfg.get("fail"):
        net = net.without_links(fraction=cfg["fail"], seed=cfg["seed"])
    params = RouterParams(vcs=cfg["V"])
    chunk, cycles = cfg["chunk"], cfg["cycles"]
    model = NetworkSim(net, cfg["routing"], params, "uniform", cfg["offered"], seed=cfg["seed"],
                       trace=4 * chunk * net.num_endpoints + 16)
    cocotb.start_soon(Clock(dut.clk, 2, unit="ns").start())
    await reset_and_load(dut, cfg)
    W, vb = cfg["W"], cfg["vb"]
    wmask, vmask = (1 << W) - 1, (1 << vb) - 1
    eps = checker = None
    pending_credits = []
    t0 = time.perf_counter()
    max_latency = 0
    for base in range(0, cycles, chunk):
        model.trace_len[0] = 0
        model.run(chunk)
        k = model.num_packets
        if eps is None:
            eps = Endpoints(cfg, (model.pk_src[:k], model.pk_dst[:k], model.pk_ctime[:k]))
            checker = EjectChecker(eps, np.zeros((0, 4), dtype=np.int64))
        else:                      # new packets of this chunk join the replay
            eps.src, eps.dst = model.pk_src, model.pk_dst
            new = np.arange(eps.known, k)
            eps.gen.extend((int(model.pk_ctime[p]), int(p)) for p in new[np.argsort(model.pk_ctime[new], kind="stable")])
        eps.known = k
        tr = model.trace[:model.trace_len[0]]
        for c, e, pk, s in tr.tolist():
            checker.expected.setdefault(c, []).append((e, pk * eps.L + s))
        tails = tr[tr[:, 3] == eps.L - 1]
        if len(tails):
            max_latency = max(max_latency, int((tails[:, 0] - model.pk_ctime[tails[:, 2]]).max()))
        for t in range(base, base + chunk):
            if t:
                await FallingEdge(dut.clk)
            for e, v in pending_credits:
                eps.credit[e][v] += 1
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
            ok = checker.check(t + 1, got)
            checker.expected.pop(t + 1, None)
            if not ok:
                break
            sends = eps.step(t)
            if sends:
                iv = idata = 0
                for e, fl in sends:
                    iv |= 1 << e
                    idata |= fl << (e * W)
                dut.inject_valid.value = iv
                dut.inject_data.value = idata
            else:
                dut.inject_valid.value = 0
        if checker.mismatch is not None:
            break
        if (base // chunk) % 10 == 0:
            dut._log.info(f"soak: cycle {base + chunk}/{cycles}, {checker.count} flits match, "
                          f"{(base + chunk) / (time.perf_counter() - t0):.0f} cycles/s")
    seconds = time.perf_counter() - t0
    k = model.num_packets
    report = {"cycles": cycles, "flits_delivered_rtl": checker.count, "flits_ejected_model": model.ejected_flits,
              "flits_injected_model": model.injected_flits, "in_flight_at_end": model.in_flight,
              "mismatch": checker.mismatch, "dropped": int(dut.dropped.value), "max_packet_latency": max_latency,
              "packets": k, "seconds": round(seconds, 1), "cycles_per_s": round(cycles / seconds, 1)}
    with open(path + ".report.json", "w") as fh:
        json.dump(report, fh)
    assert checker.mismatch is None, f"first divergence from the model: {checker.mismatch}"
