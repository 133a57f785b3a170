"""A whole `Network` as one top module: routers wired by the netlist, endpoints as streams.

`NetworkTop(net, routing, params, header=...)` (an Amaranth component, for use inside Amaranth
designs):

  inject[e]  In   endpoint e's flits into its router's local input port (credit flow control)
  eject[e]   Out  flits delivered to endpoint e (the sink always accepts)
  credit[e]  Out  credits of endpoint e's local input VCs, returned by the router
  load       In   (table routing) {router, addr, data}: writes one row of one router's table
  dropped    Out  malformed flits dropped, summed over the routers (one counter of the sum of
                  the routers' `drops`, equal to the sum of their `dropped` in every cycle; with
                  `registered_drop_sum=True` every level of the sum is registered and it equals
                  that sum `drop_lag` = ceil(log2 n) cycles earlier: for tops that only report it,
                  `fpga.tops`, so the sum does not cross the chip in one cycle)

The flit layout (`self.layout`, `contract.flit.flit_layout`) carries the optional header fields the
routing unit reads (`header="routing"`, the default: none for `min` and `polarstar`, the phase
bit for `polarized`) or all of them (`header="all"`: also the hop count and the Valiant
intermediate, which no unit reads; the hop count is then incremented on every network hop),
in every flit (`flit="wide"`, the default) or in head flits only (`flit="lean"`: the header
takes the payload bits of a head, `contract.flit.FLIT_FORMATS`).
`registered_fronts`: each input VC's front in a register (default) or read from LUTRAM (smaller;
`hdl/buffer.py`). `body_block_bits`: bits of each input buffer's body kept in block RAM (`hdl/buffer.py`; with the
switch traversal stage only), the same in every router or, with `shared=False`, one value per router.

Endpoint e of router r is `first[r] + k` (k-th local port, `R + k`), as in `sim`. Interface
timing: a flit or credit presented in cycle t is consumed at the edge ending t; with link /
credit latency L > 1 the eject and credit outputs pass L - 1 extra registers, so a flit sent to
endpoint e in cycle t arrives there at t + link_latency exactly as in the model.

One router module serves every router when `shared=True` (the default): the router's id is an
input tied to a constant at each instance (with turn classes its `up` input too, whose class
steps differ per router), table units get their rows through `load`, and the top is only
wiring, so the Verilog holds one copy of the router logic however large the network. `shared=False` elaborates one `Router` per router with its id and table contents as
constants (one module per router, for area studies).

`network_verilog(...)` writes a network as Verilog: the top (`top_verilog`, written as text
since it is only wiring and Amaranth cannot number the port bits of a top with thousands of
endpoints) plus the router module(s) from Amaranth. `packed=True` gathers the endpoint streams
into a few wide buses (co-simulation).
"""
from __future__ import annotations

import functools

import numpy as np
from amaranth.hdl import Cat, ClockSignal, Const, Instance, Module, ResetSignal, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from routing_logic.registry import make_routing
from contract.flit import HEADERS, OPTIONAL_FIELDS, index_bits, flit_layout
from contract.params import FLIT_FORMAT, HEADER, VC_POLICY, RouterParams
from topologies.errors import ParameterError
from topologies.network import Network

from .checks import quiet_on_error
from .delay import delay_line
from .router import Router, credit_signature, flit_signature, running_count, vc_classes_for
from .router.classes import UP_INPUT
from .routing_units import UNITS, make_unit, unit_reads
from .verilog_out import flat_verilog, ports_of, to_verilog

ROUTER_MODULE = "pstar_router"


def carried_fields(routing: str, header: str = HEADER.default) -> tuple:
    """The optional header fields (`contract.flit.OPTIONAL_FIELDS`) a flit of this network carries."""
    if header not in HEADERS:
        raise ParameterError(f"header={header!r}: must be one of {', '.join(HEADERS)}")
    if routing not in UNITS:
        raise ParameterError(f"routing={routing!r}: the RTL has units for {', '.join(UNITS)}")
    return OPTIONAL_FIELDS if header == "all" else unit_reads(routing)


