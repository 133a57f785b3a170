"""The cycle-accurate network engine (docs/microarchitecture.md), compiled with Numba.

One `@nb.njit` function per stage of the router, over named structures (`typing.NamedTuple`s
of NumPy arrays, every array over all routers, router first), so no two arrays can be swapped
by position:

* `Config`: static scalars (routing mode, R, P, V, B, L, latencies, the `RouterParams` options);
* `Tables`: topology and routing tables (neighbours, distances, next hops, VC classes, endpoints);
* `Routers`: the per-router state by unit: `InputUnits` (VC buffers, the output VC each input VC
  holds), `VCAllocator` (arbiter pointers, request and separable-VA pipeline registers),
  `SwitchAllocator` (pointers, nominations, grants), `OutputUnits` (output-VC owners, credits,
  their registered copy for `va_choice_stage`);
* `World`: the state outside the routers: `Links` (flit and credit delay lines), `Endpoints`
  (credits, source and garbage queues), `Packets`, `Garbage`, `Arrivals` (what becomes due in
  this call), `Observed` (counters, hop histogram, ejection and endpoint-event traces);
* `Scratch`: the temporaries of the router being computed.

`run_cycles(t0, t1, cfg, tables, rt, world, tmp)` (`rt`: the `Routers`, `tmp`: a `Scratch`)
runs, per cycle: `deliver_flits`, `deliver_router_credits` and `deliver_endpoint_credits` (link
arrivals), `join_queues` and `inject` (endpoints), then router by router `load_choice_register`,
`route_heads` (RC and the VC choice of each waiting head: `choose_vc`), `va_requests` and
`central_va` or `_separable_va` (VC allocation), `switch_allocate` (input and output arbiters,
iterations, the pipelined SA; each grant sends through `send_flit`: traversal, credit return,
output unit, ejection), `drop_malformed`, `apply_va` (the VC grants); last the `watchdog`. Every
router stage reads the state at the start of the cycle, as the contract says; the order of the
routers is only the order in which they append to the delay lines and traces. Routing candidates
come from the data `routing_logic` uses (the all-pairs distance table, or its arithmetic
PolarStar next-hop table);
`tests/test_sim.py::test_engine_choice_equals_routing_logic` checks `choose_vc` against
`routing_logic` candidate by candidate.

The stage functions are compiled without Numba's reference counting (`_stage`, see there); the
ones run per router are inlined into `route_routers` (`_per_router`). The engine is one file on
purpose: Numba's cache is invalidated by the file of the cached function only, so a stage
function in another file could change without the cached `run_cycles` noticing.
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np


# routing modes
MIN, NEXTHOP, POLARIZED, VALIANT, UGAL = 0, 1, 2, 3, 4

# status codes returned by run_cycles
OK, DEADLOCK, BAD_EJECT, STALE_NOMINATION = 0, 1, 2, 3

# garbage (malformed) flits an endpoint can be made to send (NetworkSim.add_garbage): a head whose
# destination router is >= N, a head whose destination endpoint index is >= p, a body flit and a
# tail flit that follow no head. In the buffers and delay lines a garbage flit is
# (pkt = garbage id, seq = -1 - kind); every legit flit has seq >= 0.
G_BAD_DST, G_BAD_EP, G_BODY, G_TAIL = 0, 1, 2, 3
GARBAGE_KINDS = ("bad_dst", "bad_ep", "body", "tail")

EV_INJECT, EV_CREDIT = 0, 1        # endpoint event kinds (etrace)

# where an input VC's request is in the separable VC allocator (VCAllocator.sep_st)
SEP_IDLE, SEP_L1, SEP_WAIT, SEP_G1, SEP_G2 = 0, 1, 2, 3, 4

# va_separable: a busy output VC's key in the VC choice, above every free one's (occupancy +
# priority), the same for all: a head asks also when every candidate is busy, for the first one
# (hdl/router/vc_allocator.py, take_busy)
BUSY_KEY = 1 << 20

# InputUnits.rc_dmu: the hop through that port is no Polarized candidate (Δμ is in -2..2)
NOT_POLARIZED = -128

# Numba options of the stage functions: no reference counting (they allocate nothing and return no
# array; NRT's atomic counts on the arrays of every structure passed to a call made the engine
# 4-5 times slower) and no CPython wrapper (only compiled code calls them; run_cycles has one).
# Everything they work on is allocated in Python (new_routers, ..., new_scratch). A function with
# reference counting must not take an array returned by one of these (it would release a
# reference it never got).
_stage = nb.njit(cache=True, _nrt=False, no_cpython_wrapper=True)
_inline = nb.njit(cache=True, inline="always", _nrt=False, no_cpython_wrapper=True)
# The stages route_routers runs for each router, and send_flit and _route_state (per flit, per
# head), are inlined into their one caller: a call passes its structures by value, a few hundred
# words pushed on the stack, and those copies took a quarter of the engine's time (perf, 1,064
# routers). choose_vc stays a call: inlined, the engine measured no faster.
_per_router = _inline


# ---- structures -----------------------------------------------------------------------------------
# Array shapes: n routers, R network ports, P = R + p ports (p local ports: the largest endpoint
# count), V VCs, B flits per VC, E endpoints, C VC classes.

class Config(NamedTuple):
    """Static scalars of a run (contract.params.RouterParams and the network's shape)."""
    mode: int              # routing mode: MIN, NEXTHOP, POLARIZED, VALIANT, UGAL
    R: int                 # network ports per router
    P: int                 # ports per router (network, then local)
    V: int                 # VCs per port
    B: int                 # flits per VC buffer
    L: int                 # flits per packet
    link_latency: int
    credit_latency: int
    watchdog: int          # idle cycles with flits in flight before DEADLOCK
    classes: int           # VC classes of the VC policy (C)
    alloc_iters: int       # switch-allocator iterations
    va_stages: int         # 2: the VA arbiters see last cycle's requests
    sa_stages: int         # 2: nominations, 3: registered grants too
    st_stage: int          # cycles from SA to the link
    va_separable: int      # 1: the separable VC allocator
    va_choice_stage: int   # 1: the VC choice reads last cycle's output state


class Arith(NamedTuple):
    """The arithmetic PolarStar unit of routing_logic.polarstar (PolarStar §9.2) over compact
    tables: router c = (x, a) = (c // m, c % m); D(c, t) and the minimal next hop come from
    ER_q-level tables (n_ER² entries, n_ER = q² + q + 1) and supernode tables (m²), so nothing
    is indexed by a pair of routers (a 79,506-router network: 3.6e6 entries instead of 6.3e9).
    m = 0: not in use (`Tables.dist`, `Tables.nexthop` are the tables). sim.network_sim.arith_unit
    builds it from the Python unit; tests/test_sim_scale.py checks it against that unit's tables."""
    m: int                 # supernode order (0: not in use)
    dp: int                # supernode degree d' (ports 0 .. d'-1 are S ports, then the ER slots)
    inv: int               # 1: the bijection f is an involution (IQ, complete), 0: Paley
    er_rel: np.ndarray     # (nE, nE) int8: 2 same ER vertex, 1 adjacent (not a loop), 0 neither
    er_w: np.ndarray       # (nE, nE) int32: the common neighbour x × y (x where x == y)
    er_port: np.ndarray    # (nE, nE) int16: port of (x, ·) toward ER neighbour y (y = x: a quadric's loop), -1
    quad: np.ndarray       # (nE,) int8: 1 if x is a quadric (has a self-loop)
    f: np.ndarray          # (m,) int32 the bijection f
    f_inv: np.ndarray      # (m,) int32 its inverse
    sd: np.ndarray         # (m, m) int8 supernode distance capped at 3
    sp: np.ndarray         # (m, m) int16 supernode first port of a shortest path (-1 beyond 2)


class Tables(NamedTuple):
    """Topology and routing tables (read only)."""
    nbr_r: np.ndarray      # (n, R) router at the other end of each network port (-1: none)
    nbr_p: np.ndarray      # (n, R) its input port
    cstep: np.ndarray      # (n, P, R) VC-class step from input port to network output (0 at local inputs)
    vcls: np.ndarray       # (V,) class of each VC
    crange: np.ndarray     # (C, 2) VC range [w0, w1) of each class
    dist: np.ndarray       # (n, n) hop distances ((1, 1) when `ar` computes them)
    minport: np.ndarray    # (n, n) uint64: bit p when port p of c is one hop closer to t ((1, 1): not built)
    nexthop: np.ndarray    # (n, n) arithmetic PolarStar next-hop port (NEXTHOP without `ar`; else (1, 1))
    pen: np.ndarray        # (5,) Polarized priority by Δμ + 2
    ep_first: np.ndarray   # (n + 1,) first endpoint id of each router
    ep_router: np.ndarray  # (E,) router of each endpoint
    ar: Arith              # the arithmetic PolarStar unit (ar.m = 0: not in use, dist/nexthop are tables)


class InputUnits(NamedTuple):
    """The VC buffers (a FIFO ring per input VC) and the output VC each input VC holds."""
    f_pkt: np.ndarray         # (n, P, V, B) packet id (garbage id for garbage)
    f_seq: np.ndarray         # (n, P, V, B) flit index in its packet (-1 - kind for garbage)
    f_head: np.ndarray        # (n, P, V) ring position of the front flit
    f_cnt: np.ndarray         # (n, P, V) flits buffered
    alloc_o: np.ndarray       # (n, P, V) output port held (-1: none)
    alloc_w: np.ndarray       # (n, P, V) output VC held
    rc_pkt: np.ndarray        # (n, P, V) Polarized: the head whose candidates rc_dmu holds (-1: none)
    rc_dmu: np.ndarray        # (n, P, V, R) int8 its Δμ per network port (NOT_POLARIZED: not a candidate);
                              # (n, P, V, 0) unless Polarized
    router_flits: np.ndarray  # (n,) flits buffered in the router
    r_garbage: np.ndarray     # (n,) garbage flits buffered in the router


class VCAllocator(NamedTuple):
    """VC allocator state. pend_o/pend_w[r, iv]: the request input VC iv made last cycle (-1:
    none), arbitrated this cycle with va_stages = 2. va_separable = 1: sep_st[r, i, v] where
    input VC (i, v)'s launched request is (SEP_IDLE: none; SEP_L1: launched last cycle; SEP_WAIT:
    at its output VC's arbiter; SEP_G1, SEP_G2: granted 1 or 2 cycles ago), sep_o/sep_w[r, i, v]
    its output VC (meaningful while sep_st != SEP_IDLE), sep_ptr[r, i] the port's launch pointer
    (va_ptr then points over input ports)."""
    va_ptr: np.ndarray     # (n, P, V) round-robin pointer per output VC
    pend_o: np.ndarray     # (n, P * V); (n, 0) unless va_stages = 2
    pend_w: np.ndarray     # (n, P * V)
    sep_st: np.ndarray     # (n, P, V); (n, 0, V) unless va_separable (sep_o, sep_w, sep_ptr alike)
    sep_o: np.ndarray      # (n, P, V)
    sep_w: np.ndarray      # (n, P, V)
    sep_ptr: np.ndarray    # (n, P)


class SwitchAllocator(NamedTuple):
    """Switch allocator state. nom[r, i]: the VC input port i nominated last cycle (-1: none),
    offered to this cycle's output stage when sa_stages >= 2; gnt[r, i]: with sa_stages = 3, the
    VC of port i that the output stage granted last cycle (-1: none), which sends in this cycle."""
    nom: np.ndarray        # (n, P); (n, 0) with sa_stages = 1
    gnt: np.ndarray        # (n, P); (n, 0) with sa_stages < 3
    in_ptr: np.ndarray     # (n, P) input arbiter pointer (over VCs)
    out_ptr: np.ndarray    # (n, P) output arbiter pointer (over input ports)


class OutputUnits(NamedTuple):
    """Output VC ownership and credits. va_choice_stage = 1: ch_owner/ch_cred[t % 2, r] hold
    router r's owner and credits at the start of cycle t; the VC choice of cycle t reads slot
    (t + 1) % 2, the start of t - 1 (the RTL's registered best free VC per output and class)."""
    owner: np.ndarray      # (n, P, V) input VC (i * V + v) holding each output VC (-1: free)
    credits: np.ndarray    # (n, P, V) credits of each output VC (B on local ports, never used)
    ch_owner: np.ndarray   # (2, n, R, V); (2, n, 0, V) without va_choice_stage
    ch_cred: np.ndarray    # (2, n, R, V); likewise


class Routers(NamedTuple):
    """Per-router state of every router, by unit."""
    inputs: InputUnits
    va: VCAllocator
    sa: SwitchAllocator
    outputs: OutputUnits


class Links(NamedTuple):
    """Delay lines, slot = cycle % ring: the flits (to router a_r, input port a_p, VC a_v) and the
    credits (to router c_r, output port c_p, VC c_v; c_p = -1: to endpoint c_r) due in that cycle."""
    a_cnt: np.ndarray      # (ring,)
    a_r: np.ndarray        # (ring, cap)
    a_p: np.ndarray
    a_v: np.ndarray
    a_pkt: np.ndarray
    a_seq: np.ndarray
    c_cnt: np.ndarray      # (ring,)
    c_r: np.ndarray        # (ring, cap)
    c_p: np.ndarray
    c_v: np.ndarray


class Endpoints(NamedTuple):
    """Endpoint state: credits per VC, the VC of the packet being sent, the source queue (a list
    of packets linked by Packets.pk_next) and the queue of due garbage (linked by Garbage.g_next)."""
    ep_credit: np.ndarray  # (E, V)
    ep_vc: np.ndarray      # (E,)
    q_head: np.ndarray     # (E,) -1: empty
    q_tail: np.ndarray     # (E,)
    q_sent: np.ndarray     # (E,) flits of the front packet sent
    gq_head: np.ndarray    # (E,)
    gq_tail: np.ndarray    # (E,)


class Packets(NamedTuple):
    """Per packet (by id): endpoints, route state (Valiant/UGAL intermediate, phase), progress."""
    pk_src: np.ndarray
    pk_dst: np.ndarray
    pk_hops: np.ndarray
    pk_inter: np.ndarray    # intermediate router (-1: none)
    pk_phase: np.ndarray    # 0: to the intermediate (or escaped Polarized), 1: to the destination
    pk_decided: np.ndarray  # UGAL: decision made at the source
    pk_next: np.ndarray     # source queue link
    pk_eseq: np.ndarray     # next flit expected at the destination
    pk_done: np.ndarray     # cycle the tail arrived (-1: not yet)
    samples: np.ndarray     # (packets, k) UGAL/Valiant intermediate samples


class Garbage(NamedTuple):
    """Per garbage flit (by id): endpoint, kind, queue link, cycle sent, cycle dropped."""
    g_ep: np.ndarray
    g_kind: np.ndarray
    g_next: np.ndarray
    g_sent: np.ndarray
    g_drop: np.ndarray


class Observed(NamedTuple):
    """Counters and traces. counters: [injected flits, ejected flits, idle cycles, last move cycle,
    malformed flits dropped, garbage flits sent by endpoints]; trace rows (cycle, endpoint,
    packet, seq) of ejected flits; etrace rows (kind, cycle, endpoint, vc, id, seq) of endpoint
    events (replay of the endpoints' side, cosim/replay.py): EV_INJECT a flit sent (id =
    packet, or garbage id with seq = -1 - kind), EV_CREDIT a credit counted by the endpoint.
    trace_len stops at the capacity, etrace_len counts past it (the caller sees the overflow)."""
    counters: np.ndarray    # (6,)
    eject_hist: np.ndarray  # (64,) packets by hop count
    trace: np.ndarray       # (capacity, 4)
    trace_len: np.ndarray   # (1,)
    etrace: np.ndarray      # (capacity, 6)
    etrace_len: np.ndarray  # (1,)


class Arrivals(NamedTuple):
    """Packets and garbage that become due in this call's cycles, sorted by cycle."""
    gen_time: np.ndarray
    gen_pk: np.ndarray
    ggen_time: np.ndarray
    ggen_id: np.ndarray


class World(NamedTuple):
    """The state outside the routers."""
    links: Links
    endpoints: Endpoints
    packets: Packets
    garbage: Garbage
    arrivals: Arrivals
    obs: Observed


class VAScratch(NamedTuple):
    """Per-router temporaries of VC allocation (sizes P * V; sep_new (P, V))."""
    req_in: np.ndarray     # this cycle's requests: input VC i * V + v, output port, output VC
    req_o: np.ndarray
    req_w: np.ndarray
    arb_in: np.ndarray     # the requests the arbiters see (va_requests), same layout
    arb_o: np.ndarray
    arb_w: np.ndarray
    best_k: np.ndarray     # per output VC o * V + w: the winning request (-1 between routers)
    sep_new: np.ndarray    # va_separable: per input VC, SEP_L1 launched / SEP_G1 granted this cycle, else 0


class SAScratch(NamedTuple):
    """Per-router temporaries of switch allocation (size P)."""
    in_choice: np.ndarray  # per input port: the VC its input stage picked (-1: none)
    best_in: np.ndarray    # per output port: the input port its arbiter picks (-1 between routers)
    in_done: np.ndarray    # input port sent in this cycle
    out_done: np.ndarray   # output port matched in this cycle
    out_list: np.ndarray   # output ports with a request
    snd_i: np.ndarray      # this iteration's senders: input port, VC
    snd_v: np.ndarray


class Scratch(NamedTuple):
    """The temporaries of the router being computed (new_scratch, for each run_cycles call)."""
    va: VAScratch
    sa: SAScratch


def no_arith() -> Arith:
    """An Arith that is not in use (m = 0): the distances and next hops are Tables' tables."""
    z8, z16, z32 = np.zeros((1, 1), dtype=np.int8), np.zeros((1, 1), dtype=np.int16), np.zeros(1, dtype=np.int32)
    return Arith(m=0, dp=0, inv=0, er_rel=z8, er_w=np.zeros((1, 1), dtype=np.int32), er_port=z16,
                 quad=np.zeros(1, dtype=np.int8), f=z32, f_inv=z32, sd=z8, sp=z16)


def make_config(params, mode: int, R: int, P: int, classes: int) -> Config:
    p = params
    return Config(mode=int(mode), R=int(R), P=int(P), V=p.vcs, B=p.depth, L=p.packet_flits,
                  link_latency=p.link_latency, credit_latency=p.credit_latency, watchdog=p.watchdog,
                  classes=int(classes), alloc_iters=p.alloc_iters, va_stages=p.va_stages, sa_stages=p.sa_stages,
                  st_stage=p.st_stage, va_separable=p.va_separable, va_choice_stage=p.va_choice_stage)


def _filled(shape, value, dtype=np.int64):
    return np.full(shape, value, dtype=dtype)


def _optional_axes(cfg: Config) -> tuple[int, int, int, int, int, int]:
    """The lengths of the state axes only some configurations read, 0 where nothing reads them:
    the Polarized candidates' ports (`rc_dmu`), the registered output state's ports (`ch_*`,
    va_choice_stage), the pending requests' input VCs (`pend_*`, va_stages = 2), the
    separable allocator's ports (`sep_*`), and the switch allocator's nominating ports (`nom`,
    sa_stages >= 2) and granting ports (`gnt`, sa_stages = 3). On the radix-64 router with 21
    endpoints they would be 22, 4, 3, 4, 0.7 and 0.7 kB of its 81 kB."""
    return (cfg.R if cfg.mode == POLARIZED else 0, cfg.R if cfg.va_choice_stage == 1 else 0,
            cfg.P * cfg.V if cfg.va_stages == 2 else 0, cfg.P if cfg.va_separable == 1 else 0,
            cfg.P if cfg.sa_stages >= 2 else 0, cfg.P if cfg.sa_stages == 3 else 0)


def _router_arrays(n: int, cfg: Config) -> dict:
    """Every router state array of `n` routers as (shape, reset value, dtype), by structure: the
    one table `new_routers` allocates and `state_bytes` sums. int32 throughout (every value is a
    port, VC, flit, credit or pointer count), int16 for the flit index, int64 for the two
    per-router counters. State that `cfg` never reads has an axis of length 0 (`_optional_axes`)."""
    i4 = np.int32
    P, V, B = cfg.P, cfg.V, cfg.B
    dmu_ports, choice_ports, pend_vcs, sep_ports, nom_ports, gnt_ports = _optional_axes(cfg)
    return {
        "inputs": (InputUnits, dict(
            f_pkt=((n, P, V, B), 0, i4), f_seq=((n, P, V, B), 0, np.int16), f_head=((n, P, V), 0, i4),
            f_cnt=((n, P, V), 0, i4), alloc_o=((n, P, V), -1, i4), alloc_w=((n, P, V), -1, i4),
            rc_pkt=((n, P, V), -1, i4), rc_dmu=((n, P, V, dmu_ports), NOT_POLARIZED, np.int8),
            router_flits=(n, 0, np.int64), r_garbage=(n, 0, np.int64))),
        "va": (VCAllocator, dict(
            va_ptr=((n, P, V), 0, i4), pend_o=((n, pend_vcs), -1, i4), pend_w=((n, pend_vcs), -1, i4),
            sep_st=((n, sep_ports, V), SEP_IDLE, i4), sep_o=((n, sep_ports, V), -1, i4),
            sep_w=((n, sep_ports, V), -1, i4), sep_ptr=((n, sep_ports), 0, i4))),
        "sa": (SwitchAllocator, dict(
            nom=((n, nom_ports), -1, i4), gnt=((n, gnt_ports), -1, i4), in_ptr=((n, P), 0, i4),
            out_ptr=((n, P), 0, i4))),
        # the registered output state says "taken" (owner 0) before the first cycle, as the RTL's
        # register after reset says nothing is free
        "outputs": (OutputUnits, dict(
            owner=((n, P, V), -1, i4), credits=((n, P, V), B, i4), ch_owner=((2, n, choice_ports, V), 0, i4),
            ch_cred=((2, n, choice_ports, V), 0, i4))),
    }


def new_routers(n: int, cfg: Config) -> Routers:
    """Every router after reset: empty buffers, free output VCs, full credits, pointers at 0
    (`_router_arrays`). The engine's slices of a length-0 axis stay valid, and empty."""
    return Routers(**{part: cls(**{name: _filled(*array) for name, array in arrays.items()})
                      for part, (cls, arrays) in _router_arrays(n, cfg).items()})


def new_links(ring: int, cap: int) -> Links:
    """Empty delay lines of `ring` slots (> the largest latency) of `cap` entries each (int32)."""
    i4 = np.int32
    return Links(a_cnt=_filled(ring, 0), a_r=_filled((ring, cap), 0, i4), a_p=_filled((ring, cap), 0, i4),
                 a_v=_filled((ring, cap), 0, i4), a_pkt=_filled((ring, cap), 0, i4),
                 a_seq=_filled((ring, cap), 0, i4), c_cnt=_filled(ring, 0), c_r=_filled((ring, cap), 0, i4),
                 c_p=_filled((ring, cap), 0, i4), c_v=_filled((ring, cap), 0, i4))


def state_bytes(n: int, cfg: Config) -> int:
    """Bytes of `new_routers(n, cfg)` (computed from `_router_arrays`, not allocated)."""
    return sum(int(np.prod(shape)) * np.dtype(dtype).itemsize
               for _, arrays in _router_arrays(n, cfg).values() for shape, _, dtype in arrays.values())


def new_endpoints(E: int, V: int, B: int) -> Endpoints:
    """Endpoints with full credits and empty queues."""
    return Endpoints(ep_credit=_filled((E, V), B), ep_vc=_filled(E, 0), q_head=_filled(E, -1), q_tail=_filled(E, -1),
                     q_sent=_filled(E, 0), gq_head=_filled(E, -1), gq_tail=_filled(E, -1))


def new_observed(trace: int, endpoint_trace: int) -> Observed:
    """Zero counters; trace and endpoint-event capacities in rows."""
    return Observed(counters=_filled(6, 0), eject_hist=_filled(64, 0), trace=_filled((trace, 4), 0),
                    trace_len=_filled(1, 0), etrace=_filled((endpoint_trace, 6), 0), etrace_len=_filled(1, 0))


def new_scratch(P: int, V: int) -> Scratch:
    """Fresh temporaries for one run_cycles call (-1: nothing chosen), cut from two allocations
    (run(1) per cycle, as sim.external does, would otherwise spend most of its call here)."""
    NV = P * V
    names = ("req_in", "req_o", "req_w", "arb_in", "arb_o", "arb_w", "best_k", "sep_new", "in_choice",
             "best_in", "out_list", "snd_i", "snd_v")
    sizes = (NV,) * 8 + (P,) * 5
    block = np.full(sum(sizes), -1, dtype=np.int64)
    part, k = {}, 0
    for name, size in zip(names, sizes):
        part[name] = block[k:k + size]
        k += size
    part["sep_new"] = part["sep_new"].reshape(P, V)
    done = np.zeros((2, P), dtype=np.bool_)
    vtmp = VAScratch(**{f: part[f] for f in VAScratch._fields})
    stmp = SAScratch(in_done=done[0], out_done=done[1], **{f: part[f] for f in SAScratch._fields if f in part})
    return Scratch(va=vtmp, sa=stmp)


# ---- routing: the candidates of a head and its VC choice ------------------------------------------

@_inline
def _phi(ar, lt, a):
    """Image of supernode vertex a along an ER arc whose tail id < head id iff `lt` (f, or f⁻¹
    against the Paley orientation)."""
    if ar.inv == 1 or lt:
        return np.int64(ar.f[a])
    return np.int64(ar.f_inv[a])


@_stage
def arith_distance(ar, c, t):
    """D(c, t) of the arithmetic PolarStar unit (routing_logic.polarstar.PolarStarArithmetic.
    distance_xa, the walks of length <= 2 in closed form, else 3), for one pair."""
    m = ar.m
    x, a, y, b = c // m, c % m, t // m, t % m
    rel = ar.er_rel[x, y]
    sd = ar.sd
    fa = np.int64(ar.f[a])
    if rel == 2:                                    # one supernode: S, Q; SS, SQ, QS
        if a == b:
            return np.int64(0)
        loop = ar.inv == 1 and ar.quad[x] == 1
        if sd[a, b] == 1 or (loop and fa != a and b == fa):
            return np.int64(1)
        if sd[a, b] == 2 or (loop and (sd[a, ar.f[b]] == 1 or (fa != a and sd[fa, b] == 1))):
            return np.int64(2)
        return np.int64(3)
    w = np.int64(ar.er_w[x, y])
    mid = w != x and w != y
    if rel == 1:                                    # E; ES, SE, QE / EQ
        pa = _phi(ar, x < y, a)
        if b == pa:
            return np.int64(1)
        if sd[pa, b] == 1 or sd[a, _phi(ar, y < x, b)] == 1:
            return np.int64(2)
        if not mid and ar.inv == 1 and fa != a and b == a:
            return np.int64(2)
    if mid and b == _phi(ar, w < y, _phi(ar, x < w, a)):     # EE through w
        return np.int64(2)
    return np.int64(3)


@_stage
def _arith_next_same(ar, x, a, b):
    """Next port toward (x, b) from (x, a), a != b: S, Q, SS, SQ, QS, else the first ER slot
    that is not x's own loop (the D = 3 rule)."""
    sd, sp, dp = ar.sd, ar.sp, ar.dp
    fa = np.int64(ar.f[a])
    qx = ar.quad[x] == 1
    has_q = ar.inv == 1 and qx and fa != a
    p_q = np.int64(ar.er_port[x, x])
    if sd[a, b] == 1:
        return np.int64(sp[a, b])
    if has_q and b == fa:
        return p_q
    if sd[a, b] == 2:
        return np.int64(sp[a, b])
    if ar.inv == 1 and qx and sd[a, ar.f[b]] == 1:
        return np.int64(sp[a, ar.f[b]])
    if has_q and sd[fa, b] == 1:
        return p_q
    return np.int64(dp + 1) if qx and p_q == dp else np.int64(dp)


@_stage
def arith_next_port(ar, c, t):
    """The minimal next-hop port from c toward t (-1 = eject at t) of the arithmetic PolarStar
    unit (routing_logic.polarstar.PolarStarArithmetic.next_port_xa, its cases in its order)."""
    if c == t:
        return np.int64(-1)
    m = ar.m
    x, a, y, b = c // m, c % m, t // m, t % m
    if ar.er_rel[x, y] == 2:
        return _arith_next_same(ar, x, a, b)
    sd = ar.sd
    w = np.int64(ar.er_w[x, y])
    mid = w != x and w != y
    adj = ar.er_rel[x, y] == 1
    p_y = np.int64(ar.er_port[x, y])
    fa = np.int64(ar.f[a])
    if adj:
        pa = _phi(ar, x < y, a)
        pb = _phi(ar, y < x, b)
        if b == pa or sd[pa, b] == 1:               # E, ES
            return p_y
        if sd[a, pb] == 1:                          # SE
            return np.int64(ar.sp[a, pb])
    if mid and b == _phi(ar, w < y, _phi(ar, x < w, a)):     # EE
        return np.int64(ar.er_port[x, w])
    if adj and not mid and ar.inv == 1 and fa != a and b == a:   # QE (w = x), EQ (w = y)
        return np.int64(ar.er_port[x, x]) if w == x else p_y
    if mid:                                         # D = 3: toward w, or Q, or toward y
        return np.int64(ar.er_port[x, w])
    if w == x and ar.inv == 1 and ar.quad[x] == 1 and fa != a:
        return np.int64(ar.er_port[x, x])
    return p_y


@_inline
def _dist(tables, c, t):
    """D(c, t): the arithmetic unit's, or the distance table's."""
    if tables.ar.m > 0:
        return arith_distance(tables.ar, c, t)
    return np.int64(tables.dist[c, t])


@_inline
def _next_port(tables, c, t):
    """The arithmetic PolarStar next-hop port from c toward t: computed, or its table."""
    if tables.ar.m > 0:
        return arith_next_port(tables.ar, c, t)
    return np.int64(tables.nexthop[c, t])


@_inline
def _polarized_ok(r, nbr, src_r, dst_r, tables):
    """(allowed, Δμ) of the hop r -> nbr for (s, t) by the Polarized rule (routing_logic.polarized)."""
    if nbr < 0:
        return False, 0
    a = _dist(tables, r, src_r)
    b = _dist(tables, r, dst_r)
    ds = _dist(tables, nbr, src_r) - a
    dt = _dist(tables, nbr, dst_r) - b
    dmu = ds - dt
    return dmu > 0 or (ds == 1 and dt == 1 and a < b) or (ds == -1 and dt == -1 and a >= b), dmu


@_stage
def polarized_candidates(r, src_r, dst_r, tables, dmus):
    """The Polarized candidates at r for (s, t): dmus[p] = Δμ of the hop through network port p,
    or NOT_POLARIZED; returns how many there are (0: a dead end, the packet escapes to minimal
    routing). A head waiting at r asks every cycle and the answer depends on (r, s, t) only:
    route_heads keeps it per input VC (`InputUnits.rc_dmu`) while the same head waits there."""
    n = 0
    for p in range(dmus.shape[0]):
        ok, dmu = _polarized_ok(r, tables.nbr_r[r, p], src_r, dst_r, tables)
        dmus[p] = dmu if ok else NOT_POLARIZED
        n += ok
    return n


@_inline
def _class_vcs(cin, step, crange, C):
    """VCs [w0, w1) of class min(cin + step, C - 1); crange[c] = the VC range of class c, from the
    VC policy (routing_logic.base: k = V // C per class, the leftovers to the last class or to
    class 0); C = V when there are fewer VCs than classes."""
    c = cin + step
    if c > C - 1:
        c = C - 1
    return crange[c, 0], crange[c, 1]


@_inline
def _best_vc(r, p, vcs, pen, bound, cfg, credits, owner):
    """(key, w): the VC w in range(*vcs) of output p with the least key below `bound`, ties to
    the lowest (-1 if none): key = occupancy + pen for a free VC; for a busy one BUSY_KEY with
    the separable VA, else none."""
    busy_key = BUSY_KEY if cfg.va_separable == 1 else -1
    best_key = bound
    best_w = -1
    for w in range(vcs[0], vcs[1]):
        key = cfg.B - credits[r, p, w] + pen
        if owner[r, p, w] >= 0:
            if busy_key < 0:
                continue
            key = busy_key
        if key < best_key:
            best_key = key
            best_w = w
    return best_key, best_w


@_stage
def choose_vc(r, cin, step, head, cfg, tables, credits, owner):
    """Best free (port, vc) among the routing candidates for a head at router r, or (-1, -1)
    (va_separable: if none is free, the first busy one). head = (source router, destination
    router, intermediate router, phase, Polarized candidates: `polarized_candidates`' dmus, read
    in phase 1).

    Candidate order and selection: minimum of occupancy + priority, ties to the lowest port,
    then the lowest VC. The VCs of output p are those of class min(cin + step[p], C - 1): cin is
    the class of the input VC the head waits in (0 when injected), step[p] the VC policy's
    class step from its input port to p (routing_logic.base: 1 for `hops`, 1 at a
    down-then-up turn for `turns`, 0 at a local input)."""
    src_r, dst_r, inter, phase, dmus = head
    mode, C, crange = cfg.mode, cfg.classes, tables.crange
    nbr_r = tables.nbr_r
    best_p = -1
    best_w = -1
    best_key = 1 << 30
    if mode == NEXTHOP:
        p = _next_port(tables, r, dst_r)
        _, best_w = _best_vc(r, p, _class_vcs(cin, step[p], crange, C), 0, best_key, cfg, credits, owner)
        return (p, best_w) if best_w >= 0 else (-1, -1)
    if mode == POLARIZED and phase == 1:
        for p in range(cfg.R):
            dmu = dmus[p]
            if dmu == NOT_POLARIZED:
                continue
            port_key, port_w = _best_vc(r, p, _class_vcs(cin, step[p], crange, C), tables.pen[dmu + 2], best_key, cfg,
                                        credits, owner)
            if port_w >= 0:
                best_key = port_key
                best_p = p
                best_w = port_w
        return (best_p, best_w) if best_p >= 0 else (-1, -1)
    # MIN / VALIANT / UGAL / escaped Polarized: all minimal ports toward the current target
    tgt = dst_r
    if (mode == VALIANT or mode == UGAL) and phase == 0 and r != inter:
        tgt = inter
    if tables.minport.shape[0] > 1:
        # the shortest-path ports, in port order: the same choice as the distance checks below
        bits = np.uint64(tables.minport[r, tgt])
        for p in range(cfg.R):
            if (bits >> np.uint64(p)) & np.uint64(1) == 0:
                continue
            port_key, port_w = _best_vc(r, p, _class_vcs(cin, step[p], crange, C), 0, best_key, cfg, credits, owner)
            if port_w >= 0:
                best_key = port_key
                best_p = p
                best_w = port_w
        return (best_p, best_w) if best_p >= 0 else (-1, -1)
    d0 = -1
    for p in range(cfg.R):
        nbr = nbr_r[r, p]
        if nbr < 0:
            continue
        # the port's best free VC first: only a port that would win is asked whether it is
        # minimal (the same choice, far fewer distances; the arithmetic unit computes each)
        port_key, port_w = _best_vc(r, p, _class_vcs(cin, step[p], crange, C), 0, best_key, cfg, credits, owner)
        if port_w < 0:
            continue
        if d0 < 0:
            d0 = _dist(tables, r, tgt)
        if _dist(tables, nbr, tgt) + 1 != d0:
            continue
        best_key = port_key
        best_p = p
        best_w = port_w
    return (best_p, best_w) if best_p >= 0 else (-1, -1)


@_stage
def _port_queue(r, p, V, B, credits):
    q = 0
    for w in range(V):
        q += B - credits[r, p, w]
    return q


@_stage
def _best_min_queue(r, tgt, cfg, tables, credits):
    best = 1 << 30
    if tables.minport.shape[0] > 1:
        bits = np.uint64(tables.minport[r, tgt])
        for p in range(cfg.R):
            if (bits >> np.uint64(p)) & np.uint64(1) != 0:
                q = _port_queue(r, p, cfg.V, cfg.B, credits)
                if q < best:
                    best = q
        return best
    d0 = _dist(tables, r, tgt)
    for p in range(cfg.R):
        nbr = tables.nbr_r[r, p]
        if nbr >= 0 and _dist(tables, nbr, tgt) + 1 == d0:
            q = _port_queue(r, p, cfg.V, cfg.B, credits)
            if q < best:
                best = q
    return best


@_stage
def _ugal_decide(r, dst, pk, cfg, tables, packets, credits):
    """UGAL-L at source router r for destination router dst (routing_logic.valiant.UGAL.inject
    with the same samples): sets the packet's intermediate router and phase."""
    if r == dst:
        packets.pk_inter[pk] = -1
        packets.pk_phase[pk] = 1
        return
    samples = packets.samples
    h_min = _dist(tables, r, dst)
    q_min = _best_min_queue(r, dst, cfg, tables, credits)
    cost_min = h_min * q_min
    best_cost = np.int64(-1)
    best_r = -1
    for k in range(samples.shape[1]):
        i = samples[pk, k]
        if i == r:
            h = h_min
            qv = q_min
        else:
            h = _dist(tables, r, i) + _dist(tables, i, dst)
            qv = _best_min_queue(r, i, cfg, tables, credits)
        if best_r < 0 or h * qv < best_cost:
            best_cost = h * qv
            best_r = i
    if cost_min <= best_cost:
        packets.pk_inter[pk] = -1
        packets.pk_phase[pk] = 1
    else:
        packets.pk_inter[pk] = best_r
        packets.pk_phase[pk] = 0


# ---- delay lines ----------------------------------------------------------------------------------

@_inline
def _push_flit(links, slot, r, p, v, pk, seq):
    """A flit into the delay line, due at router r's input port p, VC v, in the cycle of `slot`."""
    k = links.a_cnt[slot]
    links.a_r[slot, k] = r
    links.a_p[slot, k] = p
    links.a_v[slot, k] = v
    links.a_pkt[slot, k] = pk
    links.a_seq[slot, k] = seq
    links.a_cnt[slot] = k + 1


@_inline
def _return_credit(r, t, i, v, cfg, tables, links):
    """Input VC (i, v) of router r returns a credit in cycle t: to the upstream router's output
    (network port) or to the endpoint (local port, c_p = -1), counted at t + credit_latency."""
    slot = (t + cfg.credit_latency) % links.c_cnt.shape[0]
    k = links.c_cnt[slot]
    if i < cfg.R:
        links.c_r[slot, k] = tables.nbr_r[r, i]
        links.c_p[slot, k] = tables.nbr_p[r, i]
    else:
        links.c_r[slot, k] = tables.ep_first[r] + (i - cfg.R)
        links.c_p[slot, k] = -1
    links.c_v[slot, k] = v
    links.c_cnt[slot] = k + 1


@_stage
def deliver_flits(t, block, cfg, inputs, links):
    """The flits due in cycle t at routers lo .. hi - 1 (block = (lo, hi)) enter their VC
    buffers; the slot is emptied by `clear_slot` once every block has read it."""
    lo, hi = block
    slot = t % links.a_cnt.shape[0]
    for k in range(links.a_cnt[slot]):
        r = links.a_r[slot, k]
        if r < lo or r >= hi:
            continue
        p = links.a_p[slot, k]
        v = links.a_v[slot, k]
        pos = (inputs.f_head[r, p, v] + inputs.f_cnt[r, p, v]) % cfg.B
        inputs.f_pkt[r, p, v, pos] = links.a_pkt[slot, k]
        inputs.f_seq[r, p, v, pos] = links.a_seq[slot, k]
        inputs.f_cnt[r, p, v] += 1
        inputs.router_flits[r] += 1
        if links.a_seq[slot, k] < 0:
            inputs.r_garbage[r] += 1


@_stage
def deliver_router_credits(t, block, outputs, links):
    """The credits due in cycle t at the output VCs of routers lo .. hi - 1 (block = (lo, hi))
    are counted (the order of the counts does not matter: each only adds one)."""
    lo, hi = block
    slot = t % links.c_cnt.shape[0]
    for k in range(links.c_cnt[slot]):
        r = links.c_r[slot, k]
        if links.c_p[slot, k] >= 0 and lo <= r < hi:
            outputs.credits[r, links.c_p[slot, k], links.c_v[slot, k]] += 1


@_stage
def deliver_endpoint_credits(t, endpoints, links, obs):
    """The credits due in cycle t at the endpoints are counted, and logged in their order."""
    slot = t % links.c_cnt.shape[0]
    for k in range(links.c_cnt[slot]):
        if links.c_p[slot, k] < 0:
            e = links.c_r[slot, k]                  # an endpoint id here
            endpoints.ep_credit[e, links.c_v[slot, k]] += 1
            _log_event(obs, EV_CREDIT, t, e, links.c_v[slot, k], -1, 0)


@_stage
def clear_slot(t, links):
    """Cycle t's flits and credits are delivered: their slot of the delay lines is emptied."""
    links.a_cnt[t % links.a_cnt.shape[0]] = 0
    links.c_cnt[t % links.c_cnt.shape[0]] = 0


# ---- endpoints ------------------------------------------------------------------------------------

@_inline
def _log_event(obs, kind, t, e, v, ident, seq):
    n = obs.etrace_len[0]
    if n < obs.etrace.shape[0]:
        obs.etrace[n, 0] = kind
        obs.etrace[n, 1] = t
        obs.etrace[n, 2] = e
        obs.etrace[n, 3] = v
        obs.etrace[n, 4] = ident
        obs.etrace[n, 5] = seq
    obs.etrace_len[0] = n + 1           # counts past the capacity: the caller sees an overflow


@_inline
def _most_credits(ep_credit, e, V):
    """Endpoint e's VC with the most credits (ties: the lowest)."""
    best = 0
    for v in range(1, V):
        if ep_credit[e, v] > ep_credit[e, best]:
            best = v
    return best


@_inline
def _endpoint_send(t, e, v, ident, seq, cfg, tables, world):
    """Endpoint e sends flit (ident, seq) on VC v in cycle t: it reaches its router's local
    input link_latency cycles later, and takes one of the endpoint's credits. seq < 0: garbage."""
    r = tables.ep_router[e]
    slot = (t + cfg.link_latency) % world.links.a_cnt.shape[0]
    _push_flit(world.links, slot, r, cfg.R + (e - tables.ep_first[r]), v, ident, seq)
    world.endpoints.ep_credit[e, v] -= 1
    _log_event(world.obs, EV_INJECT, t, e, v, ident, seq)


@_inline
def _append(head, tail, nxt, e, item):
    """`item` joins the tail of queue e, a linked list from head[e] to tail[e] (-1: empty) whose
    links are nxt[item]."""
    if tail[e] >= 0:
        nxt[tail[e]] = item
    else:
        head[e] = item
    tail[e] = item


@_stage
def join_queues(t, gi, ggi, arrivals, packets, garbage, ep):
    """Packets (then garbage) created in cycle t join their endpoint's source (garbage) queue;
    gi, ggi: the next entries of `arrivals`. Returns the new gi, ggi."""
    while gi < arrivals.gen_time.shape[0] and arrivals.gen_time[gi] == t:
        pk = arrivals.gen_pk[gi]
        _append(ep.q_head, ep.q_tail, packets.pk_next, packets.pk_src[pk], pk)
        gi += 1
    while ggi < arrivals.ggen_time.shape[0] and arrivals.ggen_time[ggi] == t:
        g = arrivals.ggen_id[ggi]
        _append(ep.gq_head, ep.gq_tail, garbage.g_next, garbage.g_ep[g], g)
        ggi += 1
    return gi, ggi


@_stage
def inject(t, eps, cfg, tables, world):
    """Every endpoint elo .. ehi - 1 (eps = (elo, ehi)) sends at most one flit in cycle t;
    returns whether any did. Due garbage goes first, but only between packets, on the VC with
    the most credits; a new packet takes the VC with the most credits and keeps it."""
    ep, packets, garbage, counters = world.endpoints, world.packets, world.garbage, world.obs.counters
    moved = False
    for e in range(eps[0], eps[1]):
        g = ep.gq_head[e]
        if g >= 0 and ep.q_sent[e] == 0:
            v = _most_credits(ep.ep_credit, e, cfg.V)
            if ep.ep_credit[e, v] <= 0:
                continue
            ident, seq = g, -1 - garbage.g_kind[g]
            counters[5] += 1
            garbage.g_sent[g] = t
            ep.gq_head[e] = garbage.g_next[g]
            if ep.gq_head[e] < 0:
                ep.gq_tail[e] = -1
        else:
            pk = ep.q_head[e]
            if pk < 0:
                continue
            if ep.q_sent[e] == 0:
                ep.ep_vc[e] = _most_credits(ep.ep_credit, e, cfg.V)
            v = ep.ep_vc[e]
            if ep.ep_credit[e, v] <= 0:
                continue
            ident, seq = pk, ep.q_sent[e]
            counters[0] += 1
            ep.q_sent[e] += 1
            if ep.q_sent[e] == cfg.L:
                ep.q_sent[e] = 0
                ep.q_head[e] = packets.pk_next[pk]
                if ep.q_head[e] < 0:
                    ep.q_tail[e] = -1
        _endpoint_send(t, e, v, ident, seq, cfg, tables, world)
        moved = True
    return moved


# ---- input unit: route computation, the VC choice, malformed flits --------------------------------

@_per_router
def _route_state(r, pk, cfg, tables, packets, credits, rc, iv):
    """Route computation for the head of packet pk at router r, input VC iv = (i, v): UGAL's
    decision at the source, the phase (1 from the intermediate router on), Polarized's candidates
    (kept in rc = InputUnits while pk waits at iv) and its escape at a dead end -> head =
    (source router, destination router, intermediate router, phase, candidates' dmus)."""
    if cfg.mode == UGAL and packets.pk_decided[pk] == 0:
        _ugal_decide(r, tables.ep_router[packets.pk_dst[pk]], pk, cfg, tables, packets, credits)
        packets.pk_decided[pk] = 1
    src_r = tables.ep_router[packets.pk_src[pk]]
    dst_r = tables.ep_router[packets.pk_dst[pk]]
    ph = packets.pk_phase[pk]
    if ph == 0 and r == packets.pk_inter[pk]:
        ph = 1
    i, v = iv
    if cfg.mode == POLARIZED and ph == 1 and r != dst_r and rc.rc_pkt[r, i, v] != pk:
        rc.rc_pkt[r, i, v] = pk
        if polarized_candidates(r, src_r, dst_r, tables, rc.rc_dmu[r, i, v]) == 0:
            packets.pk_phase[pk] = 0           # escapes for the rest of its route
            ph = 0
    return src_r, dst_r, packets.pk_inter[pk], ph, rc.rc_dmu[r, i, v]


@_per_router
def route_heads(r, t, cfg, tables, rt, packets, vtmp):
    """RC and the VC choice, from start-of-cycle state: every input VC whose front flit is a head
    and that holds no output VC chooses a free output VC (at its destination the first free VC of
    the local port; va_separable: VC (i + v) mod V of it). Writes the requests to vtmp.req_*;
    returns their count."""
    inputs, outputs = rt.inputs, rt.outputs
    # the output state the choice reads: now, or (va_choice_stage) at the start of t - 1
    cred, own = outputs.credits, outputs.owner
    if cfg.va_choice_stage == 1:
        cred, own = outputs.ch_cred[(t + 1) % 2], outputs.ch_owner[(t + 1) % 2]
    nreq = 0
    for i in range(cfg.P):
        for v in range(cfg.V):
            if inputs.f_cnt[r, i, v] == 0 or inputs.alloc_o[r, i, v] >= 0:
                continue
            pos = inputs.f_head[r, i, v]
            pk = inputs.f_pkt[r, i, v, pos]
            if inputs.f_seq[r, i, v, pos] != 0:
                continue               # a body flit, or garbage: never requests
            head = _route_state(r, pk, cfg, tables, packets, outputs.credits, inputs, (i, v))
            o = -1
            w = -1
            if r == head[1] and (head[3] == 1 or cfg.mode == POLARIZED):
                o = cfg.R + (packets.pk_dst[pk] - tables.ep_first[r])
                if cfg.va_separable == 1:
                    w = (i + v) % cfg.V        # free or not: no two VCs of a port ask for one
                else:
                    for ww in range(cfg.V):
                        if outputs.owner[r, o, ww] < 0:
                            w = ww
                            break
                    if w < 0:
                        o = -1
            else:
                cin = 0 if i >= cfg.R else tables.vcls[v]
                o, w = choose_vc(r, cin, tables.cstep[r, i], head, cfg, tables, cred, own)
            if o >= 0:
                vtmp.req_in[nreq] = i * cfg.V + v
                vtmp.req_o[nreq] = o
                vtmp.req_w[nreq] = w
                nreq += 1
    return nreq


@_inline
def _pop_front(r, i, v, B, inputs):
    """Input VC (i, v) of router r pops its front flit -> (pkt, seq)."""
    pos = inputs.f_head[r, i, v]
    inputs.f_head[r, i, v] = (pos + 1) % B
    inputs.f_cnt[r, i, v] -= 1
    inputs.router_flits[r] -= 1
    return inputs.f_pkt[r, i, v, pos], inputs.f_seq[r, i, v, pos]


@_per_router
def drop_malformed(r, t, cfg, tables, inputs, world, stmp):
    """Malformed flits (the RTL's rule, docs/microarchitecture.md): an input port that sent
    nothing in this cycle pops the front flit of its lowest VC whose front is malformed (a bad
    head; a body/tail at a VC holding no output VC, from start-of-cycle state: a port that sent
    nothing had none of its VCs changed by SA) and returns its credit. Only garbage flits can be
    malformed in the model. Returns whether a flit was dropped."""
    moved = False
    for i in range(cfg.P):
        if stmp.in_done[i]:
            continue
        for v in range(cfg.V):
            if inputs.f_cnt[r, i, v] == 0:
                continue
            seq = inputs.f_seq[r, i, v, inputs.f_head[r, i, v]]
            if seq >= 0 or (seq < -1 - G_BAD_EP and inputs.alloc_o[r, i, v] >= 0):
                continue
            g, _ = _pop_front(r, i, v, cfg.B, inputs)
            inputs.r_garbage[r] -= 1
            world.garbage.g_drop[g] = t
            world.obs.counters[4] += 1
            moved = True
            _return_credit(r, t, i, v, cfg, tables, world.links)
            break
    return moved


# ---- VC allocation --------------------------------------------------------------------------------

@_per_router
def load_choice_register(r, t, cfg, outputs):
    """va_choice_stage = 1: router r's output state at the start of cycle t into slot t % 2 (every
    router, idle or not: the RTL's register always loads)."""
    for p in range(cfg.R):
        for w in range(cfg.V):
            outputs.ch_owner[t % 2, r, p, w] = outputs.owner[r, p, w]
            outputs.ch_cred[t % 2, r, p, w] = outputs.credits[r, p, w]


@_per_router
def va_requests(r, cfg, rt, vtmp, nreq):
    """The requests the VA arbiters see, into vtmp.arb_*; returns their count: this cycle's
    (va_stages = 1), or last cycle's (va_stages = 2) whose input VC still holds no output VC and
    whose output VC is still free. A choice made from last cycle's output state
    (va_choice_stage = 1) may name a taken VC: the central arbiters drop it."""
    V, owner = cfg.V, rt.outputs.owner
    arb_in, arb_o, arb_w = vtmp.arb_in, vtmp.arb_o, vtmp.arb_w
    narb = 0
    if cfg.va_stages == 1:
        keep_taken = cfg.va_choice_stage == 0 or cfg.va_separable == 1
        for k in range(nreq):
            if keep_taken or owner[r, vtmp.req_o[k], vtmp.req_w[k]] < 0:
                arb_in[narb] = vtmp.req_in[k]
                arb_o[narb] = vtmp.req_o[k]
                arb_w[narb] = vtmp.req_w[k]
                narb += 1
        return narb
    pend_o, pend_w = rt.va.pend_o, rt.va.pend_w
    for iv in range(cfg.P * V):
        o = pend_o[r, iv]
        if o < 0:
            continue
        w = pend_w[r, iv]
        pend_o[r, iv] = -1
        # the central arbiters mask a taken output VC; the separable VA's output arbiters do,
        # after the crossing
        if rt.inputs.alloc_o[r, iv // V, iv % V] >= 0 or (cfg.va_separable == 0 and owner[r, o, w] >= 0):
            continue
        arb_in[narb] = iv
        arb_o[narb] = o
        arb_w[narb] = w
        narb += 1
    for k in range(nreq):
        pend_o[r, vtmp.req_in[k]] = vtmp.req_o[k]
        pend_w[r, vtmp.req_in[k]] = vtmp.req_w[k]
    return narb


@_per_router
def central_va(r, cfg, va, vtmp, narb):
    """The central VC allocator: per output VC a round-robin arbiter over input VC index picks one
    of the narb requests in vtmp.arb_* (best_k[o * V + w] = its index); apply_va grants it after SA."""
    arb_in, arb_o, arb_w, best_k = vtmp.arb_in, vtmp.arb_o, vtmp.arb_w, vtmp.best_k
    NV = cfg.P * cfg.V
    for k in range(narb):
        ov = arb_o[k] * cfg.V + arb_w[k]
        ptr = va.va_ptr[r, arb_o[k], arb_w[k]]
        b = best_k[ov]
        if b < 0 or (arb_in[k] - ptr) % NV < (arb_in[b] - ptr) % NV:
            best_k[ov] = k


@_per_router
def _separable_va(r, cfg, rt, vtmp, narb):
    """One cycle of the separable VC allocator (va_separable = 1), from start-of-cycle state;
    marks this cycle's grants and launches in sep_new (SEP_G1, SEP_L1) and writes a launch's
    output VC to sep_o/sep_w; _apply_separable moves the requests on after the switch allocator.

    Output stage: per output VC a round-robin arbiter over the input ports with a request waiting
    at it (SEP_WAIT); it grants only while the output VC is free (else its pointer stays). Launch
    stage: per input port a round-robin arbiter over its VCs with a request, none of their own in
    the allocator (SEP_IDLE) and no other VC of the port in the allocator for the same output VC
    (a grant names a port and an output VC) launches one."""
    arb_in, arb_o, arb_w = vtmp.arb_in, vtmp.arb_o, vtmp.arb_w
    P, V = cfg.P, cfg.V
    va, owner = rt.va, rt.outputs.owner
    st, act, best_p = va.sep_st, vtmp.sep_new, vtmp.best_k
    for i in range(P):
        for v in range(V):
            act[i, v] = 0
            if st[r, i, v] != SEP_WAIT or owner[r, va.sep_o[r, i, v], va.sep_w[r, i, v]] >= 0:
                continue
            o = va.sep_o[r, i, v]
            w = va.sep_w[r, i, v]
            ptr = va.va_ptr[r, o, w]
            b = best_p[o * V + w]
            if b < 0 or (i - ptr) % P < (b - ptr) % P:
                best_p[o * V + w] = i
    for i in range(P):
        for v in range(V):
            if st[r, i, v] == SEP_WAIT and best_p[va.sep_o[r, i, v] * V + va.sep_w[r, i, v]] == i:
                act[i, v] = SEP_G1
                va.va_ptr[r, va.sep_o[r, i, v], va.sep_w[r, i, v]] = (i + 1) % P
    for i in range(P):
        for v in range(V):
            if st[r, i, v] == SEP_WAIT:
                best_p[va.sep_o[r, i, v] * V + va.sep_w[r, i, v]] = -1
    for k in range(narb):          # best_p[i]: the request port i launches (index k)
        i = arb_in[k] // V
        v = arb_in[k] % V
        if st[r, i, v] != SEP_IDLE or _sep_clash(r, i, v, arb_o[k], arb_w[k], V, va):
            continue
        ptr = va.sep_ptr[r, i]
        b = best_p[i]
        if b < 0 or (v - ptr) % V < (arb_in[b] % V - ptr) % V:
            best_p[i] = k
    for i in range(P):
        k = best_p[i]
        if k >= 0:
            v = arb_in[k] % V
            act[i, v] = SEP_L1
            va.sep_o[r, i, v] = arb_o[k]
            va.sep_w[r, i, v] = arb_w[k]
            va.sep_ptr[r, i] = (v + 1) % V
            best_p[i] = -1


@_inline
def _sep_clash(r, i, v, o, w, V, va):
    """Another VC of port i has a request in the separable allocator for output VC (o, w)."""
    for u in range(V):
        if u != v and va.sep_st[r, i, u] != SEP_IDLE and va.sep_o[r, i, u] == o and va.sep_w[r, i, u] == w:
            return True
    return False


@_stage
def _apply_separable(r, cfg, rt, vtmp):
    """va_separable: a grant two cycles old allocates its input VC, this cycle's grants take their
    output VCs (busy from t + 1), and every request moves one step on."""
    moved = False
    inputs, va, act = rt.inputs, rt.va, vtmp.sep_new
    for i in range(cfg.P):
        for v in range(cfg.V):
            s = va.sep_st[r, i, v]
            if s == SEP_G2:
                inputs.alloc_o[r, i, v] = va.sep_o[r, i, v]
                inputs.alloc_w[r, i, v] = va.sep_w[r, i, v]
                va.sep_st[r, i, v] = SEP_IDLE
                moved = True
            elif s == SEP_G1 or s == SEP_L1:
                va.sep_st[r, i, v] = s + 1
            elif act[i, v] == SEP_G1:
                rt.outputs.owner[r, va.sep_o[r, i, v], va.sep_w[r, i, v]] = i * cfg.V + v
                va.sep_st[r, i, v] = SEP_G1
            elif act[i, v] == SEP_L1:
                va.sep_st[r, i, v] = SEP_L1
    return moved


@_per_router
def apply_va(r, cfg, rt, vtmp, narb):
    """The VA grants of this cycle, visible from t + 1 (after SA and the drops, which read the
    start-of-cycle allocations). Returns whether an input VC was allocated."""
    if cfg.va_separable == 1:
        return _apply_separable(r, cfg, rt, vtmp)
    arb_in, arb_o, arb_w = vtmp.arb_in, vtmp.arb_o, vtmp.arb_w
    V, best_k = cfg.V, vtmp.best_k
    moved = False
    for k in range(narb):
        if best_k[arb_o[k] * V + arb_w[k]] == k:
            iv = arb_in[k]
            rt.outputs.owner[r, arb_o[k], arb_w[k]] = iv
            rt.inputs.alloc_o[r, iv // V, iv % V] = arb_o[k]
            rt.inputs.alloc_w[r, iv // V, iv % V] = arb_w[k]
            rt.va.va_ptr[r, arb_o[k], arb_w[k]] = (iv + 1) % (cfg.P * V)
            moved = True
    for k in range(narb):
        best_k[arb_o[k] * V + arb_w[k]] = -1
    return moved


# ---- switch allocation ----------------------------------------------------------------------------

@_inline
def _can_send(r, i, v, spare, R, inputs, credits):
    """Input VC v of port i holds an output VC and has more than `spare` flits and credits."""
    o = inputs.alloc_o[r, i, v]
    return o >= 0 and inputs.f_cnt[r, i, v] > spare and (o >= R or credits[r, o, inputs.alloc_w[r, i, v]] > spare)


@_inline
def _nomination_wins(r, i, cfg, rt):
    """Pipelined SA: input port i's nomination of last cycle wins this cycle's output stage (its
    output arbiter, from the start-of-cycle pointer, picks it among last cycle's nominations)."""
    nom, P = rt.sa.nom, cfg.P
    v = nom[r, i]
    if v < 0:
        return False
    o = rt.inputs.alloc_o[r, i, v]
    ptr = rt.sa.out_ptr[r, o]
    for j in range(P):
        u = nom[r, j]
        if j != i and u >= 0 and rt.inputs.alloc_o[r, j, u] == o and (j - ptr) % P < (i - ptr) % P:
            return False
    return True


@_stage
def _input_stage(r, cfg, rt, stmp):
    """Each input port not yet matched picks one eligible VC with its round-robin arbiter
    (stmp.in_choice, -1: none)."""
    inputs, sa, SS = rt.inputs, rt.sa, cfg.sa_stages
    for i in range(cfg.P):
        stmp.in_choice[i] = -1
        if stmp.in_done[i]:
            continue
        ptr = sa.in_ptr[r, i]
        won = SS >= 2 and _nomination_wins(r, i, cfg, rt)
        for j in range(cfg.V):
            v = (ptr + j) % cfg.V
            # pipelined SA: a VC whose nomination of last cycle wins this cycle's output stage
            # sends in this cycle (SS = 2) or the next (SS = 3), and one granted last cycle
            # (SS = 3) sends in this one: it needs a flit and a credit to spare for each, and none
            # of those flits (the front, then the next) may be its tail; a losing nomination
            # takes none (as the RTL's sa_won_*)
            nm = 0
            if SS >= 2 and sa.nom[r, i] == v and won:
                nm += 1
            if SS == 3 and sa.gnt[r, i] == v:
                nm += 1
            if not _can_send(r, i, v, nm, cfg.R, inputs, rt.outputs.credits) or stmp.out_done[inputs.alloc_o[r, i, v]]:
                continue
            if nm >= 1 and inputs.f_seq[r, i, v, inputs.f_head[r, i, v]] == cfg.L - 1:
                continue
            if nm == 2 and inputs.f_seq[r, i, v, (inputs.f_head[r, i, v] + 1) % cfg.B] == cfg.L - 1:
                continue
            stmp.in_choice[i] = v
            break


@_stage
def _take_nominations(r, cfg, rt, stmp):
    """Pipelined SA: this cycle's input stage only nominates (for the next cycle); the output
    stage takes last cycle's nominations, which the input rule keeps able to send (a flit, a
    credit: checked here with sa_stages = 2, when they send with 3; the RTL relies on it)."""
    nom = rt.sa.nom
    for i in range(cfg.P):
        v = nom[r, i]
        nom[r, i] = stmp.in_choice[i]
        stmp.in_choice[i] = v
        if cfg.sa_stages == 2 and v >= 0 and not _can_send(r, i, v, 0, cfg.R, rt.inputs, rt.outputs.credits):
            return STALE_NOMINATION
    return OK


@_stage
def _output_stage(r, cfg, rt, stmp):
    """Per output port a round-robin arbiter over the input ports that picked it: the winner in
    stmp.best_in[o]; returns the number of output ports with a request (stmp.out_list)."""
    n_out = 0
    for i in range(cfg.P):
        v = stmp.in_choice[i]
        if v < 0:
            continue
        o = rt.inputs.alloc_o[r, i, v]
        b = stmp.best_in[o]
        if b < 0:
            stmp.out_list[n_out] = o
            n_out += 1
            stmp.best_in[o] = i
        elif (i - rt.sa.out_ptr[r, o]) % cfg.P < (b - rt.sa.out_ptr[r, o]) % cfg.P:
            stmp.best_in[o] = i
    return n_out


@_stage
def _senders(r, cfg, rt, stmp, n_out):
    """The input VCs that send in this iteration (stmp.snd_i/snd_v): the output stage's grants,
    or with sa_stages = 3 last cycle's (this cycle's are registered in sa.gnt). -> (status, count)"""
    sa, P = rt.sa, cfg.P
    n_snd = 0
    if cfg.sa_stages == 3:
        for i in range(P):
            v = sa.gnt[r, i]
            if v >= 0:
                if not _can_send(r, i, v, 0, cfg.R, rt.inputs, rt.outputs.credits):
                    return STALE_NOMINATION, n_snd
                stmp.snd_i[n_snd] = i
                stmp.snd_v[n_snd] = v
                n_snd += 1
            sa.gnt[r, i] = -1
    for k in range(n_out):
        o = stmp.out_list[k]
        i = stmp.best_in[o]
        stmp.best_in[o] = -1
        sa.out_ptr[r, o] = (i + 1) % P
        if cfg.sa_stages == 3:
            sa.gnt[r, i] = stmp.in_choice[i]
        else:
            stmp.snd_i[n_snd] = i
            stmp.snd_v[n_snd] = stmp.in_choice[i]
            n_snd += 1
            stmp.out_done[o] = True
    return OK, n_snd


@_per_router
def switch_allocate(r, t, cfg, tables, rt, world, stmp):
    """Switch allocation, input-first separable, alloc_iters iterations, from start-of-cycle
    allocations; the granted input VCs send (send_flit). -> (status, whether a flit was sent)"""
    moved = False
    for i in range(cfg.P):
        stmp.in_done[i] = False
        stmp.out_done[i] = False
    for _ in range(cfg.alloc_iters):
        _input_stage(r, cfg, rt, stmp)
        if cfg.sa_stages >= 2 and _take_nominations(r, cfg, rt, stmp) != OK:
            return STALE_NOMINATION, moved
        n_out = _output_stage(r, cfg, rt, stmp)
        status, n_snd = _senders(r, cfg, rt, stmp, n_out)
        if status != OK:
            return status, moved
        for k in range(n_snd):
            stmp.in_done[stmp.snd_i[k]] = True
            moved = True
            if send_flit(r, t, stmp.snd_i[k], stmp.snd_v[k], cfg, tables, rt, world) != OK:
                return BAD_EJECT, moved
    return OK, moved


@_per_router
def idle_switch_allocator(r, cfg, sa):
    """A router with no flit nominates nothing this cycle (nor grants: a granted flit is still
    in its buffer)."""
    if cfg.sa_stages >= 2:
        for i in range(cfg.P):
            sa.nom[r, i] = -1
            if cfg.sa_stages == 3:
                sa.gnt[r, i] = -1


# ---- switch traversal and output unit -------------------------------------------------------------

@_stage
def _eject(t, e, pk, seq, cfg, packets, obs):
    """Flit seq of packet pk reaches endpoint e in cycle t: checked (destination, order),
    counted and traced. -> OK or BAD_EJECT"""
    if e != packets.pk_dst[pk] or seq != packets.pk_eseq[pk]:
        return BAD_EJECT
    packets.pk_eseq[pk] = seq + 1
    obs.counters[1] += 1
    if obs.trace_len[0] < obs.trace.shape[0]:
        tl = obs.trace_len[0]
        obs.trace[tl, 0] = t
        obs.trace[tl, 1] = e
        obs.trace[tl, 2] = pk
        obs.trace[tl, 3] = seq
        obs.trace_len[0] = tl + 1
    if seq == cfg.L - 1:
        packets.pk_done[pk] = t
        h = packets.pk_hops[pk]
        if h < obs.eject_hist.shape[0]:
            obs.eject_hist[h] += 1
    return OK


@_per_router
def send_flit(r, t, i, v, cfg, tables, rt, world):
    """Input VC (i, v) of router r sends its front flit in cycle t: pop, credit back upstream,
    a head's hops (and phase past the intermediate router), the output VC's credit, the flit
    onto the link (st_stage + link_latency cycles later) or to its endpoint, the input arbiter's
    pointer, and after a tail the release of the output VC. -> OK or BAD_EJECT"""
    inputs, outputs, packets = rt.inputs, rt.outputs, world.packets
    R = cfg.R
    o = inputs.alloc_o[r, i, v]
    w = inputs.alloc_w[r, i, v]
    pk, seq = _pop_front(r, i, v, cfg.B, inputs)
    _return_credit(r, t, i, v, cfg, tables, world.links)
    arrive = t + cfg.st_stage + cfg.link_latency     # the flit leaves the router st_stage cycles after SA
    if o < R:
        if seq == 0:
            packets.pk_hops[pk] += 1
            if r == packets.pk_inter[pk]:
                packets.pk_phase[pk] = 1
        outputs.credits[r, o, w] -= 1
        _push_flit(world.links, arrive % world.links.a_cnt.shape[0], tables.nbr_r[r, o], tables.nbr_p[r, o], w,
                   pk, seq)
    elif _eject(arrive, tables.ep_first[r] + (o - R), pk, seq, cfg, packets, world.obs) != OK:
        return BAD_EJECT
    rt.sa.in_ptr[r, i] = (v + 1) % cfg.V
    if seq == cfg.L - 1:
        outputs.owner[r, o, w] = -1
        inputs.alloc_o[r, i, v] = -1
        inputs.alloc_w[r, i, v] = -1
    return OK


# ---- the cycle ------------------------------------------------------------------------------------

@_stage
def watchdog(t, cfg, obs, moved):
    """Counts the cycles in which nothing moved while flits (legit or garbage) are in flight;
    returns True when they reach cfg.watchdog."""
    c = obs.counters
    if moved:
        c[2] = 0
        c[3] = t
    elif c[0] > c[1] or c[5] > c[4]:
        c[2] += 1
        if c[2] >= cfg.watchdog:
            return True
    return False


@_stage
def route_routers(t, block, cfg, tables, rt, world, tmp):
    """The router stages of cycle t for routers lo .. hi - 1 in order but `skip`, block = (lo, hi,
    skip), all from the state at the start of the cycle: the registered VC choice, RC and the VC
    choice, VC allocation, switch allocation with traversal and credit return, the drop of
    malformed flits, the VC grants. -> (status, whether anything moved); a router that fails
    ends the block"""
    lo, hi, skip = block
    vtmp, stmp = tmp.va, tmp.sa
    moved = False
    for r in range(lo, hi):
        if r == skip:
            continue
        if cfg.va_choice_stage == 1:
            load_choice_register(r, t, cfg, rt.outputs)
        if rt.inputs.router_flits[r] == 0:
            idle_switch_allocator(r, cfg, rt.sa)
            continue
        nreq = route_heads(r, t, cfg, tables, rt, world.packets, vtmp)
        narb = va_requests(r, cfg, rt, vtmp, nreq)
        if cfg.va_separable == 0:
            central_va(r, cfg, rt.va, vtmp, narb)
        else:
            _separable_va(r, cfg, rt, vtmp, narb)
        status, sent = switch_allocate(r, t, cfg, tables, rt, world, stmp)
        if status != OK:
            return status, moved
        dropped = rt.inputs.r_garbage[r] > 0 and drop_malformed(r, t, cfg, tables, rt.inputs, world, stmp)
        granted = apply_va(r, cfg, rt, vtmp, narb)
        moved = moved or sent or dropped or granted
    return OK, moved


@_stage
def serve_endpoints(t, gi, ggi, cfg, tables, rt, world):
    """The start of cycle t: link and credit arrivals, new packets and garbage into the
    endpoints' queues, injection. -> (gi, ggi, whether an endpoint sent)"""
    everything = (np.int64(0), tables.nbr_r.shape[0])
    deliver_flits(t, everything, cfg, rt.inputs, world.links)
    deliver_router_credits(t, everything, rt.outputs, world.links)
    deliver_endpoint_credits(t, world.endpoints, world.links, world.obs)
    clear_slot(t, world.links)
    gi, ggi = join_queues(t, gi, ggi, world.arrivals, world.packets, world.garbage, world.endpoints)
    return gi, ggi, inject(t, (np.int64(0), tables.ep_router.shape[0]), cfg, tables, world)


@nb.njit(cache=True, _nrt=False)
def run_cycles(t0, t1, cfg, tables, rt, world, tmp, skip=-1):
    """Advance cycles [t0, t1) -> (status, cycle). Per cycle: `serve_endpoints`, then
    `route_routers` over every router, last the watchdog. tmp: a Scratch (new_scratch). Router
    `skip` (>= 0) is simulated elsewhere (`sim.external`): its stages do not run here, and the
    caller takes the flits and credits bound for it out of the delay lines before they are due.
    Compiled like the stages (no reference counting), with the CPython wrapper: Python calls it."""
    gi = np.int64(0)          # (not a literal: the stages compile once for both engines)
    ggi = np.int64(0)
    n = tables.nbr_r.shape[0]
    for t in range(t0, t1):
        gi, ggi, moved = serve_endpoints(t, gi, ggi, cfg, tables, rt, world)
        status, sent = route_routers(t, (np.int64(0), n, skip), cfg, tables, rt, world, tmp)
        if status != OK:
            return status, t
        if watchdog(t, cfg, world.obs, moved or sent):
            return DEADLOCK, t
    return OK, t1


# ---- the parallel engine --------------------------------------------------------------------------
# The router stages of one cycle touch only their own router's state, the packets whose head they
# hold, and three shared logs: the delay lines, the ejection counters and trace. So the routers
# split into contiguous blocks that run on threads, each block appending to a private copy of
# those logs; after the cycle the copies join the shared ones block by block, in router order:
# the delay lines, counters and traces are then exactly the serial engine's.

CACHE_LINE = 64             # bytes


class Blocks(NamedTuple):
    """The router blocks of run_cycles_parallel and each block's private logs (leading axis K:
    the block) and temporaries. Rows a thread writes every router must not share a cache line
    with the next block's (two threads writing one line serialize on it): counters, trace_len,
    etrace_len and result have rows of 64 bytes, and the scratch and the delay lines' counts,
    rows of a few bytes, have K * S rows, block k's being row k * S (`spread`)."""
    lo: np.ndarray          # (K + 1,) first router of each block
    links: Links            # (K, ring, cap) delay lines, appended by the routers in this cycle only
    injected: Links         # (K, ring, ecap) flit lines appended by the endpoints (no credit lines)
    counters: np.ndarray    # (K, 8) injected [0], ejected [1], dropped [4], garbage sent [5] flits
    eject_hist: np.ndarray  # (K, 64)
    trace: np.ndarray       # (K, cap, 4) this cycle's ejections
    trace_len: np.ndarray   # (K, 8) [0]: rows of trace
    etrace: np.ndarray      # (K, ecap, 6) this cycle's injections (endpoint events)
    etrace_len: np.ndarray  # (K, 8) [0]: rows of etrace, counted past its capacity
    result: np.ndarray      # (K, 8) [0] status, [1] whether anything moved
    scratch: Scratch        # (K, ...) each block's temporaries


def _block_lines(k: int, ring: int, cap: int, credits: bool, spread: int) -> Links:
    """k private delay lines of `cap` entries per slot (credits: with credit lines, else empty);
    their counts in rows k * spread."""
    z = lambda c: np.zeros((k, ring, c), dtype=np.int32)    # noqa: E731
    cnt = lambda: np.zeros((k * spread, ring), dtype=np.int64)    # noqa: E731
    cc = cap if credits else 0
    return Links(a_cnt=cnt(), a_r=z(cap), a_p=z(cap), a_v=z(cap), a_pkt=z(cap),
                 a_seq=z(cap), c_cnt=cnt(), c_r=z(cc), c_p=z(cc), c_v=z(cc))


def new_blocks(ep_first: np.ndarray, P: int, V: int, ring: int, traces: tuple[bool, bool], k: int) -> Blocks:
    """k blocks of about n / k routers each (ep_first: Tables.ep_first, n + 1 entries); traces:
    whether the run keeps an ejection trace and an endpoint-event trace."""
    n = len(ep_first) - 1
    lo = np.linspace(0, n, k + 1).round().astype(np.int64)
    cap = int(np.diff(lo).max()) * P + 1         # sends per cycle: at most one per input port
    ecap = int(np.diff(ep_first[lo]).max()) + 1  # injections per cycle: at most one per endpoint
    # the shortest such row: P switch-allocator flags (bytes), or a ring of delay-line counts
    spread = 1 + -(-CACHE_LINE // min(P, 8 * ring))
    one = [new_scratch(P, V) for _ in range(k * spread)]     # each block's, stacked field by field
    va = VAScratch(*(np.stack([s.va[f] for s in one]) for f in range(len(VAScratch._fields))))
    sa = SAScratch(*(np.stack([s.sa[f] for s in one]) for f in range(len(SAScratch._fields))))
    z8 = lambda: np.zeros((k, 8), dtype=np.int64)          # noqa: E731
    return Blocks(lo=lo, links=_block_lines(k, ring, cap, True, spread),
                  injected=_block_lines(k, ring, ecap, False, spread),
                  counters=z8(), eject_hist=np.zeros((k, 64), dtype=np.int64),
                  trace=np.zeros((k, cap if traces[0] else 0, 4), dtype=np.int64), trace_len=z8(),
                  etrace=np.zeros((k, ecap if traces[1] else 0, 6), dtype=np.int64), etrace_len=z8(),
                  result=z8(), scratch=Scratch(va=va, sa=sa))


@_inline
def _block_scratch(k, va, sa):
    """Block k's temporaries (va, sa: the blocks' VAScratch and SAScratch)."""
    return Scratch(va=VAScratch(req_in=va.req_in[k], req_o=va.req_o[k], req_w=va.req_w[k],
                                arb_in=va.arb_in[k], arb_o=va.arb_o[k], arb_w=va.arb_w[k],
                                best_k=va.best_k[k], sep_new=va.sep_new[k]),
                   sa=SAScratch(in_choice=sa.in_choice[k], best_in=sa.best_in[k], in_done=sa.in_done[k],
                                out_done=sa.out_done[k], out_list=sa.out_list[k], snd_i=sa.snd_i[k],
                                snd_v=sa.snd_v[k]))


@_inline
def spread(bl):
    """S: block k's rows of the scratch and of the delay lines' counts are rows k * S (Blocks)."""
    return bl.links.a_cnt.shape[0] // bl.links.a_r.shape[0]


@_inline
def _block_lines_of(k, S, L):
    """Block k's private delay lines (L: the blocks' Links, S: their spread)."""
    return Links(a_cnt=L.a_cnt[k * S], a_r=L.a_r[k], a_p=L.a_p[k], a_v=L.a_v[k], a_pkt=L.a_pkt[k], a_seq=L.a_seq[k],
                 c_cnt=L.c_cnt[k * S], c_r=L.c_r[k], c_p=L.c_p[k], c_v=L.c_v[k])


@_stage
def _join_lines(cnt, cols, k, S, gcnt, gcols):
    """Block k's entries of every slot (cnt, cols: the blocks' counts, block k's in row k * S,
    and (K, ring, cap) columns) appended to the shared delay line's (gcnt, gcols)."""
    for s in range(cnt.shape[1]):
        for j in range(cnt[k * S, s]):
            g = gcnt[s]
            for c in range(len(cols)):
                gcols[c][s, g] = cols[c][k, s, j]
            gcnt[s] = g + 1
        cnt[k * S, s] = 0


@_stage
def _join_rows(rows, nrows, k, grows, gnrows, counted):
    """Block k's rows of a trace (rows, nrows: the blocks' (K, cap, w) rows and (K, 8) counts)
    appended to the shared trace (grows, gnrows); counted: the shared count goes on past its
    capacity (the endpoint-event trace)."""
    for j in range(nrows[k, 0]):
        if gnrows[0] < grows.shape[0]:
            for c in range(grows.shape[1]):
                grows[gnrows[0], c] = rows[k, j, c]
            gnrows[0] += 1
        elif counted:
            gnrows[0] += 1
    nrows[k, 0] = 0


@_stage
def join_blocks(bl, world):
    """After a parallel cycle: the blocks' injections (flits, endpoint events), then their
    routers' delay-line entries, ejection counts and trace rows join the shared ones, block by
    block: the serial engine's order. -> (status, whether anything moved)"""
    L, I, G, obs = bl.links, bl.injected, world.links, world.obs
    moved = False
    status = OK
    S = spread(bl)
    for k in range(bl.lo.shape[0] - 1):
        _join_lines(I.a_cnt, (I.a_r, I.a_p, I.a_v, I.a_pkt, I.a_seq), k, S, G.a_cnt,
                    (G.a_r, G.a_p, G.a_v, G.a_pkt, G.a_seq))
        _join_rows(bl.etrace, bl.etrace_len, k, obs.etrace, obs.etrace_len, True)
    for k in range(bl.lo.shape[0] - 1):
        _join_lines(L.a_cnt, (L.a_r, L.a_p, L.a_v, L.a_pkt, L.a_seq), k, S, G.a_cnt,
                    (G.a_r, G.a_p, G.a_v, G.a_pkt, G.a_seq))
        _join_lines(L.c_cnt, (L.c_r, L.c_p, L.c_v), k, S, G.c_cnt, (G.c_r, G.c_p, G.c_v))
        for c in (0, 1, 4, 5):
            obs.counters[c] += bl.counters[k, c]
            bl.counters[k, c] = 0
        for h in range(obs.eject_hist.shape[0]):
            obs.eject_hist[h] += bl.eject_hist[k, h]
            bl.eject_hist[k, h] = 0
        _join_rows(bl.trace, bl.trace_len, k, obs.trace, obs.trace_len, False)
        moved = moved or bl.result[k, 1] == 1
        if status == OK and bl.result[k, 0] != OK:
            status = bl.result[k, 0]
    return status, moved


@nb.njit(cache=True, parallel=True)
def run_cycles_parallel(t0, t1, cfg, tables, rt, world, bl, skip=-1):
    """run_cycles with the stages of each cycle run by blocks of routers (`new_blocks`) on Numba's
    threads (numba.set_num_threads), each block with its routers' endpoints: the same state,
    delay lines, counters and traces cycle for cycle. Only the new packets' queueing and the
    endpoints' credits (logged in the delay line's order) stay serial. A failing router stops its
    block only; the run returns the status of the first block that failed."""
    # Numba's parallel loop takes flat structures only, made by a call in this function
    # (numba/numba#10139): the nested ones are taken apart here and put together in the loop
    inputs = InputUnits(*rt.inputs)
    va = VCAllocator(*rt.va)
    sa = SwitchAllocator(*rt.sa)
    outputs = OutputUnits(*rt.outputs)
    endpoints = Endpoints(*world.endpoints)
    packets = Packets(*world.packets)
    garbage = Garbage(*world.garbage)
    arrivals = Arrivals(*world.arrivals)
    links = Links(*world.links)
    obs = Observed(*world.obs)
    ar = Arith(*tables.ar)
    bl_links = Links(*bl.links)
    bl_inj = Links(*bl.injected)
    bl_va = VAScratch(*bl.scratch.va)
    bl_sa = SAScratch(*bl.scratch.sa)
    nbr_r, nbr_p, cstep, vcls, crange = tables.nbr_r, tables.nbr_p, tables.cstep, tables.vcls, tables.crange
    dist, nexthop, pen, ep_first, ep_router = tables.dist, tables.nexthop, tables.pen, tables.ep_first, tables.ep_router
    minport = tables.minport
    gi = np.int64(0)
    ggi = np.int64(0)
    K = bl.lo.shape[0] - 1
    S = spread(bl)
    lo = bl.lo
    result, counters, eject_hist, trace, trace_len = bl.result, bl.counters, bl.eject_hist, bl.trace, bl.trace_len
    etrace, etrace_len = bl.etrace, bl.etrace_len
    for t in range(t0, t1):
        gi, ggi = join_queues(t, gi, ggi, arrivals, packets, garbage, endpoints)
        deliver_endpoint_credits(t, endpoints, links, obs)
        for k in nb.prange(K):
            tb = Tables(nbr_r=nbr_r, nbr_p=nbr_p, cstep=cstep, vcls=vcls, crange=crange, dist=dist,
                        minport=minport, nexthop=nexthop, pen=pen, ep_first=ep_first, ep_router=ep_router, ar=ar)
            log = Observed(counters=counters[k], eject_hist=eject_hist[k], trace=trace[k],
                           trace_len=trace_len[k], etrace=etrace[k], etrace_len=etrace_len[k])
            r0, r1 = lo[k], lo[k + 1]
            deliver_flits(t, (r0, r1), cfg, inputs, links)
            deliver_router_credits(t, (r0, r1), outputs, links)
            injected = inject(t, (np.int64(ep_first[r0]), np.int64(ep_first[r1])), cfg, tb,
                              World(links=_block_lines_of(k, S, bl_inj), endpoints=endpoints, packets=packets,
                                    garbage=garbage, arrivals=arrivals, obs=log))
            status, sent = route_routers(t, (r0, r1, skip), cfg, tb,
                                         Routers(inputs=inputs, va=va, sa=sa, outputs=outputs),
                                         World(links=_block_lines_of(k, S, bl_links), endpoints=endpoints,
                                               packets=packets, garbage=garbage, arrivals=arrivals, obs=log),
                                         _block_scratch(k * S, bl_va, bl_sa))
            result[k, 0] = status
            result[k, 1] = 1 if sent or injected else 0
        clear_slot(t, links)
        status, moved = join_blocks(bl, world)
        if status != OK:
            return status, t
        if watchdog(t, cfg, world.obs, moved):
            return DEADLOCK, t
    return OK, t1


@nb.njit(cache=True)
def minimal_ports(nbr_r, dist):
    """(n, n) uint64 `Tables.minport`: bit p of [c, t] set when network port p of router c leads
    one hop closer to t (dist[nbr, t] + 1 == dist[c, t]). Compiled: n²·R compares along rows
    (5,586 routers of 32 ports: under a second; NumPy's gathers took 10 s)."""
    n, R = nbr_r.shape
    mask = np.zeros((n, n), dtype=np.uint64)
    for c in range(n):
        for p in range(R):
            nb_ = nbr_r[c, p]
            if nb_ < 0:
                continue
            bit = np.uint64(1) << np.uint64(p)
            for t in range(n):
                if np.int64(dist[nb_, t]) + 1 == np.int64(dist[c, t]):
                    mask[c, t] |= bit
    return mask


@nb.njit(cache=True)
def arith_all_pairs(ar, n):
    """(n, n) distances and next-hop ports of the engine's arithmetic unit for every pair (the
    tests compare them with routing_logic.polarstar's tables)."""
    dist = np.zeros((n, n), dtype=np.int64)
    port = np.zeros((n, n), dtype=np.int64)
    for c in range(n):
        for t in range(n):
            dist[c, t] = arith_distance(ar, c, t)
            port[c, t] = arith_next_port(ar, c, t)
    return dist, port
