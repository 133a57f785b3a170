"""Each stage component of the router (hdl/router/) alone, against a plain-Python reference of the
same stage (the rules of docs/microarchitecture.md), on random stimulus: one behaviour per test."""
import collections
import dataclasses
import functools
import random

import pytest
from amaranth.hdl import Module, Signal, Value

from contract.flit import flit_layout
from contract.params import RouterParams
from hdl.router import Router, RouterShape
from hdl.router.output_unit import OutputUnit
from hdl.router.switch_allocator import SwitchAllocator
from hdl.router.switch_traversal import SwitchTraversal
from hdl.routing_units import PolarizedTableUnit, PolarStarUnit, TableMinimalUnit
from test_hdl_units import run  # the simulator runner of the unit tests
from topologies import polarstar


@functools.lru_cache(maxsize=None)
def _net(spec):
    return polarstar(*spec)


def _router(params=RouterParams(), spec=(3, "iq", 0), p=1, routing="polarstar", class_step=None):
    """Router 0 of a small PolarStar with p endpoints per router (not elaborated): its `shape`
    and `vcmap` are what its stages are built from. routing: "polarstar" (the arithmetic unit: a
    single next hop, no priorities), "min" (every minimal port) or "polarized" (per-port
    priorities, escapes). class_step: as `Router`'s (None: hop classes)."""
    net = _net(spec)
    R = int(net.ports.max())
    unit = {"polarstar": lambda: PolarStarUnit(net, R + p), "min": lambda: TableMinimalUnit(net, R + p, router=0),
            "polarized": lambda: PolarizedTableUnit(net, R + p, router=0)}[routing]()
    unit._MustUse__silence = True
    layout = flit_layout(net.num_routers, p, params)
    router = Router(R, p, params, layout, lambda lanes: unit, net.num_routers, 3, router_id=0, class_step=class_step)
    router._MustUse__silence = True
    return router


def shape_of(params=RouterParams(), spec=(3, "iq", 0), p=1, routing="polarstar"):
    """The RouterShape of router 0 of a small PolarStar, as the network builds it."""
    return _router(params, spec, p, routing).shape


class Stimulus:
    """Inputs of a component driven from one signal of a wrapping module, so that a testbench sets
    them all with one `ctx.set` a cycle (each `ctx.set` settles the whole design: with a few
    hundred inputs that, not the design, is what a cycle costs). `inputs`: {key: input signal};
    `top` is what to simulate; `set(ctx, {key: value})` drives the given inputs (the others 0)."""

    def __init__(self, dut, inputs):
        self.top = Module()
        self.top.submodules.dut = dut
        self.slots, pos = {}, 0
        for key, sig in inputs.items():
            width = len(Value.cast(sig))
            self.slots[key] = (pos, width)
            pos += width
        self.bits = Signal(max(1, pos), name="stimulus")
        for key, sig in inputs.items():
            lo, width = self.slots[key]
            self.top.d.comb += Value.cast(sig).eq(self.bits[lo:lo + width])

    def set(self, ctx, values):
        word = 0
        for key, value in values.items():
            lo, width = self.slots[key]
            word |= (value & ((1 << width) - 1)) << lo
        ctx.set(self.bits, word)


@pytest.mark.parametrize("latency,flags,thermometer", [(1, 1, False), (3, 3, False), (1, 2, True), (3, 4, True)])
def test_output_unit_credits_flags_and_ownership(latency, flags, thermometer):
    """Credits: -1 per flit sent, +1 per credit back after credit_latency - 1 registers, never
    beyond B; flag j = credits > j in every cycle (also j >= B, with the credits kept as flags
    alone); busy set by a grant, cleared by a tail."""
    R, P, V, B = 2, 3, 2, 3
    dut = OutputUnit(R, P, V, B, latency, flags, thermometer=thermometer)
    rng = random.Random(latency)

    async def tb(ctx):
        credits = [[B] * V for _ in range(R)]
        busy = [[0] * V for _ in range(P)]
        pending = []                     # credits in flight: (cycle applied, o, w)
        for t in range(400):
            sent = [[0] * V for _ in range(R)]
            for o in range(R):
                w = rng.randrange(V)
                owed = sum(1 for _, o2, w2 in pending if (o2, w2) == (o, w)) + B - credits[o][w]
                back = owed > 0 and rng.random() < 0.5 and not any((o2, w2) == (o, w) for _, o2, w2 in pending)
                ctx.set(dut.credit_in[o].valid, int(back))
                ctx.set(dut.credit_in[o].payload, w)
                if back:
                    pending.append((t + latency - 1, o, w))
                for w2 in range(V):
                    sent[o][w2] = int(credits[o][w2] > 0 and rng.random() < 0.3)
                ctx.set(dut.sent[o], sum(b << w2 for w2, b in enumerate(sent[o])))
            taken = [[int(not busy[o][w] and rng.random() < 0.3) for w in range(V)] for o in range(P)]
            freed = [[int(busy[o][w] and rng.random() < 0.3) for w in range(V)] for o in range(P)]
            for o in range(P):
                ctx.set(dut.taken[o], sum(b << w for w, b in enumerate(taken[o])))
                ctx.set(dut.released[o], sum(b << w for w, b in enumerate(freed[o])))
            returned = {(o, w) for c, o, w in pending if c == t}
            for o in range(R):
                assert ctx.get(dut.returned[o]) == sum(1 << w for w in range(V) if (o, w) in returned)
                for w in range(V):
                    assert ctx.get(dut.occupancy[o][w]) == B - credits[o][w]
                    assert ctx.get(dut.credit_gt[o][w]) == sum(1 << j for j in range(flags) if credits[o][w] > j)
            for o in range(P):
                assert ctx.get(dut.busy[o]) == sum(b << w for w, b in enumerate(busy[o]))
            await ctx.tick()
            for o in range(R):
                for w in range(V):
                    credits[o][w] += ((o, w) in returned) - sent[o][w]
                    assert 0 <= credits[o][w] <= B
            pending = [x for x in pending if x[0] != t]
            for o in range(P):
                for w in range(V):
                    busy[o][w] = 1 if taken[o][w] else (0 if freed[o][w] else busy[o][w])

    run(dut, tb)


