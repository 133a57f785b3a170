"""The control and report block of the FPGA traffic tops: UART commands in, report frames out.

Protocol (8N1 UART, clock / divisor baud). Commands are one letter, some followed by argument
bytes; other bytes are ignored. The block answers only 'R'.

  'S'            start: generators create packets every enabled (running) cycle
  'P'            pause: no new packets (queued and half-sent packets still drain)
  'L' b          load: a packet is created with probability b/256 per enabled cycle per generator
  'T' b          pattern: 0 uniform over the other endpoints, 1 shift (dst = (e + shift) mod E);
                 other values are ignored
  'H' b          shift (reduced mod E by the block; 0 makes every endpoint idle under 'T' 1)
  'N' hi lo      budget: at most hi·256+lo packets per generator from now on, or from the next 'C'
                 (0 = no limit)
  'B' b          back-pressure: RouterTrafficTop's network sinks hold a credit back with
                 probability b/256 per cycle (ignored by NetworkTrafficTop)
  'C'            clear: packets sent / received, errors, overflow, budget use and the enabled-
                 cycle count restart from 0 (the network's dropped count is not cleared)
  'X' e          corrupt: flip payload bit 0 of the next flit generator e sends (e >= E ignored)
  'R'            report: send one frame (ignored while a frame is being sent)

Settings change nothing already queued: pattern and shift apply when a packet starts sending,
so change them while paused with the network drained. The generators read every setting a
cycle after it is set (whether the budget is 0 and whether the pattern maps every endpoint onto
itself, two cycles after). At reset: paused, load 0, pattern 0, shift 0, budget 0, back-pressure 0.

Report frame, all fields big-endian:

  0xA5 0x5A | E (16) | dropped (32) | enabled cycles (32) | E x [sent (32) received (32)
  errors (16)] | checksum (8) = sum of all preceding bytes (magic included) mod 256

E is the number of generator/checker pairs: the endpoints of NetworkTrafficTop, the P ports of
RouterTrafficTop (entry i = port i: sent by the generator on input port i, received / errors
at output port i). sent = packets whose tail a generator sent, received = tails its checker
saw, errors = flits failing a check, dropped = the routers' malformed-flit count since reset,
enabled cycles = cycles spent started since the last 'C'. Counters saturate (0xFFFFFFFF,
0xFFFF). The header is latched when the frame starts. The entries' counters are a
`fpga.counter_bank.CounterBank`: each entry's record is asked for when the one before it starts
sending (the first with the header) and is latched whole within E + 2 cycles, so its three
counters are from one cycle; it counts events up to then (a report taken while paused and
drained is exact). Frame length 13 + 10·E bytes.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .counter_bank import CounterBank
from .traffic import CONTROL_INIT, control_layout, derived_controls

MAGIC = (0xA5, 0x5A)
COMMANDS = {"start": b"S", "pause": b"P", "load": b"L", "pattern": b"T", "shift": b"H", "budget": b"N",
            "stall": b"B", "clear": b"C", "corrupt": b"X", "report": b"R"}
ARG_BYTES = {b"L": 1, b"T": 1, b"H": 1, b"N": 2, b"B": 1, b"X": 1}


class StatusBlock(wiring.Component):
    """Command parser, settings registers, counters and report serializer.

    rx      In   bytes from the UART receiver (always ready)
    tx      Out  report bytes to the UART transmitter
    events[i] In  entry i's counted events in this cycle: bit 0 a flit in error, bit 1 a packet
                  received, bit 2 a packet sent (a tail); counted in `counters` (CounterBank)
    dropped  In   the routers' drop count, reported as it is
    ctl     Out  control_layout(E) for every generator (running, load, pattern, shift, budget;
                 strobes: clear on 'C', restart of the budget's count on 'C' and 'N'; and
                 `derived_controls`, a cycle after the settings)
    stall   Out  back-pressure probability (/256)
    corrupt Out  strobe; corrupt_index Out: the generator it is for
    cycles  Out  enabled cycles since the last clear (32 bits, saturating)
    reporting Out  a frame is being sent
    """

    def __init__(self, E: int):
        if not isinstance(E, int) or isinstance(E, bool) or not 2 <= E < 1 << 16:
            raise ValueError(f"E={E!r}: must be an integer in 2..65535")
        self.E = E
        # an entry's record, least significant first: errors, received, sent (the frame sends
        # the most significant byte first)
        self.counters = CounterBank(E, (16, 32, 32))
        super().__init__({
            "rx": In(stream.Signature(8)), "tx": Out(stream.Signature(8)),
            "events": In(3).array(E), "dropped": In(32),
            "ctl": Out(control_layout(E), init=CONTROL_INIT), "stall": Out(8), "corrupt": Out(1), "corrupt_index": Out(16),
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
        # 'R' starts the report a cycle after its byte: from a register, not from the byte's
        # decoding, which reached the counter bank's record register across the chip
        m.d.sync += [ctl.clear.eq(0), ctl.restart.eq(0), self.corrupt.eq(0), start_report.eq(0)]
        b = self.rx.payload
        with m.If(self.rx.valid):
            with m.If(need == 0):
                with m.Switch(b):
                    with m.Case(ord("S")):
                        m.d.sync += ctl.running.eq(1)
                    with m.Case(ord("P")):
                        m.d.sync += ctl.running.eq(0)
                    with m.Case(ord("C")):
                        m.d.sync += [ctl.clear.eq(1), ctl.restart.eq(1)]
                    with m.Case(ord("R")):
                        m.d.sync += start_report.eq(1)
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
                            m.d.sync += [ctl.budget.eq(Cat(b, hi)), ctl.restart.eq(1)]
                        with m.Case(ord("B")):
                            m.d.sync += self.stall.eq(b)
                        with m.Case(ord("X")):
                            with m.If(b < E):
                                m.d.sync += [self.corrupt.eq(1), self.corrupt_index.eq(b)]
        # worked out here once for every generator, from the settings of the cycle before
        m.d.sync += [getattr(ctl, k).eq(v) for k, v in derived_controls(ctl.pattern, ctl.shift, ctl.budget).items()]
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
        bank = self.counters
        m.submodules.counters = bank
        m.d.comb += bank.clear.eq(ctl.clear)
        for i in range(E):
            m.d.comb += bank.events[i].eq(self.events[i])
        buf = Signal(96)                                # bytes to send, most significant first
        left = Signal(range(13))                        # bytes left in buf
        entry = Signal(range(E + 1))                    # the entry asked of the counters (E: none left)
        total = Signal(8)                               # checksum so far
        phase = Signal(2)                               # 0 idle, 1 bytes of buf, 2 checksum, 3 waiting
        m.d.comb += [self.reporting.eq(phase != 0), self.tx.valid.eq(phase[0] ^ phase[1]),
                     self.tx.payload.eq(buf[88:96]), bank.index.eq(entry)]
        with m.If(phase == 2):
            m.d.comb += self.tx.payload.eq(total)
        with m.If(phase == 0):
            with m.If(start_report):
                m.d.comb += [bank.index.eq(0), bank.request.eq(1)]
                m.d.sync += [buf.eq(Cat(self.cycles, self.dropped, Const(E, 16), Const(MAGIC[1], 8),
                                        Const(MAGIC[0], 8))),
                             left.eq(12), entry.eq(0), total.eq(0), phase.eq(1)]
        with m.Elif(phase == 3):                        # the next entry, once the counters have it
            with m.If(bank.ready):
                m.d.comb += [bank.index.eq(entry + 1), bank.request.eq(entry != E - 1)]
                m.d.sync += [buf.eq(Cat(Const(0, 16), bank.record)), left.eq(10), entry.eq(entry + 1),
                             phase.eq(1)]
        with m.Elif(self.tx.ready):
            with m.If(phase == 2):
                m.d.sync += phase.eq(0)
            with m.Else():
                m.d.sync += [total.eq(total + buf[88:96]), buf.eq(buf << 8), left.eq(left - 1)]
                with m.If(left == 1):
                    m.d.sync += phase.eq(Mux(entry == E, 2, 3))
        return m


__all__ = ["StatusBlock", "MAGIC", "COMMANDS", "ARG_BYTES"]
