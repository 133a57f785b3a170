"""Delay lines: a (valid, payload) pair passed through N flip-flop stages.

The one helper behind every registered hop of a stream: the link and credit latencies of a router's
inputs (hdl/router.py), the link registers of a network netlist (hdl/network.py) and the register
where a router's flit output meets a traffic top's checker (fpga/tops.py); and `count_down`, the
cycles until a launched request's answer is back (the allocator variants of
benchmarks/bench_va_ceiling.py); `register`, one stage of anything, and `KEEP`, the attribute of a
register that must stay a copy of its own.
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal, Value


def delay_line(m: Module, valid, payload, stages: int, name: str, shape=None):
    """(valid, payload) `stages` cycles later (unchanged for 0). shape: of the payload registers
    (e.g. a flit layout, so the result is a View); default the payload's width. Registers are
    named {name}_v{k} / {name}_d{k}.

    Only the valid registers are reset: a payload is read only beside its valid, and reset-less
    data registers keep the reset net (an FPGA fabric net to every reset flip-flop) off the
    network's widest registers."""
    if shape is None:
        shape = len(Value.cast(payload))
    for k in range(stages):
        v2 = Signal(name=f"{name}_v{k}")
        d2 = Signal(shape, name=f"{name}_d{k}", reset_less=True)
        m.d.sync += [v2.eq(valid), d2.eq(payload)]
        valid, payload = v2, d2
    return valid, payload


# Yosys, after reading Amaranth's RTLIL: the flip-flops of a signal marked `KEEP` stay its own.
# Synthesis otherwise merges registers of equal inputs into one (opt_merge), and the copy made so
# that each reader has a register nearby (a short net) becomes one net to every reader again.
KEEP = {"keep": 1}
KEPT_REGISTERS = r"a:keep %ci1:+$dff[Q] c:* %i"           # a Yosys selection: the cells to keep
KEEP_REGISTERS_YOSYS = f"setattr -set keep 1 {KEPT_REGISTERS}"


def register(m: Module, value, name: str, reset_less: bool = False):
    """`value` a cycle later, in a register shaped like it (reset to its init)."""
    r = Signal.like(value, name=name, reset_less=reset_less)
    m.d.sync += r.eq(value)
    return r


def count_down(m: Module, counter, launch, trip: int, idle=None):
    """`counter` := trip on `launch`, else one less until 0: the cycles until a launched request's
    answer (a grant or none) is back; its requester may not launch again before. `idle`, if
    given (a 1-bit signal with init 1), becomes a register equal to `counter == 0`, kept beside
    the counter so that the launch logic reads a flip-flop instead of comparing the counter."""
    if trip < 1:
        raise ValueError(f"trip={trip!r}: must be >= 1")
    with m.If(launch):
        m.d.sync += counter.eq(trip)
    with m.Elif(counter != 0):
        m.d.sync += counter.eq(counter - 1)
    if idle is not None:
        m.d.sync += idle.eq(~launch & (counter <= 1))


__all__ = ["KEEP", "KEEP_REGISTERS_YOSYS", "KEPT_REGISTERS", "count_down", "delay_line", "register"]