def _ref_round_robin(requests, ptr, n):
    for k in range(n):
        i = (ptr + k) % n
        if requests >> i & 1:
            return i
    return None


def test_switch_allocator_one_stage_matches_separable_reference():
    """One iteration, one stage: per input port the first eligible VC from its pointer (moved only
    when that VC sends), per output the first requesting input from its pointer (moved on every
    grant); a VC is eligible with a flit, a credit and an output VC."""
    shape = shape_of()
    dut = SwitchAllocator(shape)
    P, V = shape.P, shape.V
    rng = random.Random(5)

    async def tb(ctx):
        in_ptr, out_ptr = [0] * P, [0] * P
        for _ in range(300):
            port = [[1 << rng.randrange(P) for _ in range(V)] for _ in range(P)]
            elig = [[rng.random() < 0.5 for _ in range(V)] for _ in range(P)]
            for i in range(P):
                for v in range(V):
                    ctx.set(dut.ready[i][v], int(elig[i][v]))
                    ctx.set(dut.credit[i][v], 1)
                    ctx.set(dut.alloc_valid[i][v], 1)
                    ctx.set(dut.port[i][v], port[i][v])
                    ctx.set(dut.tail[i][v], 0)
            choice = [_ref_round_robin(sum(int(e) << v for v, e in enumerate(elig[i])), in_ptr[i], V) for i in range(P)]
            sends = [0] * P
            for o in range(P):
                reqs = sum(1 << i for i in range(P) if choice[i] is not None and port[i][choice[i]] == 1 << o)
                g = _ref_round_robin(reqs, out_ptr[o], P)
                assert ctx.get(dut.out_valid[o]) == (g is not None)
                assert ctx.get(dut.out_sel[o]) == (0 if g is None else 1 << g)
                if g is not None:
                    out_ptr[o] = (g + 1) % P
                    sends[g] = 1 << choice[g]
            for i in range(P):
                assert ctx.get(dut.send[i]) == sends[i]
                if sends[i]:
                    in_ptr[i] = (choice[i] + 1) % V
            await ctx.tick()

    run(dut, tb)


def _split(rng, cut):
    """The bit range `rng` cut around the range `cut`: the pieces, `cut` itself one of them."""
    lo, hi = rng
    if cut[1] <= lo or hi <= cut[0]:
        return [rng]
    return [r for r in ((lo, cut[0]), cut, (cut[1], hi)) if r[0] < r[1]]


def test_switch_traversal_takes_the_read_vc_and_counts_a_hop():
    """Output o carries the front fields of the VC input port out_sel[o] reads and that port's
    body, with the output VC that VC holds and one hop more on a network port (no traversal
    stage: in the same cycle)."""
    from hdl.crossbar import body_ranges
    shape = shape_of()
    dut = SwitchTraversal(shape)
    P, V, R = shape.P, shape.V, shape.R
    vc = shape.layout["vc"]
    vc_bits = (vc.offset, vc.offset + vc.width)
    ranges = [r for part in body_ranges(shape.layout, shape.front_fields)
              for r in _split(part, vc_bits)]
    rng = random.Random(2)

    async def tb(ctx):
        for _ in range(100):
            fronts = [[{"head": 1, "tail": rng.randrange(2), "hops": rng.randrange(15)} for _ in range(V)]
                      for _ in range(P)]
            vcs = [[rng.randrange(V) for _ in range(V)] for _ in range(P)]
            read = [rng.randrange(V) for _ in range(P)]
            bodies = [rng.getrandbits(dut.body_bits) for _ in range(P)]
            for i in range(P):
                ctx.set(dut.read[i], 1 << read[i])
                ctx.set(dut.body[i], bodies[i])
                for v in range(V):
                    for k, val in fronts[i][v].items():
                        ctx.set(getattr(dut.front[i][v], k), val)
                    ctx.set(dut.vc[i][v], vcs[i][v])
            src = [rng.randrange(P) for _ in range(P)]
            for o in range(P):
                ctx.set(dut.out_sel[o], 1 << src[o])
                ctx.set(dut.out_valid[o], 1)
            for o in range(P):
                i = src[o]
                want = fronts[i][read[i]]
                out = dut.flit_out[o].payload
                flit = ctx.get(out.as_value())
                got_body, want_body, pos = 0, 0, 0
                for lo, hi in ranges:        # the body's bits but the vc field (the output VC's)
                    keep = 0 if (lo, hi) == vc_bits else (1 << (hi - lo)) - 1
                    got_body |= ((flit >> lo) & keep) << pos
                    want_body |= ((bodies[i] >> pos) & keep) << pos
                    pos += hi - lo
                assert ctx.get(dut.flit_out[o].valid) == 1 and got_body == want_body
                assert ctx.get(out.tail) == want["tail"] and ctx.get(out.vc) == vcs[i][read[i]]
                assert ctx.get(out.hops) == (want["hops"] + 1 if o < R else want["hops"])

    run(dut, tb, clock=False)


def test_shape_is_the_routers():
    shape = shape_of()
    assert isinstance(shape, RouterShape) and shape.P == shape.R + shape.p and shape.V == 4


