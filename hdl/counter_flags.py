"""Registered threshold flags of an up/down counter: `counter > j` for j < k, kept in flip-flops
beside the counter instead of compared after it.

The switch allocator's input stage reads "has a flit", "has a flit to spare" (and, with three SA
stages, two) of every input VC and the same of the credits of every output VC. Compared after the
counters, those tests are a logic level on the input stage's path, the longest of the three-stage
SA router on the ECP5 (docs/fpga_results_log.md); kept as flags they start at registers. The flags move with
the counter: on +1 flag j takes flag j - 1 (1 for j = 0), on -1 flag j + 1 (for the last one, the
compare `counter > k`, off the read path). The same values as the compares in every cycle, so
nothing in the contract changes.
"""
from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Signal, Value


def above(value, k: int):
    """`value > k` for a constant k. Over more than four bits, an AND / OR chain over value's
    bits from the lowest up (k's bit 1: the bit and the rest; 0: the bit or the rest), each bit
    read once, so about one LUT4 per three bits: Yosys maps such a compare to an ECP5 carry
    chain, two CCU2C per four bits, to which nextpnr adds a feed-in and a feed-out (a 16-bit
    counter's `> 2`: 18 TRELLIS_COMB against about 5). Up to four bits the compare itself, which
    Yosys makes one LUT."""
    value = Value.cast(value)
    if len(value) <= 4:
        return value > k
    if k < 0:
        return Const(1, 1)
    if k >= (1 << len(value)) - 1:
        return Const(0, 1)
    gt = Const(0, 1)                         # the bits below i, above k's bits below i
    for i in range(len(value)):
        gt = (value[i] & gt) if (k >> i) & 1 else (value[i] | gt)
    return gt


def flags_for(counter: Signal, k: int, name: str) -> list[Signal]:
    """The k flag registers of `counter` (f[j] = counter > j), at its init value; `above_flags`
    drives them (separate, so that logic built before the counter's update can read them)."""
    return [Signal(name=f"{name}_gt{j}", init=int(counter.init > j)) for j in range(k)]


def above_flags(m: Module, counter: Signal, up, down, flags: list[Signal]):
    """Drive `flags` (from `flags_for`) so that flags[j] = (counter > j) in every cycle, for a
    `counter` the caller steps by +1 when `up & ~down` and by -1 when `down & ~up`."""
    step_flags(m, up, down, flags, above(counter, len(flags)))


def shifted_flags(flags: list, beyond=None) -> tuple[list, list]:
    """The flags' values after a step, the rule in one place: (on +1, on -1). On +1 flag j takes
    flag j - 1 (1 for j = 0); on -1 flag j + 1, the last one `beyond` (the bit counter >
    len(flags); None where no caller reads the last flag's step down)."""
    raised = [flags[j - 1] if j else Const(1, 1) for j in range(len(flags))]
    return raised, [*flags[1:], beyond]


def step_flags(m: Module, up, down, flags: list[Signal], beyond):
    """The step of `above_flags` for flags of a counter held elsewhere: `shifted_flags` on +1
    (`up & ~down`) or -1 (`down & ~up`), else held (an If: synthesis makes the hold the flip-flops'
    clock enable, 77 LUT sites fewer on the target router than the same step as multiplexers)."""
    raised, lowered = shifted_flags(flags, beyond)
    with m.If(up & ~down):
        m.d.sync += [f.eq(x) for f, x in zip(flags, raised)]
    with m.Elif(down & ~up):
        m.d.sync += [f.eq(x) for f, x in zip(flags, lowered)]


def next_flag(up, down, flags: list, j: int, beyond=None):
    """The value flag j takes at the next edge under `step_flags`, for logic that must decide now
    from the flag the counter will have (the traffic generator's registered send decision,
    fpga/traffic.py). Flag 0 of two or more flags needs no `beyond`."""
    raised, lowered = shifted_flags(flags, beyond)
    if lowered[j] is None:
        raise ValueError(f"flag {j} of {len(flags)}: its step down needs `beyond`")
    return Mux(up & ~down, raised[j], Mux(down & ~up, lowered[j], flags[j]))


__all__ = ["above", "above_flags", "flags_for", "next_flag", "shifted_flags", "step_flags"]
