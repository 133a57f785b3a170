"""Invariants of the whole router's internal state, for `router_props.router5_harness`.

Read from the netlist (`internals`), the RTL unchanged:
  * `sa_invariants`: the pipelined switch allocator's registers. A nomination (`sa_nom_*`,
    sa_stages 2 and 3) is one-hot or empty, its port register the one-hot port of the output VC
    the nominated VC holds (empty with it), and the nominated VC holds an output VC, has a flit
    and a credit of it. Three stages: a registered grant (`sa_gnt_*`, the VC that sends now) is
    one-hot, its VC holds an output VC, has a flit and a credit; a VC both granted and nominated
    has two flits, two credits and a front that is not its tail; the registered output choices
    (`sa_sent_valid_*`, `sa_sent_sel_*`) are the grants' ports.
  * `buffer_invariants`: every input VC buffer (registered fronts) consistent with itself:
    pointers in range, tail = head + count, after1/after2 = head + 1, + 2, the count flags equal
    the compares, the front register = the memory's entry at head, and (three-stage SA) the peek
    register = the peek memory at head + 1 and every held entry's peek bit = its tail bit.
  * `packet_invariants` (packets = True): the flits in each input VC buffer form the packet
    structure the upstream sender (`properties.packet_sources`) makes: entry k + 1's sequence
    number is entry k's + 1 (mod L), head exactly at 0, tail exactly at L - 1, one packet id
    inside a packet; the last entry agrees with the sender's state; the sender's credits + the
    count = B; an input VC without an output VC has a head at its front or is empty between
    packets, one with an output VC has a flit or is inside a packet.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Cat, Mux, Signal
from amaranth.lib import data

from ..crossbar import body_ranges
from .alloc_props import separable_va_invariants
from .internals import memory, open_submodule, signal, submodule


def _onehot0(x):
    return (x & (x - 1)) == 0


def _mod_add(x, k: int, n: int):
    s = x + k
    return Mux(s >= n, s - n, s)


def held_port(c, iv):
    """One-hot over ports: the port of the output VC input VC iv holds (0 when it holds none)."""
    ovcs = c.vcmap.ovcs_of[iv]
    return Cat(*[Cat(*[c.oh[iv][k] for k, (o2, _) in enumerate(ovcs) if o2 == o]).any() for o in range(c.P)])


def held_credit(c, iv, j: int):
    """The held output VC's flag `credits > j` (1 at a local port)."""
    ovcs = c.vcmap.ovcs_of[iv]
    bits = [c.outs.credit_gt[o][w][j] if o < c.R else 1 for o, w in ovcs]
    return (c.oh[iv] & Cat(*bits)).any()


def open_sw(c):
    """Open the switch allocator (once): its signals by name; `c.swa` the component."""
    if getattr(c, "ssig", None) is None:
        c.swa, c.ssig = open_submodule(c.inner, "sw_alloc")
    return c.ssig


def open_sa_arbiters(c):
    """The switch allocator's round-robin arbiters (input port, output port), each pointer mask
    asserted a thermometer (the distances of `ptr_dist` read it as one)."""
    open_sw(c)
    swmod = submodule(c.inner, "sw_alloc")
    in_arb = [submodule(swmod, f"sa_in_{i}") for i in range(c.P)]
    out_arb = [submodule(swmod, f"sa_out_{o}") for o in range(c.P)]
    for arb, n in [(a, c.V) for a in in_arb] + [(a, c.P) for a in out_arb]:
        c.m.d.comb += Assert(((arb.mask << 1)[:n] & ~arb.mask) == 0)
    return in_arb, out_arb