# ---- input unit -----------------------------------------------------------------------------------

def _pack(layout, fields):
    """The integer of a flit of `layout` with the given field values (missing ones 0)."""
    value = 0
    for name, f in layout:
        value |= (fields.get(name, 0) & ((1 << f.width) - 1)) << f.offset
    return value


def _random_flit(rng, layout, **fixed):
    flit = {name: rng.getrandbits(f.width) if f.width else 0 for name, f in layout}
    flit.update(fixed)
    return flit


def _toy_route(q, R, prio_bits, single_port=False):
    """The test's routing function of a query: (mask, priorities, escape), any function will do;
    with `single_port` (`RoutingUnit.single_port`) a mask has one port or none, as such units'."""
    h = q["dst"] * 5 + q["src"] * 3 + q["hops"] + 7 * q["phase"]
    prio = [(h * (o + 3)) % (1 << prio_bits) for o in range(R)] if prio_bits else []
    mask = (1 << h % (R + 1)) % (1 << R) if single_port else h % (1 << R)
    return mask, prio, (h >> 2) & 1


class InputRef:
    """The input unit of docs/microarchitecture.md as plain Python: a flit sent into the link in
    cycle t is written to its VC's FIFO at the end of cycle t + link_latency - 1 (the model's
    deliver_flits), stored with the routing unit's answer to its header (route computation,
    route_heads); a pop by `send`, else by the drop rule (drop_malformed: the lowest VC whose
    front is a bad head, or a flit without head at a VC holding no output VC, in a cycle the port
    sends nothing), returns the VC's credit; a flit arriving at a full VC is discarded
    (overflow; the model has no such case)."""

    def __init__(self, shape, router_id):
        from hdl.crossbar import body_ranges
        self.shape, self.router_id = shape, router_id
        prm = shape.params
        self.B, self.V, self.flags = prm.depth, shape.V, prm.sa_stages
        self.q = [collections.deque() for _ in range(self.V)]
        self.line = collections.deque([None] * (prm.link_latency - 1))
        self.ranges = body_ranges(shape.layout, shape.front_fields)

    def entry(self, flit, answer):
        s = self.shape
        mask, prio, escape = answer
        stored = dict(flit)
        if s.escapes:
            stored["phase"] = flit["phase"] & ~(flit["head"] & escape) & 1
        bits, body, pos = _pack(s.layout, stored), 0, 0
        for lo, hi in self.ranges:
            body |= ((bits >> lo) & ((1 << (hi - lo)) - 1)) << pos
            pos += hi - lo
        bad = flit["head"] and (flit["dst"] >= s.num_routers or flit["dst_ep"] >= s.p)
        return {"head": flit["head"], "tail": flit["tail"], "hops": flit["hops"], "dst_ep": flit["dst_ep"],
                "vc": flit["vc"], "dst": flit["dst"], "mask": mask, "prio": prio, "eject": int(flit["dst"] == self.router_id),
                "bad": int(bad), "body": body}

    def enter(self, flit):
        """The flit (or None) sent into the link now -> the one at the buffer's input now."""
        self.line.append(flit)
        return self.line.popleft()

    def malformed(self, alloc_valid):
        return [bool(q) and bool(q[0]["bad"] if q[0]["head"] else not alloc_valid >> v & 1)
                for v, q in enumerate(self.q)]

    def outputs(self, arriving, alloc_valid, send_v):
        """(drop, overflow, the VC popped: the one whose credit goes back, or None) of this cycle."""
        mal = self.malformed(alloc_valid)
        drop = send_v is None and any(mal)
        pop_v = send_v if send_v is not None else (mal.index(True) if drop else None)
        overflow = arriving is not None and len(self.q[arriving["vc"]]) == self.B
        return drop, overflow, pop_v

    def step(self, arriving, pop_v):
        overflow = arriving is not None and len(self.q[arriving["vc"]]) == self.B
        if pop_v is not None and self.q[pop_v]:
            self.q[pop_v].popleft()
        if arriving is not None and not overflow:
            self.q[arriving["vc"]].append(arriving)


def _input_unit_config(kind):
    """(shape, p) of the input unit configurations the tests run."""
    if kind == "default":        # registered fronts, link latency 1, one-stage SA, no ST stage
        return shape_of(RouterParams(depth=4), p=3)
    if kind == "lutram_ll3":     # fronts read from LUTRAM, two link registers, three-stage SA (peek), ST stage
        shape = shape_of(RouterParams(depth=4, link_latency=3, sa_stages=3, st_stage=1), p=3, routing="polarized")
        return dataclasses.replace(shape, registered_fronts=False)
    raise ValueError(kind)


