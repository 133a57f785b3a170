"""The switch allocator of the router (docs/microarchitecture.md, "Switch allocation").

Input-first separable: per input port a round-robin arbiter over its eligible VCs (a flit, a
credit of the output VC it holds), per output port a round-robin arbiter over the input ports
whose choice asks for it; `alloc_iters` iterations. Pipelining by composition:
`sa_stages = 2` registers the input stage's choice (a nomination the output stage takes in the
next cycle), `sa_stages = 3` also registers the output stage's grants (the flit is sent in the
cycle after).
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..arbiter import RoundRobinArbiter, RoundRobinPick, grant_bit, winner_select
from ..delay import KEEP, register as _reg


class SwitchAllocator(wiring.Component):
    """Parameters: `cfg`, the router's `RouterShape`.

    Attributes (k = sa_stages flags):
      ready[i][v]      In   bit j: input VC (i, v) holds more than j flits
      tail[i][v]       In   its front is a tail
      peek[i][v]       In   the flit after its front is a tail (sa_stages = 3)
      credit[i][v]     In   bit j: the output VC it holds has more than j credits (0 while it
                            holds none, with sa_stages = 3)
      alloc_valid[i][v] In  it holds an output VC
      port[i][v]       In   one-hot: the output port of the output VC it holds
      send[i]          Out  one-hot over VCs: the VC of input port i whose flit leaves this cycle
      read[i]          Out  one-hot over VCs: the VC whose front the crossbar reads (the sender
                            when one sends)
      out_valid[o]     Out  output o sends a flit this cycle
      out_sel[o]       Out  one-hot over input ports: the one output o takes
    """

    def __init__(self, cfg):
        self.cfg = cfg
        P, V, k = cfg.P, cfg.V, cfg.params.sa_stages
        super().__init__({
            "ready": In(k).array(P, V),
            "tail": In(1).array(P, V),
            "peek": In(1).array(P, V),
            "credit": In(k).array(P, V),
            "alloc_valid": In(1).array(P, V),
            "port": In(P).array(P, V),
            "send": Out(V).array(P),
            "read": Out(V).array(P),
            "out_valid": Out(1).array(P),
            "out_sel": Out(P).array(P),
        })

    def _eligible(self, m, nom, gnt, won):
        """Per input port, a V-bit value: whether each of its VCs may be chosen. Pipelined, a VC
        has n flits in flight: its nomination of last cycle if it wins this cycle's output stage
        (`won`: it sends in this cycle with two stages, in the next with three), plus, three
        stages, its grant of last cycle (it sends in this one). To be nominated again it needs a
        flit and a credit to spare for each, and none of those flits (the front, then the next)
        may be its tail. A nomination that loses takes nothing in flight: the VC is eligible as
        if it had none, so a VC whose one flit is its tail asks in every cycle until it wins (the
        output arbiter's round robin then serves it; the speculative rule, a nomination counted
        whether it wins or not, made it ask every other cycle and could starve it). With three
        stages the credit flags are 0 unless the VC holds an output VC, and every case reads one,
        so the allocation need not be read. `won`: 1 or 0 per port, the case `_eligibility`
        asks for."""
        P, V, stages = self.cfg.P, self.cfg.V, self.cfg.params.sa_stages
        elig = []
        for i in range(P):
            bits = []
            for v in range(V):
                ready, credit, tail = self.ready[i][v], self.credit[i][v], self.tail[i][v]
                first = ready[0] & credit[0]
                if stages == 1:
                    bits.append(self.alloc_valid[i][v] & first)
                    continue
                one = ready[1] & credit[1] & ~tail
                flying = nom[i][v] & won[i]
                if stages == 3:
                    two = ready[2] & credit[2] & ~tail & ~self.peek[i][v]
                    bits.append(Mux(flying & gnt[i][v], two, Mux(flying | gnt[i][v], one, first)))
                else:
                    bits.append(self.alloc_valid[i][v] & Mux(flying, one, first))
            elig.append(Cat(*bits))
        return elig

    def _eligibility(self, m, nom, gnt, won):
        """(elig, cases): per input port the eligibility of its VCs (`elig_{i}`, `_eligible`)
        and, pipelined, the two cases it is one of: as if last cycle's nomination won this cycle's
        output stage and as if it lost (`elig_won_{i}`, `elig_lost_{i}`; None with one stage).
        The input stage picks in both cases (`_input_stage`), so that `won`, the output arbiters'
        grant worked out from registers, meets the choice only at the nomination registers' 2:1
        multiplexers instead of in front of the eligibility, the pick and the port select. The
        case `won` selects (`elig_{i}`) is what the port's arbiter sees and the formal harnesses
        read."""
        P, V = self.cfg.P, self.cfg.V
        if nom is None:
            return _named(m, self._eligible(m, None, gnt, None), V, "elig"), None
        noms = [n[0] for n in nom]
        cases = tuple(_named(m, self._eligible(m, noms, gnt, [Const(c, 1)] * P), V, f"elig_{case}")
                      for c, case in ((1, "won"), (0, "lost")))
        elig = _named(m, [Mux(won[i], cases[0][i], cases[1][i]) for i in range(P)], V, "elig")
        return elig, cases

    def _won(self, m, out_arb, nom):
        """Pipelined SA (one iteration): per input port, whether last cycle's nomination wins this
        cycle's output stage, worked out where the port sits from the nominations' port
        registers and the output arbiters' pointer masks (all registers): the output arbiters'
        own grant (`grant_bit`), one crossing of the router instead of the round trip input
        port -> output arbiter -> input port (docs/fpga_results_log.md)."""
        P = self.cfg.P
        won = []
        for i in range(P):
            w = Signal(name=f"sa_won_{i}")
            bits = [grant_bit(Cat(*[nom[j][1][o] for j in range(P)]), out_arb[o].mask, i) for o in range(P)]
            m.d.comb += w.eq(Cat(*bits).any())
            won.append(w)
        return won

    def _requests(self, i, elig, in_done, out_done):
        """Input port i's requests in an iteration: its VCs of `elig` (V bits), unless the port or
        the VC's output port was matched in an earlier iteration."""
        return Cat(*[elig[v] & ~in_done[i] & ~(out_done & self.port[i][v]).any() for v in range(self.cfg.V)])

    def _case_pick(self, m, it, i, case, reqs, mask):
        """(grant, port) of input port i's round-robin pick over `reqs` with its arbiter's pointer
        `mask`, in one case of `won` (`_eligibility`): the one-hot VC and its output port."""
        P, V = self.cfg.P, self.cfg.V
        r, port = Signal(V, name=f"sa{it}_inreq_{case}_{i}"), Signal(P, name=f"sa{it}_in_port_{case}_{i}")
        m.submodules[f"sa{it}_inpick_{case}_{i}"] = pick = RoundRobinPick(V)
        m.d.comb += [r.eq(reqs), pick.requests.eq(r), pick.mask.eq(mask),
                     port.eq(winner_select(r, mask, [self.port[i][v] for v in range(V)]))]
        return pick.grant, port

    def _input_stage(self, m, it, in_arb, eligs, won, nom, done):
        """Per input port, (grant, port): its choice in iteration `it` (one-hot VC, its one-hot
        output port). `eligs`: (elig, cases) of `_eligibility`; `done`: (in_done, out_done).
        Pipelined, the choice is a nomination for the output stage of the next cycle, which takes
        last cycle's nominations as they are: the port picks in both cases of `won`, and both are
        registered as `_Nominations` does."""
        P, V = self.cfg.P, self.cfg.V
        (elig, cases), (in_done, out_done) = eligs, done
        choice_g, choice_port = [], []
        for i in range(P):
            reqs = Signal(V, name=f"sa{it}_inreq_{i}")
            m.d.comb += reqs.eq(self._requests(i, elig[i], in_done, out_done))
            pick = in_arb[i]
            if it:
                m.submodules[f"sa{it}_inpick_{i}"] = pick = RoundRobinPick(V)
                m.d.comb += pick.mask.eq(in_arb[i].mask)
            m.d.comb += pick.requests.eq(reqs)
            if nom is None:
                # the chosen VC's output port, one-hot: chosen beside the grant, not after it
                cp = Signal(P, name=f"sa{it}_in_port_{i}")
                m.d.comb += cp.eq(winner_select(reqs, pick.mask, [self.port[i][v] for v in range(V)]))
                choice_g.append(pick.grant)
                choice_port.append(cp)
                continue
            nom.load(m, i, won[i], [
                self._case_pick(m, it, i, case, self._requests(i, c[i], in_done, out_done), in_arb[i].mask)
                for case, c in zip(("won", "lost"), cases)])
            choice_g.append(nom[i][0])
            choice_port.append(nom[i][1])
        return choice_g, choice_port

    def _iteration(self, m, it, arbs, state, eligs, won, nom):
        """One iteration of the separable allocator over the inputs and outputs not yet matched.
        `state`: (in_done, out_done, sent_oh, out_valid, out_sel), updated and returned."""
        P, V = self.cfg.P, self.cfg.V
        in_arb, out_arb = arbs
        in_done, out_done, sent_oh, out_valid, out_sel = state
        choice_g, choice_port = self._input_stage(m, it, in_arb, eligs, won, nom, (in_done, out_done))
        granted = [Const(0, 1)] * P
        new_valid, new_sel, new_got = [], [], []
        for o in range(P):
            pick = out_arb[o]
            if it:
                m.submodules[f"sa{it}_outpick_{o}"] = pick = RoundRobinPick(P)
                m.d.comb += pick.mask.eq(out_arb[o].mask)
            m.d.comb += pick.requests.eq(Cat(*[choice_port[i][o] for i in range(P)]))
            granted = [granted[i] | pick.grant[i] for i in range(P)]
            # an output granted in an earlier iteration gets no requests in this one, so at most
            # one iteration's grant is set
            ov, sel = Signal(name=f"sa{it}_out_valid_{o}"), Signal(P, name=f"sa{it}_out_sel_{o}")
            m.d.comb += [ov.eq(out_valid[o] | pick.valid), sel.eq(out_sel[o] | pick.grant)]
            new_valid.append(ov)
            new_sel.append(sel)
            new_got.append(pick.valid)
        new_sent = []
        for i in range(P):
            so = Signal(V, name=f"sa{it}_sent_oh_{i}")
            m.d.comb += so.eq(sent_oh[i] | Mux(granted[i], choice_g[i], 0))
            new_sent.append(so)
        done_in, done_out = Signal(P, name=f"sa{it}_in_done"), Signal(P, name=f"sa{it}_out_done")
        m.d.comb += [done_in.eq(in_done | Cat(*granted)), done_out.eq(out_done | Cat(*new_got))]
        return done_in, done_out, new_sent, new_valid, new_sel

    def _registered_grants(self, m, nom, won, gnt):
        """Three stages: the output stage's grants are registered, the granted flits sent in the
        next cycle: each input port's grant is its nomination if it won (`_won`)."""
        V = self.cfg.V
        for i in range(self.cfg.P):
            m.d.sync += gnt[i].eq(nom[i][0] & won[i].replicate(V))

    def elaborate(self, platform):
        m = Module()
        cfg, P, V = self.cfg, self.cfg.P, self.cfg.V
        stages, iters = cfg.params.sa_stages, cfg.params.alloc_iters
        if stages >= 2 and iters != 1:
            raise ValueError(f"alloc_iters={iters}: the pipelined switch allocator takes 1 iteration only")
        nom = _Nominations(m, P, V, cases=stages == 3) if stages >= 2 else None
        # last cycle's grant per input port (three stages): the flit it sends in this cycle
        gnt = [Signal(V, name=f"sa_gnt_{i}") for i in range(P)]
        in_arb = [RoundRobinArbiter(V) for i in range(P)]
        # with one iteration an output arbiter commits exactly its own grant: its next pointer is
        # then computed beside the grant, not after it (own_commit)
        out_arb = [RoundRobinArbiter(P, own_commit=iters == 1) for o in range(P)]
        for i in range(P):
            m.submodules[f"sa_in_{i}"] = in_arb[i]
            m.submodules[f"sa_out_{i}"] = out_arb[i]
        won = self._won(m, out_arb, nom) if nom else None
        eligs = self._eligibility(m, nom, gnt, won)
        state = (Const(0, P), Const(0, P), [Const(0, V)] * P, [Const(0, 1)] * P, [Const(0, P)] * P)
        for it in range(iters):
            state = self._iteration(m, it, (in_arb, out_arb), state, eligs, won, nom)
        _, _, sent_oh, out_valid, out_sel = state
        for o in range(P):
            m.d.comb += [out_arb[o].commit.eq(out_valid[o]), out_arb[o].commit_grant.eq(out_sel[o])]
        if stages == 3:
            self._registered_grants(m, nom, won, gnt)
            sent_oh = gnt
            out_valid = [_reg(m, out_valid[o], f"sa_sent_valid_{o}") for o in range(P)]
            out_sel = [_reg(m, out_sel[o], f"sa_sent_sel_{o}") for o in range(P)]
        # the VC whose front is read: with two stages the port's registered nomination, which is
        # the VC that sends whenever the port sends (else nothing reads it), so the output
        # stage's grant meets only the valid bits and the reads start at a register
        read = [n[0] for n in nom] if stages == 2 else sent_oh
        for i in range(P):
            m.d.comb += [in_arb[i].commit.eq(sent_oh[i].any()), in_arb[i].commit_grant.eq(sent_oh[i]),
                         self.send[i].eq(sent_oh[i]), self.read[i].eq(read[i])]
        for o in range(P):
            m.d.comb += [self.out_valid[o].eq(out_valid[o]), self.out_sel[o].eq(out_sel[o])]
        return m