def sa_invariants(c):
    k = c.prm.sa_stages
    if k == 1:
        return
    m, V, P = c.m, c.V, c.P
    ssig = open_sw(c)
    for i in range(P):
        nom, nport = signal(ssig, f"sa_nom_{i}"), signal(ssig, f"sa_nom_port_{i}")
        gnt = signal(ssig, f"sa_gnt_{i}") if k == 3 else None
        m.d.comb += [Assert(_onehot0(nom)), Assert(nom.any() | (nport == 0))]
        if gnt is not None:
            m.d.comb += Assert(_onehot0(gnt))
        for v in range(V):
            iv = i * V + v
            cnt = c.count[i][v]
            ok = c.valid[i][v] & (cnt > 0) & held_credit(c, iv, 0)
            with m.If(nom[v]):
                m.d.comb += [Assert(ok), Assert(nport == held_port(c, iv))]
            if gnt is None:
                continue
            with m.If(gnt[v]):
                m.d.comb += Assert(ok)
            with m.If(gnt[v] & nom[v]):
                m.d.comb += [Assert(cnt > 1), Assert(held_credit(c, iv, 1)), Assert(~c.front[i][v].flit.tail)]
    if k == 3:
        for o in range(P):
            sv, ssel = signal(ssig, f"sa_sent_valid_{o}"), signal(ssig, f"sa_sent_sel_{o}")
            m.d.comb += [Assert(sv == ssel.any()), Assert(_onehot0(ssel))]
            for i in range(P):
                gnt = signal(ssig, f"sa_gnt_{i}")
                port_of_gnt = Cat(*[gnt[v] & held_port(c, i * V + v)[o] for v in range(V)]).any()
                m.d.comb += Assert(ssel[i] == port_of_gnt)


def open_buffers(c):
    """Open every input unit and its buffer: per port (buffer component, its module, signals)."""
    out = []
    c.isig = []
    for i in range(c.P):
        _, isig = open_submodule(c.inner, f"input{i}")
        c.isig.append(isig)
        iu_mod = submodule(c.inner, f"input{i}")
        buf, bsig = open_submodule(iu_mod, "buf")
        out.append((buf, submodule(iu_mod, "buf"), bsig))
    return out


def buffer_invariants(c, bufs):
    """Self-consistency of each buffer; returns per port and VC the entries' readers
    `entry(k)` -> (front entry view, body value) of the k-th flit (0: the front)."""
    m, V, B = c.m, c.V, c.B
    peek = c.prm.sa_stages == 3
    readers = []
    for i, (buf, bmod, bsig) in enumerate(bufs):
        row = []
        body_mem = memory(bmod, "body")
        for v in range(V):
            cnt = buf.count[v]
            head, tail = signal(bsig, f"head{v}"), signal(bsig, f"tail{v}")
            a1, a2 = signal(bsig, f"after1_{v}"), signal(bsig, f"after2_{v}")
            m.d.comb += [Assert(head < B), Assert(tail < B), Assert(cnt <= B),
                         Assert(a1 == _mod_add(head, 1 % B, B)), Assert(a2 == _mod_add(head, 2 % B, B)),
                         Assert(tail == Mux(head + cnt >= B, head + cnt - B, head + cnt))]
            m.d.comb += [Assert(buf.count_gt[v][j] == (cnt > j)) for j in range(c.prm.sa_stages)]
            fmem = memory(bmod, f"front{v}_mem")
            pmem = memory(bmod, f"peek{v}_mem") if peek else None
            ents = []
            for k in range(B):
                addr = _mod_add(head, k, B)
                rp = fmem.read_port(domain="comb")
                bp = body_mem.read_port(domain="comb")
                m.d.comb += [rp.addr.eq(addr), bp.addr.eq(v * B + addr)]
                ent = data.View(c.entry_layout, rp.data)
                ents.append((ent, _body_entry(bsig, v * B + addr, bp.data)))
                if pmem is not None:
                    pp = pmem.read_port(domain="comb")
                    m.d.comb += pp.addr.eq(addr)
                    with m.If(cnt > k):
                        m.d.comb += Assert(pp.data[0] == ent.flit.tail)
                    if k == 1:
                        with m.If(cnt > 1):
                            m.d.comb += Assert(buf.peek[v] == pp.data)
            with m.If(cnt > 0):
                m.d.comb += Assert(buf.front[v] == ents[0][0].as_value())
            row.append(ents)
        readers.append(row)
    return readers


