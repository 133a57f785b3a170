"""The separable, pipelined VC allocator of a router built with `va_separable = 1`.

The router's central VC allocator (one arbiter per output VC over every input VC that can ask
for it, grants back in the same cycle) gathers requests from the whole router and sends grants
back to it within one cycle: on the ECP5-85F that loop alone tops out near 51 MHz for 8 ports x
4 VCs (docs/fpga_results_log.md, "100 MHz"). This one splits it so that each cycle is either local to an
input port or one crossing into a small arbiter (121-130 MHz alone, benchmarks/bench_va_ceiling.py
`va-sep-x`):

  cycle t      per input port, a V:1 round-robin arbiter launches one of its VCs' requests
               (VCs with a request in flight wait, `count_down`); the launched VC and its
               request's output port and VC are registered (L1)
  cycle t + 1  L1 -> L2: the target output VC, decoded to one-hot over the output VCs the
               port's VCs can hold, in a register at the far end of the crossing
  cycle t + 2  per output VC, a round-robin arbiter over the input ports whose L2 targets it;
               it grants only while the output VC is free (else its pointer stays); a grant
               marks the output VC busy and is registered at the arbiter (G1)
  cycle t + 3  each port ORs its grant bits across the router and registers the result (G2)
  cycle t + 4  the input VC takes the output VC (allocated from t + 5)

Both arbiter stages commit their own grants (`RoundRobinArbiter(own_commit=True)`). The cycle
contract, which `sim.engine._separable_va` implements too: docs/microarchitecture.md,
"Separable VC allocation".
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal

from contract.params import SEPARABLE_VA_TRIP

from .arbiter import RoundRobinArbiter, one_hot_select
from .delay import count_down
from .delay import register as _reg


def separable_va(m: Module, P: int, V: int, ovcs_of, req_valid, req_o, req_w, busy):
    """Build the allocator into `m`.

    ovcs_of[iv]: the output VCs (o, w) input VC iv = i·V + v can hold; req_valid/req_o/req_w[iv]:
    its request this cycle (output port and VC, binary); busy[o][w]: output VC taken (a register).
    Returns (won, set_busy, won_w): won[iv], one bit per entry of ovcs_of[iv], the output VC iv
    takes this cycle (at most one bit); set_busy[o][w], the output VC is granted this cycle;
    won_w[iv], the binary VC of the output VC won (read only beside won)."""
    port_ovcs = [sorted(set().union(*[ovcs_of[i * V + v] for v in range(V)])) for i in range(P)]
    slot = [{ow: k for k, ow in enumerate(port_ovcs[i])} for i in range(P)]
    vc_reg, target_reg, w_reg = [], [], []
    for i in range(P):
        arb = RoundRobinArbiter(V, own_commit=True)
        m.submodules[f"sva_port_{i}"] = arb
        pending = [Signal(range(SEPARABLE_VA_TRIP + 1), name=f"sva_pending_{i}_{v}") for v in range(V)]
        idle = [Signal(name=f"sva_idle_{i}_{v}", init=1) for v in range(V)]     # pending == 0
        m.d.comb += [arb.requests.eq(Cat(*[req_valid[i * V + v] & idle[v] for v in range(V)])),
                     arb.commit.eq(arb.valid), arb.commit_grant.eq(arb.grant)]
        for v in range(V):
            count_down(m, pending[v], arb.grant[v], SEPARABLE_VA_TRIP, idle[v])
        # L1 at the port holds the launched VC (one-hot, zero when nothing launched) and its
        # request's output port and VC (binary); the target, one-hot over the output VCs the
        # port's VCs can hold, is decoded from L1 on the way to L2 at the far end of the
        # crossing, which has no other logic, instead of after the port's arbiter (the launch
        # cycle's longest path on ECP5; docs/fpga_results_log.md)
        l1_vc = _reg(m, arb.grant, f"sva_l1_vc_{i}")
        l1_o = _reg(m, one_hot_select(arb.grant, [req_o[i * V + v] for v in range(V)]), f"sva_l1_o_{i}", True)
        l1_w = _reg(m, one_hot_select(arb.grant, [req_w[i * V + v] for v in range(V)]), f"sva_l1_w_{i}", True)
        target = Signal(len(port_ovcs[i]), name=f"sva_target_{i}")
        m.d.comb += target.eq(Cat(*[
            Cat(*[l1_vc[v] for v in range(V) if (o, w) in ovcs_of[i * V + v]]).any() & (l1_o == o) & (l1_w == w)
            for o, w in port_ovcs[i]]))
        vc_reg.append(_reg(m, l1_vc, f"sva_l2_vc_{i}"))
        target_reg.append(_reg(m, target, f"sva_l2_target_{i}"))
        w_reg.append(_reg(m, l1_w, f"sva_l2_w_{i}", True))

    set_busy = [[Const(0, 1)] * V for _ in range(P)]
    grant_bits = [[] for _ in range(P)]          # per port, its registered grant bits (G1)
    for o in range(P):
        for w in range(V):
            cand = [i for i in range(P) if (o, w) in slot[i]]
            if not cand:
                continue
            arb = RoundRobinArbiter(len(cand), own_commit=True)
            m.submodules[f"sva_out_{o}_{w}"] = arb
            ok = ~busy[o][w]
            m.d.comb += [arb.requests.eq(Cat(*[target_reg[i][slot[i][o, w]] for i in cand])),
                         arb.commit.eq(arb.valid & ok), arb.commit_grant.eq(arb.grant)]
            s = Signal(name=f"sva_set_{o}_{w}")
            m.d.comb += s.eq(arb.valid & ok)
            set_busy[o][w] = s
            g1 = _reg(m, arb.grant & ok.replicate(len(cand)), f"sva_g1_{o}_{w}")
            for k, i in enumerate(cand):
                grant_bits[i].append(g1[k])

    won, won_w = [None] * (P * V), [None] * (P * V)
    for i in range(P):
        # the launch, two cycles further on (L3, L4), meets its grant (G2) at the port
        vc4 = _reg(m, _reg(m, vc_reg[i], f"sva_l3_vc_{i}"), f"sva_l4_vc_{i}")
        target4 = _reg(m, _reg(m, target_reg[i], f"sva_l3_target_{i}"), f"sva_l4_target_{i}")
        w4 = _reg(m, _reg(m, w_reg[i], f"sva_l3_w_{i}", True), f"sva_l4_w_{i}", True)
        g2 = _reg(m, Cat(*grant_bits[i]).any() if grant_bits[i] else Const(0, 1), f"sva_g2_{i}")
        for v in range(V):
            iv = i * V + v
            got = Signal(name=f"sva_won_{i}_{v}")
            m.d.comb += got.eq(g2 & vc4[v])
            won[iv] = Cat(*[got & target4[slot[i][ow]] for ow in ovcs_of[iv]])
            won_w[iv] = w4
    return won, set_busy, won_w


__all__ = ["separable_va"]
