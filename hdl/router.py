"""The input-queued VC router of docs/microarchitecture.md, cycle for cycle with `sim.engine`.

Ports 0..R-1 are network ports, R..R+p-1 the local ports of the p endpoints. Per port and cycle:

  flit_in[i]    In   valid + flit (`contract.flit.flit_layout`, its `vc` field names the input VC)
  flit_out[o]   Out  valid + flit (vc = the output VC, hops + 1 on a head leaving on a network port
                     when the layout carries hops: `contract.flit.OPTIONAL_FIELDS`)
  credit_in[o]  In   valid + vc, network ports only (the endpoint sink never back-pressures)
  credit_out[i] Out  valid + vc: one buffer entry of input VC vc was freed this cycle
  dropped       Out  malformed flits dropped so far
  drops         Out  malformed flits dropped in the previous cycle (the last step of `dropped`):
                     what a network sums, a few bits per router instead of 32
  id            In   the router's own id (absent when `router_id` is given: a constant)

Timing (the contract's "one cycle"): every output is a function of registers only (no path from
an input to an output, so routers wire to each other without combinational loops); a flit or a
credit presented in cycle t is stored at the clock edge that ends t, i.e. visible from t + 1.
That is link_latency = credit_latency = 1; larger latencies add L - 1 input registers.

Route computation happens when a flit arrives (one routing-unit lane per input port) and is
stored with the flit, so a head that reaches the front of its VC in cycle t can request in t.
Stages of cycle t, all from start-of-cycle registers: VA (per input VC the best free candidate
(port, VC of its hop's class, `input_class`), minimum of occupancy + priority, ties to the lowest
port then VC; per output VC a round-robin arbiter over the input VCs i·V + v that can ask for it;
grants take effect at t + 1; with `va_stages = 2` the arbiters take the requests registered in
t - 1 that still hold: input VC without output VC, output VC free), SA
(input-first separable, `alloc_iters` iterations, round-robin arbiters with the contract's
pointer rules), traversal (crossbar, credit decrement, tail releases the output VC; with
`st_stage = 1` the crossbar runs in t + 1 on SA's registered choices, with `st_stage = 2` in
t + 2, the body read registered twice) and credit return.
Malformed flits are dropped by the rule of docs/microarchitecture.md ("Malformed flits"): popped
in a cycle in which their input port sends nothing, their credit returned, and counted on
`dropped`.
"""
from __future__ import annotations

from typing import Callable

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from contract.flit import HOPS_BITS, index_bits
from contract.params import RouterParams

from .arbiter import RoundRobinArbiter, RoundRobinPick, grant_bit, lowest_set_bit, one_hot_index, one_hot_select, winner_select
from .buffer import VCBuffer
from .checks import quiet_on_error
from .crossbar import Crossbar, body_of, front_fields, split_layout
from .counter_flags import above_flags, flags_for, step_flags
from .delay import delay_line
from .delay import register as _reg
from .gf import index2
from .routing_units import RoutingUnit
from .separable_va import separable_va

FLIT_FIELDS = ("head", "tail", "vc", "src", "src_ep", "dst", "dst_ep", "hops", "inter", "phase", "seq",
               "packet", "payload")


def vc_classes_for(routing, vcs: int) -> int:
    """C of the contract: the routing's default VC count (its proven route length), capped at V."""
    return min(int(vcs), max(1, int(routing.default_vcs())))


