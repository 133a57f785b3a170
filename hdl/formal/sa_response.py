"""Bounded response of the pipelined switch allocator (sa_stages 2 and 3), for the whole-router
harness of router_props.py, with any honest downstream (credits back at any time after).

An input VC v of port i *waits* in a cycle when it holds an output VC, has a flit and a credit and
does not send. The property: it waits at most `pipelined_response_bound(P, V, sa_stages)` + 1
cycles in a row (credits only come back while it waits, so it keeps the credit).
Proved by k-induction with a potential psi that falls in every cycle v waits
(`waited + psi <= bound`). The port's state: its input arbiter's pointer p, last cycle's
nomination N (competing at the output stage now) and, three stages, last cycle's grant G (sending
now). For a VC x other than v let r(x) = (v - x - 1) mod V, the distance from v that the pointer
has once x has sent (the pointer moves to x + 1), and r_p = (v - p) mod V. Each cycle the input
stage picks the first eligible VC at or after p, so (v being eligible) its pick c has
r(c) < r_p, and every other register inherits a value already there: the largest,
F = max(r_p, r(G), r(N)), never grows. The potential, lexicographic:
  F;
  s: the last register that holds F (2: N, 1: G, 0: only the pointer) -- a largest value moves
     from N to G to the pointer and no new pick reaches it, so s falls while F stays;
  h (three stages, s = 0): 0 when a grant is in flight -- it sends, the pointer moves to a VC
     with r < F and F falls -- else 1;
  Dn, Do (s = 0, no grant in flight): the nomination's distance from the pointer (V: none) and
     its output arbiter's distance to port i. The nomination is v or lies between p and v and is
     still eligible, so if it loses the next pick is nearer the pointer or the same VC, and then
     its output arbiter granted a port before i and moved towards it.
When N is v and wins (three stages) psi is 0: v sends in the next cycle. The one-cycle SA's
tighter potential is router_props._liveness.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Const, Mux, Signal

from .internals import ptr_dist, signal
from .router_inv import held_credit, open_sa_arbiters, open_sw


def pipelined_response_bound(P: int, V: int, sa_stages: int) -> int:
    """The potential's range: an input VC that waits (holds an output VC, has a flit and a credit,
    does not send) has waited at most this many cycles before, so it sends within bound + 1
    cycles (pipelined switch allocator, any honest downstream)."""
    return V * _levels(P, V, sa_stages) - 1 + (sa_stages == 3)      # F in 0..V-1; + 1: v won, sends next


def _levels(P: int, V: int, sa_stages: int) -> int:
    """The potential's values for one F: (Dn, Do) pairs, then s = 1 (and s = 2, and h = 0, with
    three stages)."""
    span = (V + 1) * P                              # Dn (0..V) and Do (0..P-1)
    return span + 1 if sa_stages == 2 else span + 3


def _r(x, v: int, V: int):
    """r of the one-hot VC x (0 when x is none or v: those do not count towards F)."""
    return sum(Mux(x[u], (v - u - 1) % V, 0) for u in range(V) if u != v)


def _max(m, a, b, name):
    out = Signal.like(a, name=name)
    m.d.comb += out.eq(Mux(a > b, a, b))
    return out


def _port_potential(c, i, v, arbs):
    """psi of input VC (i, v) (see the module's docstring): a Signal."""
    m, P, V, k = c.m, c.P, c.V, c.prm.sa_stages
    ssig = c.ssig
    in_arb, out_arb = arbs
    nom, nport = signal(ssig, f"sa_nom_{i}"), signal(ssig, f"sa_nom_port_{i}")
    gnt = signal(ssig, f"sa_gnt_{i}") if k == 3 else Const(0, V)
    won = signal(ssig, f"sa_won_{i}")
    tag = f"{i}_{v}"
    rp = ptr_dist(m, in_arb[i].mask, v, V, f"resp_rp{tag}")
    n_other = (nom & ~(1 << v)).any()
    g_other = (gnt & ~(1 << v)).any()
    rn, rg = _r(nom, v, V), _r(gnt, v, V)
    f = _max(m, _max(m, rp, rg, f"resp_fpg{tag}"), rn, f"resp_f{tag}")
    s_levels = 3 if k == 3 else 2
    s = Signal(range(3), name=f"resp_s{tag}")
    m.d.comb += s.eq(Mux(n_other & (rn == f), s_levels - 1, Mux(g_other & (rg == f), 1, 0)))
    h = ~gnt.any() if k == 3 else Const(0, 1)
    dn = Signal(range(V + 1), name=f"resp_dn{tag}")
    m.d.comb += dn.eq(Mux(nom.any(), sum(Mux(nom[u], ptr_dist(m, in_arb[i].mask, u, V, f"resp_dn{tag}_{u}"), 0)
                                         for u in range(V)), V))
    do = sum(Mux(nport[o], ptr_dist(m, out_arb[o].mask, i, P, f"resp_do{tag}_{o}"), 0) for o in range(P))
    span = (V + 1) * P
    if k == 3:      # per F: h = 0, then (Dn, Do) with h = 1, then s = 1, then s = 2
        local = Mux(s == 2, span + 2, Mux(s == 1, span + 1, Mux(h, 1 + dn * P + do, 0)))
    else:           # per F: (Dn, Do), then s = 1
        local = Mux(s == 1, span, dn * P + do)
    lex = f * _levels(P, V, k) + local
    psi = Signal(range(4 * pipelined_response_bound(P, V, k) + 4), name=f"resp_psi{tag}")
    m.d.comb += psi.eq(Mux(nom[v] & won, 0, 1 + lex) if k == 3 else lex)
    return psi


def pipelined_sa_response(c):
    """Assert the bounded response of the pipelined SA for every input VC (see the docstring)."""
    m, P, V, k = c.m, c.P, c.V, c.prm.sa_stages
    ssig = open_sw(c)
    in_arb, out_arb = open_sa_arbiters(c)
    bound = pipelined_response_bound(P, V, k)
    for i in range(P):
        elig, nom, won = signal(ssig, f"elig_{i}"), signal(ssig, f"sa_nom_{i}"), signal(ssig, f"sa_won_{i}")
        for v in range(V):
            waits = Signal(name=f"resp_waits_{i}_{v}")
            credit = held_credit(c, i * V + v, 0)
            m.d.comb += waits.eq(c.valid[i][v] & (c.count[i][v] > 0) & credit & ~c.swa.send[i][v])
            waited = Signal(range(bound + 2), name=f"resp_waited_{i}_{v}")
            m.d.sync += waited.eq(Mux(waits, waited + 1, 0))
            psi = _port_potential(c, i, v, (in_arb, out_arb))
            with m.If(waits):
                # a waiting VC is eligible unless its nomination wins now (it sends next cycle)
                m.d.comb += Assert(elig[v] | (nom[v] & won))
                m.d.comb += Assert(waited + psi <= bound)
                m.d.comb += Assert(waited <= bound)


__all__ = ["pipelined_response_bound", "pipelined_sa_response"]
