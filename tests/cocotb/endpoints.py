"""The endpoint side of docs/microarchitecture.md in plain Python, for the co-simulations.

`Endpoints` replays the packets of a `sim` run (source/destination endpoint, creation cycle):
unbounded source queues, a new packet takes the VC with the most credits (ties: lowest), one
flit per cycle per endpoint, credits counted one cycle after the router returns them. `Flits`
packs and unpacks flits with the field offsets of `sim.flit.flit_layout`.
"""
from __future__ import annotations

import numpy as np


def payload_of(pk: int, seq: int, bits: int) -> int:
    return (pk * 2654435761 + seq * 40503 + 12345) & ((1 << bits) - 1) if bits else 0


class Flits:
    """Pack/unpack flits with the layout's field offsets (sim.flit.flit_layout)."""

    def __init__(self, fields: dict):
        self.fields = fields          # name -> (offset, width)

    def pack(self, **vals) -> int:
        out = 0
        for k, v in vals.items():
            off, w = self.fields[k]
            out |= (int(v) & ((1 << w) - 1)) << off
        return out

    def unpack(self, value: int) -> dict:
        return {k: (value >> off) & ((1 << w) - 1) for k, (off, w) in self.fields.items()}


class Endpoints:
    """The endpoint side of the contract, for all endpoints of the network."""

    def __init__(self, cfg, packets):
        self.E, self.V, self.B, self.L = cfg["E"], cfg["V"], cfg["B"], cfg["L"]
        self.credit = [[self.B] * self.V for _ in range(self.E)]
        self.queue = [[] for _ in range(self.E)]
        self.qpos = [0] * self.E
        self.sent = [0] * self.E
        self.vc = [0] * self.E
        self.ep_router = cfg["ep_router"]
        self.ep_local = cfg["ep_local"]
        self.flits = Flits({k: tuple(v) for k, v in cfg["fields"].items()})
        self.payload_bits = cfg["fields"]["payload"][1]
        src, dst, created = packets
        order = np.lexsort((np.arange(len(created)), created))
        self.gen = [(int(created[k]), int(k)) for k in order]
        self.gi = 0
        self.src, self.dst = src, dst

    def step(self, t: int):
        """Cycle t: new packets join, each endpoint sends at most one flit. -> [(e, flit int)]."""
        while self.gi < len(self.gen) and self.gen[self.gi][0] == t:
            pk = self.gen[self.gi][1]
            self.queue[int(self.src[pk])].append(pk)
            self.gi += 1
        out = []
        for e in range(self.E):
            q = self.queue[e]
            if self.qpos[e] >= len(q):
                continue
            pk = q[self.qpos[e]]
            cr = self.credit[e]
            if self.sent[e] == 0:
                best = 0
                for v in range(1, self.V):
                    if cr[v] > cr[best]:
                        best = v
                self.vc[e] = best
            v = self.vc[e]
            if cr[v] <= 0:
                continue
            seq = self.sent[e]
            d = int(self.dst[pk])
            flit = self.flits.pack(head=int(seq == 0), tail=int(seq == self.L - 1), vc=v,
                                   src=self.ep_router[e], src_ep=self.ep_local[e], dst=self.ep_router[d],
                                   dst_ep=self.ep_local[d], hops=0, inter=0, phase=1, seq=seq, packet=pk,
                                   payload=payload_of(pk, seq, self.payload_bits))
            out.append((e, flit))
            cr[v] -= 1
            self.sent[e] += 1
            if self.sent[e] == self.L:
                self.sent[e] = 0
                self.qpos[e] += 1
        return out


class EjectChecker:
    """Compares ejected flits with the model's trace (cycle, endpoint, packet, seq), cycle by
    cycle, plus each flit's contents; keeps the first mismatch."""

    def __init__(self, eps: Endpoints, trace):
        self.eps = eps
        trace = np.asarray(trace).reshape(-1, 4)
        self.expected = {}
        for c, e, pk, s in trace.tolist():
            self.expected.setdefault(c, []).append((e, pk, s))
        self.mismatch = None
        self.count = 0

    def check(self, arrival: int, got) -> bool:
        """got: [(endpoint, flit dict)] reaching their endpoints at cycle `arrival`."""
        if self.mismatch is not None:
            return False
        eps = self.eps
        want = self.expected.get(arrival, [])
        have = sorted((e, f["packet"], f["seq"]) for e, f in got)
        want_k = sorted((e, pk & 0xFFFF, s) for e, pk, s in want)
        if have != want_k:
            self.mismatch = {"cycle": arrival, "rtl_only": [x for x in have if x not in want_k][:4],
                             "model_only": [x for x in want_k if x not in have][:4]}
            return False
        for e, f in got:
            pk = next(pk for ee, pk, s in want if ee == e and (pk & 0xFFFF) == f["packet"] and s == f["seq"])
            d, s_ = int(eps.dst[pk]), int(eps.src[pk])
            ok = (f["dst"] == eps.ep_router[d] and f["dst_ep"] == eps.ep_local[d] and
                  f["src"] == eps.ep_router[s_] and f["src_ep"] == eps.ep_local[s_] and
                  f["head"] == int(f["seq"] == 0) and f["tail"] == int(f["seq"] == eps.L - 1) and
                  f["payload"] == payload_of(pk, f["seq"], eps.payload_bits))
            if not ok:
                self.mismatch = {"cycle": arrival, "bad_contents": {"endpoint": e, "packet": pk, "flit": f}}
                return False
        self.count += len(got)
        return True
