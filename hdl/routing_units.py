"""Routing units: (router, src, dst, hops, inter, phase) -> candidate output ports (+ priorities).

One interface for every unit, so the router does not care which one it holds:

  router               In   the router's own id (a constant tie-off or an input)
  query[lane]          In   {src, dst, hops, inter, phase} of a head flit (`query_layout`)
  answer[lane]         Out  {mask: one bit per network port, prio: per-port priority (Polarized)}
  load                 In   (loadable table units only) {addr: destination, data: one table row}

`lanes` copies of the datapath share the unit's tables (the router asks once per input port).
At the destination (dst == router) the mask is 0; the router ejects. The golden models are in
`routing_logic`; tests/test_hdl_routing.py compares every unit with them on every
(router, src, dst) triple of small networks.

* `TableMinimalUnit`    all minimal ports, one n-entry × R-bit table per router (`min`).
* `PolarStarUnit`       the arithmetic single next hop of `routing_logic.polarstar` (`polarstar`):
                        GF(q) dot products, the normalized cross product, the involution f and
                        m×m supernode tables; nothing indexed by a router id.
* `PolarizedTableUnit`  Polarized (`polarized`): per destination t the row {D(c,t), Δt per port};
                        two reads (s and t) give Δs, Δt and the candidate rule and penalties.
"""
from __future__ import annotations

import typing

import numpy as np
from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from routing_logic.base import EJECT
from contract.flit import HOPS_BITS
from topologies.network import Network

from .checks import quiet_on_error
from .gf import GF, bits, const_mul, div_const, rom, rom2

UNITS = ("min", "polarstar", "polarized")


def query_layout(num_routers: int) -> data.StructLayout:
    rb = bits(num_routers)
    return data.StructLayout({"src": rb, "dst": rb, "hops": HOPS_BITS, "inter": rb, "phase": 1})


def answer_layout(ports: int, prio_bits: int, escapes: bool = False) -> data.StructLayout:
    fields = {"mask": ports}
    if prio_bits:
        fields["prio"] = data.ArrayLayout(prio_bits, ports)
    if escapes:
        fields["escape"] = 1           # the head leaves with phase 0 (routing_logic.polarized)
    return data.StructLayout(fields)


def _check_net(net):
    if not isinstance(net, Network):
        raise TypeError(f"net={net!r}: must be a topologies.network.Network")
    if net.num_routers < 1:
        raise ValueError("net: has no routers")


def _check_lanes(lanes):
    if not isinstance(lanes, int) or isinstance(lanes, bool) or lanes < 1:
        raise ValueError(f"lanes={lanes!r}: must be a positive integer")


class RoutingUnit(wiring.Component):
    """Base: the shared signature. Subclasses implement `lane(m, query, answer)`."""

    prio_bits = 0
    loadable = False
    row_bits = 0
    escapes = False          # answer.escape: the head's phase bit is cleared (Polarized dead ends)
    # every route a shortest path of the network the unit is built for: a head never leaves on
    # the port it came in by (`NetworkPlan` then builds its routers without u-turns)
    minimal = False
    # every answer's mask has at most one bit set (a single next hop): the VC allocator then
    # takes the best VC of that port's class, with no choice among ports to build
    single_port = False
    # the optional header fields (contract.flit.OPTIONAL_FIELDS) this unit's answer depends on: a flit
    # carries only these (hdl.network.NetworkTop, header="routing"); the others reach the query as 0
    header_reads: tuple = ()

    @quiet_on_error
    def __init__(self, net: Network, lanes: int = 1, extra: dict | None = None):
        _check_net(net)
        _check_lanes(lanes)
        self.net = net
        self.num_routers = n = net.num_routers
        self.ports = int(net.ports.max())
        self.lanes = lanes
        self.query_layout = query_layout(n)
        self.answer_layout = answer_layout(self.ports, self.prio_bits, self.escapes)
        members = {
            "router": In(range(n)) if n > 1 else In(1),
            "query": In(self.query_layout).array(lanes),
            "answer": Out(self.answer_layout).array(lanes),
        }
        members.update(extra or {})
        super().__init__(members)