def pending_body_write(bsig):
    """(enable, address, data) of the body write a buffer still holds in registers
    (`VCBuffer._registered_write`: the LUTRAM is written a cycle late), or None."""
    if "body_w_en" not in bsig:
        return None
    return tuple(signal(bsig, f"body_w_{k}") for k in ("en", "addr", "data"))


def _body_entry(bsig, addr, stored):
    """The body at `addr` as the buffer holds it: the pending write's, if it is to `addr`, else
    the memory's (`stored`)."""
    pend = pending_body_write(bsig)
    if pend is None:
        return stored
    en, waddr, wdata = pend
    return Mux(en & (waddr == addr), wdata, stored)


def open_traversal(c):
    """Open the switch traversal stage (once): its signals by name."""
    if getattr(c, "tsig", None) is None:
        _, c.tsig = open_submodule(c.inner, "traversal")
    return c.tsig


def _sent_now(c, i, flits):
    """What input port i sends this cycle: (any, head, tail, packet, output VC)."""
    send, V = c.swa.send[i], c.V
    bits = [_or([send[v] & flits[(i, v)][n] for v in range(V)]) for n in range(2)]
    return [send.any(), *bits, _or([Mux(send[v], flits[(i, v)][2], 0) for v in range(V)]),
            _or([Mux(send[v], c.ws[i][v], 0) for v in range(V)])]


def traversal_invariants(c, bufs, readers):
    """st_stage 1 or 2: traversal stage k's registers hold what the switch allocator sent k + 1
    cycles earlier (per output: valid and the input taken; per input: the sent front's head and
    tail, its output VC; the body: the entry at the buffer's registered read address, then
    with st_stage 2 the body register: its packet id). Returns per input VC the (head, tail,
    packet) of its front, as it would be sent now; `c.in_flight[k][i]` the sent flit's fields."""
    m, V, P, st = c.m, c.V, c.P, c.prm.st_stage
    from ..crossbar import split_layout
    front_layout = split_layout(c.layout, c.front_fields)[0]
    tsig = open_traversal(c)
    open_sw(c)
    po, pw = body_field(c, "packet")
    flits = {(i, v): (c.front[i][v].flit.head, c.front[i][v].flit.tail, readers[i][v][0][1][po:po + pw])
             for i in range(P) for v in range(V)}
    c.in_flight = []
    prev = [_sent_now(c, i, flits) for i in range(P)]
    prev_out = [(c.swa.out_valid[o], c.swa.out_sel[o]) for o in range(P)]
    for k in range(st):
        pre = f"st{k + 1 if k else ''}_"
        cur = []
        for i in range(P):
            d = [Signal(name=f"st{k}_d_any{i}"), Signal(name=f"st{k}_d_head{i}"), Signal(name=f"st{k}_d_tail{i}"),
                 Signal(pw, name=f"st{k}_d_pk{i}"), Signal.like(c.ws[i][0], name=f"st{k}_d_w{i}")]
            m.d.sync += [r.eq(x) for r, x in zip(d, prev[i])]
            cur.append(d)
            fr = data.View(front_layout, signal(tsig, f"{pre}front_{i}"))
            if k == 0:
                _, bmod, bsig = bufs[i]
                rp = memory(bmod, "body").read_port(domain="comb")
                m.d.comb += rp.addr.eq(signal(bsig, "rd_addr_r"))
                body = rp.data
                pend = pending_body_write(bsig)
                if pend is not None:       # the entry sent was the front before: written earlier
                    with m.If(d[0] & pend[0]):
                        m.d.comb += Assert(pend[1] != signal(bsig, "rd_addr_r"))
            else:
                body = signal(tsig, f"st_body_{i}")
            with m.If(d[0]):
                m.d.comb += [Assert(fr.head == d[1]), Assert(fr.tail == d[2]), Assert(body[po:po + pw] == d[3]),
                             Assert(signal(tsig, f"{pre}w_{i}") == d[4])]
        outs = []
        for o in range(P):
            dv, dsel = Signal(name=f"st{k}_d_valid{o}"), Signal(P, name=f"st{k}_d_sel{o}")
            m.d.sync += [dv.eq(prev_out[o][0]), dsel.eq(prev_out[o][1])]
            m.d.comb += [Assert(signal(tsig, f"{pre}valid_{o}") == dv), Assert(_onehot0(dsel)),
                         Assert(dv == dsel.any())]
            with m.If(dv):
                m.d.comb += Assert(signal(tsig, f"{pre}sel_{o}") == dsel)
            m.d.comb += [Assert(~dsel[i] | cur[i][0]) for i in range(P)]
            outs.append((dv, dsel))
        c.in_flight.append((cur, outs))
        prev, prev_out = cur, outs
    return flits


