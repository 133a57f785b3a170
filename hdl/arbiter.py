"""Round-robin arbiter: the one arbitration primitive of the router (docs/microarchitecture.md).

`N` requesters and a pointer `ptr` (initially 0). The grant goes to the first requester at index
`ptr, ptr+1, ...` (cyclic). The pointer moves only when the user says so: on `commit` it becomes
`i + 1 (mod N)`, i the requester whose bit `commit_grant` (one-hot) sets. VC allocation and the
switch allocator's output stage commit every grant (`commit = valid`, `commit_grant = grant`); the
switch allocator's input stage commits only when the chosen VC actually sent a flit.
`RoundRobinPick` is the combinational part alone, for the extra iterations of the switch
allocator, which reuse the pointer of the first.

The pointer is held as its mask, the requesters at or after it (`ptr_mask`), not as an index: the
pick ANDs the requests with a register instead of a decoded index, and the next mask is a prefix
OR of the one-hot grant instead of its index plus one (a carry chain). Both ends of the VC
allocator's loop, the router's longest path on ECP5 (docs/fpga_results_log.md), lose their logic levels. A
mask of 0 (after a commit at N - 1) picks as pointer 0 does, and the pointer starts there: no
commit sets bit 0, so with a reset value of 0 that bit is a constant synthesis removes, with the
term it adds to every pick (the target router: 390 LUT sites fewer flattened than with all ones
at reset, the other mask of pointer 0).
"""
from __future__ import annotations

import functools
import operator

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out


def _check_n(n):
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise TypeError(f"n={n!r}: the number of requesters must be a positive integer")


def one_hot_index(m: Module, onehot, n: int):
    """Index of the set bit of an `n`-bit one-hot value (0 when none): bit b of the index is
    "the set bit is at an index with bit b set", one masked reduction per index bit."""
    width = max(1, (n - 1).bit_length())
    idx = Signal(width)
    m.d.comb += idx.eq(Cat(*[(onehot & Const(sum(1 << i for i in range(n) if i >> b & 1), n)).any()
                             for b in range(width)]))
    return idx


def one_hot_select(sel, values):
    """The value whose bit of `sel` is set (`sel` one-hot; 0 when no bit is set): an AND-OR per
    bit, which a registered one-hot select keeps cheap where a binary index would need decoding.
    The OR is a chain: as a balanced tree the target's crossbar took 583 fewer TRELLIS_COMB but
    placed and routed worse (docs/fpga_results_log.md, 2026-11-29, night)."""
    values = [Value.cast(v) for v in values]
    width = max(len(v) for v in values)
    return functools.reduce(operator.or_, [v & sel[i].replicate(width) for i, v in enumerate(values)])


def ptr_mask(ptr, n: int):
    """The mask of pointer `ptr` (an int or a value): bits ptr .. n-1 set."""
    if isinstance(ptr, int):
        return ((1 << n) - 1) & ~((1 << ptr) - 1)
    return (Const((1 << n) - 1, n) << ptr)[:n]


def _wire(m, value, n: int, name: str | None):
    """`value` held in a signal when a module is given: an expression used more than once is then
    written (and simulated) once, where Amaranth would repeat the whole expression at every use."""
    if m is None:
        return value
    s = Signal(n, name=name)
    m.d.comb += s.eq(value)
    return s


# Verilator holds a value wider than 64 bits as 32-bit words, and a shift across them runs a
# generic bit-insertion loop (a fifth of the Verilated Polarized V = 8 routers' time, perf): a
# prefix OR over more than 64 bits is made of trees over its 32-bit words instead
WIDE = 64
WORD = 32


def prefix_or(value, n: int, m: Module | None = None, name: str = "prefix"):
    """Bit i = OR of bits 0..i of the `n`-bit value: a log-depth tree (each level a signal of `m`,
    if given: the tree reads each level twice). Over more than WIDE bits, a tree per WORD-bit
    word and one over the words (`_by_words`): the same function."""
    if n > WIDE:
        return _by_words(value, n, m, name, below=False)
    prefix = _wire(m, value, n, f"{name}_l0")
    shift = 1
    while shift < n:
        prefix = _wire(m, prefix | prefix.shift_left(shift)[:n], n, f"{name}_l{shift.bit_length()}")
        shift *= 2
    return prefix


