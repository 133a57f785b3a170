"""Switch traversal of the router (docs/microarchitecture.md): each input port reads the front
flit of the VC its switch-allocator grant chose (V:1), and each output port takes the flit of the
input port it granted (P:1), with the output VC that input VC holds. Combinational; a component
of its own so that synthesis reports (`pstar fpga area`) show what the crossbar costs."""
from __future__ import annotations

from amaranth.hdl import Array, Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from sim.flit import bits_for


class Crossbar(wiring.Component):
    """ports P, vcs V, layout: the flit layout.

    front[i][v]  In   the front flit of input VC (i, v)
    alloc_w[i][v] In  the output VC input VC (i, v) holds
    in_vc[i]     In   the VC input port i sends from this cycle
    src[o]       In   the input port output o takes
    in_flit[i]   Out  the flit input port i sends (front[i][in_vc[i]])
    out_flit[o]  Out  in_flit[src[o]]
    out_vc[o]    Out  alloc_w[src[o]][in_vc[src[o]]]
    """

    def __init__(self, ports: int, vcs: int, layout: data.StructLayout):
        self.P, self.V = ports, vcs
        wb, ob = bits_for(vcs), bits_for(ports)
        super().__init__({
            "front": In(layout).array(ports, vcs),
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
            if V > 1:
                m.d.comb += self.in_flit[i].eq(Array(f.as_value() for f in self.front[i])[self.in_vc[i]])
                sel_w.append(Array(self.alloc_w[i])[self.in_vc[i]])
            else:
                m.d.comb += self.in_flit[i].eq(self.front[i][0])
                sel_w.append(self.alloc_w[i][0])
        for o in range(P):
            src = self.src[o]
            m.d.comb += [self.out_flit[o].eq(Array(f.as_value() for f in self.in_flit)[src]),
                         self.out_vc[o].eq(Array(sel_w)[src])]
        return m


__all__ = ["Crossbar"]
