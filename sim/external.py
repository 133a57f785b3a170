"""One router of a `NetworkSim` simulated outside the model (e.g. the RTL router in Verilator).

`ExternalRouter(model, r)` advances the model one cycle at a time with router r's allocation
switched off, and is the model side of r's links: `step()` runs cycle t and returns what the
model sent to r in that cycle (flits on r's input ports, including its endpoints' injections,
and credits on its network outputs), taken out of the delay lines; `deliver(...)` takes what
r sent in cycle t (flits on its output ports, credits on its input ports) and puts it into the
delay lines exactly as the model's own router would have. Timing is the contract's: what is
exchanged in cycle t is what the link carries in cycle t (the RTL adds the link and credit
latencies at its inputs; here they are the delay-line slots).

If the external router follows docs/microarchitecture.md, the model runs exactly as without it:
the same ejection trace, cycle for cycle (tests/test_cocotb_router.py).
"""
from __future__ import annotations

from dataclasses import dataclass


from topologies.errors import ParameterError

from . import engine
from .network_sim import NetworkSim


@dataclass(frozen=True)
class LinkFlit:
    port: int      # the router's port (input port for flits to it, output port for flits from it)
    vc: int
    packet: int    # the model's packet id
    seq: int
    phase: int = 1  # the head's phase bit as the router sent it


class ExternalRouter:
    def __init__(self, model: NetworkSim, router: int):
        if not isinstance(model, NetworkSim):
            raise TypeError(f"model={model!r}: must be a sim.network_sim.NetworkSim")
        if not 0 <= int(router) < model.net.num_routers:
            raise ParameterError(f"router={router!r}: must be in 0..{model.net.num_routers - 1}")
        self.model, self.r = model, int(router)
        self.ring = len(model.a_cnt)
        prm = model.params
        self.LL, self.CL, self.L = prm.link_latency, prm.credit_latency, prm.packet_flits

    @property
    def cycle(self) -> int:
        return self.model.cycle

    def fields(self, packet: int, seq: int, vc: int) -> dict:
        """The flit's routing fields as the network carries them into this router (hops: links the
        head has taken so far; body flits keep the injected 0)."""
        m = self.model
        s, d = int(m.pk_src[packet]), int(m.pk_dst[packet])
        sr, dr = int(m.ep_router[s]), int(m.ep_router[d])
        inter = int(m.pk_inter[packet])
        return {"head": int(seq == 0), "tail": int(seq == self.L - 1), "vc": vc, "src": sr,
                "src_ep": s - int(m.ep_first[sr]), "dst": dr, "dst_ep": d - int(m.ep_first[dr]),
                "hops": int(m.pk_hops[packet]) if seq == 0 else 0, "inter": max(inter, 0),
                "phase": int(m.pk_phase[packet]), "seq": seq, "packet": packet}

    def step(self) -> tuple[list[LinkFlit], list[tuple[int, int]]]:
        """Run the model's cycle t; -> (flits sent to the router in t, credits (port, vc) to it in t)."""
        m, r = self.model, self.r
        t = m.cycle
        m.run(1, skip=r)
        sa = (t + self.LL) % self.ring
        k = int(m.a_cnt[sa])
        mine = m.a_r[sa, :k] == r
        flits = [LinkFlit(int(p), int(v), int(pk), int(s)) for p, v, pk, s in
                 zip(m.a_p[sa, :k][mine], m.a_v[sa, :k][mine], m.a_pkt[sa, :k][mine], m.a_seq[sa, :k][mine])]
        self._keep(m.a_cnt, sa, ~mine, (m.a_r, m.a_p, m.a_v, m.a_pkt, m.a_seq))
        sc = (t + self.CL) % self.ring
        k = int(m.c_cnt[sc])
        mine = (m.c_r[sc, :k] == r) & (m.c_p[sc, :k] >= 0)
        credits = [(int(p), int(v)) for p, v in zip(m.c_p[sc, :k][mine], m.c_v[sc, :k][mine])]
        self._keep(m.c_cnt, sc, ~mine, (m.c_r, m.c_p, m.c_v))
        return flits, credits

    @staticmethod
    def _keep(cnt, slot, keep, arrays):
        k = int(cnt[slot])
        n = int(keep.sum())
        for a in arrays:
            a[slot, :n] = a[slot, :k][keep]
        cnt[slot] = n

    def deliver(self, flits: list[LinkFlit], credits: list[tuple[int, int]]) -> None:
        """What the router sent in cycle t - 1 (the cycle `step` last ran): flits on its output
        ports, credits (input port, vc) for its upstream neighbours and endpoints."""
        m, r, R = self.model, self.r, self.model.R
        t = m.cycle - 1
        sa, sc = (t + self.LL) % self.ring, (t + self.CL) % self.ring
        first = int(m.ep_first[r])
        for f in flits:
            pk, o = f.packet, f.port
            if o < R:
                if m.nbr_r[r, o] < 0:
                    raise RuntimeError(f"cycle {t}: router {r} sent a flit on unconnected port {o}")
                if f.seq == 0:
                    m.pk_hops[pk] += 1
                    if r == m.pk_inter[pk]:
                        m.pk_phase[pk] = 1
                    if f.phase == 0 and m.mode == engine.POLARIZED:
                        m.pk_phase[pk] = 0          # escaped a dead end in the router (routing_logic.polarized)
                k = int(m.a_cnt[sa])
                m.a_r[sa, k], m.a_p[sa, k], m.a_v[sa, k] = m.nbr_r[r, o], m.nbr_p[r, o], f.vc
                m.a_pkt[sa, k], m.a_seq[sa, k] = pk, f.seq
                m.a_cnt[sa] = k + 1
            else:
                e = first + o - R
                if e != m.pk_dst[pk] or f.seq != m.pk_eseq[pk]:
                    raise RuntimeError(f"cycle {t}: router {r} ejected packet {pk} flit {f.seq} at endpoint {e} "
                                       f"(destination {int(m.pk_dst[pk])}, next flit {int(m.pk_eseq[pk])})")
                m.pk_eseq[pk] = f.seq + 1
                m.counters[1] += 1
                tl = int(m.trace_len[0])
                if tl < len(m.trace):
                    m.trace[tl] = (t + self.LL, e, pk, f.seq)
                    m.trace_len[0] = tl + 1
                if f.seq == self.L - 1:
                    m.pk_done[pk] = t + self.LL
                    h = int(m.pk_hops[pk])
                    if h < len(m.eject_hist):
                        m.eject_hist[h] += 1
        for i, v in credits:
            k = int(m.c_cnt[sc])
            if i < R:
                m.c_r[sc, k], m.c_p[sc, k] = m.nbr_r[r, i], m.nbr_p[r, i]
            else:
                m.c_r[sc, k], m.c_p[sc, k] = first + i - R, -1
            m.c_v[sc, k] = v
            m.c_cnt[sc] = k + 1


__all__ = ["ExternalRouter", "LinkFlit"]
