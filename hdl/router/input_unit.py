"""The input unit of one router port: the link's latency registers, the route computation (the
routing unit's answer stored with each flit, docs/microarchitecture.md "Route computation"), the
VC buffers (`hdl.buffer.VCBuffer`), and the rule for malformed flits: a head whose destination
does not exist, or a flit that follows no head, is popped in a cycle in which the port sends
nothing, its credit returned ("Malformed flits").
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from contract.flit import index_bits

from ..arbiter import lowest_set_bit, one_hot_index
from ..buffer import VCBuffer
from ..crossbar import body_of, split_layout
from ..delay import delay_line
from .output_unit import credit_signature


def entry_layout(front_layout, R: int, prio_bits: int) -> data.StructLayout:
    """A buffer entry: the flit's front fields with the routing unit's answer (the output ports
    it may take, their priorities), whether it ejects here and whether it is malformed."""
    fields = {"flit": front_layout, "mask": R, "eject": 1, "bad": 1}
    if prio_bits:
        fields["prio"] = data.ArrayLayout(prio_bits, R)
    return data.StructLayout(fields)


def stored_layout(front_layout, R: int) -> data.StructLayout:
    """An entry as the buffer stores it when the unit's mask has at most one bit
    (`RoutingUnit.single_port`, no priorities): the port's number, R for none."""
    return data.StructLayout({"flit": front_layout, "port": index_bits(R + 1), "eject": 1, "bad": 1})


def stores_port(cfg) -> bool:
    """Whether the input buffers of a router of shape `cfg` store a route as its port's number
    (`stored_layout`: fewer bits, fewer LUTRAMs): its unit's masks have at most one port
    (`RoutingUnit.single_port`) and no priorities."""
    return cfg.single_port and not cfg.prio_bits


def buffer_layout(cfg) -> data.StructLayout:
    """What the input buffers of a router of shape `cfg` store per entry: `stored_layout` when
    `stores_port(cfg)`, else `entry_layout`."""
    front = split_layout(cfg.layout, cfg.front_fields)[0]
    return stored_layout(front, cfg.R) if stores_port(cfg) else entry_layout(front, cfg.R, cfg.prio_bits)


def entry_to_buffer(m, cfg, ent, name: str):
    """The entry `ent` (an `entry_layout` view) as the buffers store it (`buffer_layout(cfg)`):
    with `stores_port(cfg)` its mask encoded to the port's number by logic added to `m`."""
    if not stores_port(cfg):
        return ent.as_value()
    st = Signal(buffer_layout(cfg), name=name)
    m.d.comb += [st.flit.eq(ent.flit), st.eject.eq(ent.eject), st.bad.eq(ent.bad),
                 st.port.eq(Mux(ent.mask.any(), one_hot_index(m, ent.mask, cfg.R), cfg.R))]
    return st.as_value()


def entry_from_buffer(m, cfg, value, name: str):
    """A buffer entry `value` (`buffer_layout(cfg)`) as an `entry_layout` view: with
    `stores_port(cfg)` the port's number decoded to its mask by logic added to `m`."""
    stored = buffer_layout(cfg)
    if not stores_port(cfg):
        return data.View(stored, value)
    st = data.View(stored, value)
    ent = Signal(entry_layout(stored["flit"].shape, cfg.R, 0), name=name)
    m.d.comb += [ent.flit.eq(st.flit), ent.eject.eq(st.eject), ent.bad.eq(st.bad),
                 ent.mask.eq(Cat(*[st.port == k for k in range(cfg.R)]))]
    return ent


