"""Board-independent FPGA tops: traffic generators and checkers around the RTL, UART-controlled.

All tops are `wiring.Component`s with `uart_rx: In(1)`, `uart_tx: Out(1)`, `leds: Out(8)` and
the constructor `(net, routing, params, *, ..., seeds=None)`; the UART protocol and the
report frame are in `fpga.status`. LEDs of the traffic tops: 0 running, 1 a flit in error
since the last clear, 2 the routers dropped a flit, 3 a generator backlog overflowed since the
last clear (the Python model is then no longer exact), 4 heartbeat (clock / 2^24), 5 flit
activity (stretched), 6 a report is being sent, 7 toggles on every received UART byte.

* `NetworkTrafficTop`: the whole network (`hdl.network.NetworkTop`, one `Router` per router
  with constants, `shared=False`), a `TrafficGenerator` and a `TrafficChecker` on every endpoint.
  Report entry e = endpoint e.
* `RouterTrafficTop`: ONE router (`router=`, default 0), built as `NetworkTop.make_router`
  builds it (its routing unit is the topology's real one; with a minimal unit, no u-turn paths).
  Local ports: endpoint generators and ejection checkers as above. Network input port i: an
  emulated neighbour (the router at the far end of port i) sending packets from random source
  routers to random routers other than itself (with a minimal unit, only those whose route at
  this router does not lead back to it), with random hops (1 or 2), inter and phase header
  fields (`fpga.traffic`), under credit flow control; network output port i: a sink that accepts
  every flit and returns its credit on credit_in the next cycle (with back-pressure 'B' b it
  holds a credit back with probability b/256 per cycle) and a checker (payload, contiguity
  per output VC, dst, hops, inter, phase). Unconnected ports get no generator. Report entry i
  = port i. Every router input is driven by LFSR-based logic and every output field reaches a
  checked counter, so synthesis keeps the whole router.
* `RoutingUnitTop`: one router's routing unit alone, from query registers to a signature register
  (the unit's own area and Fmax, for the arithmetic-vs-table comparison of `pstar fpga sweep`);
  LEDs show the signature of its answers, the UART is idle.
"""
from __future__ import annotations

import numpy as np
from amaranth.hdl import Cat, Const, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hdl.checks import quiet_on_error
from hdl.delay import delay_line, register
from hdl.network import NetworkTop, plan
from hdl.router import credit_signature, flit_signature
from contract.params import FLIT_FORMAT, HEADER, RouterParams
from routing_logic.base import RouteState
from topologies.network import Network

from .build import FpgaConfig
from .status import StatusBlock
from .traffic import (BERN_STEPS, GeneratorModel, NeighbourModel, TrafficChecker, TrafficGenerator,
                      default_seeds, every_router_but, lfsr_logic, seed_pair)
from .uart import UARTRx, UARTTx, check_divisor

HEARTBEAT_BITS = 24
ACTIVITY_BITS = 20


def _check_common(net, params, seeds, count):
    if not isinstance(net, Network):
        raise TypeError(f"net={net!r}: must be a topologies.network.Network")
    if not isinstance(params, RouterParams):
        raise TypeError(f"params={params!r}: must be a contract.params.RouterParams")
    if params.payload_bits < 1:
        raise ValueError(f"params.payload_bits={params.payload_bits}: the checkers need at least 1 payload bit")
    if seeds is None:
        return default_seeds(count)
    seeds = list(seeds)
    if len(seeds) != count:
        raise ValueError(f"seeds: {len(seeds)} given, {count} needed (one per generator)")
    for s in seeds:
        seed_pair(s)
    return seeds


def registered_flit(m: Module, flit, name: str):
    """(valid, flit) of the stream `flit` one cycle later, from flip-flops: where a router's flit
    output (combinational from its registers) meets checker or sink logic, so that logic starts at
    a register and a build times the router, not the harness."""
    return delay_line(m, flit.valid, flit.payload.as_value(), 1, name)