def _drive_input_unit(shape, cycles, seed, stimulus):
    """Run an InputUnit for `cycles` against InputRef, asserting every output every cycle.
    stimulus(rng, ref, t) -> (flit dict or None, alloc_valid bits, VC sent or None).
    Returns counts of what happened (coverage of the test's behaviour)."""
    from hdl.router.input_unit import InputUnit
    dut = InputUnit(shape)
    V, R, pb, flags = shape.V, shape.R, shape.prio_bits, shape.params.sa_stages
    router_id = 0
    rng = random.Random(seed)
    ref = InputRef(shape, router_id)
    stats = collections.Counter()

    async def tb(ctx):
        ctx.set(dut.router_id, router_id)
        prev_body = None                     # st_stage: the body read is last cycle's address
        for t in range(cycles):
            flit, alloc_valid, send_v = stimulus(rng, ref, t)
            read_vc = send_v if send_v is not None else rng.randrange(V)
            ctx.set(dut.flit_in.valid, int(flit is not None))
            ctx.set(dut.flit_in.payload.as_value(), _pack(shape.layout, flit) if flit else rng.getrandbits(shape.layout.size))
            ctx.set(dut.alloc_valid, alloc_valid)
            ctx.set(dut.send, 0 if send_v is None else 1 << send_v)
            ctx.set(dut.read_vc, read_vc)
            arriving_flit = ref.enter(flit)
            # the routing unit: answers the query of the flit at the buffer's input now
            q = {k: ctx.get(getattr(dut.query, k)) for k in ("src", "dst", "hops", "inter", "phase")}
            answer = _toy_route(q, R, pb, shape.single_port)
            ctx.set(dut.answer.mask, answer[0])
            if pb:
                for o in range(R):
                    ctx.set(dut.answer.prio[o], answer[1][o])
            if shape.escapes:
                ctx.set(dut.answer.escape, answer[2])
            arriving = None
            if arriving_flit is not None:
                assert q == {k: arriving_flit[k] for k in q}, (t, q)
                arriving = ref.entry(arriving_flit, answer)
            for v in range(V):
                qv = ref.q[v]
                assert ctx.get(dut.count_gt[v]) == sum(1 << j for j in range(flags) if len(qv) > j), (t, v)
                if qv:
                    e, fr = qv[0], dut.front[v]
                    got = {"head": ctx.get(fr.flit.head), "tail": ctx.get(fr.flit.tail),
                           "hops": ctx.get(fr.flit.hops), "mask": ctx.get(fr.mask), "eject": ctx.get(fr.eject),
                           "bad": ctx.get(fr.bad)}
                    want = {k: e[k] for k in got}
                    if shape.p > 1:
                        got["dst_ep"], want["dst_ep"] = ctx.get(fr.flit.dst_ep), e["dst_ep"]
                    if pb:
                        got["prio"], want["prio"] = [ctx.get(fr.prio[o]) for o in range(R)], e["prio"]
                    assert got == want, (t, v, got, want)
                    stats["fronts"] += 1
                if flags == 3 and len(qv) >= 2:
                    assert ctx.get(dut.peek[v]) == qv[1]["tail"], (t, v)
            drop, overflow, pop_v = ref.outputs(arriving, alloc_valid, send_v)
            assert ctx.get(dut.credit_out.valid) == (pop_v is not None), t
            if pop_v is not None:
                assert ctx.get(dut.credit_out.payload) == pop_v, t
            assert ctx.get(dut.drop) == drop, t
            assert ctx.get(dut.overflow) == overflow, t
            body = ref.q[read_vc][0]["body"] if ref.q[read_vc] else None
            want_body = prev_body if shape.params.st_stage else body
            if want_body is not None:
                assert ctx.get(dut.body) == want_body, t
                stats["bodies"] += 1
            prev_body = body
            stats["sends"] += send_v is not None
            stats["drops"] += drop
            stats["overflows"] += overflow
            stats["arrivals"] += arriving is not None
            if drop:
                stats["drop_" + ("bad_dst" if ref.q[pop_v][0]["head"] and ref.q[pop_v][0]["dst"] >= shape.num_routers
                                 else "bad_ep" if ref.q[pop_v][0]["head"] else "headless")] += 1
                stats["drop_above_lowest_vc"] += sum(ref.malformed(alloc_valid)) > 1
            if send_v is not None and any(ref.malformed(alloc_valid)):
                stats["kept_while_sending"] += 1
            await ctx.tick()
            ref.step(arriving, pop_v)

    run(dut, tb)
    return stats


def _credits_left(ref, v):
    """The upstream's credits for VC v: B less the flits buffered and on the link."""
    return ref.B - len(ref.q[v]) - sum(1 for f in ref.line if f is not None and f["vc"] == v)


@pytest.mark.parametrize("kind", ["default", "lutram_ll3"])
def test_input_unit_fifo_answer_and_credits(kind):
    """Well-formed traffic under credit flow control: each VC's flits come out of front[v] in
    order, with the routing unit's answer to their header (mask, priorities, eject = dst is this
    router), count_gt[v] bit j = more than j flits, peek = the flit after the front is a tail, the
    body read at read_vc, and one credit (its VC) per flit popped by `send`; nothing dropped."""
    shape = _input_unit_config(kind)
    V, N, p = shape.V, shape.num_routers, shape.p

    def stimulus(rng, ref, t):
        flit = None
        vcs = [v for v in range(V) if _credits_left(ref, v) > 0]
        if vcs and rng.random() < 0.7:
            dst = rng.choice([0, rng.randrange(N)])
            flit = _random_flit(rng, shape.layout, vc=rng.choice(vcs), dst=dst, dst_ep=rng.randrange(p))
        full = [v for v in range(V) if ref.q[v]]
        send_v = rng.choice(full) if full and rng.random() < 0.55 else None
        return flit, (1 << V) - 1, send_v       # every VC holds an output VC: no flit is malformed

    stats = _drive_input_unit(shape, 300, 11, stimulus)
    assert stats["drops"] == 0 and stats["overflows"] == 0
    assert stats["sends"] > 100 and stats["fronts"] > 300 and stats["bodies"] > 100


