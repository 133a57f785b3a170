"""8N1 UART transmitter and receiver for the FPGA prototypes' control/report link.

`divisor` is the number of clock cycles per bit (clock / baud rate, at least 2). Neither side has
a FIFO: the status block consumes one byte per cycle and the transmitter takes the next byte as
soon as the stop bit of the previous one has been sent.

  UARTTx(divisor):  data  In(stream.Signature(8))   bytes to send (ready while idle)
                    tx    Out(1)                    serial line, idle high
  UARTRx(divisor):  rx    In(1)                     serial line, idle high (2-flop synchronizer)
                    data  Out(stream.Signature(8))  received bytes (valid until ready; a byte
                                                    not taken before the next arrives is lost)
                    error Out(1)                    one-cycle strobe: a frame with a bad stop bit
                                                    (its byte is dropped; the receiver waits for
                                                    the line to return high, then resumes)

(The PyPI `amaranth-stdio` is a placeholder package without code, so these are written here.)
"""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from hdl.checks import quiet_on_error


def check_divisor(divisor) -> int:
    if not isinstance(divisor, int) or isinstance(divisor, bool) or divisor < 2:
        raise ValueError(f"divisor={divisor!r}: must be an integer >= 2 (clock cycles per UART bit)")
    return divisor


class UARTTx(wiring.Component):
    """8N1 transmitter: start bit 0, data LSB first, stop bit 1; `tx` is a register."""

    @quiet_on_error
    def __init__(self, divisor: int):
        self.divisor = check_divisor(divisor)
        super().__init__({"data": In(stream.Signature(8)), "tx": Out(1, init=1)})

    def elaborate(self, platform):
        m = Module()
        shreg = Signal(10, init=0x3FF)           # bits still to send, LSB first (1 = idle level)
        left = Signal(range(11))                 # bits still to send
        timer = Signal(range(self.divisor))
        m.d.comb += [self.data.ready.eq(left == 0), self.tx.eq(shreg[0])]
        with m.If(left == 0):
            with m.If(self.data.valid):
                m.d.sync += [shreg.eq(Cat(0, self.data.payload, 1)), left.eq(10), timer.eq(self.divisor - 1)]
        with m.Elif(timer == 0):
            m.d.sync += [shreg.eq(Cat(shreg[1:], 1)), left.eq(left - 1), timer.eq(self.divisor - 1)]
        with m.Else():
            m.d.sync += timer.eq(timer - 1)
        return m


class UARTRx(wiring.Component):
    """8N1 receiver: 2-flop synchronizer (amaranth.lib.cdc.FFSynchronizer), start bit detected
    on the falling edge and checked at mid-bit, data and stop bits sampled at mid-bit."""

    @quiet_on_error
    def __init__(self, divisor: int):
        self.divisor = check_divisor(divisor)
        super().__init__({"rx": In(1, init=1), "data": Out(stream.Signature(8)), "error": Out(1)})

    def elaborate(self, platform):
        m = Module()
        d = self.divisor
        s2 = Signal(init=1)                      # rx after two flip-flops, reset to the idle level
        m.submodules.sync_rx = FFSynchronizer(self.rx, s2, init=1, reset_less=False, stages=2)
        timer = Signal(range(d))
        bits = Signal(range(10))                 # data bits still to sample
        shreg = Signal(8)
        with m.If(self.data.ready):
            m.d.sync += self.data.valid.eq(0)
        m.d.sync += self.error.eq(0)
        with m.FSM():
            with m.State("IDLE"):
                with m.If(~s2):
                    m.d.sync += timer.eq(d // 2 - 1 if d >= 2 else 0)
                    m.next = "START"
            with m.State("START"):
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Elif(s2):                 # glitch, not a start bit
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += [timer.eq(d - 1), bits.eq(8)]
                    m.next = "DATA"
            with m.State("DATA"):
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Else():
                    m.d.sync += [shreg.eq(Cat(shreg[1:], s2)), bits.eq(bits - 1), timer.eq(d - 1)]
                    with m.If(bits == 1):
                        m.next = "STOP"
            with m.State("STOP"):
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Elif(s2):
                    m.d.sync += [self.data.payload.eq(shreg), self.data.valid.eq(1)]
                    m.next = "IDLE"
                with m.Else():                   # framing error: drop, wait for the idle level
                    m.d.sync += self.error.eq(1)
                    m.next = "BREAK"
            with m.State("BREAK"):
                with m.If(s2):
                    m.next = "IDLE"
        return m


__all__ = ["UARTTx", "UARTRx", "check_divisor"]
