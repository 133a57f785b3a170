"""The flit layout, defined once for the model and the RTL (Amaranth `data.StructLayout`).

`flit_layout(net_routers, endpoints_per_router, params, carried)` gives the layout; `pack`/`unpack`
turn a dict of field values into the integer the RTL carries and back, using the very same layout.

Every layout has the same field names. The OPTIONAL_FIELDS are header fields no router needs to
forward a packet unless its routing unit reads them (`hdl.routing_units.RoutingUnit.header_reads`): the
hop count (the RTL's VC classes follow the input VC, not the count), the Valiant intermediate
(no RTL unit reads it) and the Polarized phase bit. A field left out of `carried` has width 0: the
flit does not carry it, `pack` ignores its value and `unpack` gives 0.

Two formats (FLIT_FORMATS). `wide` (the default): every flit carries every field, a `StructLayout`.
`lean`: a flit is head, tail, vc and `payload_bits` data bits (a `FlexibleLayout`); in a head
flit the data bits hold the header (every other field, the front fields `dst_ep` and `hops`
first), in a body flit the payload. A head carries no payload and a body no header: the routers
read header fields from heads only, and the checkers know a body's packet from the head of its
VC (fpga/traffic.py). The header must fit the payload bits. `head_only_fields` names the fields
only heads carry; `pack` packs a head's header or a body's payload, and `unpack` gives 0 for the
fields the flit does not carry.
"""
from __future__ import annotations

from amaranth.hdl import unsigned
from amaranth.lib import data

from topologies.errors import ParameterError

from .params import FLIT_FORMAT, HEADER, RouterParams

HOPS_BITS = 4
# fields a flit's header changes on its way (every other field arrives as injected): the VC per
# hop, the hop count (heads), the phase bit (set at a Valiant intermediate; cleared when a
# Polarized packet escapes a dead end to minimal routing, routing_logic.polarized)
CHANGED_IN_FLIGHT = ("vc", "hops", "phase")
OPTIONAL_FIELDS = ("hops", "inter", "phase")
# which optional fields a network's flits carry (hdl.network.carried_fields): those its routing
# unit reads, or all of them; and the flit formats (the option specs, with their defaults, are in
# contract.params)
HEADERS = HEADER.choices
FLIT_FORMATS = FLIT_FORMAT.choices
# lean flits: the header fields in the data bits of a head, in this order (the router's front
# fields, hdl.crossbar.FRONT_FIELDS, first: the rest of the data bits then form one body range)
LEAN_HEADER = ("dst_ep", "hops", "dst", "src", "src_ep", "inter", "phase", "seq", "packet")


def index_bits(n: int) -> int:
    """Bits to hold values 0..n-1 (at least 1)."""
    return max(1, (max(n, 1) - 1).bit_length())


def flit_layout(routers: int, endpoints_per_router: int, params: RouterParams = RouterParams(),
                carried=OPTIONAL_FIELDS, fmt: str = FLIT_FORMAT.default) -> data.Layout:
    carried = tuple(carried)
    if not set(carried) <= set(OPTIONAL_FIELDS):
        raise ParameterError(f"carried={carried!r}: optional header fields are {', '.join(OPTIONAL_FIELDS)}")
    if fmt not in FLIT_FORMATS:
        raise ParameterError(f"flit={fmt!r}: must be one of {', '.join(FLIT_FORMATS)}")
    rb = index_bits(routers)
    opt = {"hops": HOPS_BITS, "inter": rb, "phase": 1}
    opt = {k: (w if k in carried else 0) for k, w in opt.items()}
    widths = {
        "head": 1,
        "tail": 1,
        "vc": index_bits(params.vcs),
        "src": rb,
        "src_ep": index_bits(endpoints_per_router),
        "dst": rb,
        "dst_ep": index_bits(endpoints_per_router),
        "hops": opt["hops"],
        "inter": opt["inter"],
        "phase": opt["phase"],
        "seq": index_bits(params.packet_flits),
        "packet": params.packet_id_bits,
        "payload": params.payload_bits,
    }
    if fmt == "wide":
        return data.StructLayout(widths)
    W = params.payload_bits
    hb = sum(widths[k] for k in LEAN_HEADER)
    if hb > W:
        ob = sum(opt.values())
        parts = (f"{rb}-bit router ids, {widths['dst_ep']}-bit endpoints, {widths['seq']}-bit seq, "
                 f"{widths['packet']}-bit packet ids" + (f", {ob} bits of optional fields" if ob else ""))
        raise ParameterError(f"flit=lean: the header ({hb} bits: {parts}) does not fit the {W} payload bits; "
                             f"use a flit width >= {hb}, fewer packet id bits, or flit=wide")
    fields, off = {}, 0
    for k in ("head", "tail", "vc"):
        fields[k] = data.Field(unsigned(widths[k]), off)
        off += widths[k]
    start = off
    for k in LEAN_HEADER:
        fields[k] = data.Field(unsigned(widths[k]), off)
        off += widths[k]
    fields["payload"] = data.Field(unsigned(W), start)
    return data.FlexibleLayout(start + W, fields)


def head_only_fields(layout) -> tuple:
    """The fields only head flits carry: those sharing bits with the payload (lean), or none.
    `layout`: a flit layout, or its fields as {name: (offset, width)} (as the co-simulations get them)."""
    fields = {n: (f.offset, f.width) for n, f in layout} if isinstance(layout, data.Layout) else dict(layout)
    lo, w = fields["payload"]
    hi = lo + w
    return tuple(n for n, (off, fw) in fields.items() if n != "payload" and fw and off < hi and lo < off + fw)


def _absent(layout: data.Layout, head) -> set:
    only = head_only_fields(layout)
    if not only:
        return set()
    return {"payload"} if head else set(only)


def pack(layout: data.Layout, fields: dict) -> int:
    absent = _absent(layout, fields.get("head", 0))
    value = 0
    for name, fld in layout:
        if fld.width == 0 or name in absent:
            continue
        v = int(fields.get(name, 0))
        if not 0 <= v < (1 << fld.width):
            raise ValueError(f"flit field {name}={v} does not fit in {fld.width} bits")
        value |= v << fld.offset
    return value


def unpack(layout: data.Layout, value: int) -> dict:
    out = {name: (value >> fld.offset) & ((1 << fld.width) - 1) for name, fld in layout}
    for name in _absent(layout, out["head"]):
        out[name] = 0
    return out
