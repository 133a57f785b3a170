"""The flit layout, defined once for the model and the RTL (Amaranth `data.StructLayout`).

`flit_layout(net_routers, endpoints_per_router, params)` gives the layout; `pack`/`unpack` turn
a dict of field values into the integer the RTL carries and back, using the very same layout.
"""
from __future__ import annotations

from amaranth.lib import data

from .params import RouterParams

HOPS_BITS = 4
# fields a flit's header changes on its way (every other field arrives as injected): the VC per
# hop, the hop count (heads), the phase bit (set at a Valiant intermediate; cleared when a
# Polarized packet escapes a dead end to minimal routing, routing_logic.polarized)
CHANGED_IN_FLIGHT = ("vc", "hops", "phase")


def bits_for(n: int) -> int:
    """Bits to hold values 0..n-1 (at least 1)."""
    return max(1, (max(n, 1) - 1).bit_length())


def flit_layout(routers: int, endpoints_per_router: int, params: RouterParams = RouterParams()) -> data.StructLayout:
    rb = bits_for(routers)
    return data.StructLayout({
        "head": 1,
        "tail": 1,
        "vc": bits_for(params.vcs),
        "src": rb,
        "src_ep": bits_for(endpoints_per_router),
        "dst": rb,
        "dst_ep": bits_for(endpoints_per_router),
        "hops": HOPS_BITS,
        "inter": rb,
        "phase": 1,
        "seq": bits_for(params.packet_flits),
        "packet": 16,
        "payload": params.payload_bits,
    })


def pack(layout: data.StructLayout, fields: dict) -> int:
    value = 0
    for name, fld in layout:
        v = int(fields.get(name, 0))
        if not 0 <= v < (1 << fld.width):
            raise ValueError(f"flit field {name}={v} does not fit in {fld.width} bits")
        value |= v << fld.offset
    return value


def unpack(layout: data.StructLayout, value: int) -> dict:
    return {name: (value >> fld.offset) & ((1 << fld.width) - 1) for name, fld in layout}
