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

from .internals import open_up


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
    m, free, _ = _va_env(V, B, allocator_cls, params)
    return m, free


def _va_env(V, B, allocator_cls, params):
    """va_harness's module, free inputs and allocator (its assertions included)."""
    from ..router.vc_allocator import VCAllocator
    shape, vcmap = router_shape(V, B, **params)
    P, R = shape.P, shape.R
    m = Module()
    dut = (allocator_cls or VCAllocator)(shape, vcmap)
    inner, _ = open_up(dut)
    m.submodules.dut = inner
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
    return m, free, dut


def va_waiting_harness(V: int = 3, B: int = 4, hold: int = 3, **params):
    """Bounded waiting of a VC allocator alone (`va_harness`'s environment and assertions):
    input VC X = (1, 0) asks, from reset until it wins, for output port 0 only, so for the one
    output VC (0, w) of its next class; every other input VC's request is free, but a head's
    request stays, unchanged, until its input VC is granted (as the router's fronts do), and an
    output VC stays busy at least `hold` cycles (its packet's flits). Asserted: while X waits,
    (0, w) goes to other input VCs at most n times, n the input VCs that can hold it (what
    `router_props._va_fairness` proves in the router for the central allocator with registered
    requests). For `mode bmc`; returns (module, free inputs, n)."""
    if hold < 1:
        raise ValueError(f"hold={hold}: an output VC is busy at least 1 cycle")
    m, free, dut = _va_env(V, B, None, params)
    shape, vcmap = router_shape(V, B, **params)
    P, R = shape.P, shape.R
    by = {s.name: s for s in free}
    x, o = 1 * V + 0, 0
    w = next(w for w in range(V) if (o, w) in vcmap.ovcs_of[x])
    n = len(vcmap.holders[(o, w)])
    waiting = Signal(init=1)
    m.d.sync += waiting.eq(waiting & ~dut.grant[1][0][o * V + w])
    m.d.comb += Assume(~waiting | (by["req_1_0"] & (by["route_1_0"] == 1 << o) & ~by["eject_1_0"]))
    for i in range(P):
        for v in range(V):
            now = [by[f"req_{i}_{v}"], by[f"route_{i}_{v}"], by[f"eject_{i}_{v}"]]
            was = [Signal.like(s, name=f"was_{s.name}") for s in now]
            granted = Signal(name=f"was_granted_{i}_{v}")
            m.d.sync += [a.eq(b) for a, b in zip(was, now)] + [granted.eq(dut.grant[i][v].any())]
            with m.If(was[0] & ~granted):
                m.d.comb += Assume(Cat(*now) == Cat(*was))
            m.d.comb += Assume(now[1] != 0)
    for oo in range(P):
        for ww in range(V):
            age = Signal(range(hold + 1), name=f"busy_age_{oo}_{ww}")     # cycles busy, saturating
            m.d.sync += age.eq(Mux(dut.taken[oo][ww], 1, Mux(age < hold, age + 1, age)))
            m.d.comb += Assume(~by[f"release_{oo}"][ww] | (age >= hold))
    others = Cat(*[dut.grant[i][v][o * V + w] for i in range(P) for v in range(V) if i * V + v != x])
    lost = Signal(range(n + 2))
    m.d.sync += lost.eq(Mux(waiting & others.any() & (lost <= n), lost + 1, lost))
    m.d.comb += Assert(lost <= n)
    return m, free, n


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


__all__ = ["router_shape", "va_harness", "va_waiting_harness", "sa_harness"]