class _TrafficTop(wiring.Component):
    """What both tops share: UART, status block, counters to the report, LEDs."""

    def _setup(self, divisor, E):
        self.divisor = check_divisor(divisor)
        self.E = E
        self.control = StatusBlock(E)
        self.uart_in = UARTRx(divisor)
        self.uart_out = UARTTx(divisor)
        super().__init__({"uart_rx": In(1, init=1), "uart_tx": Out(1, init=1), "leds": Out(8)})

    def _wire_common(self, m, dropped, activity):
        """generators / checkers: lists of E (None for a missing generator)."""
        st = self.control
        m.submodules.control = st
        m.submodules.uart_in = self.uart_in
        m.submodules.uart_out = self.uart_out
        m.d.comb += self.uart_in.rx.eq(self.uart_rx)
        wiring.connect(m, self.uart_in.data, st.rx)
        wiring.connect(m, st.tx, self.uart_out.data)
        # the routers' drop count reaches the report and LED 2 a cycle late: it is their sum, from
        # every router across the chip, and ends here at a register
        dropped_q = Signal(32)
        m.d.sync += dropped_q.eq(dropped)
        m.d.comb += [self.uart_tx.eq(self.uart_out.tx), st.dropped.eq(dropped_q)]
        # LEDs 1 and 3: a flit in error, a packet lost to a full backlog, since the last clear
        any_err, any_ovf = Signal(name="any_error"), Signal(name="any_overflow")
        errors, losses = [], []
        for i in range(self.E):
            g, c = self.generators[i], self.checkers[i]
            # the error flag a cycle later, from a flip-flop: the checker's payload compare ends
            # there, not in the counters
            err_q = register(m, c.error, f"chk{i}_error_q")
            errors.append(err_q)
            sent = Const(0)
            if g is not None:
                m.submodules[f"gen{i}"] = g
                m.d.comb += [g.ctl.eq(st.ctl), g.corrupt.eq(st.corrupt & (st.corrupt_index == i))]
                sent = g.tail_sent
                # a lost packet sets LED 3 a cycle later, from a flip-flop: read directly, `lost`
                # (from the generator's `create` register) pulled that register from the send
                # logic by the router towards this block (a generator's `create` to its backlog,
                # across the die, the target's longest path at seeds 3 and 4)
                losses.append(register(m, g.lost, f"gen{i}_lost_q"))
            m.submodules[f"chk{i}"] = c
            m.d.comb += st.events[i].eq(Cat(err_q, c.tail, sent))
        with m.If(st.ctl.clear):
            m.d.sync += [any_err.eq(0), any_ovf.eq(0)]
        with m.Else():
            m.d.sync += [any_err.eq(any_err | Cat(*errors).any()), any_ovf.eq(any_ovf | Cat(*losses, Const(0)).any())]
        beat = Signal(HEARTBEAT_BITS)
        act = Signal(ACTIVITY_BITS)
        rx_toggle = Signal()
        m.d.sync += beat.eq(beat + 1)
        with m.If(activity):
            m.d.sync += act.eq(-1)
        with m.Elif(act != 0):
            m.d.sync += act.eq(act - 1)
        with m.If(self.uart_in.data.valid):
            m.d.sync += rx_toggle.eq(~rx_toggle)
        m.d.comb += self.leds.eq(Cat(st.ctl.running, any_err, dropped_q != 0, any_ovf, beat[-1], act != 0,
                                      st.reporting, rx_toggle))


