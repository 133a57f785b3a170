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
`st_stage = 1`, whose registered binary select Yosys could not see through (docs/fpga_results_log.md,
"One-hot crossbar select").
"""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal, Value, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from contract.flit import index_bits

from .arbiter import one_hot_select
from .ecp5_mux import MAX_INPUTS, ecp5_index_select

# flit fields the router reads from the front of every VC (VC allocation, switch allocation and
# the malformed-flit rule); every other bit only travels through the crossbar
FRONT_FIELDS = ("head", "tail", "hops", "dst_ep")


def front_fields(endpoints: int) -> tuple:
    """The FRONT_FIELDS a router with `endpoints` local ports reads: with one, every valid head
    ejects at that port, so `dst_ep` travels in the body (hdl.router)."""
    return FRONT_FIELDS if endpoints > 1 else tuple(f for f in FRONT_FIELDS if f != "dst_ep")


def _front(layout: data.Layout, front=FRONT_FIELDS) -> list:
    return sorted(((f.offset, f.width, n) for n, f in layout if n in front and f.width))


def body_ranges(layout: data.Layout, front=FRONT_FIELDS) -> list[tuple[int, int]]:
    """The bit ranges (lo, hi) of a flit that are not front fields, low to high: the body."""
    out, pos = [], 0
    for off, w, _ in _front(layout, front) + [(layout.size, 0, None)]:
        if off > pos:
            out.append((pos, off))
        pos = max(pos, off + w)
    return out


def split_layout(layout: data.Layout, front=FRONT_FIELDS) -> tuple[data.StructLayout, int]:
    """(front layout, body bits) of a flit layout (`contract.flit.flit_layout`, either format): the
    `front` fields (FRONT_FIELDS, or `front_fields(p)`), and the width of every other bit
    (`body_of`). On a lean flit the front fields of a body flit are payload bits; they travel in
    the front all the same."""
    lay = data.StructLayout({n: unsigned(w) for _, w, n in _front(layout, front)})
    return lay, sum(hi - lo for lo, hi in body_ranges(layout, front))


def body_of(layout: data.Layout, flit, front=FRONT_FIELDS) -> Value:
    """The body bits of `flit` (a value of `layout`), low to high."""
    v = Value.cast(flit)
    return Cat(*[v[lo:hi] for lo, hi in body_ranges(layout, front)])


def join_flit(layout: data.Layout, front, body, fields=FRONT_FIELDS) -> Value:
    """The flit of `layout` with the front fields of `front` (a view of split_layout's front
    layout for `fields`) and the bits of `body`."""
    pieces = [(off, Value.cast(getattr(front, n))) for off, _, n in _front(layout, fields)]
    b = Value.cast(body)
    pos = 0
    for lo, hi in body_ranges(layout, fields):
        pieces.append((lo, b[pos:pos + hi - lo]))
        pos += hi - lo
    return Cat(*[p for _, p in sorted(pieces, key=lambda t: t[0])])


class Crossbar(wiring.Component):
    """ports P, vcs V, layout: the flit layout (`contract.flit.flit_layout`), front: the front fields
    (`front_fields`).

    front[i]    In   the front fields of the flit input port i sends
    body[i]     In   the body of that flit
    vc[i]       In   the output VC that flit's input VC holds
    sel[o]      In   the input port output o takes: one-hot (P bits; all 0: an idle output), or with
                     `sources` its index in sources[o]
    out_flit[o] Out  the flit of the input port sel[o] names (one-hot: 0 when idle; by index: some
                     source's flit when idle, which the output's valid bit leaves unread)
    out_vc[o]   Out  that input port's vc

    sources: None, or per output o the input ports it can take (a router without u-turns never
    sends a flit back where it came from), at most `ecp5_mux.MAX_INPUTS`: then each output selects
    by a binary index among those with the ECP5's slice multiplexers (`ecp5_index_select`), four
    LUT sites per bit at eight sources instead of five for the one-hot AND-OR; the design then
    builds for the ECP5 only. The index wants a registered select: encoding a one-hot grant
    costs a logic level.
    """

    def __init__(self, ports: int, vcs: int, layout: data.Layout, front=FRONT_FIELDS, sources=None):
        self.P, self.V = ports, vcs
        self.layout, self.front_names = layout, tuple(front)
        self.front_layout, self.body_bits = split_layout(layout, self.front_names)
        if sources is not None:
            sources = tuple(tuple(int(i) for i in s) for s in sources)
            if len(sources) != ports or any(not s or not set(s) <= set(range(ports)) for s in sources):
                raise ValueError(f"sources: must give each of the {ports} outputs a non-empty set of input ports")
            if max(len(s) for s in sources) > MAX_INPUTS:
                raise ValueError(f"sources: at most {MAX_INPUTS} per output (the ECP5 slice multiplexers)")
        self.sources = sources
        wb = index_bits(vcs)
        sel_shape = ports if sources is None else index_bits(max(len(s) for s in sources))
        super().__init__({
            "front": In(self.front_layout).array(ports),
            "body": In(self.body_bits).array(ports),
            "vc": In(wb).array(ports),
            "sel": In(sel_shape).array(ports),
            "out_flit": Out(layout).array(ports),
            "out_vc": Out(wb).array(ports),
        })

    def elaborate(self, platform):
        m = Module()
        flits = []
        for i in range(self.P):
            fl = Signal(self.layout, name=f"xin_{i}")
            m.d.comb += fl.eq(join_flit(self.layout, self.front[i], self.body[i], self.front_names))
            flits.append(fl)

        for o in range(self.P):
            sel = self.sel[o]
            if self.sources is None:
                m.d.comb += [self.out_flit[o].eq(one_hot_select(sel, [f.as_value() for f in flits])),
                             self.out_vc[o].eq(one_hot_select(sel, list(self.vc)))]
                continue
            src = self.sources[o]
            m.d.comb += [self.out_flit[o].eq(ecp5_index_select(m, sel, [flits[i].as_value() for i in src], f"x{o}")),
                         self.out_vc[o].eq(ecp5_index_select(m, sel, [self.vc[i] for i in src], f"x{o}_vc"))]
        return m


__all__ = ["Crossbar", "FRONT_FIELDS", "front_fields", "split_layout", "body_ranges", "body_of", "join_flit"]
