"""The VA structures benchmarks/bench_va_ceiling.py times on the FPGA do allocate: every input
VC's request is granted within a few cycles when its output VC is free, never while it is busy,
and no output VC is granted twice in one cycle. (Their Fmax is the benchmark's business.)"""
import importlib.util
import pathlib
import random

import pytest
from amaranth.sim import Simulator

_spec = importlib.util.spec_from_file_location(
    "bench_va_ceiling", pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "bench_va_ceiling.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.mark.parametrize("make,latency", [
    (lambda: bench.VALoop(8, registered=False), 2),
    (lambda: bench.VALoop(8, registered=True), 3),
    (lambda: bench.VAHierarchical(4, 2), 3),
    (lambda: bench.VAHierarchical(4, 2, crossing_regs=True), 5),
    (lambda: bench.VASeparable(4, 2), 7),
])
def test_va_structures_allocate(make, latency):
    dut = make()
    nv = len(dut.new)
    rng = random.Random(nv + latency)
    target = [rng.randrange(nv) for _ in range(nv)]
    busy_ov = target[0]                       # one output VC stays busy: its requesters never win

    async def tb(ctx):
        ctx.set(dut.busy, 1 << busy_ov)
        for i in range(nv):
            ctx.set(dut.req[i], target[i])
        ctx.set(dut.new, (1 << nv) - 1)
        await ctx.tick()
        ctx.set(dut.new, 0)
        # requesters of one output VC win one at a time (round robin); in the hierarchical forms
        # a loser asks again once its answer is back, so a turn takes a round trip there
        worst = max(target.count(ov) for ov in set(target) if ov != busy_ov)
        for _ in range(latency * worst + 1):
            await ctx.tick()
        held = ctx.get(dut.held)
        for i in range(nv):
            assert bool(held >> i & 1) == (target[i] != busy_ov), (i, target[i], busy_ov, bin(held))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()


def test_only_rejects_unknown_kinds():
    with pytest.raises(SystemExit, match="allowed: comma-separated arbiter"):
        bench.main(["--only", "va"])
