"""Input buffer of one router port: `V` virtual channels, each a FIFO of `B` entries.

One write per cycle (the link delivers at most one flit per cycle per port), the front entry of
every VC readable at once (for route selection and switch allocation), and at most one pop per
cycle (the switch allocator sends at most one flit per input port; `pop` is one-hot, as the
allocator's grants are, so no binary VC number is decoded again on the pop's path). A write to a
full VC cannot happen under credit flow control; if it does, the entry is discarded and
`overflow` pulses.

`registered_front` (default): a memory of B entries per VC, and `front[v]` a register loaded at
the edge that changes it from the memory's entry after the old front or from the flit written,
so its readers start at flip-flops (the ECP5 Fmax of the pipelined router). Otherwise one memory
of V·B entries per port (VC v owns entries v·B .. v·B+B-1) and each front a combinational read
of it: no front register and load multiplexer per bit, the smaller buffer for the dense network
builds. Cycle for cycle the same FIFO either way (the formal FIFO proof covers both).

With `body_width` > 0 each entry has a second part, the body, in a memory of its own with a single
read port: `rd_body` is the front body of VC `rd_vc`, combinationally, or with `body_sync` the
front body VC `rd_vc` had in the previous cycle (its address registered, read in this cycle: the
router's switch traversal stage, `st_stage = 1`; the entry cannot be overwritten in between,
since its credit only goes upstream when it is popped; the write into the LUTRAM is then
registered, a cycle late, which no read can see). The router keeps there the
flit fields only the crossbar reads, so that those are read once per port (at the VC the switch
allocator chose) instead of once per VC and then multiplexed: the LUTRAM's own read multiplexer
does the V:1 selection, and synthesis cannot merge it into the crossbar's P:1 (see docs/fpga_results_log.md,
"Where the area goes").

With `body_sync`, the low `body_block_bits` bits of the body can live in block RAM instead (a
memory with a synchronous read port, marked `ram_style = "block"`: an ECP5 EBR holds 36 bits of
each of up to 512 entries): the same read, the address taken at the clock edge instead of a
register in front of the LUTRAM. A read and a write of one address at one edge may return
anything: the entry the switch allocator reads is at the front of a non-empty VC, which a write
can reach only when the VC is full, and a write to a full VC is refused (a read with nothing at
the front is never used). So Yosys need not add a bypass (a register of the written data and an
address compare) for that case. It is told so by the memory's `no_rw_check` attribute when it
reads Verilog, and by `BLOCK_RAM_YOSYS` (run after `read_rtlil`: Amaranth's RTLIL read port
already says "old data on a collision", which the attribute does not undo) in the FPGA build.

With `count_flags` = k > 0, `count_gt[v]` bit j is `count[v] > j` (j < k) from flip-flops kept
beside the counter (`hdl.counter_flags`): what the switch allocator tests, without a compare.

With `peek_width` > 0 each entry also keeps `w_peek` (a few flag bits) in a small memory of its
own, and `peek[v]` reads them at the entry *after* VC v's front (meaningful when `count[v] >= 2`):
the three-stage switch allocator asks whether the second flit of a VC is a tail.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .checks import quiet_on_error
from .counter_flags import above_flags, flags_for
from .delay import register
from .gf import index2


BLOCK_MEMORY = "body_block"
# Yosys, after reading Amaranth's RTLIL: a collision of the block RAM's read and write is "x"
BLOCK_RAM_YOSYS = rf"setparam -set COLLISION_X_MASK 1 t:$memrd_v2 r:MEMID=\{BLOCK_MEMORY} %i"


class VCBuffer(wiring.Component):
    # entries a VC accepts beyond `depth`: always 0; the formal mutation test sets 1 (the full
    # flag off by one) to show that the FIFO proof catches it (tests/test_formal.py)
    _slack = 0

    @quiet_on_error
    def __init__(self, vcs: int, depth: int, width: int, body_width: int = 0, body_sync: bool = False,
                 body_block_bits: int = 0, peek_width: int = 0, count_flags: int = 0, registered_front: bool = True):
        for name, v in (("vcs", vcs), ("depth", depth), ("width", width)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name}={v!r}: must be a positive integer")
        if not isinstance(body_width, int) or isinstance(body_width, bool) or body_width < 0:
            raise ValueError(f"body_width={body_width!r}: must be an integer >= 0")
        self.vcs, self.depth, self.width, self.body_width = vcs, depth, width, body_width
        self.body_sync = bool(body_sync)
        if not isinstance(body_block_bits, int) or isinstance(body_block_bits, bool) or \
                not 0 <= body_block_bits <= body_width:
            raise ValueError(f"body_block_bits={body_block_bits!r}: must be an integer in 0..{body_width} (the body)")
        if body_block_bits and not self.body_sync:
            raise ValueError(f"body_block_bits={body_block_bits}: block RAM reads are synchronous; needs body_sync")
        self.body_block_bits = body_block_bits
        if not isinstance(peek_width, int) or isinstance(peek_width, bool) or peek_width < 0:
            raise ValueError(f"peek_width={peek_width!r}: must be an integer >= 0")
        self.peek_width = peek_width
        if not isinstance(count_flags, int) or isinstance(count_flags, bool) or count_flags < 0:
            raise ValueError(f"count_flags={count_flags!r}: must be an integer >= 0")
        self.count_flags = count_flags
        if not isinstance(registered_front, bool):
            raise ValueError(f"registered_front={registered_front!r}: must be True or False")
        self.registered_front = registered_front
        extra = {} if peek_width == 0 else {"w_peek": In(peek_width), "peek": Out(peek_width).array(vcs)}
        if count_flags:
            extra["count_gt"] = Out(count_flags).array(vcs)
        body = {} if body_width == 0 else {
            "w_body": In(body_width),
            "rd_vc": In(range(vcs)) if vcs > 1 else In(1),
            "rd_body": Out(body_width),
        }
        super().__init__({**body, **extra,
            "w_valid": In(1),
            "w_vc": In(range(vcs)) if vcs > 1 else In(1),
            "w_data": In(width),
            "pop": In(vcs),              # one-hot: the VC to pop (at most one bit set)
            "front": Out(width).array(vcs),
            "count": Out(range(depth + 1)).array(vcs),
            "overflow": Out(1),
        })

    @staticmethod
    def _registered_slot(m, name: str, k: int, depth: int, data, tail, after, write, pop, count):
        """Entry k of a VC (0: the front, 1: the one after it) as a register, `data` being the part
        of each flit it keeps, in a memory of `depth` entries of its own written at `tail`: on a
        pop it takes the entry after it, read at `after` (= head + k + 1), if the FIFO holds one,
        else the flit being written; holding k or fewer entries, the flit being written (the slot
        is empty or becomes the written flit's)."""
        reg = Signal(len(data), name=name)
        m.submodules[f"{name}_mem"] = mem = Memory(shape=len(data), depth=depth, init=[])
        wp, rp = mem.write_port(), mem.read_port(domain="comb")
        m.d.comb += [wp.addr.eq(tail), wp.data.eq(data), wp.en.eq(write), rp.addr.eq(after)]
        with m.If(pop):
            m.d.sync += reg.eq(Mux(count > k + 1, rp.data, data))
        with m.Elif(count <= k):
            m.d.sync += reg.eq(data)
        return reg

    @staticmethod
    def _registered_write(m, name: str, addr, data, en):
        """The LUTRAM body's write a cycle late, from registers: its enable (which reads the VC's
        count through the full test) then starts at a flip-flop, not at the counters across the
        port's RAMs (the target router's longest path at two seeds). The same reads: an entry
        written at the edge ending cycle t is the front from cycle t + 1 at the earliest, its
        read address is registered in that cycle, and the read is in cycle t + 2, after the late
        write; a slot written late was free, so no read it could disturb is pending."""
        return (register(m, addr, f"{name}_w_addr"), register(m, data, f"{name}_w_data", reset_less=True),
                register(m, en, f"{name}_w_en"))

    def elaborate(self, platform):
        m = Module()
        V, B = self.vcs, self.depth
        head = [Signal(range(B), name=f"head{v}") for v in range(V)]
        tail = [Signal(range(B), name=f"tail{v}") for v in range(V)]
        wvc = self.w_vc if V > 1 else Const(0, 1)
        # registered_front: the front of every VC, and the peek bits of the entry after it, are
        # registers (the consumers' paths start at flip-flops, not at a LUTRAM read behind a head
        # pointer): each takes, at the edge that changes it, the memory's entry after the old front
        # (read at a registered address) or the flit being written, whichever the FIFO then holds
        # there. One memory per VC: with one shared memory Yosys merges the VCs' read ports into
        # one (only one VC pops per cycle) and puts the pop logic in front of its address.
        # Otherwise one memory per port, the fronts read from it combinationally (no register or
        # load multiplexer per front bit: the smaller buffer, for the dense network builds)
        after1 = [Signal(range(B), init=1 % B, name=f"after1_{v}") for v in range(V)]    # head + 1
        after2 = [Signal(range(B), init=2 % B, name=f"after2_{v}") for v in range(V)]    # head + 2
        reg = self.registered_front
        if not reg:
            m.submodules.mem = shared = Memory(shape=self.width, depth=V * B, init=[])
            if self.peek_width:
                m.submodules.peek_mem = shared_peek = Memory(shape=self.peek_width, depth=V * B, init=[])
        for v in range(V):
            count = self.count[v]
            # signals, not expressions: each is read several times below
            write, pop = Signal(name=f"write{v}"), Signal(name=f"pop{v}")
            m.d.comb += [write.eq(self.w_valid & (wvc == v) & (count < B + self._slack)),
                         pop.eq(self.pop[v] & (self.count_gt[v][0] if self.count_flags else count > 0))]
            with m.If(write):
                m.d.sync += tail[v].eq(Mux(tail[v] == B - 1, 0, tail[v] + 1))
            with m.If(pop):
                m.d.sync += [head[v].eq(after1[v]), after1[v].eq(after2[v]),
                             after2[v].eq(Mux(after2[v] == B - 1, 0, after2[v] + 1))]
            with m.If(write & ~pop):
                m.d.sync += count.eq(count + 1)
            with m.Elif(pop & ~write):
                m.d.sync += count.eq(count - 1)
            if not reg:
                rp = shared.read_port(domain="comb")
                m.d.comb += [rp.addr.eq(index2(Const(v, range(V)), head[v], B)), self.front[v].eq(rp.data)]
                if self.peek_width:
                    pp = shared_peek.read_port(domain="comb")
                    m.d.comb += [pp.addr.eq(index2(Const(v, range(V)), after1[v], B)), self.peek[v].eq(pp.data)]
            else:
                slot = self._registered_slot
                m.d.comb += self.front[v].eq(slot(m, f"front{v}", 0, B, self.w_data, tail[v], after1[v], write, pop, count))
                if self.peek_width:
                    m.d.comb += self.peek[v].eq(slot(m, f"peek{v}", 1, B, self.w_peek, tail[v], after2[v], write, pop,
                                                     count))
            if self.count_flags:
                flags = flags_for(count, self.count_flags, f"count{v}")
                above_flags(m, count, write, pop, flags)
                m.d.comb += self.count_gt[v].eq(Cat(*flags))
        tails = [t for t in tail]
        tail_sel = Signal(range(B))
        for v in range(V):
            with m.If(wvc == v):
                m.d.comb += tail_sel.eq(tails[v])
        full = Signal()
        for v in range(V):
            with m.If(wvc == v):
                m.d.comb += full.eq(self.count[v] == B + self._slack)
        waddr = Signal(range(V * B), name="w_addr")       # the shared memories' write address
        m.d.comb += [waddr.eq(index2(wvc, tail_sel, B)), self.overflow.eq(self.w_valid & full)]
        if not reg:
            for mem, data in ((shared, self.w_data), (shared_peek, self.w_peek)) if self.peek_width else \
                    ((shared, self.w_data),):
                wp = mem.write_port()
                m.d.comb += [wp.addr.eq(waddr), wp.data.eq(data), wp.en.eq(self.w_valid & ~full)]
        if self.body_width:
            self._body(m, head, waddr, full)
        return m

    def _body(self, m, head, waddr, full):
        """The body memories (`body_width` bits per entry, the first `body_block_bits` of them in
        block RAM): written at the FIFO's write address `waddr` unless the VC is `full`, read at
        the head of VC `rd_vc` into `rd_body` (a registered address with `body_sync`)."""
        V, B = self.vcs, self.depth
        rvc = self.rd_vc if V > 1 else Const(0, 1)
        head_sel = Signal(range(B))
        for v in range(V):
            with m.If(rvc == v):
                m.d.comb += head_sel.eq(head[v])
        addr = Signal(range(V * B), name="rd_addr")
        m.d.comb += addr.eq(index2(rvc, head_sel, B))
        addr_r = addr
        if self.body_sync:
            # the address is registered, the read itself is in the next cycle: the LUTRAM
            # read is then off the path that chooses the address (the switch allocator)
            addr_r = Signal(range(V * B), name="rd_addr_r")
            m.d.sync += addr_r.eq(addr)
        k = self.body_block_bits
        parts = [(BLOCK_MEMORY, 0, k, {"ram_style": "block", "no_rw_check": 1}), ("body", k, self.body_width, None)]
        for name, lo, hi, attrs in parts:
            if hi == lo:
                continue
            mem = Memory(shape=hi - lo, depth=V * B, init=[], attrs=attrs)
            m.submodules[name] = mem
            bw = mem.write_port()
            write = (waddr, self.w_body[lo:hi], self.w_valid & ~full)
            if self.body_sync and not attrs:
                write = self._registered_write(m, name, *write)
            m.d.comb += [bw.addr.eq(write[0]), bw.data.eq(write[1]), bw.en.eq(write[2])]
            if attrs:
                rp = mem.read_port(domain="sync")          # its address register is the RAM's
                m.d.comb += rp.addr.eq(addr)
            else:
                rp = mem.read_port(domain="comb")
                m.d.comb += rp.addr.eq(addr_r)
            m.d.comb += self.rd_body[lo:hi].eq(rp.data)


__all__ = ["VCBuffer", "BLOCK_MEMORY", "BLOCK_RAM_YOSYS"]
