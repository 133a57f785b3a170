"""k-induction harness of the VC buffer (`hdl.buffer.VCBuffer`), run by tests/test_formal_stages.py.

The buffer against an independent reference (a shift-register FIFO per VC): counts equal and
within [0, B] (no overflow, no underflow), every count flag `count > j` equal to the compare, the
front of every non-empty VC the oldest flit written to it and the peek bits those of the next one
(order), `overflow` exactly when a full VC is written.

To make these inductive (proved for every reachable state, not only the first cycles), the
harness also asserts the invariants that tie the buffer's own state to the reference, read from
the buffer's netlist (`internals.open_up`; the RTL is unchanged): per VC, head, tail, head + 1 and
head + 2 are in 0..B-1, tail = head + count and the after-pointers = head + 1, head + 2 (mod B),
and memory entry head + k holds the reference's k-th flit (and its peek bits) for k < count, in
the per-VC memories (registered fronts) or the port's shared one (LUTRAM fronts). With them the
induction closes at depth 1; without them (invariants=False) it does not (a stale memory entry
behind the front is not excluded).
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Module, Mux, Signal

from ..buffer import VCBuffer
from .internals import memory, open_up, signal


def _mod_add(x, k: int, n: int):
    """(x + k) mod n for 0 <= x < n, 0 <= k < n."""
    s = x + k
    return Mux(s >= n, s - n, s)


def buffer_harness(V: int = 3, B: int = 4, width: int = 3, buffer_cls=VCBuffer,
                   registered_front: bool = True, invariants: bool = True):
    """V VCs of B entries of `width` bits; invariants=False leaves out the internal invariants."""
    m = Module()
    dut = buffer_cls(V, B, width, count_flags=B, peek_width=1, registered_front=registered_front)
    inner, sig = open_up(dut)
    m.submodules.dut = inner
    w_valid, pop = Signal(), Signal()
    w_vc, pop_vc = Signal(range(V)), Signal(range(V))
    w_data = Signal(width)
    m.d.comb += [dut.w_valid.eq(w_valid), dut.w_vc.eq(w_vc), dut.w_data.eq(w_data),
                 dut.pop.eq(Mux(pop, 1 << pop_vc, 0)), dut.w_peek.eq(w_data[0])]
    m.d.comb += [Assume(w_vc < V), Assume(pop_vc < V)]
    full_any = Signal()
    for v in range(V):
        cnt = Signal(range(B + 1), name=f"ref_count{v}")
        ent = [Signal(width, name=f"ref{v}_{k}") for k in range(B)]
        wr, pp = Signal(name=f"ref_wr{v}"), Signal(name=f"ref_pop{v}")
        m.d.comb += [wr.eq(w_valid & (w_vc == v) & (cnt < B)), pp.eq(pop & (pop_vc == v) & (cnt > 0))]
        for k in range(B):
            nxt = ent[k + 1] if k + 1 < B else ent[k]
            m.d.sync += ent[k].eq(Mux(wr & (cnt - pp == k), w_data, Mux(pp, nxt, ent[k])))
        m.d.sync += cnt.eq(cnt + wr - pp)
        count = dut.count[v]
        m.d.comb += [Assert(count == cnt), Assert(count <= B), Assert(cnt <= B)]
        m.d.comb += [Assert(dut.count_gt[v][j] == (cnt > j)) for j in range(B)]
        with m.If(cnt > 0):
            m.d.comb += Assert(dut.front[v] == ent[0])
        if B > 1:
            with m.If(cnt > 1):
                m.d.comb += Assert(dut.peek[v] == ent[1][0])
        with m.If(w_vc == v):
            m.d.comb += full_any.eq(cnt == B)
        if not invariants:
            continue
        head, tail = signal(sig, f"head{v}"), signal(sig, f"tail{v}")
        a1, a2 = signal(sig, f"after1_{v}"), signal(sig, f"after2_{v}")
        m.d.comb += [Assert(head < B), Assert(tail < B), Assert(a1 == _mod_add(head, 1 % B, B)),
                     Assert(a2 == _mod_add(head, 2 % B, B))]
        # tail = head + count (mod B); count = B means tail = head
        m.d.comb += Assert(tail == Mux(head + cnt >= B, head + cnt - B, head + cnt))
        if registered_front:
            mems = [(memory(inner, f"front{v}_mem"), None), (memory(inner, f"peek{v}_mem"), None)]
        else:
            mems = [(memory(inner, "mem"), v), (memory(inner, "peek_mem"), v)]
        for k in range(B):
            for n, (mem, base) in enumerate(mems):
                rp = mem.read_port(domain="comb")
                addr = _mod_add(head, k, B)
                m.d.comb += rp.addr.eq(addr if base is None else base * B + addr)
                want = ent[k] if n == 0 else ent[k][0]
                with m.If(cnt > k):
                    m.d.comb += Assert(rp.data == want)
    m.d.comb += Assert(dut.overflow == (w_valid & full_any))
    return m, [w_valid, w_vc, w_data, pop, pop_vc]


__all__ = ["buffer_harness"]
