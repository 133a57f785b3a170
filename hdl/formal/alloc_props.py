"""k-induction harnesses of the VC allocator and the switch allocator (hdl/router/).

Both are built as the router builds them, for router 0 of PolarStar q=3 with the IQ supernode of
degree 0 (26 routers: R = 4 network ports + 1 local, P = 5), V VCs in min(V, 3) hop classes,
B-entry buffers, with the pipeline options of `RouterParams` (`router_shape`).

`va_harness` (VCAllocator: central, `va_stages` 1 or 2, `va_choice_stage` 0 or 1, or separable):
free requests, routes, ejections, destination endpoints and downstream occupancies; the output
VCs' busy bits modelled as the output unit keeps them (set by `taken`, cleared by a free release of
a held VC). Asserted in every cycle:
  * each input VC's grant one-hot or zero, each output VC granted to at most one input VC, and
    `taken` exactly the output VCs granted (central; the separable allocator's grant arrives
    2 cycles after its `taken`: a grant then implies `taken` 2 cycles earlier);
  * `taken` only for a free output VC (never one a packet holds);
  * `grant_w` the VC of the granted output VC;
  * (central) only to a requester, within its route and VC class: a grant of (o, w) to input VC
    iv means iv asked (this cycle, or the last with va_stages = 2), and (o, w) is its ejection
    port's or o is in its route mask and w of the class of its next hop (`VCMap.next_class`).

`sa_harness` (SwitchAllocator: `sa_stages` 1, 2 or 3, `alloc_iters`): the input VCs modelled as
the router's: per input VC a FIFO of tail bits (`ready` = count flags, `tail` its front, `peek`
the next one), arrivals free while not full; an allocation (free, while unallocated: its output
port free, credits free in 0..B) held until its tail leaves; the held output VC's credits step
down per send and up per free credit return (never above B). Asserted in every cycle:
  * each input port sends from at most one VC (one-hot), reads the one that sends, each output
    takes at most one input (one-hot) and `out_valid` says whether it takes one;
  * every send has an output that takes it, and that output is the port of the sender's output
    VC, every output's input sends;
  * a VC sends only while it holds an output VC, has a flit and a credit (no grant to a VC
    without credit).
"""
from __future__ import annotations

import functools

from amaranth.hdl import Assert, Assume, Cat, Const, Module, Mux, Signal

from contract.flit import flit_layout
from contract.params import RouterParams

from ..router.classes import separable_eject_vc
from ..separable_va import slot_holders
from .internals import open_up, ptr_dist, signal, submodule


def router_shape(V: int = 3, B: int = 4, **params):
    """(RouterShape, VCMap) of router 0 of PolarStar q=3 IQ d'=0 (P = 5) with V VCs, B entries."""
    return _router_shape(V, B, tuple(sorted(params.items())))


@functools.lru_cache(maxsize=None)
def _router_shape(V, B, params):
    params = dict(params)
    from topologies import polarstar

    from ..router import Router
    from ..routing_units import PolarStarUnit
    net = polarstar(3, "iq", 0)
    R, p = int(net.ports.max()), 1
    prm = RouterParams(vcs=V, depth=B, **params)
    unit = PolarStarUnit(net, R + p)
    unit._MustUse__silence = True
    router = Router(R, p, prm, flit_layout(net.num_routers, p, prm), lambda lanes: unit, net.num_routers,
                    min(V, 3), router_id=0)
    router._MustUse__silence = True
    return router.shape, router.vcmap


def _onehot0(x):
    return (x & (x - 1)) == 0


def va_harness(V: int = 3, B: int = 4, allocator_cls=None, **params):
    m, free, *_ = _va_env(V, B, allocator_cls, params)
    return m, free