def in_stage_flit(c, k, o, w):
    """(event, head, tail, packet): the flit in traversal stage k for output VC (o, w)."""
    cur, outs = c.in_flight[k]
    dv, dsel = outs[o]
    hits = [dsel[i] & (cur[i][4] == w) for i in range(c.P)]
    return [dv & Cat(*hits).any(), _or([h & cur[i][1] for i, h in enumerate(hits)]),
            _or([h & cur[i][2] for i, h in enumerate(hits)]), _or([Mux(h, cur[i][3], 0) for i, h in enumerate(hits)])]


def _or(values):
    out = values[0]
    for x in values[1:]:
        out = out | x
    return out


def body_field(c, name: str):
    """(offset, width) of flit field `name` within a buffer body."""
    f = dict(c.layout)[name]
    pos = 0
    for lo, hi in body_ranges(c.layout, c.front_fields):
        if lo <= f.offset < hi:
            return pos + f.offset - lo, f.width
        pos += hi - lo
    raise KeyError(f"{name}: not in the body")


def packet_invariants(c, readers, wellformed: bool = True):
    """The packet structure of every buffer (see the module docstring). Returns per (i, v) the
    front's (head, packet) and the sender's (open, packet) for the output monitors."""
    m, V, B, L = c.m, c.V, c.B, c.L
    po, pw = body_field(c, "packet")
    so, sw = body_field(c, "seq")
    fronts = {}
    for i in range(c.P):
        for v in range(V):
            cnt = c.count[i][v]
            up = c.arrived[(i, v)] if getattr(c, "arrived", None) else c.up[(i, v)]
            in_line = c.in_line[(i, v)] if getattr(c, "in_line", None) else 0
            ents = [(e.flit.head, e.flit.tail, b[po:po + pw], b[so:so + sw], e.bad) for e, b in readers[i][v]]
            m.d.comb += Assert(c.up[(i, v)]["credit"] + in_line + cnt == B)
            for k, (hd, tl, pk, sq, bad) in enumerate(ents):
                with m.If(cnt > k):
                    m.d.comb += [Assert(sq < L), Assert(hd == (sq == 0)), Assert(tl == (sq == L - 1)),
                                 Assert(~bad if wellformed else ~bad | hd)]
                if k + 1 < B:
                    nhd, _, npk, nsq, _ = ents[k + 1]
                    with m.If(cnt > k + 1):
                        m.d.comb += Assert(nsq == Mux(sq == L - 1, 0, sq + 1))
                        with m.If(~nhd):
                            m.d.comb += Assert(npk == pk)
                with m.If(cnt == k + 1):       # the last flit in the buffer: the sender's state follows it
                    m.d.comb += [Assert(up["seq"] == Mux(sq == L - 1, 0, sq + 1)), Assert(up["open"] == ~tl)]
                    with m.If(~tl):
                        m.d.comb += Assert(up["packet"] == pk)
            hd0, _, pk0, _, bad0 = ents[0]
            with m.If(~c.valid[i][v]):
                if wellformed:      # else the rest of a packet whose head was dropped may follow
                    m.d.comb += Assert(Mux(cnt > 0, hd0, ~up["open"]))
            with m.Else():
                m.d.comb += [Assert((cnt > 0) | up["open"]), Assert((cnt == 0) | ~bad0)]
            m.d.comb += [Assert(up["seq"] < L), Assert(up["open"] == (up["seq"] != 0))]
            fronts[(i, v)] = (Mux(cnt > 0, hd0, 0), Mux(cnt > 0, pk0, up["packet"]))
    return fronts


