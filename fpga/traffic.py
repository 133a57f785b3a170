"""On-chip traffic for FPGA prototypes: generators, checkers and their bit-exact Python model.

Payload. Every flit carries `payload_word(layout, src, src_ep, packet, seq)`: the message
`seq | packet << s | src_ep << (s+k) | src << (s+k+w)` (field widths of the flit layout: s = seq,
k = packet, 16 unless `RouterParams.packet_id_bits` says otherwise, w = src_ep), M bits, spread
over the payload's W bits (`spread`): with W >= M, copies of the message side by side, every
other copy inverted, cut to W (every payload wire carries both values, neighbouring copies
differ, and the payload names its packet and index exactly); with W < M, the message folded onto
W bits by XOR (bit j: the XOR of the message bits i = j mod W), so every field still moves it.
`PayloadWord` is the same function as logic, derived from the Python function on the unit
vectors (`affine_logic`): wires and inverters for W >= M, a few XORs below. A checker compares
the whole payload, so a flit of another packet, out of order, or with a flipped bit is an error.

Random numbers. 32-bit Galois LFSRs (x^32+x^22+x^2+x+1, `lfsr_next`); each generator has two,
seeded from its 32-bit seed (`seed_pair`). The Bernoulli LFSR advances 8 steps every enabled
cycle: a packet is created when its low byte (before the step) is < `load`, unless the budget
(packets created since the last 'C' or 'N') is used up or the pattern maps the endpoint onto itself.
A packet decided in enabled cycle t enters the generator's backlog in t + 1, its creation cycle:
the decision hangs off the status block's `running`, broadcast across the chip to every
generator, and registering it keeps that net off the path into the send logic (the 14-router
network's critical path, docs/fpga_results_log.md). The settings a trial reads (load, budget,
pattern and shift) are registered in every generator: they apply a cycle after they are set.
The destination LFSR advances 32 steps per packet sent (in hardware 32/L with every flit when
L divides 32, else 32 with the head: the same state at every head), and each head draws from it:

  endpoint generators, pattern 0 (uniform): d = (r[0:16]·(E-1)) >> 16, dst = d + (d >= e);
  pattern 1 (shift): dst = (e + shift) mod E (shift < E, reduced by the status block; shift 0
  maps every endpoint onto itself, which then creates nothing);
  neighbour emulators (RouterTrafficTop): dst router dsts[(r[0:12]·len(dsts)) >> 12] of its
  destination list `dsts` (every router but the neighbour, or with a minimal routing those of them
  whose route at the router under test does not lead back to the neighbour), source router
  (r[12:24]·(n-1)) >> 12 skipping the router under test, dst_ep and src_ep (r[24:28]·p) >> 4
  and (r[28:32]·p) >> 4; and, with x = r ^ (r >> 13), the header fields an upstream router
  could have set: inter (x[0:12]·n) >> 12 (any router), hops 1 + x[12],
  phase x[13]. (The min and PolarStar units ignore inter and phase, the Polarized unit routes a
  phase-0 head minimally; randomizing them keeps the router's storage and logic for every header
  bit alive in a single-router synthesis. A field the layout does not carry, contract.flit
  OPTIONAL_FIELDS, takes none of these bits.)

`GeneratorModel` replays this in Python: the packets (source endpoint, destination endpoint,
creation cycle = decision cycle + 1) the hardware creates, for `sim.network_sim.NetworkSim.add_packets`. It is exact
while no backlog saturates (the backlog holds 65,535 packets; a packet created into a full
backlog is lost, a pulse on the generator's `lost` output that lights LED3 of the tops) and while
pattern / shift do not change with packets queued.

`TrafficGenerator` follows the endpoint rules of docs/microarchitecture.md as
cosim/endpoints.py does: credits per local input VC initialised to B, returned by the
router's credit stream (visible the next cycle); a packet takes the VC with the most credits
(ties: lowest) when its head is sent and keeps it; one flit per cycle; a packet created in cycle
t can send its head in t. `TrafficChecker` checks every flit it sees (see its docstring).
Neither counts: each gives a pulse per packet (and the checker per error), which the tops count
in the status block's `fpga.counter_bank.CounterBank` (packets sent and received 32 bits, errors
16, saturating).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hdl.arbiter import one_hot_index
from hdl.counter_flags import above, above_flags, flags_for, next_flag
from hdl.delay import KEEP
from hdl.gf import const_mul, div_const
from hdl.router import credit_signature, flit_signature
from contract.flit import HOPS_BITS, OPTIONAL_FIELDS, index_bits, head_only_fields
from contract.params import RouterParams

LFSR_TAPS = 0x80200003              # x^32 + x^22 + x^2 + x + 1 (primitive), Galois, shifting right
BERN_STEPS = 8                      # LFSR steps per enabled cycle (one fresh byte per trial)
DEST_STEPS = 32                     # LFSR steps per packet start
PATTERNS = {"uniform": 0, "shift": 1}
MASK32 = 0xFFFFFFFF


# ---- reference functions (Python) ----------------------------------------------------------
def lfsr_next(state: int, steps: int = 1) -> int:
    for _ in range(steps):
        state = (state >> 1) ^ (LFSR_TAPS if state & 1 else 0)
    return state


def seed_pair(seed: int) -> tuple[int, int]:
    """(Bernoulli LFSR, destination LFSR) initial states of a generator with this seed."""
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 < seed <= MASK32:
        raise ValueError(f"seed={seed!r}: must be an integer in 1..2^32-1")
    d = lfsr_next(seed ^ 0x6A09E667, 32) or 1
    return seed, d


def default_seeds(n: int) -> list[int]:
    return [((i + 1) * 0x9E3779B1) & MASK32 or 1 for i in range(n)]


def payload_fields(layout: data.StructLayout) -> list[tuple[str, int]]:
    """The fields a payload is made of, LSB first, with their widths."""
    return [(k, layout[k].width) for k in ("seq", "packet", "src_ep", "src")]


def spread(msg: int, msg_bits: int, bits: int) -> int:
    """`msg` (msg_bits wide) spread over `bits` payload bits: copies side by side, every other
    one inverted, when it fits; else folded onto `bits` by XOR (module docstring)."""
    if bits >= msg_bits:
        ones = (1 << msg_bits) - 1
        out = 0
        for k, lo in enumerate(range(0, bits, msg_bits)):
            out |= (msg ^ (ones if k & 1 else 0)) << lo
        return out & ((1 << bits) - 1)
    out = 0
    for lo in range(0, msg_bits, bits):
        out ^= (msg >> lo) & ((1 << bits) - 1)
    return out


def payload_word(layout: data.StructLayout, src: int, src_ep: int, packet: int, seq: int) -> int:
    """The payload every flit of packet (src, src_ep, packet) carries at index seq."""
    vals = {"src": src, "src_ep": src_ep, "packet": packet, "seq": seq}
    msg, off = 0, 0
    for k, w in payload_fields(layout):
        msg |= (int(vals[k]) & ((1 << w) - 1)) << off
        off += w
    return spread(msg, off, layout["payload"].width)


def bernoulli(state: int, load: int) -> tuple[bool, int]:
    """One enabled cycle of the Bernoulli LFSR: (packet created?, next state)."""
    return (state & 0xFF) < load, lfsr_next(state, BERN_STEPS)


def draw_endpoint(state: int, e: int, E: int, pattern: int, shift: int) -> tuple[int, int]:
    """Destination endpoint of endpoint e's next packet: (dst, next destination-LFSR state)."""
    if pattern == 1:
        dst = (e + shift) % E
    else:
        d = ((state & 0xFFFF) * (E - 1)) >> 16
        dst = d + (d >= e)
    return dst, lfsr_next(state, DEST_STEPS)


