"""hdl.counter_flags: the registered flags of an up/down counter equal the compares they replace,
and `next_flag` is the value the step registers."""
import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from hdl.counter_flags import above, above_flags, flags_for, next_flag


@pytest.mark.parametrize("k,top,init", [(2, 3, 0), (3, 8, 0), (2, 5, 4), (4, 4, 2)])
def test_flags_follow_the_counter(k, top, init):
    """A counter stepped at random between 0 and `top` (both ways at once: no step): every cycle
    flag j is (counter > j), and `next_flag(..., 0)` is flag 0 of the next cycle."""
    m = Module()
    counter = Signal(range(top + 1), init=init)
    up, down = Signal(), Signal()
    flags = flags_for(counter, k, "c")
    above_flags(m, counter, up, down, flags)
    nxt = Signal()
    m.d.comb += nxt.eq(next_flag(up, down, flags, 0))
    with m.If(up & ~down):
        m.d.sync += counter.eq(counter + 1)
    with m.Elif(down & ~up):
        m.d.sync += counter.eq(counter - 1)
    rng = random.Random(k * 100 + top)
    seen = set()

    async def tb(ctx):
        want_next = None
        for _ in range(600):
            c = ctx.get(counter)
            assert [ctx.get(f) for f in flags] == [int(c > j) for j in range(k)], c
            if want_next is not None:
                assert ctx.get(flags[0]) == want_next
            u, d = int(c < top and rng.random() < 0.5), int(c > 0 and rng.random() < 0.5)
            ctx.set(up, u)
            ctx.set(down, d)
            want_next = ctx.get(nxt)
            seen.add((c, u, d))
            await ctx.tick()

    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()
    # every step was taken from every count it can be taken from
    assert {(c, 1, 0) for c in range(top)} | {(c, 0, 1) for c in range(1, top + 1)} <= seen


def test_last_flag_needs_the_bit_beyond():
    """Stepping down, the last flag takes the compare beyond the flags: without it next_flag refuses."""
    flags = [Signal(name=f"f{j}") for j in range(2)]
    with pytest.raises(ValueError, match="beyond"):
        next_flag(Signal(), Signal(), flags, 1)
    next_flag(Signal(), Signal(), flags, 1, beyond=Signal())


@pytest.mark.parametrize("width", [3, 5, 7])
def test_above_is_the_compare(width):
    """`above(x, k)` equals x > k for every x and every k from below 0 to past the largest x
    (over four bits the AND / OR chain, up to four the compare)."""
    x = Signal(width)
    ks = list(range(-1, (1 << width) + 1))
    m = Module()
    outs = []
    for k in ks:
        o = Signal(name=f"gt{k + 1}")
        m.d.comb += o.eq(above(x, k))
        outs.append(o)
    wrong = []

    async def tb(ctx):
        for v in range(1 << width):
            ctx.set(x, v)
            await ctx.delay(1e-9)
            wrong.extend((v, k) for k, o in zip(ks, outs) if ctx.get(o) != (v > k))

    sim = Simulator(m)
    sim.add_testbench(tb)
    sim.run()
    assert wrong == []
