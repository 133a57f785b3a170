"""Reading a component's internal state from a formal harness, without changing the component.

k-induction needs invariants on state a component keeps to itself (a FIFO's pointers, a delay
line's registers, the entries of a memory). `open_up(component)` elaborates the component once
and returns its `Module` (to be added to the harness *instead of* the component, so that the
signals found are the ones in the netlist) and its registers and combinational signals by name;
`memory(module, name)` is a submodule `Memory` of it, to which the harness may add read ports
before the harness is elaborated (the memory is elaborated with every port it has by then).
"""
from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal


def open_up(component, platform=None):
    """(module, signals): `component` elaborated, and every signal it drives, by name."""
    mod = component.elaborate(platform)
    component._MustUse__silence = True    # used through `mod`, not itself: no UnusedElaboratable warning
    if not isinstance(mod, Module):
        raise TypeError(f"{component!r}: elaborate returned {mod!r}, not a Module")
    mod._flush()                      # close a trailing If/Elif chain so its statements are listed
    found = {}
    stmts = [s for ss in mod._statements.values() for s in ss] + list(mod._top_comb_statements)
    for st in stmts:
        for s in st._lhs_signals():
            found.setdefault(s.name, s)
    return mod, found


def submodule(mod: Module, name: str):
    """The named submodule of an elaborated (opened) module."""
    return mod._named_submodules[name][0]


def open_submodule(mod: Module, name: str, platform=None):
    """Open the named submodule of an opened module in place (its elaborated module replaces it):
    (the component, its signals by name)."""
    comp, src_loc = mod._named_submodules[name]
    inner, found = open_up(comp, platform)
    mod._named_submodules[name] = (inner, src_loc)
    return comp, found


def memory(mod: Module, name: str):
    """A `Memory` submodule of an opened module, to add read ports to."""
    return submodule(mod, name)


def signal(signals: dict, name: str):
    try:
        return signals[name]
    except KeyError:
        raise KeyError(f"no internal signal {name!r} (the RTL renamed it?); have: "
                       f"{', '.join(sorted(signals)[:40])}...") from None


def ptr_dist(m, mask, x: int, n: int, name: str):
    """(x - pointer) mod n for a round-robin arbiter's pointer mask (bits ptr..n-1; 0: pointer 0)."""
    pc = sum(mask[j].as_unsigned() for j in range(n))
    d = Signal(range(2 * n + 1), name=name)
    m.d.comb += d.eq(Mux(mask[x], x + pc - n, x + pc))
    return d


__all__ = ["memory", "open_submodule", "open_up", "ptr_dist", "signal", "submodule"]
