"""hdl.gf.rom: a constant table read at every index, in range and past its end, equals the list,
for tables in one 64-bit piece and in several."""
import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from hdl.gf import ROM_CHUNK_BITS, rom


@pytest.mark.parametrize("entries,width,index_bits", [
    (5, 3, 3),           # one piece
    (16, 4, 4),          # exactly 64 bits
    (17, 4, 5),          # one entry past a piece
    (63, 2, 7),          # 126 bits: the GF(3) tables of the q=3 unit
    (100, 7, 7),         # 8-bit slots, 13 pieces, the index cannot reach past the table
    (100, 5, 8),         # the index reaches far past the table
    (40, 9, 6),          # 16-bit slots
    (3, 40, 2),          # 64-bit slots, one entry per piece
])
def test_rom_reads_every_index(entries, width, index_bits):
    rng = random.Random(entries * 1000 + width)
    values = [rng.getrandbits(width) for _ in range(entries)]
    index = Signal(index_bits)
    out = Signal(width)
    m = Module()
    m.d.comb += out.eq(rom(values, index, width))
    pieces = -(-entries * (1 << (width - 1).bit_length()) // ROM_CHUNK_BITS)

    async def tb(ctx):
        for k in range(1 << index_bits):
            ctx.set(index, k)
            assert ctx.get(out) == (values[k] if k < entries else 0), (k, pieces)

    sim = Simulator(m)
    sim.add_testbench(tb)
    sim.run()