class InputUnit(wiring.Component):
    """Parameters: `cfg`, the router's `RouterShape` (ports, VCs, layouts, options).

    Attributes:
      flit_in      In   valid + flit from the link
      credit_out   Out  valid + vc: one entry of VC vc freed this cycle (sent or dropped)
      query        Out  the header of the flit arriving now, for the routing unit's lane
      answer       In   the lane's answer (output port mask, priorities, escape)
      router_id    In   the router's own id
      front[v]     Out  VC v's front entry (`entry_layout`)
      count_gt[v]  Out  bit j: VC v holds more than j flits
      peek[v]      Out  the flit after VC v's front is a tail (three-stage SA)
      alloc_valid  In   bit v: VC v holds an output VC
      send         In   one-hot over VCs: the VC that sends this cycle (popped)
      read_vc      In   the VC whose body is read (the one that sends, when one does)
      body         Out  the body bits read (registered reads with a traversal stage)
      drop         Out  a malformed front is dropped this cycle
      overflow     Out  a flit arrived at a full VC (a sender broke the credit contract)
    """

    def __init__(self, cfg):
        self.cfg = cfg
        V = cfg.V
        self.front_layout, self.body_bits = split_layout(cfg.layout, cfg.front_fields)
        self.entry = entry_layout(self.front_layout, cfg.R, cfg.prio_bits)
        self.stored = buffer_layout(cfg)
        super().__init__({
            "flit_in": In(stream.Signature(cfg.layout, always_ready=True)),
            "credit_out": Out(credit_signature(V)),
            "query": Out(cfg.query_layout),
            "answer": In(cfg.answer_layout),
            "router_id": In(cfg.id_bits),
            "front": Out(self.entry).array(V),
            "count_gt": Out(cfg.params.sa_stages).array(V),
            "peek": Out(1).array(V),
            "alloc_valid": In(V),
            "send": In(V),
            "read_vc": In(index_bits(V)),
            "body": Out(self.body_bits),
            "drop": Out(1),
            "overflow": Out(1),
        })

    def _arrival(self, m, fl):
        """The entry and body of the flit arriving now (`fl`, a view of the flit layout)."""
        cfg = self.cfg
        q = self.query
        m.d.comb += [q.src.eq(fl.src), q.dst.eq(fl.dst), q.hops.eq(fl.hops), q.inter.eq(fl.inter), q.phase.eq(fl.phase)]
        ent = Signal(self.entry, name="arrive")
        # every router has p local ports, so no router has endpoint dst_ep >= p: such a head is
        # dropped where it enters (were it routed on, a head without tail would hold the output
        # VCs of its path and take the next packet of its input VC along)
        bad = fl.head & ((fl.dst >= cfg.num_routers) | (fl.dst_ep >= cfg.p))
        stored = fl
        if cfg.escapes:
            stored = Signal(cfg.layout, name="arrive_flit")
            m.d.comb += [stored.eq(fl), stored.phase.eq(fl.phase & ~(fl.head & self.answer.escape))]
        m.d.comb += [getattr(ent.flit, n).eq(getattr(stored, n)) for n, _ in self.front_layout]
        m.d.comb += [ent.mask.eq(self.answer.mask), ent.eject.eq(fl.dst == self.router_id), ent.bad.eq(bad)]
        if cfg.prio_bits:
            m.d.comb += ent.prio.eq(self.answer.prio)
        body = Signal(self.body_bits, name="arrive_body")
        m.d.comb += body.eq(body_of(cfg.layout, stored, cfg.front_fields))
        return ent, body, stored

    def _drop(self, m, sent):
        """(drop, one-hot VC dropped): the lowest VC whose front is malformed (a head marked bad,
        or a flit at a VC that holds no output VC without being a head), in a cycle the port
        sends nothing."""
        V = self.cfg.V
        mal = Signal(V, name="malformed")
        m.d.comb += mal.eq(Cat(*[self.count_gt[v][0] & Mux(self.front[v].flit.head, self.front[v].bad,
                                                           ~self.alloc_valid[v]) for v in range(V)]))
        low = Signal(V, name="mal_low")
        m.d.comb += [low.eq(lowest_set_bit(mal, V)), self.drop.eq(~sent & mal.any())]
        return low

    def elaborate(self, platform):
        m = Module()
        cfg, prm, V = self.cfg, self.cfg.params, self.cfg.V
        valid, fl = delay_line(m, self.flit_in.valid, self.flit_in.payload, prm.link_latency - 1, "fin",
                               shape=cfg.layout)
        fl = data.View(cfg.layout, fl) if not isinstance(fl, data.View) else fl
        ent, body, stored = self._arrival(m, fl)
        m.submodules.buf = buf = VCBuffer(V, prm.depth, self.stored.size, self.body_bits, body_sync=bool(prm.st_stage),
                                          body_block_bits=cfg.body_block_bits, peek_width=int(prm.sa_stages == 3),
                                          count_flags=prm.sa_stages, registered_front=cfg.registered_fronts)
        m.d.comb += [buf.w_valid.eq(valid), buf.w_data.eq(entry_to_buffer(m, cfg, ent, "arrive_stored")), buf.w_body.eq(body)]
        if prm.sa_stages == 3:
            m.d.comb += buf.w_peek.eq(stored.tail)
        if V > 1:
            m.d.comb += [buf.w_vc.eq(fl.vc), buf.rd_vc.eq(self.read_vc)]
        for v in range(V):
            m.d.comb += [self.front[v].eq(entry_from_buffer(m, cfg, buf.front[v], f"front_entry{v}")),
                         self.count_gt[v].eq(buf.count_gt[v])]
            if prm.sa_stages == 3:
                m.d.comb += self.peek[v].eq(buf.peek[v])
        m.d.comb += [self.body.eq(buf.rd_body), self.overflow.eq(buf.overflow)]
        sent = Signal()
        m.d.comb += sent.eq(self.send.any())
        low = self._drop(m, sent)
        drop_v = one_hot_index(m, low, V) if V > 1 else Const(0, 1)
        # one-hot: the VC that sends, else the malformed front dropped (zero unless dropping)
        m.d.comb += [buf.pop.eq(self.send | (low & ~sent.replicate(V))),
                     self.credit_out.valid.eq(sent | self.drop),
                     self.credit_out.payload.eq(Mux(sent, self.read_vc, drop_v))]
        return m


__all__ = ["InputUnit", "buffer_layout", "entry_from_buffer", "entry_layout", "entry_to_buffer", "stored_layout",
           "stores_port"]