def build_routing(net: Network, routing: str, params: RouterParams, vc_policy: str = VC_POLICY.default):
    """The routing_logic object the model uses for (net, routing, V, VC policy) (deadlock-checked)."""
    if routing not in UNITS:
        raise ParameterError(f"routing={routing!r}: the RTL has units for {', '.join(UNITS)}")
    kw = {"vcs": params.vcs, "vc_policy": vc_policy}
    if routing == "polarized":
        kw["buffer_depth"] = params.depth
    return make_routing(routing, net, **kw)


def _block_bits_per_router(bits, n: int, shared: bool) -> tuple:
    """`NetworkPlan`'s body_block_bits as one value per router: an integer for every router, or
    (shared=False: a module per router) a sequence of n integers."""
    if isinstance(bits, int) and not isinstance(bits, bool):
        per = (bits,) * n
    else:
        try:
            per = tuple(bits)
        except TypeError:
            raise ValueError(f"body_block_bits={bits!r}: must be an integer or one per router") from None
        if len(per) != n or any(not isinstance(b, int) or isinstance(b, bool) for b in per):
            raise ValueError(f"body_block_bits: {len(per)} values; must be {n} integers, one per router")
        if shared and len(set(per)) > 1:
            raise ValueError("body_block_bits: differs between routers, which needs shared=False (a module per router)")
    if min(per) < 0:
        raise ValueError(f"body_block_bits={min(per)}: must be >= 0")
    return per


