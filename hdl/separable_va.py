"""The separable, pipelined VC allocator of a router built with `va_separable = 1`.

The router's central VC allocator (one arbiter per output VC over every input VC that can ask
for it, grants back in the same cycle) gathers requests from the whole router and sends grants
back to it within one cycle: on the ECP5-85F that loop alone tops out near 51 MHz for 8 ports x
4 VCs (docs/fpga_results_log.md, "100 MHz"). This one splits it so that each cycle is either local to an
input port or one crossing into a small arbiter (benchmarks/bench_va_ceiling.py `va-sep-x`).
A launched request waits at its output VC's arbiter until granted, so every round-robin
arbiter sees its requesters until they win: a head's wait is bounded (hdl/formal/alloc_props.py,
`va_waiting_harness`):

  cycle t      per input port, a V:1 round-robin arbiter launches one of its VCs' requests: a VC
               with a request, none of its own waiting (`pend`), and no other VC of the port
               waiting for the same output VC; the launched VC and its request's output port and
               VC are registered (L1), and the VC keeps its target until granted (`pend`)
  cycle t + 1  L1 -> the target output VC, one-hot over the output VCs the port's VCs can hold,
               into the port's sticky request register at the far end of the crossing (`sreq`);
               where several VCs of the port can hold that output VC, which one asks is kept
               beside the port (`owner`, per output VC the index among those VCs)
  cycle t + 2… per output VC, a round-robin arbiter over the input ports whose `sreq` bit for it
               is set; it grants only while the output VC is free (else its pointer stays); a
               grant clears that `sreq` bit, marks the output VC busy and is registered (G1)
  + 1          the grant bit, registered again at the port (G2)
  + 2          the input VC that asked for that output VC takes it (allocated from the next
               cycle) and may launch again from the next cycle

Both arbiter stages commit their own grants (`RoundRobinArbiter(own_commit=True)`). The cycle
contract, which `sim.engine._separable_va` implements too: docs/microarchitecture.md,
"Separable VC allocation".
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal

from .arbiter import RoundRobinArbiter, one_hot_index, one_hot_select
from .delay import register as _reg


def _launch(m: Module, i: int, V: int, ovcs_of, requests):
    """Port i's launch stage: its arbiter and its VCs' pending targets. `requests`: (req_valid,
    req_o, req_w). Returns (the launch this cycle, one-hot over the VCs; the L1 registers:
    launched VC one-hot, its output port, its VC; per VC `pend` and the VC of its pending
    target)."""
    req_valid, req_o, req_w = requests
    arb = RoundRobinArbiter(V, own_commit=True)
    m.submodules[f"sva_port_{i}"] = arb
    pend = [Signal(name=f"sva_pend_{i}_{v}") for v in range(V)]
    pend_o = [Signal.like(req_o[i * V + v], name=f"sva_pend_o_{i}_{v}", reset_less=True) for v in range(V)]
    pend_w = [Signal.like(req_w[i * V + v], name=f"sva_pend_w_{i}_{v}", reset_less=True) for v in range(V)]
    eligible = []
    for v in range(V):
        iv = i * V + v
        # another VC of the port waits for the same output VC: the grant names a (port, output
        # VC) slot, so one VC per slot. Only VCs that can hold a common output VC can clash
        # (each asks only for output VCs it can hold, `VCMap`): with a VC per class, the VCs of a
        # network port whose next hops take the same class (the last one)
        mine = set(ovcs_of[iv])
        rivals = [u for u in range(V) if u != v and mine & set(ovcs_of[i * V + u])]
        clash = Cat(*[pend[u] & (pend_o[u] == req_o[iv]) & (pend_w[u] == req_w[iv]) for u in rivals])
        eligible.append(req_valid[iv] & ~pend[v] & ~clash.any())
    m.d.comb += [arb.requests.eq(Cat(*eligible)), arb.commit.eq(arb.valid), arb.commit_grant.eq(arb.grant)]
    for v in range(V):
        with m.If(arb.grant[v]):
            m.d.sync += [pend_o[v].eq(req_o[i * V + v]), pend_w[v].eq(req_w[i * V + v])]
    l1_vc = _reg(m, arb.grant, f"sva_l1_vc_{i}")
    l1_o = _reg(m, one_hot_select(arb.grant, [req_o[i * V + v] for v in range(V)]), f"sva_l1_o_{i}", True)
    l1_w = _reg(m, one_hot_select(arb.grant, [req_w[i * V + v] for v in range(V)]), f"sva_l1_w_{i}", True)
    return arb.grant, l1_vc, l1_o, l1_w, pend, pend_w


def slot_holders(ovcs_of, i: int, V: int, slot) -> list[int]:
    """The VCs of port i that can hold output VC `slot` ((o, w)), low to high. Where there are
    several, the slot's `sva_owner_{i}_{n}` register is an index into this list (`_owners`)."""
    return [v for v in range(V) if slot in ovcs_of[i * V + v]]


