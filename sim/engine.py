"""The cycle-accurate network engine (docs/microarchitecture.md), compiled with Numba.

State lives in flat arrays over all routers; one call advances the whole network by a range of
cycles. Routing candidates are computed here from the same data `routing_logic` uses (the
all-pairs distance table, or the arithmetic PolarStar next-hop table produced by
`routing_logic`); `tests/test_sim_routing.py` checks them against `routing_logic` candidate by
candidate. Every arbitration rule is the one the page states.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from contract.params import SEPARABLE_VA_TRIP

# routing modes
MIN, NEXTHOP, POLARIZED, VALIANT, UGAL = 0, 1, 2, 3, 4

# status codes returned by run_cycles
OK, DEADLOCK, BAD_EJECT, STALE_NOMINATION = 0, 1, 2, 3

# garbage (malformed) flits an endpoint can be made to send (NetworkSim.add_garbage): a head whose
# destination router is >= N, a head whose destination endpoint index is >= p, a body flit and a
# tail flit that follow no head. In the buffers and delay lines a garbage flit is
# (pkt = garbage id, seq = -1 - kind); every legit flit has seq >= 0.
G_BAD_DST, G_BAD_EP, G_BODY, G_TAIL = 0, 1, 2, 3
GARBAGE_KINDS = ("bad_dst", "bad_ep", "body", "tail")


@nb.njit(cache=True, inline="always")
def _polarized_ok(r, nbr, src_r, dst_r, dist):
    """(allowed, Δμ) of the hop r -> nbr for (s, t) by the Polarized rule (routing_logic.polarized)."""
    if nbr < 0:
        return False, 0
    a = np.int64(dist[r, src_r])
    b = np.int64(dist[r, dst_r])
    ds = np.int64(dist[nbr, src_r]) - a
    dt = np.int64(dist[nbr, dst_r]) - b
    dmu = ds - dt
    return dmu > 0 or (ds == 1 and dt == 1 and a < b) or (ds == -1 and dt == -1 and a >= b), dmu


@nb.njit(cache=True)
def _polarized_dead_end(r, src_r, dst_r, R, nbr_r, dist):
    """No Polarized candidate at r for (s, t): the packet escapes to minimal routing (phase 0)."""
    for p in range(R):
        if _polarized_ok(r, nbr_r[r, p], src_r, dst_r, dist)[0]:
            return False
    return True


@nb.njit(cache=True, inline="always")
def _class_vcs(cin, step, crange, C):
    """VCs [w0, w1) of class min(cin + step, C - 1); crange[c] = the VC range of class c, from the
    VC policy (routing_logic.base: k = V // C per class, the leftovers to the last class or to
    class 0); C = V when there are fewer VCs than classes."""
    c = cin + step
    if c > C - 1:
        c = C - 1
    return crange[c, 0], crange[c, 1]


@nb.njit(cache=True)
def _choose(r, cin, step, src_r, dst_r, inter, phase, mode, R, V, B, nbr_r, dist, nexthop, credits, owner, pen, C,
            crange):
    """Best free (port, vc) among the routing candidates for a head at router r, or (-1, -1).

    Candidate order and selection: minimum of occupancy + priority, ties to the lowest port,
    then the lowest VC. The VCs of output p are those of class min(cin + step[p], C - 1): cin is
    the class of the input VC the head waits in (0 when injected), step[p] the VC policy's
    class step from its input port to p (routing_logic.base: 1 for `hops`, 1 at a
    down-then-up turn for `turns`, 0 at a local input)."""
    best_p = -1
    best_w = -1
    best_key = 1 << 30
    if mode == NEXTHOP:
        p = nexthop[r, dst_r]
        w0, w1 = _class_vcs(cin, step[p], crange, C)
        for w in range(w0, w1):
            if owner[r, p, w] < 0:
                key = B - credits[r, p, w]
                if key < best_key:
                    best_key = key
                    best_w = w
        return (p, best_w) if best_w >= 0 else (-1, -1)
    if mode == POLARIZED and phase == 1:
        for p in range(R):
            ok, dmu = _polarized_ok(r, nbr_r[r, p], src_r, dst_r, dist)
            if not ok:
                continue
            w0, w1 = _class_vcs(cin, step[p], crange, C)
            for w in range(w0, w1):
                if owner[r, p, w] >= 0:
                    continue
                key = (B - credits[r, p, w]) + pen[dmu + 2]
                if key < best_key:
                    best_key = key
                    best_p = p
                    best_w = w
        return (best_p, best_w) if best_p >= 0 else (-1, -1)
    # MIN / VALIANT / UGAL / escaped Polarized: all minimal ports toward the current target
    tgt = dst_r
    if (mode == VALIANT or mode == UGAL) and phase == 0 and r != inter:
        tgt = inter
    d0 = dist[r, tgt]
    for p in range(R):
        nbr = nbr_r[r, p]
        if nbr < 0 or dist[nbr, tgt] + 1 != d0:
            continue
        w0, w1 = _class_vcs(cin, step[p], crange, C)
        for w in range(w0, w1):
            if owner[r, p, w] >= 0:
                continue
            key = B - credits[r, p, w]
            if key < best_key:
                best_key = key
                best_p = p
                best_w = w
    return (best_p, best_w) if best_p >= 0 else (-1, -1)


@nb.njit(cache=True)
def _port_queue(r, p, V, B, credits):
    q = 0
    for w in range(V):
        q += B - credits[r, p, w]
    return q


@nb.njit(cache=True)
def _best_min_queue(r, tgt, R, V, B, nbr_r, dist, credits):
    d0 = dist[r, tgt]
    best = 1 << 30
    for p in range(R):
        nbr = nbr_r[r, p]
        if nbr >= 0 and dist[nbr, tgt] + 1 == d0:
            q = _port_queue(r, p, V, B, credits)
            if q < best:
                best = q
    return best


@nb.njit(cache=True)
def _ugal_decide(r, t, pk, pk_inter, pk_phase, samples, R, V, B, nbr_r, dist, credits):
    """UGAL-L at source router r for destination router t (routing_logic.valiant.UGAL.inject
    with the same samples)."""
    if r == t:
        pk_inter[pk] = -1
        pk_phase[pk] = 1
        return
    h_min = np.int64(dist[r, t])
    q_min = _best_min_queue(r, t, R, V, B, nbr_r, dist, credits)
    cost_min = h_min * q_min
    best_cost = np.int64(-1)
    best_r = -1
    for k in range(samples.shape[1]):
        i = samples[pk, k]
        if i == r:
            h = h_min
            qv = q_min
        else:
            h = np.int64(dist[r, i]) + np.int64(dist[i, t])
            qv = _best_min_queue(r, i, R, V, B, nbr_r, dist, credits)
        if best_r < 0 or h * qv < best_cost:
            best_cost = h * qv
            best_r = i
    if cost_min <= best_cost:
        pk_inter[pk] = -1
        pk_phase[pk] = 1
    else:
        pk_inter[pk] = best_r
        pk_phase[pk] = 0


EV_INJECT, EV_CREDIT = 0, 1        # endpoint event kinds (etrace)


@nb.njit(cache=True, inline="always")
def _log_event(etrace, etrace_len, kind, t, e, v, ident, seq):
    n = etrace_len[0]
    if n < etrace.shape[0]:
        etrace[n, 0] = kind
        etrace[n, 1] = t
        etrace[n, 2] = e
        etrace[n, 3] = v
        etrace[n, 4] = ident
        etrace[n, 5] = seq
    etrace_len[0] = n + 1           # counts past the capacity: the caller sees an overflow


@nb.njit(cache=True, inline="always")
def _most_credits(ep_credit, e, V):
    """Endpoint e's VC with the most credits (ties: the lowest)."""
    best = 0
    for v in range(1, V):
        if ep_credit[e, v] > ep_credit[e, best]:
            best = v
    return best