def every_router_but(nb: int, n: int) -> list[int]:
    """The destinations of a neighbour emulator that may send anywhere: every router but its own."""
    return [d for d in range(n) if d != nb]


def draw_neighbour(state: int, me: int, nb: int, n: int, p: int, dsts=None) -> tuple[dict, int]:
    """Fields of a neighbour emulator's next packet (RouterTrafficTop), and the next state.
    dsts: the routers it sends to, in order (None: `every_router_but(nb, n)`)."""
    dsts = every_router_but(nb, n) if dsts is None else dsts
    d = ((state & 0xFFF) * len(dsts)) >> 12
    s = (((state >> 12) & 0xFFF) * (n - 1)) >> 12
    x = state ^ (state >> 13)
    f = {"dst": dsts[d], "src": s + (s >= me), "dst_ep": (((state >> 24) & 0xF) * p) >> 4,
         "src_ep": (((state >> 28) & 0xF) * p) >> 4, "inter": ((x & 0xFFF) * n) >> 12, "hops": 1 + (x >> 12 & 1),
         "phase": x >> 13 & 1}
    return f, lfsr_next(state, DEST_STEPS)


class GeneratorModel:
    """The endpoint generators of a traffic top, in Python (bit-exact LFSRs).

    E: endpoints of the network; seeds: one per generator (the tops' `seeds`); endpoints: the
    global endpoint index of each generator (default 0..E-1). `run(cycles, ...)` replays that
    many enabled cycles (from where the previous call stopped) and returns the packets created,
    [(source endpoint, destination endpoint, cycle)] sorted by cycle then source: the creation
    cycle, one after the enabled cycle that decided the packet (the module docstring), counted
    from the first enabled cycle of this call plus `start`. A packet decided in the last enabled
    cycle is created in the cycle after it. `clear()` is the 'C' or 'N' command (the
    budget counts packets created since the last of them).
    """

    def __init__(self, E: int, seeds=None, endpoints=None):
        self.E = int(E)
        self.endpoints = list(range(self.E)) if endpoints is None else [int(e) for e in endpoints]
        seeds = default_seeds(len(self.endpoints)) if seeds is None else list(seeds)
        if len(seeds) != len(self.endpoints):
            raise ValueError(f"seeds: {len(seeds)} given for {len(self.endpoints)} generators")
        pairs = [seed_pair(s) for s in seeds]
        self.bern = [b for b, _ in pairs]
        self.dest = [d for _, d in pairs]
        self.created = [0] * len(self.endpoints)

    def clear(self):
        self.created = [0] * len(self.endpoints)

    def run(self, cycles: int, load: int, pattern="uniform", shift: int = 0, budget: int = 0, start: int = 0):
        if pattern not in PATTERNS and pattern not in PATTERNS.values():
            raise ValueError(f"pattern={pattern!r}: must be one of {', '.join(PATTERNS)} (or 0, 1)")
        pat = PATTERNS.get(pattern, pattern)
        shift = int(shift) % self.E
        out = []
        for t in range(int(cycles)):
            for i, e in enumerate(self.endpoints):
                hit, self.bern[i] = bernoulli(self.bern[i], load)
                if hit and (budget == 0 or self.created[i] < budget) and not (pat == 1 and shift == 0):
                    self.created[i] += 1
                    dst, self.dest[i] = draw_endpoint(self.dest[i], e, self.E, pat, shift)
                    out.append((e, dst, start + t + 1))
        return out