class _Nominations(list):
    """Last cycle's nomination per input port (`nom[i]`: one-hot VC, one-hot output port): the
    pick of the case of `won` that happened (`_eligibility`), registered.

    cases = False: the case selected in front of the registers. cases = True (three stages): both
    cases' picks registered, and `won` with them, and the case selected after the registers: the
    same values, but the loop `won` closes (nomination ports -> output arbiters' grants -> `won`
    -> nomination) then runs between registers of the allocator alone, where the select in front
    of the registers drew `won` into the input ports' logic, across the router and back (the
    target router's critical path on ECP5 at every seed, docs/fpga_results_log.md). `won` is
    registered once for the port (read by the output arbiters) and once for the VC (read by the
    input port's eligibility), two copies synthesis keeps (`KEEP`): one register for both sat by
    the input port, and the loop crossed the router to it and back. Two stages keep the select in
    front: there the VC's register is also the buffer's read address (`read`), which a select
    after it would lengthen."""

    def __init__(self, m, P, V, cases: bool):
        self.cases = [] if cases else None
        for i in range(P):
            g, p = Signal(V, name=f"sa_nom_{i}"), Signal(P, name=f"sa_nom_port_{i}")
            self.append((g, p))
            if not cases:
                continue
            regs = [(Signal(V, name=f"sa_nom_{case}_{i}"), Signal(P, name=f"sa_nom_port_{case}_{i}"))
                    for case in ("won", "lost")]
            won_vc, won_port = (Signal(name=f"sa_won_last_{k}_{i}", attrs=KEEP) for k in ("vc", "port"))
            m.d.comb += [g.eq(Mux(won_vc, regs[0][0], regs[1][0])), p.eq(Mux(won_port, regs[0][1], regs[1][1]))]
            self.cases.append((regs, (won_vc, won_port)))

    def load(self, m, i, won, picks):
        """Register input port i's `picks` ((grant, port) in the won case, in the lost case) with
        `won`, the case that happened."""
        (g_won, p_won), (g_lost, p_lost) = picks
        if self.cases is None:
            m.d.sync += [self[i][0].eq(Mux(won, g_won, g_lost)), self[i][1].eq(Mux(won, p_won, p_lost))]
            return
        ((rg_won, rp_won), (rg_lost, rp_lost)), won_last = self.cases[i]
        m.d.sync += [rg_won.eq(g_won), rp_won.eq(p_won), rg_lost.eq(g_lost), rp_lost.eq(p_lost)]
        m.d.sync += [w.eq(won) for w in won_last]


def _named(m, values, width, name):
    """`values` (one per input port) held in signals `{name}_{i}` of `m`."""
    out = [Signal(width, name=f"{name}_{i}") for i in range(len(values))]
    m.d.comb += [o.eq(v) for o, v in zip(out, values)]
    return out


__all__ = ["SwitchAllocator"]
