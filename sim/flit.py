"""The flit layout, defined once for the model and the RTL (Amaranth `data.StructLayout`).

`flit_layout(net_routers, endpoints_per_router, params, carried)` gives the layout; `pack`/`unpack`
turn a dict of field values into the integer the RTL carries and back, using the very same layout.

Every layout has the same field names. The OPTIONAL_FIELDS are header fields no router needs to
forward a packet unless its routing unit reads them (`hdl.routing_units.RoutingUnit.header_reads`): the
hop count (the RTL's VC classes follow the input VC, not the count), the Valiant intermediate
(no RTL unit reads it) and the Polarized phase bit. A field left out of `carried` has width 0: the
flit does not carry it, `pack` ignores its value and `unpack` gives 0.
"""
from __future__ import annotations

from amaranth.lib import data

from topologies.errors import ParameterError

from .params import RouterParams

HOPS_BITS = 4
# fields a flit's header changes on its way (every other field arrives as injected): the VC per
# hop, the hop count (heads), the phase bit (set at a Valiant intermediate; cleared when a
# Polarized packet escapes a dead end to minimal routing, routing_logic.polarized)
CHANGED_IN_FLIGHT = ("vc", "hops", "phase")
OPTIONAL_FIELDS = ("hops", "inter", "phase")
# which optional fields a network's flits carry (hdl.network.carried_fields): those its routing
# unit reads, or all of them
HEADERS = ("routing", "all")


def bits_for(n: int) -> int:
    """Bits to hold values 0..n-1 (at least 1)."""
    return max(1, (max(n, 1) - 1).bit_length())


def flit_layout(routers: int, endpoints_per_router: int, params: RouterParams = RouterParams(),
                carried=OPTIONAL_FIELDS) -> data.StructLayout:
    carried = tuple(carried)
    if not set(carried) <= set(OPTIONAL_FIELDS):
        raise ParameterError(f"carried={carried!r}: optional header fields are {', '.join(OPTIONAL_FIELDS)}")
    rb = bits_for(routers)
    opt = {"hops": HOPS_BITS, "inter": rb, "phase": 1}
    opt = {k: (w if k in carried else 0) for k, w in opt.items()}
    return data.StructLayout({
        "head": 1,
        "tail": 1,
        "vc": bits_for(params.vcs),
        "src": rb,
        "src_ep": bits_for(endpoints_per_router),
        "dst": rb,
        "dst_ep": bits_for(endpoints_per_router),
        "hops": opt["hops"],
        "inter": opt["inter"],
        "phase": opt["phase"],
        "seq": bits_for(params.packet_flits),
        "packet": params.packet_id_bits,
        "payload": params.payload_bits,
    })


def pack(layout: data.StructLayout, fields: dict) -> int:
    value = 0
    for name, fld in layout:
        if fld.width == 0:
            continue
        v = int(fields.get(name, 0))
        if not 0 <= v < (1 << fld.width):
            raise ValueError(f"flit field {name}={v} does not fit in {fld.width} bits")
        value |= v << fld.offset
    return value


def unpack(layout: data.StructLayout, value: int) -> dict:
    return {name: (value >> fld.offset) & ((1 << fld.width) - 1) for name, fld in layout}