class NeighbourModel:
    """The neighbour emulators of a RouterTrafficTop in Python: `run(cycles, load, budget)` ->
    [(port, fields, cycle)], fields = {src, src_ep, dst, dst_ep, inter, hops, phase} as
    `draw_neighbour` gives them, cycle the creation cycle as for GeneratorModel."""

    def __init__(self, seeds, ports, neighbours, router: int, n: int, p: int, dsts=None):
        pairs = [seed_pair(s) for s in seeds]
        self.bern = [b for b, _ in pairs]
        self.dest = [d for _, d in pairs]
        self.ports, self.neighbours = list(ports), list(neighbours)
        self.dsts = list(dsts) if dsts is not None else [None] * len(self.ports)
        self.router, self.n, self.p = router, n, p
        self.created = [0] * len(self.ports)

    def clear(self):
        self.created = [0] * len(self.ports)

    def run(self, cycles: int, load: int, budget: int = 0, start: int = 0):
        out = []
        for t in range(int(cycles)):
            for i, port in enumerate(self.ports):
                hit, self.bern[i] = bernoulli(self.bern[i], load)
                if hit and (budget == 0 or self.created[i] < budget):
                    self.created[i] += 1
                    f, self.dest[i] = draw_neighbour(self.dest[i], self.router, self.neighbours[i], self.n, self.p,
                                                     self.dsts[i])
                    out.append((port, f, start + t + 1))
        return out


# ---- logic generated from the reference functions ------------------------------------------
def affine_masks(fn, in_width: int, out_width: int) -> tuple[int, list[int]]:
    """fn affine over GF(2) -> (constant, per output bit the mask of input bits XORed into it)."""
    c = fn(0)
    masks = [0] * out_width
    for i in range(in_width):
        d = fn(1 << i) ^ c
        for j in range(out_width):
            if d >> j & 1:
                masks[j] |= 1 << i
    return c, masks


def affine_logic(x, fn, in_width: int, out_width: int):
    """The value fn(x) as XOR logic (fn must be affine over GF(2), e.g. LFSR steps or `spread`)."""
    c, masks = affine_masks(fn, in_width, out_width)
    bits = []
    for j in range(out_width):
        b = (x & Const(masks[j], in_width)).xor() if masks[j] else Const(0, 1)
        bits.append(b ^ ((c >> j) & 1))
    return Cat(*bits)


def lfsr_logic(state, steps: int):
    return affine_logic(state, lambda s: lfsr_next(s, steps), 32, 32)


class PayloadWord(wiring.Component):
    """payload = payload_word(layout, src, src_ep, packet, seq), combinational."""

    def __init__(self, layout: data.StructLayout):
        self.layout = layout
        self.fields = payload_fields(layout)
        members = {k: In(w) for k, w in self.fields}
        members["payload"] = Out(layout["payload"].width)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        width = sum(w for _, w in self.fields)
        pb = len(self.payload)
        if pb:
            msg = Cat(*[getattr(self, k) for k, _ in self.fields])
            m.d.comb += self.payload.eq(affine_logic(msg, lambda v: spread(v, width, pb), width, pb))
        return m


def control_layout(E: int) -> data.StructLayout:
    """What the status block tells every generator: the settings, the strobes, and the settings'
    `derived_controls`."""
    return data.StructLayout({"running": 1, "load": 8, "pattern": 1, "shift": max(8, index_bits(E)),
                              "budget": 16, "clear": 1, "restart": 1, "unlimited": 1, "selfmap": 1})


def derived_controls(pattern, shift, budget) -> dict:
    """What every generator's trial reads of the settings, worked out once in the status block
    (a register each) instead of in every generator: the budget is 0 (no limit), the pattern
    maps every endpoint onto itself (shift by 0). Of ints or of Amaranth values."""
    return {"unlimited": budget == 0, "selfmap": (pattern == 1) & (shift == 0)}


# the controls at reset: paused, every setting 0 (status.py), and what follows from that
CONTROL_INIT = {k: int(v) for k, v in derived_controls(0, 0, 0).items()}


