"""Whole-router harness (router 0 of PolarStar q=3 IQ d'=0 with one endpoint: R = 4 network ports +
1 local, P = 5; V VCs, B entries, 2-flit packets, the arithmetic PolarStar unit).

The environment (as `router_harness` in properties.py): upstream sends on input VC v only with a
credit for it (it counts the router's credit returns), whole packets per input VC (head first,
tail last, one packet id, sequence numbers in order); downstream returns a credit on output VC w
only for a flit it got. Flit contents are otherwise free.

Asserted, by default (k-induction; the allocation state read from the netlist: `alloc_valid_*`,
`alloc_oh_*`, `alloc_w_*` of the router, the output unit's `busy` and credit flags):
  * ownership: every output VC is held by at most one input VC, `busy` exactly when one holds
    it, an allocated input VC holds exactly one output VC and its `alloc_w` is that VC's VC
    (with va_stages 2, also: a request registered for the VA's second stage is never of an
    allocated VC, the VA's `va2_v_*`);
  * released exactly at a tail: `busy` of (o, w) falls exactly when a tail left on output o
    with VC w (st_stage cycles after the switch allocation that freed it);
  * credits: every output credit counter + flits in the traversal stages + flits outstanding
    downstream == B (a flit leaves exactly st_stage cycles after the switch allocator sent it,
    counted down then), each counter flag
    `credits > j` equal to the compare (and, three-stage SA, every input VC's copy of the flags of
    the output VC it holds equal to them: the router's `held_credit_error` never set).
They close at k = 1 with the one-cycle allocators and with va_stages 2 + va_choice_stage 1. With
a pipelined switch allocator (sa_stages 2, or 3 with st_stage 1) they close at k = 1 with the
invariants of router_inv.py added: the SA's nomination and grant registers tied to the
allocation, the buffers' counts and the credits, every input buffer consistent with itself and
holding whole-packet sequences (the buffer invariants are read from each `VCBuffer`'s netlist).
With st_stage 2 each traversal stage but the last is asserted to hold the flit sent that many
cycles earlier (for the credits). checks "packets" adds, by k-induction: on every output VC a
packet's flits leave head first, tail last, with one packet id, never interleaved with another
packet's: a monitor per output VC (inside a packet, its id) tied to the front of the input VC
that holds it and to that VC's upstream sender; with st_stage 1 or 2 that monitor runs at the
switch allocator's send, the traversal registers hold what it sent (`traversal_invariants`) and
a second monitor at the output follows it. It assumes well-formed heads (their destination
exists: none is dropped) unless checks has "malformed".
checks "liveness" adds the SA's bounded response, with any honest downstream (it returns a
credit for a flit it got at any time after, or never; the bound counts the cycles a VC has a
flit and a credit, and only its own sends spend its output VC's credits): `_liveness` for the
one-cycle SA (st_stage 0, latencies 1), sa_response.py for the pipelined one (any traversal and
latencies); and with the central VA (one-cycle or registered requests) the VA's bounded waiting:
of a head through one network port with one VC per class (`_va_fairness`) and of an ejecting
head (`_va_eject_fairness`).
checks "bmc" adds the packet order bounded from reset (BMC) instead, with any heads.
va_separable: the separable VA's launches and grants in flight are tied to the input VCs
(`router_inv.separable_invariants`); `busy` is then held or in flight.
link_latency and credit_latency above 1: the flits in the input units' link registers and the
credits in the output unit's credit line are counted (`router_inv.link_invariants`,
`_credits_in_line`); "liveness" with the one-cycle SA needs both at 1.
q=2 builds router 0 of PolarStar q=2 IQ d'=0 instead (R = 3, P = 4), for the CI's small sizes.
"""
from __future__ import annotations

import functools
from types import SimpleNamespace

from amaranth.hdl import Assert, Assume, Cat, Const, Module, Mux, Signal

