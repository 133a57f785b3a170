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

from amaranth.hdl import Module, Mux, Signal


def flags_for(counter: Signal, k: int, name: str) -> list[Signal]:
    """The k flag registers of `counter` (f[j] = counter > j), at its init value; `above_flags`
    drives them (separate, so that logic built before the counter's update can read them)."""
    return [Signal(name=f"{name}_gt{j}", init=int(counter.init > j)) for j in range(k)]


def above_flags(m: Module, counter: Signal, up, down, flags: list[Signal]):
    """Drive `flags` (from `flags_for`) so that flags[j] = (counter > j) in every cycle, for a
    `counter` the caller steps by +1 when `up & ~down` and by -1 when `down & ~up`."""
    step_flags(m, up, down, flags, counter > len(flags))


def step_flags(m: Module, up, down, flags: list[Signal], beyond):
    """The step of `above_flags` for flags of a counter held elsewhere: on +1 flag j takes flag
    j - 1 (1 for j = 0), on -1 flag j + 1, the last one `beyond` (the bit counter > len(flags))."""
    k = len(flags)
    with m.If(up & ~down):
        m.d.sync += [flags[j].eq(flags[j - 1] if j else 1) for j in range(k)]
    with m.Elif(down & ~up):
        m.d.sync += [flags[j].eq(flags[j + 1] if j + 1 < k else beyond) for j in range(k)]


def next_first_flag(up, down, flags):
    """The value flag 0 (counter > 0) takes at the next edge under `step_flags` (at least two
    flags): for logic that must decide now from the flag the counter will have (the traffic
    generator's registered send decision, fpga/traffic.py)."""
    return Mux(up & ~down, 1, Mux(down & ~up, flags[1], flags[0]))


__all__ = ["above_flags", "flags_for", "next_first_flag", "step_flags"]
