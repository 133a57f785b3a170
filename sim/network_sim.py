"""`NetworkSim`: a Network + routing + router parameters, run cycle by cycle by `sim.engine`.

Python owns set-up, packet generation (Bernoulli per endpoint per cycle, destinations from the
traffic pattern, all drawn from one seeded Generator in chunks so runs are reproducible), the
measurement windows and the checks; the compiled engine owns the cycles.

`add_garbage(endpoints, cycles, kinds)` schedules malformed flits at endpoints (issue 8): each is
sent by its endpoint like a flit of a packet, occupies a slot of its router's local input VC and is
dropped by the RTL's rule (docs/microarchitecture.md, "Malformed flits"); `dropped` counts them.
Garbage draws nothing from the run's Generator, so the legit traffic (packet ids, sources,
destinations, creation cycles) is the same with and without it.

Scale (docs/simulation.md, "Scale"): above DENSE_ROUTERS routers, on an intact PolarStar, the
engine computes distances and next hops with the arithmetic unit (`arith_unit`, no n x n
table); `estimate_bytes` computes a run's memory from its shapes and `check_memory` refuses,
in one line, a run that would not fit, before anything is allocated.

Threads (`threads`, default every core, `sim.threads`): the routers' stages of each cycle run in
blocks on Numba's threads (`engine.run_cycles_parallel`); the run is the same, flit for flit,
on any number of threads.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from operator import attrgetter

import numba
import numpy as np

from routing_logic.polarstar import PolarStarArithmetic, supports_arithmetic
from routing_logic.registry import make_routing
from routing_logic.table import ARITHMETIC_ABOVE
from topologies.distances import distance_matrix
from topologies.errors import ParameterError, check_seed
from topologies.network import Network
from topologies.spec import available_memory

from . import engine
from contract.params import RouterParams
from .threads import blocks_for, check_threads
from .traffic import make_pattern

MODES = {"min": engine.MIN, "polarstar": engine.NEXTHOP, "polarized": engine.POLARIZED,
         "valiant": engine.VALIANT, "ugal": engine.UGAL}
# above ARITHMETIC_ABOVE routers the engine reads distances and next hops from the arithmetic
# PolarStar unit (engine.Arith) instead of n x n tables; other networks stop there
DENSE_ROUTERS = ARITHMETIC_ABOVE
# routers up to which the engine keeps a minimal-port mask per pair (8 bytes: 268 MB at the limit)
MINPORT_ROUTERS = 5_800
GEN_DRAWS = 1 << 25          # Bernoulli draws per packet-generation chunk at most (cycles x endpoints)
MAX_CYCLE = (1 << 31) - 1    # packet creation and arrival cycles are int32
# the packet table's columns (NetworkSim.pk_*) and their types
PACKET_FIELDS = {"pk_src": np.int32, "pk_dst": np.int32, "pk_ctime": np.int32, "pk_hops": np.int32,
                 "pk_inter": np.int32, "pk_phase": np.int8, "pk_decided": np.int8, "pk_next": np.int32,
                 "pk_eseq": np.int16, "pk_done": np.int32}


class DeadlockDetected(RuntimeError):
    pass


@dataclass
class Ejection:
    cycle: int
    endpoint: int
    packet: int
    seq: int


class NetworkSim:
    def __init__(self, net: Network, routing: str = "min", params: RouterParams = RouterParams(),
                 traffic: str = "uniform", load: float = 0.1, seed: int = 1, trace: int = 0, routing_obj=None,
                 endpoint_trace: int = 0, vc_policy: str = "hops", threads: int | None = None):
        if routing not in MODES:
            raise ParameterError(f"routing={routing!r}: unknown; allowed: {', '.join(MODES)}")
        if not isinstance(load, (int, float)) or not 0 <= load <= 1:
            raise ParameterError(f"load={load!r}: must be in 0..1 flits/cycle/endpoint")
        if net.num_endpoints < 1:
            raise ParameterError("p: the network has no endpoints (use -p P)")
        check_seed(seed)
        self.threads = check_threads(threads)
        self.arith = uses_arithmetic(net, routing, routing_obj)
        check_memory(net, params, cycles=0, load=0.0, arith=self.arith, routing=routing)
        self.net, self.params, self.load, self.seed = net, params, float(load), seed
        self.routing_name = routing
        self.rng = np.random.default_rng(seed)
        V, B = params.vcs, params.depth
        # routing_logic decides the VC need and checks deadlock freedom of (routing, VCs)
        self.routing = routing_obj or make_routing(routing, net, vc_policy=vc_policy, **self._routing_params(routing, V, B))
        if self.routing.num_vcs > V:
            raise ParameterError(f"vcs={V}: routing {routing} needs at least {self.routing.num_vcs} VCs on this network")
        self.mode = MODES[routing]
        self.vc_classes = self.routing.vc_policy.num_classes     # routing_logic owns the VC policy
        n = net.num_routers
        self.R = R = int(net.ports.max())
        eps = net.endpoints.astype(np.int64)
        self.p_max = int(eps.max())
        self.tables = self._tables()
        self.E = int(self.tables.ep_first[-1])
        self.pattern = make_pattern(traffic, net, self.rng)
        self.active = self.pattern.active()
        self.P = P = R + self.p_max
        # the engine's state (sim.engine): per-router units, delay lines, endpoints, observations;
        # packets and garbage are tables of this class that grow (_alloc_packets, _alloc_garbage)
        self.config = engine.make_config(params, self.mode, R, P, self.vc_classes)
        self.routers = engine.new_routers(n, self.config)
        self.links = engine.new_links(_ring(params), n * P + self.E + 1)
        self.endpoints = engine.new_endpoints(self.E, V, B)
        self.obs = engine.new_observed(trace, endpoint_trace)
        # intermediate-router samples: only Valiant and UGAL draw them (no column otherwise)
        self.samples_k = getattr(self.routing, "samples", 1) if self.mode in (engine.VALIANT, engine.UGAL) else 0
        self.num_packets = 0
        self.abandoned_packets = 0          # stop_sources: created, never to be injected
        self._pending = np.zeros((0, 3), dtype=np.int64)
        self._alloc_packets(1024)
        # garbage flits (add_garbage): per id endpoint, kind, creation cycle, queue link, cycle
        # sent and cycle dropped (-1: not yet); the due garbage queues per endpoint are in
        # self.endpoints, the garbage flits in each router's buffers in self.routers.inputs
        self.num_garbage = 0
        self._alloc_garbage(16)
        self._g_pending = np.zeros(0, dtype=np.int64)        # ids not yet handed to the engine
        self._g_routers = set()
        self.cycle = 0
        # the router blocks of the parallel engine (sim.threads), made at the first run
        self._blocks = None

    def _tables(self) -> engine.Tables:
        """The engine's tables: neighbours, class steps (int8), VC classes, and the routing's
        distances and next hops, as n x n tables or (self.arith) as the arithmetic unit."""
        net, n, R = self.net, self.net.num_routers, self.R
        pr, pp = net.peer_table()
        nbr_r = np.full((n, R), -1, dtype=np.int64)
        nbr_p = np.full((n, R), -1, dtype=np.int64)
        rows = net.port_router.astype(np.int64)
        cols = np.arange(len(net.peer)) - net.offsets[rows]
        nbr_r[rows, cols] = pr
        nbr_p[rows, cols] = pp
        # class steps per (router, input port, network output port); 0 at local inputs
        cstep = np.zeros((n, R + self.p_max, R), dtype=np.int8)
        cstep[:, :R, :] = self.routing.class_steps(dtype=np.int8)
        # the class of each VC and the VC range of each class (the VC policy's table)
        policy = self.routing.vc_policy.for_vcs(self.params.vcs, self.vc_classes)
        vcls = np.asarray(policy.vc_class_table(), dtype=np.int64)
        crange = np.asarray(policy.class_ranges(), dtype=np.int64)
        unused = np.zeros((1, 1), dtype=np.int64)
        if self.arith:
            ar, dist, nexthop = arith_unit(self.net), np.zeros((1, 1), dtype=np.uint8), unused
        else:
            ar, dist, nexthop = engine.no_arith(), _routing_distances(self.routing, net), unused
            if (dist == 255).any():
                raise ParameterError("network: not connected")
            if self.mode == engine.NEXTHOP:
                nexthop = _NEXTHOP.get(self.routing)
                if nexthop is None:                 # once per routing: a sweep's points share it
                    nexthop = _NEXTHOP[self.routing] = polarstar_nexthop_table(self.routing, n)
        minport = np.zeros((1, 1), dtype=np.uint64)
        if uses_minimal_ports(n, R, self.arith, self.routing_name):
            minport = _MINPORT.get(net)
            if minport is None:                     # once per network: a sweep's points share it
                minport = _MINPORT[net] = engine.minimal_ports(nbr_r, dist)
        pen = getattr(self.routing, "_pen", None)
        pen = np.asarray(pen if pen is not None else np.zeros(5), dtype=np.int64)
        eps = net.endpoints.astype(np.int64)
        ep_first = np.concatenate([[0], np.cumsum(eps)])
        ep_router = np.repeat(np.arange(n), eps)
        return engine.Tables(nbr_r=nbr_r, nbr_p=nbr_p, cstep=cstep, vcls=vcls, crange=crange, dist=dist,
                             minport=minport, nexthop=nexthop, pen=pen, ep_first=ep_first, ep_router=ep_router, ar=ar)

    @staticmethod
    def _routing_params(routing, V, B):
        kw = {"vcs": V}
        if routing == "polarized":
            kw["buffer_depth"] = B
        return kw

    def _alloc_packets(self, cap):
        old = getattr(self, "pk_src", None)
        fill = {"pk_inter": -1, "pk_next": -1, "pk_done": -1, "pk_phase": 1}
        for name, dtype in PACKET_FIELDS.items():
            arr = np.full(cap, fill.get(name, 0), dtype=dtype)
            if old is not None:
                arr[:self.num_packets] = getattr(self, name)[:self.num_packets]
            setattr(self, name, arr)
        s = np.zeros((cap, self.samples_k), dtype=np.int64)
        if old is not None:
            s[:self.num_packets] = self.samples[:self.num_packets]
        self.samples = s

    def expected_packets(self, cycles: int) -> int:
        """Packets the Bernoulli sources create in `cycles` cycles: mean + 6 sigma + 1024."""
        return _expected_packets(self.load / self.params.packet_flits, int(self.active.sum()), cycles)

    def reserve(self, cycles: int) -> None:
        """Make the packet tables hold the packets of `cycles` more cycles, in one allocation (a
        run that grows them by doubling holds the old and the new tables at once)."""
        need = self.num_packets + len(self._pending) + self.expected_packets(cycles)
        if need > len(self.pk_src):
            self._alloc_packets(need)

    def _alloc_garbage(self, cap):
        fill = {"g_next": -1, "g_sent": -1, "g_drop": -1}
        for name in ("g_ep", "g_kind", "g_time", "g_next", "g_sent", "g_drop"):
            arr = np.full(cap, fill.get(name, 0), dtype=np.int64)
            old = getattr(self, name, None)
            if old is not None:
                arr[:self.num_garbage] = old[:self.num_garbage]
            setattr(self, name, arr)

    def garbage_kinds(self) -> tuple[str, ...]:
        """The garbage kinds the flit layout of this network can carry (contract.flit.flit_layout):
        `bad_dst` needs a destination value >= N in the `dst` field, `bad_ep` an endpoint index
        >= p (the largest endpoint count, the RTL router's p) in `dst_ep`."""
        from contract.flit import index_bits       # here: contract.flit imports amaranth (~0.5 s)

        n = self.net.num_routers
        kinds = []
        if n < (1 << index_bits(n)):
            kinds.append("bad_dst")
        if self.p_max < (1 << index_bits(self.p_max)):
            kinds.append("bad_ep")
        return tuple(kinds) + ("body", "tail")

    def add_garbage(self, endpoints, cycles, kinds) -> np.ndarray:
        """Schedule garbage flits (endpoint, creation cycle >= now, kind: a name of
        `engine.GARBAGE_KINDS` or its index); returns their ids. Kinds:

        * `bad_dst`: a head whose destination router is >= N;
        * `bad_ep`: a head whose destination endpoint index is >= p (no router has it);
        * `body`: a body flit (head = tail = 0) following no head;
        * `tail`: a tail flit (head = 0, tail = 1) following no head.

        The endpoint sends a due garbage flit in the first cycle in which it is not in the middle of
        a packet (so never inside one), before starting its next packet, on the VC with the most
        credits (ties: lowest), when that VC has a credit; one flit per cycle, garbage in order of
        (cycle, id). The router drops it by the RTL's rule (`dropped`, `g_drop`)."""
        endpoints, cycles = (np.atleast_1d(np.asarray(a, dtype=np.int64)) for a in (endpoints, cycles))
        names = engine.GARBAGE_KINDS
        kinds = np.atleast_1d(np.asarray(kinds))
        if kinds.dtype.kind in "US":
            bad = [k for k in kinds.tolist() if k not in names]
            if bad:
                raise ParameterError(f"kinds: {bad[0]!r} unknown; allowed: {', '.join(names)}")
            kinds = np.array([names.index(k) for k in kinds.tolist()], dtype=np.int64)
        kinds = kinds.astype(np.int64)
        if len(kinds) == 1 and len(endpoints) > 1:
            kinds = np.repeat(kinds, len(endpoints))
        if not len(endpoints) == len(cycles) == len(kinds):
            raise ParameterError("endpoints, cycles, kinds: must have the same length")
        if len(kinds) and (kinds.min() < 0 or kinds.max() >= len(names)):
            raise ParameterError(f"kinds: must be in 0..{len(names) - 1} ({', '.join(names)})")
        allowed = self.garbage_kinds()
        for k in set(kinds.tolist()):
            if names[k] not in allowed:
                raise ParameterError(f"kinds: {names[k]!r} is not representable in this network's flit layout "
                                     f"(allowed: {', '.join(allowed)})")
        if len(endpoints) and (endpoints.min() < 0 or endpoints.max() >= self.E):
            raise ParameterError(f"endpoints: endpoint ids must be in 0..{self.E - 1}")
        if len(cycles) and cycles.min() < self.cycle:
            raise ParameterError(f"cycles: garbage must be created at cycle >= {self.cycle}")
        k = len(endpoints)
        first = self.num_garbage
        if first + k > len(self.g_ep):
            self._alloc_garbage(max(2 * len(self.g_ep), first + k))
        ids = np.arange(first, first + k, dtype=np.int64)
        self.g_ep[ids], self.g_time[ids], self.g_kind[ids] = endpoints, cycles, kinds
        self.num_garbage += k
        self._g_pending = np.concatenate([self._g_pending, ids])
        self._g_routers.update(self.ep_router[endpoints].tolist())
        return ids

    def _due_garbage(self, t0, t1):
        """Garbage created in cycles [t0, t1), sorted by (cycle, id)."""
        if not len(self._g_pending):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        tm = self.g_time[self._g_pending]
        due = tm < t1
        ids = self._g_pending[due]
        self._g_pending = self._g_pending[~due]
        ids = ids[np.lexsort((ids, self.g_time[ids]))]
        return self.g_time[ids].copy(), ids

    def add_packets(self, src, dst, cycles) -> None:
        """Schedule explicit packets (source endpoint, destination endpoint, creation cycle >= now),
        in addition to the Bernoulli traffic."""
        src, dst, cycles = (np.atleast_1d(np.asarray(a, dtype=np.int64)) for a in (src, dst, cycles))
        for name, a in (("src", src), ("dst", dst)):
            if len(a) and (a.min() < 0 or a.max() >= self.E):
                raise ParameterError(f"{name}: endpoint ids must be in 0..{self.E - 1}")
        if len(cycles) and cycles.min() < self.cycle:
            raise ParameterError(f"cycles: packets must be created at cycle >= {self.cycle}")
        self._pending = np.concatenate([self._pending, np.stack([cycles, src, dst], axis=1)])

    def _generate(self, t0, t1):
        """Packets created in cycles [t0, t1): Bernoulli(load/L) per active endpoint per cycle,
        plus scheduled ones (scheduled first within a cycle)."""
        L = self.params.packet_flits
        prob = self.load / L
        act = np.nonzero(self.active)[0]
        if prob > 0:
            hits = self.rng.random((t1 - t0, len(act))) < prob
            tt, ee = np.nonzero(hits)
        else:
            tt, ee = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        src = act[ee]
        dst = self.pattern.destinations(src, self.rng) if len(src) else src
        due = (self._pending[:, 0] >= t0) & (self._pending[:, 0] < t1)
        if due.any():
            extra = self._pending[due]
            self._pending = self._pending[~due]
            tt = np.concatenate([extra[:, 0] - t0, tt])
            src = np.concatenate([extra[:, 1], src])
            dst = np.concatenate([extra[:, 2], dst])
            order = np.argsort(tt, kind="stable")
            tt, src, dst = tt[order], src[order], dst[order]
        k = len(src)
        first = self.num_packets
        if first + k > len(self.pk_src):
            self._alloc_packets(max(2 * len(self.pk_src), first + k))
        ids = np.arange(first, first + k)
        self.pk_src[ids] = src
        self.pk_dst[ids] = dst
        self.pk_ctime[ids] = t0 + tt
        if self.mode in (engine.VALIANT, engine.UGAL):
            draws = self.rng.integers(self.net.num_routers, size=(k, self.samples_k))
            self.samples[ids] = draws
            if self.mode == engine.VALIANT:
                self.pk_inter[ids] = draws[:, 0]
                self.pk_phase[ids] = 0
        self.num_packets += k
        return (t0 + tt).astype(np.int64), ids.astype(np.int64)

    def run(self, cycles: int, chunk: int = 500, progress=None, skip: int = -1) -> None:
        """Advance `cycles` cycles; raises DeadlockDetected (watchdog) or RuntimeError (bad ejection).
        `skip`: a router simulated outside the model (see `sim.external`)."""
        p = self.params
        if skip >= 0 and skip in self._g_routers:
            raise ParameterError(f"skip={skip}: garbage is scheduled at this router's endpoints; an external "
                                 "router does not take garbage")
        end = self.cycle + cycles
        if end > MAX_CYCLE:
            raise ParameterError(f"cycles: a run ends by cycle {MAX_CYCLE} (packet times are int32)")
        # at most GEN_DRAWS Bernoulli draws per chunk: the same chunks as asked on small networks
        chunk = max(1, min(chunk, GEN_DRAWS // max(1, len(self.active))))
        blocks = blocks_for(self.threads, self.net.num_routers, cycles)
        while self.cycle < end:
            t1 = min(end, self.cycle + chunk)
            gt, gp = self._generate(self.cycle, t1)
            ggt, ggp = self._due_garbage(self.cycle, t1)
            world = engine.World(links=self.links, endpoints=self.endpoints,
                                 packets=engine.Packets(**{f: getattr(self, f) for f in engine.Packets._fields}),
                                 garbage=engine.Garbage(**{f: getattr(self, f) for f in engine.Garbage._fields}),
                                 arrivals=engine.Arrivals(gen_time=gt, gen_pk=gp, ggen_time=ggt, ggen_id=ggp),
                                 obs=self.obs)
            status, t = self._run_cycles(t1, world, skip, blocks)
            if status == engine.DEADLOCK:
                raise DeadlockDetected(f"deadlock: no flit moved for {p.watchdog} cycles with "
                                       f"{self.in_flight} flits in flight (cycle {t}, routing {self.routing_name}, "
                                       f"{p.vcs} VCs)")
            if status == engine.BAD_EJECT:
                raise RuntimeError(f"cycle {t}: a flit was ejected at the wrong endpoint or out of order")
            if status == engine.STALE_NOMINATION:
                raise RuntimeError(f"cycle {t}: a switch allocator nomination was no longer eligible")
            if progress:
                progress(t1 - self.cycle)
            self.cycle = t1

    def _run_cycles(self, t1, world, skip, k):
        """The engine up to cycle t1: in k blocks of routers on `self.threads` threads, or serially
        (one block, or a router simulated outside the model)."""
        if k == 1 or skip >= 0:
            return engine.run_cycles(self.cycle, t1, self.config, self.tables, self.routers, world,
                                     engine.new_scratch(self.P, self.params.vcs), skip)
        if self._blocks is None:
            self._blocks = engine.new_blocks(self.tables.ep_first, self.P, self.params.vcs, self.links.a_cnt.shape[0],
                                             (self.obs.trace.shape[0] > 0, self.obs.etrace.shape[0] > 0), k)
        numba.set_num_threads(self.threads)
        return engine.run_cycles_parallel(self.cycle, t1, self.config, self.tables, self.routers, world,
                                          self._blocks, skip)

    def stop_injection(self):
        self.load = 0.0

    def stop_sources(self) -> int:
        """No new packets, and every endpoint sends nothing after the packet it is in the middle
        of: what waits in the source queues is abandoned (never injected), so a run beyond
        saturation drains in about a network latency. Returns the packets abandoned."""
        self.stop_injection()
        self._pending = self._pending[:0]
        L = self.params.packet_flits
        started = self.q_sent > 0
        unsent_started = int((L - self.q_sent[started]).sum())
        abandoned = (self.queued_flits - unsent_started) // L
        heads = self.q_head
        self.pk_next[heads[started]] = -1
        self.q_head[:] = np.where(started, heads, -1)
        self.q_tail[:] = self.q_head
        self.abandoned_packets += abandoned
        return abandoned

    # ---- observations ---------------------------------------------------------------------------
    @property
    def injected_flits(self) -> int:
        return int(self.counters[0])

    @property
    def ejected_flits(self) -> int:
        return int(self.counters[1])

    @property
    def in_flight(self) -> int:
        return self.injected_flits - self.ejected_flits

    @property
    def dropped(self) -> int:
        """Malformed flits dropped by the routers (the RTL's `dropped`, summed over routers)."""
        return int(self.counters[4])

    @property
    def garbage_sent(self) -> int:
        """Garbage flits the endpoints have sent into their routers."""
        return int(self.counters[5])

    def garbage(self):
        """Per garbage flit (by id): endpoint, kind (index into engine.GARBAGE_KINDS), creation
        cycle, cycle sent by the endpoint and cycle dropped (-1: not yet)."""
        k = self.num_garbage
        return {"endpoint": self.g_ep[:k], "kind": self.g_kind[:k], "created": self.g_time[:k],
                "sent": self.g_sent[:k], "dropped": self.g_drop[:k]}

    @property
    def queued_flits(self) -> int:
        """Flits still in source queues (created, not yet injected)."""
        created = (self.num_packets - self.abandoned_packets) * self.params.packet_flits
        return created - self.injected_flits

    def ejections(self) -> list[Ejection]:
        return [Ejection(*map(int, row)) for row in self.trace[:self.trace_len[0]]]

    def packets(self):
        k = self.num_packets
        return {"src": self.pk_src[:k], "dst": self.pk_dst[:k], "created": self.pk_ctime[:k],
                "done": self.pk_done[:k], "hops": self.pk_hops[:k], "eseq": self.pk_eseq[:k]}


# The engine's arrays by their flat names (sim.credits, sim.a_cnt, ...: sim.external and the tests
# read them): read-only properties over the fields of the structures that hold them.
for _path, _struct in (("tables", engine.Tables), ("routers.inputs", engine.InputUnits),
                       ("routers.va", engine.VCAllocator), ("routers.sa", engine.SwitchAllocator),
                       ("routers.outputs", engine.OutputUnits), ("links", engine.Links),
                       ("endpoints", engine.Endpoints), ("obs", engine.Observed)):
    for _name in _struct._fields:
        setattr(NetworkSim, _name, property(attrgetter(f"{_path}.{_name}"), doc=f"engine state: {_path}.{_name}"))


_NEXTHOP: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()    # routing -> its next-hop table (read-only)
# network -> its minimal-port mask (read-only): it depends on the network alone (its ports and BFS
# distances), not on the routing or the VC count, which a sweep's points vary
_MINPORT: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _routing_distances(routing, net: Network) -> np.ndarray:
    """The BFS distance matrix of `net`: the routing's own (table routings hold it), else BFS."""
    oracle = getattr(routing, "oracle", None)
    dist = getattr(oracle, "dist", None)
    n = net.num_routers
    if getattr(oracle, "net", None) is net and isinstance(dist, np.ndarray) and dist.shape == (n, n):
        return dist
    return distance_matrix(net)


def uses_minimal_ports(n: int, R: int, arith: bool, routing: str) -> bool:
    """Whether the engine gets a `minimal_ports` table: with the distance table, up to
    MINPORT_ROUTERS routers (8 bytes per pair) and 64 network ports, for the routings that
    choose among minimal ports (not `polarstar`: one next hop); else the VC choice checks a
    distance per port."""
    return not arith and n <= MINPORT_ROUTERS and R <= 64 and routing != "polarstar"


def polarstar_nexthop_table(routing, n: int) -> np.ndarray:
    """(n, n) next-hop port of the arithmetic PolarStar unit (its exact memoization for speed)."""
    from routing_logic.base import StateArrays

    table = np.zeros((n, n), dtype=np.int64)
    for c in range(n):
        t = np.arange(n)
        st = StateArrays.make(t, t)
        idx, port, _, _ = routing.candidates_batch(np.full(n, c), st)
        table[c, t[idx]] = port
    return table


def uses_arithmetic(net: Network, routing: str = "min", routing_obj=None) -> bool:
    """Whether the engine computes distances and next hops with the arithmetic PolarStar unit:
    above DENSE_ROUTERS routers, on an intact PolarStar it supports (and for `polarstar`, its
    single next hop); other networks of that size are refused (their n x n tables)."""
    n = net.num_routers
    if n <= DENSE_ROUTERS:
        return False
    single = getattr(routing_obj, "paths", "single") == "single"
    if not (supports_arithmetic(net) and single):
        raise ParameterError(f"network: {n} routers; the simulator takes up to {DENSE_ROUTERS}, or an intact "
                             "PolarStar (iq, paley or complete supernode) of any size")
    return True


def arith_unit(net: Network) -> engine.Arith:
    """The engine's compact tables of `net`'s arithmetic PolarStar unit (routing_logic.polarstar):
    per pair of ER_q vertices their relation, common neighbour and port; per supernode pair the
    distance and first port. Built from the unit's own functions, a block of rows at a time."""
    unit = PolarStarArithmetic(net.structure)
    ne = unit.n_er
    rel = np.zeros((ne, ne), dtype=np.int8)
    w = np.zeros((ne, ne), dtype=np.int32)
    port = np.full((ne, ne), -1, dtype=np.int16)
    y = np.arange(ne)[None, :]
    for x0 in range(0, ne, 64):
        x = np.arange(x0, min(ne, x0 + 64))[:, None]
        same, adj, ww, qx = unit._er(x, y)
        rel[x0:x0 + len(x)] = np.where(same, 2, np.where(adj, 1, 0))
        w[x0:x0 + len(x)] = ww
        link = adj | (same & qx)                  # an ER neighbour, or the quadric's own loop
        pt = np.where(link, unit.er_port(*np.broadcast_arrays(x, y)), -1)
        port[x0:x0 + len(x)] = pt
    quad = (unit.er.dot(unit.er.vector(np.arange(ne)), unit.er.vector(np.arange(ne))) == 0).astype(np.int8)
    return engine.Arith(m=int(unit.m), dp=int(unit.dp), inv=int(bool(unit.involution)), er_rel=rel, er_w=w,
                        er_port=port, quad=quad, f=unit.f.astype(np.int32), f_inv=unit.f_inv.astype(np.int32),
                        sd=unit.sn_dist.astype(np.int8), sp=unit.sn_port.astype(np.int16))


def _ring(params: RouterParams) -> int:
    """Slots of the delay lines: more than the longest flit or credit latency."""
    return max(params.link_latency + params.st_stage, params.credit_latency) + 1


def _expected_packets(prob: float, sources: int, cycles: int) -> int:
    mean = prob * sources * cycles
    return int(mean + 6 * np.sqrt(mean) + 1024)


def estimate_bytes(net: Network, params: RouterParams, cycles: int = 0, load: float = 0.0,
                   arith: bool = False, routing: str = "min") -> dict:
    """Bytes a NetworkSim of `net` allocates (router state, delay lines, tables, endpoints) and,
    for a run of `cycles` cycles at `load`, its packet table: computed from the shapes, before
    anything is allocated (`arith`: no n x n tables; else the distances, and for `polarstar`
    its next hops). Values in bytes by part, and 'total'."""
    n, E = net.num_routers, net.num_endpoints
    R, p = int(net.ports.max()), int(net.endpoints.max())
    P, V = R + p, params.vcs
    per_packet = sum(np.dtype(t).itemsize for t in PACKET_FIELDS.values()) + 8    # + a UGAL sample
    pair_bytes = 1 + (8 if routing == "polarstar" else 0)      # distances, and next hops
    out = {
        # (the VC classes do not size the state)
        "routers": engine.state_bytes(n, engine.make_config(params, MODES[routing], R, P, classes=1)),
        "links": _ring(params) * (n * P + E + 1) * 4 * 8,
        "tables": n * R * 8 * 2 + n * P * R + n * R * R + (0 if arith else n * n * pair_bytes)
                  + (n * n * 8 if uses_minimal_ports(n, R, arith, routing) else 0),
        "endpoints": E * (V + 6) * 8 + E * 8 * 4,
        "packets": _expected_packets(load / params.packet_flits, E, cycles) * per_packet,
    }
    out["total"] = sum(out.values())
    return out


def check_memory(net: Network, params: RouterParams, cycles: int = 0, load: float = 0.0,
                 arith: bool = False, routing: str = "min") -> dict:
    """`estimate_bytes`, or a one-line ParameterError when it exceeds `available_memory()`."""
    est = estimate_bytes(net, params, cycles, load, arith, routing)
    avail = available_memory()
    if est["total"] > avail:
        gb = 1e9
        raise ParameterError(f"network: {net.num_routers:,} routers need ~{est['total'] / gb:.1f} GB for the simulator "
                             f"(state {(est['total'] - est['packets']) / gb:.1f} GB, packets {est['packets'] / gb:.1f} GB); "
                             f"{max(avail, 0) / gb:.1f} GB available: fewer cycles, a lower load or a smaller network")
    return est