def class_of_vc(w: int, vcs: int, classes: int) -> int:
    """The class owning VC w: class c owns [c·k, c·k+k), k = V // C; the last class the rest."""
    k = vcs // classes
    return min(w // k, classes - 1)


def input_class(i: int, v_class: int, ports: int, classes: int, step: int = 1) -> int:
    """The class of the next hop of a head at an input VC of class `v_class` of input port i
    (docs/microarchitecture.md, VC classes): 0 at a local port (i >= ports), else `step` classes
    above the class of its VC, capped at C - 1. `step` is the VC policy's class step from port i to the output port
    (`Routing.class_steps`): always 1 for hop classes, where a head that kept the contract arrives
    with h hops on a VC of class min(h-1, C-1) and this is min(h, C-1); 1 at a down-then-up turn
    for turn classes. Being a constant per (input VC, output port), it prunes each output VC's
    VA arbiter to the input VCs that can ask for it."""
    return 0 if i >= ports else min(v_class + step, classes - 1)


def credit_signature(vcs: int) -> stream.Signature:
    return stream.Signature(index_bits(vcs), always_ready=True)


def flit_signature(layout) -> stream.Signature:
    return stream.Signature(layout, always_ready=True)


def _pos_int(name, v, lo=1):
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError(f"{name}={v!r}: must be an integer")
    if v < lo:
        raise ValueError(f"{name}={v!r}: must be >= {lo}")


def running_count(m: Module, step, name: str, width: int = 32):
    """The sum, mod 2^width, of a registered per-cycle increment `step` over the cycles so far: a
    register holding the earlier cycles' sum, plus `step` (the last cycle's). The same value in
    every cycle as adding each increment into a register, but its carry chain starts at
    registers. Router `dropped` and `NetworkTop.dropped` count this way."""
    earlier, now = Signal(width, name=f"{name}_earlier"), Signal(width, name=name)
    m.d.comb += now.eq(earlier + step)
    m.d.sync += earlier.eq(now)
    return now


class Router(wiring.Component):
    """One router; see the module docstring for ports and timing.

    ports: R network ports; endpoints: p local ports; params: RouterParams (V, B, alloc_iters,
    latencies); layout: the flit layout (`contract.flit.flit_layout`, either format); unit: a callable
    `unit(lanes) -> RoutingUnit`; num_routers: N (destinations >= N are malformed);
    vc_classes: C (`vc_classes_for`); router_id: a constant id, or None for an `id` input;
    class_step: R x R class steps (network input port, network output port) of the VC policy
    (`Routing.class_steps()[router]`), or None for hop classes (every step 1); vc_class: the class
    of each VC (the VC policy's `vc_class_table()`), or None for `class_of_vc`; body_block_bits:
    how many bits of each input buffer's body go to block RAM (`hdl/buffer.py`; needs the switch
    traversal stage, st_stage >= 1; capped at the body's width; the same cycles either way);
    registered_fronts: each input VC's front in a register (`VCBuffer(registered_front=True)`, the
    faster router) or read from the port's LUTRAM (the smaller one); the same cycles either way.
    """

    @quiet_on_error
    def __init__(self, ports: int, endpoints: int, params: RouterParams, layout: data.Layout,
                 unit: Callable[[int], RoutingUnit], num_routers: int, vc_classes: int,
                 router_id: int | None = None, class_step=None, vc_class=None, body_block_bits: int = 0,
                 registered_fronts: bool = True):
        _pos_int("ports", ports)
        _pos_int("endpoints", endpoints)
        _pos_int("num_routers", num_routers)
        if not isinstance(params, RouterParams):
            raise TypeError(f"params={params!r}: must be a contract.params.RouterParams")
        if not isinstance(layout, data.Layout) or any(f not in dict(layout) for f in FLIT_FIELDS):
            raise TypeError(f"layout={layout!r}: must be contract.flit.flit_layout(...)")
        _pos_int("vc_classes", vc_classes)
        if vc_classes > params.vcs:
            raise ValueError(f"vc_classes={vc_classes}: more classes than VCs ({params.vcs})")
        if router_id is not None and not (isinstance(router_id, int) and 0 <= router_id < num_routers):
            raise ValueError(f"router_id={router_id!r}: must be None or a router id in 0..{num_routers - 1}")
        if not callable(unit):
            raise TypeError(f"unit={unit!r}: must be a callable lanes -> RoutingUnit")
        if class_step is None:
            class_step = [[1] * ports for _ in range(ports)]
        class_step = [[int(x) for x in row] for row in class_step]
        if len(class_step) != ports or any(len(row) != ports or not set(row) <= {0, 1} for row in class_step):
            raise ValueError(f"class_step: must be None or {ports} x {ports} steps of 0 or 1")
        self.class_step = class_step
        V = params.vcs
        if vc_class is None:
            vc_class = [class_of_vc(w, V, vc_classes) for w in range(V)]
        vc_class = [int(c) for c in vc_class]
        if len(vc_class) != V or sorted(vc_class) != vc_class or set(vc_class) != set(range(vc_classes)):
            raise ValueError(f"vc_class={vc_class}: must give each of the {V} VCs a class, non-decreasing, "
                             f"every class 0..{vc_classes - 1} used")
        self.vc_class = vc_class
        if not isinstance(body_block_bits, int) or isinstance(body_block_bits, bool) or body_block_bits < 0:
            raise ValueError(f"body_block_bits={body_block_bits!r}: must be an integer >= 0")
        if body_block_bits and not params.st_stage:
            raise ValueError(f"body_block_bits={body_block_bits}: block RAM reads take a cycle; needs st_stage >= 1")
        if not isinstance(registered_fronts, bool):
            raise ValueError(f"registered_fronts={registered_fronts!r}: must be True or False")
        self.registered_fronts = registered_fronts
        self.front_fields = front_fields(endpoints)
        self.body_block_bits = min(body_block_bits, split_layout(layout, self.front_fields)[1])
        self.R, self.p = ports, endpoints
        self.P = ports + endpoints
        self.params = params
        self.layout = layout
        self.num_routers = num_routers
        self.C = vc_classes
        self.router_id = router_id
        self.unit = unit(self.P)
        if not isinstance(self.unit, RoutingUnit):
            raise TypeError(f"unit: returned {self.unit!r}, not a RoutingUnit")
        if self.unit.ports != ports:
            raise ValueError(f"unit: has {self.unit.ports} ports, the router {ports}")
        self.id_bits = index_bits(num_routers)
        V = params.vcs
        members = {
            "flit_in": In(flit_signature(layout)).array(self.P),
            "flit_out": Out(flit_signature(layout)).array(self.P),
            "credit_in": In(credit_signature(V)).array(ports),
            "credit_out": Out(credit_signature(V)).array(self.P),
            "dropped": Out(32),
            "drops": Out(range(2 * self.P + 1)),
        }
        if router_id is None:
            members["id"] = In(self.id_bits)
        # credits per (network output, output VC); created here so a formal harness can read them
        B = params.depth
        self.held_credit_error = None      # set by elaborate with the three-stage SA (_held_credits)
        self.credit_counters = [[Signal(range(B + 1), init=B, name=f"credits_{o}_{w}") for w in range(V)]
                                for o in range(ports)]
        if self.unit.loadable:
            members["load"] = In(stream.Signature(self.unit.load_layout, always_ready=True))
        super().__init__(members)

    def _central_va(self, m, ovcs_of, arb_valid, arb_o, arb_w, busy):
        """The central VC allocator: one round-robin arbiter per output VC over the input VCs that
        can hold it, grants in the cycle of the request. Returns (won, set_busy) as
        `separable_va` does."""
        P, V = self.P, self.params.vcs
        NV = P * V
        # requests decoded to output VCs
        req_onehot = []
        for iv in range(NV):
            s = Signal(NV, name=f"req_oh_{iv}")
            m.d.comb += s.eq(Mux(arb_valid[iv], Const(1, NV) << index2(arb_o[iv], arb_w[iv], V), 0))
            req_onehot.append(s)
        va_set = [[None] * V for _ in range(P)]
        va_grant = {}                    # (iv, o, w) -> arbiter (o, w) grants iv this cycle
        # a request of last cycle (va_stages = 2) or one chosen from last cycle's output state
        # (va_choice_stage = 1): its output VC may be taken. The arbiter's answer is then
        # discarded and its pointer kept, exactly as if the requests were masked, but `busy`
        # meets the arbiter's output, not its input
        stale = self.params.va_stages == 2 or self.params.va_choice_stage
        for o in range(P):
            for w in range(V):
                ov = o * V + w
                # the arbiter spans the input VCs that can hold (o, w)
                cand = [iv for iv in range(NV) if (o, w) in ovcs_of[iv]]
                arb = RoundRobinArbiter(len(cand))
                m.submodules[f"va_arb_{o}_{w}"] = arb
                reqs = Cat(*[req_onehot[iv][ov] for iv in cand])
                m.d.comb += [arb.requests.eq(reqs), arb.commit_grant.eq(arb.grant)]
                grant, va_set[o][w] = arb.grant, arb.valid
                if stale:
                    ok = ~busy[o][w]
                    grant, va_set[o][w] = arb.grant & ok.replicate(len(cand)), arb.valid & ok
                m.d.comb += arb.commit.eq(va_set[o][w])
                for k, iv in enumerate(cand):
                    va_grant[iv, o, w] = grant[k]
        # per input VC, the grant bits over the output VCs it can hold: its next output VC one-hot
        # (an input VC requests one output VC, so at most one bit is set)
        return [Cat(*[va_grant[iv, o, w] for o, w in ovcs_of[iv]]) for iv in range(NV)], va_set

    # ---------------------------------------------------------------------------------------
    def _held_credits(self, m, held, held_is, ovcs_of, cred_tables, cin_oh, credits, alloc_valid, va_won, va_granted,
                      sent_oh, frees):
        """Drive each input VC's copy of the credit flags of the output VC it holds (three-stage
        SA). Loaded when the VC wins an output VC, with that VC's flags as they step in this
        cycle: no flit leaves on an output VC nobody holds, so only a returning credit steps
        them. Then stepped as the output VC's own flags are (hdl.counter_flags.step_flags): up
        by a credit returning on it, down by a send on it, which only its holder, this VC, makes.
        All 0 while the VC holds no output VC (cleared when its tail leaves, `frees`), so each
        flag implies `alloc_valid` and eligibility need not read it: one input fewer on the
        switch allocator's input stage, the three-stage SA router's critical path on the ECP5.
        `held_credit_error` is 1 in a cycle where an allocated VC's copy differs from the flags
        it stands for, or a free VC's copy is not 0 (the lockstep tests check it is never set;
        synthesis drops it)."""
        P, V, R = self.P, self.params.vcs, self.R
        k = len(held[0])
        inc = [[cin_oh[o][w] if o < R else Const(0, 1) for w in range(V)] for o in range(P)]
        above_k = [[credits[o][w] > k if o < R else Const(1, 1) for w in range(V)] for o in range(P)]
        # the won output VC's flags after this cycle's step, a returning credit at most
        loaded = [[[Mux(inc[o][w], cred_tables[j - 1][o][w] if j else 1, cred_tables[j][o][w]) for w in range(V)]
                   for o in range(P)] for j in range(k)]
        errors = []
        for i in range(P):
            for v in range(V):
                iv = i * V + v
                h = held[iv]
                won = va_won[iv]
                # the same priorities as alloc_valid's: a tail leaving frees the VC
                with m.If(frees[i][v] | ~(alloc_valid[i][v] | va_granted[iv])):
                    m.d.sync += [h[j].eq(0) for j in range(k)]
                with m.Elif(va_granted[iv]):
                    m.d.sync += [h[j].eq(Cat(*[won[n] & loaded[j][o][w] for n, (o, w) in enumerate(ovcs_of[iv])]).any())
                                 for j in range(k)]
                with m.Else():
                    step_flags(m, held_is(iv, inc), sent_oh[i][v], h, held_is(iv, above_k))
                truth = Cat(*[held_is(iv, cred_tables[j]) for j in range(k)])
                errors.append(Mux(alloc_valid[i][v], Cat(*h) != truth, Cat(*h).any()))
        self.held_credit_error = Signal(name="held_credit_error")
        m.d.comb += self.held_credit_error.eq(Cat(*errors).any())

    def elaborate(self, platform):
        m = Module()
        R, p, P = self.R, self.p, self.P
        prm = self.params
        V, B, C = prm.vcs, prm.depth, self.C
        NV = P * V
        N = self.num_routers
        unit = self.unit
        pb = unit.prio_bits
        my_id = Const(self.router_id, self.id_bits) if self.router_id is not None else self.id
        m.submodules.unit = unit
        m.d.comb += unit.router.eq(my_id)
        if unit.loadable:
            wiring.connect(m, wiring.flipped(self.load), unit.load)

        # a buffer entry: the flit's front fields with the routing unit's answer, beside its body
        # (read only at the VC the switch allocator chose; hdl/buffer.py, hdl/crossbar.py)
        front_layout, body_bits = split_layout(self.layout, self.front_fields)
        entry_fields = {"flit": front_layout, "mask": R, "eject": 1, "bad": 1}
        if pb:
            entry_fields["prio"] = data.ArrayLayout(pb, R)
        entry = data.StructLayout(entry_fields)

        # ---- link inputs (latency - 1 registers) -----------------------------------------
        fin = [delay_line(m, self.flit_in[i].valid, self.flit_in[i].payload, prm.link_latency - 1, f"fin{i}",
                          shape=self.layout) for i in range(P)]
        # returning credits, as a one-hot of their VC per network output (latency - 1 registers),
        # decoded before the last register when there is one (credit_latency >= 2): the credit
        # counters and the held copies of their flags (three-stage SA) read a flip-flop per output
        # VC instead of a decoder of a register across the chip (that router's longest path on the ECP5)
        def credit_one_hot(valid, vc):
            return Cat(*[valid & (vc == w) for w in range(V)])

        cin_oh = []
        for o in range(R):
            cv, cvc = self.credit_in[o].valid, self.credit_in[o].payload
            if prm.credit_latency >= 2:
                cv, cvc = delay_line(m, cv, cvc, prm.credit_latency - 2, f"cin{o}")
                cin_oh.append(_reg(m, credit_one_hot(cv, cvc), f"cin{o}_oh"))
            else:
                oh = Signal(V, name=f"cin{o}_oh")
                m.d.comb += oh.eq(credit_one_hot(cv, cvc))
                cin_oh.append(oh)

        # ---- route computation at arrival, input buffers ----------------------------------
        bufs = []
        fronts = []          # fronts[i][v]: entry View
        count_gt = []
        overflow = []
        for i in range(P):
            valid, fl = fin[i]
            fl = data.View(self.layout, fl) if not isinstance(fl, data.View) else fl
            q = unit.query[i]
            m.d.comb += [q.src.eq(fl.src), q.dst.eq(fl.dst), q.hops.eq(fl.hops), q.inter.eq(fl.inter),
                         q.phase.eq(fl.phase)]
            ent = Signal(entry, name=f"arrive{i}")
            here = fl.dst == my_id
            # every router has p local ports, so no router has endpoint dst_ep >= p: such a head is
            # dropped where it enters (were it routed on, a head without tail would hold the
            # output VCs of its path and take the next packet of its input VC along)
            bad = fl.head & ((fl.dst >= N) | (fl.dst_ep >= p))
            stored = fl
            if unit.escapes:
                stored = Signal(self.layout, name=f"arrive_flit{i}")
                m.d.comb += [stored.eq(fl), stored.phase.eq(fl.phase & ~(fl.head & unit.answer[i].escape))]
            m.d.comb += [getattr(ent.flit, n).eq(getattr(stored, n)) for n, _ in front_layout]
            m.d.comb += [ent.mask.eq(unit.answer[i].mask), ent.eject.eq(here), ent.bad.eq(bad)]
            if pb:
                m.d.comb += ent.prio.eq(unit.answer[i].prio)
            body = Signal(body_bits, name=f"arrive_body{i}")
            m.d.comb += body.eq(body_of(self.layout, stored, self.front_fields))
            # three-stage SA: whether the flit after a VC's front is a tail
            buf = VCBuffer(V, B, entry.size, body_bits, body_sync=bool(prm.st_stage),
                           body_block_bits=self.body_block_bits, peek_width=int(prm.sa_stages == 3),
                           count_flags=prm.sa_stages, registered_front=self.registered_fronts)
            m.submodules[f"buf{i}"] = buf
            m.d.comb += [buf.w_valid.eq(valid), buf.w_data.eq(ent.as_value()), buf.w_body.eq(body)]
            if prm.sa_stages == 3:
                m.d.comb += buf.w_peek.eq(stored.tail)
            if V > 1:
                m.d.comb += buf.w_vc.eq(fl.vc)
            bufs.append(buf)
            fronts.append([data.View(entry, buf.front[v]) for v in range(V)])
            count_gt.append([buf.count_gt[v] for v in range(V)])     # count > 0, > 1, ... (flags)
            overflow.append(buf.overflow)

        # ---- state ------------------------------------------------------------------------
        ob = index_bits(P)
        wb = index_bits(V)
        alloc_valid = [[Signal(name=f"alloc_valid_{i}_{v}") for v in range(V)] for i in range(P)]
        alloc_w = [[Signal(wb, name=f"alloc_w_{i}_{v}") for v in range(V)] for i in range(P)]
        busy = [[Signal(name=f"busy_{o}_{w}") for w in range(V)] for o in range(P)]
        credits = self.credit_counters
        credit_flags = [[flags_for(credits[o][w], prm.sa_stages, f"credits_{o}_{w}") for w in range(V)] for o in range(R)]

        # ---- RC/VA: each input VC picks its best free candidate ---------------------------
        kb = max(1, (B + (1 << pb) - 1).bit_length())           # key = occupancy + priority
        occ = [[Signal(range(B + 1), name=f"occ_{o}_{w}") for w in range(V)] for o in range(R)]
        for o in range(R):
            for w in range(V):
                m.d.comb += occ[o][w].eq(B - credits[o][w])
        cls_of = self.vc_class

        def argmin(leaves, name):
            """leaves: (valid, key, o, w) in (port, vc) order; ties go to the earlier leaf."""
            level = 0
            while len(leaves) > 1:
                nxt = []
                for k in range(0, len(leaves), 2):
                    if k + 1 == len(leaves):
                        nxt.append(leaves[k])
                        continue
                    (va, ka, oa, wa), (vb, kb_, o_b, w_b) = leaves[k], leaves[k + 1]
                    take_a = va & (~vb | (ka <= kb_))
                    nv = Signal(name=f"{name}_l{level}_{k}v")
                    nk = Signal(kb, name=f"{name}_l{level}_{k}k")
                    no = Signal(ob, name=f"{name}_l{level}_{k}o")
                    nw = Signal(wb, name=f"{name}_l{level}_{k}w")
                    m.d.comb += [nv.eq(va | vb), nk.eq(Mux(take_a, ka, kb_)), no.eq(Mux(take_a, oa, o_b)),
                                 nw.eq(Mux(take_a, wa, w_b))]
                    nxt.append((nv, nk, no, nw))
                leaves = nxt
                level += 1
            return leaves[0]

        def argmin_flat(leaves, name, less=None):
            """argmin's answer (valid, o, w) from every pair compared at once: leaf a wins if
            valid, below every valid earlier leaf and not above any valid later one, and the
            winner's (o, w) is an AND-OR of one-hot bits. Two comparator levels and a select
            instead of a comparator and a multiplexer per tree level: the input VCs' choice over
            the ports, whose tree was the longest path of the three-stage SA router on the ECP5.
            `less(a, b)`, if given, is the bit "key of leaf a < key of leaf b" (else compared here)."""
            if less is None:
                def less(a, b):
                    return leaves[a][1] < leaves[b][1]
            # "later leaf a below earlier leaf b", once per pair: both leaves read it
            later_less = {}
            for a in range(len(leaves)):
                for b in range(a):
                    lt = Signal(name=f"{name}_lt{a}_{b}")
                    m.d.comb += lt.eq(less(a, b))
                    later_less[a, b] = lt
            n = len(leaves)
            valid = Signal(n, name=f"{name}_valid")
            m.d.comb += valid.eq(Cat(*[x[0] for x in leaves]))
            win = []
            for a in range(n):
                others = [b for b in range(n) if b != a]
                # a beats every valid other leaf: below the earlier ones, not above the later ones
                lts = Cat(*[later_less[a, b] if b < a else later_less[b, a] for b in others])
                beats = lts ^ Const(sum(1 << k for k, b in enumerate(others) if b > a), len(others))
                w_ = Signal(name=f"{name}_win{a}")
                m.d.comb += w_.eq(valid[a] & (beats | ~Cat(*[valid[b] for b in others])).all() if others else valid[a])
                win.append(w_)
            nv = Signal(name=f"{name}_v")
            no = Signal(ob, name=f"{name}_o")
            nw = Signal(wb, name=f"{name}_w")
            m.d.comb += [nv.eq(Cat(*win).any()), no.eq(one_hot_select(Cat(*win), [x[2] for x in leaves])),
                         nw.eq(one_hot_select(Cat(*win), [x[3] for x in leaves]))]
            return nv, no, nw

        # VA, stage 1 (shared by all input VCs): per network output o and class c, the free VC of
        # class c with the least occupancy (ties to the lowest VC). The priority is per port, so
        # an input VC's best (o, w) is then the best port over these R winners: the same choice
        # as a minimum over all R·V candidates (ties to the lowest port, then VC), at 1/V the cost
        best_v = [[None] * C for _ in range(R)]
        best_k = [[None] * C for _ in range(R)]
        best_w = [[None] * C for _ in range(R)]
        next_k = {}          # va_choice_stage: the value best_k[o][c] is loaded with
        for o in range(R):
            for c in range(C):
                members = [(~busy[o][w], occ[o][w], Const(o, ob), Const(w, wb)) for w in range(V) if cls_of[w] == c]
                bv, bk, _, bw = argmin(members, f"vbest_{o}_{c}")
                if prm.va_choice_stage:
                    # registered: the choice reads last cycle's output state (nothing free after
                    # reset, as in the model); the arbiters check "free" again
                    next_k[o, c] = bk
                    bv, bk, bw = (_reg(m, x, f"vbest_reg_{o}_{c}_{n}") for x, n in ((bv, "v"), (bk, "k"), (bw, "w")))
                best_v[o][c], best_k[o][c], best_w[o][c] = bv, bk, bw
        key_lt = {}

        def best_k_less(a, b):
            """best_k[a] < best_k[b] for (port, class) pairs a, b, with the registered choice: a
            register loaded with the comparison of the values the two keys are loaded with (the
            same bit, also after reset: both keys reset to 0), so the input VCs' choice over the
            ports starts at its comparisons instead of computing them"""
            if (a, b) not in key_lt:
                lt = Signal(name=f"vbest_lt_{a[0]}_{a[1]}_{b[0]}_{b[1]}")
                m.d.sync += lt.eq(next_k[a] < next_k[b])
                key_lt[a, b] = lt
            return key_lt[a, b]

        def next_class(iv, o):
            """The class of the hop of input VC iv's head through network output o (a constant)."""
            i, v = divmod(iv, V)
            return input_class(i, cls_of[v], R, C, self.class_step[i][o] if i < R else 0)

        req_valid = [None] * NV
        req_o = [None] * NV
        req_w = [None] * NV
        local_free = [Cat(*[~busy[R + e][w] for w in range(V)]) for e in range(p)]
        for i in range(P):
            for v in range(V):
                iv = i * V + v
                fr = fronts[i][v]
                fl = fr.flit
                wants = Signal(name=f"wants_{i}_{v}")
                m.d.comb += wants.eq(count_gt[i][v][0] & ~alloc_valid[i][v] & fl.head & ~fr.bad)
                leaves = []
                for o in range(R):
                    cls = next_class(iv, o)
                    key = best_k[o][cls]
                    if pb:       # every comparison reads the sum: one adder per leaf
                        key = Signal(kb, name=f"va_key_{i}_{v}_{o}")
                        m.d.comb += key.eq(best_k[o][cls] + fr.prio[o])
                    leaves.append((fr.mask[o] & best_v[o][cls], key, Const(o, ob), best_w[o][cls]))
                less = None
                if prm.va_choice_stage and not pb:      # the keys are best_k alone
                    pc = [(o, next_class(iv, o)) for o in range(R)]

                    def less(a, b, pc=pc):
                        return best_k_less(pc[a], pc[b])
                nv, no, nw = argmin_flat(leaves, f"va_{i}_{v}", less)
                # ejection: the lowest free VC of local port R + dst_ep
                free = Signal(V, name=f"lfree_{i}_{v}")
                if p > 1:
                    m.d.comb += free.eq(Array(local_free)[fl.dst_ep])
                else:
                    m.d.comb += free.eq(local_free[0])
                low = Signal(V, name=f"llow_{i}_{v}")
                m.d.comb += low.eq(lowest_set_bit(free, V))
                lw = one_hot_index(m, low, V)
                rv = Signal(name=f"req_v_{i}_{v}")
                ro = Signal(ob, name=f"req_o_{i}_{v}")
                rw = Signal(wb, name=f"req_w_{i}_{v}")
                m.d.comb += [
                    rv.eq(wants & Mux(fr.eject, free.any(), nv)),
                    ro.eq(Mux(fr.eject, R + (fl.dst_ep if p > 1 else 0), no)),
                    rw.eq(Mux(fr.eject, lw, nw)),
                ]
                req_valid[iv], req_o[iv], req_w[iv] = rv, ro, rw

        # the requests the VA arbiters see: this cycle's (va_stages = 1) or, registered, last
        # cycle's (va_stages = 2), dropped if their input VC has since been granted an output VC.
        # A request is made only by an unallocated VC, which can only become allocated by this
        # cycle's grant, so the register drops a request granted in the cycle it is made instead of
        # masking it with alloc_valid a cycle later: the same requests, one gate fewer in front of
        # the arbiters (their path ends in the allocation state, the router's longest on ECP5)
        va_granted = [Signal(name=f"va_granted_{iv // V}_{iv % V}") for iv in range(NV)]
        if prm.va_stages == 2:
            arb_valid, arb_o, arb_w = [], [], []
            for i in range(P):
                for v in range(V):
                    iv = i * V + v
                    rv = Signal(name=f"va2_v_{i}_{v}")
                    ro = Signal(ob, name=f"va2_o_{i}_{v}", reset_less=True)     # read only beside rv
                    rw = Signal(wb, name=f"va2_w_{i}_{v}", reset_less=True)
                    m.d.sync += [rv.eq(req_valid[iv] & ~va_granted[iv]), ro.eq(req_o[iv]), rw.eq(req_w[iv])]
                    arb_valid.append(rv)
                    arb_o.append(ro)
                    arb_w.append(rw)
        else:
            arb_valid, arb_o, arb_w = req_valid, req_o, req_w
        # the output VCs input VC iv can hold: every local one, and the network ones of the class of
        # its hop through that output
        ovcs_of = [[(o, w) for o in range(P) for w in range(V) if o >= R or next_class(iv, o) == cls_of[w]]
                   for iv in range(NV)]
        if prm.va_separable:
            va_won, va_set, won_w = separable_va(m, P, V, ovcs_of, arb_valid, arb_o, arb_w, busy)
        else:
            va_won, va_set = self._central_va(m, ovcs_of, arb_valid, arb_o, arb_w, busy)
            won_w = arb_w

        # ---- SA: input-first separable, alloc_iters iterations ----------------------------
        # An allocated input VC keeps its output VC one-hot over ovcs_of[iv] (the grant bits of the
        # VA arbiters, registered): the credit check, the output port it asks the switch for, and
        # the credit and busy updates are then AND-OR reductions of one-hot vectors instead of
        # binary indices decoded and multiplexed on the switch allocator's path (docs/fpga.md)
        alloc_oh = [Signal(len(ovcs_of[iv]), name=f"alloc_oh_{iv // V}_{iv % V}") for iv in range(NV)]

        def held_is(iv, table):
            """table[o][w] (a bit per output VC) at the output VC input VC iv holds."""
            return (alloc_oh[iv] & Cat(*[table[o][w] for o, w in ovcs_of[iv]])).any()

        port_oh = []
        for iv in range(NV):
            po = Signal(P, name=f"alloc_port_{iv // V}_{iv % V}")
            m.d.comb += po.eq(Cat(*[Cat(*[alloc_oh[iv][k] for k, (o2, _) in enumerate(ovcs_of[iv]) if o2 == o]).any()
                                    for o in range(P)]))
            port_oh.append(po)
        # credits > 0 (> 1, > 2 for the pipelined SA's spares) of each network output VC, as flags
        # kept beside the counters (hdl.counter_flags): the input stage reads flip-flops
        # (cred_tables[j][o][w]: credits > j of output VC (o, w); 1 for the local outputs)
        cred_tables = [[[credit_flags[o][w][j] if o < R else Const(1, 1) for w in range(V)] for o in range(P)]
                       for j in range(prm.sa_stages)]
        elig = [[Signal(name=f"elig_{i}_{v}") for v in range(V)] for i in range(P)]
        if prm.sa_stages >= 2:
            # last cycle's nomination per input port (one-hot VC, one-hot output port)
            nom = [Signal(V, name=f"sa_nom_{i}") for i in range(P)]
            nom_port = [Signal(P, name=f"sa_nom_port_{i}") for i in range(P)]
        if prm.sa_stages == 3:
            # last cycle's grant per input port (one-hot VC): the flit it sends in this cycle
            gnt = [Signal(V, name=f"sa_gnt_{i}") for i in range(P)]
        # three-stage SA: each input VC keeps the credit flags (> 0, > 1, > 2) of the output VC it
        # holds in registers of its own, so that its eligibility reads flip-flops instead of
        # selecting the flags of the output VC it holds (an AND-OR over ovcs_of[iv]: three logic
        # levels of the switch allocator's input stage on ECP5). Exact whenever the VC holds an
        # output VC, the only time they are read (`held_credit_error` below checks it)
        held = None
        if prm.sa_stages == 3:
            held = [[Signal(name=f"held_credits_{iv // V}_{iv % V}_gt{j}") for j in range(prm.sa_stages)]
                    for iv in range(NV)]

        def held_flag(iv, j):
            return held[iv][j] if held is not None else held_is(iv, cred_tables[j])

        for i in range(P):
            for v in range(V):
                iv = i * V + v
                credit_ok = held_flag(iv, 0)
                if prm.sa_stages >= 2:
                    # a VC nominated last cycle may send in this one (or, three stages, the
                    # next), one granted last cycle sends in this one: to be nominated again it
                    # needs a flit and a credit to spare for each, and none of those flits (the
                    # front, then the next) may be its tail, so a nomination is still eligible
                    # when it sends
                    spare_ok = held_flag(iv, 1)
                    one = count_gt[i][v][1] & spare_ok & ~fronts[i][v].flit.tail
                    if prm.sa_stages == 3:
                        two = count_gt[i][v][2] & held_flag(iv, 2) & ~fronts[i][v].flit.tail & ~bufs[i].peek[v]
                        ok = Mux(nom[i][v] & gnt[i][v], two, Mux(nom[i][v] | gnt[i][v], one, count_gt[i][v][0] & credit_ok))
                    else:
                        ok = Mux(nom[i][v], one, count_gt[i][v][0] & credit_ok)
                    # held flags are 0 unless the VC holds an output VC (_held_credits), and
                    # every case of `ok` reads one
                    m.d.comb += elig[i][v].eq(ok if held is not None else alloc_valid[i][v] & ok)
                else:
                    m.d.comb += elig[i][v].eq(alloc_valid[i][v] & count_gt[i][v][0] & credit_ok)
        in_arb = []
        out_arb = []
        for i in range(P):
            a = RoundRobinArbiter(V)
            m.submodules[f"sa_in_{i}"] = a
            in_arb.append(a)
        for o in range(P):
            # with one iteration an output arbiter commits exactly its own grant: its next
            # pointer is then computed beside the grant, not after it (own_commit), which the
            # pipelined SA's output stage, between registers, gains most from
            a = RoundRobinArbiter(P, own_commit=prm.alloc_iters == 1, index=True)
            m.submodules[f"sa_out_{o}"] = a
            out_arb.append(a)

        in_done = Const(0, P)
        out_done = Const(0, P)
        sent = [Const(0, 1)] * P
        sent_oh = [Const(0, V)] * P      # the input VC that sent, one-hot
        out_valid = [Const(0, 1)] * P
        out_src = [Const(0, ob)] * P
        out_sel = [Const(0, P)] * P        # out_src one-hot: the crossbar's select
        for it in range(prm.alloc_iters):
            choice_g, choice_port = [], []
            for i in range(P):
                reqs = Signal(V, name=f"sa{it}_inreq_{i}")
                m.d.comb += reqs.eq(Cat(*[elig[i][v] & ~in_done[i] & ~(out_done & port_oh[i * V + v]).any()
                                          for v in range(V)]))
                if it == 0:
                    pick = in_arb[i]
                else:
                    pick = RoundRobinPick(V)
                    m.submodules[f"sa{it}_inpick_{i}"] = pick
                    m.d.comb += pick.mask.eq(in_arb[i].mask)
                m.d.comb += pick.requests.eq(reqs)
                # the chosen VC's output port, one-hot: chosen beside the grant, not after it
                cp = Signal(P, name=f"sa{it}_in_port_{i}")
                m.d.comb += cp.eq(winner_select(reqs, pick.mask, [port_oh[i * V + v] for v in range(V)]))
                if prm.sa_stages >= 2:
                    # the input stage's choice is a nomination for the output stage of the next
                    # cycle, which takes last cycle's nominations as they are
                    m.d.sync += [nom[i].eq(pick.grant), nom_port[i].eq(cp)]
                    cp = nom_port[i]
                    choice_g.append(nom[i])
                else:
                    choice_g.append(pick.grant)
                choice_port.append(cp)
            granted = [Const(0, 1)] * P
            new_out = []
            for o in range(P):
                reqs = Signal(P, name=f"sa{it}_outreq_{o}")
                m.d.comb += reqs.eq(Cat(*[choice_port[i][o] for i in range(P)]))
                if it == 0:
                    pick = out_arb[o]
                else:
                    pick = RoundRobinPick(P, index=True)
                    m.submodules[f"sa{it}_outpick_{o}"] = pick
                    m.d.comb += pick.mask.eq(out_arb[o].mask)
                m.d.comb += pick.requests.eq(reqs)
                for i in range(P):
                    granted[i] = granted[i] | pick.grant[i]
                ov_ = Signal(name=f"sa{it}_out_valid_{o}")
                os_ = Signal(ob, name=f"sa{it}_out_src_{o}")
                sel_ = Signal(P, name=f"sa{it}_out_sel_{o}")
                # an output granted in an earlier iteration gets no requests in this one, so at
                # most one iteration's grant is set
                m.d.comb += [ov_.eq(out_valid[o] | pick.valid), os_.eq(Mux(pick.valid, pick.index, out_src[o])),
                             sel_.eq(out_sel[o] | pick.grant)]
                new_out.append((ov_, os_, pick.valid, sel_))
            for i in range(P):
                s_ = Signal(name=f"sa{it}_sent_{i}")
                so = Signal(V, name=f"sa{it}_sent_oh_{i}")
                m.d.comb += [s_.eq(sent[i] | granted[i]), so.eq(sent_oh[i] | Mux(granted[i], choice_g[i], 0))]
                sent[i], sent_oh[i] = s_, so
            in_done_n = Signal(P, name=f"sa{it}_in_done")
            out_done_n = Signal(P, name=f"sa{it}_out_done")
            m.d.comb += [in_done_n.eq(in_done | Cat(*granted)), out_done_n.eq(out_done | Cat(*[x[2] for x in new_out]))]
            in_done, out_done = in_done_n, out_done_n
            out_valid = [x[0] for x in new_out]
            out_src = [x[1] for x in new_out]
            out_sel = [x[3] for x in new_out]
        for o in range(P):
            m.d.comb += [out_arb[o].commit.eq(out_valid[o]), out_arb[o].commit_grant.eq(out_sel[o])]
        if prm.sa_stages == 3:
            # the output stage's grants are registered: the granted flits are sent (popped,
            # their credits taken, their output VCs freed, read and switched) in the next cycle,
            # so the arbiters' paths end at registers and the sends start at them
            if prm.alloc_iters == 1:
                # each input port works out beside its grant register whether its nomination won,
                # from the nominations and the output arbiters' pointer masks (all registers):
                # one crossing of the router in the cycle instead of the round trip input port ->
                # output arbiter -> input port (docs/fpga.md); the same grant as the arbiters'
                for i in range(P):
                    won = Signal(name=f"sa_won_{i}")
                    m.d.comb += won.eq(Cat(*[grant_bit(a.requests, a.mask, i) for a in out_arb]).any())
                    m.d.sync += gnt[i].eq(nom[i] & won.replicate(V))
            else:
                m.d.sync += [gnt[i].eq(sent_oh[i]) for i in range(P)]      # 0 when nothing was granted
            sent = [gnt[i].any() for i in range(P)]
            sent_oh = gnt
            out_valid = [_reg(m, out_valid[o], f"sa_sent_valid_{o}") for o in range(P)]
            out_sel = [_reg(m, out_sel[o], f"sa_sent_sel_{o}") for o in range(P)]
        # the VC whose front is read (crossbar front, output VC, body read address, pop): with the
        # two-stage SA the port's registered nomination, which is the VC that sends whenever the
        # port sends (else nothing reads it), so the output stage's grant meets only the valid
        # bits and the reads start at a register; with three stages the registered grant
        read_oh = nom if prm.sa_stages == 2 else sent_oh
        read_v = [one_hot_index(m, read_oh[i], V) if V > 1 else Const(0, wb) for i in range(P)]
        for i in range(P):
            m.d.comb += [in_arb[i].commit.eq(sent[i]), in_arb[i].commit_grant.eq(sent_oh[i])]
        # the VC that sends holds its output VC alone, so a flit leaves on (o, w) exactly when the
        # holder of (o, w) sends: the credit to take and (with a tail) the output VC to free
        # a tail leaving frees its VC's output VC
        frees = []
        for i in range(P):
            f_ = Signal(V, name=f"frees_{i}")
            m.d.comb += f_.eq(sent_oh[i] & Cat(*[fronts[i][v].flit.tail for v in range(V)]))
            frees.append(f_)
        holders = {}            # output VC -> [(input VC, its bit of alloc_oh)]
        for iv in range(NV):
            for k, ow in enumerate(ovcs_of[iv]):
                holders.setdefault(ow, []).append((iv, k))

        def on(ow, bits):
            """Whether the holder of output VC ow has its bit of `bits` (per input VC) set."""
            hs = holders.get(ow, [])
            if not hs:
                return Const(0, 1)
            return (Cat(*[bits[iv // V][iv % V] for iv, _ in hs]) & Cat(*[alloc_oh[iv][k] for iv, k in hs])).any()

        # ---- traversal ----------------------------------------------------------------------
        sel_front = []
        sel_w = []
        for i in range(P):
            sf = Signal(front_layout, name=f"sel_front_{i}")
            sw = Signal(wb, name=f"sel_w_{i}")
            if V > 1:
                m.d.comb += [sf.eq(Array(f.flit.as_value() for f in fronts[i])[read_v[i]]),
                             sw.eq(Array(alloc_w[i])[read_v[i]]), bufs[i].rd_vc.eq(read_v[i])]
            else:
                m.d.comb += [sf.eq(fronts[i][0].flit), sw.eq(alloc_w[i][0])]
            sel_front.append(sf)
            sel_w.append(sw)
        # the crossbar: in this cycle, or (st_stage >= 1) st_stage cycles later from registered
        # choices and the buffers' registered body reads (VCBuffer body_sync); with st_stage = 2
        # the body read is registered once more (a block RAM's clock-to-output ends there)
        m.submodules.xbar = xbar = Crossbar(P, V, self.layout, self.front_fields)
        st = prm.st_stage

        def stage(value, name, data=True, cycles=st):
            for k in range(cycles):
                value = _reg(m, value, f"st{k + 1 if k else ''}_{name}", reset_less=data)
            return value

        for i in range(P):
            m.d.comb += [xbar.front[i].eq(stage(sel_front[i], f"front_{i}")), xbar.vc[i].eq(stage(sel_w[i], f"w_{i}")),
                         xbar.body[i].eq(stage(bufs[i].rd_body, f"body_{i}", cycles=max(st - 1, 0)))]
        for o in range(P):
            fl = xbar.out_flit[o]
            m.d.comb += xbar.sel[o].eq(stage(out_sel[o], f"sel_{o}", data=False))     # the output's valid
            out = self.flit_out[o].payload
            m.d.comb += [out.eq(fl), out.vc.eq(xbar.out_vc[o]),
                         self.flit_out[o].valid.eq(stage(out_valid[o], f"valid_{o}", data=False))]
            if o < R:
                hmax = (1 << HOPS_BITS) - 1
                with m.If(fl.head):
                    m.d.comb += out.hops.eq(Mux(fl.hops == hmax, hmax, fl.hops + 1))

        # credits of network outputs
        for o in range(R):
            for w in range(V):
                dec = Signal(name=f"credit_taken_{o}_{w}")
                m.d.comb += dec.eq(on((o, w), sent_oh))
                inc = cin_oh[o][w]
                with m.If(dec & ~inc):
                    m.d.sync += credits[o][w].eq(credits[o][w] - 1)
                with m.Elif(inc & ~dec):
                    m.d.sync += credits[o][w].eq(credits[o][w] + 1)
                above_flags(m, credits[o][w], inc, dec, credit_flags[o][w])
        if held is not None:
            self._held_credits(m, held, held_is, ovcs_of, cred_tables, cin_oh, credits, alloc_valid, va_won, va_granted,
                               sent_oh, frees)

        # ---- malformed flits: dropped when the port sends nothing ----------------------------
        drop = []
        drop_v = []
        drop_oh = []
        for i in range(P):
            mal = Signal(V, name=f"malformed_{i}")
            m.d.comb += mal.eq(Cat(*[count_gt[i][v][0] & Mux(fronts[i][v].flit.head, fronts[i][v].bad,
                                                                 ~alloc_valid[i][v]) for v in range(V)]))
            low = Signal(V, name=f"mal_low_{i}")
            m.d.comb += low.eq(lowest_set_bit(mal, V))
            d = Signal(name=f"drop_{i}")
            m.d.comb += d.eq(~sent[i] & mal.any())
            drop.append(d)
            drop_v.append(one_hot_index(m, low, V) if V > 1 else Const(0, wb))
            drop_oh.append(low)

        # ---- pops, credit return, state updates --------------------------------------------
        for i in range(P):
            buf = bufs[i]
            pv = Signal(wb, name=f"pop_vc_{i}")
            m.d.comb += pv.eq(Mux(sent[i], read_v[i], drop_v[i]))
            # one-hot: the VC that sends, else the malformed front dropped (zero unless dropping)
            m.d.comb += [buf.pop.eq(sent_oh[i] | (drop_oh[i] & ~sent[i].replicate(V))),
                         self.credit_out[i].valid.eq(sent[i] | drop[i]), self.credit_out[i].payload.eq(pv)]
            for v in range(V):
                iv = i * V + v
                g = va_granted[iv]
                m.d.comb += g.eq(va_won[iv].any())
                with m.If(g):
                    m.d.sync += [alloc_valid[i][v].eq(1), alloc_w[i][v].eq(won_w[iv]),
                                 alloc_oh[iv].eq(va_won[iv])]
                with m.If(frees[i][v]):
                    m.d.sync += alloc_valid[i][v].eq(0)
        for o in range(P):
            for w in range(V):
                rel = on((o, w), frees)
                with m.If(va_set[o][w]):
                    m.d.sync += busy[o][w].eq(1)
                with m.Elif(rel):
                    m.d.sync += busy[o][w].eq(0)

        # each port's drop and overflow bit is registered where it is made, and `drops` (the last
        # cycle's count) sums the registers: no adder tree gathers this cycle's bits from every
        # port's logic across the chip (on the ECP5 that was the three-stage SA router's longest
        # path), and the carry chain of `dropped` starts at registers
        made = [_reg(m, b, f"drop_bit_{k}") for k, b in enumerate(drop + overflow)]
        m.d.comb += self.drops.eq(sum(made))
        m.d.comb += self.dropped.eq(running_count(m, self.drops, "drop_count"))
        return m


__all__ = ["Router", "running_count", "vc_classes_for", "class_of_vc", "input_class", "credit_signature", "flit_signature", "FLIT_FIELDS"]