class NetworkPlan:
    """What a network's RTL is made of, without its signals: the flit layout, the VC classes, the
    routing, the link table and the router prototype (`proto`). `NetworkTop` is the component
    built on it; the Verilog writer and the co-simulation need only this (creating the ports of
    the 1,064-router network's 5,320 endpoint streams took 10 s). `uturns`: the routers' (`Router`);
    None builds them without u-turns when the routing is minimal, as the network's own traffic
    needs; True keeps them for a router fed by other traffic (`fpga.tops.RouterTrafficTop`).
    `ecp5_muxes`: the routers' crossbars of ECP5 slice multiplexers (`Router`; FPGA builds)."""

    @quiet_on_error
    def __init__(self, net: Network, routing: str = "polarstar", params: RouterParams = RouterParams(),
                 routing_obj=None, shared: bool = True, module_name: str = ROUTER_MODULE, header: str = HEADER.default,
                 body_block_bits=0, flit: str = FLIT_FORMAT.default, registered_fronts: bool = True,
                 uturns: bool | None = None, ecp5_muxes: bool = False):
        if not isinstance(net, Network):
            raise TypeError(f"net={net!r}: must be a topologies.network.Network")
        if not isinstance(params, RouterParams):
            raise TypeError(f"params={params!r}: must be a contract.params.RouterParams")
        if net.num_endpoints < 1:
            raise ParameterError("p: the network has no endpoints")
        self.net, self.params, self.routing_name, self.shared = net, params, routing, bool(shared)
        self.routing = routing_obj if routing_obj is not None else build_routing(net, routing, params)
        self.module_name = module_name
        n = net.num_routers
        self.R = int(net.ports.max())
        self.p = int(net.endpoints.max())
        self.E = net.num_endpoints
        self.ep_first = np.concatenate([[0], np.cumsum(net.endpoints.astype(np.int64))])
        self.header, self.flit = header, flit
        self.block_bits_of = _block_bits_per_router(body_block_bits, n, self.shared)
        self.body_block_bits = max(self.block_bits_of)         # the prototype's
        self.registered_fronts = registered_fronts
        self.uturns = uturns
        self.ecp5_muxes = ecp5_muxes
        self.layout = flit_layout(n, self.p, params, carried_fields(routing, header), flit)
        self.C = vc_classes_for(self.routing, params.vcs)
        self.class_steps = self.routing.class_steps()
        self.up = self._up_inputs() if self.routing.vc_policy.name == "turns" else None
        # the class of each of the V VCs (the policy's table, with C capped at V)
        self.vc_class = self.routing.vc_policy.for_vcs(params.vcs, self.C).vc_class_table()
        self.unit_factory = functools.partial(make_unit, routing, net, routing=self._unit_routing())
        # the prototype (its ports name the Instance connections; shared mode emits it once)
        self.proto = self.make_router(None)
        self.proto._MustUse__silence = True         # elaborated only when written out (shared mode)
        self.proto.unit._MustUse__silence = True
        self.loadable = self.proto.unit.loadable

    def load_layout(self) -> data.StructLayout:
        """The payload of the `load` stream (loadable units): {router, addr, data}."""
        lay = self.proto.unit.load_layout
        return data.StructLayout({"router": index_bits(self.net.num_routers), "addr": lay["addr"].shape,
                                  "data": lay["data"].shape})

    def link_table(self) -> np.ndarray:
        """(n, R, 2) int64: the router and port that router r's network port k is wired to (both
        directions: its flits and credits in come from that port's flits and credits out), or
        (-1, -1) where the port is unused. The one wiring every network form follows (this
        component, `top_verilog`, the co-simulation netlist of cosim/netlist_main.cpp)."""
        net = self.net
        peer_r, peer_p = net.peer_table()
        table = np.full((net.num_routers, self.R, 2), -1, dtype=np.int64)
        for r in range(net.num_routers):
            base, nports = int(net.offsets[r]), int(net.ports[r])
            g = base + np.arange(nports)
            ok = peer_r[g] >= 0
            table[r, :nports][ok] = np.column_stack([peer_r[g], peer_p[g]])[ok]
        return table

    def endpoint_ports(self) -> np.ndarray:
        """(E, 2) int64: endpoint e's (router, local port R + k), e = ep_first[router] + k."""
        eps = self.net.endpoints.astype(np.int64)
        router = np.repeat(np.arange(self.net.num_routers), eps)
        return np.column_stack([router, self.R + np.arange(self.E) - self.ep_first[router]])

    def _unit_routing(self):
        return self.routing

    def unit_for(self, router_id):
        """`lanes -> RoutingUnit` of router `router_id` (None: the loadable / id-input prototype).
        The arithmetic unit takes the id as an input (tied to a constant by the router); the
        table units of a known router are ROMs of its rows."""
        if router_id is not None and self.routing_name != "polarstar":
            return functools.partial(make_unit, self.routing_name, self.net, router=router_id,
                                     routing=self._unit_routing())
        return self.unit_factory

    def make_router(self, router_id):
        """Router `router_id` (its id, table rows and class steps constants), or with None the
        shared module (an `id` input, and with turn classes an `up` input: `up_of`)."""
        if router_id is not None:
            steps = self.class_steps[router_id].tolist()
        else:
            steps = UP_INPUT if self.routing.vc_policy.name == "turns" else None
        bits = self.body_block_bits if router_id is None else self.block_bits_of[router_id]
        return Router(self.R, self.p, self.params, self.layout, self.unit_for(router_id), self.net.num_routers,
                      self.C, router_id, steps, self.vc_class, body_block_bits=bits,
                      registered_fronts=self.registered_fronts, uturns=self.uturns, ecp5_muxes=self.ecp5_muxes)

    def _up_inputs(self) -> list[int]:
        """Per router the shared module's `up` input (turn classes), from the VC policy's class
        steps: bit k is the step of a head that enters and leaves by network port k (1: port k
        leads to a router of larger id), and every step must be up[i] & up[o], the step the
        module works out (`TurnVC.class_step`)."""
        steps = self.class_steps.astype(bool)
        up = np.diagonal(steps, axis1=1, axis2=2)
        if not (steps == (up[:, :, None] & up[:, None, :])).all():
            raise ParameterError(f"vc_policy={self.routing.vc_policy.name}: its class steps are not "
                                 "up[i] & up[o], which the shared router module computes")
        return [sum(1 << int(k) for k in np.flatnonzero(row)) for row in up]

    def up_of(self, r: int) -> int:
        """The shared module's `up` input at router r (turn classes): bit k when network port k
        leads to a router of larger id."""
        return self.up[r]

    def table_rows(self, r: int) -> list[int]:
        """Rows of router r's routing table (what `load` must write), for loadable units."""
        return self.proto.unit.table_rows(r)