def _asking(vs, i, V, places, ovcs_of, port_ovcs):
    """Per VC v of port i, a bit per slot of the port (`port_ovcs`): the slot has a request in
    the allocator (`places`: the port's sticky requests, G2 bits, and its G1 bits per slot) and
    it is v's: the slot's `sva_owner` names v where several VCs can hold the slot
    (`slot_holders`), else v is the one that can."""
    sreq, g2, g1 = places
    bits = [[] for _ in range(V)]
    for n, ow in enumerate(port_ovcs):
        held = sreq[n] | g1[n] | g2[n]
        holders = slot_holders(ovcs_of, i, V, ow)
        for v in range(V):
            if v not in holders:
                bits[v].append(Const(0, 1))
            elif len(holders) == 1:
                bits[v].append(held)
            else:
                bits[v].append(held & (signal(vs, f"sva_owner_{i}_{n}") == holders.index(v)))
    return [Cat(*b) for b in bits]


def separable_va_invariants(m, shape, ovcs_of, vs):
    """va_separable: the requests in the separable VC allocator (`hdl.separable_va`, its signals
    `vs` by name) of a router shaped `shape`. A registered choice (va_choice_stage) is a VC of its
    class; a registered request (va_stages 2) is for an output VC its input VC can hold.
    Per input VC (i, v) with a request in the allocator (`sva_pend`): that output VC
    (`sva_pend_o/w`) one it can ask for (a network one it can hold, or local VC
    `separable_eject_vc`), and no other VC of port i in it for the same output VC.
    The request is in exactly one place: the launch register L1 (`sva_l1_vc`, the same output VC
    beside it, no slot asked for by the VC yet) or, from then on, exactly one of: waiting at the
    output VC's arbiter (`sva_sreq`), granted (G1, `sva_g1_*`) or granted and back at the port
    (G2, `sva_g2_*`), with the slot's `sva_owner` naming the VC where several can hold it
    (`_asking`). Nothing is in these for a slot no request holds. Returns per output VC (o, w)
    the bits of its grants in flight: (G1 bits, G2 bits), one per candidate port."""
    P, V, prm = shape.P, shape.V, shape.params
    inflight, g1_of, cand = {}, {}, {}           # inflight[(o, w)]: ([G1 bits], [G2 bits])
    if prm.va_choice_stage:
        for o in range(shape.R):
            for c in range(shape.C):
                with m.If(signal(vs, f"vbest_reg_{o}_{c}_v")):
                    m.d.comb += Assert(Cat(*[signal(vs, f"vbest_reg_{o}_{c}_w") == w
                                             for w in range(V) if shape.vc_class[w] == c]).any())
    for i in range(P):
        for ow in {ow for v in range(V) for ow in ovcs_of[i * V + v]}:
            cand.setdefault(ow, []).append(i)
    for (o, w), ports in cand.items():
        g1 = signal(vs, f"sva_g1_{o}_{w}")
        for k, i in enumerate(sorted(ports)):
            g1_of[i, (o, w)] = g1[k]
            inflight.setdefault((o, w), ([], []))[0].append(g1[k])
    for i in range(P):
        ovcs = [ovcs_of[i * V + v] for v in range(V)]
        port_ovcs = sorted(set().union(*ovcs))
        l1 = signal(vs, f"sva_l1_vc_{i}")
        sreq, g2 = signal(vs, f"sva_sreq_{i}"), signal(vs, f"sva_g2_{i}")
        pend = [signal(vs, f"sva_pend_{i}_{v}") for v in range(V)]
        po = [signal(vs, f"sva_pend_o_{i}_{v}") for v in range(V)]
        pw = [signal(vs, f"sva_pend_w_{i}_{v}") for v in range(V)]
        tslot = _asking(vs, i, V, (sreq, g2, [g1_of[i, ow] for ow in port_ovcs]), ovcs_of, port_ovcs)
        m.d.comb += Assert(_onehot0(l1))
        for v in range(V):
            asks = [(o, w) for o, w in ovcs[v] if o < shape.R or w == separable_eject_vc(i * V + v, V)]

            def holds(o_sig, w_sig, ovcs_v=asks):
                return Cat(*[(o_sig == o) & (w_sig == w) for o, w in ovcs_v]).any()
            if prm.va_stages == 2:
                with m.If(signal(vs, f"va2_v_{i}_{v}")):
                    m.d.comb += Assert(holds(signal(vs, f"va2_o_{i}_{v}"), signal(vs, f"va2_w_{i}_{v}")))
            m.d.comb += [Assert(_onehot0(tslot[v])), Assert(~l1[v] | pend[v] & (tslot[v] == 0)),
                         Assert(~pend[v] | l1[v] | tslot[v].any()), Assert(pend[v] | (tslot[v] == 0))]
            with m.If(l1[v]):
                m.d.comb += [Assert(signal(vs, f"sva_l1_o_{i}") == po[v]), Assert(signal(vs, f"sva_l1_w_{i}") == pw[v])]
            with m.If(pend[v]):
                m.d.comb += Assert(holds(po[v], pw[v]))
                for u in range(v + 1, V):
                    m.d.comb += Assert(~pend[u] | (po[u] != po[v]) | (pw[u] != pw[v]))
            for n, (o, w) in enumerate(port_ovcs):
                if (o, w) not in ovcs[v]:
                    m.d.comb += Assert(~tslot[v][n])
                    continue
                with m.If(tslot[v][n]):
                    m.d.comb += [Assert((po[v] == o) & (pw[v] == w)),
                                 Assert(sreq[n].as_unsigned() + g1_of[i, (o, w)] + g2[n] == 1)]
        for n, (o, w) in enumerate(port_ovcs):
            held = Cat(*[tslot[v][n] for v in range(V)]).any()
            m.d.comb += Assert(held | ~(sreq[n] | g1_of[i, (o, w)] | g2[n]))
            inflight[(o, w)][1].append(g2[n])
    return inflight