class TrafficGenerator(wiring.Component):
    """One traffic source: an endpoint (`kind="endpoint"`) or an emulated neighbour router
    feeding a network input port (`kind="neighbour"`).

    flit     Out  valid + flit into the router's input port
    credit   In   the router's credit_out of that port
    ctl      In   control_layout(E) from the status block; a budget is counted from the last
                  `restart` strobe, so a new budget comes with one (the status block's 'N' does)
    corrupt  In   strobe: flip payload bit 0 of the next flit sent
    tail_sent Out a tail was sent in the previous cycle (a registered pulse: the top's counters,
                  fpga.counter_bank, take it across the chip)
    lost     Out  a packet is lost to a full backlog in this cycle
    create   Out  a packet is created this cycle (for tests)

    Endpoint kind: router = its router, ep = its local index, e = its global endpoint index,
    E endpoints, `ep_router` / `ep_local` = router and local index of every endpoint (hops 0,
    inter 0, phase 1). Neighbour kind: router = the router under test, neighbour = the emulated
    router, p endpoints on every router, dsts = the routers it sends to (None: every router but
    the neighbour); header fields as the module docstring says.
    backlog_bits: width of the backlog counter, which holds 2^backlog_bits - 1 packets (default
    16; tests use a small one to fill it).
    """

    def __init__(self, layout: data.StructLayout, params: RouterParams, *, kind: str, seed: int,
                 router: int, E: int, num_routers: int, ep: int = 0, e: int = 0, ep_router=None,
                 ep_local=None, neighbour: int = 0, p: int = 1, registered_draws: bool = True,
                 backlog_bits: int = 16, dsts=None):
        if kind not in ("endpoint", "neighbour"):
            raise ValueError(f"kind={kind!r}: must be 'endpoint' or 'neighbour'")
        if not isinstance(backlog_bits, int) or isinstance(backlog_bits, bool) or not 1 <= backlog_bits <= 16:
            raise ValueError(f"backlog_bits={backlog_bits!r}: must be an integer in 1..16")
        self.backlog_bits = backlog_bits
        self.layout, self.params, self.kind = layout, params, kind
        self.lean = bool(head_only_fields(layout))
        self.registered_draws = registered_draws
        self.seeds = seed_pair(seed)
        self.router, self.ep, self.e, self.E, self.n = router, ep, e, E, num_routers
        self.ep_router, self.ep_local = ep_router, ep_local
        self.neighbour, self.p = neighbour, p
        self.dsts = every_router_but(neighbour, num_routers) if dsts is None else [int(d) for d in dsts]
        if kind == "neighbour" and not (self.dsts and all(0 <= d < num_routers for d in self.dsts)):
            raise ValueError(f"dsts={dsts!r}: must be a non-empty list of router ids in 0..{num_routers - 1}")
        super().__init__({"flit": Out(flit_signature(layout)), "credit": In(credit_signature(params.vcs)),
                          "ctl": In(control_layout(E), init=CONTROL_INIT), "corrupt": In(1), "tail_sent": Out(1),
                          "lost": Out(1), "create": Out(1)})

    def _scaled(self, m, name, state, state_now, state_next, lo, n, scale, shift, advance, table=None):
        """(state[lo:lo+n] · scale) >> shift, where `state` is the LFSR state at reset (an int),
        `state_now` its value now and `state_next` the value it takes when `advance`; with `table`
        (a list of ints), the entry it indexes. With `registered_draws` the result is held in a
        register that follows the state: equal to the combinational one at all times, but off the
        path into the router (ECP5 Fmax). Without, it is the combinational one (fewer flip-flops:
        the iCE40 UP5K is full). Registered and without a table, the product is a `*` between two
        registers, which synthesis maps to a DSP block (ECP5 MULT18X18D); else a sum of shifted
        copies (`const_mul`): a table behind a DSP's 3.9 ns was a 12.4 ns path on the ECP5."""
        top = (((1 << n) - 1) * scale) >> shift
        width = max(1, (max(table) if table is not None else top).bit_length())
        dsp = self.registered_draws and table is None

        def value(x):
            bits = x[lo:lo + n]
            product = (bits * scale if dsp else const_mul(bits, scale)) >> shift
            return product if table is None else Array([Const(t, width) for t in table])[product]
        if not self.registered_draws:
            return value(state_now)
        at_reset = (((state >> lo) & ((1 << n) - 1)) * scale) >> shift
        reg = Signal(width, init=table[at_reset] if table is not None else at_reset, name=name)
        with m.If(advance):
            m.d.sync += reg.eq(value(state_next))
        return reg

    def _draw(self, m, r, r_next, advance):
        """Header fields (dst, dst_ep, src, src_ep, inter, hops, phase) drawn from the destination
        LFSR state r (which becomes r_next when `advance`); see the module docstring."""
        lay = self.layout
        rb, eb = lay["dst"].width, lay["dst_ep"].width
        dst, dst_ep = Signal(rb, name="draw_dst"), Signal(eb, name="draw_dst_ep")
        src, src_ep = Signal(rb, name="draw_src"), Signal(eb, name="draw_src_ep")
        r0 = self.seeds[1]
        x0, x_now, x_next = r0 ^ (r0 >> 13), r ^ (r >> 13), r_next ^ (r_next >> 13)

        def scaled(name, lo, n, scale, shift, x=False, table=None):
            return self._scaled(m, name, x0 if x else r0, x_now if x else r, x_next if x else r_next,
                                lo, n, scale, shift, advance, table)

        if self.kind == "endpoint":
            E, e = self.E, self.e
            gb = index_bits(E)
            d = scaled("draw_d", 0, 16, E - 1, 16)
            g = Signal(gb, name="draw_g")
            # the shift pattern's destination and the pattern, registered from the status block's
            # settings: read directly, its control register's net across the chip and the carry
            # chains were net26's critical path into its routers' input buffers (seeds 1-3); a
            # setting applies a cycle later (settings are made while paused, status.py). The
            # pattern's copies are equal in every generator: unless kept, synthesis merged them
            # into one flip-flop whose net reached every router (net26's longest path at a seed)
            # (e + shift) mod E for shift < E: shift + e below E - e, else shift - (E - e); the
            # compare is with a constant (LUTs only) and one adder takes either offset (two carry
            # chains and a compare fewer than adding, comparing and subtracting E)
            by_shift = Signal(gb, init=e, name="draw_g_shift")
            use_shift = Signal(name="draw_use_shift", attrs=KEEP)      # one per generator
            wraps = above(self.ctl.shift, E - e - 1)          # shift >= E - e
            offset = Mux(wraps, Const((e - E) % (1 << gb), gb), Const(e, gb))
            m.d.sync += [by_shift.eq((self.ctl.shift[:gb] + offset)[:gb]), use_shift.eq(self.ctl.pattern)]
            m.d.comb += g.eq(Mux(use_shift, by_shift, d + above(d, e - 1)))
            pr = np.asarray(self.ep_router, dtype=np.int64)
            pl = np.asarray(self.ep_local, dtype=np.int64)
            per = np.bincount(pr)
            if len(set(per.tolist())) == 1:                 # p endpoints on every router
                q, rem = div_const(g, int(per[0]), E - 1)
                m.d.comb += [dst.eq(q), dst_ep.eq(rem)]
            else:
                m.d.comb += [dst.eq(Array([Const(int(x), rb) for x in pr])[g]),
                             dst_ep.eq(Array([Const(int(x), eb) for x in pl])[g])]
            # constants: the flit takes them as they are (not through the per-packet registers),
            # so synthesis folds them into the payload
            return dst, dst_ep, Const(self.router, rb), Const(self.ep, eb), Const(0, rb), Const(0, HOPS_BITS), Const(1, 1)
        n, p = self.n, self.p
        if self.dsts == every_router_but(self.neighbour, n):        # an adder, not a table
            d = scaled("draw_d", 0, 12, n - 1, 12)
            m.d.comb += dst.eq(d + above(d, self.neighbour - 1))
        else:
            m.d.comb += dst.eq(scaled("draw_dst", 0, 12, len(self.dsts), 12, table=self.dsts))
        s_ = scaled("draw_s", 12, 12, n - 1, 12)
        inter = scaled("draw_inter", 0, 12, n, 12, x=True)
        x_bits = scaled("draw_x", 12, 2, 1, 0, x=True)
        m.d.comb += [src.eq(s_ + above(s_, self.router - 1)),
                     dst_ep.eq(scaled("draw_dst_ep", 24, 4, p, 4)), src_ep.eq(scaled("draw_src_ep", 28, 4, p, 4))]
        hops = Signal(HOPS_BITS, name="draw_hops")
        phase = Signal(name="draw_phase")
        m.d.comb += [hops.eq(1 + x_bits[0]), phase.eq(x_bits[1])]
        return dst, dst_ep, src, src_ep, inter, hops, phase

    def _send(self, m, packet, flags, create):
        """`send`: the flit goes this cycle. From registers worked out in the cycle before from
        the values the state takes (`packet`: mid, tail, cur_oh, best_oh, vc_oh; `flags`: the
        credits' and the backlog's (> 0, > 1) flags): `queued`, a flit of the backlog or of the
        packet started goes, or `at_head`, a packet created now may go (then `send` = `queued` |
        `create` & `at_head`). The same as deciding from the state now; decided so, the send logic
        reached the router's input logic and back into the generator's credits (the harness's
        longest path on the ECP5, at net26 and the target router). Two copies, which synthesis
        keeps (`KEEP`): one for the generator's state, one for the flit's valid at the router.
        `create` is ORed in after the registers: from the creation logic, by the status block,
        into the register by the router was the longest path when it went into them."""
        mid, tail, cur_oh, best_oh, vc_oh = packet
        credit_gt, backlog_gt = flags
        V = self.params.vcs
        copies = []
        for name in ("send", "send_valid"):
            queued, at_head = Signal(name=f"{name}_queued", attrs=KEEP), Signal(name=f"{name}_at_head", attrs=KEEP)
            s = Signal(name=name)
            m.d.comb += s.eq(queued | (create & at_head))
            copies.append((queued, at_head, s))
        send = copies[0][2]
        inc = [self.credit.valid & (self.credit.payload == v) for v in range(V)]
        # the registers' next values worked out for either outcome of `send` (which reads them and
        # `create`), then chosen by it: `send` is then one level before the flip-flops, not
        # before the credits' flags and the VC choice
        outcome = []
        for sent in (False, True):
            start = ~mid if sent else Const(0, 1)
            nz_next = Cat(*[next_flag(inc[v], vc_oh[v] if sent else Const(0, 1), credit_gt[v], 0) for v in range(V)])
            backlog_next = next_flag(create & ~start, start & ~create, backlog_gt, 0)
            mid_next = ~tail if sent else mid
            cur_next = vc_oh if sent else cur_oh          # sent: the packet's VC, or best_oh at its start
            outcome.append((Mux(mid_next, (cur_next & nz_next).any(), backlog_next & nz_next.any()),
                            ~mid_next & nz_next.any()))
        (queued_held, at_head_held), (queued_sent, at_head_sent) = outcome
        for queued, at_head, _ in copies:
            m.d.sync += [queued.eq(Mux(send, queued_sent, queued_held)), at_head.eq(Mux(send, at_head_sent, at_head_held))]
        m.d.comb += self.flit.valid.eq(copies[1][2])
        return send

    def elaborate(self, platform):
        m = Module()
        r = self._registers()
        self._creation(m, r)
        self._vc_choice(m, r)
        L = self.params.packet_flits
        mid = r.seq != 0
        vc = Signal(range(self.params.vcs))
        vc_oh = Signal(self.params.vcs)
        m.d.comb += [vc.eq(Mux(mid, r.cur_vc, r.best_vc)), vc_oh.eq(Mux(mid, r.cur_oh, r.best_oh))]
        r.vc, r.vc_oh, r.head, r.tail = vc, vc_oh, ~mid, r.seq == L - 1
        r.send = self._send(m, (mid, r.tail, r.cur_oh, r.best_oh, vc_oh), (r.credit_gt, r.backlog_gt), r.create)
        # the destination LFSR advances DEST_STEPS per packet: DEST_STEPS / L with every flit when
        # L divides it (the same state at every head; a 32-step XOR network is ~170 LUT4, an
        # 8-step one ~25), else all at the head
        per_flit = DEST_STEPS % L == 0
        r.advance = r.send if per_flit else r.send & r.head
        # the LFSR's next state is a register too (the state after `dest`, stepped with it), so
        # the draws registered from it (`_scaled`) start at flip-flops
        r.steps = DEST_STEPS // L if per_flit else DEST_STEPS
        dest_next = Signal(32, init=lfsr_next(self.seeds[1], r.steps))
        r.dest_next = dest_next
        draw = self._draw(m, r.dest, dest_next, r.advance)
        r.fields = dict(zip(r.names, draw))
        self._flit_out(m, r)
        self._step(m, r)
        return m

    def _registers(self) -> SimpleNamespace:
        """The generator's state: LFSRs (`bern`: creation trials, `dest`: draws), the backlog of
        packets created and not started, the packet and flit counters, the credits per VC."""
        prm, lay = self.params, self.layout
        V, B, L = prm.vcs, prm.depth, prm.packet_flits
        bern = Signal(32, init=self.seeds[0])
        dest = Signal(32, init=self.seeds[1])
        backlog = Signal(self.backlog_bits)
        most = (1 << self.backlog_bits) - 1               # packets the backlog holds
        created = Signal(16)
        packet = Signal(lay["packet"].shape)           # wraps at 2^packet_id_bits
        seq = Signal(range(L))
        cur_vc = Signal(range(V))
        names = ("dst", "dst_ep", "src", "src_ep", "inter", "hops", "phase")
        credits = [Signal(range(B + 1), init=B, name=f"credits{v}") for v in range(V)]
        corrupt = Signal()
        return SimpleNamespace(bern=bern, dest=dest, backlog=backlog, most=most, created=created, packet=packet,
                               seq=seq, cur_vc=cur_vc, names=names, credits=credits, corrupt=corrupt)

    def _creation(self, m, r):
        """Packet creation: a Bernoulli trial every enabled cycle; -> r.create (registered),
        r.decide, and the backlog's full flags r.at_most, r.below_most."""
        ctl, most = self.ctl, r.most
        with m.If(ctl.running):
            m.d.sync += r.bern.eq(lfsr_logic(r.bern, BERN_STEPS))
        load, budget, unlimited, selfmap = self._settings(m)
        # the budget is used up when the count since its restart equals it: the count stops there
        # (no trial passes), so equal is "not below", and an equality is LUTs only (a magnitude
        # compare took two carry chains and their feed-ins and feed-outs on the ECP5)
        spent = ~unlimited & (r.created == budget)
        trial = ctl.running & (r.bern[:8] < load) & ~spent & ~selfmap
        lost = Signal()
        decide = Signal()
        create = Signal()                    # registered: the `running` broadcast ends here
        # full: the backlog plus the packet still in `create` hold `most` (the backlog cannot wrap),
        # from two flags kept beside the counter (`backlog == most`, `== most - 1`): the creation
        # logic, by the status block, reads two flip-flops instead of comparing the backlog, which
        # the send logic steps by the router (the loop create -> full -> decide crossed the die
        # twice, the harness's longest path at two seeds on the ECP5-85F, docs/fpga_results_log.md)
        at_most = Signal(name="backlog_at_most")
        below_most = Signal(init=most == 1, name="backlog_at_most_less_1")
        full = at_most | (below_most & create)
        m.d.comb += [lost.eq(trial & full), decide.eq(trial & ~lost), self.create.eq(create), self.lost.eq(lost)]
        m.d.sync += create.eq(decide)
        r.create, r.decide, r.at_most, r.below_most = create, decide, at_most, below_most

    def _settings(self, m):
        """The settings a trial reads (load, budget, and `derived_controls`: whether the budget
        is 0 and the pattern maps the endpoint onto itself), registered in every generator
        (`KEEP`: merged, the copies would be one flip-flop again): read directly, the status
        block's registers, across the chip, reached the generators' creation logic and counters
        (net26's longest paths at two seeds). A setting applies a cycle later; settings are made
        while paused (status.py)."""
        ctl = self.ctl
        load = Signal(8, name="set_load", attrs=KEEP)
        budget = Signal(16, name="set_budget", attrs=KEEP)
        unlimited = Signal(init=1, name="set_unlimited", attrs=KEEP)
        m.d.sync += [load.eq(ctl.load), budget.eq(ctl.budget), unlimited.eq(ctl.unlimited)]
        if self.kind != "endpoint":
            return load, budget, unlimited, Const(0)
        selfmap = Signal(name="set_selfmap", attrs=KEEP)
        m.d.sync += selfmap.eq(ctl.selfmap)
        return load, budget, unlimited, selfmap

    def _vc_choice(self, m, r):
        """The VC with the most credits, ties to the lowest (r.best_oh one-hot, r.best_vc): from
        every pair compared at once (a wins if above every earlier VC and not below any later
        one), and whether VCs and the backlog hold more than 0 and 1 from flags kept beside their
        counters (r.credit_gt, r.backlog_gt): the generator's credit loop (credits -> choice ->
        send -> credits) is then a few logic levels from flip-flops. r.cur_oh: the packet's VC."""
        V, credits = self.params.vcs, r.credits
        r.credit_gt = [flags_for(credits[v], 2, f"credits{v}") for v in range(V)]
        r.backlog_gt = flags_for(r.backlog, 2, "backlog")
        if V > 1:
            r.best_oh = Cat(*[Cat(*[(credits[a] > credits[b]) if b < a else (credits[a] >= credits[b])
                                    for b in range(V) if b != a]).all() for a in range(V)])
            r.best_vc = one_hot_index(m, r.best_oh, V)
        else:
            r.best_oh, r.best_vc = Const(1, 1), Const(0, 1)
        r.cur_oh = Signal(V, init=1, name="cur_vc_oh")

    def _flit_out(self, m, r):
        """The flit: the drawn header fields at a head, held for its body flits (r.cur), and the
        payload word (with the corruption bit)."""
        lay, fields, head = self.layout, r.fields, r.head
        # the packet's drawn header fields, held for its body flits (constants need no register;
        # no reset either: a packet starts with its head, which loads them)
        cur = {k: Signal(lay[k].shape, name=f"cur_{k}", reset_less=True)
               for k, v in fields.items() if not isinstance(v, Const)}
        fl = self.flit.payload
        hdr = {k: v if isinstance(v, Const) else Mux(head, v, cur[k]) for k, v in fields.items()}
        word = PayloadWord(lay)
        m.submodules.payload = word
        m.d.comb += [word.src.eq(hdr["src"]), word.src_ep.eq(hdr["src_ep"]), word.packet.eq(r.packet), word.seq.eq(r.seq)]
        m.d.comb += [fl.head.eq(head), fl.tail.eq(r.tail), fl.vc.eq(r.vc)]
        header = [getattr(fl, k).eq(hdr[k]) for k in fields] + [fl.seq.eq(r.seq), fl.packet.eq(r.packet)]
        if self.lean:                    # contract.flit: a head carries the header, a body the payload
            with m.If(head):
                m.d.comb += header
            with m.Else():
                m.d.comb += fl.payload.eq(word.payload ^ r.corrupt)
        else:
            m.d.comb += header + [fl.payload.eq(word.payload ^ r.corrupt)]
        r.cur = cur

    def _step(self, m, r):
        """The registers' next values: counters, LFSR, backlog and its flags, corruption,
        credits."""
        send, head, tail, create, most = r.send, r.head, r.tail, r.create, r.most
        with m.If(send):
            m.d.sync += r.seq.eq(Mux(tail, 0, r.seq + 1))
            with m.If(head):
                m.d.sync += [r.cur_vc.eq(r.vc), r.cur_oh.eq(r.vc_oh)]
                m.d.sync += [r.cur[k].eq(r.fields[k]) for k in r.cur]
            with m.If(tail):
                m.d.sync += r.packet.eq(r.packet + 1)
        with m.If(r.advance):
            m.d.sync += [r.dest.eq(r.dest_next), r.dest_next.eq(lfsr_logic(r.dest_next, r.steps))]
        start = send & head
        # one adder for both steps (+1, or -1 as all ones), not an incrementer and a decrementer
        with m.If(create ^ start):
            m.d.sync += r.backlog.eq(r.backlog + Mux(start, Const(-1, len(r.backlog)), 1))
        above_flags(m, r.backlog, create & ~start, start & ~create, r.backlog_gt)
        with m.If(create & ~start):
            m.d.sync += [r.at_most.eq(r.below_most), r.below_most.eq(r.backlog == most - 2 if most >= 2 else 0)]
        with m.Elif(start & ~create):
            m.d.sync += [r.at_most.eq(0), r.below_most.eq(r.at_most)]
        # the corruption waits for the next flit with a payload (lean: the next body flit)
        with m.If(send & (~head if self.lean else 1)):
            m.d.sync += r.corrupt.eq(self.corrupt)
        with m.Elif(self.corrupt):
            m.d.sync += r.corrupt.eq(1)
        for v in range(self.params.vcs):
            dec = send & r.vc_oh[v]
            inc = self.credit.valid & (self.credit.payload == v)
            with m.If(dec ^ inc):
                m.d.sync += r.credits[v].eq(r.credits[v] + Mux(dec, Const(-1, len(r.credits[v])), 1))
            above_flags(m, r.credits[v], inc, dec, r.credit_gt[v])
        # packets created since the budget's count restarted ('C' or 'N'); while the budget is 0
        # (no limit) it wraps, unread, and a budget set restarts it
        with m.If(self.ctl.restart):
            m.d.sync += r.created.eq(0)
        with m.Elif(r.decide):
            m.d.sync += r.created.eq(r.created + 1)
        # a registered pulse: it is counted by the status block's counters, across the chip
        m.d.sync += self.tail_sent.eq(send & tail)