class NetworkTop(NetworkPlan, wiring.Component):
    """The network as one Amaranth component (ports in the module docstring)."""

    @quiet_on_error
    def __init__(self, net: Network, *args, registered_drop_sum: bool = False, **kwargs):
        NetworkPlan.__init__(self, net, *args, **kwargs)
        self.registered_drop_sum = bool(registered_drop_sum)
        self.drop_lag = (net.num_routers - 1).bit_length() if self.registered_drop_sum else 0
        members = {
            "inject": In(flit_signature(self.layout)).array(self.E),
            "eject": Out(flit_signature(self.layout)).array(self.E),
            "credit": Out(credit_signature(self.params.vcs)).array(self.E),
            "dropped": Out(32),
        }
        if self.loadable:
            members["load"] = In(stream.Signature(self.load_layout(), always_ready=True))
        wiring.Component.__init__(self, members)

    def elaborate(self, platform):
        m = Module()
        net, prm = self.net, self.params
        self.routers = []                 # shared=False: the `Router` of each router, for tests
        n, R, p = net.num_routers, self.R, self.p
        links = self.link_table()
        ports = ports_of(self.proto)
        sig = {}                                                   # (r, port name) -> Signal
        for r in range(n):
            for name, (proto_sig, _) in ports.items():
                if name in ("clk", "rst"):
                    continue
                sig[r, name] = Signal(len(proto_sig), name=f"r{r}__{name}")

        for r in range(n):
            for k in range(R):
                r2, k2 = (int(x) for x in links[r, k])
                if r2 >= 0:
                    m.d.comb += [
                        sig[r, f"flit_in__{k}__valid"].eq(sig[r2, f"flit_out__{k2}__valid"]),
                        sig[r, f"flit_in__{k}__payload"].eq(sig[r2, f"flit_out__{k2}__payload"]),
                        sig[r, f"credit_in__{k}__valid"].eq(sig[r2, f"credit_out__{k2}__valid"]),
                        sig[r, f"credit_in__{k}__payload"].eq(sig[r2, f"credit_out__{k2}__payload"]),
                    ]
            for k in range(p):
                port = R + k
                if k < int(net.endpoints[r]):
                    e = int(self.ep_first[r]) + k
                    m.d.comb += [sig[r, f"flit_in__{port}__valid"].eq(self.inject[e].valid),
                                 sig[r, f"flit_in__{port}__payload"].eq(self.inject[e].payload)]
                    ev, ed = delay_line(m, sig[r, f"flit_out__{port}__valid"], sig[r, f"flit_out__{port}__payload"],
                                        prm.link_latency - 1, f"ej{e}")
                    cv, cd = delay_line(m, sig[r, f"credit_out__{port}__valid"], sig[r, f"credit_out__{port}__payload"],
                                        prm.credit_latency - 1, f"cr{e}")
                    m.d.comb += [self.eject[e].valid.eq(ev), self.eject[e].payload.eq(ed),
                                 self.credit[e].valid.eq(cv), self.credit[e].payload.eq(cd)]
            if self.loadable:
                m.d.comb += [sig[r, "load__valid"].eq(self.load.valid & (self.load.payload.router == r)),
                             sig[r, "load__payload"].eq(Cat(self.load.payload.addr, self.load.payload.data))]

        drops = []
        for r in range(n):
            if self.shared:
                kw = {"i_clk": ClockSignal(), "i_rst": ResetSignal()}
                for name, (proto_sig, direction) in ports.items():
                    if name in ("clk", "rst"):
                        continue
                    if name in ("id", "up"):
                        kw[f"i_{name}"] = Const(r if name == "id" else self.up_of(r), len(proto_sig))
                        continue
                    prefix = "i_" if direction.value == "input" else "o_"
                    kw[prefix + name] = sig[r, name]
                m.submodules[f"router{r}"] = Instance(self.module_name, **kw)
            else:
                rt = self.make_router(r)
                self.routers.append(rt)
                m.submodules[f"router{r}"] = rt
                for name, (port_sig, direction) in ports_of(rt).items():
                    if name in ("clk", "rst"):
                        continue
                    if direction.value == "input":
                        m.d.comb += port_sig.eq(sig[r, name])
                    else:
                        m.d.comb += sig[r, name].eq(port_sig)
            drops.append(sig[r, "drops"])

        level = "sync" if self.registered_drop_sum else "comb"

        def add(a, b, name):
            s_ = Signal(len(a) + 1, name=name)
            m.d[level] += s_.eq(a + b)
            return s_

        def hold(a, name):              # a registered level's term without a partner
            s_ = Signal(len(a), name=name)
            m.d.sync += s_.eq(a)
            return s_
        # `dropped` = the sum of the routers' counters, kept as one count of their last steps: a
        # few bits per router cross the chip instead of 32
        step = balanced_sum(drops, add, hold if self.registered_drop_sum else None)
        m.d.comb += self.dropped.eq(running_count(m, step, "drop_total"))
        return m


