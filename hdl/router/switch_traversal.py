"""Switch traversal: the sending VC's front and body through the crossbar to the output ports.

The crossbar (`hdl.crossbar.Crossbar`) runs in the switch allocator's cycle, or `st_stage`
cycles later from registered choices and the buffers' registered body reads (`st_stage = 2`
registers the body read once more: a block RAM's clock-to-output ends there). A head leaving
on a network port counts one hop more when the flit carries the hop count.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from contract.flit import HOPS_BITS, index_bits

from ..arbiter import one_hot_index, one_hot_select
from ..crossbar import Crossbar, split_layout
from ..ecp5_mux import MAX_INPUTS
from ..delay import register as _reg


class SwitchTraversal(wiring.Component):
    """Parameters: `cfg`, the router's `RouterShape`; `sources`: per output port the input ports
    whose VCs can hold its output VCs (`VCMap.holders`), or None. With a traversal stage and
    `sources` (at most 8 per output), each output's one-hot select is encoded into an index among
    its sources in front of the last select register, and the crossbar multiplexes by index with
    the ECP5's slice multiplexers (`Crossbar`, `hdl.ecp5_mux`).

    Attributes:
      front[i][v]   In   the front fields of input VC (i, v)'s front flit
      vc[i][v]      In   the output VC it holds
      read[i]       In   one-hot: the VC of input port i whose flit is sent
      body[i]       In   that flit's body, read from the buffer (a cycle later with st_stage >= 1)
      out_valid[o]  In   output o sends
      out_sel[o]    In   one-hot: the input port it takes
      flit_out[o]   Out  valid + flit, st_stage cycles after the switch allocator's choice
    """

    def __init__(self, cfg, sources=None):
        self.cfg = cfg
        P, V = cfg.P, cfg.V
        usable = sources is not None and cfg.params.st_stage and max(map(len, sources)) <= MAX_INPUTS
        self.sources = tuple(tuple(s) for s in sources) if usable else None
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

        m.submodules.xbar = xbar = Crossbar(P, V, cfg.layout, cfg.front_fields, self.sources)
        for i in range(P):
            front = one_hot_select(self.read[i], [self.front[i][v].as_value() for v in range(V)])
            vc = one_hot_select(self.read[i], list(self.vc[i]))
            m.d.comb += [xbar.front[i].eq(stage(front, f"front_{i}")), xbar.vc[i].eq(stage(vc, f"w_{i}")),
                         xbar.body[i].eq(stage(self.body[i], f"body_{i}", cycles=max(st - 1, 0)))]
        for o in range(P):
            fl = xbar.out_flit[o]
            out = self.flit_out[o].payload
            m.d.comb += [xbar.sel[o].eq(self._select(m, o, stage)), out.eq(fl), out.vc.eq(xbar.out_vc[o]),
                         self.flit_out[o].valid.eq(stage(self.out_valid[o], f"valid_{o}", data=False))]
            if o < cfg.R:
                hmax = (1 << HOPS_BITS) - 1
                with m.If(fl.head):
                    m.d.comb += out.hops.eq(Mux(fl.hops == hmax, hmax, fl.hops + 1))
        return m

    def _select(self, m, o, stage):
        """Output o's select, st_stage cycles late: one-hot, or its index among the output's
        sources encoded between the last two registers (after the switch allocator's register
        with one traversal stage and three SA stages)."""
        st = self.cfg.params.st_stage
        if self.sources is None:
            return stage(self.out_sel[o], f"sel_{o}", data=False)
        src = self.sources[o]
        early = stage(self.out_sel[o], f"sel_{o}", data=False, cycles=st - 1)
        index = one_hot_index(m, Cat(*[early[i] for i in src]), len(src))
        return _reg(m, index, f"st{st if st > 1 else ''}_sel_index_{o}", reset_less=False)


__all__ = ["SwitchTraversal"]