class _TableUnit(RoutingUnit):
    """A per-router table of one row per destination, with `reads` read ports per lane."""

    reads = 1

    @quiet_on_error
    def __init__(self, net, lanes=1, router=None):
        self.fixed_router = None if router is None else int(router)
        if router is not None and not 0 <= self.fixed_router < net.num_routers:
            raise ValueError(f"router={router!r}: must be a router id in 0..{net.num_routers - 1}")
        self.loadable = router is None
        self.load_layout = data.StructLayout({"addr": bits(net.num_routers), "data": self.row_bits})
        extra = {"load": In(stream.Signature(self.load_layout, always_ready=True))} if self.loadable else {}
        super().__init__(net, lanes, extra)

    def table_rows(self, c: int) -> list[int]:
        raise NotImplementedError

    def _memory(self, m):
        init = [0] * self.num_routers if self.fixed_router is None else self.table_rows(self.fixed_router)
        mem = Memory(shape=self.row_bits, depth=self.num_routers, init=init)
        m.submodules.table = mem
        if self.loadable:
            wp = mem.write_port()
            m.d.comb += [wp.addr.eq(self.load.payload.addr), wp.data.eq(self.load.payload.data),
                         wp.en.eq(self.load.valid)]
        return mem

    def elaborate(self, platform):
        m = Module()
        mem = self._memory(m)
        for lane in range(self.lanes):
            q, a = self.query[lane], self.answer[lane]
            rows = []
            for key in self._read_keys(q):
                rp = mem.read_port(domain="comb")
                m.d.comb += rp.addr.eq(key)
                rows.append(rp.data)
            self._combine(m, q, a, rows)
        return m


class TableMinimalUnit(_TableUnit):
    """`min`: the minimal-port mask per destination, read from an n × R table."""

    minimal = True

    @quiet_on_error
    def __init__(self, net: Network, lanes: int = 1, router: int | None = None, routing=None):
        from routing_logic.table import MinimalTable
        _check_net(net)
        if routing is not None and not isinstance(routing, MinimalTable):
            raise TypeError(f"routing={routing!r}: must be a routing_logic.table.MinimalTable")
        self.routing = routing or MinimalTable(net)
        self.row_bits = int(net.ports.max())
        super().__init__(net, lanes, router)

    def table_rows(self, c):
        return min_table_rows(self.routing, c)

    def _read_keys(self, q):
        return [q.dst]

    def _combine(self, m, q, a, rows):
        m.d.comb += a.mask.eq(rows[0])


DELTA_CODE = {-1: 0, 0: 1, 1: 2}     # 3 = no link
NO_LINK = 3


def min_table_rows(routing, c: int) -> list[int]:
    """Router c's `TableMinimalUnit` rows: bit p of row t = port p is on a shortest path to t."""
    mask = routing.port_mask(int(c))                         # (n, P) bool
    weights = 1 << np.arange(mask.shape[1], dtype=object)
    rows = [int((mask[t].astype(object) * weights).sum()) for t in range(mask.shape[0])]
    rows[int(c)] = 0
    return rows


def polarized_dist_bits(routing) -> int:
    return bits(int(routing.oracle.diameter) + 1)


def polarized_table_rows(routing, c: int) -> list[int]:
    """Router c's `PolarizedTableUnit` rows: D(c,t), then a 2-bit Δt code per port."""
    o = routing.oracle
    n, P = routing.n, int(o.ports)
    db = polarized_dist_bits(routing)
    ts = np.arange(n)
    dist = o.dist_of(np.full(n, int(c)), ts)
    delta = np.asarray(o.delta(np.full(n, int(c)), ts))
    rows = []
    for t in range(n):
        row = int(dist[t])
        for p in range(P):
            row |= DELTA_CODE.get(int(delta[t, p]), NO_LINK) << (db + 2 * p)
        rows.append(row)
    return rows


def polarstar_exception_rows(routing, c: int, n: int, ports: int, K: int) -> list[int]:
    """Router c's K exception-CAM rows {valid, dst, port} from `routing.exceptions` (the
    PolarStarMinimal fallback on a damaged network; none on an intact one)."""
    ex = sorted(((getattr(routing, "exceptions", None) or {}).get(int(c), {})).items())
    if len(ex) > K:
        raise ValueError(f"exceptions={K}: router {c} needs {len(ex)} CAM entries")
    rb = bits(n)
    return [1 | (t << 1) | (p << (1 + rb)) for t, p in ex] + [0] * (K - len(ex))