def plan(net: Network, routing: str = "polarstar", params: RouterParams = RouterParams(), **kw) -> NetworkPlan:
    """The `NetworkPlan` of a network (layout, ports, VC classes, routing; no signals)."""
    return NetworkPlan(net, routing, params, **kw)


def balanced_sum(terms: list, add, hold=None):
    """The sum of `terms` as a balanced tree of `add(a, b, name)` (names drop_sum_{level}_{k}), a
    level's odd term passed on as `hold(term, name)` (as it is when None), ceil(log2 n) levels."""
    level = 0
    while len(terms) > 1:
        nxt = [add(terms[k], terms[k + 1], f"drop_sum_{level}_{k}") for k in range(0, len(terms) - 1, 2)]
        if len(terms) % 2:
            nxt.append(hold(terms[-1], f"drop_hold_{level}") if hold else terms[-1])
        terms, level = nxt, level + 1
    return terms[0]


def _vrange(width: int) -> str:
    return f"[{width - 1}:0] " if width > 1 else ""


def top_verilog(top: NetworkPlan, name: str = "pstar_network", packed: bool = False, module_of=None,
                routers=None) -> str:
    """The top module of `top` as Verilog text: only wiring, so it is written directly.

    (Amaranth numbers the bits of all top-level ports of a design with 16 bits, so a top with
    thousands of endpoint streams, e.g. the 1,064-router PS-IQ, cannot go through
    `amaranth.back.verilog`.) Ports as `NetworkTop`'s, named as Amaranth names them
    (`inject__{e}__payload`, ...); `packed=True` gathers them into buses instead (`inject_valid`,
    `inject_data`, `eject_valid`, `eject_data`, `credit_valid`, `credit_vc`, `load_valid`,
    `load_data`), endpoint e at slice e. `module_of(r)` names router r's module; `routers[r]`, when
    given, is that module's `Router` (one module per router: a constant id, so no `id` port, and
    a `load` port only if its unit is loadable), else every router is the shared prototype.
    """
    ports = {k: v for k, v in ports_of(top.proto).items() if k not in ("clk", "rst")}
    pins = _TopPins(top, packed)
    L = pins.declaration(name)
    n = top.net.num_routers
    for r in range(n):
        for pname, (sig, direction) in ports.items():
            if pname in ("id", "up"):
                continue
            L.append(f"  wire {_vrange(len(sig))}r{r}__{pname};")
    links = top.link_table()
    for r in range(n):
        L += _router_wiring(top, pins, r, links)
    idb = index_bits(n)
    module_of = module_of or (lambda r: top.module_name)
    for r in range(n):
        conns = [".clk(clk)", ".rst(rst)"]
        own = set(ports_of(routers[r])) if routers is not None else set(ports)
        for pname, (sig, direction) in ports.items():
            if pname not in own:
                continue
            if pname == "id":
                conns.append(f".id({idb}'d{r})")
            elif pname == "up":
                conns.append(f".up({top.R}'d{top.up_of(r)})")
            else:
                conns.append(f".{pname}(r{r}__{pname})")
        L.append(f"  {module_of(r)} router{r} ({', '.join(conns)});")
    L += _drop_total(n, len(ports["drops"][0]))
    L.append("endmodule")
    return "\n".join(L) + "\n"