class NetworkTrafficTop(_TrafficTop):
    """A whole network with traffic on every endpoint (see the module docstring).

    Members besides the ports: `network` (NetworkTop), `generators[e]`, `checkers[e]`,
    `control` (StatusBlock), `E`, `seeds`, `layout`, `model()` -> GeneratorModel.
    """

    @quiet_on_error
    def __init__(self, net: Network, routing: str, params: RouterParams, *, divisor: int, seeds=None,
                 routing_obj=None, registered_draws: bool = True, header: str = HEADER.default,
                 body_block_bits=0, flit: str = FLIT_FORMAT.default, registered_fronts: bool = True,
                 ecp5_muxes: bool = False):
        check_divisor(divisor)
        seeds = _check_common(net, params, seeds, net.num_endpoints)
        if net.num_endpoints < 2:
            raise ValueError(f"net: {net.num_endpoints} endpoint(s); traffic needs at least 2")
        # the drop sum registered at every level: the report and LED 2 see it a few cycles late,
        # and it no longer crosses the chip in one cycle (net26's critical path at some seeds)
        self.network = NetworkTop(net, routing, params, shared=False, routing_obj=routing_obj, header=header,
                                  body_block_bits=body_block_bits, flit=flit, registered_fronts=registered_fronts,
                                  registered_drop_sum=True, ecp5_muxes=ecp5_muxes)
        top = self.network
        self.net, self.params, self.seeds, self.layout = net, params, seeds, top.layout
        E = top.E
        eps = net.endpoints.astype(np.int64)
        first = top.ep_first
        self.ep_router = np.repeat(np.arange(net.num_routers), eps)
        self.ep_local = np.arange(E) - first[self.ep_router]
        self.generators = [TrafficGenerator(top.layout, params, kind="endpoint", seed=seeds[e],
                                            router=int(self.ep_router[e]), ep=int(self.ep_local[e]), e=e, E=E,
                                            num_routers=net.num_routers, ep_router=self.ep_router,
                                            ep_local=self.ep_local, registered_draws=registered_draws)
                           for e in range(E)]
        self.checkers = [TrafficChecker(top.layout, params, mode="eject", router=int(self.ep_router[e]),
                                        ep=int(self.ep_local[e]), num_routers=net.num_routers, p=top.p)
                         for e in range(E)]
        self._setup(divisor, E)

    def model(self) -> GeneratorModel:
        return GeneratorModel(self.E, self.seeds)

    def elaborate(self, platform):
        m = Module()
        top = self.network
        m.submodules.network = top
        activity = Const(0)
        for e in range(self.E):
            g, c = self.generators[e], self.checkers[e]
            wiring.connect(m, g.flit, top.inject[e])
            m.d.comb += [g.credit.valid.eq(top.credit[e].valid), g.credit.payload.eq(top.credit[e].payload)]
            # an ejected flit is registered before its checker, as RouterTrafficTop registers the
            # router's outputs
            v, d = registered_flit(m, top.eject[e], f"eject{e}")
            m.d.comb += [c.flit.valid.eq(v), c.flit.payload.eq(d)]
            activity = activity | v
        self._wire_common(m, top.dropped, activity)
        return m


class NetworkSink(wiring.Component):
    """A live downstream router for one network output: accepts every flit and returns its
    credit (one per cycle, lowest VC first) from the next cycle on, unless the stall LFSR holds
    it back this cycle (probability stall/256)."""

    def __init__(self, layout, params: RouterParams, seed: int):
        self.params, self.seed = params, seed_pair(seed)[1]
        super().__init__({"flit": In(flit_signature(layout)), "credit": Out(credit_signature(params.vcs)),
                          "stall": In(8)})

    def elaborate(self, platform):
        m = Module()
        V, B = self.params.vcs, self.params.depth
        pending = [Signal(range(B + 1), name=f"pending{v}") for v in range(V)]
        lfsr = Signal(32, init=self.seed)
        m.d.sync += lfsr.eq(lfsr_logic(lfsr, BERN_STEPS))
        hold = lfsr[:8] < self.stall
        ret = Signal()
        ret_vc = Signal(range(V))
        for v in reversed(range(V)):
            with m.If(pending[v] != 0):
                m.d.comb += ret_vc.eq(v)
        any_pending = Const(0)
        for v in range(V):
            any_pending = any_pending | (pending[v] != 0)
        m.d.comb += [ret.eq(any_pending & ~hold), self.credit.valid.eq(ret), self.credit.payload.eq(ret_vc)]
        fl = self.flit
        for v in range(V):
            inc = fl.valid & (fl.payload.vc == v)
            dec = ret & (ret_vc == v)
            with m.If(inc & ~dec):
                m.d.sync += pending[v].eq(pending[v] + 1)
            with m.Elif(dec & ~inc):
                m.d.sync += pending[v].eq(pending[v] - 1)
        return m


