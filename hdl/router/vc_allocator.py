"""The VC allocator of the router (docs/microarchitecture.md, "VC allocation").

Each input VC whose front is a head without an output VC asks for one output VC: the best free
candidate (port of its route mask, VC of its hop's class), by least occupancy plus the port's
priority, ties to the lowest port then VC; an ejecting head asks for the lowest free VC of its
local port (separable: VC (i + v) mod V of input VC (i, v)). Per output VC a round-robin arbiter
grants one of the input VCs that can hold it (central; a local port's VCs take turns at one pick,
since all of a cycle's ejecting heads ask for the same one), or the separable pipelined allocator
does (`va_separable`, hdl/separable_va.py).
Pipelining by composition: `va_choice_stage` registers the per-(port, class) best VC before the
input VCs' choice, `va_stages = 2` registers the requests before the arbiters.
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from contract.flit import index_bits

from ..arbiter import (RoundRobinArbiter, RoundRobinPick, RoundRobinPointer, below_or, lowest_set_bit,
                       one_hot_index, one_hot_select)
from ..delay import register as _reg
from ..separable_va import separable_va
from .classes import separable_eject_vc


def argmin(m, leaves, name, key_bits, ob, wb):
    """The first leaf of least key among the valid ones: a tree of comparators and multiplexers.
    leaves: (valid, key, o, w) in (port, vc) order; ties go to the earlier leaf."""
    level = 0
    while len(leaves) > 1:
        nxt = []
        for k in range(0, len(leaves), 2):
            if k + 1 == len(leaves):
                nxt.append(leaves[k])
                continue
            (va, ka, oa, wa), (vb, kb, o_b, w_b) = leaves[k], leaves[k + 1]
            take_a = va & (~vb | (ka <= kb))
            nv = Signal(name=f"{name}_l{level}_{k}v")
            nk = Signal(key_bits, name=f"{name}_l{level}_{k}k")
            no = Signal(ob, name=f"{name}_l{level}_{k}o")
            nw = Signal(wb, name=f"{name}_l{level}_{k}w")
            m.d.comb += [nv.eq(va | vb), nk.eq(Mux(take_a, ka, kb)), no.eq(Mux(take_a, oa, o_b)),
                         nw.eq(Mux(take_a, wa, w_b))]
            nxt.append((nv, nk, no, nw))
        leaves = nxt
        level += 1
    return leaves[0]


def argmin_flat(m, leaves, name, less, ob, wb):
    """argmin's answer (valid, o, w) from every pair compared at once: leaf a wins if valid,
    below every valid earlier leaf and not above any valid later one, and the winner's (o, w) is
    an AND-OR of one-hot bits. Two comparator levels and a select instead of a comparator and a
    multiplexer per tree level (the input VCs' choice over the ports was the longest path of the
    three-stage SA router on the ECP5). `less(a, b)`: the bit "key of leaf a < key of leaf b"."""
    n = len(leaves)
    later_less = {}          # "later leaf a below earlier leaf b", once per pair: both leaves read it
    for a in range(n):
        for b in range(a):
            lt = less(a, b)
            if not isinstance(lt, Signal):
                lt_ = Signal(name=f"{name}_lt{a}_{b}")
                m.d.comb += lt_.eq(lt)
                lt = lt_
            later_less[a, b] = lt
    valid = Signal(n, name=f"{name}_valid")
    m.d.comb += valid.eq(Cat(*[x[0] for x in leaves]))
    win = Signal(n, name=f"{name}_win")
    for a in range(n):
        others = [b for b in range(n) if b != a]
        # a beats every valid other leaf: below the earlier ones, not above the later ones
        lts = Cat(*[later_less[a, b] if b < a else later_less[b, a] for b in others])
        beats = lts ^ Const(sum(1 << k for k, b in enumerate(others) if b > a), len(others))
        m.d.comb += win[a].eq(valid[a] & (beats | ~Cat(*[valid[b] for b in others])).all() if others else valid[a])
    nv, no, nw = Signal(name=f"{name}_v"), Signal(ob, name=f"{name}_o"), Signal(wb, name=f"{name}_w")
    m.d.comb += [nv.eq(win.any()), no.eq(one_hot_select(win, [x[2] for x in leaves])),
                 nw.eq(one_hot_select(win, [x[3] for x in leaves]))]
    return nv, no, nw


class VCAllocator(wiring.Component):
    """Parameters: `cfg`, the router's `RouterShape`; `vcmap`, its `VCMap`.

    Attributes (iv = input VC (i, v); output VCs numbered o·V + w):
      request[i][v]    In   the front of input VC (i, v) is a head that needs an output VC
      route[i][v]      In   its output ports (a bit per network port)
      prio[i][v]       In   their priorities (routing units with priorities)
      eject[i][v]      In   it leaves here (on local port R + dst_ep)
      dst_ep[i][v]     In   its destination endpoint
      busy[o]          In   bit w: output VC (o, w) is held
      occupancy[o][w]  In   flits in the downstream buffer of (o, w) (network ports)
      up               In   with class steps from the router's `up` input (`VCMap.dynamic`):
                            bit k, network port k leads up (the step from i to o is up[i] & up[o])
      grant[i][v]      Out  one-hot over the output VCs: the one (i, v) takes this cycle
      grant_w[i][v]    Out  that output VC's VC (read only beside grant)
      taken[o]         Out  bit w: (o, w) is granted this cycle
    """

    def __init__(self, cfg, vcmap):
        self.cfg, self.vcmap = cfg, vcmap
        P, R, V, B = cfg.P, cfg.R, cfg.V, cfg.params.depth
        pb = cfg.prio_bits
        super().__init__({
            "request": In(1).array(P, V),
            "route": In(R).array(P, V),
            **({"prio": In(data.ArrayLayout(pb, R)).array(P, V)} if pb else {}),
            "eject": In(1).array(P, V),
            "dst_ep": In(index_bits(cfg.p)).array(P, V),
            "busy": In(V).array(P),
            "occupancy": In(range(B + 1)).array(R, V),
            **({"up": In(R)} if vcmap.dynamic else {}),
            "grant": Out(P * V).array(P, V),
            "grant_w": Out(index_bits(V)).array(P, V),
            "taken": Out(V).array(P),
        })

    def _best_per_class(self, m):
        """Per network output o and class c, the free VC of class c with the least occupancy (ties
        to the lowest VC): (valid, key, w) per (o, c), and the keys the registered choice's
        comparisons are loaded from (`va_choice_stage`). The priority is per port, so an input VC's
        best (o, w) is then the best port over these R winners: the same choice as a minimum over
        all R·V candidates (ties to the lowest port, then VC), at 1/V the cost; with a single next
        hop (`single_port`), the winner of its port."""
        cfg, V, C = self.cfg, self.cfg.V, self.cfg.C
        ob, wb, kb = index_bits(cfg.P), index_bits(V), self.key_bits
        best, loaded = {}, {}

        def candidate(o, w):
            """(valid, key) of output VC (o, w): a free one, or with take_busy any, a busy one's
            key all ones (after every free one)."""
            if self.take_busy:
                return Const(1, 1), self.occupancy[o][w] | self.busy[o][w].replicate(kb)
            return ~self.busy[o][w], self.occupancy[o][w]

        for o in range(cfg.R):
            for c in range(C):
                members = [(*candidate(o, w), Const(o, ob), Const(w, wb)) for w in range(V) if cfg.vc_class[w] == c]
                bv, bk, _, bw = argmin(m, members, f"vbest_{o}_{c}", kb, ob, wb)
                if cfg.params.va_choice_stage:
                    # registered: the choice reads last cycle's output state (nothing free after
                    # reset, as in the model); the arbiters check "free" again
                    loaded[o, c] = bk
                    bv, bk, bw = (_reg(m, x, f"vbest_reg_{o}_{c}_{n}") for x, n in ((bv, "v"), (bk, "k"), (bw, "w")))
                best[o, c] = (bv, bk, bw)
        return best, loaded

    def _hop_best(self, m, iv, o, best):
        """(valid, key, w) of the best VC of the class input VC iv's hop through o takes: that
        class's, or with `up` steps the one the step (up[i] & up[o]) selects."""
        classes = self.vcmap.next_classes(iv, o)
        if len(classes) == 1:
            return best[o, classes[0]]
        i = iv // self.cfg.V
        if (i, o) not in self.steps:          # one per (input port, output port), for its V VCs
            self.steps[i, o] = step = Signal(name=f"va_step_{i}_{o}")
            m.d.comb += step.eq(self.up[i] & self.up[o])
        step = self.steps[i, o]
        c0, c1 = (self.vcmap.next_class(iv, o, s) for s in (0, 1))
        return tuple(Mux(step, a, b) for a, b in zip(best[o, c1], best[o, c0]))

    def _choose(self, m, i, v, best, key_less):
        """Input VC (i, v)'s request: (valid, output port, VC)."""
        cfg, V, R = self.cfg, self.cfg.V, self.cfg.R
        ob, wb, pb = index_bits(cfg.P), index_bits(V), cfg.prio_bits
        iv = i * V + v
        leaves = []
        hop = [self._hop_best(m, iv, o, best) for o in range(R)]
        for o in range(R):
            bv, bk, bw = hop[o]
            key = bk
            if pb:       # every comparison reads the sum: one adder per leaf
                key = Signal(self.key_bits, name=f"va_key_{i}_{v}_{o}")
                total = bk + self.prio[i][v][o]
                if self.take_busy:     # a busy VC's key stays all ones
                    total = total | (bk == (1 << self.key_bits) - 1).replicate(self.key_bits)
                m.d.comb += key.eq(total)
            leaves.append((self.route[i][v][o] & bv, key, Const(o, ob), bw))
        if self.single:
            # a single next hop (RoutingUnit.single_port): the route's one bit names the port and
            # the request is that port's best VC of the hop's class, with no ports to compare. The
            # route's lowest bit, so that a mask of several bits (which the unit never answers, but
            # a proof's arbitrary state may hold) still asks for a port of the route
            port = lowest_set_bit(self.route[i][v], R, m, f"va_port_{i}_{v}")
            nv = Cat(*[port[o] & hop[o][0] for o in range(R)]).any()
            no, nw = one_hot_select(port, [x[2] for x in leaves]), one_hot_select(port, [x[3] for x in leaves])
        elif pb or key_less is None:
            # keys of their own per input VC (priorities, or classes chosen by `up`): a tree of
            # R - 1 comparators, where the flat choice would compare every pair
            nv, _, no, nw = argmin(m, leaves, f"va_{i}_{v}", self.key_bits, ob, wb)
        else:
            # the keys are the best keys per (port, class), shared by the input VCs: every pair
            # compared at once (the comparisons are the same cells for the VCs of one class)
            pc = [(o, self.vcmap.next_class(iv, o)) for o in range(R)]

            def less(a, b):
                return key_less(pc[a], pc[b])
            nv, no, nw = argmin_flat(m, leaves, f"va_{i}_{v}", less, ob, wb)
        # ejection, at local port R + dst_ep: the lowest free VC; with the separable VA, whose
        # requests wait for their VC, one per input VC of a port, free or not
        if self.take_busy:
            lw, can_eject = Const(separable_eject_vc(iv, V), wb), Const(1, 1)
        else:
            local_free = [~self.busy[R + e] for e in range(cfg.p)]
            free = Signal(V, name=f"lfree_{i}_{v}")
            m.d.comb += free.eq(Array(local_free)[self.dst_ep[i][v]] if cfg.p > 1 else local_free[0])
            lw, can_eject = one_hot_index(m, lowest_set_bit(free, V), V), free.any()
        rv, ro, rw = Signal(name=f"req_v_{i}_{v}"), Signal(ob, name=f"req_o_{i}_{v}"), Signal(wb, name=f"req_w_{i}_{v}")
        eject = self.eject[i][v]
        m.d.comb += [rv.eq(self.request[i][v] & Mux(eject, can_eject, nv)),
                     ro.eq(Mux(eject, R + (self.dst_ep[i][v] if cfg.p > 1 else 0), no)),
                     rw.eq(Mux(eject, lw, nw))]
        return rv, ro, rw

    def _key_less(self, m, best, loaded):
        """key_less(a, b): best key of (port, class) a < that of b, one signal per pair, which
        every input VC whose hops through those ports have those classes reads. With the
        registered choice a register loaded with the comparison of the values the two keys are
        loaded with (the same bit, also after reset: both keys reset to 0), so the input VCs'
        choice over the ports starts at its comparisons instead of computing them."""
        cache = {}

        def key_less(a, b):
            if (a, b) not in cache:
                lt = Signal(name=f"vbest_lt_{a[0]}_{a[1]}_{b[0]}_{b[1]}")
                if self.cfg.params.va_choice_stage:
                    m.d.sync += lt.eq(loaded[a] < loaded[b])
                else:
                    m.d.comb += lt.eq(best[a][1] < best[b][1])
                cache[a, b] = lt
            return cache[a, b]
        return key_less

    def _central(self, m, requests):
        """One round-robin arbiter per output VC over the input VCs that can hold it, grants in
        the cycle of the request. With requests of last cycle (va_stages = 2) or chosen from last
        cycle's output state (va_choice_stage = 1) the output VC may be taken: the arbiter's answer
        is then discarded and its pointer kept, exactly as if the requests were masked, but `busy`
        meets the arbiter's output, not its input. Returns (won, taken) as `separable_va` does."""
        cfg, P, V = self.cfg, self.cfg.P, self.cfg.V
        NV = P * V
        arb_valid, arb_o, arb_w = requests
        # each request decoded: its output port and VC one-hot (an output VC's arbiter ANDs a bit of each)
        o_hot, w_hot = [], []
        for iv in range(NV):
            oh, wh = Signal(P, name=f"req_port_{iv}"), Signal(V, name=f"req_vc_{iv}")
            m.d.comb += [oh.eq(Cat(*[arb_valid[iv] & (arb_o[iv] == o) for o in range(P)])),
                         wh.eq(Cat(*[arb_w[iv] == w for w in range(V)]))]
            o_hot.append(oh)
            w_hot.append(wh)
        taken = [[None] * V for _ in range(P)]
        grant_of = {}
        for o in range(P):
            if o >= cfg.R:
                self._local_port(m, o, (o_hot, w_hot), taken, grant_of)
                continue
            for w in range(V):
                cand = [iv for iv, _ in self.vcmap.holders.get((o, w), [])]
                arb = RoundRobinArbiter(len(cand))
                m.submodules[f"va_arb_{o}_{w}"] = arb
                m.d.comb += [arb.requests.eq(Cat(*[o_hot[iv][o] & w_hot[iv][w] for iv in cand])),
                             arb.commit_grant.eq(arb.grant)]
                grant, taken[o][w] = arb.grant, arb.valid
                if self.stale:
                    ok = ~self.busy[o][w]
                    grant, taken[o][w] = arb.grant & ok.replicate(len(cand)), arb.valid & ok
                m.d.comb += arb.commit.eq(taken[o][w])
                for k, iv in enumerate(cand):
                    grant_of[iv, o, w] = grant[k]
        won = [Cat(*[grant_of[iv, o, w] for o, w in self.vcmap.ovcs_of[iv]]) for iv in range(NV)]
        return won, taken

    def _local_port(self, m, o, decoded, taken, grant_of):
        """Local output port o's VCs in the central allocator: every input VC can hold each of
        them, and every ejecting head of a cycle asks for the same one, the lowest VC free when
        it chose (`_choose`; this cycle's, or last cycle's with registered requests). So one
        round-robin pick over the input VCs serves them all, with the pointer of that VC
        (`RoundRobinPointer` `va_arb_{o}_{w}`, one per VC as the model's `va_ptr`): the grants
        of V arbiters of which only that one has requests, from one pick. A request for another
        VC (none in a reachable state) is not seen. Fills taken[o] and grant_of as `_central`."""
        cfg, V = self.cfg, self.cfg.V
        o_hot, w_hot = decoded
        cand = [iv for iv, _ in self.vcmap.holders[(o, 0)]]
        assert all([iv for iv, _ in self.vcmap.holders[(o, w)]] == cand for w in range(V))
        n = len(cand)
        # the VC the requests name: the lowest free one when they were made
        asked = lowest_set_bit(~self.busy[o], V, m, f"va_local_{o}_w")
        if cfg.params.va_stages == 2:
            # registered, and its lowest bit again: one VC in every state (a proof's arbitrary
            # one included), as a register of a lowest bit is in every reachable one
            asked = lowest_set_bit(_reg(m, asked, f"va_local_{o}_w_reg"), V, m, f"va_local_{o}_w2")
        ptrs = []
        for w in range(V):
            ptr = RoundRobinPointer(n)
            m.submodules[f"va_arb_{o}_{w}"] = ptr
            ptrs.append(ptr)
        m.submodules[f"va_pick_{o}"] = pick = RoundRobinPick(n)
        reqs = Cat(*[o_hot[iv][o] & (w_hot[iv] & asked).any() for iv in cand])
        m.d.comb += [pick.requests.eq(reqs), pick.mask.eq(one_hot_select(asked, [p.mask for p in ptrs]))]
        # registered requests (or a choice from last cycle's state): the VC may have been taken
        # since (the answer discarded, the pointer kept); else it is free by construction
        ok = ~(self.busy[o] & asked).any() if self.stale else Const(1, 1)
        # the requesters after the grant: the mask a commit sets, worked out from the grant (the
        # pick's own next mask maps to more LUTs on the 26-router network's routers)
        nxt = below_or(pick.grant, n, m, f"va_local_{o}_next")
        for w in range(V):
            t = Signal(name=f"va_local_taken_{o}_{w}")
            m.d.comb += [t.eq(pick.valid & ok & asked[w]), ptrs[w].commit.eq(t), ptrs[w].next_mask.eq(nxt)]
            taken[o][w] = t
            for k, iv in enumerate(cand):
                grant_of[iv, o, w] = pick.grant[k] & t

    def _registered_requests(self, m, req, won_any):
        """va_stages = 2: the requests the arbiters see are last cycle's, dropped if their input VC
        has since been granted an output VC. A request is made only by an unallocated VC, which
        can only become allocated by this cycle's grant, so the register drops a request granted
        in the cycle it is made instead of masking it with the allocation a cycle later."""
        V = self.cfg.V
        valid, outs, ws = [], [], []
        for iv, (rv, ro, rw) in enumerate(req):
            i, v = divmod(iv, V)
            v2 = Signal(name=f"va2_v_{i}_{v}")
            o2 = Signal(len(ro), name=f"va2_o_{i}_{v}", reset_less=True)     # read only beside v2
            w2 = Signal(len(rw), name=f"va2_w_{i}_{v}", reset_less=True)
            m.d.sync += [v2.eq(rv & ~won_any[iv]), o2.eq(ro), w2.eq(rw)]
            valid.append(v2)
            outs.append(o2)
            ws.append(w2)
        return valid, outs, ws

    def elaborate(self, platform):
        m = Module()
        cfg, P, V = self.cfg, self.cfg.P, self.cfg.V
        # the separable allocator's requests wait at their output VC until granted, so a head asks
        # also when every candidate is busy (for the first one, ties to the lowest port, then VC):
        # its launch does not depend on catching a free cycle, which would let it starve. A busy
        # VC's key is all ones, one above the largest free key (occupancy + priority)
        self.take_busy = bool(cfg.params.va_separable)
        self.key_bits = max(1, (cfg.params.depth + (1 << cfg.prio_bits) - 1 + self.take_busy).bit_length())
        self.single = cfg.single_port
        # requests of last cycle (va_stages = 2) or chosen from last cycle's output state
        # (va_choice_stage = 1): their output VC may be taken by the time they are arbitrated
        self.stale = cfg.params.va_stages == 2 or bool(cfg.params.va_choice_stage)
        self.steps = {}                        # `_hop_best`'s step signals
        best, loaded = self._best_per_class(m)
        key_less = None if self.single or self.vcmap.dynamic else self._key_less(m, best, loaded)
        req = [self._choose(m, i, v, best, key_less) for i in range(P) for v in range(V)]
        won_any = [Signal(name=f"va_granted_{iv // V}_{iv % V}") for iv in range(P * V)]
        if cfg.params.va_stages == 2:
            requests = self._registered_requests(m, req, won_any)
        else:
            requests = tuple(list(x) for x in zip(*req))
        busy = [[self.busy[o][w] for w in range(V)] for o in range(P)]
        if cfg.params.va_separable:
            won, taken, won_w = separable_va(m, P, V, self.vcmap.ovcs_of, *requests, busy)
        else:
            (won, taken), won_w = self._central(m, requests), requests[2]
        for iv in range(P * V):
            i, v = divmod(iv, V)
            full = [Const(0, 1)] * (P * V)
            for k, (o, w) in enumerate(self.vcmap.ovcs_of[iv]):
                full[o * V + w] = won[iv][k]
            m.d.comb += [self.grant[i][v].eq(Cat(*full)), won_any[iv].eq(won[iv].any()),
                         self.grant_w[i][v].eq(won_w[iv])]
        for o in range(P):
            m.d.comb += self.taken[o].eq(Cat(*taken[o]))
        return m


__all__ = ["VCAllocator", "argmin", "argmin_flat"]