class _TopPins:
    """The network top's ports, one by one (`inject__{e}__valid`, ...) or packed into buses
    (`inject_valid[e]`, ...), as `top_verilog` declares them and wires the routers to them."""

    def __init__(self, top: NetworkPlan, packed: bool):
        self.top, self.packed = top, packed
        self.W = top.layout.size
        self.vb = index_bits(top.params.vcs)
        self.lb = top.load_layout().size if top.loadable else 0

    def declaration(self, name: str) -> list[str]:
        """The module line and its port declarations."""
        E, W, vb, lb, packed = self.top.E, self.W, self.vb, self.lb, self.packed
        decl = ["input clk", "input rst"]
        if packed:
            decl += [f"input [{E - 1}:0] inject_valid", f"input [{E * W - 1}:0] inject_data",
                     f"output [{E - 1}:0] eject_valid", f"output [{E * W - 1}:0] eject_data",
                     f"output [{E - 1}:0] credit_valid", f"output [{E * vb - 1}:0] credit_vc"]
        else:
            for e in range(E):
                decl += [f"input inject__{e}__valid", f"input {_vrange(W)}inject__{e}__payload",
                         f"output eject__{e}__valid", f"output {_vrange(W)}eject__{e}__payload",
                         f"output credit__{e}__valid", f"output {_vrange(vb)}credit__{e}__payload"]
        if self.top.loadable:
            decl += ["input load_valid", f"input [{lb - 1}:0] load_data"] if packed else \
                ["input load__valid", f"input [{lb - 1}:0] load__payload"]
        decl.append("output [31:0] dropped")
        names = [d.split()[-1] for d in decl]
        return [f"module {name}({', '.join(names)});"] + [f"  {d};" for d in decl]

    def inject(self, e: int, what: str) -> str:
        if self.packed:
            return f"inject_valid[{e}]" if what == "valid" else f"inject_data[{(e + 1) * self.W - 1}:{e * self.W}]"
        return f"inject__{e}__{what}"

    def out(self, kind: str, e: int, what: str) -> str:
        """Endpoint e's `eject` or `credit` port, `valid` or `payload`."""
        if self.packed:
            W, vb = self.W, self.vb
            if kind == "eject":
                return f"eject_valid[{e}]" if what == "valid" else f"eject_data[{(e + 1) * W - 1}:{e * W}]"
            return f"credit_valid[{e}]" if what == "valid" else f"credit_vc[{(e + 1) * vb - 1}:{e * vb}]"
        return f"{kind}__{e}__{what}"

    def load(self) -> tuple[str, str]:
        return ("load_valid", "load_data") if self.packed else ("load__valid", "load__payload")


