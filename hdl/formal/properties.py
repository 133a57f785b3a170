"""Formal harnesses for the router's building blocks (run by hdl/formal/runner.py, tests/test_formal.py).

Each function returns (harness, free inputs). The solver drives the free inputs, reset included,
with any value in every cycle; `Assume` narrows that only where the contract does.

* `fifo_harness`: `VCBuffer` against an independent reference (a shift-register FIFO per VC):
  counts equal and within [0, depth] (no overflow, no underflow), the front of every non-empty VC
  is the oldest flit written to it (order), `overflow` exactly when a full VC is written.
* `pick_harness`: `RoundRobinPick`: grant one-hot, only to a requester, the first requester at or
  after the pointer.
* `arbiter_harness`: `RoundRobinArbiter` used as VA / output arbiters use it (commit every grant):
  one-hot grants to requesters, and a requester that stays asserted is granted within n cycles.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Module, Mux, Signal

from ..arbiter import RoundRobinArbiter, RoundRobinPick
from ..buffer import VCBuffer


def fifo_harness(vcs: int = 2, depth: int = 3, width: int = 3, buffer_cls=VCBuffer):
    m = Module()
    m.submodules.dut = dut = buffer_cls(vcs, depth, width)
    w_valid, pop = Signal(), Signal()
    w_vc, pop_vc = Signal(range(vcs)), Signal(range(vcs))
    w_data = Signal(width)
    m.d.comb += [dut.w_valid.eq(w_valid), dut.w_vc.eq(w_vc), dut.w_data.eq(w_data),
                 dut.pop.eq(pop), dut.pop_vc.eq(pop_vc)]
    m.d.comb += [Assume(w_vc < vcs), Assume(pop_vc < vcs)]
    full_any = Signal()
    for v in range(vcs):
        cnt = Signal(range(depth + 1), name=f"ref_count{v}")
        ent = [Signal(width, name=f"ref{v}_{k}") for k in range(depth)]
        wr = Signal(name=f"ref_wr{v}")
        pp = Signal(name=f"ref_pop{v}")
        m.d.comb += [wr.eq(w_valid & (w_vc == v) & (cnt < depth)), pp.eq(pop & (pop_vc == v) & (cnt > 0))]
        for k in range(depth):               # entry k after the cycle: shifted if popped, or the new flit
            nxt = ent[k + 1] if k + 1 < depth else ent[k]
            kept = Mux(pp, nxt, ent[k])
            slot = cnt - pp
            m.d.sync += ent[k].eq(Mux(wr & (slot == k), w_data, kept))
        m.d.sync += cnt.eq(cnt + wr - pp)
        m.d.comb += [Assert(dut.count[v] == cnt), Assert(dut.count[v] <= depth)]
        with m.If(cnt > 0):
            m.d.comb += Assert(dut.front[v] == ent[0])
        with m.If(w_vc == v):
            m.d.comb += full_any.eq(cnt == depth)
    m.d.comb += Assert(dut.overflow == (w_valid & full_any))
    return m, [w_valid, w_vc, w_data, pop, pop_vc]


def _onehot_or_zero(x):
    return (x & (x - 1)) == 0


def pick_harness(n: int = 5):
    m = Module()
    m.submodules.dut = dut = RoundRobinPick(n)
    req, ptr = Signal(n), Signal(range(n))
    m.d.comb += [dut.requests.eq(req), dut.ptr.eq(ptr), Assume(ptr < n)]
    m.d.comb += [Assert(_onehot_or_zero(dut.grant)), Assert((dut.grant & ~req) == 0),
                 Assert(dut.valid == req.any()), Assert((dut.grant != 0) == req.any())]
    for i in range(n):                       # the grant is the first requester at or after ptr (cyclic)
        with m.If(dut.grant[i]):
            m.d.comb += Assert(dut.index == i)
            for j in range(n):
                between = ((ptr <= j) & (j < i)) if j < i else ((ptr <= j) & (i < ptr))
                if j != i:
                    m.d.comb += Assert(~(req[j] & between))
    return m, [req, ptr]


def arbiter_harness(n: int = 4, commit: bool = True):
    """commit=False never updates the pointer (a misuse; the fairness property must then fail)."""
    m = Module()
    m.submodules.dut = dut = RoundRobinArbiter(n)
    req = Signal(n)
    m.d.comb += [dut.requests.eq(req), dut.commit.eq(dut.valid if commit else 0), dut.commit_index.eq(dut.index)]
    m.d.comb += [Assert(_onehot_or_zero(dut.grant)), Assert((dut.grant & ~req) == 0),
                 Assert(dut.valid == req.any()), Assert(dut.ptr < n)]
    for i in range(n):                       # cycles requester i has waited while asserted
        wait = Signal(range(n + 1), name=f"wait{i}")
        with m.If(req[i] & ~dut.grant[i]):
            m.d.sync += wait.eq(wait + 1)
        with m.Else():
            m.d.sync += wait.eq(0)
        m.d.comb += Assert(wait <= n - 1)
    return m, [req]


__all__ = ["fifo_harness", "pick_harness", "arbiter_harness"]
