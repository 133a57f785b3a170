"""The output unit of the router: what it knows of each output VC.

Per network output VC, the credits the downstream buffer has left (a counter from B, with the
registered flags `credits > j` the switch allocator reads, `hdl.counter_flags`; or, where nothing
reads the count itself, the flags `credits > j` for every j < B alone, a thermometer code), fed
by the returning credits after the credit latency; per output VC of every port, whether a packet holds
it (`busy`: set by the VC allocator's grant, cleared when its tail leaves).
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from contract.flit import index_bits

from ..counter_flags import above_flags, flags_for, step_flags
from ..delay import delay_line
from ..delay import register as _reg


def credit_signature(vcs: int) -> stream.Signature:
    return stream.Signature(index_bits(vcs), always_ready=True)


def credit_counters(R: int, V: int, B: int) -> list:
    """The credit counter of each network output VC, at B (the downstream buffer empty)."""
    return [[Signal(range(B + 1), init=B, name=f"credits_{o}_{w}") for w in range(V)] for o in range(R)]


class OutputUnit(wiring.Component):
    """Parameters: R network ports and P ports in all, V VCs, B buffer depth, credit_latency,
    flags (k: the flags `credits > 0 .. k-1` kept per network output VC), thermometer (the
    flags `credits > 0 .. B-1` are the whole state and `credits` their sum: for a router whose
    VC allocator reads no occupancy, one VC per class and one port per route; on the ECP5 20
    LUT sites fewer in net26's router than a counter beside k flags).

    Attributes:
      credit_in[o]      In   valid + vc: a credit of output VC (o, vc) returned (network ports)
      returned[o]       Out  the credits applied this cycle, one-hot over VCs (credit_latency - 1
                             registers after credit_in; the last one after the one-hot decode)
      sent[o]           In   one-hot over VCs: a flit left on (o, w) this cycle (network ports)
      taken[o]          In   one-hot over VCs: the VC allocator gave (o, w) to a packet
      released[o]       In   one-hot over VCs: a tail left on (o, w)
      busy[o]           Out  bit w: a packet holds (o, w)
      credit_gt[o][w]   Out  bit j: credits of (o, w) > j
      occupancy[o][w]   Out  B - credits of (o, w)
    `credits[o][w]`: the counters themselves (`credit_counters`; given, so that a formal harness
    can read them before the unit is built); `credit_flags[o][w]`: their flag registers.
    """

    def __init__(self, R: int, P: int, V: int, B: int, credit_latency: int, flags: int, credits=None,
                 thermometer: bool = False):
        self.R, self.P, self.V, self.B = R, P, V, B
        self.credit_latency, self.flags, self.thermometer = credit_latency, flags, bool(thermometer)
        self.credits = credits if credits is not None else credit_counters(R, V, B)
        self.credit_flags = [[flags_for(self.credits[o][w], B if self.thermometer else flags, f"credits_{o}_{w}")
                              for w in range(V)] for o in range(R)]
        super().__init__({
            "credit_in": In(credit_signature(V)).array(R),
            "returned": Out(V).array(R),
            "sent": In(V).array(R),
            "taken": In(V).array(P),
            "released": In(V).array(P),
            "busy": Out(V).array(P),
            "credit_gt": Out(flags).array(R, V),
            "occupancy": Out(range(B + 1)).array(R, V),
        })

    def _returned(self, m, o):
        """The credit of credit_in[o] as a one-hot of its VC, credit_latency - 1 registers later,
        decoded before the last register when there is one: the counters (and the held copies of
        their flags, three-stage SA) read a flip-flop per output VC instead of a decoder of a
        register across the chip (that router's longest path on the ECP5)."""
        V = self.V
        cv, cvc = self.credit_in[o].valid, self.credit_in[o].payload
        if self.credit_latency >= 2:
            cv, cvc = delay_line(m, cv, cvc, self.credit_latency - 2, f"cin{o}")
            return _reg(m, Cat(*[cv & (cvc == w) for w in range(V)]), f"cin{o}_oh")
        return Cat(*[cv & (cvc == w) for w in range(V)])

    def elaborate(self, platform):
        m = Module()
        R, V, B = self.R, self.V, self.B
        for o in range(R):
            m.d.comb += self.returned[o].eq(self._returned(m, o))
            for w in range(V):
                cnt, flags = self.credits[o][w], self.credit_flags[o][w]
                inc, dec = self.returned[o][w], self.sent[o][w]
                if self.thermometer:
                    step_flags(m, inc, dec, flags, Const(0, 1))          # never more than B
                    m.d.comb += cnt.eq(sum(flags))
                else:
                    with m.If(dec & ~inc):
                        m.d.sync += cnt.eq(cnt - 1)
                    with m.Elif(inc & ~dec):
                        m.d.sync += cnt.eq(cnt + 1)
                    above_flags(m, cnt, inc, dec, flags)
                gt = (flags + [Const(0, 1)] * self.flags)[:self.flags]     # credits > j >= B: never
                m.d.comb += [self.credit_gt[o][w].eq(Cat(*gt) if gt else Const(0, 0)),
                             self.occupancy[o][w].eq(B - cnt)]
        for o in range(self.P):
            busy = [Signal(name=f"busy_{o}_{w}") for w in range(V)]
            for w in range(V):
                with m.If(self.taken[o][w]):
                    m.d.sync += busy[w].eq(1)
                with m.Elif(self.released[o][w]):
                    m.d.sync += busy[w].eq(0)
            m.d.comb += self.busy[o].eq(Cat(*busy))
        return m


__all__ = ["OutputUnit", "credit_counters", "credit_signature"]