def _router_wiring(top: NetworkPlan, pins: _TopPins, r: int, links) -> list[str]:
    """Router r's inputs: its links from the routers it faces (tied off where none), its
    endpoints' injections and its `load` slice; its endpoints' ejections and credits, through
    link_latency - 1 and credit_latency - 1 registers."""
    net, prm, R, W, vb = top.net, top.params, top.R, pins.W, pins.vb
    L = []
    for k in range(R):
        r2, k2 = (int(x) for x in links[r, k])
        if r2 >= 0:
            for a, b in (("flit_in", "flit_out"), ("credit_in", "credit_out")):
                for f in ("valid", "payload"):
                    L.append(f"  assign r{r}__{a}__{k}__{f} = r{r2}__{b}__{k2}__{f};")
        else:
            for a in ("flit_in", "credit_in"):
                L.append(f"  assign r{r}__{a}__{k}__valid = 1'b0;")
                L.append(f"  assign r{r}__{a}__{k}__payload = 0;")
    for k in range(top.p):
        port = R + k
        if k < int(net.endpoints[r]):
            e = int(top.ep_first[r]) + k
            L.append(f"  assign r{r}__flit_in__{port}__valid = {pins.inject(e, 'valid')};")
            L.append(f"  assign r{r}__flit_in__{port}__payload = {pins.inject(e, 'payload')};")
            for kind, src, stages, width in (("eject", "flit_out", prm.link_latency - 1, W),
                                             ("credit", "credit_out", prm.credit_latency - 1, vb)):
                v, d = f"r{r}__{src}__{port}__valid", f"r{r}__{src}__{port}__payload"
                for st in range(stages):
                    nv, nd = f"{kind}{e}_v{st}", f"{kind}{e}_d{st}"
                    L.append(f"  reg {nv} = 1'b0;")
                    L.append(f"  reg {_vrange(width)}{nd} = 0;")
                    L.append(f"  always @(posedge clk) begin if (rst) {nv} <= 1'b0; else {nv} <= {v}; {nd} <= {d}; end")
                    v, d = nv, nd
                L.append(f"  assign {pins.out(kind, e, 'valid')} = {v};")
                L.append(f"  assign {pins.out(kind, e, 'payload')} = {d};")
        else:
            L.append(f"  assign r{r}__flit_in__{port}__valid = 1'b0;")
            L.append(f"  assign r{r}__flit_in__{port}__payload = 0;")
    if top.loadable:
        rb, lb = index_bits(net.num_routers), pins.lb
        lv, ld = pins.load()
        L.append(f"  assign r{r}__load__valid = {lv} && ({ld}[{rb - 1}:0] == {rb}'d{r});")
        L.append(f"  assign r{r}__load__payload = {ld}[{lb - 1}:{rb}];")
    return L


def _drop_total(n: int, drops_width: int) -> list[str]:
    """`dropped`: the routers' `drops` summed as a balanced tree each cycle, added into a
    register (as NetworkTop.elaborate's running_count)."""
    L = []
    width = {f"r{r}__drops": drops_width for r in range(n)}

    def add(a, b, name):
        width[name] = max(width[a], width[b]) + 1
        L.append(f"  wire [{width[name] - 1}:0] {name} = {a} + {b};")
        return name
    step = balanced_sum([f"r{r}__drops" for r in range(n)], add)
    return L + ["  reg [31:0] drop_total = 32'd0;", f"  wire [31:0] drop_now = drop_total + {step};",
                "  always @(posedge clk) begin if (rst) drop_total <= 32'd0; else drop_total <= drop_now; end",
                "  assign dropped = drop_now;"]


def network_verilog(net: Network, routing: str = "polarstar", params: RouterParams = RouterParams(),
                    shared: bool = True, packed: bool = False, name: str = "pstar_network",
                    routing_obj=None, header: str = HEADER.default, body_block_bits: int = 0,
                    flit: str = FLIT_FORMAT.default) -> tuple[str, NetworkPlan]:
    """Verilog of the whole network: the top (`top_verilog`) and the router module(s).

    shared=True: one module `pstar_router` for every router (id tied at each instance, table
    rows through `load`). shared=False: module `pstar_router_{r}` per router, with its id and
    table contents as constants (one elaboration per router: for area studies of small networks).
    Each router module is written flat (its stage components merged into it, `to_verilog(...,
    flatten=True)`); `pstar fpga area` keeps the stages apart.
    """
    top = plan(net, routing, params, routing_obj=routing_obj, shared=shared, header=header,
               body_block_bits=body_block_bits, flit=flit)
    if shared:
        text = top_verilog(top, name, packed)
        return text + "\n" + to_verilog(top.proto, top.module_name, flatten=True), top
    routers = [top.make_router(r) for r in range(net.num_routers)]
    text = top_verilog(top, name, packed, module_of=lambda r: f"{top.module_name}_{r}", routers=routers)
    modules = flat_verilog([(router, f"{top.module_name}_{r}") for r, router in enumerate(routers)])
    return "\n".join([text, *modules]), top


__all__ = ["NetworkPlan", "NetworkTop", "plan", "top_verilog", "network_verilog", "build_routing", "carried_fields", "ROUTER_MODULE", "HEADERS"]
