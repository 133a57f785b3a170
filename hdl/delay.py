"""Delay lines: a (valid, payload) pair passed through N flip-flop stages.

The one helper behind every registered hop of a stream: the link and credit latencies of a router's
inputs (hdl/router.py), the link registers of a network netlist (hdl/network.py) and the register
where a router's flit output meets a traffic top's checker (fpga/tops.py).
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal, Value


def delay_line(m: Module, valid, payload, stages: int, name: str, shape=None):
    """(valid, payload) `stages` cycles later (unchanged for 0). shape: of the payload registers
    (e.g. a flit layout, so the result is a View); default the payload's width. Registers are
    named {name}_v{k} / {name}_d{k}.

    Only the valid registers are reset: a payload is read only beside its valid, and reset-less
    data registers keep the reset net (an FPGA fabric net to every reset flip-flop) off the
    network's widest registers."""
    if shape is None:
        shape = len(Value.cast(payload))
    for k in range(stages):
        v2 = Signal(name=f"{name}_v{k}")
        d2 = Signal(shape, name=f"{name}_d{k}", reset_less=True)
        m.d.sync += [v2.eq(valid), d2.eq(payload)]
        valid, payload = v2, d2
    return valid, payload


__all__ = ["delay_line"]