def _va_env(V, B, allocator_cls, params):
    """va_harness's module, free inputs and allocator (its assertions included), the allocator's
    elaborated module and its signals by name."""
    from ..router.vc_allocator import VCAllocator
    shape, vcmap = router_shape(V, B, **params)
    P, R = shape.P, shape.R
    m = Module()
    dut = (allocator_cls or VCAllocator)(shape, vcmap)
    inner, vs = open_up(dut)
    m.submodules.dut = inner
    if params.get("va_separable"):
        separable_va_invariants(m, shape, vcmap.ovcs_of, vs)
    free = []
    req = [[Signal(name=f"req_{i}_{v}") for v in range(V)] for i in range(P)]
    route = [[Signal(R, name=f"route_{i}_{v}") for v in range(V)] for i in range(P)]
    eject = [[Signal(name=f"eject_{i}_{v}") for v in range(V)] for i in range(P)]
    for i in range(P):
        for v in range(V):
            free += [req[i][v], route[i][v], eject[i][v]]
            m.d.comb += [dut.request[i][v].eq(req[i][v]), dut.route[i][v].eq(route[i][v]),
                         dut.eject[i][v].eq(eject[i][v]), dut.dst_ep[i][v].eq(0)]
    for o in range(R):
        for w in range(V):
            occ = Signal(range(B + 1), name=f"occ_{o}_{w}")
            free.append(occ)
            m.d.comb += [Assume(occ <= B), dut.occupancy[o][w].eq(occ)]
    busy = [Signal(V, name=f"busy_{o}") for o in range(P)]
    rel = [Signal(V, name=f"release_{o}") for o in range(P)]
    free += rel
    for o in range(P):
        m.d.comb += [dut.busy[o].eq(busy[o]), Assume((rel[o] & ~busy[o]) == 0)]
        m.d.sync += busy[o].eq(dut.taken[o] | (busy[o] & ~rel[o]))
        m.d.comb += Assert((dut.taken[o] & busy[o]) == 0)         # only a free output VC is taken
    separable = bool(params.get("va_separable"))
    stale = params.get("va_stages", 1) == 2
    # what each input VC asked in the cycle its grant answers (central: this cycle or the last)
    if stale:
        seen = []
        for rows in (req, route, eject):
            seen.append([[Signal.like(x, name=f"prev_{x.name}") for x in row] for row in rows])
            for row, prow in zip(rows, seen[-1]):
                m.d.sync += [p.eq(x) for p, x in zip(prow, row)]
        a_req, a_route, a_eject = seen
    else:
        a_req, a_route, a_eject = req, route, eject
    taken2 = [Signal(V, name=f"taken_d2_{o}") for o in range(P)]
    taken1 = [Signal(V, name=f"taken_d1_{o}") for o in range(P)]
    for o in range(P):
        m.d.sync += [taken1[o].eq(dut.taken[o]), taken2[o].eq(taken1[o])]
    for o in range(P):
        for w in range(V):
            bits = [dut.grant[i][v][o * V + w] for i in range(P) for v in range(V)]
            g = Cat(*bits)
            m.d.comb += Assert(_onehot0(g))
            if separable:
                m.d.comb += Assert(~g.any() | taken2[o][w])
            else:
                m.d.comb += Assert(g.any() == dut.taken[o][w])
    for i in range(P):
        for v in range(V):
            iv = i * V + v
            g = dut.grant[i][v]
            m.d.comb += Assert(_onehot0(g))
            for o in range(P):
                for w in range(V):
                    with m.If(g[o * V + w]):
                        m.d.comb += Assert(dut.grant_w[i][v] == w)
                        if separable:
                            continue
                        if o >= R:
                            ok = a_eject[i][v]
                        elif vcmap.next_class(iv, o) == shape.vc_class[w]:
                            ok = ~a_eject[i][v] & a_route[i][v][o]
                        else:
                            ok = Const(0, 1)
                        m.d.comb += Assert(a_req[i][v] & ok)
    return m, free, dut, inner, vs