def _owners(m: Module, i: int, ovcs_of, slots, launched):
    """Port i's record of which of its VCs asks for each output VC in `slots` (its slots), as a
    function asker(n, v): the bit "VC v asks for slot n". A port's VCs never wait for the same
    slot at once (`_launch`'s clash rule), so a slot's grant, while the slot has a request in the
    allocator (its sticky request, G1 or G2), belongs to one VC: where several of the port's VCs
    can hold the slot, the index of the launching one among them is registered beside the target
    (`sva_owner_{i}_{n}`, written as `sreq` is); where one can, nothing is. `launched`: (L1's
    one-hot VC, the target decoded from L1)."""
    l1_vc, target = launched
    V = len(l1_vc)
    holders, owner = [], []
    for n, ow in enumerate(slots):
        hs = slot_holders(ovcs_of, i, V, ow)
        holders.append(hs)
        if len(hs) < 2:
            owner.append(None)
            continue
        reg = Signal(range(len(hs)), name=f"sva_owner_{i}_{n}", reset_less=True)
        with m.If(target[n]):
            m.d.sync += reg.eq(one_hot_index(m, Cat(*[l1_vc[v] for v in hs]), len(hs)))
        owner.append(reg)

    def asker(n, v):
        if owner[n] is None:
            return Const(1, 1)
        return owner[n] == holders[n].index(v)
    return asker


def separable_va(m: Module, P: int, V: int, ovcs_of, req_valid, req_o, req_w, busy):
    """Build the allocator into `m`.

    ovcs_of[iv]: the output VCs (o, w) input VC iv = i·V + v can hold; req_valid/req_o/req_w[iv]:
    its request this cycle (output port and VC, binary); busy[o][w]: output VC taken (a register).
    Returns (won, set_busy, won_w): won[iv], one bit per entry of ovcs_of[iv], the output VC iv
    takes this cycle (at most one bit); set_busy[o][w], the output VC is granted this cycle;
    won_w[iv], the binary VC of the output VC won (read only beside won)."""
    port_ovcs = [sorted(set().union(*[ovcs_of[i * V + v] for v in range(V)])) for i in range(P)]
    slot = [{ow: k for k, ow in enumerate(port_ovcs[i])} for i in range(P)]
    ports, sreqs = [], []           # per port: its launch stage's signals; its sticky request register
    for i in range(P):
        launch, l1_vc, l1_o, l1_w, pend, pend_w = _launch(m, i, V, ovcs_of, (req_valid, req_o, req_w))
        # the target, one-hot over the output VCs the port's VCs can hold, decoded from L1 on the
        # way to the sticky request register at the far end of the crossing, which has no other
        # logic (the launch cycle's longest path on ECP5; docs/fpga_results_log.md)
        target = Signal(len(port_ovcs[i]), name=f"sva_target_{i}")
        m.d.comb += target.eq(Cat(*[
            Cat(*[l1_vc[v] for v in range(V) if (o, w) in ovcs_of[i * V + v]]).any() & (l1_o == o) & (l1_w == w)
            for o, w in port_ovcs[i]]))
        sreqs.append(Signal(len(port_ovcs[i]), name=f"sva_sreq_{i}"))
        ports.append((launch, pend, pend_w, target, _owners(m, i, ovcs_of, port_ovcs[i], (l1_vc, target))))

    set_busy = [[Const(0, 1)] * V for _ in range(P)]
    granted = [[Const(0, 1)] * len(port_ovcs[i]) for i in range(P)]    # per port and slot, this cycle
    g1 = [[Const(0, 1)] * len(port_ovcs[i]) for i in range(P)]         # the same, registered (G1)
    for o in range(P):
        for w in range(V):
            cand = [i for i in range(P) if (o, w) in slot[i]]
            if not cand:
                continue
            arb = RoundRobinArbiter(len(cand), own_commit=True)
            m.submodules[f"sva_out_{o}_{w}"] = arb
            ok = ~busy[o][w]
            m.d.comb += [arb.requests.eq(Cat(*[sreqs[i][slot[i][o, w]] for i in cand])),
                         arb.commit.eq(arb.valid & ok), arb.commit_grant.eq(arb.grant)]
            s = Signal(name=f"sva_set_{o}_{w}")
            m.d.comb += s.eq(arb.valid & ok)
            set_busy[o][w] = s
            g = Signal(len(cand), name=f"sva_gnt_{o}_{w}")
            m.d.comb += g.eq(arb.grant & ok.replicate(len(cand)))
            g1_reg = _reg(m, g, f"sva_g1_{o}_{w}")
            for k, i in enumerate(cand):
                granted[i][slot[i][o, w]] = g[k]
                g1[i][slot[i][o, w]] = g1_reg[k]

    won, won_w = [None] * (P * V), [None] * (P * V)
    for i in range(P):
        launch, pend, pend_w, target, asker = ports[i]
        m.d.sync += sreqs[i].eq((sreqs[i] & ~Cat(*granted[i])) | target)
        g2 = _reg(m, Cat(*g1[i]), f"sva_g2_{i}")
        for v in range(V):
            iv = i * V + v
            won[iv] = Cat(*[g2[slot[i][ow]] & asker(slot[i][ow], v) for ow in ovcs_of[iv]])
            got = Signal(name=f"sva_won_{i}_{v}")
            m.d.comb += got.eq(won[iv].any())
            with m.If(launch[v]):
                m.d.sync += pend[v].eq(1)
            with m.Elif(got):
                m.d.sync += pend[v].eq(0)
            won_w[iv] = pend_w[v]
    return won, set_busy, won_w


__all__ = ["separable_va", "slot_holders"]
