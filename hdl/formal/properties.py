"""Formal harnesses for the router's building blocks (run by hdl/formal/runner.py, tests/test_formal.py).

Each function returns (harness, free inputs). The solver drives the free inputs, reset included,
with any value in every cycle; `Assume` narrows that only where the contract does.

* `pick_harness`: `RoundRobinPick`: grant one-hot, only to a requester, the first requester at or
  after the pointer.
* `arbiter_harness`: `RoundRobinArbiter` used as VA / output arbiters use it (commit every grant):
  one-hot grants to requesters, and a requester that stays asserted is granted within n cycles.
* `router_harness`: a small `Router`: output credit counters conserved (in [0, depth]) and
  packets never interleaved on an output VC (see its docstring for the environment).
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Module, Mux, Signal

from ..arbiter import RoundRobinArbiter, RoundRobinPick, ptr_mask


def _onehot_or_zero(x):
    return (x & (x - 1)) == 0


def pick_harness(n: int = 5):
    m = Module()
    m.submodules.dut = dut = RoundRobinPick(n, index=True)
    req, ptr = Signal(n), Signal(range(n))
    m.d.comb += [dut.requests.eq(req), dut.mask.eq(ptr_mask(ptr, n)), Assume(ptr < n)]
    m.d.comb += [Assert(_onehot_or_zero(dut.grant)), Assert((dut.grant & ~req) == 0),
                 Assert(dut.valid == req.any()), Assert((dut.grant != 0) == req.any())]
    for i in range(n):                       # the grant is the first requester at or after ptr (cyclic)
        with m.If(dut.grant[i]):
            m.d.comb += Assert(dut.index == i)
            for j in range(n):
                between = ((ptr <= j) & (j < i)) if j < i else ((ptr <= j) & (i < ptr))
                if j != i:
                    m.d.comb += Assert(~(req[j] & between))
    return m, [req, ptr]


def arbiter_harness(n: int = 4, commit: bool = True, own_commit: bool = False):
    """commit=False never updates the pointer (a misuse; the fairness property must then fail).
    own_commit: the arbiter's `own_commit` mode (the next mask from the pick, commit_grant unused)."""
    m = Module()
    m.submodules.dut = dut = RoundRobinArbiter(n, own_commit=own_commit)
    req = Signal(n)
    m.d.comb += [dut.requests.eq(req), dut.commit.eq(dut.valid if commit else 0), dut.commit_grant.eq(dut.grant)]
    m.d.comb += [Assert(_onehot_or_zero(dut.grant)), Assert((dut.grant & ~req) == 0),
                 Assert(dut.valid == req.any())]
    for i in range(n):                       # cycles requester i has waited while asserted
        wait = Signal(range(n + 1), name=f"wait{i}")
        with m.If(req[i] & ~dut.grant[i]):
            m.d.sync += wait.eq(wait + 1)
        with m.Else():
            m.d.sync += wait.eq(0)
        m.d.comb += Assert(wait <= n - 1)
    return m, [req]



def packet_sources(m, dut, V: int, B: int, pkt_len: int, state=None, wellformed: bool = False) -> list:
    """Free upstream senders on every input port of router `dut`: each flit's VC below V, sent only
    with an upstream credit (B per VC, returned by `credit_out`), as whole packets of `pkt_len`
    flits (head first, tail last, one packet id, seq counting up) per input VC. Returns the free
    inputs (valid and flit bits per port). `state`: a dict to fill with each sender's registers,
    state[(i, v)] = {"credit", "open", "packet", "seq"}; wellformed: every head's destination
    exists (router < N, endpoint < p: no head is dropped as malformed)."""
    free = []
    for i in range(dut.P):
        valid, flit = Signal(name=f"in_valid{i}"), Signal(dut.layout, name=f"in_flit{i}")
        free += [valid, flit.as_value()]
        m.d.comb += [dut.flit_in[i].valid.eq(valid), dut.flit_in[i].payload.eq(flit)]
        cr_out = dut.credit_out[i]
        for v in range(V):
            up = Signal(range(B + 1), init=B, name=f"up_credit{i}_{v}")
            is_open = Signal(name=f"in_open{i}_{v}")
            pk = Signal(len(flit.packet), name=f"in_pk{i}_{v}")
            seq = Signal(range(pkt_len + 1), name=f"in_seq{i}_{v}")
            send = valid & (flit.vc == v)
            ret = cr_out.valid & (cr_out.payload == v)
            if state is not None:
                state[(i, v)] = {"credit": up, "open": is_open, "packet": pk, "seq": seq}
            m.d.sync += up.eq(up - send + ret)
            with m.If(send):
                m.d.comb += [Assume(up > 0), Assume(flit.head == ~is_open), Assume(flit.seq == seq),
                             Assume(flit.tail == (seq == pkt_len - 1))]
                with m.If(is_open):
                    m.d.comb += Assume(flit.packet == pk)
                m.d.sync += [is_open.eq(~flit.tail), pk.eq(flit.packet), seq.eq(Mux(flit.tail, 0, seq + 1))]
        m.d.comb += Assume(~valid | (flit.vc < V))
        if wellformed:
            m.d.comb += Assume(~valid | ~flit.head | ((flit.dst < dut.num_routers) & (flit.dst_ep < dut.p)))
    return free


