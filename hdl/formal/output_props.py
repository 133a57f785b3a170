"""k-induction harness of the output unit (`hdl.router.output_unit.OutputUnit`).

Per network output VC (o, w), the harness models what lies beyond the counter: the link (its
`link_latency` registers of (valid, VC)), the downstream VC buffer (an occupancy counter that
a flit arriving fills and a free drain empties, each drain sending a credit back on
`credit_in[o]`) and reads the credits still inside the unit's credit delay line (its registers
`cin{o}_v{k}`/`cin{o}_d{k}` and the decoded `cin{o}_oh`, from the netlist: `internals.open_up`).

Assumed (what the router guarantees, proved of the allocators in alloc_props.py): a flit leaves on
(o, w) only when the counter's flag `credits > 0` is set and a packet holds (o, w); a VC
allocator grant (`taken`) only for a free output VC; the downstream buffer drains only flits it
holds. Asserted, per output VC:
  * credits + flits on the link + downstream occupancy + credits on their way back == B
    (so the counter stays in 0..B and the downstream buffer never overflows);
  * every flag `credit_gt[o][w][j]` == (credits > j) and `occupancy` == B - credits;
  * ownership (every port): busy rises exactly in the cycle after a grant and falls exactly in
    the cycle after a tail left on that VC (released exactly at a tail), never otherwise.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Cat, Module, Signal

from ..router.output_unit import OutputUnit
from .internals import open_up, signal


def thermometer_code(flags: list) -> list:
    """Asserts that an output unit's credit flags kept alone (`thermometer`) are a thermometer
    code, flag j + 1 only with flag j: what their sum counts (induction needs it stated)."""
    return [Assert(~flags[j + 1] | flags[j]) for j in range(len(flags) - 1)]


def output_harness(R: int = 4, P: int = 5, V: int = 3, B: int = 4, credit_delay: int = 1, flags: int = 1,
                   link_delay: int = 1, unit_cls=OutputUnit, dishonest: bool = False, thermometer: bool = False):
    """credit_delay, link_delay: the router's credit_latency and link_latency (as `RouterParams`);
    flags: the counter flags kept (the router keeps sa_stages); thermometer: the unit keeps the
    credits as flags alone. dishonest=True: the downstream may return a credit for a flit it
    never got (the check must fail)."""
    credit_latency, link_latency = credit_delay, link_delay
    m = Module()
    dut = unit_cls(R, P, V, B, credit_latency, flags, thermometer=thermometer)
    inner, sig = open_up(dut)
    m.submodules.dut = inner
    free = []
    wide = (4 * B + 8).bit_length()
    for o in range(P):
        sv, sw, st = Signal(name=f"send_v{o}"), Signal(range(V), name=f"send_w{o}"), Signal(name=f"send_tail{o}")
        tk = Signal(V, name=f"take{o}")
        free += [sv, sw, st, tk]
        m.d.comb += Assume(sw < V)
        send = [sv & (sw == w) for w in range(V)]
        busy = dut.busy[o]
        m.d.comb += [dut.taken[o].eq(tk), dut.released[o].eq(Cat(*[send[w] & st for w in range(V)]))]
        for w in range(V):
            m.d.comb += Assume(~tk[w] | (~busy[w] & ~send[w]))      # a grant only for a free VC
            m.d.comb += Assume(~send[w] | busy[w])                  # a flit leaves only on a held VC
            prev_busy, prev_take, prev_rel = (Signal(name=f"prev_{n}_{o}_{w}") for n in ("busy", "take", "rel"))
            m.d.sync += [prev_busy.eq(busy[w]), prev_take.eq(tk[w]), prev_rel.eq(send[w] & st)]
            started = Signal(name=f"started_{o}_{w}")            # one cycle after reset: prev_* are real
            m.d.sync += started.eq(1)
            with m.If(started):
                m.d.comb += [Assert((busy[w] & ~prev_busy) == prev_take),
                             Assert((prev_busy & ~busy[w]) == prev_rel)]
        if o >= R:
            continue
        m.d.comb += dut.sent[o].eq(Cat(*send))
        dv, dw = Signal(name=f"drain_v{o}"), Signal(range(V), name=f"drain_w{o}")
        free += [dv, dw]
        m.d.comb += [Assume(dw < V), dut.credit_in[o].valid.eq(dv), dut.credit_in[o].payload.eq(dw)]
        # the link: link_latency registers from the send to the downstream buffer
        lv, lw = sv, sw
        link = []
        for k in range(link_latency):
            nv, nw = Signal(name=f"link_v{o}_{k}"), Signal(range(V), name=f"link_w{o}_{k}")
            m.d.sync += [nv.eq(lv), nw.eq(lw)]
            link.append((nv, nw))
            lv, lw = nv, nw
        # the credit delay line inside the unit
        pend = []
        if credit_latency >= 2:
            pend = [(signal(sig, f"cin{o}_v{k}"), signal(sig, f"cin{o}_d{k}")) for k in range(credit_latency - 2)]
            oh = signal(sig, f"cin{o}_oh")
        for w in range(V):
            occ = Signal(range(B + 2), name=f"down_occ{o}_{w}")
            arrive, drain = lv & (lw == w), dv & (dw == w)
            if not dishonest:
                m.d.comb += Assume(~drain | (occ > 0))
            m.d.sync += occ.eq(occ + arrive - drain)
            on_link = sum((v_ & (w_ == w)).as_unsigned() for v_, w_ in link) if link else 0
            back = sum((v_ & (d_ == w)).as_unsigned() for v_, d_ in pend) if pend else 0
            if credit_latency >= 2:
                back = back + oh[w]
            cnt = dut.credits[o][w]
            if thermometer:
                m.d.comb += thermometer_code(dut.credit_flags[o][w])
            total = Signal(wide, name=f"total{o}_{w}")
            m.d.comb += total.eq(cnt + occ + on_link + back)
            m.d.comb += [Assert(total == B), Assert(cnt <= B), Assert(dut.occupancy[o][w] == B - cnt)]
            m.d.comb += [Assert(dut.credit_gt[o][w][j] == (cnt > j)) for j in range(flags)]
            with m.If(send[w]):
                m.d.comb += Assume(dut.credit_gt[o][w][0])       # the switch allocator's credit check
        if credit_latency >= 2:
            # the decoded register is one-hot (or empty): a credit of one VC per cycle
            m.d.comb += Assert((oh & (oh - 1)) == 0)
    return m, free


__all__ = ["output_harness", "thermometer_code"]
