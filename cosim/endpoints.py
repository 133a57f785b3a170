"""The endpoint side of docs/microarchitecture.md in plain Python, for the co-simulations.

`Endpoints` replays the packets of a `sim` run (source/destination endpoint, creation cycle):
unbounded source queues, a new packet takes the VC with the most credits (ties: lowest), one
flit per cycle per endpoint, credits counted one cycle after the router returns them. `Flits`
packs and unpacks flits with the field offsets of `contract.flit.flit_layout`.

Garbage flits (`NetworkSim.add_garbage`: endpoint, creation cycle, kind) are replayed by the
model's rule: a due garbage flit is sent before the endpoint's next packet, never inside one, on
the VC with the most credits, when that VC has a credit. `garbage_flit` fills it with
pseudo-random fields around the ones that make it malformed (kinds of `sim.engine.GARBAGE_KINDS`).
"""
from __future__ import annotations

import numpy as np

from contract.flit import CHANGED_IN_FLIGHT, head_only_fields


def payload_of(pk: int, seq: int, bits: int) -> int:
    return (pk * 2654435761 + seq * 40503 + 12345) & ((1 << bits) - 1) if bits else 0


BAD_DST, BAD_EP, BODY, TAIL = range(4)          # sim.engine.G_BAD_DST ... G_TAIL


def garbage_flit(flits: "Flits", gid: int, kind: int, routers: int, p: int) -> int:
    """Garbage flit `gid` of `kind` (vc added by the sender) for a network of `routers` routers
    with `p` local ports each: every field pseudo-random (a function of gid) except what makes it
    malformed: BAD_DST: head, dst in N..2^w-1; BAD_EP: head, dst any router, dst_ep in p..2^w-1;
    BODY: head = tail = 0; TAIL: head = 0, tail = 1."""
    rng = np.random.default_rng(0x9A4BA6E + gid)
    vals = {k: int(rng.integers(0, 1 << w)) if w < 63 else 0 for k, (_, w) in flits.fields.items()}
    vals["vc"] = 0
    dw, ew = flits.fields["dst"][1], flits.fields["dst_ep"][1]
    if kind == BAD_DST:
        vals.update(head=1, dst=int(rng.integers(routers, 1 << dw)))
    elif kind == BAD_EP:
        vals.update(head=1, dst=int(rng.integers(routers)), dst_ep=int(rng.integers(p, 1 << ew)))
    elif kind == BODY:
        vals.update(head=0, tail=0)
    elif kind == TAIL:
        vals.update(head=0, tail=1)
    else:
        raise ValueError(f"kind={kind}: unknown garbage kind")
    return flits.pack(**vals)


class Flits:
    """Pack/unpack flits with the layout's field offsets (contract.flit.flit_layout; a lean flit packs a
    head's header or a body's payload, as contract.flit.pack does)."""

    def __init__(self, fields: dict):
        self.fields = fields          # name -> (offset, width)
        self.head_only = set(head_only_fields(fields))
        self.lean = bool(self.head_only)

    def absent(self, head) -> set:
        return ({"payload"} if head else self.head_only) if self.lean else set()

    def pack(self, **vals) -> int:
        out = 0
        absent = self.absent(vals.get("head", 0))
        for k, v in vals.items():
            if k in absent:
                continue
            off, w = self.fields[k]
            out |= (int(v) & ((1 << w) - 1)) << off
        return out

    def unpack(self, value: int) -> dict:
        out = {k: (value >> off) & ((1 << w) - 1) for k, (off, w) in self.fields.items()}
        for k in self.absent(out["head"]):
            out[k] = 0
        return out