def exception_entries(routing) -> int:
    """CAM size of the PolarStar unit for `routing`: the largest per-router exception list,
    rounded up to a power of two (so one build serves several failure sets); 0 when none."""
    ex = getattr(routing, "exceptions", None) or {}
    need = max((len(v) for v in ex.values()), default=0)
    return 1 << (need - 1).bit_length() if need else 0


def table_rows(name: str, routing, c: int) -> list[int]:
    """Rows of router c's table for the loadable unit `name` (min | polarized | polarstar with
    an exception CAM)."""
    if name == "min":
        return min_table_rows(routing, c)
    if name == "polarized":
        return polarized_table_rows(routing, c)
    if name == "polarstar":
        n, P = routing.net.num_routers, int(routing.net.ports.max())
        return polarstar_exception_rows(routing, c, n, P, exception_entries(routing))
    raise ValueError(f"routing={name!r}: has no table")


class PolarizedTableUnit(_TableUnit):
    """`polarized`: rows {D(c,t), Δt code per port}; read at s and at t, then the Micro'22 rule.
    A head with phase 0, or at a dead end (no port allowed), gets the minimal ports (Δt = -1)
    with priority 0 and leaves with phase 0 (`answer.escape`): routing_logic.polarized."""

    reads = 2
    escapes = True
    header_reads = ("phase",)

    @quiet_on_error
    def __init__(self, net: Network, lanes: int = 1, router: int | None = None, routing=None):
        from routing_logic.polarized import Polarized
        _check_net(net)
        if routing is None:
            routing = Polarized(net)
        if not isinstance(routing, Polarized):
            raise TypeError(f"routing={routing!r}: must be a routing_logic.polarized.Polarized")
        self.routing = routing
        P = int(net.ports.max())
        self.dist_bits = polarized_dist_bits(routing)
        self.row_bits = self.dist_bits + 2 * P
        pen = routing._pen                                   # by Δμ + 2
        self.pen = {dmu: int(pen[dmu + 2]) for dmu in (0, 1, 2)}
        self.prio_bits = max(1, max(self.pen.values()).bit_length())
        super().__init__(net, lanes, router)

    def table_rows(self, c):
        return polarized_table_rows(self.routing, c)

    def _read_keys(self, q):
        return [q.src, q.dst]

    def _combine(self, m, q, a, rows):
        db = self.dist_bits
        row_s, row_t = rows
        ds_c, dt_c = row_s[:db], row_t[:db]                   # D(c,s), D(c,t)
        up_lt = ds_c < dt_c
        here = q.dst == self.router
        mask, minimal = [], []
        for p in range(self.ports):
            cs = row_s[db + 2 * p: db + 2 * p + 2]
            ct = row_t[db + 2 * p: db + 2 * p + 2]
            link = (cs != NO_LINK) & (ct != NO_LINK)
            up = (cs == 2) & (ct == 2)
            down = (cs == 0) & (ct == 0)
            ok = link & ((cs > ct) | (up & up_lt) | (down & ~up_lt)) & ~here
            mask.append(ok)
            minimal.append((ct == DELTA_CODE[-1]) & ~here)
            dmu = Signal(range(-3, 4), name=f"dmu{p}")
            m.d.comb += dmu.eq(cs - ct)
            m.d.comb += a.prio[p].eq(Mux(a.escape, 0, Mux(dmu == 2, self.pen[2],
                                                        Mux(dmu == 1, self.pen[1], self.pen[0]))))
        polar = Cat(*mask)
        m.d.comb += a.escape.eq((~q.phase | (polar == 0)) & ~here)
        m.d.comb += a.mask.eq(Mux(a.escape, Cat(*minimal), polar))


