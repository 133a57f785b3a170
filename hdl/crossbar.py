"""Switch traversal of the router (docs/microarchitecture.md): each input port sends the front
flit of the VC its switch-allocator grant chose, and each output port takes the flit of the input
port it granted (P:1), with the output VC that input VC holds. Combinational; a component of its
own so that synthesis reports (`pstar fpga area`) show what it costs.

A flit reaches the crossbar in two parts (hdl/buffer.py): the fields the allocators read from every
VC's front (`FRONT_FIELDS`), selected here per input port (V:1), and the rest, the body, which the
input buffer already read at the chosen VC.
"""
from __future__ import annotations

from amaranth.hdl import Array, Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from sim.flit import bits_for

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

    front[i][v]   In   the front fields of input VC (i, v)'s front flit
    body[i]       In   the body of input port i's flit this cycle (read at in_vc[i])
    alloc_w[i][v] In   the output VC input VC (i, v) holds
    in_vc[i]      In   the VC input port i sends from this cycle
    src[o]        In   the input port output o takes
    in_flit[i]    Out  the flit input port i sends: front[i][in_vc[i]] and body[i]
    out_flit[o]   Out  in_flit[src[o]]
    out_vc[o]     Out  alloc_w[src[o]][in_vc[src[o]]]
    """

    def __init__(self, ports: int, vcs: int, layout: data.StructLayout):
        self.P, self.V = ports, vcs
        self.layout = layout
        self.front_layout, self.body_layout = split_layout(layout)
        wb, ob = bits_for(vcs), bits_for(ports)
        super().__init__({
            "front": In(self.front_layout).array(ports, vcs),
            "body": In(self.body_layout).array(ports),
            "alloc_w": In(wb).array(ports, vcs),
            "in_vc": In(wb).array(ports),
            "src": In(ob).array(ports),
            "in_flit": Out(layout).array(ports),
            "out_flit": Out(layout).array(ports),
            "out_vc": Out(wb).array(ports),
        })

    def elaborate(self, platform):
        m = Module()
        P, V = self.P, self.V
        sel_w = []
        for i in range(P):
            fl = self.in_flit[i]
            sel = Signal(self.front_layout, name=f"front_sel_{i}")
            m.d.comb += sel.eq(Array(f.as_value() for f in self.front[i])[self.in_vc[i]] if V > 1 else self.front[i][0])
            for name, _ in self.front_layout:
                m.d.comb += getattr(fl, name).eq(getattr(sel, name))
            for name, _ in self.body_layout:
                m.d.comb += getattr(fl, name).eq(getattr(self.body[i], name))
            sel_w.append(Array(self.alloc_w[i])[self.in_vc[i]] if V > 1 else self.alloc_w[i][0])
        for o in range(P):
            src = self.src[o]
            m.d.comb += [self.out_flit[o].eq(Array(f.as_value() for f in self.in_flit)[src]),
                         self.out_vc[o].eq(Array(sel_w)[src])]
        return m


__all__ = ["Crossbar", "FRONT_FIELDS", "split_layout"]