def separable_invariants(c):
    """va_separable: the requests in the separable VC allocator (`alloc_props.separable_va_invariants`),
    and per input VC with a request in it (`sva_pend`): unallocated, its front a well-formed head
    (it asked for an output VC; such a front is not popped). Returns per output VC (o, w) the bits
    of its grants in flight, (G1 bits, G2 bits): `busy` is then exactly held or in flight, by one
    at most."""
    m, vs = c.m, c.vsig
    inflight = separable_va_invariants(m, c.dut.shape, c.vcmap.ovcs_of, vs)
    for i in range(c.P):
        for v in range(c.V):
            with m.If(signal(vs, f"sva_pend_{i}_{v}")):
                m.d.comb += [Assert(~c.valid[i][v]), Assert(c.count[i][v] > 0), Assert(c.front[i][v].flit.head),
                             Assert(~c.front[i][v].bad)]
    return inflight


def _step(state, fl):
    """The sender's (open, packet, seq) after flit `fl`."""
    seq = state[2]
    return ~fl.tail, fl.packet, Mux(fl.tail, 0, seq + 1)


def link_invariants(c, wellformed: bool = True):
    """link_latency > 1: the flits in each input unit's link registers (`fin_v{k}`/`fin_d{k}`,
    stage 0 the newest). Per input VC a register `arrived` follows the sender's (open, packet,
    seq) as of the flits that reached the buffer (stepped by each flit leaving the line for it);
    asserted: stepping it by the line's flits of that VC, oldest first, gives the sender's state,
    each of them is what the sender made (head exactly outside a packet, seq, tail at L - 1, the
    open packet's id; with `wellformed` a head's destination exists). Sets `c.arrived` (the
    state `packet_invariants` ties the buffer's last entry to) and `c.in_line` (the flits of each
    input VC in its line: the sender's credits + these + the count = B)."""
    m, V, L, Ld = c.m, c.V, c.L, c.prm.link_latency - 1
    c.arrived, c.in_line = {}, {}
    if not Ld:
        return
    for i in range(c.P):
        stages = [(signal(c.isig[i], f"fin_v{k}"), data.View(c.layout, signal(c.isig[i], f"fin_d{k}")))
                  for k in range(Ld)]
        for v in range(V):
            up = c.up[(i, v)]
            on = [sv & (fl.vc == v) for sv, fl in stages]
            arr = (Signal(name=f"arr_open{i}_{v}"), Signal.like(up["packet"], name=f"arr_pk{i}_{v}"),
                   Signal.like(up["seq"], name=f"arr_seq{i}_{v}"))
            with m.If(on[-1]):
                m.d.sync += [r.eq(x) for r, x in zip(arr, _step(arr, stages[-1][1]))]
            s = arr
            for k in reversed(range(Ld)):
                fl = stages[k][1]
                with m.If(on[k]):
                    m.d.comb += [Assert(fl.head == ~s[0]), Assert(fl.seq == s[2]), Assert(fl.tail == (s[2] == L - 1))]
                    with m.If(s[0]):
                        m.d.comb += Assert(fl.packet == s[1])
                    if wellformed:
                        m.d.comb += Assert(~fl.head | ((fl.dst < c.dut.num_routers) & (fl.dst_ep < c.dut.p)))
                s = tuple(Mux(on[k], x, y) for x, y in zip(_step(s, fl), s))
            m.d.comb += [Assert(s[0] == up["open"]), Assert(s[2] == up["seq"]), Assert(up["seq"] < L),
                         Assert(up["open"] == (up["seq"] != 0))]
            with m.If(up["open"]):
                m.d.comb += Assert(s[1] == up["packet"])
            c.arrived[(i, v)] = {"open": arr[0], "packet": arr[1], "seq": arr[2]}
            c.in_line[(i, v)] = sum(x.as_unsigned() for x in on)


__all__ = ["body_field", "buffer_invariants", "held_credit", "held_port", "in_stage_flit", "link_invariants",
           "open_buffers", "open_sw", "open_traversal", "packet_invariants", "sa_invariants", "separable_invariants",
           "traversal_invariants"]