def below_or(value, n: int, m: Module | None = None, name: str = "prefix"):
    """Bit i = OR of bits 0..i-1 of the `n`-bit value (bit 0: 0): `prefix_or` shifted up by one,
    the requesters after the lowest set bit."""
    if n > WIDE:
        return _by_words(value, n, m, name, below=True)
    return prefix_or(value, n, m, name).shift_left(1)[:n]


def _by_words(value, n: int, m: Module | None, name: str, below: bool):
    """`prefix_or` (`below_or` if `below`) of an `n`-bit value as trees over its WORD-bit words,
    each word's result ORed with whether any word before it has a set bit (a tree over the
    words' top bits): no signal wider than WIDE but the result, assembled word by word."""
    value = _wire(m, value, n, f"{name}_in")
    words = [(lo, min(lo + WORD, n)) for lo in range(0, n, WORD)]
    pre = [prefix_or(value[lo:hi], hi - lo, m, f"{name}_w{k}") for k, (lo, hi) in enumerate(words)]
    upto = prefix_or(Cat(*[p[-1] for p in pre]), len(words), m, f"{name}_words")   # words 0..k
    out = []
    for k, (lo, hi) in enumerate(words):
        bits = pre[k].shift_left(1)[:hi - lo] if below else pre[k]
        out.append(bits | upto[k - 1].replicate(hi - lo) if k else bits)
    return _wire(m, Cat(*out), n, name)


def lowest_set_bit(value, n: int, m: Module | None = None, name: str = "low"):
    """The lowest set bit of an `n`-bit value, one-hot (0 when none): the value AND NOT the OR of
    the bits below each bit, that OR a log-depth prefix tree. Not `x & (~x + 1)`: synthesis
    maps that increment to a carry chain, whose entry and exit routing were the longest part of
    the switch allocator's path on ECP5."""
    value = _wire(m, value, n, f"{name}_in")
    below = below_or(value, n, m, name) if n > 1 else Const(0, n)
    return value & ~below


def grant_bit(requests, mask, i: int):
    """Bit `i` of `RoundRobinPick`'s grant, alone: requester i asks, and no requester before it
    asks among those at or after the pointer (`mask`), or, when none asks there, none before it
    asks at all. For a requester that needs to know only whether it won, and needs to know it
    where it sits (the three-stage switch allocator's input ports)."""
    high = requests & mask
    none_before = (lambda x: ~x[:i].any()) if i else (lambda x: Const(1, 1))
    return requests[i] & Mux(high.any(), mask[i] & none_before(high), none_before(requests))


def winner_select(requests, mask, values):
    """`one_hot_select(grant, values)` for `RoundRobinPick`'s grant over `requests` and `mask`,
    without the grant: the value of the first requester among those at or after the pointer, else
    of the first requester, each a priority choice straight from the requests (no one-hot grant
    decoded first), the two in parallel with the OR that chooses between them. The three-stage
    switch allocator's input stage registers its nominated VC's output port this way: one
    logic level fewer than the pick followed by the select (docs/fpga_results_log.md)."""
    values = [Value.cast(v) for v in values]
    width = max(len(v) for v in values)

    def first(x):
        out = Const(0, width)
        for i in reversed(range(len(values))):
            out = Mux(x[i], values[i], out)
        return out
    high = requests & mask
    return Mux(high.any(), first(high), first(requests))


def round_robin_pick(m: Module, requests, mask, n: int, next_mask: bool = False):
    """(grant, next) of a round-robin choice among `requests` (`n` bits) with pointer mask `mask`:
    the first requester among those at or after the pointer, else the first one; `next` is the
    mask a commit of the grant sets (None unless asked for). Both lowest-bit trees run in
    parallel with the OR that chooses between them, instead of after it (two logic levels fewer
    for n = 32, where the VC allocator's arbiters were the target router's critical path on ECP5)."""
    if n == 1:
        return requests, None
    high = _wire(m, requests & mask, n, "high")
    any_high = high.any()
    hi_below = below_or(high, n, m, "high_or")
    all_below = below_or(requests, n, m, "req_or")
    grant = Mux(any_high, high & ~hi_below, requests & ~all_below)
    # the bits after the lowest set bit of x are the prefix OR of x shifted by one: the trees the
    # grant reads, so the next mask needs no tree of its own after the grant
    nxt = Mux(any_high, hi_below, all_below) if next_mask else None
    return grant, nxt


