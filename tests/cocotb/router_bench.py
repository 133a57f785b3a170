"""cocotb: one router (pstar_router of PolarStar q=3 IQ d'=0, arithmetic routing), directed tests.

The pytest side (tests/test_cocotb_router.py) passes, in PSTAR_ROUTER, the layout, the
parameters and, from routing_logic, the output port of every destination at the router under
test. Each test drives the link interface cycle by cycle (flits and credits in, flits and credits
out) and checks the contract: routes, VC classes, va_stages + sa_stages + st_stage cycles per hop for a head, wormhole order,
credit flow control (back-pressure, exhaustion and return), VC contention, every port busy at
once, and malformed flits dropped, counted and credited without wedging the router.
"""
from __future__ import annotations

import json
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge


class Bench:
    def __init__(self, dut):
        self.dut = dut
        self.cfg = cfg = json.loads(open(os.environ["PSTAR_ROUTER"]).read())
        self.R, self.p, self.V, self.B, self.L = cfg["R"], cfg["p"], cfg["V"], cfg["B"], cfg["L"]
        self.P = self.R + self.p
        self.fields = {k: tuple(v) for k, v in cfg["fields"].items()}
        self.me = cfg["router"]
        self.route = cfg["route"]                 # dst -> output port (EJECT = -1)
        self.cls = cfg["class_of_vc"]
        self.C = cfg["C"]
        self.va = cfg["va_stages"]
        self.st = cfg["st_stage"]
        self.sa = cfg["sa_stages"]
        self.t = 0
        self.queue = [[] for _ in range(self.P)]  # flits waiting to enter input port i
        self.up_credit = [[self.B] * self.V for _ in range(self.P)]   # upstream view of our buffers
        self.pending_up = []
        self.out = []                             # (cycle, port, flit dict)
        self.credits_out = []                     # (cycle, port, vc)
        self.stalled = set()                      # network outputs whose credits we hold back
        self.held = {o: [] for o in range(self.R)}
        self.ret_now = []                         # credits to return to the router this cycle
        self.force = {}                           # port -> raw flit int to drive ignoring credits

    def pack(self, **vals):
        out = 0
        for k, v in vals.items():
            off, w = self.fields[k]
            out |= (int(v) & ((1 << w) - 1)) << off
        return out

    def unpack(self, value):
        return {k: (value >> off) & ((1 << w) - 1) for k, (off, w) in self.fields.items()}

    def packet(self, port, dst, vc, pk, hops=0, dst_ep=0, L=None, src=0):
        L = self.L if L is None else L
        for s in range(L):
            self.queue[port].append(self.pack(head=int(s == 0), tail=int(s == L - 1), vc=vc, src=src, dst=dst,
                                              dst_ep=dst_ep, hops=hops, phase=1, seq=s, packet=pk, payload=pk * 100 + s))

    async def start(self):
        dut = self.dut
        cocotb.start_soon(Clock(dut.clk, 2, unit="ns").start())
        dut.rst.value = 1
        dut.id.value = self.me
        for i in range(self.P):
            getattr(dut, f"flit_in__{i}__valid").value = 0
        for o in range(self.R):
            getattr(dut, f"credit_in__{o}__valid").value = 0
        await RisingEdge(dut.clk)
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        dut.rst.value = 0

    async def step(self, n=1):
        dut = self.dut
        for _ in range(n):
            if self.t:
                await FallingEdge(dut.clk)
            for i, v in self.pending_up:
                self.up_credit[i][v] += 1
            self.pending_up = []
            # outputs of cycle t
            for o in range(self.P):
                if int(getattr(dut, f"flit_out__{o}__valid").value):
                    f = self.unpack(int(getattr(dut, f"flit_out__{o}__payload").value))
                    self.out.append((self.t, o, f))
                    if o < self.R:
                        self.held[o].append(f["vc"])
            for i in range(self.P):
                if int(getattr(dut, f"credit_out__{i}__valid").value):
                    v = int(getattr(dut, f"credit_out__{i}__payload").value)
                    self.credits_out.append((self.t, i, v))
                    self.pending_up.append((i, v))
            # inputs of cycle t: one flit per port if the upstream has a credit; credits back
            for i in range(self.P):
                sig_v = getattr(dut, f"flit_in__{i}__valid")
                sig_d = getattr(dut, f"flit_in__{i}__payload")
                if i in self.force:
                    sig_v.value = 1
                    sig_d.value = self.force.pop(i)
                    continue
                q = self.queue[i]
                if q:
                    v = self.unpack(q[0])["vc"]
                    if self.up_credit[i][v] > 0:
                        self.up_credit[i][v] -= 1
                        sig_d.value = q.pop(0)
                        sig_v.value = 1
                        continue
                sig_v.value = 0
            for o in range(self.R):
                cv = getattr(dut, f"credit_in__{o}__valid")
                cd = getattr(dut, f"credit_in__{o}__payload")
                if o not in self.stalled and self.held[o]:
                    cd.value = self.held[o].pop(0)
                    cv.value = 1
                else:
                    cv.value = 0
            self.t += 1

    def flits_on(self, port):
        return [(t, f) for t, o, f in self.out if o == port]

    def vc_class(self, hops):
        return min(hops, self.C - 1)

    def arrival_vc(self, hops):
        """The first VC of the class a head that has taken `hops` hops arrives on (from an
        upstream router when hops > 0: the class of hops - 1)."""
        return self.cls.index(self.vc_class(hops - 1)) if hops else 0