class PolarStarUnit(RoutingUnit):
    """`polarstar`: the single minimal next hop of `routing_logic.polarstar.PolarStarArithmetic`.

    Router id r = x·m + a (x an ER_q vertex, a a supernode vertex). GF(q) logic computes
    adjacency (x·y = 0), the common neighbour w = normalize(x × y) and ER slots (one division);
    f, f⁻¹ and the m×m supernode tables (distance, first port) are the only tables.

    exceptions=K > 0 adds a K-entry CAM {valid, destination, port}, written through `load`
    (addr = entry), that overrides the arithmetic answer for its destinations: the fallback of
    `routing_logic.polarstar.PolarStarMinimal` on a network with failed links
    (`polarstar_exception_rows`). K = 0 (default): no CAM, no `load` port.
    """

    minimal = True
    single_port = True        # the mask is a decoded port number, or 0 at the destination

    @quiet_on_error
    def __init__(self, net: Network, lanes: int = 1, exceptions: int = 0, routing=None):
        from routing_logic.polarstar import PolarStarArithmetic
        _check_net(net)
        self.unit = PolarStarArithmetic(net.structure)      # raises ParameterError if not PolarStar
        if net.num_routers != self.unit.n or int(net.ports.max()) != self.unit.ports:
            raise ValueError(f"net={net.name!r}: does not match its PolarStar structure")
        if not isinstance(exceptions, int) or isinstance(exceptions, bool) or exceptions < 0:
            raise ValueError(f"exceptions={exceptions!r}: must be an integer >= 0 (CAM entries)")
        self.K = exceptions
        self.routing = routing
        self.loadable = exceptions > 0
        extra = {}
        if self.loadable:
            self.row_bits = 1 + bits(net.num_routers) + bits(int(net.ports.max()))
            self.load_layout = data.StructLayout({"addr": bits(exceptions), "data": self.row_bits})
            extra = {"load": In(stream.Signature(self.load_layout, always_ready=True))}
        super().__init__(net, lanes, extra)

    def table_rows(self, c: int) -> list[int]:
        """The K CAM rows of router c (see `polarstar_exception_rows`)."""
        return polarstar_exception_rows(self.routing, c, self.num_routers, self.ports, self.K)

    def _cam(self, m):
        """K registers {valid, dst, port} written by `load`; -> lookup(dst) -> (hit, port)."""
        rb, pw = bits(self.num_routers), bits(self.ports)
        entries = []
        for k in range(self.K):
            e = Signal(self.row_bits, name=f"exc{k}")
            with m.If(self.load.valid & (self.load.payload.addr == k)):
                m.d.sync += e.eq(self.load.payload.data)
            entries.append(e)

        def lookup(dst):
            level = []
            for k, e in enumerate(entries):
                hit = Signal(name=f"exc_hit{k}")
                m.d.comb += hit.eq(e[0] & (e[1:1 + rb] == dst))
                level.append((hit, e[1 + rb:1 + rb + pw]))
            while len(level) > 1:                             # a tree; the lower entry wins a tie
                nxt = []
                for (h0, p0), (h1, p1) in zip(level[::2], level[1::2]):
                    h, p = Signal(), Signal(pw)
                    m.d.comb += [h.eq(h0 | h1), p.eq(Mux(h0, p0, p1))]
                    nxt.append((h, p))
                if len(level) % 2:
                    nxt.append(level[-1])
                level = nxt
            return level[0]
        return lookup

    def elaborate(self, platform):
        m = Module()
        er = _ErLogic(m, self.unit, self.num_routers, self.ports)
        u, dp, aw, f = er.unit, er.dp, er.aw, er.f
        lookup = self._cam(m) if self.K else None
        # ---- this router (shared by the lanes) --------------------------------------------
        x, a = er.split(self.router)
        vx = er.vector(x)
        qx = Signal()
        m.d.comb += qx.eq(er.gf.dot(vx, vx) == 0)
        fa = Signal(aw)
        m.d.comb += fa.eq(rom(f, a, aw))
        has_q = Signal()
        loop_ok = Signal()
        if u.involution:
            m.d.comb += [has_q.eq(qx & (fa != a)), loop_ok.eq(fa != a)]
        own_slot = er.slot_of(vx, vx)
        p_q = er.port(dp + own_slot)
        slot0_loop = qx & (own_slot == 0)
        me = _RouterHere(x, a, vx, qx, fa, has_q, loop_ok, p_q, slot0_loop)
        for lane in range(self.lanes):
            self._lane(er, me, lookup, self.query[lane], self.answer[lane])
        return m

    def _lane(self, er, me, lookup, qq, ans):
        """One lane: the port towards `qq.dst` from this router (`me`), as `ans.mask`."""
        m, gf, u, dp, aw, f = er.m, er.gf, er.unit, er.dp, er.aw, er.f
        sd, sp, sn, phi, port = er.sd, er.sp, er.sn, er.phi, er.port
        x, a, vx, qx, fa, has_q, loop_ok, p_q, slot0_loop = me
        y, b = er.split(qq.dst)
        vy = er.vector(y)
        same = x == y
        d_xy = gf.dot(vx, vy)
        adj = (d_xy == 0) & ~same
        w_cross = er.index(gf.normalize(gf.cross(vx, vy)))
        w = Signal(er.xw)
        m.d.comb += w.eq(Mux(same, x, w_cross))
        vw = er.vector(w)
        mid = ~same & (w != x) & (w != y)
        pa = Signal(aw)
        pb = Signal(aw)
        a2 = Signal(aw)
        a1 = Signal(aw)
        m.d.comb += [pa.eq(phi(x < y, a)), pb.eq(phi(y < x, b)), a1.eq(phi(x < w, a)), a2.eq(phi(w < y, a1))]
        fb = Signal(aw)
        m.d.comb += fb.eq(rom(f, b, aw))
        quad_walk = adj & ~mid
        sd_ab = sn(sd, a, b)
        conds, choices = [], []
        p_y = port(dp + er.slot_of(vx, vy))
        p_w = port(dp + er.slot_of(vx, vw))
        sp_ab = sn(sp, a, b)
        conds += [same & (a == b)]; choices += [0]
        conds += [same & (sd_ab == 1)]; choices += [sp_ab]
        conds += [same & has_q & (b == fa)]; choices += [p_q]
        conds += [adj & (b == pa)]; choices += [p_y]
        conds += [same & (sd_ab == 2)]; choices += [sp_ab]
        if u.involution:
            conds += [same & qx & (sn(sd, a, fb) == 1)]; choices += [sn(sp, a, fb)]
            conds += [same & has_q & (sn(sd, fa, b) == 1)]; choices += [p_q]
        conds += [adj & (sn(sd, pa, b) == 1)]; choices += [p_y]
        conds += [adj & (sn(sd, a, pb) == 1)]; choices += [sn(sp, a, pb)]
        conds += [mid & (b == a2)]; choices += [p_w]
        if u.involution:
            conds += [quad_walk & (w == x) & loop_ok & (b == a)]; choices += [p_q]
            conds += [quad_walk & (w == y) & loop_ok & (b == a)]; choices += [p_y]
        p_z = Mux(slot0_loop, dp + 1, dp)
        d3 = Mux(same, p_z, Mux(mid, p_w, Mux((w == x) & has_q, p_q, p_y)))
        sel = d3
        for c, ch in reversed(list(zip(conds, choices))):
            sel = Mux(c, ch, sel)
        nxt = port(sel)
        if self.K:
            hit, exc = lookup(qq.dst)
            nxt = port(Mux(hit, exc, nxt))
        here = same & (a == b)
        onehot = Signal(self.ports)
        m.d.comb += onehot.eq(Mux(here, 0, Const(1, self.ports) << nxt))
        m.d.comb += ans.mask.eq(onehot)