@nb.njit(cache=True, inline="always")
def _endpoint_send(t, e, v, ident, seq, R, LL, ep_router, ep_first, ep_credit,
                   a_cnt, a_r, a_p, a_v, a_pkt, a_seq, etrace, etrace_len):
    """Endpoint e sends flit (ident, seq) on VC v in cycle t: it reaches its router's local
    input LL cycles later, and takes one of the endpoint's credits. seq < 0: garbage."""
    r = ep_router[e]
    s2 = (t + LL) % a_cnt.shape[0]
    k = a_cnt[s2]
    a_r[s2, k] = r
    a_p[s2, k] = R + (e - ep_first[r])
    a_v[s2, k] = v
    a_pkt[s2, k] = ident
    a_seq[s2, k] = seq
    a_cnt[s2] = k + 1
    ep_credit[e, v] -= 1
    _log_event(etrace, etrace_len, EV_INJECT, t, e, v, ident, seq)


@nb.njit(cache=True, inline="always")
def _can_send(r, i, v, spare, R, alloc_o, alloc_w, f_cnt, credits):
    """Input VC v of port i holds an output VC and has more than `spare` flits and credits."""
    o = alloc_o[r, i, v]
    return o >= 0 and f_cnt[r, i, v] > spare and (o >= R or credits[r, o, alloc_w[r, i, v]] > spare)