def router_harness(vcs: int = 2, depth: int = 2, packet_flits: int = 2, honest_downstream: bool = True,
                   spec: str = "er:q=2"):
    """A small `Router` (router 0 of SPEC with one endpoint, table minimal routing; ER_2: 3 network
    ports + 1 local, `torus:dims=4`: a ring, 2 + 1) between a well-behaved environment and the checks:

    Assumed (the contract's environment): upstream sends on input VC v only with a credit for it
    (it counts the router's credit returns), as whole packets per input VC (head first, tail
    last, the same packet id); downstream returns a credit on output VC w only for a flit it got.
    Asserted: every output credit counter plus the flits outstanding downstream equals depth (so
    it stays in [0, depth]); on every output VC a packet's flits leave head first, tail last, with
    one packet id, never interleaved with another packet.
    Flit contents are otherwise free: destinations, hops and payloads are any value.
    honest_downstream=False drops the credit assumption (then the credit check must fail).
    """
    from contract.flit import flit_layout
    from contract.params import RouterParams
    from topologies import build

    from ..router import Router
    from ..routing_units import TableMinimalUnit

    net = build(spec).with_endpoints(1)
    prm = RouterParams(vcs=vcs, depth=depth, packet_flits=packet_flits, payload_bits=1)
    lay = flit_layout(net.num_routers, 1, prm)
    R = int(net.ports.max())
    m = Module()
    dut = Router(R, 1, prm, lay, lambda lanes: TableMinimalUnit(net, lanes, router=0), net.num_routers,
                 min(vcs, 3), router_id=0)
    m.submodules.dut = dut
    P = dut.P
    free = packet_sources(m, dut, vcs, depth, packet_flits)
    for o in range(P):
        out = dut.flit_out[o]
        fl = out.payload
        if o < R:
            cv, cvc = Signal(name=f"cr_valid{o}"), Signal(range(vcs), name=f"cr_vc{o}")
            free += [cv, cvc]
            m.d.comb += [dut.credit_in[o].valid.eq(cv), dut.credit_in[o].payload.eq(cvc)]
        for w in range(vcs):
            is_open = Signal(name=f"out_open{o}_{w}")
            pk = Signal(len(fl.packet), name=f"out_pk{o}_{w}")
            leave = out.valid & (fl.vc == w)
            with m.If(leave):
                m.d.comb += Assert(fl.head == ~is_open)
                with m.If(is_open):
                    m.d.comb += Assert(fl.packet == pk)
                m.d.sync += [is_open.eq(~fl.tail), pk.eq(fl.packet)]
            if o < R:
                owed = Signal(range(depth + 2), name=f"owed{o}_{w}")
                back = cv & (cvc == w)
                if honest_downstream:
                    m.d.comb += Assume(~back | (owed > 0))
                m.d.sync += owed.eq(owed + leave - back)
                m.d.comb += [Assert(dut.credit_counters[o][w] + owed == depth),
                             Assert(dut.credit_counters[o][w] <= depth)]
    return m, free


__all__ = ["arbiter_harness", "pick_harness", "router_harness"]
