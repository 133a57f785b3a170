"""Switch traversal of the router (docs/microarchitecture.md): each output port takes the flit of
the input port it granted (P:1), with the output VC that input VC holds. Combinational; a
component of its own so that synthesis reports (`pstar fpga area`) show what it costs.

A flit reaches the crossbar in two parts (hdl/buffer.py): the fields the allocators read from every
VC's front (`FRONT_FIELDS`), which the router selects at the VC the switch allocator chose, and
the rest, the body, which the input buffer reads at that VC. With `st_stage = 1` both arrive a
cycle after switch allocation (registered front, synchronous body read), and so does `sel`.

Each output selects its input one-hot (the switch allocator's output arbiters grant one-hot): an
AND-OR of P terms per bit. Against a P:1 multiplexer indexed by a binary port number that is 41 %
fewer LUT sites for the crossbar alone at P = 5, and 9 % fewer for the whole flattened router with
`st_stage = 1`, whose registered binary select Yosys could not see through (docs/fpga.md,
"One-hot crossbar select").
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from sim.flit import bits_for

from .arbiter import one_hot_select

# flit fields the router reads from the front of every VC (VC allocation, switch allocation and
# the malformed-flit rule); every other field only travels through the crossbar
FRONT_FIELDS = ("head", "tail", "hops", "dst_ep")


def split_layout(layout: data.StructLayout) -> tuple[data.StructLayout, data.StructLayout]:
    """(front, body) layouts of a flit layout: its FRONT_FIELDS and the rest, in layout order."""
    front = data.StructLayout({n: f.shape for n, f in layout if n in FRONT_FIELDS})
    body = data.StructLayout({n: f.shape for n, f in layout if n not in FRONT_FIELDS})
    return front, body


class Crossbar(wiring.Component):
    """ports P, vcs V, layout: the flit layout (`sim.flit.flit_layout`).

    front[i]    In   the front fields of the flit input port i sends
    body[i]     In   the body of that flit
    vc[i]       In   the output VC that flit's input VC holds
    sel[o]      In   the input port output o takes, one-hot (P bits; all 0: an idle output)
    out_flit[o] Out  the flit of the input port sel[o] names (0 when idle)
    out_vc[o]   Out  that input port's vc
    """

    def __init__(self, ports: int, vcs: int, layout: data.StructLayout):
        self.P, self.V = ports, vcs
        self.layout = layout
        self.front_layout, self.body_layout = split_layout(layout)
        wb = bits_for(vcs)
        super().__init__({
            "front": In(self.front_layout).array(ports),
            "body": In(self.body_layout).array(ports),
            "vc": In(wb).array(ports),
            "sel": In(ports).array(ports),
            "out_flit": Out(layout).array(ports),
            "out_vc": Out(wb).array(ports),
        })

    def elaborate(self, platform):
        m = Module()
        flits = []
        for i in range(self.P):
            fl = Signal(self.layout, name=f"xin_{i}")
            for name, _ in self.front_layout:
                m.d.comb += getattr(fl, name).eq(getattr(self.front[i], name))
            for name, _ in self.body_layout:
                m.d.comb += getattr(fl, name).eq(getattr(self.body[i], name))
            flits.append(fl)

        for o in range(self.P):
            sel = self.sel[o]
            m.d.comb += [self.out_flit[o].eq(one_hot_select(sel, [f.as_value() for f in flits])),
                         self.out_vc[o].eq(one_hot_select(sel, list(self.vc)))]
        return m


__all__ = ["Crossbar", "FRONT_FIELDS", "split_layout"]
