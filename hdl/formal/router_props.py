"""Whole-router harness (router 0 of PolarStar q=3 IQ d'=0 with one endpoint: R = 4 network ports +
1 local, P = 5; V VCs, B entries, 2-flit packets, the arithmetic PolarStar unit).

The environment (as `router_harness` in properties.py): upstream sends on input VC v only with a
credit for it (it counts the router's credit returns), whole packets per input VC (head first,
tail last, one packet id, sequence numbers in order); downstream returns a credit on output VC w
only for a flit it got. Flit contents are otherwise free.

Asserted, `induct=True` (k-induction; the allocation state read from the netlist: `alloc_valid_*`,
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
They close at k = 1 with the one-cycle allocators and with va_stages 2 + va_choice_stage 1; with
a pipelined switch allocator they did not (sa_stages 3 + st_stage 1 at k = 3, sa_stages 2 at
k = 2): its nomination and grant registers need invariants tying them to the buffers' contents
(which flit of a packet is at each front), not written yet.
`induct=False` adds, bounded from reset (BMC): on every output VC a packet's flits leave head
first, tail last, with one packet id, never interleaved with another packet's.
"""
from __future__ import annotations

import functools

from amaranth.hdl import Assert, Assume, Cat, Module, Signal

from .internals import open_submodule, open_up, signal, submodule
from .properties import packet_sources


@functools.lru_cache(maxsize=None)
def _net():
    from topologies import polarstar
    return polarstar(3, "iq", 0)


def _onehot0(x):
    return (x & (x - 1)) == 0


def router5_harness(V: int = 3, B: int = 4, pkt_len: int = 2, induct: bool = True, honest_downstream: bool = True,
                    router_cls=None, **params):
    from contract.flit import flit_layout
    from contract.params import RouterParams

    from ..router import Router
    from ..routing_units import PolarStarUnit

    net = _net()
    R, p = int(net.ports.max()), 1
    prm = RouterParams(vcs=V, depth=B, packet_flits=pkt_len, payload_bits=1, packet_id_bits=2, **params)
    lay = flit_layout(net.num_routers, p, prm)
    m = Module()
    dut = (router_cls or Router)(R, p, prm, lay, lambda lanes: PolarStarUnit(net, lanes), net.num_routers,
                                 min(V, 3), router_id=0)
    inner, sig = open_up(dut)
    m.submodules.dut = inner
    outs = submodule(inner, "outputs")
    P, vcmap = dut.P, dut.vcmap
    free = packet_sources(m, dut, V, B, pkt_len)      # credit-respecting whole packets per input VC
    # ---- the allocation state
    valid = [[signal(sig, f"alloc_valid_{i}_{v}") for v in range(V)] for i in range(P)]
    ws = [[signal(sig, f"alloc_w_{i}_{v}") for v in range(V)] for i in range(P)]
    oh = [signal(sig, f"alloc_oh_{iv // V}_{iv % V}") for iv in range(P * V)]
    for iv, ovcs in enumerate(vcmap.ovcs_of):
        i, v = divmod(iv, V)
        with m.If(valid[i][v]):
            m.d.comb += [Assert(_onehot0(oh[iv])), Assert(oh[iv].any())]
            for k, (o, w) in enumerate(ovcs):
                with m.If(oh[iv][k]):
                    m.d.comb += Assert(ws[i][v] == w)
    if dut.held_credit_error is not None:      # sa_stages = 3: each VC's copy of its output VC's credit flags
        m.d.comb += Assert(~dut.held_credit_error)
    if prm.va_stages == 2 and not prm.va_separable:
        # a request registered for the VC allocator's second stage is never of an allocated VC
        _, vsig = open_submodule(inner, "vc_alloc")
        m.d.comb += [Assert(~signal(vsig, f"va2_v_{i}_{v}") | ~valid[i][v]) for i in range(P) for v in range(V)]
    st = prm.st_stage
    for o in range(P):
        out = dut.flit_out[o]
        fl = out.payload
        busy = outs.busy[o]
        if o < R:
            cv, cvc = Signal(name=f"cr_valid{o}"), Signal(range(V), name=f"cr_vc{o}")
            free += [cv, cvc]
            m.d.comb += [dut.credit_in[o].valid.eq(cv), dut.credit_in[o].payload.eq(cvc), Assume(cvc < V)]
        for w in range(V):
            hold = Cat(*[valid[iv // V][iv % V] & oh[iv][k] for iv, k in vcmap.holders.get((o, w), [])])
            m.d.comb += [Assert(_onehot0(hold)), Assert(busy[w] == hold.any())]
            # busy falls exactly when a tail leaves (st_stage cycles after its allocation)
            leave = out.valid & (fl.vc == w)
            tail_out = Signal(name=f"tail_out{o}_{w}")
            m.d.comb += tail_out.eq(leave & fl.tail)
            prev_busy = Signal(name=f"prev_busy{o}_{w}")
            m.d.sync += prev_busy.eq(busy[w])
            fell = prev_busy & ~busy[w]
            for k in range(st):
                d = Signal(name=f"fell{o}_{w}_d{k}")
                m.d.sync += d.eq(fell)
                fell = d
            tail_prev = Signal(name=f"tail_prev{o}_{w}")
            m.d.sync += tail_prev.eq(tail_out)
            if st == 0 or not induct:     # with a traversal stage: bounded only (not inductive at k <= 3)
                m.d.comb += Assert(fell == tail_prev)
            if not induct:
                is_open = Signal(name=f"out_open{o}_{w}")
                pk = Signal(len(fl.packet), name=f"out_pk{o}_{w}")
                with m.If(leave):
                    m.d.comb += Assert(fl.head == ~is_open)
                    with m.If(is_open):
                        m.d.comb += Assert(fl.packet == pk)
                    m.d.sync += [is_open.eq(~fl.tail), pk.eq(fl.packet)]
            if o < R:
                owed = Signal(range(B + 2), name=f"owed{o}_{w}")
                back = cv & (cvc == w)
                if honest_downstream:
                    m.d.comb += Assume(~back | (owed > 0))
                m.d.sync += owed.eq(owed + leave - back)
                # the flits the switch allocator sent that are still in the traversal stages
                # (st_stage of them): the one sent st_stage cycles ago is the one leaving now
                sent, hist = outs.sent[o][w], []
                for k in range(st):
                    h = Signal(name=f"sent{o}_{w}_d{k}")
                    m.d.sync += h.eq(hist[-1] if hist else sent)
                    hist.append(h)
                m.d.comb += Assert(leave == (hist[-1] if hist else sent))
                in_st = sum(h.as_unsigned() for h in hist) if hist else 0
                cnt = dut.credit_counters[o][w]
                m.d.comb += [Assert(cnt + in_st + owed == B), Assert(cnt <= B)]
                m.d.comb += [Assert(outs.credit_gt[o][w][j] == (cnt > j)) for j in range(prm.sa_stages)]
    return m, free


__all__ = ["router5_harness"]