class Endpoints:
    """The endpoint side of the contract, for all endpoints of the network."""

    def __init__(self, cfg, packets, garbage=None):
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
        self.waiting = set()                     # endpoints with a packet queued
        # bits that do not change in the network (contract.flit.CHANGED_IN_FLIGHT): injected & keep
        # (per head bit: a lean body carries payload where a head has its hops and phase)
        f = self.flits.fields
        self.o_head = f["head"][0]
        self.keep = []
        for head in (0, 1):
            keep = (1 << max(off + w for off, w in f.values())) - 1
            for k in set(CHANGED_IN_FLIGHT) - self.flits.absent(head):
                off, w = f[k]
                keep &= ~(((1 << w) - 1) << off)
            self.keep.append(keep)
        self.injected = {}                       # packet * L + seq -> flit & keep
        # garbage: (endpoint, creation cycle, kind) per id, as NetworkSim.add_garbage
        self.gqueue = [[] for _ in range(self.E)]
        self.ggen = []
        self.ggi = 0
        self.garbage_sent = 0
        if garbage is not None:
            g_ep, g_time, g_kind = (np.asarray(a, dtype=np.int64) for a in garbage)
            n, p = cfg["N"], cfg["p"]
            order = np.lexsort((np.arange(len(g_time)), g_time))
            self.ggen = [(int(g_time[g]), int(g_ep[g]),
                          garbage_flit(self.flits, int(g), int(g_kind[g]), n, p))
                         for g in order]

    def kept(self, flit: int) -> int:
        """The bits of `flit` that do not change in the network."""
        return flit & self.keep[(flit >> self.o_head) & 1]

    def template(self, pk: int) -> int:
        """The header of packet pk: what every flit of it carries (seq/head/tail/vc/payload added per
        flit), or with lean flits its head (head bit included)."""
        s, d = int(self.src[pk]), int(self.dst[pk])
        return self.flits.pack(src=self.ep_router[s], src_ep=self.ep_local[s], dst=self.ep_router[d],
                               dst_ep=self.ep_local[d], hops=0, inter=0, phase=1, packet=pk, head=int(self.flits.lean))

    def step(self, t: int):
        """Cycle t: new packets join, each endpoint sends at most one flit. -> [(e, flit int)]."""
        while self.gi < len(self.gen) and self.gen[self.gi][0] == t:
            pk = self.gen[self.gi][1]
            e = int(self.src[pk])
            self.queue[e].append(pk)
            self.waiting.add(e)
            self.gi += 1
        while self.ggi < len(self.ggen) and self.ggen[self.ggi][0] == t:
            _, e, fl = self.ggen[self.ggi]
            self.gqueue[e].append(fl)
            self.waiting.add(e)
            self.ggi += 1
        out = []
        f = self.flits.fields
        o_head, o_tail, o_seq, o_vc, o_pay = (f[k][0] for k in ("head", "tail", "seq", "vc", "payload"))
        done = []
        for e in self.waiting:
            cr = self.credit[e]
            seq = self.sent[e]
            gq = self.gqueue[e]
            if gq and seq == 0:                  # garbage: between packets, before the next one
                best = 0
                for v in range(1, self.V):
                    if cr[v] > cr[best]:
                        best = v
                if cr[best] <= 0:
                    continue
                out.append((e, gq.pop(0) | (best << o_vc)))
                cr[best] -= 1
                self.garbage_sent += 1
                if not gq and self.qpos[e] == len(self.queue[e]):
                    done.append(e)
                continue
            q = self.queue[e]
            if self.qpos[e] == len(q):
                continue
            pk = q[self.qpos[e]]
            if seq == 0:
                best = 0
                for v in range(1, self.V):
                    if cr[v] > cr[best]:
                        best = v
                self.vc[e] = best
            v = self.vc[e]
            if cr[v] <= 0:
                continue
            flit = (int(seq == 0) << o_head) | (int(seq == self.L - 1) << o_tail)
            if not self.flits.lean:
                flit |= self.template(pk) | (seq << o_seq) | (payload_of(pk, seq, self.payload_bits) << o_pay)
            else:                        # contract.flit: a lean head carries the header, a body the payload
                flit |= self.template(pk) if seq == 0 else payload_of(pk, seq, self.payload_bits) << o_pay
            self.injected[pk * self.L + seq] = self.kept(flit)
            out.append((e, flit | (v << o_vc)))
            cr[v] -= 1
            self.sent[e] = seq + 1
            if seq + 1 == self.L:
                self.sent[e] = 0
                self.qpos[e] += 1
                if self.qpos[e] == len(q) and not self.gqueue[e]:
                    done.append(e)
        for e in done:
            self.waiting.discard(e)
        return sorted(out)


class EjectChecker:
    """Compares ejected flits with the model's trace (cycle, endpoint, packet, seq), cycle by
    cycle, and each flit with the flit its source injected (all fields but vc and hops); keeps
    the first mismatch, decoded."""

    def __init__(self, eps: Endpoints, trace):
        self.eps = eps
        trace = np.asarray(trace).reshape(-1, 4)
        self.expected = {}
        for c, e, pk, s in trace.tolist():
            self.expected.setdefault(c, []).append((e, pk * eps.L + s))
        self.mismatch = None
        self.count = 0

    def check(self, arrival: int, got) -> bool:
        """got: [(endpoint, flit int)] reaching their endpoints at cycle `arrival`."""
        if self.mismatch is not None:
            return False
        eps = self.eps
        want = self.expected.get(arrival, ())
        if not got and not want:
            return True
        kept, inj = eps.kept, eps.injected
        have = sorted((e, kept(v)) for e, v in got)
        want_k = sorted((e, inj.get(key, -1)) for e, key in want)
        if have != want_k:
            unpack = eps.flits.unpack
            self.mismatch = {
                "cycle": arrival,
                "rtl_only": [(e, unpack(v)) for e, v in got if (e, kept(v)) not in want_k][:4],
                "model_only": [{"endpoint": e, "packet": key // eps.L, "seq": key % eps.L}
                               for e, key in want if (e, inj.get(key, -1)) not in have][:4]}
            return False
        for _, key in want:                      # checked: forget (long runs stay flat in memory)
            inj.pop(key, None)
        self.count += len(got)
        return True