class RouterTrafficTop(_TrafficTop):
    """One router with traffic on all its ports (see the module docstring).

    Members besides the ports: `router` (hdl.router.Router), `router_id`, `R`, `P`, `E` (= P),
    `generators[i]` (None on unconnected ports), `checkers[i]`, `sinks[i]` (network ports),
    `neighbours[i]` (router at the far end of port i, -1 if none), `control`, `seeds`,
    `model()` -> GeneratorModel of the local generators, `neighbour_model()` -> NeighbourModel.
    """

    @quiet_on_error
    def __init__(self, net: Network, routing: str, params: RouterParams, *, divisor: int, seeds=None,
                 router: int = FpgaConfig.router, routing_obj=None, registered_draws: bool = True, header: str = HEADER.default,
                 body_block_bits: int = 0, flit: str = FLIT_FORMAT.default, registered_fronts: bool = True,
                 ecp5_muxes: bool = False):
        check_divisor(divisor)
        if not isinstance(router, int) or isinstance(router, bool) or not 0 <= router < net.num_routers:
            raise ValueError(f"router={router!r}: must be a router id in 0..{net.num_routers - 1}")
        eps = net.endpoints.astype(np.int64)
        if eps.min() != eps.max() or eps.min() < 1:
            raise ValueError("net: RouterTrafficTop needs the same number (>= 1) of endpoints on every router")
        # the router as a network builds it: with a minimal unit, without u-turn paths, and its
        # emulated neighbours then send no head whose route here leads back to them
        self.plan = plan(net, routing, params, routing_obj=routing_obj, header=header, body_block_bits=body_block_bits,
                         flit=flit, registered_fronts=registered_fronts, ecp5_muxes=ecp5_muxes)
        R, p = self.plan.R, self.plan.p
        P = R + p
        seeds = _check_common(net, params, seeds, P)
        self.net, self.params, self.seeds, self.layout = net, params, seeds, self.plan.layout
        self.router_id, self.R, self.P, self.p = router, R, P, p
        self.router = self.plan.make_router(router)
        n = net.num_routers
        peer_r, _ = net.peer_table()
        base, nports = int(net.offsets[router]), int(net.ports[router])
        self.neighbours = [int(peer_r[base + i]) if i < nports else -1 for i in range(R)]
        first = int(self.plan.ep_first[router])
        ep_router = np.repeat(np.arange(n), eps)
        ep_local = np.arange(net.num_endpoints) - self.plan.ep_first[ep_router]
        lay = self.layout
        self.dsts = [None if nb < 0 else self._destinations(i, nb) for i, nb in enumerate(self.neighbours)]
        gens = []
        for i in range(R):
            nb = self.neighbours[i]
            gens.append(None if nb < 0 else TrafficGenerator(lay, params, kind="neighbour", seed=seeds[i], router=router,
                                                             E=net.num_endpoints, num_routers=n, neighbour=nb, p=p,
                                                             registered_draws=registered_draws, dsts=self.dsts[i]))
        for k in range(p):
            gens.append(TrafficGenerator(lay, params, kind="endpoint", seed=seeds[R + k], router=router, ep=k,
                                         e=first + k, E=net.num_endpoints, num_routers=n, ep_router=ep_router,
                                         ep_local=ep_local, registered_draws=registered_draws))
        self.generators = gens
        self.checkers = ([TrafficChecker(lay, params, mode="network", router=router, num_routers=n, p=p, strict=True)
                          for _ in range(R)] +
                         [TrafficChecker(lay, params, mode="eject", router=router, ep=k, num_routers=n, p=p, strict=True)
                          for k in range(p)])
        self.sinks = [NetworkSink(lay, params, seeds[i] ^ 0x5BD1E995 or 1) for i in range(R)]
        self._setup(divisor, P)

    def _destinations(self, i: int, nb: int) -> list[int]:
        """The routers the neighbour at port i sends to: every router but itself, or, when the
        router has no u-turn paths (a minimal unit), those whose route here does not take port i
        back (a head it could send in a network: one on a shortest path through this router)."""
        if self.router.uturns:
            return every_router_but(nb, self.net.num_routers)
        me, routing = self.router_id, self.plan.routing
        return [d for d in range(self.net.num_routers) if d != nb and
                all(c.port != i for c in routing.route(me, RouteState(me, d, 0)))]

    def model(self) -> GeneratorModel:
        first = int(self.plan.ep_first[self.router_id])
        return GeneratorModel(self.net.num_endpoints, self.seeds[self.R:],
                              endpoints=[first + k for k in range(self.p)])

    def neighbour_model(self) -> NeighbourModel:
        ports = [i for i in range(self.R) if self.neighbours[i] >= 0]
        return NeighbourModel([self.seeds[i] for i in ports], ports, [self.neighbours[i] for i in ports],
                              self.router_id, self.net.num_routers, self.p, [self.dsts[i] for i in ports])

    def elaborate(self, platform):
        m = Module()
        rt = self.router
        m.submodules.router = rt
        activity = Const(0)
        # The router's flit outputs are combinational from its registers (the contract's one-cycle
        # link): in a network they end in the next router's input register, so they do here too,
        # before any checker or sink logic, and the build times the router, not the harness.
        out_v, out_d = zip(*[registered_flit(m, rt.flit_out[i], f"out{i}") for i in range(self.P)])
        for i in range(self.P):
            g, c = self.generators[i], self.checkers[i]
            if g is not None:
                wiring.connect(m, g.flit, rt.flit_in[i])
                # the credit's way back takes credit_latency - 1 registers, as in a network (the
                # upstream router's input registers, or hdl.network's on an endpoint's link)
                cv, cd = delay_line(m, rt.credit_out[i].valid, rt.credit_out[i].payload,
                                    self.params.credit_latency - 1, f"cr{i}")
                m.d.comb += [g.credit.valid.eq(cv), g.credit.payload.eq(cd)]
            m.d.comb += [c.flit.valid.eq(out_v[i]), c.flit.payload.eq(out_d[i])]
            activity = activity | out_v[i]
        for i, s in enumerate(self.sinks):
            m.submodules[f"sink{i}"] = s
            m.d.comb += [s.flit.valid.eq(out_v[i]), s.flit.payload.eq(out_d[i]),
                         s.stall.eq(self.control.stall)]
            wiring.connect(m, s.credit, rt.credit_in[i])
        self._wire_common(m, rt.dropped, activity)
        return m


