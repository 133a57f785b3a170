"""`NetworkSim`: a Network + routing + router parameters, run cycle by cycle by `sim.engine`.

Python owns set-up, packet generation (Bernoulli per endpoint per cycle, destinations from the
traffic pattern, all drawn from one seeded Generator in chunks so runs are reproducible), the
measurement windows and the checks; the compiled engine owns the cycles.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from routing_logic.registry import make_routing
from topologies.distances import distance_matrix
from topologies.errors import ParameterError
from topologies.network import Network

from . import engine
from .params import RouterParams
from .traffic import make_pattern

MODES = {"min": engine.MIN, "polarstar": engine.NEXTHOP, "polarized": engine.POLARIZED,
         "valiant": engine.VALIANT, "ugal": engine.UGAL}
MAX_ROUTERS = 20_000


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
                 traffic: str = "uniform", load: float = 0.1, seed: int = 1, trace: int = 0, routing_obj=None):
        if routing not in MODES:
            raise ParameterError(f"routing={routing!r}: unknown; allowed: {', '.join(MODES)}")
        if not isinstance(load, (int, float)) or not 0 <= load <= 1:
            raise ParameterError(f"load={load!r}: must be in 0..1 flits/cycle/endpoint")
        if net.num_routers > MAX_ROUTERS:
            raise ParameterError(f"network: {net.num_routers} routers; the simulator takes up to {MAX_ROUTERS}")
        if net.num_endpoints < 1:
            raise ParameterError("p: the network has no endpoints (use -p P)")
        self.net, self.params, self.load, self.seed = net, params, float(load), seed
        self.routing_name = routing
        self.rng = np.random.default_rng(seed)
        V, B, L = params.vcs, params.depth, params.packet_flits
        # routing_logic decides the VC need and checks deadlock freedom of (routing, VCs)
        self.routing = routing_obj or make_routing(routing, net, **self._routing_params(routing, V, B))
        if self.routing.num_vcs > V:
            raise ParameterError(f"vcs={V}: routing {routing} needs at least {self.routing.num_vcs} VCs on this network")
        self.mode = MODES[routing]
        self.vc_classes = self.routing.vc_policy.num_classes     # routing_logic owns the VC policy
        n = net.num_routers
        R = int(net.ports.max())
        self.R = R
        pr, pp = net.peer_table()
        self.nbr_r = np.full((n, R), -1, dtype=np.int64)
        self.nbr_p = np.full((n, R), -1, dtype=np.int64)
        rows = net.port_router.astype(np.int64)
        cols = np.arange(len(net.peer)) - net.offsets[rows]
        self.nbr_r[rows, cols] = pr
        self.nbr_p[rows, cols] = pp
        self.dist = distance_matrix(net)
        if (self.dist == 255).any():
            raise ParameterError("network: not connected")
        if self.mode == engine.NEXTHOP:
            self.nexthop = polarstar_nexthop_table(self.routing, n)
        else:
            self.nexthop = np.zeros((1, 1), dtype=np.int64)
        pen = getattr(self.routing, "_pen", None)
        self.pen = np.asarray(pen if pen is not None else np.zeros(5), dtype=np.int64)
        eps = net.endpoints.astype(np.int64)
        self.p_max = int(eps.max())
        self.ep_first = np.concatenate([[0], np.cumsum(eps)])
        self.E = int(self.ep_first[-1])
        self.ep_router = np.repeat(np.arange(n), eps)
        self.pattern = make_pattern(traffic, net, self.rng)
        self.active = self.pattern.active()
        P = R + self.p_max
        self.P = P
        self.f_pkt = np.zeros((n, P, V, B), dtype=np.int32)
        self.f_seq = np.zeros((n, P, V, B), dtype=np.int16)
        self.f_head = np.zeros((n, P, V), dtype=np.int64)
        self.f_cnt = np.zeros((n, P, V), dtype=np.int64)
        self.alloc_o = np.full((n, P, V), -1, dtype=np.int64)
        self.alloc_w = np.full((n, P, V), -1, dtype=np.int64)
        self.owner = np.full((n, P, V), -1, dtype=np.int64)
        self.credits = np.full((n, P, V), B, dtype=np.int64)
        self.va_ptr = np.zeros((n, P, V), dtype=np.int64)
        self.in_ptr = np.zeros((n, P), dtype=np.int64)
        self.out_ptr = np.zeros((n, P), dtype=np.int64)
        self.ep_credit = np.full((self.E, V), B, dtype=np.int64)
        self.ep_vc = np.zeros(self.E, dtype=np.int64)
        self.q_head = np.full(self.E, -1, dtype=np.int64)
        self.q_tail = np.full(self.E, -1, dtype=np.int64)
        self.q_sent = np.zeros(self.E, dtype=np.int64)
        self.router_flits = np.zeros(n, dtype=np.int64)
        ring = max(params.link_latency, params.credit_latency) + 1
        cap = n * P + self.E + 1
        self.a_cnt = np.zeros(ring, dtype=np.int64)
        self.a_r, self.a_p, self.a_v, self.a_pkt, self.a_seq = (np.zeros((ring, cap), dtype=np.int64) for _ in range(5))
        self.c_cnt = np.zeros(ring, dtype=np.int64)
        self.c_r, self.c_p, self.c_v = (np.zeros((ring, cap), dtype=np.int64) for _ in range(3))
        self.counters = np.zeros(5, dtype=np.int64)
        self.eject_hist = np.zeros(64, dtype=np.int64)
        self.trace = np.zeros((trace, 4), dtype=np.int64)
        self.trace_len = np.zeros(1, dtype=np.int64)
        self.samples_k = getattr(self.routing, "samples", 1)
        self.num_packets = 0
        self._pending = np.zeros((0, 3), dtype=np.int64)
        self._alloc_packets(1024)
        self.cycle = 0

    @staticmethod
    def _routing_params(routing, V, B):
        kw = {"vcs": V}
        if routing == "polarized":
            kw["buffer_depth"] = B
        return kw

    def _alloc_packets(self, cap):
        old = getattr(self, "pk_src", None)
        names = ["pk_src", "pk_dst", "pk_ctime", "pk_hops", "pk_inter", "pk_phase", "pk_decided", "pk_next",
                 "pk_eseq", "pk_done"]
        fill = {"pk_inter": -1, "pk_next": -1, "pk_done": -1, "pk_phase": 1}
        for name in names:
            arr = np.full(cap, fill.get(name, 0), dtype=np.int64)
            if old is not None:
                arr[:self.num_packets] = getattr(self, name)[:self.num_packets]
            setattr(self, name, arr)
        s = np.zeros((cap, self.samples_k), dtype=np.int64)
        if old is not None:
            s[:self.num_packets] = self.samples[:self.num_packets]
        self.samples = s

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
        end = self.cycle + cycles
        while self.cycle < end:
            t1 = min(end, self.cycle + chunk)
            gt, gp = self._generate(self.cycle, t1)
            status, t = engine.run_cycles(
                self.cycle, t1, self.mode, self.R, p.vcs, p.depth, p.packet_flits, p.link_latency,
                p.credit_latency, p.watchdog, self.vc_classes, p.alloc_iters, self.nbr_r, self.nbr_p, self.dist, self.nexthop, self.pen,
                self.ep_first, self.ep_router, self.f_pkt, self.f_seq, self.f_head, self.f_cnt, self.alloc_o,
                self.alloc_w, self.owner, self.credits, self.va_ptr, self.in_ptr, self.out_ptr, self.ep_credit, self.ep_vc,
                self.q_head, self.q_tail, self.q_sent, self.router_flits, self.pk_src, self.pk_dst, self.pk_ctime,
                self.pk_hops, self.pk_inter, self.pk_phase, self.pk_decided, self.pk_next, self.pk_eseq,
                self.pk_done, self.samples, gt, gp, len(gt), self.a_cnt, self.a_r, self.a_p, self.a_v,
                self.a_pkt, self.a_seq, self.c_cnt, self.c_r, self.c_p, self.c_v, self.counters,
                self.eject_hist, self.trace, self.trace_len, skip)
            if status == engine.DEADLOCK:
                raise DeadlockDetected(f"deadlock: no flit moved for {p.watchdog} cycles with "
                                       f"{self.in_flight} flits in flight (cycle {t}, routing {self.routing_name}, "
                                       f"{p.vcs} VCs)")
            if status == engine.BAD_EJECT:
                raise RuntimeError(f"cycle {t}: a flit was ejected at the wrong endpoint or out of order")
            if progress:
                progress(t1 - self.cycle)
            self.cycle = t1

    def stop_injection(self):
        self.load = 0.0

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
    def queued_flits(self) -> int:
        """Flits still in source queues (created, not yet injected)."""
        created = self.num_packets * self.params.packet_flits
        return created - self.injected_flits

    def ejections(self) -> list[Ejection]:
        return [Ejection(*map(int, row)) for row in self.trace[:self.trace_len[0]]]

    def packets(self):
        k = self.num_packets
        return {"src": self.pk_src[:k], "dst": self.pk_dst[:k], "created": self.pk_ctime[:k],
                "done": self.pk_done[:k], "hops": self.pk_hops[:k], "eseq": self.pk_eseq[:k]}


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