from .alloc_props import SEPARABLE_HOLD, busy_age
from .internals import open_submodule, open_up, ptr_dist, signal, submodule
from .output_props import thermometer_code
from .properties import packet_sources
from .router_inv import (
    buffer_invariants,
    in_stage_flit,
    link_invariants,
    open_buffers,
    open_sa_arbiters,
    open_sw,
    open_traversal,
    packet_invariants,
    sa_invariants,
    separable_invariants,
    traversal_invariants,
)
from .sa_response import pipelined_sa_response


@functools.lru_cache(maxsize=None)
def _net(q: int = 3):
    from topologies import polarstar
    return polarstar(q, "iq", 0)


def _onehot0(x):
    return (x & (x - 1)) == 0


def _build(V, B, pkt_len, router_cls, q, wellformed, params):
    """The router (opened), its upstream senders, and the allocation state: a namespace."""
    from contract.flit import flit_layout
    from contract.params import RouterParams

    from ..router import Router
    from ..routing_units import PolarStarUnit

    net = _net(q)
    R, p = int(net.ports.max()), 1
    prm = RouterParams(vcs=V, depth=B, packet_flits=pkt_len, payload_bits=1, packet_id_bits=2, **params)
    lay = flit_layout(net.num_routers, p, prm)
    m = Module()
    dut = (router_cls or Router)(R, p, prm, lay, lambda lanes: PolarStarUnit(net, lanes), net.num_routers,
                                 min(V, 3), router_id=0)
    inner, sig = open_up(dut)
    m.submodules.dut = inner
    c = SimpleNamespace(m=m, dut=dut, inner=inner, sig=sig, outs=submodule(inner, "outputs"), prm=prm,
                        vcmap=dut.vcmap, P=dut.P, R=R, V=V, B=B, L=pkt_len, layout=lay,
                        front_fields=dut.front_fields, up={})
    c.free = packet_sources(m, dut, V, B, pkt_len, state=c.up, wellformed=wellformed)
    c.valid = [[signal(sig, f"alloc_valid_{i}_{v}") for v in range(V)] for i in range(c.P)]
    c.ws = [[signal(sig, f"alloc_w_{i}_{v}") for v in range(V)] for i in range(c.P)]
    c.oh = [signal(sig, f"alloc_oh_{iv // V}_{iv % V}") for iv in range(c.P * V)]
    return c


def _ownership(c):
    """Each allocated input VC holds exactly one output VC, with its `alloc_w`."""
    m, V, prm = c.m, c.V, c.prm
    for iv, ovcs in enumerate(c.vcmap.ovcs_of):
        i, v = divmod(iv, V)
        with m.If(c.valid[i][v]):
            m.d.comb += [Assert(_onehot0(c.oh[iv])), Assert(c.oh[iv].any())]
            for k, (o, w) in enumerate(ovcs):
                with m.If(c.oh[iv][k]):
                    m.d.comb += Assert(c.ws[i][v] == w)
    if c.dut.held_credit_error is not None:      # sa_stages = 3: each VC's copy of its output VC's credit flags
        m.d.comb += Assert(~c.dut.held_credit_error)
    if prm.va_stages == 2 or prm.va_separable:
        c.vca, c.vsig = open_submodule(c.inner, "vc_alloc")
    if prm.va_stages == 2:
        # a request registered for the VC allocator's second stage is never of an allocated VC
        m.d.comb += [Assert(~signal(c.vsig, f"va2_v_{i}_{v}") | ~c.valid[i][v]) for i in range(c.P) for v in range(V)]


def _va2_requests(c):
    """va_stages 2, with the buffers opened: a request registered for the VA's second
    stage is of a VC whose front is a well-formed head (an unallocated VC pops only malformed
    fronts, so the head it asked for is still there when the grant comes)."""
    if c.prm.va_stages != 2:
        return
    for i in range(c.P):
        for v in range(c.V):
            with c.m.If(signal(c.vsig, f"va2_v_{i}_{v}")):      # c.vsig: opened by _ownership
                fr = c.front[i][v]
                c.m.d.comb += [Assert(c.count[i][v] > 0), Assert(fr.flit.head), Assert(~fr.bad)]


