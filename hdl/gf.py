"""GF(q) arithmetic and small constant helpers as Amaranth expressions (for the routing units).

Elements are the integers 0..q-1 of `topologies.field` (galois' integer representation: for
q = p^k the base-p digits are the polynomial coefficients). Prime q: addition and multiplication
modulo q in logic (conditional subtraction; the product from a q×q table for q < 16, else a
product reduced by a restoring chain), inversion by a q-entry table. Prime powers:
multiplication through q-entry log/antilog tables, addition digit-wise modulo p (XOR for p = 2).
`div_const` divides by a constant (a table for small ranges, else one constant multiplication
checked exhaustively), which is how router ids split into (x, a).

No `*` reaches the netlist with a constant operand: `const_mul` writes it as shifts and adds.
FPGA synthesis maps every multiplier, however small or constant, to a DSP block, and a chain of
them was the routing unit's critical path on the ECP5 (about 4 ns per block).
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value

from topologies.field import field


def bits(n: int) -> int:
    """Bits to hold 0..n-1 (at least 1)."""
    return max(1, (max(int(n), 1) - 1).bit_length())


def rom(values, index, width: int | None = None):
    """Constant table lookup `values[index]`, out-of-range entries reading 0.

    Written as a bit selection from a constant (each entry padded to a power-of-two width, so the
    offset is the index with zeros below it): one line of Verilog and no `always` block per
    table, where an `Array` of constants is a case statement of two lines per entry. Not a shift
    of the whole table and a slice: its output would be as wide as the table, each bit depending
    on every table bit (Amaranth's netlist checks walk all those edges)."""
    values = [int(v) for v in values]
    if width is None:
        width = max(1, max(values + [0]).bit_length())
    if len(values) == 1:
        return Const(values[0], width)
    index = Value.cast(index)
    slot = 1 << (width - 1).bit_length()
    packed = sum((v & ((1 << width) - 1)) << (k * slot) for k, v in enumerate(values))
    offset = Cat(Const(0, (slot - 1).bit_length()), index) if slot > 1 else index
    nbits = len(values) * slot
    if nbits <= ROM_CHUNK_BITS:
        # bit_select: `width` bits at `offset` (a shift of the constant, no multiply); out of range: 0
        return Const(packed, nbits).bit_select(offset, width)
    # wider: chunks of ROM_CHUNK_BITS (whole entries, slot being a power of two), the chunk chosen
    # by the offset's high bits. The same function; a Verilated wide shift is a loop over words
    # and a call per lookup, a 64-bit one a machine shift (the 104-router lockstep's RTL side).
    low = ROM_CHUNK_BITS.bit_length() - 1
    mask = (1 << ROM_CHUNK_BITS) - 1
    chunks = [Const(packed >> (k * ROM_CHUNK_BITS) & mask, ROM_CHUNK_BITS).bit_select(offset[:low], width)
              for k in range(-(-nbits // ROM_CHUNK_BITS))]
    return _select(chunks, offset[low:], width)


ROM_CHUNK_BITS = 64      # a power of two: the widest table `rom` shifts in one piece


def _select(items, sel, width: int):
    """items[sel] by a tree of 2:1 multiplexers on the bits of `sel`, low bit first (0 past the
    last item; items past what `sel` reaches are dropped)."""
    level = list(items)
    for bit in sel:
        level += [Const(0, width)] * (len(level) % 2)
        level = [Mux(bit, level[k + 1], level[k]) for k in range(0, len(level), 2)]
    return level[0]


def const_mul(x, c: int):
    """x · c for a constant integer c >= 0, as a sum of shifted copies of x."""
    if not isinstance(c, int) or c < 0:
        raise ValueError(f"c={c!r}: must be a non-negative integer")
    terms = [Value.cast(x).shift_left(k) for k in range(c.bit_length()) if c >> k & 1]
    if not terms:
        return Const(0, 1)
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def index2(i, j, cols: int):
    """The row-major index i·cols + j (0 <= j < cols): a concatenation when cols is a power of
    two (no adder on the path), else shifts and adds."""
    if cols & (cols - 1) == 0:
        jb = cols.bit_length() - 1
        return Cat(j[:jb], i) if jb else i
    return const_mul(i, cols) + j


def rom2(values, i, j, cols: int, width: int):
    """`values[i·cols + j]` for a row-major table, indexed by the bits of (i, j): no multiply."""
    jb = bits(cols)
    rows = -(-len(values) // cols)
    padded = []
    for r in range(rows):
        padded += list(values[r * cols:(r + 1) * cols]) + [0] * ((1 << jb) - cols)
    return rom(padded, Cat(j[:jb], i) if cols > 1 else i, width)


TABLE_MAX = 256          # below this many entries a table beats arithmetic (a few LUTs per bit)


def div_const(value, d: int, vmax: int):
    """(value // d, value % d) for 0 <= value <= vmax: a table for small vmax, else one constant
    multiplication (as shifts and adds)."""
    if not isinstance(d, int) or d < 1:
        raise ValueError(f"d={d!r}: divisor must be a positive integer")
    qbits = bits(vmax // d + 1)
    rbits = bits(d)
    if d == 1:
        return value, Const(0, 1)
    if d & (d - 1) == 0:
        s = d.bit_length() - 1
        return value[s:], value[:s]
    if vmax < TABLE_MAX:
        return rom([v // d for v in range(vmax + 1)], value, qbits), rom([v % d for v in range(vmax + 1)], value, rbits)
    n = max(1, int(vmax).bit_length())
    s = n + (d - 1).bit_length()
    mult = -(-(1 << s) // d)
    if vmax < (1 << 20):                      # verify exactly (Granlund-Montgomery bound otherwise)
        for v in range(vmax + 1):
            assert (v * mult) >> s == v // d
    quot = (const_mul(value, mult) >> s)[:qbits]
    rem = (value - const_mul(quot, d))[:rbits]
    return quot, rem


class GF:
    """Expression builder for GF(q) on `width`-bit element signals, inside Module `m`."""

    def __init__(self, m: Module, q: int):
        self.m = m
        self.F = F = field(q)
        self.q = q
        self.p = F.characteristic
        self.k = F.degree
        self.width = bits(q)
        self.prime = self.k == 1

    def const(self, v: int):
        return Const(int(v), self.width)

    def _sig(self, expr, name=None):
        s = Signal(self.width, name=name)
        self.m.d.comb += s.eq(expr)
        return s

    # ---- digits (odd prime powers only) ---------------------------------------------------
    def _digit_bits(self):
        return bits(self.p)

    def _to_digits(self, a):
        dw = self._digit_bits()
        table = []
        for v in range(self.q):
            packed = 0
            for i in range(self.k):
                packed |= ((v // self.p ** i) % self.p) << (i * dw)
            table.append(packed)
        return rom(table, a, dw * self.k)

    def _from_digits(self, packed):
        dw = self._digit_bits()
        total = 0
        for i in range(self.k):
            total = total + const_mul(packed[i * dw:(i + 1) * dw], self.p ** i)
        return total[:self.width]

    # ---- arithmetic -------------------------------------------------------------------------
    def add(self, a, b):
        q, w = self.q, self.width
        if self.prime:
            s = a + b
            return self._sig(Mux(s >= q, s - q, s)[:w])
        if self.p == 2:
            return self._sig(a ^ b)
        dw = self._digit_bits()
        da, db = self._to_digits(a), self._to_digits(b)
        out = []
        for i in range(self.k):
            s = da[i * dw:(i + 1) * dw] + db[i * dw:(i + 1) * dw]
            out.append(Mux(s >= self.p, s - self.p, s)[:dw])
        return self._sig(self._from_digits(Cat(*out)))

    def neg(self, a):
        if self.prime:
            return self._sig(Mux(a == 0, 0, (self.q - a))[:self.width])
        if self.p == 2:
            return a
        return self._sig(rom([int(x) for x in self.F.neg], a, self.width))

    def sub(self, a, b):
        return self.add(a, self.neg(b))

    def mul(self, a, b):
        q, w = self.q, self.width
        if self.prime and (1 << 2 * w) <= TABLE_MAX:
            table = [(i * j) % q if i < q and j < q else 0 for i in range(1 << w) for j in range(1 << w)]
            return self._sig(rom(table, Cat(b[:w], a[:w]), w))
        if self.prime:
            prod = Signal(2 * w)
            self.m.d.comb += prod.eq(a * b)
            cur = prod
            top = (q - 1) * (q - 1)
            k = 0
            while (q << (k + 1)) <= top:
                k += 1
            for sh in range(k, -1, -1):          # restoring reduction: subtract q·2^sh when it fits
                nxt = Signal(2 * w)
                self.m.d.comb += nxt.eq(Mux(cur >= (q << sh), cur - (q << sh), cur)[:2 * w])
                cur = nxt
            return self._sig(cur[:w])
        F = self.F
        lw = bits(q - 1)
        la = rom([int(x) for x in F.log], a, lw)
        lb = rom([int(x) for x in F.log], b, lw)
        s = la + lb
        e = Mux(s >= q - 1, s - (q - 1), s)[:lw]
        r = rom([int(x) for x in F.antilog], e, w)
        return self._sig(Mux((a == 0) | (b == 0), 0, r))

    def inv(self, a):
        return self._sig(rom([int(x) for x in self.F.inv], a, self.width))

    def dot(self, x, y):
        return self.add(self.add(self.mul(x[0], y[0]), self.mul(x[1], y[1])), self.mul(x[2], y[2]))

    def cross(self, x, y):
        def det(i, j):
            return self.sub(self.mul(x[i], y[j]), self.mul(x[j], y[i]))
        return [det(1, 2), det(2, 0), det(0, 1)]

    def normalize(self, v):
        lead = self._sig(Mux(v[0] != 0, v[0], Mux(v[1] != 0, v[1], v[2])))
        s = self.inv(lead)
        return [self.mul(c, s) for c in v]


__all__ = ["GF", "bits", "const_mul", "div_const", "index2", "rom", "rom2"]
