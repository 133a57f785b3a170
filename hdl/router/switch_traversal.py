"""Switch traversal: the sending VC's front and body through the crossbar to the output ports.

The crossbar (`hdl.crossbar.Crossbar`) runs in the switch allocator's cycle, or `st_stage`
cycles later from registered choices and the buffers' registered body reads (`st_stage = 2`
registers the body read once more: a block RAM's clock-to-output ends there). A head leaving
on a network port counts one hop more when the flit carries the hop count.
"""
from __future__ import annotations

from amaranth.hdl import Module, Mux
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from contract.flit import HOPS_BITS, index_bits

from ..arbiter import one_hot_select
from ..crossbar import Crossbar, split_layout
from ..delay import register as _reg


class SwitchTraversal(wiring.Component):
    """Parameters: `cfg`, the router's `RouterShape`.

    Attributes:
      front[i][v]   In   the front fields of input VC (i, v)'s front flit
      vc[i][v]      In   the output VC it holds
      read[i]       In   one-hot: the VC of input port i whose flit is sent
      body[i]       In   that flit's body, read from the buffer (a cycle later with st_stage >= 1)
      out_valid[o]  In   output o sends
      out_sel[o]    In   one-hot: the input port it takes
      flit_out[o]   Out  valid + flit, st_stage cycles after the switch allocator's choice
    """

    def __init__(self, cfg):
        self.cfg = cfg
        P, V = cfg.P, cfg.V
        self.front_layout, self.body_bits = split_layout(cfg.layout, cfg.front_fields)
        super().__init__({
            "front": In(self.front_layout).array(P, V),
            "vc": In(index_bits(V)).array(P, V),
            "read": In(V).array(P),
            "body": In(self.body_bits).array(P),
            "out_valid": In(1).array(P),
            "out_sel": In(P).array(P),
            "flit_out": Out(stream.Signature(cfg.layout, always_ready=True)).array(P),
        })

    def elaborate(self, platform):
        m = Module()
        cfg, P, V, st = self.cfg, self.cfg.P, self.cfg.V, self.cfg.params.st_stage

        def stage(value, name, data=True, cycles=st):
            for k in range(cycles):
                value = _reg(m, value, f"st{k + 1 if k else ''}_{name}", reset_less=data)
            return value

        m.submodules.xbar = xbar = Crossbar(P, V, cfg.layout, cfg.front_fields)
        for i in range(P):
            front = one_hot_select(self.read[i], [self.front[i][v].as_value() for v in range(V)])
            vc = one_hot_select(self.read[i], list(self.vc[i]))
            m.d.comb += [xbar.front[i].eq(stage(front, f"front_{i}")), xbar.vc[i].eq(stage(vc, f"w_{i}")),
                         xbar.body[i].eq(stage(self.body[i], f"body_{i}", cycles=max(st - 1, 0)))]
        for o in range(P):
            fl = xbar.out_flit[o]
            out = self.flit_out[o].payload
            m.d.comb += [xbar.sel[o].eq(stage(self.out_sel[o], f"sel_{o}", data=False)),
                         out.eq(fl), out.vc.eq(xbar.out_vc[o]),
                         self.flit_out[o].valid.eq(stage(self.out_valid[o], f"valid_{o}", data=False))]
            if o < cfg.R:
                hmax = (1 << HOPS_BITS) - 1
                with m.If(fl.head):
                    m.d.comb += out.hops.eq(Mux(fl.hops == hmax, hmax, fl.hops + 1))
        return m


__all__ = ["SwitchTraversal"]