def _delayed(m, x, n, name):
    """[x one cycle ago, ..., n cycles ago] (registers)."""
    hist = []
    for k in range(n):
        h = Signal.like(x, name=f"{name}_d{k}")
        m.d.sync += h.eq(hist[-1] if hist else x)
        hist.append(h)
    return hist


def _holders(c, o, w):
    return [(iv, c.valid[iv // c.V][iv % c.V] & c.oh[iv][k]) for iv, k in c.vcmap.holders.get((o, w), [])]


def _output_vc(c, o, w, induct, honest, cr):
    """Ownership, release at a tail and credits of output VC (o, w)."""
    m, st, B = c.m, c.prm.st_stage, c.B
    out = c.dut.flit_out[o]
    fl = out.payload
    busy = c.outs.busy[o]
    hold = Cat(*[h for _, h in _holders(c, o, w)])
    g1, g2 = c.sva.get((o, w), ([], []))      # separable VA: grants on their way to an input VC
    fly = Cat(*g1, *g2)
    m.d.comb += [Assert(_onehot0(Cat(hold, fly))), Assert(busy[w] == (hold.any() | fly.any()))]
    leave = out.valid & (fl.vc == w)
    # busy falls exactly when a tail leaves (st_stage cycles after its allocation)
    tail_out = Signal(name=f"tail_out{o}_{w}")
    m.d.comb += tail_out.eq(leave & fl.tail)
    prev_busy = Signal(name=f"prev_busy{o}_{w}")
    m.d.sync += prev_busy.eq(busy[w])
    chain = [prev_busy & ~busy[w]]
    chain += _delayed(m, chain[0], st, f"fell{o}_{w}")
    fell = chain[-1]
    tail_prev = Signal(name=f"tail_prev{o}_{w}")
    m.d.sync += tail_prev.eq(tail_out)
    if st and induct and c.up_packets:
        # a traversal stage: busy fell j + 1 cycles ago exactly when traversal stage j holds a tail
        # for (o, w) (traversal_invariants); the check below then closes
        for j in range(st):
            ev, _, tl, _ = in_stage_flit(c, j, o, w)
            m.d.comb += Assert(chain[j] == (ev & tl))
    if st == 0 or not induct or c.up_packets:     # else bounded only (not inductive at k <= 3)
        m.d.comb += Assert(fell == tail_prev)
    if not induct:
        _monitor(c, o, w, leave, (fl.head, fl.tail, fl.packet), None)
    if o >= c.R:
        return
    cv, cvc = cr
    owed = Signal(range(B + 2), name=f"owed{o}_{w}")
    back = cv & (cvc == w)
    if honest:
        m.d.comb += Assume(~back | (owed > 0))
    m.d.sync += owed.eq(owed + leave - back)
    # the flits the switch allocator sent that are still in the traversal stages
    # (st_stage of them): the one sent st_stage cycles ago is the one leaving now
    hist = _delayed(m, c.outs.sent[o][w], st, f"sent{o}_{w}")
    m.d.comb += Assert(leave == (hist[-1] if hist else c.outs.sent[o][w]))
    for k in range(st - 1):     # st_stage 2: the first traversal stage holds the flit sent a cycle ago
        m.d.comb += Assert(hist[k] == _in_stage(c, k, o, w))
    in_st = sum(h.as_unsigned() for h in hist) if hist else 0
    cnt = c.dut.credit_counters[o][w]
    m.d.comb += [Assert(cnt + in_st + owed + _credits_in_line(c, o, w) == B), Assert(cnt <= B)]
    m.d.comb += [Assert(c.outs.credit_gt[o][w][j] == (cnt > j)) for j in range(c.prm.sa_stages)]
    if c.outs.thermometer:
        m.d.comb += thermometer_code(c.outs.credit_flags[o][w])


def _credits_in_line(c, o, w):
    """credit_latency > 1: the credits of output VC (o, w) inside the output unit's credit delay
    line (its registers `cin{o}_v{k}`/`cin{o}_d{k}` and the decoded one-hot `cin{o}_oh`)."""
    cl = c.prm.credit_latency
    if cl < 2:
        return 0
    if getattr(c, "osig", None) is None:
        _, c.osig = open_submodule(c.inner, "outputs")
    oh = signal(c.osig, f"cin{o}_oh")
    if w == 0:      # a credit of one VC per cycle
        c.m.d.comb += Assert(_onehot0(oh))
    pend = [signal(c.osig, f"cin{o}_v{k}") & (signal(c.osig, f"cin{o}_d{k}") == w) for k in range(cl - 2)]
    return sum(x.as_unsigned() for x in pend) + oh[w]


def _in_stage(c, k, o, w):
    """Traversal stage k (0: the first register) holds a flit for output VC (o, w): its valid
    register, its one-hot input select and that input's output VC register (`SwitchTraversal`)."""
    if not getattr(c, "stage_checked", False):
        c.stage_checked = True
        open_traversal(c)
        for j in range(c.prm.st_stage - 1):
            pre = f"st{j + 1 if j else ''}_"
            sels = [signal(c.tsig, f"{pre}sel_{o2}") for o2 in range(c.P)]
            c.m.d.comb += [Assert(_onehot0(sel)) for sel in sels]
            c.m.d.comb += [Assert(signal(c.tsig, f"{pre}valid_{o2}") == sels[o2].any()) for o2 in range(c.P)]
            c.m.d.comb += [Assert(_onehot0(Cat(*[sel[i] for sel in sels]))) for i in range(c.P)]
    pre = f"st{k + 1 if k else ''}_"
    sel = signal(c.tsig, f"{pre}sel_{o}")
    on_w = Cat(*[sel[i] & (signal(c.tsig, f"{pre}w_{i}") == w) for i in range(c.P)]).any()
    return signal(c.tsig, f"{pre}valid_{o}") & on_w


def _monitor(c, o, w, event, flit, fronts, name="out"):
    """Packets never interleave on output VC (o, w): at each `event` the flit (head, tail,
    packet) is a head exactly when no packet is open, of the open packet's id when one is. With
    `fronts` (k-induction) the monitor is tied to the holder's front and its sender's state.
    Returns the monitor's (open, packet id) registers."""
    m = c.m
    head, tail, packet = flit
    is_open = Signal(name=f"{name}_open{o}_{w}")
    pk = Signal(len(packet), name=f"{name}_pk{o}_{w}")
    with m.If(event):
        m.d.comb += Assert(head == ~is_open)
        with m.If(is_open):
            m.d.comb += Assert(packet == pk)
        m.d.sync += [is_open.eq(~tail), pk.eq(packet)]
    if fronts is None:
        return is_open, pk
    with m.If(~Cat(*[h for _, h in _holders(c, o, w)]).any()):
        m.d.comb += Assert(~is_open)
    for iv, h in _holders(c, o, w):
        fhead, fpk = fronts[(iv // c.V, iv % c.V)]
        with m.If(h):
            m.d.comb += Assert(is_open == ~fhead)
            with m.If(is_open):
                m.d.comb += Assert(pk == fpk)
    return is_open, pk


def _packets(c, o, w, fronts, sent_flits):
    """The non-interleaving check of output VC (o, w) at the router's output; with a traversal
    stage (st_stage 1) also at the switch allocator's send (the monitor tied to the fronts),
    the output's monitor after each cycle then equal to the send's (a cycle ahead)."""
    m = c.m
    out = c.dut.flit_out[o]
    fl = out.payload
    leave = out.valid & (fl.vc == w)
    if not c.prm.st_stage:
        _monitor(c, o, w, leave, (fl.head, fl.tail, fl.packet), fronts)
        return
    hs = [(iv // c.V, iv % c.V, h) for iv, h in _holders(c, o, w)]
    ev = [h & c.swa.send[i][v] for i, v, h in hs]
    pick = [[Mux(ev[n], x, 0) for n, x in enumerate(xs)] for xs in zip(*[sent_flits[(i, v)] for i, v, _ in hs])]
    flit = [_or_all(p) for p in pick] if hs else [0, 0, 0]
    sa_open, sa_pk = _monitor(c, o, w, Cat(*ev).any() if hs else 0, flit, fronts, "sa")
    out_open, out_pk = _monitor(c, o, w, leave, (fl.head, fl.tail, fl.packet), None)
    # the output's monitor after this cycle's flit = the send's monitor now (a cycle ahead), or
    # (st_stage 2) the send's before the flit in the first traversal stage
    nxt_open, nxt_pk = Mux(leave, ~fl.tail, out_open), Mux(leave, fl.packet, out_pk)
    if c.prm.st_stage == 2:
        ev1, head1, tail1, pk1 = in_stage_flit(c, 0, o, w)
        with m.If(ev1):
            m.d.comb += [Assert(head1 == ~nxt_open), Assert(sa_open == ~tail1)]
            with m.If(nxt_open):
                m.d.comb += Assert(pk1 == nxt_pk)
            with m.If(sa_open):
                m.d.comb += Assert(sa_pk == pk1)
        nxt_open, nxt_pk = Mux(ev1, sa_open, nxt_open), Mux(ev1, sa_pk, nxt_pk)
    m.d.comb += Assert(nxt_open == sa_open)
    with m.If(sa_open):
        m.d.comb += Assert(nxt_pk == sa_pk)


def _or_all(values):
    out = values[0]
    for x in values[1:]:
        out = out | x
    return out


def liveness_bound(P: int, V: int) -> int:
    """The most cycles an eligible input VC waits before it sends (one-cycle SA, 1 iteration)."""
    return V * V * P - 1


def _liveness(c):
    """Bounded response of the one-cycle switch allocator, any honest downstream: an input VC
    that holds an output VC and has a flit and a credit (so it is eligible; it keeps the credit
    until it sends) sends within liveness_bound(P, V) + 1 cycles. Proved with the potential
    psi = Dv·V·P + Dc·P + Do (Dv, Dc: the input arbiter's distance from its pointer to the VC and
    to its choice, Do: the distance of the choice's output arbiter from its pointer to the port),
    which falls in every cycle the VC waits: waited + psi <= bound."""
    m, P, V = c.m, c.P, c.V
    ssig = open_sw(c)
    in_arb, out_arb = open_sa_arbiters(c)
    bound = liveness_bound(P, V)
    for i in range(P):
        elig, grant = signal(ssig, f"elig_{i}"), in_arb[i].grant
        cport = signal(ssig, f"sa0_in_port_{i}")
        dc = sum(Mux(grant[u], ptr_dist(m, in_arb[i].mask, u, V, f"live_dc{i}_{u}"), 0) for u in range(V))
        do = sum(Mux(cport[o], ptr_dist(m, out_arb[o].mask, i, P, f"live_do{i}_{o}"), 0) for o in range(P))
        for v in range(V):
            waited = Signal(range(bound + 2), name=f"waited_{i}_{v}")
            sent = c.swa.send[i][v]
            m.d.sync += waited.eq(Mux(elig[v] & ~sent, waited + 1, 0))
            dv = ptr_dist(m, in_arb[i].mask, v, V, f"live_dv{i}_{v}")
            psi = Signal(range(2 * bound + 2), name=f"psi_{i}_{v}")
            m.d.comb += psi.eq(dv * (V * P) + dc * P + do)
            m.d.comb += [Assert(waited <= bound), Assert(elig[v] | (waited == 0))]
            with m.If(elig[v]):
                m.d.comb += Assert(waited + psi <= bound)


def _downstream(c, o):
    """The credit returns of network output o: free inputs (honest unless checks has
    "dishonest": a credit only for a flit it got, at any time after, `_output_vc`)."""
    m = c.m
    cv, cvc = Signal(name=f"cr_valid{o}"), Signal(range(c.V), name=f"cr_vc{o}")
    c.free += [cv, cvc]
    m.d.comb += [c.dut.credit_in[o].valid.eq(cv), c.dut.credit_in[o].payload.eq(cvc), Assume(cvc < c.V)]
    return cv, cvc


def _va_arbiter_masks(c):
    """The central VC allocator opened (c.vca, c.vsig) and its arbiters' pointer masks by output
    VC, each asserted a thermometer (bits ptr..n-1), once per harness."""
    if getattr(c, "va_masks", None) is None:
        if getattr(c, "vca", None) is None:
            c.vca, c.vsig = open_submodule(c.inner, "vc_alloc")
        vmod = submodule(c.inner, "vc_alloc")
        c.va_masks = {}
        for (o, w), holders in c.vcmap.holders.items():
            mask = c.va_masks[o, w] = submodule(vmod, f"va_arb_{o}_{w}").mask
            c.m.d.comb += Assert(((mask << 1)[:len(holders)] & ~mask) == 0)
    return c.va_masks


def _va_fairness(c):
    """The central one-cycle VC allocator's bounded waiting, counted in allocations: a head whose
    route has one port o (not ejecting here) asks for the one VC w of its hop's class there, and
    while it waits (at its VC's front, unallocated) (o, w) goes to other input VCs at most n - 1
    times (n: the input VCs that can hold it): potential `lost + Dk <= n - 1`, Dk the distance
    of (o, w)'s arbiter from its pointer to this input VC. Needs one VC per class (V = C).
    With registered requests (va_stages 2) a request reaches the arbiter a cycle after it is
    made, so in the head's first cycle of waiting (o, w) may go to another input VC without its
    request there (the arbiter's pointer may then pass it): at most n times, potential
    `lost + Dk <= n` from the second cycle, where every request for (o, w) at the arbiter (made
    when (o, w) was free) comes with the head's own (`_va2_present`). A registered choice
    (va_choice_stage) delays every request alike and changes nothing."""
    m, P, R, V = c.m, c.P, c.R, c.V
    if c.dut.C != V:
        raise ValueError("VA fairness: one VC per class (V = C) only")
    masks = _va_arbiter_masks(c)
    vca = c.vca
    cls = list(c.dut.vc_class)
    for iv in range(P * V):
        i, v = divmod(iv, V)
        fr = c.front[i][v]
        for o in range(R):
            w = cls.index(c.vcmap.next_class(iv, o))
            cand = [h for h, _ in c.vcmap.holders[(o, w)]]
            n, k = len(cand), cand.index(iv)
            waiting = Signal(name=f"va_wait_{i}_{v}_{o}")
            m.d.comb += waiting.eq((c.count[i][v] > 0) & ~c.valid[i][v] & fr.flit.head & ~fr.bad & ~fr.eject &
                                   (fr.mask == (1 << o)))
            lost = Signal(range(n + 2), name=f"va_lost_{i}_{v}_{o}")
            other = vca.taken[o][w] & ~vca.grant[i][v][o * V + w]
            m.d.sync += lost.eq(Mux(waiting, lost + other, 0))
            dk = ptr_dist(m, masks[o, w], k, n, f"va_d_{i}_{v}_{o}")
            if c.prm.va_stages == 2:
                was = Signal(name=f"va_was_waiting_{i}_{v}_{o}")
                m.d.sync += was.eq(waiting)
                with m.If(waiting):
                    m.d.comb += [Assert(was | (lost == 0)), Assert(lost <= n)]
                with m.If(waiting & was):
                    m.d.comb += [Assert(lost + dk <= n), Assert(_va2_present(c, iv, o, w, cand))]
                continue
            with m.If(waiting):
                m.d.comb += [Assert(lost + dk <= n - 1), Assert(lost <= n - 1)]


def _va_eject_fairness(c):
    """The central VC allocator's bounded waiting of an ejecting head, counted in allocations.
    Every input VC can hold every VC of the local port, and every ejecting head asks for the
    same one, the lowest free (one endpoint: no dst_ep). So in a cycle the head waits with a free
    local VC, only the arbiter of the one it asks for grants: to it, or to an input VC between
    that arbiter's pointer and it (the pointer moves towards it); the other local arbiters keep
    their pointers. Potential: `lost + sum_w Dw <= V·(n - 1)`, Dw the distance of local VC w's
    arbiter from its pointer to the head, n = P·V the input VCs. With registered requests
    (va_stages 2) the first cycle may lose one allocation to a request made before the head
    asked (+1, as in `_va_fairness`); from the second, every registered request for a local VC
    comes with the head's own."""
    m, P, R, V = c.m, c.P, c.R, c.V
    if c.dut.p != 1:
        raise ValueError("VA eject fairness: one endpoint (every ejecting head asks for the same VC)")
    masks = [_va_arbiter_masks(c)[R, w] for w in range(V)]
    vca = c.vca
    cand = [h for h, _ in c.vcmap.holders[(R, 0)]]
    n = len(cand)
    bound = V * (n - 1) + (c.prm.va_stages == 2)
    for iv in range(P * V):
        i, v = divmod(iv, V)
        fr = c.front[i][v]
        k = cand.index(iv)
        waiting = Signal(name=f"va_eject_wait_{i}_{v}")
        m.d.comb += waiting.eq((c.count[i][v] > 0) & ~c.valid[i][v] & fr.flit.head & ~fr.bad & fr.eject)
        other = sum((vca.taken[R][w] & ~vca.grant[i][v][R * V + w]).as_unsigned() for w in range(V))
        lost = Signal(range(bound + 2), name=f"va_eject_lost_{i}_{v}")
        m.d.sync += lost.eq(Mux(waiting & (lost <= bound), lost + other, 0))
        d = sum(ptr_dist(m, masks[w], k, n, f"va_eject_d_{i}_{v}_{w}") for w in range(V))
        with m.If(waiting):
            m.d.comb += Assert(lost <= bound)
        if c.prm.va_stages == 2:
            was = Signal(name=f"va_eject_was_{i}_{v}")
            m.d.sync += was.eq(waiting)
            with m.If(waiting):
                m.d.comb += Assert(was | (lost == 0))
            with m.If(waiting & was):
                m.d.comb += [Assert(lost + d <= bound)] + [Assert(_va2_present(c, iv, R, w, cand)) for w in range(V)]
        else:
            with m.If(waiting):
                m.d.comb += Assert(lost + d <= bound)


def _separable_environment(c):
    """va_separable: the router keeps the two promises on which `alloc_props.va_waiting_harness`
    proves the separable VC allocator's bounded waiting, so that proof holds for the allocator in
    the router. (1) A request not granted stays, with its route, eject and dst_ep, in the next
    cycle (the head stays at its VC's front). (2) An output VC falls free only after
    SEPARABLE_HOLD cycles busy: `age` counts the cycles since it was taken (saturating), and its
    grant in G1, in G2 and then held by an input VC are ages 1, 2 and SEPARABLE_HOLD; a release
    needs a holder's tail."""
    m, vca, H = c.m, c.vca, SEPARABLE_HOLD
    for i in range(c.P):
        for v in range(c.V):
            now = Cat(vca.request[i][v], vca.route[i][v], vca.eject[i][v], vca.dst_ep[i][v])
            was = Signal.like(now, name=f"va_in_was_{i}_{v}")
            waited = Signal(name=f"va_waited_{i}_{v}")
            m.d.sync += [was.eq(now), waited.eq(vca.request[i][v] & ~vca.grant[i][v].any())]
            with m.If(waited):
                m.d.comb += Assert(now == was)
    for o in range(c.P):
        busy = c.outs.busy[o]
        for w in range(c.V):
            age = busy_age(m, vca.taken[o][w], H, f"busy_age_{o}_{w}")
            g1, g2 = c.sva.get((o, w), ([], []))
            held = Cat(*[h for _, h in _holders(c, o, w)])
            m.d.comb += [Assert(~Cat(*g1).any() | (age == 1)), Assert(~Cat(*g2).any() | (age == 2)),
                         Assert(~held.any() | (age == H))]
            was_busy, was_age = Signal(name=f"was_busy_{o}_{w}"), Signal.like(age, name=f"was_age_{o}_{w}")
            m.d.sync += [was_busy.eq(busy[w]), was_age.eq(age)]
            m.d.comb += Assert(~(was_busy & ~busy[w]) | (was_age == H))


def _va2_present(c, iv, o, w, cand):
    """va_stages 2: if any input VC's registered request is for (o, w), input VC iv's is too."""
    def asks(x):
        i, v = divmod(x, c.V)
        return (signal(c.vsig, f"va2_v_{i}_{v}") & (signal(c.vsig, f"va2_o_{i}_{v}") == o) &
                (signal(c.vsig, f"va2_w_{i}_{v}") == w))
    others = [asks(x) for x in cand if x != iv]
    return asks(iv) | ~_or_all(others) if others else Const(1, 1)


CHECKS = ("packets", "malformed", "liveness", "bmc", "dishonest")


def router5_harness(V: int = 3, B: int = 4, pkt_len: int = 2, router_cls=None, q: int = 3, checks=(), **params):
    """q: the PolarStar (3: P = 5, 2: P = 4). `checks`, any of CHECKS: "packets", the
    non-interleaving check by k-induction (with the buffers' packet structure as invariants);
    "liveness", the SA's bounded response (`_liveness`, one-cycle SA, or
    `sa_response.pipelined_sa_response`) and the central VA's `_va_fairness` and
    `_va_eject_fairness` (the separable VA: `_separable_environment`), any honest downstream;
    "bmc", the packet order bounded from reset instead of the induction-only invariants (for `mode bmc`); "malformed", with "packets": any heads (a head
    whose destination does not exist is dropped with the rest of its packet), not only
    well-formed ones; "dishonest", a downstream that may return credits it does not owe (the
    credit check must fail)."""
    bad = set(checks) - set(CHECKS)
    if bad:
        raise ValueError(f"checks: unknown {sorted(bad)}; allowed {', '.join(CHECKS)}")
    packets, liveness = "packets" in checks, "liveness" in checks
    induct, honest_downstream = "bmc" not in checks, "dishonest" not in checks
    wellformed = packets and "malformed" not in checks
    if "malformed" in checks and (not packets or liveness):
        raise ValueError("checks \"malformed\": with \"packets\", without \"liveness\"")
    c = _build(V, B, pkt_len, router_cls, q, wellformed, params)
    m, P, R = c.m, c.P, c.R
    c.ssig, c.tsig, c.up_packets = None, None, packets
    if liveness and c.prm.sa_stages == 1 and (c.prm.st_stage or c.prm.alloc_iters != 1 or
                                              c.prm.link_latency != 1 or c.prm.credit_latency != 1):
        raise ValueError("checks \"liveness\", one-cycle SA: alloc_iters 1, st_stage 0, latencies 1 only")
    _ownership(c)
    fronts = None
    c.sva = {}
    if c.prm.sa_stages > 1 or packets or liveness or c.prm.va_separable:
        bufs = open_buffers(c)
        c.count = [[buf.count[v] for v in range(V)] for buf, _, _ in bufs]
        from ..router.input_unit import buffer_layout, entry_from_buffer
        c.entry_layout = buffer_layout(c.dut.shape)           # what the buffers hold
        c.front = [[entry_from_buffer(c.m, c.dut.shape, buf.front[v], f"front_entry_{i}_{v}") for v in range(V)]
                   for i, (buf, _, _) in enumerate(bufs)]
        readers = buffer_invariants(c, bufs)
        link_invariants(c, wellformed=wellformed)
        fronts = packet_invariants(c, readers, wellformed=wellformed)
        _va2_requests(c)
        if c.prm.va_separable:
            c.sva = separable_invariants(c)
    sa_invariants(c)
    sent_flits = traversal_invariants(c, bufs, readers) if packets and c.prm.st_stage else None
    for o in range(P):
        cr = _downstream(c, o) if o < R else None
        for w in range(V):
            _output_vc(c, o, w, induct, honest_downstream, cr)
            if packets:
                _packets(c, o, w, fronts, sent_flits)
    if liveness:
        if c.prm.sa_stages == 1:
            _liveness(c)
        else:
            pipelined_sa_response(c)
        if c.prm.va_separable:
            _separable_environment(c)
        else:
            if c.dut.C == V:
                _va_fairness(c)
            _va_eject_fairness(c)
    return m, c.free


__all__ = ["CHECKS", "liveness_bound", "router5_harness"]