class TrafficChecker(wiring.Component):
    """Checks every flit leaving one router output port.

    flit     In   the output port's valid + flit
    tail     Out  the flit of this cycle is a tail (a packet received)
    error    Out  the previous cycle's flit had an error

    The tops count tails and errors in the status block (fpga.counter_bank).

    Errors: payload != payload_word(src, src_ep, packet, seq); head != (seq == 0) or tail !=
    (seq == L-1) or vc >= V; per VC (the flit's `vc`): a head while a packet is open, a body /
    tail with no open packet or with src / src_ep / packet differing from the open packet or seq
    not the next one. mode "eject": dst / dst_ep must name (router, ep). mode "network": dst must
    not be this router (it would have been ejected) and dst < num_routers, dst_ep < p. strict
    (RouterTrafficTop), with net = (mode == network): packets of this router's endpoints (src ==
    router) carry inter 0, phase 1, hops net on the head and 0 on the body; other packets (from
    the emulated neighbours) hops 1 + net or 2 + net on the head, and their body flits the
    head's inter, the head's hops - net, and the head's phase (either phase when the head left
    with phase 0: a Polarized unit clears it at a dead end, docs/microarchitecture.md). Strict
    checks only the optional fields the flits carry (contract.flit.OPTIONAL_FIELDS; hdl.network
    header="all" carries all three).

    Lean flits (contract.flit.FLIT_FORMATS) carry the header in heads only and the payload in bodies
    only: a head is checked for its destination (and strict fields) and seq 0 and opens its
    packet; a body's seq is the next one of its VC's open packet, and its payload must be
    payload_word of that packet's src, src_ep and packet id at that seq, so a body flit of another
    packet, out of order, or corrupted shows as a payload error.
    """

    def __init__(self, layout: data.StructLayout, params: RouterParams, *, mode: str, router: int, ep: int = 0,
                 num_routers: int = 1, p: int = 1, strict: bool = False):
        if mode not in ("eject", "network"):
            raise ValueError(f"mode={mode!r}: must be 'eject' or 'network'")
        self.layout, self.params, self.mode = layout, params, mode
        self.router, self.ep, self.n, self.p, self.strict = router, ep, num_routers, p, strict
        super().__init__({"flit": In(flit_signature(layout)), "tail": Out(1), "error": Out(1)})

    def elaborate(self, platform):
        m = Module()
        V, L = self.params.vcs, self.params.packet_flits
        lay = self.layout
        f = self.flit.payload
        lean = bool(head_only_fields(lay))
        word = PayloadWord(lay)
        m.submodules.payload = word
        is_open = [Signal(name=f"open{v}") for v in range(V)]
        o_src = [Signal(lay["src"].shape, name=f"src{v}") for v in range(V)]
        o_ep = [Signal(lay["src_ep"].shape, name=f"src_ep{v}") for v in range(V)]
        o_pk = [Signal(lay["packet"].shape, name=f"packet{v}") for v in range(V)]
        o_seq = [Signal(lay["seq"].shape, name=f"seq{v}") for v in range(V)]
        sel = (lambda xs: Array(xs)[f.vc]) if V > 1 else (lambda xs: xs[0])
        cont = Signal()
        seq = Signal(lay["seq"].shape)
        if lean:
            # a body flit carries only its payload: its packet is the one its VC's head opened
            # and its index the next one, and the payload of those is what it must carry
            m.d.comb += [seq.eq(Mux(f.head, 0, sel(o_seq) + 1)),
                         cont.eq(Mux(f.head, ~sel(is_open) & (f.seq == 0), sel(is_open)))]
            m.d.sync += [word.src.eq(sel(o_src)), word.src_ep.eq(sel(o_ep)), word.packet.eq(sel(o_pk)),
                         word.seq.eq(seq)]
            needs_payload = ~f.head
            ok = [f.tail == (seq == L - 1), cont]
        else:
            m.d.sync += [word.src.eq(f.src), word.src_ep.eq(f.src_ep), word.packet.eq(f.packet), word.seq.eq(f.seq)]
            m.d.comb += [seq.eq(f.seq),
                         cont.eq(Mux(f.head, ~sel(is_open),
                                     sel(is_open) & (f.src == sel(o_src)) & (f.src_ep == sel(o_ep))
                                     & (f.packet == sel(o_pk)) & (f.seq == sel(o_seq) + 1)))]
            needs_payload = Const(1)
            ok = [f.head == (f.seq == 0), f.tail == (f.seq == L - 1), cont]
        if (1 << len(f.vc)) > V:
            ok.append(f.vc < V)
        if self.mode == "eject":
            dst_ok = (f.dst == self.router) & (f.dst_ep == self.ep)
        else:
            dst_ok = (f.dst != self.router) & (f.dst < self.n) & (f.dst_ep < self.p)
        ok.append(Mux(f.head, dst_ok, 1) if lean else dst_ok)
        carried = [k for k in OPTIONAL_FIELDS if lay[k].width]
        if self.strict and carried:
            net = 1 if self.mode == "network" else 0
            o_inter = [Signal(lay["inter"].shape, name=f"inter{v}") for v in range(V)]
            o_hops = [Signal(HOPS_BITS, name=f"hops{v}") for v in range(V)]
            o_phase = [Signal(name=f"phase{v}") for v in range(V)]
            local = f.src == self.router
            # only the fields the flits carry (contract.flit.OPTIONAL_FIELDS): a field of width 0 reads 0
            local_ok = {"inter": f.inter == 0, "phase": f.phase, "hops": f.hops == net}
            far_ok = {"hops": (f.hops == 1 + net) | (f.hops == 2 + net)}
            body_ok = {"inter": f.inter == sel(o_inter), "hops": f.hops == sel(o_hops) - net,
                       "phase": (f.phase == sel(o_phase)) | ~sel(o_phase)}

            def all_of(terms):
                out = Const(1)
                for k in carried:
                    if k in terms:
                        out = out & terms[k]
                return out
            ok.append(Mux(f.head, Mux(local, all_of(local_ok), all_of(far_ok)), 1 if lean else all_of(body_ok)))
            with m.If(self.flit.valid):
                for v in range(V):
                    with m.If((f.vc == v) & f.head):
                        m.d.sync += [o_inter[v].eq(f.inter), o_hops[v].eq(f.hops), o_phase[v].eq(f.phase)]
        good = Const(1)
        for c in ok:
            good = good & c
        # two stages: in the flit's cycle the fields of the expected payload (those of the flit's
        # packet) and every other check, into registers; in the next the payload compare. The
        # flit's cycle then ends at a register after the VC's field select, not after the payload
        # compare and the AND of every check behind them (the harness's longest path on ECP5);
        # registering the message, not the payload it spreads to, takes M flip-flops, not W
        valid_q, payload_q, needs_q, good_q = Signal(), Signal(len(word.payload)), Signal(), Signal()
        m.d.sync += [valid_q.eq(self.flit.valid), payload_q.eq(f.payload), needs_q.eq(needs_payload), good_q.eq(good)]
        m.d.comb += self.error.eq(valid_q & ~(good_q & (~needs_q | (word.payload == payload_q))))
        with m.If(self.flit.valid):
            for v in range(V):
                with m.If(f.vc == v):
                    m.d.sync += [is_open[v].eq(~f.tail), o_seq[v].eq(seq)]
                    with m.If(f.head if lean else 1):
                        m.d.sync += [o_src[v].eq(f.src), o_ep[v].eq(f.src_ep), o_pk[v].eq(f.packet)]
                    with m.If(~f.head & ~is_open[v]):
                        m.d.sync += is_open[v].eq(0)      # a stray body flit opens nothing
        m.d.comb += self.tail.eq(self.flit.valid & f.tail)
        return m


__all__ = ["LFSR_TAPS", "PATTERNS", "lfsr_next", "seed_pair", "default_seeds", "payload_word", "payload_fields",
           "spread", "bernoulli", "draw_endpoint", "draw_neighbour", "every_router_but", "GeneratorModel",
           "NeighbourModel", "affine_logic", "PayloadWord", "TrafficGenerator", "TrafficChecker", "control_layout"]