@nb.njit(cache=True)
def _separable_va(r, P, V, arb_in, arb_o, arb_w, narb, owner, va_ptr, sep_cnt, sep_ptr, sep_pipe, sep_new, best_p):
    """One cycle of the separable VC allocator (va_separable = 1), from start-of-cycle state;
    writes this cycle's launches to sep_new[0] and its output-VC grants to sep_new[1]. The caller
    applies them, and the grants that come back, after the switch allocator.

    Output stage: per output VC a round-robin arbiter over the input ports whose request launched
    two cycles ago targets it; it grants only while the output VC is free (else its pointer
    stays). Launch stage: per input port a round-robin arbiter over its VCs with a request and no
    request in flight (sep_cnt = 0) launches one."""
    for i in range(P):
        sep_new[0, i, 0] = -1
        sep_new[1, i, 0] = -1
        v = sep_pipe[r, 1, i, 0]
        if v < 0:
            continue
        o = sep_pipe[r, 1, i, 1]
        w = sep_pipe[r, 1, i, 2]
        if owner[r, o, w] >= 0:
            continue
        ov = o * V + w
        ptr = va_ptr[r, o, w]
        b = best_p[ov]
        if b < 0 or (i - ptr) % P < (b - ptr) % P:
            best_p[ov] = i
    for i in range(P):
        v = sep_pipe[r, 1, i, 0]
        if v < 0:
            continue
        o = sep_pipe[r, 1, i, 1]
        w = sep_pipe[r, 1, i, 2]
        if best_p[o * V + w] == i:
            sep_new[1, i, 0] = v
            sep_new[1, i, 1] = o
            sep_new[1, i, 2] = w
            va_ptr[r, o, w] = (i + 1) % P
    for i in range(P):
        v = sep_pipe[r, 1, i, 0]
        if v >= 0:
            best_p[sep_pipe[r, 1, i, 1] * V + sep_pipe[r, 1, i, 2]] = -1
    for k in range(narb):
        i = arb_in[k] // V
        v = arb_in[k] % V
        if sep_cnt[r, i, v] != 0:
            continue
        ptr = sep_ptr[r, i]
        b = sep_new[0, i, 0]
        if b < 0 or (v - ptr) % V < (b - ptr) % V:
            sep_new[0, i, 0] = v
            sep_new[0, i, 1] = arb_o[k]
            sep_new[0, i, 2] = arb_w[k]
    for i in range(P):
        for v in range(V):
            if sep_cnt[r, i, v] > 0:
                sep_cnt[r, i, v] -= 1
        v = sep_new[0, i, 0]
        if v >= 0:
            sep_cnt[r, i, v] = SEPARABLE_VA_TRIP
            sep_ptr[r, i] = (v + 1) % V