def first_dst_via(b, port, exclude=()):
    for d, p in enumerate(b.route):
        if p == port and d not in exclude:
            return d
    raise AssertionError(f"no destination routed through port {port}")


@cocotb.test()
async def zero_load_route_and_timing(dut):
    """A packet per destination, one at a time: the port of routing_logic, a VC of the hop class,
    hops + 1, the head va_stages + sa_stages + st_stage cycles after it is presented, body flits right behind it."""
    b = Bench(dut)
    await b.start()
    for dst in range(len(b.route)):
        for hops in (0, 1, 2):
            in_port = 0 if hops else b.R                   # local injection at hops 0
            if hops == 0 and dst == b.me:
                continue
            vc = b.arrival_vc(hops)
            t0 = b.t
            b.packet(in_port, dst, vc, pk=dst * 3 + hops, hops=hops)
            await b.step(b.L + 6)
            got = [(t, o, f) for t, o, f in b.out if t >= t0]
            assert len(got) == b.L, (dst, hops, got)
            want_port = b.R if b.route[dst] < 0 else b.route[dst]
            for k, (t, o, f) in enumerate(got):
                assert o == want_port, (dst, hops, o, want_port)
                assert t == t0 + 1 + b.va + b.sa - 1 + b.st + k, (dst, hops, t, t0)   # VA, SA, ST, then a flit per cycle
                assert f["seq"] == k and f["packet"] == dst * 3 + hops and f["payload"] == f["packet"] * 100 + k
                if o < b.R:
                    assert b.cls[f["vc"]] == b.vc_class(hops), (f["vc"], hops)
                    assert f["hops"] == (hops + 1 if k == 0 else hops)
                else:
                    assert f["hops"] == hops and f["vc"] == 0          # ejection: lowest free VC
            b.out.clear()
    assert int(dut.dropped.value) == 0


@cocotb.test()
async def back_pressure_and_credit_return(dut):
    """A stalled output sends exactly B flits per output VC, then nothing; each returned credit
    releases exactly one more flit; the credits the router returns upstream match its pops."""
    b = Bench(dut)
    await b.start()
    port = b.route[(b.me + 1) % len(b.route)] if b.route[(b.me + 1) % len(b.route)] >= 0 else 0
    dst = first_dst_via(b, port)
    b.stalled.add(port)
    npk = 6                                           # 24 flits > B = 8 for the class-0 VC
    for k in range(npk):
        b.packet(b.R, dst, 0, pk=k)
    await b.step(60)
    sent = b.flits_on(port)
    assert len(sent) == b.B, len(sent)                # credits exhausted: exactly B flits
    assert all(f["vc"] == sent[0][1]["vc"] for _, f in sent)
    # the upstream got a credit for every flit the router popped, and no more
    assert len([c for c in b.credits_out if c[1] == b.R]) == b.B
    # return credits one by one: one flit per credit
    for k in range(5):
        b.stalled.discard(port)
        held = b.held[port]
        b.held[port] = held[:1]
        await b.step(1)
        b.held[port] = held[1:] + b.held[port]
        b.stalled.add(port)
        await b.step(6)
        assert len(b.flits_on(port)) == b.B + k + 1
    b.stalled.clear()
    await b.step(80)
    sent = b.flits_on(port)
    assert len(sent) == npk * b.L
    seqs = [(f["packet"], f["seq"]) for _, f in sent]
    assert seqs == sorted(seqs)                        # one input VC: packets in order, wormhole
    assert int(dut.dropped.value) == 0


@cocotb.test()
async def vc_contention(dut):
    """Two inputs want the one VC of the same class on the same output: the VA arbiter (pointer
    0) grants the lower input VC index first, and the packets never interleave on that VC."""
    b = Bench(dut)
    await b.start()
    port = b.route[(b.me + 3) % len(b.route)]
    dst = first_dst_via(b, port)
    in_a, in_b = [i for i in range(b.R) if i != port][:2]
    vc = b.arrival_vc(1)
    for k in range(3):
        b.packet(in_a, dst, vc, pk=10 + k, hops=1)
        b.packet(in_b, dst, vc, pk=20 + k, hops=1)
    await b.step(80)
    sent = b.flits_on(port)
    assert len(sent) == 6 * b.L
    owners = [f["packet"] for _, f in sent]
    # wormhole: each packet's flits contiguous on the output VC (only one VC in class 1)
    for k in range(0, len(owners), b.L):
        assert len(set(owners[k:k + b.L])) == 1, owners
    assert owners[0] == 10                              # lower input VC index wins the first VA
    assert sorted(set(owners)) == [10, 11, 12, 20, 21, 22]