class _RouterHere(typing.NamedTuple):
    """What the arithmetic unit's lanes share about this router: its ER vertex x (vector vx,
    quadric qx) and supernode vertex a, f(a), whether it has a quadric port (`has_q`, at port
    `p_q`) and a loop, and whether its own slot is 0 at a quadric (`slot0_loop`)."""
    x: object
    a: object
    vx: list
    qx: object
    fa: object
    has_q: object
    loop_ok: object
    p_q: object
    slot0_loop: object


class _ErLogic:
    """The arithmetic unit's building blocks over GF(q), each adding its logic to module `m`:
    router id -> (ER vertex, supernode vertex) (`split`), ER vertex <-> its normalized vector
    (`vector`, `index`), the port slot of a neighbour (`slot_of`), the supernode tables (`sn`)
    and the supernode's f (`phi`)."""

    def __init__(self, m: Module, unit, num_routers: int, ports: int):
        self.m, self.unit, self.num_routers = m, unit, num_routers
        u = unit
        self.q, self.mm, self.dp, self.n_er = u.q, u.m, u.dp, u.n_er
        self.gf = GF(m, self.q)
        self.pw = bits(ports)
        self.xw = bits(self.n_er)
        self.f = [int(v) for v in u.f]
        self.f_inv = [int(v) for v in u.f_inv]
        mm = self.mm
        self.sd = [int(u.sn_dist[i, j]) for i in range(mm) for j in range(mm)]
        self.sp = [max(0, int(u.sn_port[i, j])) for i in range(mm) for j in range(mm)]
        self.aw = bits(mm)

    def split(self, r):
        x, a = div_const(r, self.mm, self.num_routers - 1)
        xs, as_ = Signal(self.xw), Signal(self.aw)
        self.m.d.comb += [xs.eq(x), as_.eq(a)]
        return xs, as_

    def vector(self, x):
        m, q, gf = self.m, self.q, self.gf
        hi, lo = div_const(x, q, self.n_er - 1)
        first = x < q * q
        second = (x >= q * q) & (x < q * q + q)
        v0 = Signal(gf.width)
        v1 = Signal(gf.width)
        v2 = Signal(gf.width)
        m.d.comb += [
            v0.eq(first),
            v1.eq(Mux(first, hi, second)),
            v2.eq(Mux(first, lo, Mux(second, (x - q * q)[:gf.width], 1))),
        ]
        return [v0, v1, v2]

    def index(self, v):
        q = self.q
        r = Signal(self.xw)
        self.m.d.comb += r.eq(Mux(v[0] == 1, const_mul(v[1], q) + v[2], Mux(v[1] == 1, q * q + v[2], q * q + q)))
        return r

    def slot_of(self, vx, vy):
        m, gf = self.m, self.gf
        first = vx[0] == 1
        second = (vx[0] == 0) & (vx[1] == 1)
        num = Signal(gf.width)
        den = Signal(gf.width)
        m.d.comb += [num.eq(Mux(first | second, vy[2], vy[1])), den.eq(Mux(first, vy[1], vy[0]))]
        t = gf.mul(num, gf.inv(den))
        s = Signal(bits(self.q + 1))
        m.d.comb += s.eq(Mux(den == 0, self.q, t))
        return s

    def port(self, expr):
        s = Signal(self.pw)
        self.m.d.comb += s.eq(expr)
        return s

    def sn(self, table, i, j):
        return rom2(table, i, j, self.mm, 2 if table is self.sd else bits(max(self.dp, 1)))

    def phi(self, lt, a):
        if self.unit.involution:
            return rom(self.f, a, self.aw)
        return Mux(lt, rom(self.f, a, self.aw), rom(self.f_inv, a, self.aw))


