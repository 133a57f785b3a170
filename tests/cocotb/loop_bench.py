"""cocotb: router in the loop. The network is the `sim` model; router X is the RTL.

The pytest side (tests/test_cocotb_router.py) passes, in PSTAR_LOOP, the network, routing,
parameters, router X and the packets of a `sim` run. Here the model advances one cycle at a time
with X's stages switched off (`sim.external.ExternalRouter`): every cycle the flits and credits
the model sends to X drive the RTL's link inputs, and what the RTL sends (flits on its outputs,
credits on its inputs) goes back into the model's links. The ejection trace of that run must be
the pure model's, flit for flit and cycle for cycle; flits leaving the RTL must carry their
packet's source, destination and payload.
"""
from __future__ import annotations

import json
import os

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from cosim.endpoints import Flits, payload_of
from sim.external import ExternalRouter, LinkFlit
from sim.network_sim import NetworkSim
from contract.params import RouterParams
from topologies import build


@cocotb.test()
async def router_in_the_loop(dut):
    cfg = json.loads(open(os.environ["PSTAR_LOOP"] + ".json").read())
    pk = np.load(os.environ["PSTAR_LOOP"] + ".npz")
    net = build(cfg["spec"])
    params = RouterParams(**cfg["params"])
    X, cycles = cfg["router"], cfg["cycles"]
    model = NetworkSim(net, cfg["routing"], params, "uniform", 0.0, trace=len(pk["src"]) * params.packet_flits + 16)
    model.add_packets(pk["src"], pk["dst"], pk["created"])
    ext = ExternalRouter(model, X)
    flits = Flits({k: tuple(v) for k, v in cfg["fields"].items()})
    pbits = cfg["fields"]["payload"][1]
    pmask = (1 << cfg["fields"]["packet"][1]) - 1
    R, P = cfg["R"], cfg["P"]
    fin = [(getattr(dut, f"flit_in__{i}__valid"), getattr(dut, f"flit_in__{i}__payload")) for i in range(P)]
    fout = [(getattr(dut, f"flit_out__{o}__valid"), getattr(dut, f"flit_out__{o}__payload")) for o in range(P)]
    cin = [(getattr(dut, f"credit_in__{o}__valid"), getattr(dut, f"credit_in__{o}__payload")) for o in range(R)]
    cout = [(getattr(dut, f"credit_out__{i}__valid"), getattr(dut, f"credit_out__{i}__payload")) for i in range(P)]

    cocotb.start_soon(Clock(dut.clk, 2, unit="ns").start())
    dut.rst.value = 1
    dut.id.value = X
    for v, _ in fin + cin:
        v.value = 0
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0

    live = {}                      # packet field -> model packet id, for packets inside X
    through = 0
    for t in range(cycles):
        if t:
            await FallingEdge(dut.clk)
        # what X sends in cycle t (outputs are registers)
        sent, returned = [], []
        for o, (v, d) in enumerate(fout):
            if int(v.value):
                f = flits.unpack(int(d.value))
                p = live.get(f["packet"])
                assert p is not None, f"cycle {t}: router {X} sent a flit of no packet it holds: {f} on port {o}"
                want = ext.fields(p, f["seq"], f["vc"])
                for k in ("src", "src_ep", "dst", "dst_ep", "seq", "head", "tail"):
                    assert f[k] == want[k], f"cycle {t}: port {o} flit {f}: {k} should be {want[k]}"
                assert f["payload"] == payload_of(p, f["seq"], pbits), f"cycle {t}: port {o}: payload corrupted: {f}"
                sent.append(LinkFlit(o, f["vc"], p, f["seq"], f["phase"]))
                through += 1
                if f["tail"]:
                    del live[f["packet"]]
        for i, (v, d) in enumerate(cout):
            if int(v.value):
                returned.append((i, int(d.value)))
        # the model's cycle t, then X's cycle-t output into its links
        arrivals, credits = ext.step()
        ext.deliver(sent, returned)
        # what the model sends X in cycle t
        busy = set()
        for a in arrivals:
            assert a.port not in busy, f"cycle {t}: two flits for input port {a.port}"
            busy.add(a.port)
            if a.seq == 0:
                key = a.packet & pmask
                assert key not in live, f"cycle {t}: packet field {key} of packet {a.packet} is already in router {X}"
                live[key] = a.packet
            fl = flits.pack(**ext.fields(a.packet, a.seq, a.vc), payload=payload_of(a.packet, a.seq, pbits))
            fin[a.port][1].value = fl
            fin[a.port][0].value = 1
        for i, (v, _) in enumerate(fin):
            if i not in busy:
                v.value = 0
        cred = set()
        for o, vc in credits:
            assert o not in cred, f"cycle {t}: two credits for output port {o}"
            cred.add(o)
            cin[o][1].value = vc
            cin[o][0].value = 1
        for o, (v, _) in enumerate(cin):
            if o not in cred:
                v.value = 0

    n = int(model.trace_len[0])
    np.savez(os.environ["PSTAR_LOOP"] + ".out.npz", trace=model.trace[:n], done=model.pk_done[:model.num_packets],
             through=through, dropped=int(dut.dropped.value))
