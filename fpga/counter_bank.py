"""Event counters of many sources with their totals in one LUTRAM and one adder for them all.

A traffic top counts, per generator / checker pair, the packets sent, the packets received and
the flits in error, and reports them over the UART. Held as saturating counters beside every
generator and checker, they were 80 flip-flops, 40 carry cells and their compares per pair, and
the report read them through an E-way multiplexer across the chip. Here each source keeps only
a small *pending* count per counter, and a scanner visits one source per cycle (0, 1, ..., n-1,
0, ...): it takes the source's pending counts (which restart from that cycle's events) and adds
them, saturating, to the source's totals in a memory (distributed RAM on the ECP5 and iCE40).
A source is visited every n cycles, so its pending counts never exceed n.

The scan is two stages: in cycle t the pending counts of source s are registered (and the next
source's address taken), in t + 1 the memory is read at s, added to and written back. Two
consecutive cycles never visit the same source (n >= 2), so the write of t + 1 needs no bypass.

Reading. A reader asks for source `index` with a one-cycle `request`; when the scan next writes
that source, the written record is latched in `record` and `ready` rises (and stays until the
next request). So a record reads the source's events up to at most n + 2 cycles before `ready`,
and every counter of one record is from the same cycle.

Clearing. `clear` discards every pending count (the events of its own cycle too, as the
saturating counters it replaces did) and makes the next n writes fresh: each source's first write
after a clear is its pending counts alone, not added to the old totals. A record read after a
clear is therefore counted from the clear. Reset clears the same way, so the memory needs no
reset of its own.
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hdl.checks import quiet_on_error


def _plus_bit(value, bit):
    """value + bit (one bit) as a ripple of XORs and ANDs: LUTs that take the restart's
    multiplexer too, where an adder is a carry chain with the multiplexer in LUTs after it (the
    pending counts are most of the bank)."""
    out, carry = [], bit
    for k in range(len(value)):
        out.append(value[k] ^ carry)
        carry = carry & value[k]
    return Cat(*out)


class CounterBank(wiring.Component):
    """Parameters:
      n       sources (at least 2)
      widths  the width of each of a source's counters; the record is their concatenation,
              counter 0 in the least significant bits

    Attributes:
      events[i]  In(k)   bit j: source i's counter j counts one in this cycle (k = len(widths))
      clear      In(1)   every counter restarts from 0
      index      In      the source a `request` asks for
      request    In(1)   strobe: latch source `index`'s record when the scan next writes it
      record     Out     the latched record (sum of widths bits)
      ready      Out(1)  `record` holds the source asked for since the last request
    """

    @quiet_on_error
    def __init__(self, n: int, widths):
        if not isinstance(n, int) or isinstance(n, bool) or n < 2:
            raise ValueError(f"n={n!r}: a counter bank scans at least 2 sources")
        widths = tuple(widths)
        if not widths or not all(isinstance(w, int) and not isinstance(w, bool) and w >= 1 for w in widths):
            raise ValueError(f"widths={widths!r}: must be positive integers")
        self.n, self.widths = n, widths
        self.pending_shape = range(n + 1)
        super().__init__({"events": In(len(widths)).array(n), "clear": In(1), "index": In(range(n)),
                          "request": In(1), "record": Out(sum(widths)), "ready": Out(1)})

    def _pending(self, m, scan):
        """Per source and counter the events since its last visit: the visited source's restart
        from this cycle's events, a clear drops them all. Returns the visited source's counts,
        registered (the first scan stage)."""
        n, k = self.n, len(self.widths)
        taken = [Signal(self.pending_shape, name=f"taken{j}") for j in range(k)]
        rows = []
        for i in range(n):
            row = [Signal(self.pending_shape, name=f"pending{i}_{j}") for j in range(k)]
            here = scan == i
            for j, p in enumerate(row):
                ev = self.events[i][j]
                with m.If(self.clear):
                    m.d.sync += p.eq(0)
                with m.Elif(here):
                    m.d.sync += p.eq(ev)
                with m.Else():
                    m.d.sync += p.eq(_plus_bit(p, ev))
            rows.append(Cat(*row))
        with m.If(self.clear):
            m.d.sync += Cat(*taken).eq(0)
        with m.Else():
            m.d.sync += Cat(*taken).eq(Array(rows)[scan])
        return taken

    def elaborate(self, platform):
        m = Module()
        n, widths = self.n, self.widths
        scan = Signal(range(n))                     # the source whose pending counts stage 1 takes
        at = Signal(range(n), init=n - 1)           # the source stage 2 adds into (scan of last cycle)
        # writes left that ignore the old totals: n after a clear or reset, so every source's
        # first write starts from 0 (the register's init does it at reset)
        fresh = Signal(range(n + 1), init=n)
        m.d.sync += [scan.eq(Mux(scan == n - 1, 0, scan + 1)), at.eq(scan)]
        taken = self._pending(m, scan)
        with m.If(self.clear):
            m.d.sync += fresh.eq(n)
        with m.Elif(fresh != 0):
            m.d.sync += fresh.eq(fresh - 1)

        m.submodules.totals = mem = Memory(shape=sum(widths), depth=n, init=[])
        rd = mem.read_port(domain="comb")
        wr = mem.write_port()
        m.d.comb += [rd.addr.eq(at), wr.addr.eq(at), wr.en.eq(1)]
        new, lo = [], 0
        for j, w in enumerate(widths):
            old = Mux(fresh != 0, 0, rd.data[lo:lo + w])
            total = Signal(range((1 << w) + n), name=f"sum{j}")
            m.d.comb += total.eq(old + taken[j])
            new.append(Mux(total >> w != 0, (1 << w) - 1, total[:w]))     # saturate
            lo += w
        m.d.comb += wr.data.eq(Cat(*new))

        want, asked = Signal(range(n)), Signal()
        with m.If(self.request):
            m.d.sync += [want.eq(self.index), asked.eq(1), self.ready.eq(0)]
        with m.Elif(asked & (at == want)):
            m.d.sync += [self.record.eq(wr.data), self.ready.eq(1), asked.eq(0)]
        return m


__all__ = ["CounterBank"]
