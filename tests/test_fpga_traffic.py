"""FPGA traffic tops (fpga/): UART, payload words, generators against their Python model, and the
whole NetworkTrafficTop / RouterTrafficTop driven over a simulated UART, their reports compared
with `GeneratorModel` + `NetworkSim` (and, for the network, every ejection cycle for cycle)."""
import random
from collections import Counter, deque

import numpy as np
import pytest
import tiers
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from fpga import host
from fpga.status import StatusBlock
from fpga.tops import NetworkTrafficTop, RouterTrafficTop
from fpga.traffic import (GeneratorModel, NeighbourModel, PayloadWord, TrafficChecker, TrafficGenerator,
                          default_seeds, derived_controls, lfsr_logic, lfsr_next, payload_fields, payload_word, spread)
from fpga.uart import UARTRx, UARTTx
from hdl.network import build_routing
from routing_logic.base import RouteState
from contract.flit import flit_layout, head_only_fields, pack, unpack
from sim.network_sim import NetworkSim
from contract.params import RouterParams
from topologies import build

SMALL = "polarstar:q=2,supernode=complete,degree=0"     # 7 routers, 1 endpoint each
DIV = 4                                                 # UART clock cycles per bit in the simulations

FULL = tiers.full_only("CI budget")


def run_sim(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


class LineMonitor:
    """Decodes an 8N1 line sampled once per cycle; checks start/stop bits."""

    def __init__(self, divisor):
        self.div, self.state, self.bytes = divisor, None, []

    def feed(self, bit):
        if self.state is None:
            if bit == 0:
                self.state = [self.div // 2, 0, 0]       # cycles to the next sample, bit index, value
            return
        st = self.state
        st[0] -= 1
        if st[0] > 0:
            return
        if st[1] == 0:
            assert bit == 0, "start bit not low at mid-bit"
        elif st[1] <= 8:
            st[2] |= bit << (st[1] - 1)
        else:
            assert bit == 1, "stop bit not high"
            self.bytes.append(st[2])
            self.state = None
            return
        st[1] += 1
        st[0] = self.div


async def drive_byte(ctx, line, byte, divisor, stop=1, tick=None):
    for bit in [0] + [(byte >> i) & 1 for i in range(8)] + [stop]:
        ctx.set(line, bit)
        for _ in range(divisor):
            await (tick() if tick else ctx.tick())


# ---- UART ---------------------------------------------------------------------------------
class Loopback(wiring.Component):
    def __init__(self, divisor):
        self.tx, self.rx = UARTTx(divisor), UARTRx(divisor)
        super().__init__({"line": Out(1)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.tx, m.submodules.rx = self.tx, self.rx
        m.d.comb += [self.rx.rx.eq(self.tx.tx), self.line.eq(self.tx.tx)]
        return m


@pytest.mark.parametrize("divisor", [4, 7])
def test_uart_loopback(divisor):
    rng = random.Random(divisor)
    data = [rng.randrange(256) for _ in range(24)] + [0x00, 0xFF, 0x55]
    dut = Loopback(divisor)
    got, mon = [], LineMonitor(divisor)

    async def bench(ctx):
        pending = deque(data)
        ctx.set(dut.rx.data.ready, 1)
        for _ in range(len(data) * 10 * divisor + 20 * divisor):
            ctx.set(dut.tx.data.valid, bool(pending))
            if pending:
                ctx.set(dut.tx.data.payload, pending[0])
            if pending and ctx.get(dut.tx.data.ready):
                pending.popleft()
            await ctx.tick()
            mon.feed(ctx.get(dut.line))
            if ctx.get(dut.rx.data.valid):
                got.append(ctx.get(dut.rx.data.payload))
            assert not ctx.get(dut.rx.error)

    run_sim(dut, bench)
    assert got == data
    assert mon.bytes == data          # the line itself is 8N1 at `divisor` cycles per bit


def test_uart_rx_bad_stop_bit_recovers():
    rx = UARTRx(5)
    got, errors = [], []

    async def bench(ctx):
        async def tick():
            await ctx.tick()
            if ctx.get(rx.data.valid):
                got.append(ctx.get(rx.data.payload))
            errors.append(ctx.get(rx.error))

        ctx.set(rx.data.ready, 1)
        for _ in range(10):
            await tick()
        await drive_byte(ctx, rx.rx, 0x3C, 5, stop=0, tick=tick)      # framing error ...
        for _ in range(23):                                            # ... line held low (a break)
            await tick()
        ctx.set(rx.rx, 1)
        for _ in range(7):
            await tick()
        await drive_byte(ctx, rx.rx, 0xA7, 5, tick=tick)
        await drive_byte(ctx, rx.rx, 0x01, 5, tick=tick)
        for _ in range(20):
            await tick()

    run_sim(rx, bench)
    assert got == [0xA7, 0x01]
    assert sum(errors) == 1


def test_uart_bad_divisor():
    for bad in (1, 0, -3, 2.5, True):
        with pytest.raises(ValueError, match=r"^divisor="):
            UARTTx(bad)
        with pytest.raises(ValueError, match=r"^divisor="):
            UARTRx(bad)


# ---- payload words and LFSR logic ---------------------------------------------------------
# (routers, endpoints, payload bits, packet id bits): a 64-bit payload holds two copies and a
# part, 32 bits one and a part, 40 bits at 1,064 routers one and a part, 16 and 8 bits fold
PAYLOAD_CASES = [(7, 1, 32, 16), (26, 2, 16, 16), (1064, 5, 40, 16), (26, 1, 32, 8), (104, 4, 64, 16),
                 (26, 4, 8, 8)]


@pytest.mark.parametrize("routers,eps,payload_bits,id_bits", PAYLOAD_CASES)
def test_payload_logic_matches_reference(routers, eps, payload_bits, id_bits):
    params = RouterParams(payload_bits=payload_bits, packet_flits=4, packet_id_bits=id_bits)
    lay = flit_layout(routers, eps, params)
    assert lay["packet"].width == id_bits
    dut = PayloadWord(lay)
    rng = random.Random(routers)
    top_id = (1 << id_bits) - 1
    cases = [(rng.randrange(routers), rng.randrange(eps), rng.randrange(top_id + 1), rng.randrange(4))
             for _ in range(200)] + [(0, 0, 0, 0), (routers - 1, eps - 1, top_id, 3)]

    async def bench(ctx):
        for s, se, pk, sq in cases:
            for name, v in (("src", s), ("src_ep", se), ("packet", pk), ("seq", sq)):
                ctx.set(getattr(dut, name), v)
            await ctx.delay(1e-9)
            assert ctx.get(dut.payload) == payload_word(lay, s, se, pk, sq), (s, se, pk, sq)

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("routers,eps,payload_bits,id_bits", PAYLOAD_CASES)
def test_payload_names_its_packet(routers, eps, payload_bits, id_bits):
    """A payload that holds the message holds it exactly, every other copy inverted, so two
    flits of different packets or indices never carry the same one; a shorter payload is the
    message folded, and each field bit alone moves it (a corrupted field shows)."""
    params = RouterParams(payload_bits=payload_bits, packet_flits=4, packet_id_bits=id_bits)
    lay = flit_layout(routers, eps, params)
    widths = dict(payload_fields(lay))
    M = sum(widths.values())
    rng = random.Random(payload_bits)
    cases = {(rng.randrange(routers), rng.randrange(eps), rng.randrange(1 << id_bits), rng.randrange(4))
             for _ in range(300)}
    words = {c: payload_word(lay, *c) for c in cases}
    for (s, se, pk, sq), w in words.items():
        msg = sq | pk << widths["seq"] | se << (widths["seq"] + id_bits) | s << (M - widths["src"])
        assert w < 1 << payload_bits
        if payload_bits >= M:
            for k, lo in enumerate(range(0, payload_bits, M)):
                copy = (w >> lo) ^ (((1 << M) - 1) if k & 1 else 0)
                n = min(M, payload_bits - lo)
                assert copy & ((1 << n) - 1) == msg & ((1 << n) - 1), (k, lo)
        for field, width in widths.items():
            for b in range(width):
                c = {"src": s, "src_ep": se, "packet": pk, "seq": sq}
                c[field] ^= 1 << b
                assert payload_word(lay, c["src"], c["src_ep"], c["packet"], c["seq"]) != w, (field, b)
    if payload_bits >= M:
        assert len(set(words.values())) == len(words)
    assert spread(0b101, 3, 9) == 0b101_010_101 and spread(0b1101, 4, 2) == 0b11 ^ 0b01


def test_lfsr_logic_matches_reference():
    class Steps(wiring.Component):
        def __init__(self):
            super().__init__({"s": In(32), "o8": Out(32), "o32": Out(32)})

        def elaborate(self, platform):
            m = Module()
            m.d.comb += [self.o8.eq(lfsr_logic(self.s, 8)), self.o32.eq(lfsr_logic(self.s, 32))]
            return m

    dut = Steps()
    rng = random.Random(3)
    states = [rng.randrange(1, 1 << 32) for _ in range(100)] + [1, 0x80000000]

    async def bench(ctx):
        for s in states:
            ctx.set(dut.s, s)
            await ctx.delay(1e-9)
            assert ctx.get(dut.o8) == lfsr_next(s, 8)
            assert ctx.get(dut.o32) == lfsr_next(s, 32)

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    seen, s = set(), 1                    # no short cycle from state 1
    for _ in range(5000):
        s = lfsr_next(s)
        assert s not in seen
        seen.add(s)


# ---- generators against the Python model ----------------------------------------------------
class Gens(wiring.Component):
    def __init__(self, gens):
        self.gens = gens
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        for i, g in enumerate(self.gens):
            m.submodules[f"g{i}"] = g
        return m


async def set_while_paused(ctx, gens, ctl):
    """The settings of `ctl` and what the status block derives from them (settings not named
    are 0) for a cycle with `running` 0 (the generators register them, as settings made while
    paused), then `running` as `ctl` says."""
    ctl = {**ctl, **derived_controls(ctl.get("pattern", 0), ctl.get("shift", 0), ctl.get("budget", 0))}
    for g in gens:
        for k, v in ctl.items():
            ctx.set(getattr(g.ctl, k), 0 if k == "running" else v)
    await ctx.tick()
    for g in gens:
        ctx.set(g.ctl.running, ctl.get("running", 0))


def drive_generators(gens, params, cycles, ctl, rng, first_of=None, max_delay=7):
    """Runs generators with credits returned after random delays (1..max_delay cycles); checks
    the endpoint rules (send whenever a packet is queued and a credit is there, head on the VC
    with the most credits, whole packet on it) and returns [(gen, head fields, creation cycle)]
    with cycles counted from the first enabled cycle."""
    V, B, L = params.vcs, params.depth, params.packet_flits
    dut = Gens(gens)
    lay = gens[0].layout
    created = []
    heads = []

    async def bench(ctx):
        credit = [[B] * V for _ in gens]
        returns = [[] for _ in gens]                   # [due cycle, vc], one returned per cycle
        queue = [0] * len(gens)                        # packets created, head not sent
        seq = [0] * len(gens)
        cur_vc = [0] * len(gens)
        order = [deque() for _ in gens]                # creation cycles waiting for their head
        await set_while_paused(ctx, gens, ctl)
        for t in range(cycles):
            back = [next((r for r in returns[i] if r[0] <= t), None) for i in range(len(gens))]
            for i, g in enumerate(gens):
                ctx.set(g.credit.valid, back[i] is not None)
                if back[i] is not None:
                    ctx.set(g.credit.payload, back[i][1])
            await ctx.delay(1e-9)
            for i, g in enumerate(gens):
                if ctx.get(g.create):
                    queue[i] += 1
                    order[i].append(t)
                    created.append((i, t))
                valid = ctx.get(g.flit.valid)
                cr = credit[i]
                if seq[i]:
                    want = cr[cur_vc[i]] > 0
                else:
                    want = queue[i] > 0 and max(cr) > 0
                assert valid == want, f"generator {i} cycle {t}: sends {valid}, endpoint rules say {want}"
                if valid:
                    f = unpack(lay, ctx.get(g.flit.payload.as_value()))
                    assert f["seq"] == seq[i] and f["head"] == (seq[i] == 0) and f["tail"] == (seq[i] == L - 1)
                    assert f["payload"] == payload_word(lay, f["src"], f["src_ep"], f["packet"], f["seq"])
                    if seq[i] == 0:
                        best = max(range(V), key=lambda v: (cr[v], -v))
                        assert f["vc"] == best, f"head on VC {f['vc']}, credits {cr}"
                        cur_vc[i] = best
                        queue[i] -= 1
                        heads.append((i, f, order[i].popleft()))
                    else:
                        assert f["vc"] == cur_vc[i]
                    cr[f["vc"]] -= 1
                    returns[i].append([t + rng.randrange(1, max_delay + 1), f["vc"]])
                    seq[i] = (seq[i] + 1) % L
            for i in range(len(gens)):                     # a credit returned at t counts from t + 1
                if back[i] is not None:
                    returns[i].remove(back[i])
                    credit[i][back[i][1]] += 1
            await ctx.tick()

    run_sim(dut, bench)
    return created, heads


# L: flits per packet; the destination LFSR advances 32 steps per packet, 32 / L per flit when L
# divides 32 (4, 2) and all at the head otherwise (3)
@pytest.mark.parametrize("routers,eps,pattern,shift,load,budget,registered,L", [
    (7, 1, 0, 0, 60, 0, True, 3), (5, 2, 0, 0, 90, 6, True, 3), (5, 2, 1, 3, 70, 0, True, 3),
    (5, 2, 1, 0, 200, 0, True, 3), (7, 1, 0, 0, 60, 0, False, 3), (7, 1, 0, 0, 60, 0, True, 4),
    (5, 2, 0, 0, 90, 0, False, 2),
    # one-flit packets, credits slow to return: every send is a start, so the generator's
    # `ready` flag is read in the cycle after each, and backlogs form and drain (a backlog of
    # one that starts, with nothing created, leaves nothing ready)
    (5, 2, 0, 0, 160, 0, True, 1)])
def test_endpoint_generators_match_model(routers, eps, pattern, shift, load, budget, registered, L):
    params = RouterParams(vcs=3, depth=4, packet_flits=L)
    lay = flit_layout(routers, eps, params)
    E = routers * eps
    ep_router = np.repeat(np.arange(routers), eps)
    ep_local = np.arange(E) - ep_router * eps
    seeds = [s ^ (routers << 8) or 1 for s in default_seeds(E)]
    gens = [TrafficGenerator(lay, params, kind="endpoint", seed=seeds[e], router=int(ep_router[e]),
                             ep=int(ep_local[e]), e=e, E=E, num_routers=routers, ep_router=ep_router,
                             ep_local=ep_local, registered_draws=registered) for e in range(E)]
    cycles = 160
    created, heads = drive_generators(gens, params, cycles,
                                      {"running": 1, "load": load, "pattern": pattern, "shift": shift,
                                       "budget": budget}, random.Random(E), max_delay=7 if L > 1 else 30)
    # packets created up to the last cycle driven (one decided in it is created after)
    want = [w for w in GeneratorModel(E, seeds).run(cycles, load, pattern, shift, budget) if w[2] < cycles]
    got_created = sorted((i, t) for i, t in created)
    assert got_created == sorted((s, t) for s, _, t in want)
    if pattern == 1 and shift == 0:
        assert want == []                             # every endpoint maps onto itself: idle
        return
    assert len(want) > 3 * E                          # enough traffic to mean something
    got = sorted((i, int(f["dst"]) * eps + int(f["dst_ep"]), t) for i, f, t in heads)
    sent = sorted(w for w in want if (w[0], w[2]) in {(i, t) for i, _, t in heads})
    assert got == sent
    assert len(heads) > 0.8 * len(want)
    for i, f, _ in heads:
        assert (f["src"], f["src_ep"], f["hops"], f["inter"], f["phase"]) == (ep_router[i], ep_local[i], 0, 0, 1)
        assert int(f["dst"]) * eps + int(f["dst_ep"]) != i or pattern == 1
    if budget:
        assert Counter(s for s, _, _ in want) == Counter({e: budget for e in range(E)})


def test_budget_counts_from_its_restart():
    """A generator stops at its budget; the restart strobe (the status block's on 'C' and 'N')
    starts the count again, and a budget raised without one counts on from where it was."""
    params = RouterParams(vcs=2, depth=4, packet_flits=2)
    lay = flit_layout(2, 1, params)
    g = TrafficGenerator(lay, params, kind="endpoint", seed=77, router=0, ep=0, e=0, E=2, num_routers=2,
                         ep_router=[0, 1], ep_local=[0, 0], backlog_bits=8)
    created = []

    async def bench(ctx):
        await set_while_paused(ctx, [g], {"running": 1, "load": 255, "pattern": 0, "shift": 0, "budget": 3})
        for restart, budget in ((0, 3), (1, 5), (0, 5), (0, 7), (1, 0)):
            ctx.set(g.ctl.budget, budget)
            ctx.set(g.ctl.unlimited, budget == 0)
            ctx.set(g.ctl.restart, restart)
            n = 0
            for _ in range(40):
                await ctx.delay(1e-9)
                n += ctx.get(g.create)
                await ctx.tick()
                ctx.set(g.ctl.restart, 0)
            created.append(n)

    run_sim(Gens([g]), bench)
    trials = len(GeneratorModel(2, [77], endpoints=[0]).run(40, 255))
    assert created[:4] == [3, 5, 0, 2]                # the budget, again after a restart, the rest
    assert created[4] >= trials - 2 > 30              # budget 0: no limit (the first cycles settle)


def test_status_restarts_the_budget_on_n_and_c():
    st = StatusBlock(3)
    seen = {"clear": [], "restart": []}

    async def bench(ctx):
        ctx.set(st.rx.valid, 1)
        for k, b in enumerate(b"L\x10N\x00\x04SPT\x01CR"):
            ctx.set(st.rx.payload, b)
            await ctx.tick()
            for name in seen:
                if ctx.get(getattr(st.ctl, name)):
                    seen[name].append(k)

    run_sim(st, bench)
    assert seen == {"clear": [9], "restart": [4, 9]}


@pytest.mark.parametrize("bits", [1, 2, 3])
def test_full_backlog_loses_packets_and_never_wraps(bits):
    """No credit ever returns, so the generator stalls after its buffers' worth of flits and its
    backlog fills: every later trial must be lost (a pulse on `lost`), none may wrap the
    backlog counter and be created. Trials come from the model (it does not model losses)."""
    params = RouterParams(vcs=2, depth=4, packet_flits=3)
    lay = flit_layout(2, 1, params)
    seed = 0xC0FFEE
    g = TrafficGenerator(lay, params, kind="endpoint", seed=seed, router=0, ep=0, e=0, E=2, num_routers=2,
                         ep_router=[0, 1], ep_local=[0, 0], backlog_bits=bits)
    cycles = 80
    got = {}

    async def bench(ctx):
        await set_while_paused(ctx, [g], {"running": 1, "load": 255, "pattern": 0, "shift": 0, "budget": 0})
        creates = heads = lost = sent = 0
        for t in range(cycles + 3):
            if t == cycles:
                ctx.set(g.ctl.running, 0)
            await ctx.delay(1e-9)
            creates += ctx.get(g.create)
            lost += ctx.get(g.lost)
            sent += ctx.get(g.tail_sent)
            if ctx.get(g.flit.valid):
                heads += unpack(lay, ctx.get(g.flit.payload.as_value()))["head"]
            await ctx.tick()
        got.update(creates=creates, heads=heads, overflow=lost, sent=sent)

    run_sim(Gens([g]), bench)
    trials = len(GeneratorModel(2, [seed], endpoints=[0]).run(cycles, 255))
    # 8 credits: packets of 3 flits on VC 0, VC 1, then the head of a third on VC 0 (its body waits)
    assert (got["heads"], got["sent"]) == (3, 2)
    assert got["creates"] == got["heads"] + (1 << bits) - 1          # a full backlog, no wrap
    assert got["creates"] + got["overflow"] == trials > got["creates"]


@pytest.mark.parametrize("registered,listed", [(True, False), (False, False), (True, True), (False, True)])
def test_neighbour_generators_match_model(registered, listed):
    """listed: each neighbour sends to a list of routers of its own (as RouterTrafficTop's do
    around a router without u-turn paths), else to every router but itself."""
    params = RouterParams(vcs=4)
    n, p, me = 26, 2, 3
    lay = flit_layout(n, p, params)
    nbs = [0, 7, 25]
    seeds = [11, 0xDEADBEEF, 12345]
    rng = random.Random(8)
    dsts = [sorted(rng.sample([d for d in range(n) if d != nb], 5 + 4 * k)) for k, nb in enumerate(nbs)] \
        if listed else [None] * 3
    gens = [TrafficGenerator(lay, params, kind="neighbour", seed=s, router=me, E=n * p, num_routers=n,
                             neighbour=nb, p=p, registered_draws=registered, dsts=d)
            for s, nb, d in zip(seeds, nbs, dsts)]
    cycles = 150
    created, heads = drive_generators(gens, params, cycles, {"running": 1, "load": 80, "budget": 0},
                                      random.Random(5))
    want = [w for w in NeighbourModel(seeds, [0, 1, 2], nbs, me, n, p, dsts).run(cycles, 80) if w[2] < cycles]
    assert sorted(created) == sorted((i, t) for i, _, t in want)
    wanted = {(i, t): f for i, f, t in want}
    assert len(heads) > 20
    for i, f, t in heads:
        w = wanted[i, t]
        assert {k: int(f[k]) for k in w} == w
        assert f["hops"] in (1, 2) and f["dst"] != nbs[i] and f["src"] != me
        assert not listed or f["dst"] in dsts[i]
    assert len({(f["src"], f["dst"]) for _, f, _ in heads}) > 15        # draws spread
    if listed:           # the draws spread over the longest list
        assert len({f["dst"] for i, f, _ in heads if i == 2}) > len(dsts[2]) // 2
    assert {(f["hops"], f["phase"]) for _, f, _ in heads} == {(1, 0), (1, 1), (2, 0), (2, 1)}
    assert len({f["inter"] for _, f, _ in heads}) > 10


def check_flits(chk, lay, cases):
    """Feeds `cases` [(flit fields, error expected)] to TrafficChecker `chk`, one per cycle: its
    error output (a cycle after each flit) must flag exactly the expected ones, and its tail
    output every tail."""
    flags, tails = [], []

    async def bench(ctx):
        for k, (f, _) in enumerate(cases):
            ctx.set(chk.flit.valid, 1)
            ctx.set(chk.flit.payload.as_value(), pack(lay, f))
            await ctx.delay(1e-9)
            if k:                                  # `error` is the previous cycle's flit's
                flags.append(ctx.get(chk.error))
            tails.append(ctx.get(chk.tail))
            await ctx.tick()
        ctx.set(chk.flit.valid, 0)
        await ctx.delay(1e-9)
        flags.append(ctx.get(chk.error))
        assert not ctx.get(chk.tail)

    run_sim(chk, bench)
    assert flags == [e for _, e in cases]
    assert tails == [f["tail"] for f, _ in cases]


def test_checker_flags_each_error():
    params = RouterParams(vcs=2, packet_flits=3)
    n, p = 7, 2
    lay = flit_layout(n, p, params)
    me, ep = 2, 1

    def flit(vc, seq, src=5, src_ep=0, packet=9, dst=me, dst_ep=ep, hops=1, head=None, tail=None, flip=0, phase=1,
             **kw):
        f = dict(vc=vc, seq=seq, src=src, src_ep=src_ep, packet=packet, dst=dst, dst_ep=dst_ep, hops=hops, phase=phase,
                 head=int(seq == 0) if head is None else head, tail=int(seq == 2) if tail is None else tail, **kw)
        f["payload"] = payload_word(lay, src, src_ep, packet, seq) ^ flip
        return f

    good = [flit(0, 0), flit(1, 0, packet=3), flit(0, 1), flit(1, 1, packet=3), flit(0, 2), flit(1, 2, packet=3)]
    cases = [(f, 0) for f in good] + [
        (flit(0, 1), 1),                                          # body with no open packet
        (flit(1, 0, packet=4), 0), (flit(1, 0, packet=5), 1),     # head while a packet is open (restarts)
        (flit(1, 2, packet=5), 1),                                # seq skips 1 (the tail closes the VC)
        (flit(0, 0, packet=6), 0), (flit(0, 1, packet=7), 1),     # another packet's flit in the middle ...
        (flit(0, 2, packet=7), 0),                                # ... which the checker then follows
        (flit(0, 0, packet=8), 0), (flit(0, 1, packet=8, src=4), 1), (flit(0, 2, packet=8, src=4), 0),
        (flit(1, 0, packet=1, tail=1), 1),                        # tail flag on seq 0 (L = 3)
        (flit(1, 0, packet=2, flip=1 << 7), 1), (flit(1, 1, packet=2), 0), (flit(1, 2, packet=2), 0),
        (flit(0, 0, packet=3, dst=3), 1), (flit(0, 1, packet=3, dst=3), 1), (flit(0, 2, packet=3, dst=3), 1),
        (flit(1, 0, packet=9, dst_ep=0), 1), (flit(1, 1, packet=9, dst_ep=0), 1), (flit(1, 2, packet=9, dst_ep=0), 1),
        (flit(1, 1, packet=2, head=1), 1), (flit(1, 2, packet=2), 0),   # head flag on seq 1
    ]
    check_flits(TrafficChecker(lay, params, mode="eject", router=me, ep=ep, num_routers=n, p=p), lay, cases)

    # strict network-output checks: hops, inter, phase, destination not this router
    def packet(vc, pk, src=5, dst=4, head_hops=None, errs=(0, 0, 0), **kw):     # kw: head-only fields
        body = int(src != me)                             # hops as injected; the router adds 1 to heads
        hops = [body + 1 if head_hops is None else head_hops, body, body]
        return [(flit(vc, q, src=src, packet=pk, dst=dst, hops=hops[q], **(kw if q == 0 else {})),
                 errs[q]) for q in range(3)]

    cases = (packet(0, 1) + packet(1, 2, src=me) + packet(0, 3, head_hops=4, errs=(1, 1, 1))
             + packet(1, 4, dst=me, errs=(1, 1, 1))                     # should have been ejected
             + packet(0, 5, inter=3, errs=(0, 1, 1))                    # body inter differs from the head's
             + packet(1, 6, src=me, inter=1, errs=(1, 1, 1))            # local packets carry inter 0 ...
             + packet(0, 7, src=me, phase=0, errs=(1, 0, 0))            # ... and phase 1 (the head)
             + [(flit(1, 0, packet=8, dst=4, hops=2, phase=0), 0),      # a head that left with phase 0
                (flit(1, 1, packet=8, dst=4), 0), (flit(1, 2, packet=8, dst=4), 0)]   # (escaped): bodies 1 or 0
             + [(flit(0, 0, packet=9, dst=4, hops=2, inter=me), 0),     # phase 1 on the head: the bodies' too
                (flit(0, 1, packet=9, dst=4, inter=me, phase=0), 1), (flit(0, 2, packet=9, dst=4, inter=me, phase=0), 1)]
             + [(flit(1, 0, packet=6, dst=4, hops=2), 0), (flit(1, 1, packet=6, dst=4, phase=0), 1),
                (flit(1, 2, packet=6, dst=4), 0)])
    check_flits(TrafficChecker(lay, params, mode="network", router=me, num_routers=n, p=p, strict=True), lay, cases)


def test_lean_checker_flags_each_error():
    """Lean flits (contract.flit): heads carry the header, bodies only a payload. The checker knows a
    body's packet and index from its VC's head, so a body of another packet, out of order or
    corrupted is a payload error, and a head's destination, seq field and flags are checked."""
    params = RouterParams(vcs=2, packet_flits=3)
    n, p = 7, 2
    lay = flit_layout(n, p, params, carried=(), fmt="lean")
    me, ep = 2, 1

    def head(vc, packet, src=5, src_ep=0, dst=me, dst_ep=ep, tail=0, seq=0):
        return dict(head=1, tail=tail, vc=vc, src=src, src_ep=src_ep, packet=packet, dst=dst, dst_ep=dst_ep, seq=seq)

    def body(vc, seq, packet, src=5, src_ep=0, flip=0, tail=None):
        return dict(head=0, tail=int(seq == 2) if tail is None else tail, vc=vc,
                    payload=payload_word(lay, src, src_ep, packet, seq) ^ flip)

    cases = [
        (head(0, 9), 0), (head(1, 3), 0), (body(0, 1, 9), 0), (body(1, 1, 3), 0), (body(0, 2, 9), 0),
        (body(1, 2, 3), 0),
        (body(0, 1, 9), 1),                                        # body with no open packet
        (head(1, 4), 0), (head(1, 5), 1),                          # head while a packet is open
        (body(1, 2, 5), 1),                                        # seq skips 1 (the tail closes the VC)
        (head(0, 6), 0), (body(0, 1, 7), 1), (body(0, 2, 6), 0),   # another packet's body in the middle
        (head(0, 4, src=4), 0), (body(0, 1, 4, src=5), 1), (body(0, 2, 4, src=4), 0),   # another source's
        (head(1, 1, tail=1), 1),                                   # tail flag on seq 0 (L = 3)
        (head(1, 2), 0), (body(1, 1, 2, flip=1 << 7), 1), (body(1, 2, 2), 0),          # corrupted payload
        (head(0, 3, dst=3), 1), (body(0, 1, 3), 0), (body(0, 2, 3), 0),   # wrong destination: the head
        (head(1, 9, dst_ep=0), 1), (body(1, 1, 9), 0), (body(1, 2, 9), 0),
        (head(0, 5, seq=1), 1), (body(0, 1, 5), 0), (body(0, 2, 5), 0),   # a head's seq field is 0
        (head(1, 5), 0), (body(1, 1, 5, tail=1), 1),               # tail flag on seq 1
    ]
    check_flits(TrafficChecker(lay, params, mode="eject", router=me, ep=ep, num_routers=n, p=p), lay, cases)


# ---- the tops over the simulated UART ---------------------------------------------------------
class TopBench:
    """Drives a traffic top's UART in the simulator and watches it."""

    def __init__(self, ctx, top, outputs=()):
        self.ctx, self.top, self.cycle = ctx, top, 0
        self.mon = LineMonitor(top.divisor)
        self.outputs = outputs                # [(index, stream)] recorded every cycle
        self.seen = []                        # (cycle, index, flit int)
        self.running = []                     # cycles with running = 1
        self.sent = self.received = 0         # tails the generators sent, the checkers saw

    async def tick(self, n=1):
        ctx = self.ctx
        for _ in range(n):
            await ctx.tick()
            self.cycle += 1
            self.mon.feed(ctx.get(self.top.uart_tx))
            if ctx.get(self.top.control.ctl.running):
                self.running.append(self.cycle)
            self.sent += sum(ctx.get(g.tail_sent) for g in self.top.generators if g is not None)
            self.received += sum(ctx.get(c.tail) for c in self.top.checkers)
            for i, s in self.outputs:
                if ctx.get(s.valid):
                    self.seen.append((self.cycle, i, ctx.get(s.payload.as_value())))

    async def send(self, data: bytes):
        for b in data:
            await drive_byte(self.ctx, self.top.uart_rx, b, self.top.divisor, tick=self.tick)

    async def wait_drained(self, want_sent, limit=4000):
        """Until the generators sent and the checkers saw `want_sent` tails since the counts
        were last zeroed (`self.sent = self.received = 0`)."""
        for _ in range(limit // 8):
            if self.sent == want_sent and self.received == want_sent:
                return
            await self.tick(8)
        raise AssertionError(f"not drained after {limit} cycles: sent {self.sent}/{want_sent}, "
                             f"received {self.received}")

    async def pause(self):
        await self.send(host.encode_command("pause"))
        await self.tick(4 * self.top.divisor)          # the receiver is still finishing the stop bit
        assert not self.ctx.get(self.top.control.ctl.running)

    async def report(self):
        self.mon.bytes = []
        await self.send(host.encode_command("report"))
        n = host.frame_length(self.top.E)
        for _ in range(n * 10 * self.top.divisor + 100):
            if len(self.mon.bytes) == n:
                break
            await self.tick()
        return host.decode_report(bytes(self.mon.bytes))


def ejections_of(seen, lay, first, start):
    """(model trace cycle, endpoint, source endpoint, packet, seq) of recorded ejections. A lean
    body flit (contract.flit) names none of them: it is the next flit of its VC's packet."""
    out = []
    open_ = {}
    for c, e, v in sorted(seen):
        f = unpack(lay, v)
        if f["head"] or not head_only_fields(lay):
            open_[e, f["vc"]] = [int(first[f["src"]]) + int(f["src_ep"]), int(f["packet"]), int(f["seq"])]
        else:
            open_[e, f["vc"]][2] += 1
        out.append((c - start + 1, e, *open_[e, f["vc"]]))
    return sorted(out)


# V = the routing's VC classes; stages = (va_stages, st_stage, sa_stages): the one-cycle and the
# pipelined router; latency = (link, credit): registered links as the network build can take them;
# id_bits: the packet id's width (2: each source's ids wrap within the 5 packets of a run);
# block: bits of each buffer body in block RAM (a synchronous read, with the traversal stage;
# st_stage 2 registers it again)
# flit: wide, or lean (the header in heads only; the corruption then hits the first body flit)
# CI: the one-cycle router and the 26-router FPGA build's configuration (pipelined, registered
# links, EBR bodies, lean flits); the rest in the PSTAR_COSIM=full tier (CI budget)
@pytest.mark.slow
@pytest.mark.parametrize("routing,vcs,stages,latency,id_bits,block,flit", [
    pytest.param("polarstar", 3, (1, 0, 1), (1, 1), 16, 0, "wide", marks=FULL), ("min", 2, (1, 0, 1), (1, 1), 16, 0, "wide"),
    pytest.param("min", 2, (2, 1, 2), (1, 1), 16, 0, "wide", marks=FULL),
    pytest.param("min", 2, (2, 1, 2), (2, 2), 16, 36, "wide", marks=FULL),
    pytest.param("polarstar", 3, (1, 0, 1), (1, 1), 2, 0, "wide", marks=FULL), pytest.param("polarstar", 3, (1, 0, 1), (1, 1), 16, 0, "lean", marks=FULL),
    # (36, 0): the bodies of even routers in block RAM, of odd ones in LUTRAM (a network with
    # more buffers than EBRs, fpga.build.body_block_bits_per_router)
    ("min", 2, (2, 1, 2), (2, 2), 8, (36, 0), "lean"),
    # the 8-port target's stages: three-stage SA, the body's block RAM read registered again
    pytest.param("min", 2, (2, 2, 3), (2, 2), 8, 36, "lean", marks=FULL)])
def test_network_traffic_top_matches_model(routing, vcs, stages, latency, id_bits, block, flit):
    net = build(SMALL)
    params = RouterParams(vcs=vcs, va_stages=stages[0], st_stage=stages[1], sa_stages=stages[2],
                          link_latency=latency[0], credit_latency=latency[1], packet_id_bits=id_bits)
    per_router = [block[r % 2] for r in range(net.num_routers)] if isinstance(block, tuple) else block
    top = NetworkTrafficTop(net, routing, params, divisor=DIV, body_block_bits=per_router, flit=flit)
    # the body of a lean flit (vc and the 32 data bits: one endpoint per router, so dst_ep is not
    # a front field) fits one EBR whole
    block = max(block) if isinstance(block, tuple) else block
    assert top.network.proto.body_block_bits == (min(block, 33) if flit == "lean" else block)
    if isinstance(per_router, list):
        assert [top.network.make_router(r).body_block_bits for r in (0, 1)] == [min(block, 33), 0]
    E, L = top.E, params.packet_flits
    load, budget = 45, 5
    corrupt_src = 4
    runs = []
    reports = []

    async def bench(ctx):
        tb = TopBench(ctx, top, [(e, top.network.eject[e]) for e in range(E)])
        await tb.send(host.encode_command("load", load) + host.encode_command("budget", budget)
                      + host.encode_command("start"))
        await tb.wait_drained(E * budget)
        await tb.pause()
        runs.append(list(tb.running))
        reports.append(await tb.report())
        if routing == "polarstar":               # second run: clear, corrupt one flit, go again
            tb.running, tb.sent, tb.received = [], 0, 0
            await tb.send(host.encode_command("corrupt", corrupt_src) + host.encode_command("clear")
                          + host.encode_command("start"))
            await tb.wait_drained(E * budget)
            await tb.pause()
            runs.append(list(tb.running))
            reports.append(await tb.report())
        top.seen = tb.seen

    run_sim(top, bench)

    # the generators' packets, from the Python model, replayed in the cycle-accurate model
    gm = top.model()
    start = runs[0][0]
    packets = []
    for k, run in enumerate(runs):
        assert run == list(range(run[0], run[0] + len(run))), "running cycles are contiguous"
        assert reports[k]["cycles"] == len(run)
        if k:
            gm.clear()
        packets.append(gm.run(len(run), load, "uniform", 0, budget, start=run[0] - start))
    model = NetworkSim(net, routing, params, "uniform", 0.0, seed=1, trace=200_000)
    allp = [p for run in packets for p in run]
    model.add_packets([p[0] for p in allp], [p[1] for p in allp], [p[2] for p in allp])
    model.run(top.seen[-1][0] - start + 50)
    pk = model.packets()
    assert (pk["done"] >= 0).all() and model.in_flight == 0

    trace = model.trace[:model.trace_len[0]]
    run_of = np.repeat(np.arange(len(packets)), [len(x) for x in packets])      # packet id -> run (ids in order)
    assert np.array_equal(pk["created"], [p[2] for p in allp]) and np.array_equal(pk["src"], [p[0] for p in allp])
    for k, rep in enumerate(reports):
        assert rep["endpoints"] == E and rep["dropped"] == 0
        sent = Counter(s for s, _, _ in packets[k])
        tails = trace[(trace[:, 3] == L - 1) & (run_of[trace[:, 2]] == k)]   # the model's ejected tails
        assert rep["sent"] == [sent[e] for e in range(E)] == [budget] * E
        assert rep["received"] == np.bincount(tails[:, 1], minlength=E).tolist()
        assert rep["received"] == [sum(1 for p in packets[k] if p[1] == e) for e in range(E)]
        if k == 0:
            assert rep["errors"] == [0] * E

    # every ejection, cycle for cycle: (cycle, endpoint, source, per-source packet index, seq)
    per_src = {}
    index = {}
    for pid in np.lexsort((np.arange(len(pk["src"])), pk["created"])):
        s = int(pk["src"][pid])
        index[int(pid)] = per_src.get(s, 0)
        per_src[s] = index[int(pid)] + 1
    want = sorted((int(c), int(e), int(pk["src"][pid]), index[int(pid)] % (1 << id_bits), int(sq))
                  for c, e, pid, sq in trace)
    got = ejections_of(top.seen, top.layout, top.network.ep_first, start)
    assert len(got) == len(allp) * L and top.layout["packet"].width == id_bits
    assert got == want

    if routing == "polarstar":
        # the corrupted flit is the head (lean: the first body flit) of generator 4's first packet of run 2
        dst = next(d for s, d, _ in packets[1] if s == corrupt_src)
        assert reports[1]["errors"] == [int(e == dst) for e in range(E)]


@pytest.mark.slow
@pytest.mark.parametrize("header,flit", [("all", "wide"), ("routing", "wide"), ("routing", "lean")])
def test_router_traffic_top(header, flit):
    """header "all": the strict checkers also check the hop count the router adds, the
    intermediate and the phase; "routing" (the PolarStar unit reads none): the flits do not carry
    them, 10 bits fewer. Lean flits: the header in heads only (the corrupt command hits the first
    body flit of the same packet)."""
    net = build("polarstar:q=3,supernode=iq,degree=0")
    params = RouterParams(vcs=3)
    top = RouterTrafficTop(net, "polarstar", params, divisor=DIV, router=0, header=header, flit=flit)
    # head, tail, 2-bit vc; src, dst (5 bits), src_ep, dst_ep (1), seq (2), packet (16), payload (32)
    wide = 2 + 2 + 2 * (5 + 1) + 2 + 16 + 32 + (10 if header == "all" else 0)
    assert top.layout.size == (2 + 2 + 32 if flit == "lean" else wide)
    assert top.E == top.P == 5 and all(nb >= 0 for nb in top.neighbours)
    # the arithmetic unit is minimal: the router is built as in a network, without u-turn paths,
    # and each neighbour sends to the routers whose route does not lead back to it
    assert not top.router.uturns
    assert all(len(d) < net.num_routers - 1 and nb not in d for d, nb in zip(top.dsts, top.neighbours))
    widths = {k: top.layout[k].width for k in ("hops", "inter", "phase")}
    assert widths == ({"hops": 4, "inter": 5, "phase": 1} if header == "all" else {"hops": 0, "inter": 0, "phase": 0})
    load, budget = 60, 12          # the local port only receives neighbour packets for this router (1/25)
    corrupt_port = 1
    runs, reports = [], []

    async def bench(ctx):
        tb = TopBench(ctx, top)
        await tb.send(host.encode_command("load", load) + host.encode_command("budget", budget)
                      + host.encode_command("start"))
        await tb.wait_drained(top.P * budget)
        await tb.pause()
        runs.append(len(tb.running))
        reports.append(await tb.report())
        tb.running, tb.sent, tb.received = [], 0, 0      # second run: back-pressure, a corrupt flit
        await tb.send(host.encode_command("stall", 160) + host.encode_command("corrupt", corrupt_port)
                      + host.encode_command("clear") + host.encode_command("start"))
        await tb.wait_drained(top.P * budget)
        await tb.pause()
        runs.append(len(tb.running))
        reports.append(await tb.report())

    run_sim(top, bench)

    routing = build_routing(net, "polarstar", params)
    lm, nm = top.model(), top.neighbour_model()
    R, me = top.R, top.router_id

    def out_port(src, dst, hops):
        if dst == me:
            return None
        ports = {c.port for c in routing.route(me, RouteState(src, dst, hops))}
        assert len(ports) == 1
        return ports.pop()

    for k, (cycles, rep) in enumerate(zip(runs, reports)):
        if k:
            lm.clear()
            nm.clear()
        local = lm.run(cycles, load, "uniform", 0, budget)
        nbr = nm.run(cycles, load, budget)
        sent, recv, first = Counter(), Counter(), {}
        for s, d, _ in local:
            port = R + (s - int(top.plan.ep_first[me]))
            sent[port] += 1
            dr = int(np.searchsorted(top.plan.ep_first, d, "right") - 1)
            o = out_port(me, dr, 0)
            dest = R + d - int(top.plan.ep_first[dr]) if o is None else o
            recv[dest] += 1
            first.setdefault(port, dest)
        for port, f, _ in nbr:
            sent[port] += 1
            o = out_port(f["src"], f["dst"], f["hops"])
            assert o != port                # no head turns back: the router has no u-turn paths
            dest = R + f["dst_ep"] if o is None else o
            recv[dest] += 1
            first.setdefault(port, dest)
        assert rep["endpoints"] == top.P and rep["dropped"] == 0 and rep["cycles"] == cycles
        assert rep["sent"] == [sent[i] for i in range(top.P)] == [budget] * top.P
        assert rep["received"] == [recv[i] for i in range(top.P)]
        assert all(r > 0 for r in rep["received"])
        if k == 0:
            assert rep["errors"] == [0] * top.P
        else:
            assert rep["errors"] == [int(i == first[corrupt_port]) for i in range(top.P)]


# ---- status block, host side, bad arguments ------------------------------------------------
def test_host_encode_decode():
    assert host.encode_command("start") == b"S"
    assert host.encode_command("load", 64) == b"L\x40"
    assert host.encode_command("budget", 0x1234) == b"N\x12\x34"
    assert host.encode_command("pattern", "shift") == b"T\x01"
    for bad in (("load", 256), ("budget", -1), ("pattern", 2), ("start", 1), ("bogus", None), ("load", None)):
        with pytest.raises(ValueError) as exc:
            host.encode_command(*bad)
        assert "\n" not in str(exc.value)
    body = bytes([0xA5, 0x5A, 0, 2]) + (7).to_bytes(4, "big") + (1000).to_bytes(4, "big")
    body += (5).to_bytes(4, "big") + (6).to_bytes(4, "big") + (1).to_bytes(2, "big")
    body += (0xFFFFFFFF).to_bytes(4, "big") + (0).to_bytes(4, "big") + (0).to_bytes(2, "big")
    frame = body + bytes([sum(body) & 0xFF])
    assert host.decode_report(frame) == {"endpoints": 2, "dropped": 7, "cycles": 1000, "sent": [5, 0xFFFFFFFF],
                                         "received": [6, 0], "errors": [1, 0]}
    for bad, what in ((frame[:-1] + bytes([frame[-1] ^ 1]), "checksum"), (b"\xA5\x5B" + frame[2:], "magic"),
                      (frame[:-2], "bytes"), (frame[:5], "shorter")):
        with pytest.raises(ValueError, match=what) as exc:
            host.decode_report(bad)
        assert "\n" not in str(exc.value)


def test_host_cli_errors(monkeypatch, capsys):
    for argv in (["--load", "300", "--port", "x"], ["--pattern", "zigzag", "--port", "x"], [],
                 ["--port", "x", "--run", "-1"], ["--port", "x", "--budget", "abc"]):
        with pytest.raises(SystemExit) as exc:
            host.main(argv)
        assert exc.value.code == 2
    monkeypatch.setitem(__import__("sys").modules, "serial", None)
    assert host.main(["--port", "/dev/null"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "fpga.host: pyserial is missing: pip install pyserial"


def test_host_cli_with_fake_port(monkeypatch, capsys):
    import json
    import types

    body = bytes([0xA5, 0x5A, 0, 1]) + bytes(4) + (99).to_bytes(4, "big") + (3).to_bytes(4, "big")
    body += (3).to_bytes(4, "big") + bytes(2)
    frame = body + bytes([sum(body) & 0xFF])
    written = []

    class FakeSerial:
        def __init__(self, port, baud, timeout):
            assert (port, baud) == ("/dev/fake", 9600)
            self.out = b""

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def write(self, data):
            written.append(bytes(data))
            if data == b"R":
                self.out = frame

        def read(self, n):
            data, self.out = self.out[:n], self.out[n:]
            return data

        def flush(self):
            pass

        def reset_input_buffer(self):
            self.out = b""

    fake = types.SimpleNamespace(Serial=FakeSerial, SerialException=OSError)
    monkeypatch.setitem(__import__("sys").modules, "serial", fake)
    assert host.main(["--port", "/dev/fake", "--baud", "9600", "--load", "7", "--budget", "300", "--pattern", "shift",
                      "--shift", "2", "--run", "0", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["cycles"] == 99 and rep["sent"] == [3] and rep["settings"]["load"] == 7
    assert written == [b"PL\x07T\x01H\x02N\x01\x2cCS", b"P", b"R"]


def test_status_shift_reduced_mod_e():
    st = StatusBlock(7)
    got = {}

    async def bench(ctx):
        ctx.set(st.rx.valid, 1)
        for b in b"H\xC8T\x01T\x05N\x01\x02L\x11X\x07X\x06":
            ctx.set(st.rx.payload, b)
            await ctx.tick()
            if ctx.get(st.corrupt):
                got.setdefault("corrupt", []).append(ctx.get(st.corrupt_index))
        ctx.set(st.rx.valid, 0)
        for _ in range(40):
            await ctx.tick()
        if ctx.get(st.corrupt):
            got.setdefault("corrupt", []).append(ctx.get(st.corrupt_index))
        got.update(shift=ctx.get(st.ctl.shift), pattern=ctx.get(st.ctl.pattern), budget=ctx.get(st.ctl.budget),
                   load=ctx.get(st.ctl.load), unlimited=ctx.get(st.ctl.unlimited), selfmap=ctx.get(st.ctl.selfmap))

    run_sim(st, bench)
    assert got == {"shift": 200 % 7, "pattern": 1, "budget": 0x0102, "load": 0x11, "corrupt": [6], "unlimited": 0,
                   "selfmap": 0}


@pytest.mark.parametrize("command,unlimited,selfmap", [(b"", 1, 0), (b"T\x01", 1, 1), (b"T\x01H\x07", 1, 1),
                                                       (b"T\x01H\x08", 1, 0), (b"N\x00\x01", 0, 0),
                                                       (b"N\x01\x00N\x00\x00T\x01H\x00", 1, 1)])
def test_status_derives_the_trial_controls(command, unlimited, selfmap):
    """The budget is 0 and the shift pattern maps endpoints onto themselves (shift mod E = 0),
    from the settings as they end (E = 7)."""
    st = StatusBlock(7)
    got = []

    async def bench(ctx):
        ctx.set(st.rx.valid, 1)
        for b in command:
            ctx.set(st.rx.payload, b)
            await ctx.tick()
        ctx.set(st.rx.valid, 0)
        for _ in range(12):
            await ctx.tick()
        got.extend([ctx.get(st.ctl.unlimited), ctx.get(st.ctl.selfmap)])

    run_sim(st, bench)
    assert got == [unlimited, selfmap]


def test_bad_constructor_arguments():
    net = build(SMALL)
    params = RouterParams(vcs=4)
    for cls in (NetworkTrafficTop, RouterTrafficTop):
        with pytest.raises(ValueError, match=r"^divisor=1:") as exc:
            cls(net, "polarstar", params, divisor=1)
        assert "\n" not in str(exc.value)
        with pytest.raises(ValueError, match=r"^seeds:"):
            cls(net, "polarstar", params, divisor=4, seeds=[1, 2])
    with pytest.raises(ValueError, match=r"^seed=0:"):
        NetworkTrafficTop(net, "polarstar", params, divisor=4, seeds=[0] * 7)
    with pytest.raises(ValueError, match=r"^seed=0:"):
        RouterTrafficTop(net, "polarstar", params, divisor=4, seeds=[0] * 4)
    with pytest.raises(ValueError, match=r"^router=99:"):
        RouterTrafficTop(net, "polarstar", params, divisor=4, router=99)
    with pytest.raises(ValueError, match=r"^params.payload_bits=0:"):
        NetworkTrafficTop(net, "polarstar", RouterParams(payload_bits=0), divisor=4)
    with pytest.raises(Exception, match=r"^routing="):
        NetworkTrafficTop(net, "zigzag", params, divisor=4)
    with pytest.raises(ValueError, match=r"^pattern='zigzag':"):
        GeneratorModel(7).run(10, 10, "zigzag")
    with pytest.raises(ValueError, match=r"^pattern='zigzag'"):
        host.encode_command("pattern", "zigzag")