# cycles an output VC stays busy at least in the router (a grant is applied 2 cycles after it, and
# the tail leaves a cycle later at the earliest): what va_waiting_harness assumes and
# router_props._separable_environment proves of the router
SEPARABLE_HOLD = 3


def busy_age(m, taken, hold: int, name: str):
    """Cycles since output VC `taken` was last taken (1 in the cycle after), saturating at `hold`."""
    age = Signal(range(hold + 1), name=name)
    m.d.sync += age.eq(Mux(taken, 1, Mux(age < hold, age + 1, age)))
    return age


def va_waiting_harness(V: int = 3, B: int = 4, hold: int = SEPARABLE_HOLD, allocator_cls=None, eject=False,
                       head: tuple[int, int] = (1, 0), **params):
    """Bounded waiting of a VC allocator alone (`va_harness`'s environment and assertions): input VC
    X = `head` (input port, VC), whenever it asks (from cycle 1 on), asks for output port 0 only, so
    for the one output VC (0, w) of its next class (`eject`: it ejects, and asks for the local VC
    `separable_eject_vc`, separable VA only); every input VC's request (X's too) is otherwise free,
    but a head's request stays, unchanged, until its input VC is granted (as the router's fronts
    do), and an output VC stays busy at least `hold` cycles (its packet's flits). Asserted: while X
    waits, its output VC goes to other input VCs at most n times, n the input VCs that can ask for
    it (what `router_props._va_fairness` proves in the router for the central allocator). For the
    separable allocator (hold >= 3) with the potential that makes it inductive
    (`_separable_waiting`) for X = (1, 0), whose output VC no other VC of its port can ask for; for
    the other heads without it, for bounded model checking only (at V = 3: a class-2 VC, which VCs 1
    and 2 of a network port ask for, or a class-0 one, which every VC of the local port asks for).
    Returns (module, free inputs, n)."""
    if hold < 1:
        raise ValueError(f"hold={hold}: an output VC is busy at least 1 cycle")
    if eject and not params.get("va_separable"):
        raise ValueError("eject: the separable VA only (the central one's: router_props._va_eject_fairness)")
    m, free, dut, inner, vs = _va_env(V, B, allocator_cls, params)
    shape, vcmap = router_shape(V, B, **params)
    P = shape.P
    by = {s.name: s for s in free}
    hi, hv = head
    if not (0 <= hi < P and 0 <= hv < V):
        raise ValueError(f"head={head}: an input VC (port 0 .. {P - 1}, VC 0 .. {V - 1})")
    x = hi * V + hv
    if eject:
        o, w = shape.R, separable_eject_vc(x, V)
        askers = [i * V + v for i in range(P) for v in range(V) if separable_eject_vc(i * V + v, V) == w]
    else:
        o = 0
        w = next(w for w in range(V) if (o, w) in vcmap.ovcs_of[x])
        askers = [iv for iv, _ in vcmap.holders[(o, w)]]
    n = len(askers)
    after_reset = Signal()
    m.d.sync += after_reset.eq(1)
    waiting = by[f"req_{hi}_{hv}"]
    won = dut.grant[hi][hv][o * V + w]
    asks = by[f"eject_{hi}_{hv}"] if eject else (by[f"route_{hi}_{hv}"] == 1 << o) & ~by[f"eject_{hi}_{hv}"]
    m.d.comb += [Assume(~waiting | after_reset), Assume(~waiting | asks)]
    for i in range(P):
        for v in range(V):
            now = [by[f"req_{i}_{v}"], by[f"route_{i}_{v}"], by[f"eject_{i}_{v}"]]
            was = [Signal.like(s, name=f"was_{s.name}") for s in now]
            granted = Signal(name=f"was_granted_{i}_{v}")
            m.d.sync += [a.eq(b) for a, b in zip(was, now)] + [granted.eq(dut.grant[i][v].any())]
            with m.If(was[0] & ~granted):
                m.d.comb += Assume(Cat(*now) == Cat(*was))
            m.d.comb += Assume(now[1] != 0)
    age = {}
    for oo in range(P):
        for ww in range(V):
            age[oo, ww] = busy_age(m, dut.taken[oo][ww], hold, f"busy_age_{oo}_{ww}")
            m.d.comb += Assume(~by[f"release_{oo}"][ww] | (age[oo, ww] >= hold))
    others = Cat(*[dut.grant[i][v][o * V + w] for i in range(P) for v in range(V) if i * V + v != x])
    lost = Signal(range(n + 2), name="lost")
    m.d.sync += lost.eq(Mux(waiting & ~won, Mux(others.any() & (lost <= n), lost + 1, lost), 0))
    m.d.comb += Assert(lost <= n)
    if params.get("va_separable") and head == (1, 0):
        env = {"m": m, "vs": vs, "after_reset": after_reset, "inner": inner, "shape": shape, "vcmap": vcmap, "dut": dut, "waiting": waiting,
               "won": won, "others": others, "lost": lost, "ow": (o, w), "n": n, "hold": hold, "age": age[o, w],
               "askers": askers}
        _separable_waiting(env)
    return m, free, n


