"""fpga.counter_bank.CounterBank against plain saturating counters, cycle by cycle."""
import random

import pytest
from amaranth.sim import Simulator

from fpga.counter_bank import CounterBank


def _expected(events, clears, widths, t, i):
    """Source i's counts in the record the scan writes in cycle t: its events through cycle
    t - 2 (then registered, then added), counted from the last clear up to cycle t - 1 (a clear
    drops the events of its own cycle, as the saturating counters the bank replaces did; the
    record of the cycle after a clear is all zeros), each saturating at its width."""
    last = max((c for c in range(t) if clears[c]), default=-1)
    counts = [min(sum(events[c][i] >> j & 1 for c in range(last + 1, t - 1)), (1 << w) - 1)
              for j, w in enumerate(widths)]
    return counts


def _pack(counts, widths):
    value, lo = 0, 0
    for c, w in zip(counts, widths):
        value |= c << lo
        lo += w
    return value


@pytest.mark.parametrize("n,widths,density", [(2, (3, 5), 0.6), (5, (4, 6, 2), 0.5), (7, (32, 32, 16), 0.9)])
def test_records_equal_saturating_counters(n, widths, density):
    """Every record read equals the plain counters of its source (`_expected`), across clears,
    saturation and back-to-back reads, and is ready within n + 2 cycles of its request."""
    rng = random.Random(n)
    cycles = 600
    k = len(widths)
    events = [[sum((rng.random() < density) << j for j in range(k)) for _ in range(n)] for _ in range(cycles)]
    clears = [t in (3, 150, 151, 400) or (t > 450 and rng.random() < 0.02) for t in range(cycles)]
    dut = CounterBank(n, widths)
    reads = []

    async def bench(ctx):
        want, waited = None, 0
        for t in range(cycles):
            for i in range(n):
                ctx.set(dut.events[i], events[t][i])
            ctx.set(dut.clear, clears[t])
            ask = want is None and rng.random() < 0.5
            if ask:
                want, waited = rng.randrange(n), 0
            ctx.set(dut.request, ask)
            ctx.set(dut.index, want if ask else 0)
            await ctx.tick()
            if want is not None and not ask:
                waited += 1
                if ctx.get(dut.ready):
                    reads.append((t, want, ctx.get(dut.record)))
                    want = None
                else:
                    assert waited <= n + 2, f"source {want} not ready after {waited} cycles"

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert len(reads) > cycles // (2 * (n + 2))
    saturated = False
    for t, i, record in reads:
        # ready seen after the tick of cycle t: the record was latched as the scan wrote it in t
        want = _expected(events, clears, widths, t, i)
        assert record == _pack(want, widths), (t, i)
        saturated |= any(c == (1 << w) - 1 for c, w in zip(want, widths))
    assert saturated or widths[0] >= 16


def test_bad_arguments():
    for n, widths in ((1, (8,)), (True, (8,)), (4, ()), (4, (0,)), (4, (8, True))):
        with pytest.raises(ValueError):
            CounterBank(n, widths)
