"""Unread carry outputs taken off an ECP5 netlist before place and route.

Yosys maps an adder or a compare of more than four bits to a chain of CCU2C cells and connects
the last cell's COUT to a wire even when nothing reads it. nextpnr's ECP5 packer gives every
chain end whose COUT has a net a feed-out: one more CCU2C, two more TRELLIS_COMB, that leads
the carry into the fabric (its `split_carry_chain`). For an unread COUT that cell does nothing;
net26 had 157 of them (314 TRELLIS_COMB, 0.4 % of the 85F). `drop_unread_carry_outs` marks
such a COUT undriven-to-nowhere ("x", which nextpnr's JSON reader leaves unconnected) in the
netlist Yosys wrote, so the packer adds no feed-out; nothing else changes. No Yosys pass does
this (the port stays connected to a wire after `opt_clean`), hence this one.
"""
from __future__ import annotations

import json
import pathlib

CARRY_CELL = "CCU2C"


def unread_carry_outs(module: dict) -> list:
    """The names of the module's CCU2C cells whose COUT no cell input or module port reads."""
    read = set()
    for cell in module.get("cells", {}).values():
        dirs = cell.get("port_directions", {})
        for port, bits in cell.get("connections", {}).items():
            if dirs.get(port) != "output":
                read.update(b for b in bits if isinstance(b, int))
    for port in module.get("ports", {}).values():
        read.update(b for b in port.get("bits", []) if isinstance(b, int))
    unread = []
    for name, cell in module.get("cells", {}).items():
        if cell.get("type") == CARRY_CELL:
            cout = cell.get("connections", {}).get("COUT", [])
            if cout and all(isinstance(b, int) and b not in read for b in cout):
                unread.append(name)
    return unread


def drop_unread_carry_outs(path: pathlib.Path) -> int:
    """Rewrite the Yosys JSON netlist at `path` with its unread CCU2C carry outputs
    unconnected; returns how many there were."""
    path = pathlib.Path(path)
    netlist = json.loads(path.read_text())
    count = 0
    for module in netlist.get("modules", {}).values():
        for name in unread_carry_outs(module):
            conns = module["cells"][name]["connections"]
            conns["COUT"] = ["x"] * len(conns["COUT"])
            count += 1
    if count:
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(netlist, separators=(",", ":")))
        tmp.replace(path)
    return count


__all__ = ["drop_unread_carry_outs", "unread_carry_outs"]
