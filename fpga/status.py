"""The control and report block of the FPGA traffic tops: UART commands in, report frames out.

Protocol (8N1 UART, clock / divisor baud). Commands are one letter, some followed by argument
bytes; other bytes are ignored. The block answers only 'R'.

  'S'            start: generators create packets every enabled (running) cycle
  'P'            pause: no new packets (queued and half-sent packets still drain)
  'L' b          load: a packet is created with probability b/256 per enabled cycle per generator
  'T' b          pattern: 0 uniform over the other endpoints, 1 shift (dst = (e + shift) mod E);
                 other values are ignored
  'H' b          shift (reduced mod E by the block; 0 makes every endpoint idle under 'T' 1)
  'N' hi lo      budget: at most hi·256+lo packets per generator since the last 'C' (0 = no limit)
  'B' b          back-pressure: RouterTrafficTop's network sinks hold a credit back with
                 probability b/256 per cycle (ignored by NetworkTrafficTop)
  'C'            clear: packets sent / received, errors, overflow, budget use and the enabled-
                 cycle count restart from 0 (the network's dropped count is not cleared)
  'X' e          corrupt: flip payload bit 0 of the next flit generator e sends (e >= E ignored)
  'R'            report: send one frame (ignored while a frame is being sent)

Settings change nothing already queued: pattern and shift apply when a packet starts sending
(the generators read them a cycle after they are set), so change them while paused with the
network drained. At reset: paused, load 0, pattern 0, shift 0, budget 0, back-pressure 0.

Report frame, all fields big-endian:

  0xA5 0x5A | E (16) | dropped (32) | enabled cycles (32) | E x [sent (32) received (32)
  errors (16)] | checksum (8) = sum of all preceding bytes (magic included) mod 256

E is the number of generator/checker pairs: the endpoints of NetworkTrafficTop, the P ports of
RouterTrafficTop (entry i = port i: sent by the generator on input port i, received / errors
at output port i). sent = packets whose tail a generator sent, received = tails its checker
saw, errors = flits failing a check, dropped = the routers' malformed-flit count since reset,
enabled cycles = cycles spent started since the last 'C'. Counters saturate (0xFFFFFFFF,
0xFFFF). The header is latched when the frame starts and each entry's 10 bytes when its first
byte is sent, so every value in a frame is consistent with itself. Frame length 13 + 10·E bytes.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hdl.arbiter import one_hot_select

from .traffic import control_layout

MAGIC = (0xA5, 0x5A)
COMMANDS = {"start": b"S", "pause": b"P", "load": b"L", "pattern": b"T", "shift": b"H", "budget": b"N",
            "stall": b"B", "clear": b"C", "corrupt": b"X", "report": b"R"}
ARG_BYTES = {b"L": 1, b"T": 1, b"H": 1, b"N": 2, b"B": 1, b"X": 1}


class StatusBlock(wiring.Component):
    """Command parser, settings registers, enabled-cycle counter and report serializer.

    rx      In   bytes from the UART receiver (always ready)
    tx      Out  report bytes to the UART transmitter
    sent[i], received[i], errors[i], dropped   In   the counters reported
    ctl     Out  control_layout(E) for every generator (running, load, pattern, shift, budget,
                 clear strobe)
    stall   Out  back-pressure probability (/256)
    corrupt Out  strobe; corrupt_index Out: the generator it is for
    cycles  Out  enabled cycles since the last clear (32 bits, saturating)
    reporting Out  a frame is being sent
    """

    def __init__(self, E: int):
        if not isinstance(E, int) or not 1 <= E < 1 << 16:
            raise ValueError(f"E={E!r}: must be an integer in 1..65535")
        self.E = E
        super().__init__({
            "rx": In(stream.Signature(8)), "tx": Out(stream.Signature(8)),
            "sent": In(32).array(E), "received": In(32).array(E), "errors": In(16).array(E), "dropped": In(32),
            "ctl": Out(control_layout(E)), "stall": Out(8), "corrupt": Out(1), "corrupt_index": Out(16),
            "cycles": Out(32), "reporting": Out(1)})

    def elaborate(self, platform):
        m = Module()
        E = self.E
        ctl = self.ctl
        # ---- commands -----------------------------------------------------------------------
        cmd = Signal(8)
        need = Signal(2)
        hi = Signal(8)
        shift_busy = Signal()
        start_report = Signal()
        m.d.comb += self.rx.ready.eq(1)
        m.d.sync += [ctl.clear.eq(0), self.corrupt.eq(0)]
        b = self.rx.payload
        with m.If(self.rx.valid):
            with m.If(need == 0):
                with m.Switch(b):
                    with m.Case(ord("S")):
                        m.d.sync += ctl.running.eq(1)
                    with m.Case(ord("P")):
                        m.d.sync += ctl.running.eq(0)
                    with m.Case(ord("C")):
                        m.d.sync += ctl.clear.eq(1)
                    with m.Case(ord("R")):
                        m.d.comb += start_report.eq(1)
                    for c, k in ARG_BYTES.items():
                        with m.Case(c[0]):
                            m.d.sync += [cmd.eq(b), need.eq(k)]
            with m.Else():
                m.d.sync += [need.eq(need - 1), hi.eq(b)]
                with m.If(need == 1):
                    with m.Switch(cmd):
                        with m.Case(ord("L")):
                            m.d.sync += ctl.load.eq(b)
                        with m.Case(ord("T")):
                            with m.If(b < 2):
                                m.d.sync += ctl.pattern.eq(b)
                        with m.Case(ord("H")):
                            m.d.sync += [ctl.shift.eq(b), shift_busy.eq(1)]
                        with m.Case(ord("N")):
                            m.d.sync += ctl.budget.eq(Cat(b, hi))
                        with m.Case(ord("B")):
                            m.d.sync += self.stall.eq(b)
                        with m.Case(ord("X")):
                            with m.If(b < E):
                                m.d.sync += [self.corrupt.eq(1), self.corrupt_index.eq(b)]
        with m.If(shift_busy):                          # shift mod E, one subtraction per cycle
            with m.If(ctl.shift >= E):
                m.d.sync += ctl.shift.eq(ctl.shift - E)
            with m.Else():
                m.d.sync += shift_busy.eq(0)
        with m.If(ctl.clear):
            m.d.sync += self.cycles.eq(0)
        with m.Elif(ctl.running & (self.cycles != 0xFFFFFFFF)):
            m.d.sync += self.cycles.eq(self.cycles + 1)

        # ---- report frame ---------------------------------------------------------------------
        buf = Signal(96)                                # bytes to send, most significant first
        left = Signal(range(13))                        # bytes left in buf
        entry = Signal(E + 1)                           # next entry to load, one-hot (bit E: none left)
        total = Signal(8)                               # checksum so far
        phase = Signal(2)                               # 0 idle, 1 header / entries, 2 checksum
        # the next entry's record, selected by an AND-OR over the one-hot `entry`: at E = 26 the
        # block takes a quarter fewer LUTs than with a multiplexer indexed by a binary entry number
        record = Signal(80)
        m.d.comb += record.eq(one_hot_select(entry, [Cat(self.errors[i], self.received[i], self.sent[i])
                                                     for i in range(E)]))
        m.d.comb += [self.reporting.eq(phase != 0), self.tx.valid.eq(phase != 0),
                     self.tx.payload.eq(buf[88:96])]
        with m.If(phase == 2):
            m.d.comb += self.tx.payload.eq(total)
        with m.If(phase == 0):
            with m.If(start_report):
                m.d.sync += [buf.eq(Cat(self.cycles, self.dropped, Const(E, 16), Const(MAGIC[1], 8),
                                        Const(MAGIC[0], 8))),
                             left.eq(12), entry.eq(1), total.eq(0), phase.eq(1)]
        with m.Elif(self.tx.ready):
            with m.If(phase == 2):
                m.d.sync += phase.eq(0)
            with m.Else():
                m.d.sync += [total.eq(total + buf[88:96]), buf.eq(buf << 8), left.eq(left - 1)]
                with m.If(left == 1):
                    with m.If(entry[E]):
                        m.d.sync += phase.eq(2)
                    with m.Else():
                        m.d.sync += [buf.eq(Cat(Const(0, 16), record)), left.eq(10), entry.eq(entry << 1)]
        return m


__all__ = ["StatusBlock", "MAGIC", "COMMANDS", "ARG_BYTES"]