@pytest.mark.parametrize("kind", ["default", "lutram_ll3"])
def test_input_unit_drops_malformed_flits(kind):
    """Malformed fronts (a head with dst >= N or dst_ep >= p; a flit with head = 0 at a VC that
    holds no output VC) are popped one per cycle, the lowest such VC first, only in a cycle in
    which the port sends nothing, with `drop` set and the VC's credit returned; while the port
    sends they wait (docs/microarchitecture.md "Malformed flits", the model's drop_malformed)."""
    shape = _input_unit_config(kind)
    V, N, p = shape.V, shape.num_routers, shape.p
    dst_bits, ep_bits = shape.layout["dst"].width, shape.layout["dst_ep"].width
    assert (1 << dst_bits) > N and (1 << ep_bits) > p       # both kinds of bad head exist

    def stimulus(rng, ref, t):
        flit = None
        vcs = [v for v in range(V) if _credits_left(ref, v) > 0]
        if vcs and rng.random() < 0.6:
            kind = rng.choice(["good", "good", "bad_dst", "bad_ep", "headless"])
            fixed = {"vc": rng.choice(vcs), "dst": rng.randrange(N), "dst_ep": rng.randrange(p), "head": 1}
            if kind == "bad_dst":
                fixed["dst"] = rng.randrange(N, 1 << dst_bits)
            elif kind == "bad_ep":
                fixed["dst_ep"] = rng.randrange(p, 1 << ep_bits)
            elif kind == "headless":
                fixed["head"] = 0
            flit = _random_flit(rng, shape.layout, **fixed)
        alloc_valid = rng.getrandbits(V)
        mal = ref.malformed(alloc_valid)
        # the switch allocator sends only from a VC that holds an output VC; never a bad head
        ok = [v for v in range(V) if ref.q[v] and alloc_valid >> v & 1 and not mal[v]]
        send_v = rng.choice(ok) if ok and rng.random() < 0.5 else None
        return flit, alloc_valid, send_v

    stats = _drive_input_unit(shape, 300, 12, stimulus)
    assert stats["overflows"] == 0
    for k in ("drop_bad_dst", "drop_bad_ep", "drop_headless", "drop_above_lowest_vc", "kept_while_sending"):
        assert stats[k] >= 3, (k, stats)


@pytest.mark.parametrize("kind", ["default", "lutram_ll3"])
def test_input_unit_overflow_discards_the_flit(kind):
    """A flit that reaches a full VC (an upstream that broke the credit contract) sets `overflow`
    in the cycle it arrives, also when that VC pops in the same cycle, and is discarded: the
    FIFO keeps the flits it held, in order."""
    shape = _input_unit_config(kind)
    V, N, p = shape.V, shape.num_routers, shape.p

    def stimulus(rng, ref, t):
        flit = None
        if rng.random() < 0.8:               # no credit check: most VCs fill up
            flit = _random_flit(rng, shape.layout, vc=rng.randrange(V), dst=rng.randrange(N), dst_ep=rng.randrange(p))
        full = [v for v in range(V) if ref.q[v]]
        send_v = rng.choice(full) if full and rng.random() < 0.4 else None
        return flit, (1 << V) - 1, send_v

    stats = _drive_input_unit(shape, 200, 13, stimulus)
    assert stats["overflows"] >= 20 and stats["drops"] == 0


# ---- VC allocator ---------------------------------------------------------------------------------