@nb.njit(cache=True)
def run_cycles(t0, t1, mode, R, V, B, L, LL, CL, watchdog, C, iters, VS, SS, ST, SEP, CH,
               nbr_r, nbr_p, cstep, vcls, crange, dist, nexthop, pen, ep_first, ep_router,
               # buffers and router state; pend_o/pend_w[r, iv]: the VC request input VC iv made
               # last cycle (-1: none), arbitrated this cycle when VS (va_stages) = 2; nom[r, i]: the
               # VC input port i nominated last cycle (-1: none), offered to this cycle's output
               # stage when SS (sa_stages) >= 2; gnt[r, i]: with SS = 3, the VC of port i that the
               # output stage granted last cycle (-1: none), which sends in this cycle
               f_pkt, f_seq, f_head, f_cnt, alloc_o, alloc_w, owner, credits, va_ptr, pend_o, pend_w,
               nom, gnt, in_ptr, out_ptr,
               # SEP (va_separable) = 1: sep_cnt[r, i, v] cycles until input VC (i, v) may launch a
               # request again; sep_ptr[r, i] the port's launch pointer; sep_pipe[r, k, i] = (v, o, w)
               # of port i's request (v = -1: none) launched k + 1 cycles ago (k = 0, 1) or, k = 2, 3,
               # granted at its output VC k - 1 cycles ago (va_ptr then points over input ports)
               sep_cnt, sep_ptr, sep_pipe,
               # CH (va_choice_stage) = 1: ch_owner/ch_cred[r, t % 2] hold router r's owner and
               # credits at the start of cycle t; the VC choice of cycle t reads slot (t + 1) % 2,
               # the start of t - 1 (the RTL's registered best free VC per output and class)
               ch_owner, ch_cred,
               ep_credit, ep_vc, q_head, q_tail, q_sent, router_flits,
               # packets
               pk_src, pk_dst, pk_ctime, pk_hops, pk_inter, pk_phase, pk_decided, pk_next, pk_eseq, pk_done,
               samples,
               # generation: packets created in [t0, t1), sorted by time
               gen_time, gen_pk, n_gen,
               # delay lines
               a_cnt, a_r, a_p, a_v, a_pkt, a_seq, c_cnt, c_r, c_p, c_v,
               # counters: [injected flits, ejected flits, idle cycles, last move cycle,
               #            malformed flits dropped, garbage flits sent by endpoints]
               counters, eject_hist, trace, trace_len,
               # endpoint events (replay of the endpoints' side, tests/cocotb/replay.py): rows
               # (kind, cycle, endpoint, vc, id, seq); kind EV_INJECT: a flit sent (id = packet,
               # or garbage id with seq = -1 - kind), EV_CREDIT: a credit counted by the endpoint
               etrace, etrace_len,
               # garbage flits: per id endpoint, kind, queue link, cycle sent, cycle dropped; per
               # endpoint queue of due garbage; per router garbage flits in its buffers; garbage
               # becoming due in [t0, t1), sorted by time
               g_ep, g_kind, g_next, g_sent, g_drop, gq_head, gq_tail, r_garbage, ggen_time, ggen_id, n_ggen,
               skip=-1):
    """Advance cycles [t0, t1). Router `skip` (>= 0) is simulated elsewhere (`sim.external`):
    its allocation stages do not run here, and the caller takes the flits and credits bound for it
    out of the delay lines before they are due."""
    n = nbr_r.shape[0]
    P = f_cnt.shape[1]
    RING = a_cnt.shape[0]
    NV = P * V
    req_in = np.empty(NV, np.int64)
    req_o = np.empty(NV, np.int64)
    req_w = np.empty(NV, np.int64)
    last_in = np.empty(NV, np.int64)     # VS = 2: last cycle's requests that still hold
    last_o = np.empty(NV, np.int64)
    last_w = np.empty(NV, np.int64)
    best_k = np.full(NV, -1, np.int64)
    sep_new = np.full((2, P, 3), -1, np.int64)   # SEP: this cycle's launches (0) and grants (1)
    in_choice = np.empty(P, np.int64)
    best_in = np.full(P, -1, np.int64)
    in_done = np.zeros(P, np.bool_)
    out_done = np.zeros(P, np.bool_)
    out_list = np.empty(P, np.int64)
    snd_i = np.empty(P, np.int64)        # this cycle's senders: input port, VC
    snd_v = np.empty(P, np.int64)
    gi = 0
    ggi = 0
    for t in range(t0, t1):
        slot = t % RING
        moved = False
        ch_cred_prev = ch_cred[:, (t + 1) % 2]     # CH: the state at the start of t - 1
        ch_owner_prev = ch_owner[:, (t + 1) % 2]
        # ---- deliveries due this cycle -------------------------------------------------------
        for k in range(a_cnt[slot]):
            r = a_r[slot, k]
            p = a_p[slot, k]
            v = a_v[slot, k]
            pos = (f_head[r, p, v] + f_cnt[r, p, v]) % B
            f_pkt[r, p, v, pos] = a_pkt[slot, k]
            f_seq[r, p, v, pos] = a_seq[slot, k]
            f_cnt[r, p, v] += 1
            router_flits[r] += 1
            if a_seq[slot, k] < 0:
                r_garbage[r] += 1
        a_cnt[slot] = 0
        for k in range(c_cnt[slot]):
            r = c_r[slot, k]
            p = c_p[slot, k]
            if p < 0:
                ep_credit[r, c_v[slot, k]] += 1   # r is an endpoint id here
                _log_event(etrace, etrace_len, EV_CREDIT, t, r, c_v[slot, k], -1, 0)
            else:
                credits[r, p, c_v[slot, k]] += 1
        c_cnt[slot] = 0
        # ---- new packets join their source queues ------------------------------------------
        while gi < n_gen and gen_time[gi] == t:
            pk = gen_pk[gi]
            e = pk_src[pk]
            if q_tail[e] >= 0:
                pk_next[q_tail[e]] = pk
            else:
                q_head[e] = pk
            q_tail[e] = pk
            gi += 1
        while ggi < n_ggen and ggen_time[ggi] == t:     # garbage joins its endpoint's garbage queue
            g = ggen_id[ggi]
            e = g_ep[g]
            if gq_tail[e] >= 0:
                g_next[gq_tail[e]] = g
            else:
                gq_head[e] = g
            gq_tail[e] = g
            ggi += 1
        # ---- endpoints inject one flit each ------------------------------------------------
        for e in range(ep_router.shape[0]):
            g = gq_head[e]
            if g >= 0 and q_sent[e] == 0:
                # due garbage goes first, but only between packets, on the VC with the most credits
                best = _most_credits(ep_credit, e, V)
                if ep_credit[e, best] <= 0:
                    continue
                _endpoint_send(t, e, best, g, -1 - g_kind[g], R, LL, ep_router, ep_first, ep_credit,
                               a_cnt, a_r, a_p, a_v, a_pkt, a_seq, etrace, etrace_len)
                counters[5] += 1
                moved = True
                g_sent[g] = t
                gq_head[e] = g_next[g]
                if gq_head[e] < 0:
                    gq_tail[e] = -1
                continue
            pk = q_head[e]
            if pk < 0:
                continue
            if q_sent[e] == 0:             # a new packet takes the VC with the most credits
                ep_vc[e] = _most_credits(ep_credit, e, V)
            v = ep_vc[e]
            if ep_credit[e, v] <= 0:
                continue
            _endpoint_send(t, e, v, pk, q_sent[e], R, LL, ep_router, ep_first, ep_credit,
                           a_cnt, a_r, a_p, a_v, a_pkt, a_seq, etrace, etrace_len)
            counters[0] += 1
            moved = True
            q_sent[e] += 1
            if q_sent[e] == L:
                q_sent[e] = 0
                q_head[e] = pk_next[pk]
                if q_head[e] < 0:
                    q_tail[e] = -1
        # ---- routers ------------------------------------------------------------------------
        for r in range(n):
            if CH == 1 and r != skip:          # every router, idle or not: the register always loads
                for p in range(R):
                    for w in range(V):
                        ch_owner[r, t % 2, p, w] = owner[r, p, w]
                        ch_cred[r, t % 2, p, w] = credits[r, p, w]
            if router_flits[r] == 0 or r == skip:
                if SS >= 2 and r != skip:
                    for i in range(P):     # no flit, so no nomination this cycle (nor a grant:
                        nom[r, i] = -1     # a granted flit is still in its buffer)
                        gnt[r, i] = -1
                continue
            # RC + VA, from start-of-cycle state
            nreq = 0
            for i in range(P):
                for v in range(V):
                    if f_cnt[r, i, v] == 0 or alloc_o[r, i, v] >= 0:
                        continue
                    pos = f_head[r, i, v]
                    pk = f_pkt[r, i, v, pos]
                    if f_seq[r, i, v, pos] != 0:
                        continue               # a body flit, or garbage: never requests
                    if mode == UGAL and pk_decided[pk] == 0:
                        _ugal_decide(r, ep_router[pk_dst[pk]], pk, pk_inter, pk_phase, samples, R, V, B, nbr_r,
                                     dist, credits)
                        pk_decided[pk] = 1
                    dst_r = ep_router[pk_dst[pk]]
                    ph = pk_phase[pk]
                    if ph == 0 and r == pk_inter[pk]:
                        ph = 1
                    if mode == POLARIZED and ph == 1 and r != dst_r and \
                            _polarized_dead_end(r, ep_router[pk_src[pk]], dst_r, R, nbr_r, dist):
                        pk_phase[pk] = 0           # escapes for the rest of its route
                        ph = 0
                    o = -1
                    w = -1
                    if r == dst_r and (ph == 1 or mode == POLARIZED):
                        o = R + (pk_dst[pk] - ep_first[r])
                        for ww in range(V):
                            if owner[r, o, ww] < 0:
                                w = ww
                                break
                        if w < 0:
                            o = -1
                    else:
                        cin = 0 if i >= R else vcls[v]
                        if CH == 0:
                            o, w = _choose(r, cin, cstep[r, i], ep_router[pk_src[pk]], dst_r, pk_inter[pk], ph,
                                           mode, R, V, B, nbr_r, dist, nexthop, credits, owner, pen, C, crange)
                        else:
                            o, w = _choose(r, cin, cstep[r, i], ep_router[pk_src[pk]], dst_r, pk_inter[pk], ph,
                                           mode, R, V, B, nbr_r, dist, nexthop, ch_cred_prev, ch_owner_prev,
                                           pen, C, crange)
                    if o >= 0:
                        req_in[nreq] = i * V + v
                        req_o[nreq] = o
                        req_w[nreq] = w
                        nreq += 1
            # the requests the VA arbiters see: this cycle's (VS = 1), or last cycle's (VS = 2)
            # whose input VC still holds no output VC and whose output VC is still free
            if VS == 1 and (CH == 0 or SEP == 1):
                arb_in, arb_o, arb_w, narb = req_in, req_o, req_w, nreq
            elif VS == 1:                      # a choice from last cycle's state may name a taken VC
                arb_in, arb_o, arb_w, narb = last_in, last_o, last_w, 0
                for k in range(nreq):
                    if owner[r, req_o[k], req_w[k]] < 0:
                        arb_in[narb] = req_in[k]
                        arb_o[narb] = req_o[k]
                        arb_w[narb] = req_w[k]
                        narb += 1
            else:
                arb_in, arb_o, arb_w, narb = last_in, last_o, last_w, 0
                for iv in range(NV):
                    o = pend_o[r, iv]
                    if o < 0:
                        continue
                    w = pend_w[r, iv]
                    pend_o[r, iv] = -1
                    # the central arbiters mask a taken output VC; the separable VA's output
                    # arbiters do, after the crossing
                    if alloc_o[r, iv // V, iv % V] >= 0 or (SEP == 0 and owner[r, o, w] >= 0):
                        continue
                    arb_in[narb] = iv
                    arb_o[narb] = o
                    arb_w[narb] = w
                    narb += 1
                for k in range(nreq):
                    pend_o[r, req_in[k]] = req_o[k]
                    pend_w[r, req_in[k]] = req_w[k]
            if SEP == 0:
                for k in range(narb):          # round-robin per output VC over input VC index
                    ov = arb_o[k] * V + arb_w[k]
                    ptr = va_ptr[r, arb_o[k], arb_w[k]]
                    b = best_k[ov]
                    if b < 0 or (arb_in[k] - ptr) % NV < (arb_in[b] - ptr) % NV:
                        best_k[ov] = k
            else:
                _separable_va(r, P, V, arb_in, arb_o, arb_w, narb, owner, va_ptr, sep_cnt, sep_ptr, sep_pipe,
                              sep_new, best_k)
            # SA, input-first separable, from start-of-cycle allocations
            for i in range(P):
                in_done[i] = False
                out_done[i] = False
            for it in range(iters):
                for i in range(P):
                    in_choice[i] = -1
                    if in_done[i]:
                        continue
                    ptr = in_ptr[r, i]
                    for j in range(V):
                        v = (ptr + j) % V
                        # pipelined SA: a VC nominated last cycle may send in this one (SS = 2) or
                        # the next (SS = 3), and one granted last cycle (SS = 3) sends in this one:
                        # it needs a flit and a credit to spare for each, and none of those flits
                        # (the front, then the next) may be its tail
                        nm = 0
                        if SS >= 2 and nom[r, i] == v:
                            nm += 1
                        if SS == 3 and gnt[r, i] == v:
                            nm += 1
                        if not _can_send(r, i, v, nm, R, alloc_o, alloc_w, f_cnt, credits) or out_done[alloc_o[r, i, v]]:
                            continue
                        if nm >= 1 and f_seq[r, i, v, f_head[r, i, v]] == L - 1:
                            continue
                        if nm == 2 and f_seq[r, i, v, (f_head[r, i, v] + 1) % B] == L - 1:
                            continue
                        in_choice[i] = v
                        break
                if SS >= 2:
                    # pipelined SA: this cycle's input stage only nominates (for the next cycle);
                    # the output stage takes last cycle's nominations, which the rule above keeps
                    # eligible (checked, when they send: the RTL relies on it)
                    for i in range(P):
                        v = nom[r, i]
                        nom[r, i] = in_choice[i]
                        in_choice[i] = v
                        if SS == 2 and v >= 0 and not _can_send(r, i, v, 0, R, alloc_o, alloc_w, f_cnt, credits):
                            return STALE_NOMINATION, t
                n_out = 0
                for i in range(P):             # output stage: round-robin over input ports per output
                    v = in_choice[i]
                    if v < 0:
                        continue
                    o = alloc_o[r, i, v]
                    b = best_in[o]
                    if b < 0:
                        out_list[n_out] = o
                        n_out += 1
                        best_in[o] = i
                    elif (i - out_ptr[r, o]) % P < (b - out_ptr[r, o]) % P:
                        best_in[o] = i
                # the senders: this cycle's grants, or (SS = 3) last cycle's, by input port
                n_snd = 0
                if SS == 3:
                    for i in range(P):
                        v = gnt[r, i]
                        if v >= 0:
                            if not _can_send(r, i, v, 0, R, alloc_o, alloc_w, f_cnt, credits):
                                return STALE_NOMINATION, t
                            snd_i[n_snd] = i
                            snd_v[n_snd] = v
                            n_snd += 1
                        gnt[r, i] = -1
                for k_out in range(n_out):
                    o = out_list[k_out]
                    gi_in = best_in[o]
                    best_in[o] = -1
                    out_ptr[r, o] = (gi_in + 1) % P
                    if SS == 3:
                        gnt[r, gi_in] = in_choice[gi_in]
                    else:
                        snd_i[n_snd] = gi_in
                        snd_v[n_snd] = in_choice[gi_in]
                        n_snd += 1
                        out_done[o] = True
                for k_snd in range(n_snd):
                    i = snd_i[k_snd]
                    v = snd_v[k_snd]
                    o = alloc_o[r, i, v]
                    in_done[i] = True
                    w = alloc_w[r, i, v]
                    pos = f_head[r, i, v]
                    pk = f_pkt[r, i, v, pos]
                    seq = f_seq[r, i, v, pos]
                    f_head[r, i, v] = (pos + 1) % B
                    f_cnt[r, i, v] -= 1
                    router_flits[r] -= 1
                    moved = True
                    # credit back upstream
                    sc = (t + CL) % RING
                    kc = c_cnt[sc]
                    if i < R:
                        c_r[sc, kc] = nbr_r[r, i]
                        c_p[sc, kc] = nbr_p[r, i]
                        c_v[sc, kc] = v
                    else:
                        c_r[sc, kc] = ep_first[r] + (i - R)
                        c_p[sc, kc] = -1
                        c_v[sc, kc] = v
                    c_cnt[sc] = kc + 1
                    if seq == 0 and o < R:
                        pk_hops[pk] += 1
                        if r == pk_inter[pk]:
                            pk_phase[pk] = 1
                    if o < R:
                        credits[r, o, w] -= 1
                        s2 = (t + ST + LL) % RING     # ST: the flit leaves the router ST cycles after SA
                        ka = a_cnt[s2]
                        a_r[s2, ka] = nbr_r[r, o]
                        a_p[s2, ka] = nbr_p[r, o]
                        a_v[s2, ka] = w
                        a_pkt[s2, ka] = pk
                        a_seq[s2, ka] = seq
                        a_cnt[s2] = ka + 1
                    else:
                        e = ep_first[r] + (o - R)
                        if e != pk_dst[pk] or seq != pk_eseq[pk]:
                            return BAD_EJECT, t
                        pk_eseq[pk] = seq + 1
                        counters[1] += 1
                        if trace_len[0] < trace.shape[0]:
                            tl = trace_len[0]
                            trace[tl, 0] = t + ST + LL
                            trace[tl, 1] = e
                            trace[tl, 2] = pk
                            trace[tl, 3] = seq
                            trace_len[0] = tl + 1
                        if seq == L - 1:
                            pk_done[pk] = t + ST + LL
                            h = pk_hops[pk]
                            if h < eject_hist.shape[0]:
                                eject_hist[h] += 1
                    in_ptr[r, i] = (v + 1) % V
                    if seq == L - 1:
                        owner[r, o, w] = -1
                        alloc_o[r, i, v] = -1
                        alloc_w[r, i, v] = -1
            # malformed flits (the RTL's rule, docs/microarchitecture.md): an input port that sent
            # nothing in this cycle pops the front flit of its lowest VC whose front is malformed
            # (a bad head; a body/tail at a VC holding no output VC, from start-of-cycle state: a
            # port that sent nothing had none of its VCs changed by SA) and returns its credit.
            # Only garbage flits can be malformed in the model.
            if r_garbage[r] > 0:
                for i in range(P):
                    if in_done[i]:
                        continue
                    for v in range(V):
                        if f_cnt[r, i, v] == 0:
                            continue
                        pos = f_head[r, i, v]
                        seq = f_seq[r, i, v, pos]
                        if seq >= 0 or (seq < -1 - G_BAD_EP and alloc_o[r, i, v] >= 0):
                            continue
                        f_head[r, i, v] = (pos + 1) % B
                        f_cnt[r, i, v] -= 1
                        router_flits[r] -= 1
                        r_garbage[r] -= 1
                        g_drop[f_pkt[r, i, v, pos]] = t
                        counters[4] += 1
                        moved = True
                        sc = (t + CL) % RING
                        kc = c_cnt[sc]
                        if i < R:
                            c_r[sc, kc] = nbr_r[r, i]
                            c_p[sc, kc] = nbr_p[r, i]
                        else:
                            c_r[sc, kc] = ep_first[r] + (i - R)
                            c_p[sc, kc] = -1
                        c_v[sc, kc] = v
                        c_cnt[sc] = kc + 1
                        break
            # apply VA grants (visible from t + 1)
            if SEP == 1:
                for i in range(P):
                    v = sep_pipe[r, 3, i, 0]
                    if v >= 0:             # the grant back across the router: allocated
                        alloc_o[r, i, v] = sep_pipe[r, 3, i, 1]
                        alloc_w[r, i, v] = sep_pipe[r, 3, i, 2]
                        moved = True
                    v = sep_new[1, i, 0]
                    if v >= 0:             # granted at its output VC this cycle: busy from t + 1
                        owner[r, sep_new[1, i, 1], sep_new[1, i, 2]] = i * V + v
                for k in range(3, 0, -1):
                    for i in range(P):
                        for x in range(3):
                            sep_pipe[r, k, i, x] = sep_pipe[r, k - 1, i, x] if k != 2 else sep_new[1, i, x]
                for i in range(P):
                    for x in range(3):
                        sep_pipe[r, 0, i, x] = sep_new[0, i, x]
                continue
            for k in range(narb):
                ov = arb_o[k] * V + arb_w[k]
                if best_k[ov] == k:
                    iv = arb_in[k]
                    owner[r, arb_o[k], arb_w[k]] = iv
                    alloc_o[r, iv // V, iv % V] = arb_o[k]
                    alloc_w[r, iv // V, iv % V] = arb_w[k]
                    va_ptr[r, arb_o[k], arb_w[k]] = (iv + 1) % NV
                    moved = True
            for k in range(narb):
                best_k[arb_o[k] * V + arb_w[k]] = -1
        # ---- watchdog -------------------------------------------------------------------------
        if moved:
            counters[2] = 0
            counters[3] = t
        elif counters[0] > counters[1] or counters[5] > counters[4]:
            counters[2] += 1
            if counters[2] >= watchdog:
                return DEADLOCK, t
    return OK, t1