def unit_reads(name: str) -> tuple:
    """The optional header fields the unit `name` reads (`RoutingUnit.header_reads`)."""
    classes = {"min": TableMinimalUnit, "polarstar": PolarStarUnit, "polarized": PolarizedTableUnit}
    if name not in classes:
        raise ValueError(f"routing={name!r}: the RTL has units for {', '.join(UNITS)}")
    return classes[name].header_reads


def make_unit(name: str, net: Network, lanes: int = 1, router: int | None = None, routing=None) -> RoutingUnit:
    """The routing unit `name` (min | polarstar | polarized) for `net`."""
    if name == "min":
        return TableMinimalUnit(net, lanes, router, routing)
    if name == "polarstar":
        return PolarStarUnit(net, lanes, exception_entries(routing), routing)
    if name == "polarized":
        return PolarizedTableUnit(net, lanes, router, routing)
    raise ValueError(f"routing={name!r}: the RTL has units for {', '.join(UNITS)}")


__all__ = ["UNITS", "RoutingUnit", "table_rows", "polarstar_exception_rows", "exception_entries", "min_table_rows", "polarized_table_rows", "TableMinimalUnit", "PolarizedTableUnit", "PolarStarUnit", "make_unit", "unit_reads",
           "query_layout", "answer_layout", "EJECT"]