def _separable_waiting(e):
    """The separable allocator's bounded waiting as a k-inductive potential. X = input VC (1, 0)
    waits for (o, w), whose output arbiter has the candidate ports `ports`, X's port at index k;
    D is that arbiter's round-robin distance from its pointer to port 1; L = grants of (o, w) to
    other ports counted so far: those applied (`lost`) plus one on its way (G1 or G2). A grant
    makes (o, w) busy for `hold` >= 3 cycles, so grants are at least 4 cycles apart.
      * Before X's launch (not `pend`): its registered request is at its port's launch arbiter
        from its second cycle of waiting (va_stages 2), and each cycle without its launch is the
        launch of a VC of port 1 between the port's pointer and X: t - 1 + Dp <= V - 1 (t cycles
        waited, Dp the launch arbiter's distance to X), so X launches by t = V and reaches the
        output arbiter by t = V + 2. The grants counted by then lie in cycles -2 .. V + 1 (one
        may be on its way when X starts): at most 2, and after one D <= |ports| - 2.
      * At the output arbiter (`sreq`) each grant to another port is to one between the pointer
        and X: L + D <= n stays. Granted (G1, G2), (o, w) is X's."""
    m, vs, shape, V = e["m"], e["vs"], e["shape"], e["shape"].V
    (o, w), n, lost, waiting = e["ow"], e["n"], e["lost"], e["waiting"]
    if e["hold"] < 3:
        raise ValueError("separable waiting: hold >= 3 (a grant is applied 2 cycles after it)")
    askers = e["askers"]
    ports = sorted({iv // V for iv in askers})
    if len(ports) != n or [iv for iv in askers if iv // V == 1] != [V]:
        raise ValueError("separable waiting: one VC per input port can ask for (o, w)")
    k = ports.index(1)

    def slot(i):
        return sorted({ow for v in range(V) for ow in e["vcmap"].ovcs_of[i * V + v]}).index((o, w))
    pend, l1 = signal(vs, "sva_pend_1_0"), signal(vs, "sva_l1_vc_1")[0]
    sreq, g2 = signal(vs, "sva_sreq_1")[slot(1)], signal(vs, "sva_g2_1")[slot(1)]
    g1_all = signal(vs, f"sva_g1_{o}_{w}")
    g1 = g1_all[k]
    fly_g1 = Cat(*[g1_all[j] for j in range(len(ports)) if j != k]).any()
    fly_g2 = Cat(*[signal(vs, f"sva_g2_{i}")[slot(i)] for i in ports if i != 1]).any()
    gnt = signal(vs, f"sva_gnt_{o}_{w}")
    masks = [(submodule(e["inner"], f"sva_out_{o}_{w}").mask, len(ports)), (submodule(e["inner"], "sva_port_1").mask, V)]
    m.d.comb += [Assert(((mask << 1)[:size] & ~mask) == 0) for mask, size in masks]      # thermometers
    d_out = ptr_dist(m, masks[0][0], k, len(ports), "wait_d_out")
    d_port = ptr_dist(m, masks[1][0], 0, V, "wait_d_port")
    going = waiting & ~e["won"]
    t = Signal(range(16), name="wait_t")                    # cycles waited, saturating
    m.d.sync += t.eq(Mux(going, Mux(t < 15, t + 1, t), 0))
    count = Signal(range(n + 3), name="wait_count")         # L
    m.d.comb += count.eq(lost + (fly_g1 | fly_g2))
    since = Signal(range(16), name="wait_since_grant", init=15)     # cycles since (o, w)'s last grant
    m.d.sync += since.eq(Mux(gnt.any(), 1, Mux(since < 15, since + 1, since)))
    busy, age = e["dut"].busy[o][w], e["age"]
    with m.If((since >= 1) & (since <= 3)):
        m.d.comb += [Assert(busy), Assert(age == since)]
    m.d.comb += [Assert(since >= 1), Assert(g1_all.any() == (since == 1)),
                 Assert(Cat(*[signal(vs, f"sva_g2_{i}")[slot(i)] for i in ports]).any() == (since == 2))]
    late = int(shape.params.va_stages == 2)      # cycles from X's ask to its port's launch arbiter
    if shape.params.va_choice_stage and o < shape.R:     # the registered choice: valid from cycle 1 (busy VCs too)
        c = e["vcmap"].next_class(V, o)
        m.d.comb += Assert(~e["after_reset"] | signal(vs, f"vbest_reg_{o}_{c}_v"))
    m.d.comb += Assert(~pend | waiting)
    if late:
        m.d.comb += Assert(~signal(vs, "va2_v_1_0") | waiting)
    with m.If(going):
        with m.If(~pend):
            m.d.comb += Assert(t <= V - 1 + late)
            with m.If(t >= late):
                m.d.comb += Assert(t - late + d_port <= V - 1)
                if late:
                    m.d.comb += Assert(signal(vs, "va2_v_1_0"))
        with m.If(l1):
            m.d.comb += Assert(t <= V + late)
        with m.If((count >= 1) & ~(g1 | g2)):
            m.d.comb += Assert(d_out <= len(ports) - 2)
        with m.If(~pend | l1):       # the grants counted lie in cycles -2 .. t - since, 4 apart
            m.d.comb += Assert(count <= 2)
            with m.If(count >= 1):
                m.d.comb += Assert(t + 2 >= since)
            with m.If(count == 2):
                m.d.comb += Assert(t >= since + 2)
        with m.If(pend & ~l1):
            m.d.comb += Assert(sreq | g1 | g2)
        with m.If(sreq):
            m.d.comb += Assert(count + d_out <= n)
        with m.If(g1 | g2):
            m.d.comb += [Assert(busy), Assert(age == Mux(g1, 1, 2)), Assert(count <= n)]


def sa_harness(V: int = 3, B: int = 4, allocator_cls=None, **params):
    from ..router.switch_allocator import SwitchAllocator
    shape, _ = router_shape(V, B, **params)
    P = shape.P
    k = shape.params.sa_stages
    m = Module()
    dut = (allocator_cls or SwitchAllocator)(shape)
    inner, _ = open_up(dut)
    m.submodules.dut = inner
    free = []
    for i in range(P):
        sends = dut.send[i]
        m.d.comb += [Assert(_onehot0(sends)), Assert(_onehot0(dut.read[i]))]
        with m.If(sends.any()):
            m.d.comb += Assert(dut.read[i] == sends)
        arr_v, arr_tail = Signal(name=f"arr_v{i}"), Signal(name=f"arr_t{i}")
        arr_vc = Signal(range(V), name=f"arr_vc{i}")
        free += [arr_v, arr_vc, arr_tail]
        m.d.comb += Assume(arr_vc < V)
        for v in range(V):
            # the input VC: a FIFO of tail bits
            cnt = Signal(range(B + 1), name=f"flits_{i}_{v}")
            tails = Signal(B, name=f"tails_{i}_{v}")          # bit j: entry j (0: front) is a tail
            send = sends[v]
            arrive = arr_v & (arr_vc == v)
            m.d.comb += [Assume(~arrive | (cnt < B)), Assert(cnt <= B)]
            shifted = Mux(send, tails >> 1, tails)
            slot = (cnt - send).as_unsigned()[:len(cnt)]
            m.d.sync += [cnt.eq(cnt + arrive - send),
                         tails.eq(Mux(arrive, shifted | (arr_tail.as_unsigned() << slot), shifted))]
            m.d.comb += [dut.ready[i][v].eq(Cat(*[cnt > j for j in range(k)])), dut.tail[i][v].eq(tails[0]),
                         dut.peek[i][v].eq(tails[1] if B > 1 else 0)]
            # its allocation: an output port and that output VC's credits, held until the tail leaves
            alloc, port = Signal(name=f"alloc_{i}_{v}"), Signal(P, name=f"port_{i}_{v}")
            cred = Signal(range(B + 1), name=f"cred_{i}_{v}")
            g_v, g_port, g_cred = Signal(name=f"get_{i}_{v}"), Signal(range(P), name=f"get_port_{i}_{v}"), \
                Signal(range(B + 1), name=f"get_cred_{i}_{v}")
            back = Signal(name=f"credit_back_{i}_{v}")
            free += [g_v, g_port, g_cred, back]
            m.d.comb += [Assume(g_port < P), Assume(g_cred <= B), Assume(~g_v | ~alloc),
                         Assume(~back | (cred < B + send)), Assert(cred <= B)]
            freed = send & tails[0]
            with m.If(g_v):
                m.d.sync += [alloc.eq(1), port.eq(1 << g_port), cred.eq(g_cred)]
            with m.Else():
                m.d.sync += cred.eq(cred - send + back)
                with m.If(freed):
                    m.d.sync += alloc.eq(0)
            m.d.comb += [Assert(~alloc | _onehot0(port) & port.any()), dut.alloc_valid[i][v].eq(alloc),
                         dut.port[i][v].eq(port)]
            flags = Cat(*[cred > j for j in range(k)])
            if k == 3:        # the router's held copy: 0 while the VC holds no output VC
                m.d.comb += dut.credit[i][v].eq(Mux(alloc, flags, 0))
            else:             # not read while unallocated: any value then
                junk = Signal(k, name=f"junk_credit_{i}_{v}")
                free.append(junk)
                m.d.comb += dut.credit[i][v].eq(Mux(alloc, flags, junk))
            with m.If(send):      # no send without an output VC, a flit and a credit
                m.d.comb += [Assert(alloc), Assert(cnt > 0), Assert(cred > 0)]
                for o in range(P):
                    m.d.comb += Assert(dut.out_sel[o][i] == port[o])
    for o in range(P):
        sel = dut.out_sel[o]
        m.d.comb += [Assert(_onehot0(sel)), Assert(dut.out_valid[o] == sel.any())]
        for i in range(P):
            with m.If(sel[i]):
                m.d.comb += Assert(dut.send[i].any())
    return m, free


__all__ = ["SEPARABLE_HOLD", "busy_age", "router_shape", "sa_harness", "separable_va_invariants", "va_harness",
           "va_waiting_harness"]
