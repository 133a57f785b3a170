"""The input-queued VC router of docs/microarchitecture.md, cycle for cycle with `sim.engine`,
composed of its stages (BookSim's `IQRouter` split, one component per file):

  input unit (per port)  link registers, route computation, VC buffers, malformed-flit drops
                         (`input_unit.InputUnit`, with the routing unit's lane i)
  VC allocator           an output VC for each head (`vc_allocator.VCAllocator`)
  switch allocator       which VC of each port sends, which port each output takes
                         (`switch_allocator.SwitchAllocator`)
  switch traversal       the crossbar, st_stage cycles after allocation (`switch_traversal`)
  output unit            credits and ownership of the output VCs (`output_unit.OutputUnit`)

and the input VCs' allocation state (which output VC each holds), kept here between them.

Ports 0..R-1 are network ports, R..R+p-1 the local ports of the p endpoints. Per port and cycle:

  flit_in[i]    In   valid + flit (`contract.flit.flit_layout`, its `vc` field names the input VC)
  flit_out[o]   Out  valid + flit (vc = the output VC, hops + 1 on a head leaving on a network port
                     when the layout carries hops: `contract.flit.OPTIONAL_FIELDS`)
  credit_in[o]  In   valid + vc, network ports only (the endpoint sink never back-pressures)
  credit_out[i] Out  valid + vc: one buffer entry of input VC vc was freed this cycle
  dropped       Out  malformed flits dropped so far
  drops         Out  malformed flits dropped in the previous cycle (the last step of `dropped`):
                     what a network sums, a few bits per router instead of 32
  id            In   the router's own id (absent when `router_id` is given: a constant)

Timing (the contract's "one cycle"): every output is a function of registers only (no path from
an input to an output, so routers wire to each other without combinational loops); a flit or a
credit presented in cycle t is stored at the clock edge that ends t, i.e. visible from t + 1.
That is link_latency = credit_latency = 1; larger latencies add L - 1 input registers.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from contract.flit import index_bits
from contract.params import RouterParams

from ..arbiter import one_hot_index
from ..checks import quiet_on_error
from ..counter_flags import step_flags
from ..crossbar import front_fields, split_layout
from ..delay import register as _reg
from ..routing_units import RoutingUnit
from .classes import UP_INPUT, VCMap, class_of_vc
from .input_unit import InputUnit
from .output_unit import OutputUnit, credit_counters, credit_signature
from .switch_allocator import SwitchAllocator
from .switch_traversal import SwitchTraversal
from .vc_allocator import VCAllocator

FLIT_FIELDS = ("head", "tail", "vc", "src", "src_ep", "dst", "dst_ep", "hops", "inter", "phase", "seq",
               "packet", "payload")


def flit_signature(layout) -> stream.Signature:
    return stream.Signature(layout, always_ready=True)


def running_count(m: Module, step, name: str, width: int = 32):
    """The sum, mod 2^width, of a registered per-cycle increment `step` over the cycles so far: a
    register holding the earlier cycles' sum, plus `step` (the last cycle's). The same value in
    every cycle as adding each increment into a register, but its carry chain starts at
    registers. Router `dropped` and `NetworkTop.dropped` count this way."""
    earlier, now = Signal(width, name=f"{name}_earlier"), Signal(width, name=name)
    m.d.comb += now.eq(earlier + step)
    m.d.sync += earlier.eq(now)
    return now


@dataclasses.dataclass(frozen=True)
class RouterShape:
    """What every stage of one router is built from: its ports (R network, p local, P in all),
    V VCs in C classes (`vc_class[w]`), the parameters, the flit layout and its front fields,
    the routing unit's interface (and whether its routes name a single port), and the buffer
    options."""
    R: int
    p: int
    params: RouterParams
    layout: data.Layout
    num_routers: int
    C: int
    vc_class: tuple
    prio_bits: int
    escapes: bool
    query_layout: data.Layout
    answer_layout: data.Layout
    body_block_bits: int
    registered_fronts: bool
    single_port: bool = False        # the unit's masks have at most one bit (RoutingUnit.single_port)
    ecp5_muxes: bool = False         # the crossbar of ECP5 slice multiplexers (hdl.ecp5_mux)

    @property
    def P(self):
        return self.R + self.p

    @property
    def V(self):
        return self.params.vcs

    @property
    def front_fields(self):
        return front_fields(self.p)

    @property
    def id_bits(self):
        return index_bits(self.num_routers)


def _pos_int(name, v, lo=1):
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError(f"{name}={v!r}: must be an integer")
    if v < lo:
        raise ValueError(f"{name}={v!r}: must be >= {lo}")


def _check_classes(ports, V, vc_classes, class_step, vc_class):
    """(class_step, vc_class) checked and filled in."""
    if class_step is None:
        class_step = [[1] * ports for _ in range(ports)]
    if isinstance(class_step, str):
        if class_step != UP_INPUT:
            raise ValueError(f"class_step={class_step!r}: must be None, {UP_INPUT!r} or {ports} x {ports} steps")
    else:
        class_step = [[int(x) for x in row] for row in class_step]
        if len(class_step) != ports or any(len(row) != ports or not set(row) <= {0, 1} for row in class_step):
            raise ValueError(f"class_step: must be None, {UP_INPUT!r} or {ports} x {ports} steps of 0 or 1")
    if vc_class is None:
        vc_class = [class_of_vc(w, V, vc_classes) for w in range(V)]
    vc_class = [int(c) for c in vc_class]
    if len(vc_class) != V or sorted(vc_class) != vc_class or set(vc_class) != set(range(vc_classes)):
        raise ValueError(f"vc_class={vc_class}: must give each of the {V} VCs a class, non-decreasing, "
                         f"every class 0..{vc_classes - 1} used")
    return class_step, vc_class


class Router(wiring.Component):
    """One router; see the module docstring for ports and timing.

    ports: R network ports; endpoints: p local ports; params: RouterParams (V, B, alloc_iters,
    latencies); layout: the flit layout (`contract.flit.flit_layout`, either format); unit: a callable
    `unit(lanes) -> RoutingUnit`; num_routers: N (destinations >= N are malformed);
    vc_classes: C (`vc_classes_for`); router_id: a constant id, or None for an `id` input;
    class_step: R x R class steps (network input port, network output port) of the VC policy
    (`Routing.class_steps()[router]`), None for hop classes (every step 1), or `UP_INPUT` for turn
    classes read from an `up` input (the shared module of a network with turn classes: bit k set
    when network port k leads to a router of larger id, `NetworkPlan.up_of`); vc_class: the class
    of each VC (the VC policy's `vc_class_table()`), or None for `class_of_vc`; body_block_bits:
    how many bits of each input buffer's body go to block RAM (`hdl/buffer.py`; needs the switch
    traversal stage, st_stage >= 1; capped at the body's width; the same cycles either way);
    registered_fronts: each input VC's front in a register (`VCBuffer(registered_front=True)`, the
    faster router) or read from the port's LUTRAM (the smaller one); the same cycles either way.
    uturns: whether a head that came in by network port i may leave by port i; False leaves those
    output VCs out of its input VCs' allocation (`VCMap`), and with them the crossbar's and the
    allocators' paths from port i to port i. None: False when the unit's routes are minimal (a
    network of such routers never turns a head back), else True.
    ecp5_muxes: build the crossbar of the ECP5's slice multiplexers, selecting by a registered index
    (`hdl.ecp5_mux`; with a switch traversal stage and at most 8 inputs per output, else ignored):
    fewer LUTs, and a design that builds for the ECP5 only (the FPGA flow's choice, not the
    model's: the same cycles either way).
    """

    @quiet_on_error
    def __init__(self, ports: int, endpoints: int, params: RouterParams, layout: data.Layout,
                 unit: Callable[[int], RoutingUnit], num_routers: int, vc_classes: int,
                 router_id: int | None = None, class_step=None, vc_class=None, body_block_bits: int = 0,
                 registered_fronts: bool = True, uturns: bool | None = True, ecp5_muxes: bool = False):
        for name, v in (("ports", ports), ("endpoints", endpoints), ("num_routers", num_routers),
                        ("vc_classes", vc_classes)):
            _pos_int(name, v)
        if not isinstance(params, RouterParams):
            raise TypeError(f"params={params!r}: must be a contract.params.RouterParams")
        if not isinstance(layout, data.Layout) or any(f not in dict(layout) for f in FLIT_FIELDS):
            raise TypeError(f"layout={layout!r}: must be contract.flit.flit_layout(...)")
        if vc_classes > params.vcs:
            raise ValueError(f"vc_classes={vc_classes}: more classes than VCs ({params.vcs})")
        if router_id is not None and not (isinstance(router_id, int) and 0 <= router_id < num_routers):
            raise ValueError(f"router_id={router_id!r}: must be None or a router id in 0..{num_routers - 1}")
        if not callable(unit):
            raise TypeError(f"unit={unit!r}: must be a callable lanes -> RoutingUnit")
        self.class_step, self.vc_class = _check_classes(ports, params.vcs, vc_classes, class_step, vc_class)
        if not isinstance(body_block_bits, int) or isinstance(body_block_bits, bool) or body_block_bits < 0:
            raise ValueError(f"body_block_bits={body_block_bits!r}: must be an integer >= 0")
        if body_block_bits and not params.st_stage:
            raise ValueError(f"body_block_bits={body_block_bits}: block RAM reads take a cycle; needs st_stage >= 1")
        for name, v in (("registered_fronts", registered_fronts), ("ecp5_muxes", ecp5_muxes)):
            if not isinstance(v, bool):
                raise ValueError(f"{name}={v!r}: must be True or False")
        self.unit = unit(ports + endpoints)
        if not isinstance(self.unit, RoutingUnit):
            raise TypeError(f"unit: returned {self.unit!r}, not a RoutingUnit")
        if self.unit.ports != ports:
            raise ValueError(f"unit: has {self.unit.ports} ports, the router {ports}")
        self.registered_fronts = registered_fronts
        self.front_fields = front_fields(endpoints)
        self.body_block_bits = min(body_block_bits, split_layout(layout, self.front_fields)[1])
        self.R, self.p, self.P = ports, endpoints, ports + endpoints
        self.params, self.layout, self.num_routers, self.C = params, layout, num_routers, vc_classes
        self.router_id = router_id
        self.id_bits = index_bits(num_routers)
        self.shape = RouterShape(ports, endpoints, params, layout, num_routers, vc_classes, tuple(self.vc_class),
                                 self.unit.prio_bits, self.unit.escapes, self.unit.query_layout,
                                 self.unit.answer_layout, self.body_block_bits, registered_fronts,
                                 single_port=self.unit.single_port, ecp5_muxes=ecp5_muxes)
        if uturns is not None and not isinstance(uturns, bool):
            raise ValueError(f"uturns={uturns!r}: must be True, False or None")
        self.uturns = (not self.unit.minimal) if uturns is None else uturns
        self.vcmap = VCMap(ports, self.P, params.vcs, vc_classes, self.vc_class, self.class_step, self.uturns,
                           separable=bool(params.va_separable))
        # the output unit's counters, made here so that a formal harness can read them
        self.credit_counters = credit_counters(ports, params.vcs, params.depth)
        self.held_credit_error = None      # set by elaborate with the three-stage SA (_held_credits)
        self.traversal = None              # the SwitchTraversal stage, set by elaborate
        # None: the stages are submodules; else a `verilog_out.Parts` that makes each an instance
        # of a module written on its own (`to_verilog(..., flatten=True)`, the stages in parallel)
        self.parts = None
        V = params.vcs
        members = {
            "flit_in": In(flit_signature(layout)).array(self.P),
            "flit_out": Out(flit_signature(layout)).array(self.P),
            "credit_in": In(credit_signature(V)).array(ports),
            "credit_out": Out(credit_signature(V)).array(self.P),
            "dropped": Out(32),
            "drops": Out(range(2 * self.P + 1)),
        }
        if router_id is None:
            members["id"] = In(self.id_bits)
        if self.vcmap.dynamic:
            members["up"] = In(ports)
        if self.unit.loadable:
            members["load"] = In(stream.Signature(self.unit.load_layout, always_ready=True))
        super().__init__(members)

    def _add(self, m, name, component, key=None):
        """Add stage `component` to `m` as submodule `name` (or as an instance of a module of its
        own, `self.parts`, shared by the components of one `key`; not the output unit, whose
        counters the router reads); return it."""
        m.submodules[name] = self.parts.instance(name, component, key) if self.parts is not None else component
        return component

    def _stages(self, m):
        """The stage components, added to `m`: (inputs, VC allocator, switch allocator, traversal)."""
        shape = self.shape
        unit = self._add(m, "unit", self.unit)
        m.d.comb += unit.router.eq(Const(self.router_id, self.id_bits) if self.router_id is not None else self.id)
        if unit.loadable:
            wiring.connect(m, wiring.flipped(self.load), unit.load)
        inputs = []
        for i in range(self.P):
            iu = self._add(m, f"input{i}", InputUnit(shape), key=(InputUnit, shape))
            wiring.connect(m, wiring.flipped(self.flit_in[i]), iu.flit_in)
            wiring.connect(m, iu.credit_out, wiring.flipped(self.credit_out[i]))
            m.d.comb += [unit.query[i].eq(iu.query), iu.answer.eq(unit.answer[i]), iu.router_id.eq(unit.router)]
            inputs.append(iu)
        prm = self.params
        # the VC allocator reads the credits' count (occupancy) only to choose between VCs of a
        # class or ports of a route: with neither, the output unit keeps flags alone
        thermometer = self.C == prm.vcs and self.unit.single_port
        m.submodules.outputs = outs = OutputUnit(self.R, self.P, prm.vcs, prm.depth, prm.credit_latency, prm.sa_stages,
                                                 self.credit_counters, thermometer=thermometer)
        for o in range(self.R):
            wiring.connect(m, wiring.flipped(self.credit_in[o]), outs.credit_in[o])
        vca = self._add(m, "vc_alloc", VCAllocator(shape, self.vcmap))
        swa = self._add(m, "sw_alloc", SwitchAllocator(shape))
        st = self._add(m, "traversal", SwitchTraversal(shape, self._sources() if shape.ecp5_muxes else None))
        self.traversal = st
        for o in range(self.P):
            wiring.connect(m, st.flit_out[o], wiring.flipped(self.flit_out[o]))
        return inputs, vca, swa, st, outs

    def _sources(self) -> list[list[int]]:
        """Per output port the input ports whose VCs can hold one of its output VCs: the ones
        the switch allocator can grant it (all but itself at a network port without u-turns)."""
        V = self.params.vcs
        return [sorted({iv // V for w in range(V) for iv, _ in self.vcmap.holders.get((o, w), [])}) or
                list(range(self.P)) for o in range(self.P)]

    def _alloc_state(self, m, vca):
        """Each input VC's allocation: whether it holds an output VC, its VC, and which one (one-hot
        over `vcmap.ovcs_of[iv]`: the VA arbiters' grant bits, registered), so that the credit
        check, the output port it asks the switch for and the credit and ownership updates are
        AND-OR reductions of one-hot vectors instead of binary indices decoded on the switch
        allocator's path (docs/fpga_results_log.md). Returns (valid, w, one-hot, granted) per input VC."""
        P, V = self.P, self.params.vcs
        valid = [[Signal(name=f"alloc_valid_{i}_{v}") for v in range(V)] for i in range(P)]
        ws = [[Signal(index_bits(V), name=f"alloc_w_{i}_{v}") for v in range(V)] for i in range(P)]
        onehot, granted = [], []
        for iv, ovcs in enumerate(self.vcmap.ovcs_of):
            i, v = divmod(iv, V)
            oh = Signal(len(ovcs), name=f"alloc_oh_{i}_{v}")
            g = Signal(name=f"va_granted_{i}_{v}")
            won = Cat(*[vca.grant[i][v][o * V + w] for o, w in ovcs])
            m.d.comb += g.eq(vca.grant[i][v].any())
            with m.If(g):
                m.d.sync += [valid[i][v].eq(1), ws[i][v].eq(vca.grant_w[i][v]), oh.eq(won)]
            onehot.append(oh)
            granted.append((g, won))
        return valid, ws, onehot, granted

    def _held(self, oh, iv, table):
        """table[o][w] (a bit per output VC) at the output VC input VC iv holds."""
        return (oh[iv] & Cat(*[table[o][w] for o, w in self.vcmap.ovcs_of[iv]])).any()

    def _held_credits(self, m, oh, state, tables, sends):
        """Three-stage SA: each input VC's copy of the credit flags of the output VC it holds, so
        that its eligibility reads flip-flops instead of selecting the flags of the output VC it
        holds (three logic levels of the switch allocator's input stage on ECP5). Loaded when the
        VC wins an output VC, with that VC's flags as they step in this cycle: no flit leaves on an
        output VC nobody holds, so only a returning credit steps them. Then stepped as the output
        VC's own flags are (hdl.counter_flags.step_flags): up by a credit returning on it, down by
        a send on it, which only its holder, this VC, makes. All 0 while the VC holds no output
        VC (cleared when its tail leaves), so each flag implies the allocation. `held_credit_error`
        is 1 in a cycle where an allocated VC's copy differs from the flags it stands for, or a
        free VC's copy is not 0 (the lockstep tests check it is never set; synthesis drops it)."""
        P, V, R, k = self.P, self.params.vcs, self.R, self.params.sa_stages
        alloc_valid, granted = state
        cred_tables, returned = tables
        sent_oh, frees = sends
        credits = self.credit_counters
        inc = [[returned[o][w] if o < R else Const(0, 1) for w in range(V)] for o in range(P)]
        above_k = [[credits[o][w] > k if o < R else Const(1, 1) for w in range(V)] for o in range(P)]
        # the won output VC's flags after this cycle's step, a returning credit at most
        loaded = [[[Mux(inc[o][w], cred_tables[j - 1][o][w] if j else 1, cred_tables[j][o][w]) for w in range(V)]
                   for o in range(P)] for j in range(k)]
        held, errors = [], []
        for iv, ovcs in enumerate(self.vcmap.ovcs_of):
            i, v = divmod(iv, V)
            h = [Signal(name=f"held_credits_{i}_{v}_gt{j}") for j in range(k)]
            g, won = granted[iv]
            with m.If(frees[i][v] | ~(alloc_valid[i][v] | g)):
                m.d.sync += [h[j].eq(0) for j in range(k)]
            with m.Elif(g):
                m.d.sync += [h[j].eq(Cat(*[won[n] & loaded[j][o][w] for n, (o, w) in enumerate(ovcs)]).any())
                             for j in range(k)]
            with m.Else():
                step_flags(m, self._held(oh, iv, inc), sent_oh[i][v], h, self._held(oh, iv, above_k))
            truth = Cat(*[self._held(oh, iv, cred_tables[j]) for j in range(k)])
            errors.append(Mux(alloc_valid[i][v], Cat(*h) != truth, Cat(*h).any()))
            held.append(Cat(*h))
        self.held_credit_error = Signal(name="held_credit_error")
        m.d.comb += self.held_credit_error.eq(Cat(*errors).any())
        return held

    def _on(self, ow, bits, oh):
        """Whether the holder of output VC ow has its bit of `bits[i][v]` set: the VC that sends
        holds its output VC alone, so a flit leaves on (o, w) exactly when its holder sends."""
        V = self.params.vcs
        hs = self.vcmap.holders.get(ow, [])
        if not hs:
            return Const(0, 1)
        return (Cat(*[bits[iv // V][iv % V] for iv, _ in hs]) & Cat(*[oh[iv][k] for iv, k in hs])).any()

    def _connect_allocators(self, m, stages, alloc):
        """The VC allocator's requests and the switch allocator's inputs, from the input units and
        the allocation state; the three-stage SA's held credit flags. Returns the frees (a tail
        leaves: its VC gives up its output VC) per input port."""
        P, V, R = self.P, self.params.vcs, self.R
        inputs, vca, swa, _, outs = stages
        valid, ws, oh, granted = alloc
        cred_tables = [[[outs.credit_gt[o][w][j] if o < R else Const(1, 1) for w in range(V)] for o in range(P)]
                       for j in range(self.params.sa_stages)]
        frees = [Signal(V, name=f"frees_{i}") for i in range(P)]
        held = self._held_credits(m, oh, (valid, granted), (cred_tables, outs.returned), (swa.send, frees)) \
            if self.params.sa_stages == 3 else None
        for iv, ovcs in enumerate(self.vcmap.ovcs_of):
            i, v = divmod(iv, V)
            fr = inputs[i].front[v]
            # without u-turns the VA has no output VC of port i for port i's heads: bit i is not asked
            route = fr.mask if self.uturns or i >= R else fr.mask & ~(1 << i)
            m.d.comb += [vca.request[i][v].eq(inputs[i].count_gt[v][0] & ~valid[i][v] & fr.flit.head & ~fr.bad),
                         vca.route[i][v].eq(route), vca.eject[i][v].eq(fr.eject),
                         vca.dst_ep[i][v].eq(fr.flit.dst_ep if self.p > 1 else 0)]
            if self.shape.prio_bits:
                m.d.comb += vca.prio[i][v].eq(fr.prio)
            credit = held[iv] if held is not None else Cat(*[self._held(oh, iv, t) for t in cred_tables])
            m.d.comb += [swa.ready[i][v].eq(inputs[i].count_gt[v]), swa.tail[i][v].eq(fr.flit.tail),
                         swa.peek[i][v].eq(inputs[i].peek[v]), swa.credit[i][v].eq(credit),
                         swa.alloc_valid[i][v].eq(valid[i][v]),
                         swa.port[i][v].eq(Cat(*[Cat(*[oh[iv][k] for k, (o2, _) in enumerate(ovcs) if o2 == o]).any()
                                                 for o in range(P)]))]
        for i in range(P):
            m.d.comb += frees[i].eq(swa.send[i] & Cat(*[inputs[i].front[v].flit.tail for v in range(V)]))
            for v in range(V):
                with m.If(frees[i][v]):
                    m.d.sync += valid[i][v].eq(0)
        return frees

    def elaborate(self, platform):
        m = Module()
        P, V, R = self.P, self.params.vcs, self.R
        stages = self._stages(m)
        inputs, vca, swa, st, outs = stages
        alloc = self._alloc_state(m, vca)
        valid, ws, oh, _ = alloc
        frees = self._connect_allocators(m, stages, alloc)
        if self.vcmap.dynamic:
            m.d.comb += vca.up.eq(self.up)
        for o in range(P):
            m.d.comb += [vca.busy[o].eq(outs.busy[o]), outs.taken[o].eq(vca.taken[o]),
                         outs.released[o].eq(Cat(*[self._on((o, w), frees, oh) for w in range(V)]))]
            if o < R:
                m.d.comb += outs.sent[o].eq(Cat(*[self._on((o, w), swa.send, oh) for w in range(V)]))
                m.d.comb += [vca.occupancy[o][w].eq(outs.occupancy[o][w]) for w in range(V)]
            m.d.comb += [st.out_valid[o].eq(swa.out_valid[o]), st.out_sel[o].eq(swa.out_sel[o])]
        for i, iu in enumerate(inputs):
            read_v = one_hot_index(m, swa.read[i], V) if V > 1 else Const(0, 1)
            m.d.comb += [iu.alloc_valid.eq(Cat(*valid[i])), iu.send.eq(swa.send[i]), iu.read_vc.eq(read_v),
                         st.read[i].eq(swa.read[i]), st.body[i].eq(iu.body)]
            m.d.comb += [st.front[i][v].eq(iu.front[v].flit) for v in range(V)]
            m.d.comb += [st.vc[i][v].eq(ws[i][v]) for v in range(V)]
        # each port's drop and overflow bit is registered where it is made, and `drops` (the last
        # cycle's count) sums the registers: no adder tree gathers this cycle's bits from every
        # port's logic across the chip, and the carry chain of `dropped` starts at registers
        made = [_reg(m, b, f"drop_bit_{k}") for k, b in enumerate([iu.drop for iu in inputs] +
                                                                  [iu.overflow for iu in inputs])]
        m.d.comb += self.drops.eq(sum(made))
        m.d.comb += self.dropped.eq(running_count(m, self.drops, "drop_count"))
        return m


__all__ = ["FLIT_FIELDS", "Router", "RouterShape", "flit_signature", "running_count"]