class RoundRobinPick(wiring.Component):
    """Combinational round-robin choice: the first set bit of `requests` among those of `mask`
    (the requesters at or after the pointer, `ptr_mask`), else the first set bit.

    Parameters: n, the requesters; next_mask, also output `next_mask` (the mask of the requesters
    after the grant, what a commit of the grant sets); index, also output `index` (the grant's
    index). Both are off by default: the router reads neither, and an output nobody reads is
    logic in the Verilog all the same."""

    def __init__(self, n: int, next_mask: bool = False, index: bool = False):
        _check_n(n)
        self.n = n
        self.with_next_mask = bool(next_mask)
        self.with_index = bool(index)
        super().__init__({
            "requests": In(n),
            "mask": In(n),
            "grant": Out(n),          # one-hot
            "valid": Out(1),
            **({"index": Out(range(n))} if index else {}),
            **({"next_mask": Out(n)} if next_mask else {}),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.n
        grant, nxt = round_robin_pick(m, self.requests, self.mask, n, self.with_next_mask)
        m.d.comb += [self.grant.eq(grant), self.valid.eq(self.requests.any())]
        if self.with_next_mask:
            m.d.comb += self.next_mask.eq(nxt if nxt is not None else 0)
        if self.with_index:
            m.d.comb += self.index.eq(one_hot_index(m, self.grant, n))
        return m


class RoundRobinArbiter(wiring.Component):
    """`round_robin_pick` plus its pointer register, kept as a mask (`mask`, exported for extra
    pick stages; the pointer is the lowest set bit of `mask`, 0 when none is set).

    Parameters: n, the requesters; own_commit, a commit always commits the arbiter's own grant
    (`commit_grant` is ignored), so the next mask is computed beside the grant instead of from it:
    the pointer's path is the pick's depth, not twice it. An arbiter between registers gains (on
    the ECP5-85F a 32-requester one goes from 107 to 143 MHz, 16 from 136 to 200;
    benchmarks/bench_va_ceiling.py). The router's switch allocator uses it for its output
    arbiters when it runs one iteration; its VA arbiters do not: they sit inside the
    request-grant loop, which sets their speed. index: also output the grant's index."""

    def __init__(self, n: int, own_commit: bool = False, index: bool = False):
        _check_n(n)
        self.n = n
        self.own_commit = bool(own_commit)
        self.with_index = bool(index)
        super().__init__({
            "requests": In(n),
            "grant": Out(n),
            "valid": Out(1),
            "commit": In(1),
            "commit_grant": In(n),
            "mask": Out(n),
            **({"index": Out(range(n))} if index else {}),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.n
        grant, nxt = round_robin_pick(m, self.requests, self.mask, n, self.own_commit)
        m.d.comb += [self.grant.eq(grant), self.valid.eq(self.requests.any())]
        if self.with_index:
            m.d.comb += self.index.eq(one_hot_index(m, self.grant, n))
        if n > 1:
            with m.If(self.commit):      # the requesters after the committed one
                if self.own_commit:
                    m.d.sync += self.mask.eq(nxt)
                else:
                    m.d.sync += self.mask.eq(below_or(self.commit_grant, n, m, "commit_or"))
        return m


class RoundRobinPointer(wiring.Component):
    """The pointer of a `RoundRobinArbiter` alone, for arbiters that take turns at one
    `RoundRobinPick` (the VC allocator's local-port VCs, whose requests in a cycle all name the
    same VC): the pick reads the mask of the pointer whose turn it is, and the mask a commit of
    its grant sets is worked out once for all of them (`next_mask`).

    Parameters: n, the requesters.

    Attributes: `commit` In, move the pointer: `mask` becomes `next_mask` (In: the requesters
    after the grant, `below_or` of it); `mask` Out, the requesters at or after the pointer (initially
    0: pointer 0)."""

    def __init__(self, n: int):
        _check_n(n)
        self.n = n
        super().__init__({"commit": In(1), "next_mask": In(n), "mask": Out(n)})

    def elaborate(self, platform):
        m = Module()
        if self.n > 1:
            with m.If(self.commit):
                m.d.sync += self.mask.eq(self.next_mask)
        return m


def mask_pointer(mask: int, n: int) -> int:
    """The pointer a mask stands for: its lowest set bit (0 for an empty mask)."""
    return (mask & -mask).bit_length() - 1 if mask else 0


__all__ = ["RoundRobinArbiter", "RoundRobinPick", "RoundRobinPointer", "mask_pointer", "round_robin_pick", "grant_bit", "below_or", "lowest_set_bit", "one_hot_index", "one_hot_select", "prefix_or",
           "ptr_mask", "winner_select"]