class RoutingUnitTop(wiring.Component):
    """One router's routing unit alone, for its area and Fmax (`--design unit`).

    `router` = an id: the unit `RouterTrafficTop` puts in that router (`NetworkTop.unit_for`; the
    arithmetic unit with its id tied off, a table unit as a ROM of that router's rows), as the
    FPGA network builds it. `router` = None: the generic unit of a router whose id is an input
    (one design for every router): the arithmetic unit reads the id, a table unit is a RAM
    written through its `load` port. In the generic top the id and the load port come from
    registers loaded from LFSRs, so nothing about them is known to synthesis.

    The unit has the router's P lanes (one per input port). Each lane's query comes from a
    register loaded from free-running LFSRs (one step per cycle). The answers of all lanes are
    XOR-folded into a 32-bit rotating signature (`misr`) whose low bits drive the LEDs, so every
    answer bit reaches a pin and synthesis keeps the whole unit; the timed paths are query
    register -> unit -> fold (1-2 LUT levels) -> signature. The answers are not registered on
    their own: Yosys would merge such a register into a table unit's memory (a synchronous read
    port, block RAM), which the router's unit is not. The queries are raw LFSR bits, so some name
    routers >= n; synthesis cannot know that, so the logic is the unit's full logic.
    Members: `unit`, `lanes`, `queries[l]` (registers), `answers[l]` (the unit's outputs), `misr`,
    and for the generic top `router_reg` and `load_reg` (valid + payload of the load port, or None).
    """

    @quiet_on_error
    def __init__(self, net: Network, routing: str, params: RouterParams, *, router: int | None = FpgaConfig.router,
                 routing_obj=None, seeds=None):
        if router is not None and (not isinstance(router, int) or isinstance(router, bool)
                                   or not 0 <= router < net.num_routers):
            raise ValueError(f"router={router!r}: must be None or a router id in 0..{net.num_routers - 1}")
        self.plan = plan(net, routing, params, routing_obj=routing_obj)
        self.router_id = router
        self.lanes = self.plan.R + self.plan.p
        self.unit = self.plan.unit_for(router)(self.lanes)
        u = self.unit
        self.queries = [Signal(u.query_layout, name=f"query{lane}") for lane in range(self.lanes)]
        self.answers = [Signal(u.answer_layout, name=f"answer{lane}") for lane in range(self.lanes)]
        regs = list(self.queries)
        self.router_reg = self.load_reg = None
        if router is None:
            self.router_reg = Signal(len(u.router), name="router_id")
            regs.append(self.router_reg)
            if u.loadable:
                self.load_reg = Signal(1 + u.load_layout.size, name="load")
                regs.append(self.load_reg)
        self._regs = regs
        self._words = [(len(Value.cast(r)) + 31) // 32 for r in regs]
        self.seeds = _check_common(net, params, seeds, sum(self._words))
        self.misr = Signal(32, name="misr")
        super().__init__({"uart_rx": In(1, init=1), "uart_tx": Out(1, init=1), "leds": Out(8)})

    def elaborate(self, platform):
        m = Module()
        u = self.unit
        m.submodules.unit = u
        seeds = iter(self.seeds)
        for i, (reg, words) in enumerate(zip(self._regs, self._words)):
            states = []
            for k in range(words):
                st = Signal(32, init=next(seeds), name=f"lfsr{i}_{k}")
                m.d.sync += st.eq(lfsr_logic(st, 1))
                states.append(st)
            m.d.sync += reg.eq(Cat(*states)[:len(Value.cast(reg))])
        if self.router_reg is None:
            m.d.comb += u.router.eq(self.router_id)
        else:
            m.d.comb += u.router.eq(self.router_reg)
        if self.load_reg is not None:
            m.d.comb += [u.load.valid.eq(self.load_reg[0]), u.load.payload.eq(self.load_reg[1:])]
        fold = Const(0, 32)
        for lane in range(self.lanes):
            a = self.answers[lane]
            m.d.comb += [u.query[lane].eq(self.queries[lane]), a.eq(u.answer[lane])]
            bits = a.as_value()
            for k in range(0, len(bits), 32):
                fold = fold ^ bits[k:k + 32]
        sig = self.misr
        m.d.sync += sig.eq(Cat(sig[31], sig[:31]) ^ fold)
        m.d.comb += [self.leds.eq(sig[:8]), self.uart_tx.eq(1)]
        return m


__all__ = ["NetworkTrafficTop", "RouterTrafficTop", "RoutingUnitTop", "NetworkSink"]
