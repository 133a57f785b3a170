"""Verilog output of components whose signatures hold constant members (always-ready streams).

`amaranth.back.verilog.convert` refuses a `Const` member as a port; `ports_of` lists the signal
members only, named as Amaranth names them (`path` joined by `__`, e.g. `flit_in__0__payload`).
"""
from __future__ import annotations

from amaranth.back import verilog
from amaranth.hdl import Const, Signal, ValueCastable
from amaranth.hdl._ir import PortDirection
from amaranth.lib import wiring


def ports_of(component: wiring.Component) -> dict:
    """{verilog port name: (signal, direction)} of a component's signature (constants skipped)."""
    ports = {}
    for path, member, value in component.signature.flatten(component):
        if isinstance(value, ValueCastable):
            value = value.as_value()
        if isinstance(value, Const) or not isinstance(value, Signal):
            continue
        direction = PortDirection.Input if member.flow == wiring.In else PortDirection.Output
        ports["__".join(map(str, path))] = (value, direction)
    return ports


def to_verilog(component: wiring.Component, name: str, emit_src: bool = False) -> str:
    """Verilog text of `component` as module `name`."""
    return verilog.convert(component, name=name, ports=ports_of(component), emit_src=emit_src)


__all__ = ["ports_of", "to_verilog"]