class VARef:
    """VC allocation as plain Python, from docs/microarchitecture.md ("Route computation + VC
    allocation") and the model's stage functions: each input VC's request as sim/engine.py
    `route_heads` makes it (an ejecting head: the lowest free VC of local port R + dst_ep; else
    `choose_vc`: the free output VC of the hop's class on a port of its route mask with the least
    occupancy + the port's priority, ties to the lowest port, then VC; with va_choice_stage = 1
    from the output state at the start of the previous cycle, nothing free after reset), the
    requests the arbiters see as `va_requests` passes them (va_stages = 2: last cycle's, unless
    their input VC has since been granted or their output VC taken; va_choice_stage = 1: a
    request for an output VC taken meanwhile dropped), and per output VC the round-robin choice of
    `central_va`/`apply_va` over input VC index iv = i·V + v, pointer iv + 1 (mod P·V) after each
    grant."""

    def __init__(self, shape, vcmap, up=0):
        self.shape, self.vcmap, self.up = shape, vcmap, up
        P, V = shape.P, shape.V
        self.ptr = {(o, w): 0 for o in range(P) for w in range(V)}
        self.pend = {}            # va_stages = 2: iv -> (o, w), the requests of last cycle
        self.prev = None          # va_choice_stage = 1: (busy, occupancy) at the start of last cycle
        self.stale_dropped = 0    # requests dropped because their output VC was taken meanwhile

    def hop_class(self, iv, o):
        """The class of input VC iv's hop through o (with `up` steps: up[i] & up[o])."""
        if not self.vcmap.dynamic:
            return self.vcmap.next_class(iv, o)
        return self.vcmap.next_class(iv, o, self.up >> (iv // self.shape.V) & self.up >> o & 1)

    def choose(self, iv, head, busy, occupancy):
        """route_heads/choose_vc: the (o, w) input VC iv asks for, or None."""
        s, R, V = self.shape, self.shape.R, self.shape.V
        if head["eject"]:
            o = R + head["dst_ep"]
            free = [w for w in range(V) if not busy[o][w]]
            return (o, free[0]) if free else None
        if s.params.va_choice_stage:
            if self.prev is None:
                return None
            busy, occupancy = self.prev
        best = None
        for o in range(R):
            if not head["route"] >> o & 1:
                continue
            c = self.hop_class(iv, o)
            for w in range(V):
                if s.vc_class[w] != c or busy[o][w]:
                    continue
                key = occupancy[o][w] + (head["prio"][o] if s.prio_bits else 0)
                if best is None or key < best[0]:
                    best = (key, o, w)
        return best[1:] if best else None

    def step(self, heads, busy, occupancy):
        """heads[iv]: the head requesting at iv (or None) -> {iv: (o, w)}, this cycle's grants."""
        prm, NV = self.shape.params, self.shape.P * self.shape.V
        reqs = {}
        for iv, head in enumerate(heads):
            if head is not None:
                ow = self.choose(iv, head, busy, occupancy)
                if ow is not None:
                    reqs[iv] = ow
        arb = self.pend if prm.va_stages == 2 else reqs
        if prm.va_stages == 2 or prm.va_choice_stage:
            kept = {iv: (o, w) for iv, (o, w) in arb.items() if not busy[o][w]}
            self.stale_dropped += len(arb) - len(kept)
            arb = kept
        grants = {}
        for ow in sorted(set(arb.values())):
            ivs = [iv for iv, x in arb.items() if x == ow]
            win = min(ivs, key=lambda iv: (iv - self.ptr[ow]) % NV)
            self.ptr[ow] = (win + 1) % NV
            grants[win] = ow
        if prm.va_stages == 2:    # the request register drops a request granted in its cycle
            self.pend = {iv: ow for iv, ow in reqs.items() if iv not in grants}
        self.prev = (busy, occupancy)
        return grants, (reqs, arb)


class SepVARef(VARef):
    """The separable VC allocator (va_separable = 1) as plain Python, from docs/microarchitecture.md
    ("Separable VC allocation") and sim/engine.py `_separable_va`/`_apply_separable`: the choice
    takes the first busy output VC (lowest port, then VC) when none is free, and an ejecting head
    of input VC (i, v) local VC (i + v) mod V; per input port a round-robin launch over its VCs with a
    request (as `va_requests` passes it: unmasked by `busy`), none in the allocator, and no other
    VC of the port in it for the same output VC; the launched request waits at its output VC
    from two cycles on, where a round robin over input ports grants it while the output VC is
    free; the input VC takes the output VC two cycles after that grant."""
    IDLE, L1, WAIT, G1, G2 = range(5)

    def __init__(self, shape, vcmap, up=0):
        super().__init__(shape, vcmap, up)
        self.st = [self.IDLE] * (shape.P * shape.V)
        self.tgt = [None] * (shape.P * shape.V)
        self.launch_ptr = [0] * shape.P

    def choose(self, iv, head, busy, occupancy):
        s, R, V = self.shape, self.shape.R, self.shape.V
        if head["eject"]:
            return (R + head["dst_ep"], (iv // V + iv % V) % V)
        if s.params.va_choice_stage:
            if self.prev is None:
                return None
            busy, occupancy = self.prev
        keys = [((1, 0) if busy[o][w] else (0, occupancy[o][w] + (head["prio"][o] if s.prio_bits else 0)), o, w)
                for o in range(R) if head["route"] >> o & 1
                for w in range(V) if s.vc_class[w] == self.hop_class(iv, o)]
        return min(keys)[1:] if keys else None

    def step(self, heads, busy, occupancy):
        P, V, prm = self.shape.P, self.shape.V, self.shape.params
        reqs = {iv: ow for iv, head in enumerate(heads) if head is not None
                for ow in [self.choose(iv, head, busy, occupancy)] if ow is not None}
        arb = self.pend if prm.va_stages == 2 else reqs
        granted = []
        for ow in sorted({self.tgt[iv] for iv in range(P * V) if self.st[iv] == self.WAIT}):
            if busy[ow[0]][ow[1]]:
                continue
            ivs = [iv for iv in range(P * V) if self.st[iv] == self.WAIT and self.tgt[iv] == ow]
            win = min(ivs, key=lambda iv: (iv // V - self.ptr[ow]) % P)
            self.ptr[ow] = (win // V + 1) % P
            granted.append(win)
        won = {iv: self.tgt[iv] for iv in range(P * V) if self.st[iv] == self.G2}
        launched = []
        for i in range(P):
            ok = [v for v in range(V) if i * V + v in arb and self.st[i * V + v] == self.IDLE
                  and not any(self.st[i * V + u] != self.IDLE and self.tgt[i * V + u] == arb[i * V + v]
                              for u in range(V) if u != v)]
            if ok:
                v = min(ok, key=lambda v: (v - self.launch_ptr[i]) % V)
                self.launch_ptr[i] = (v + 1) % V
                launched.append(i * V + v)
        for iv in range(P * V):
            self.st[iv] = {self.G2: self.IDLE, self.G1: self.G2, self.L1: self.WAIT}.get(self.st[iv], self.st[iv])
        for iv in granted:
            self.st[iv] = self.G1
        for iv in launched:
            self.st[iv], self.tgt[iv] = self.L1, arb[iv]
        if prm.va_stages == 2:    # the request register drops a request granted in its cycle
            self.pend = {iv: ow for iv, ow in reqs.items() if iv not in won}
        self.prev = (busy, occupancy)
        return won, (reqs, arb)


def _va_config(kind):
    """(params, routing, p) of the VC allocator configurations the tests run (p = 2 only where
    needed, and 3 VCs, one per class, for the registered allocators: with six ports or four VCs
    they take several times longer to simulate)."""
    return {
        "central": (RouterParams(depth=4), "min", 2),
        "central_single": (RouterParams(depth=4), "polarstar", 2),
        "central_prio": (RouterParams(depth=4), "polarized", 1),
        "two_stage": (RouterParams(depth=4, vcs=3, va_stages=2), "polarized", 1),
        "choice_stage": (RouterParams(depth=4, vcs=3, va_choice_stage=1), "min", 1),
        "separable": (RouterParams(depth=4, va_separable=1), "polarized", 1),
        "separable_fpga": (RouterParams(depth=4, vcs=3, va_separable=1, va_stages=2, va_choice_stage=1),
                           "polarstar", 1),
        # turn classes from the `up` input (the shared module); C = 3 classes over 3 VCs
        "central_up": (RouterParams(depth=4, vcs=3), "min", 1),
        "central_up_prio": (RouterParams(depth=4, vcs=3), "polarized", 1),
        "separable_up": (RouterParams(depth=4, vcs=3, va_separable=1, va_stages=2, va_choice_stage=1), "min", 1),
    }[kind]


class _VAHeads:
    """Random heads for `_drive_vc_allocator`: per input VC that holds no output VC, a new head
    with probability 0.6 (separable: a head stays in `waiting` until its VC is granted, as in a
    router), and random values on the ports of VCs without one."""

    def __init__(self, shape, rng, separable):
        self.shape, self.rng, self.sep = shape, rng, separable
        pb = shape.prio_bits
        self.prio_values = [0, 1, 2, (1 << pb) - 1] if pb else [0]
        self.waiting = [None] * (shape.P * shape.V)

    def _route(self):
        """A head's route: any ports, or with a single-port unit one port (as its answers are)"""
        R, rng = self.shape.R, self.rng
        return 1 << rng.randrange(R) if self.shape.single_port else rng.getrandbits(R)

    def draw(self, holds):
        """-> (heads: per input VC a head or None, the VC ports' values keyed as `Stimulus`'s)."""
        shape, rng = self.shape, self.rng
        V, R, p, pb = shape.V, shape.R, shape.p, shape.prio_bits
        heads, inp = [], {}
        for iv in range(shape.P * V):
            i, v = divmod(iv, V)
            head = self.waiting[iv] if self.sep else None
            if holds[iv] is None and head is None and rng.random() < 0.6:
                head = {"route": self._route(), "eject": int(rng.random() < 0.15),
                        "dst_ep": rng.randrange(p), "prio": [rng.choice(self.prio_values) for _ in range(R)]}
            h = head or {"route": self._route(), "eject": rng.getrandbits(1), "dst_ep": rng.randrange(p),
                         "prio": [rng.choice(self.prio_values) for _ in range(R)]}
            inp["request", i, v] = int(head is not None)
            inp["route", i, v], inp["eject", i, v], inp["dst_ep", i, v] = h["route"], h["eject"], h["dst_ep"]
            if pb:
                inp["prio", i, v] = sum(x << (pb * o) for o, x in enumerate(h["prio"]))
            heads.append(head)
            self.waiting[iv] = head
        return heads, inp


def _va_grants(ctx, dut, t, holds, asked):
    """This cycle's grants of the VC allocator `dut`, {input VC: (o, w)}, checked: one-hot per
    input VC, each output VC to one input VC, `grant_w` its VC, none to a VC that holds one, and
    (`asked` = (may, busy), not the separable VA, whose requests were checked at launch) only what
    the VC asked for and only a free output VC."""
    P, V = len(dut.grant), len(dut.grant[0])
    got = {}
    for iv in range(P * V):
        i, v = divmod(iv, V)
        g = ctx.get(dut.grant[i][v])
        assert g & (g - 1) == 0, (t, iv, bin(g))                        # one-hot
        if not g:
            continue
        ow = divmod(g.bit_length() - 1, V)
        assert ow not in got.values(), (t, ow)                          # one holder
        assert ctx.get(dut.grant_w[i][v]) == ow[1], (t, iv)
        assert holds[iv] is None, (t, iv)
        if asked is not None:
            may, busy = asked
            assert may.get(iv) == ow, (t, iv, ow, may.get(iv))         # only what it asked for
            assert not busy[ow[0]][ow[1]], (t, ow)                      # only a free one
        got[iv] = ow
    return got


def _drive_vc_allocator(kind, cycles, seed, ref_cls=VARef, check_ref=True):
    """Run a VCAllocator in a closed loop (a grant makes its output VC busy and its input VC
    allocated from the next cycle; a held output VC is released at random, as by a tail) on
    random heads, routes, priorities and occupancies; assert, every cycle, the safety properties
    (grant one-hot per input VC, each output VC to at most one input VC, only one that asked for
    it, only a free one; `taken` and `grant_w` agree with the grants) and, if check_ref, that the
    grants are the reference's. Returns the reference and counts of what happened."""
    from hdl.router.vc_allocator import VCAllocator
    from hdl.router.classes import UP_INPUT
    params, routing, p = _va_config(kind)
    router = _router(params, p=p, routing=routing, class_step=UP_INPUT if kind.endswith(("_up", "_up_prio")) else None)
    shape, vcmap = router.shape, router.vcmap
    dut = VCAllocator(shape, vcmap)
    keys = {}
    for i in range(shape.P):
        for v in range(shape.V):
            for name in ("request", "route", "eject", "dst_ep") + (("prio",) if shape.prio_bits else ()):
                keys[name, i, v] = getattr(dut, name)[i][v]
    keys.update({("busy", o): dut.busy[o] for o in range(shape.P)})
    keys.update({("occupancy", o, w): dut.occupancy[o][w] for o in range(shape.R) for w in range(shape.V)})
    if vcmap.dynamic:
        keys["up"] = dut.up
    stim = Stimulus(dut, keys)
    P, R, V, B = shape.P, shape.R, shape.V, shape.params.depth
    NV = P * V
    rng = random.Random(seed)
    up = rng.choice([u for u in range(1 << R) if 0 < bin(u).count("1") < R]) if vcmap.dynamic else 0
    ref = ref_cls(shape, vcmap, up)
    stats = collections.Counter()
    sep = params.va_separable
    heads_of = _VAHeads(shape, rng, sep)

    async def tb(ctx):
        owner = [[None] * V for _ in range(P)]      # output VC -> the input VC holding it ("taken": VA under way)
        holds = [None] * NV                         # input VC -> the output VC it holds
        # who may be granted now: an input VC that asked for it in the cycle its request reaches
        # the arbiters (this one; the last one with va_stages = 2; four more with the separable VA)
        asked = collections.deque([{}] * (params.va_stages == 2))
        taken_at = collections.deque([set()] * 2)   # separable: the output VCs taken 2 cycles ago
        for t in range(cycles):
            busy = [[owner[o][w] is not None for w in range(V)] for o in range(P)]
            occupancy = [[rng.choice([0, 0, 1, 2, B]) for w in range(V)] for o in range(R)]
            heads, inp = heads_of.draw(holds)
            for o in range(P):
                inp["busy", o] = sum(int(b) << w for w, b in enumerate(busy[o]))
            for o in range(R):
                for w in range(V):
                    inp["occupancy", o, w] = occupancy[o][w]
            if vcmap.dynamic:
                inp["up"] = up           # a router's: the same in every cycle
            stim.set(ctx, inp)
            want, (reqs, arb) = ref.step(heads, busy, occupancy)
            asked.append(dict(reqs))
            may = asked.popleft()
            got = _va_grants(ctx, dut, t, holds, None if sep else (may, busy))
            taken = {(o, w) for o in range(P) for w in range(V) if ctx.get(dut.taken[o]) >> w & 1}
            if not sep:
                assert taken == set(got.values()), (t, taken, got)
            else:        # taken (free, at the output stage), then granted to its input VC 2 cycles on
                assert not any(busy[o][w] for o, w in taken), (t, taken)
                taken_at.append(taken)
                assert set(got.values()) == taken_at.popleft(), t
            if check_ref:
                assert got == want, (t, got, want)
            stats["grants"] += len(got)
            values = list(arb.values())
            stats["contended"] += sum(1 for ow in set(values) if values.count(ow) > 1)
            stats["ejections"] += sum(1 for o, _ in got.values() if o >= R)
            await ctx.tick()
            for o, w in (taken if sep else ()):
                owner[o][w] = "taken"
            for iv, (o, w) in got.items():
                owner[o][w], holds[iv], heads_of.waiting[iv] = iv, (o, w), None
            for o in range(P):
                for w in range(V):
                    if owner[o][w] not in (None, "taken") and rng.random() < 0.25:
                        holds[owner[o][w]], owner[o][w] = None, None

    run(stim.top, tb)
    stats["stale_dropped"] = ref.stale_dropped
    return ref, stats


@pytest.mark.parametrize("kind", ["central", "central_single", "central_prio"])
def test_vc_allocator_central_matches_reference(kind):
    """va_stages = 1, va_choice_stage = 0: every cycle the grants are exactly the reference's
    (each request by route_heads/choose_vc's rule: over every port of the route, or the one port
    of a single-port unit's, with priorities where the unit has them;
    ejecting heads the lowest free local VC; per output VC the round-robin order of central_va),
    one-hot per input VC, at most one per output VC, only to a requester of a free output VC."""
    _, stats = _drive_vc_allocator(kind, 100, 21)
    assert stats["grants"] > 100 and stats["contended"] > 20 and stats["ejections"] > 5, stats


def test_vc_allocator_two_stage_grants_a_cycle_later():
    """va_stages = 2: a request is granted in the cycle after its choice, if its input VC was not
    granted in the cycle it was made and its output VC is still free then (a stale request for
    an output VC granted meanwhile is dropped: no grant, the arbiter's pointer kept); grants
    equal the reference's every cycle (docs "Two-stage VA", the model's va_requests)."""
    ref, stats = _drive_vc_allocator("two_stage", 100, 22)
    assert stats["grants"] > 60 and stats["stale_dropped"] > 10 and stats["contended"] > 10, stats


def test_vc_allocator_registered_choice_reads_last_cycle():
    """va_choice_stage = 1: a network port's choice reads the output VCs' state (free, occupancy)
    at the start of the previous cycle (nothing free in the first cycle), an ejection the
    current one; a request for an output VC taken since is dropped at the arbiter; grants equal
    the reference's every cycle (docs "Registered VC choice", route_heads' ch_owner/ch_cred)."""
    ref, stats = _drive_vc_allocator("choice_stage", 100, 23)
    assert stats["grants"] > 60 and stats["stale_dropped"] > 10 and stats["contended"] > 10, stats


@pytest.mark.parametrize("kind", ["separable", "separable_fpga"])
def test_vc_allocator_separable_matches_reference(kind):
    """va_separable = 1 (alone, and with the FPGA target's registered requests and choice): every
    cycle the grants are exactly SepVARef's, one-hot per input VC, at most one per output VC;
    every output VC `taken` only while free and granted two cycles later to the input VC whose
    request waited at it (docs "Separable VC allocation")."""
    _, stats = _drive_vc_allocator(kind, 120, 24, ref_cls=SepVARef)
    assert stats["grants"] > 40 and stats["contended"] > 10 and stats["ejections"] > 5, stats


@pytest.mark.parametrize("kind,ref_cls", [("central_up", VARef), ("central_up_prio", VARef),
                                          ("separable_up", SepVARef)])
def test_vc_allocator_with_up_steps_matches_reference(kind, ref_cls):
    """Turn classes in the shared module (class steps from the `up` input, one value per router,
    here a random one with ports both ways): every cycle the grants are exactly the reference's,
    whose hop through o from network input i takes the class of step up[i] & up[o]."""
    ref, stats = _drive_vc_allocator(kind, 120, 25, ref_cls=ref_cls)
    assert stats["grants"] > 40 and stats["contended"] > 5, stats
    R = ref.shape.R
    steps = {ref.up >> i & ref.up >> o & 1 for i in range(R) for o in range(R)}
    assert steps == {0, 1} and ref.vcmap.dynamic
