"""Each stage component of the router (hdl/router/) alone, against a plain-Python reference of the
same stage (the rules of docs/microarchitecture.md), on random stimulus: one behaviour per test."""
import random

import pytest

from contract.flit import flit_layout
from contract.params import RouterParams
from hdl.router import Router, RouterShape
from hdl.router.output_unit import OutputUnit
from hdl.router.switch_allocator import SwitchAllocator
from hdl.router.switch_traversal import SwitchTraversal
from hdl.routing_units import PolarStarUnit
from test_hdl_units import run  # the simulator runner of the unit tests
from topologies import polarstar


def shape_of(params=RouterParams(), spec=(3, "iq", 0)):
    """The RouterShape of router 0 of a small PolarStar, as the network builds it."""
    net = polarstar(*spec)
    R, p = int(net.ports.max()), 1
    unit = PolarStarUnit(net, R + p)
    unit._MustUse__silence = True
    layout = flit_layout(net.num_routers, p, params)
    router = Router(R, p, params, layout, lambda lanes: unit, net.num_routers, 3, router_id=0)
    router._MustUse__silence = True
    return router.shape


@pytest.mark.parametrize("latency,flags", [(1, 1), (3, 3)])
def test_output_unit_credits_flags_and_ownership(latency, flags):
    """Credits: -1 per flit sent, +1 per credit back after credit_latency - 1 registers, never
    beyond B; flag j = credits > j in every cycle; busy set by a grant, cleared by a tail."""
    R, P, V, B = 2, 3, 2, 3
    dut = OutputUnit(R, P, V, B, latency, flags)
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