@cocotb.test()
async def all_ports_busy(dut):
    """Every input port streams to a different output (input i -> output i+1 mod P, the local
    output included): all P outputs send a flit in the same cycle for most of the run."""
    b = Bench(dut)
    await b.start()
    flows = []
    for i in range(b.P):
        o = (i + 1) % b.P
        dst = b.me if o >= b.R else first_dst_via(b, o)
        hops = 0 if i >= b.R else 1
        vc = b.arrival_vc(hops)
        flows.append((i, o, dst))
        for k in range(4):
            b.packet(i, dst, vc, pk=100 * i + k, hops=hops)
    await b.step(40)
    per_cycle = {}
    for t, o, f in b.out:
        per_cycle.setdefault(t, set()).add(o)
    full = [t for t, os_ in per_cycle.items() if len(os_) == b.P]
    assert len(full) >= 4 * b.L - 2, sorted(per_cycle.items())
    for i, o, dst in flows:
        got = [f["packet"] for _, f in b.flits_on(o)]
        assert got == [100 * i + k for k in range(4) for _ in range(b.L)], (i, o, got)


@cocotb.test()
async def hop_class_comes_from_the_input_vc(dut):
    """A head whose hop count disagrees with the VC it arrives on takes the class of its input VC
    (docs/microarchitecture.md, VC classes): class 0 from a local port whatever its hops, one class
    above its VC's from a network port; its hops is still incremented."""
    b = Bench(dut)
    await b.start()
    port = b.route[(b.me + 2) % len(b.route)]
    dst = first_dst_via(b, port)
    other = [i for i in range(b.R) if i != port][0]
    last = b.V - 1                                   # a VC of the last class
    cases = [(b.R, 0, b.C - 1, 0),                   # local, hops says the last class: class 0
             (other, 0, 0, min(1, b.C - 1)),          # class-0 VC, hops 0: class 1
             (other, last, 1, b.C - 1)]               # last-class VC, hops 1: the last class
    for k, (i, vc, hops, want) in enumerate(cases):
        t0 = b.t
        b.packet(i, dst, vc, pk=40 + k, hops=hops)
        await b.step(b.L + 6)
        got = [f for t, o, f in b.out if t >= t0 and o == port]
        assert [f["packet"] for f in got] == [40 + k] * b.L, (i, vc, hops, got)
        assert all(b.cls[f["vc"]] == want for f in got), (i, vc, hops, [f["vc"] for f in got], want)
        assert got[0]["hops"] == hops + 1
    assert int(dut.dropped.value) == 0


@cocotb.test()
async def malformed_flits_are_dropped(dut):
    """A body without a head, a head to a router that does not exist and heads to an endpoint that
    does not exist (at this router or another) are dropped, counted on `dropped`, and their
    credits returned; traffic before and after is unaffected."""
    b = Bench(dut)
    await b.start()
    n = b.cfg["N"]
    port = b.route[(b.me + 2) % len(b.route)]
    dst = first_dst_via(b, port)
    b.packet(b.R, dst, 0, pk=1)
    await b.step(10)
    assert len(b.flits_on(port)) == b.L
    # body flit (no head) on network input 1, VC 2
    b.force[1] = b.pack(head=0, tail=0, vc=2, dst=dst, seq=1, packet=7)
    await b.step(4)
    assert int(dut.dropped.value) == 1
    assert any(i == 1 and v == 2 for _, i, v in b.credits_out), b.credits_out
    # a head to router N (out of range) and its body/tail, on input 2 VC 1
    if n < (1 << b.fields["dst"][1]):
        b.packet(2, n, 1, pk=8, hops=1)
        await b.step(10)
        assert int(dut.dropped.value) == 1 + b.L
        assert len([1 for _, i, v in b.credits_out if i == 2 and v == 1]) == b.L
    # an eject head whose endpoint does not exist (dst_ep >= p)
    if b.p < (1 << b.fields["dst_ep"][1]):
        before = int(dut.dropped.value)
        b.packet(3, b.me, 1, pk=9, hops=1, dst_ep=b.p)
        await b.step(10)
        assert int(dut.dropped.value) == before + b.L
        # the same toward another router, from the local port: dropped here, not routed on
        before = int(dut.dropped.value)
        b.packet(b.R, dst, 2, pk=10, dst_ep=b.p)
        await b.step(10)
        assert int(dut.dropped.value) == before + b.L
        assert not any(f["packet"] == 10 for _, _, f in b.out)
    # still routing
    b.out.clear()
    b.packet(b.R, dst, 0, pk=2)
    b.packet(0, b.me, 1, pk=3, hops=1)
    await b.step(12)
    assert [f["packet"] for _, f in b.flits_on(port)] == [2] * b.L
    assert [f["packet"] for _, f in b.flits_on(b.R)] == [3] * b.L
