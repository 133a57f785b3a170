"""Equivalence check of the arithmetic PolarStar routing unit (`hdl.routing_units.PolarStarUnit`)
against the table of minimal ports built from `routing_logic` (SAT over every input at once, not
simulation).

The harness holds the unit (one lane) with the router id and the whole query (source,
destination, hops, intermediate, phase) free, and a read-only memory of n·n rows, row c·n + t the
minimal ports of router c towards t (`min_table_rows`: bit p set when port p is on a shortest path
of the network, from `routing_logic.table.MinimalTable`, a BFS of the graph, independent of the
arithmetic). Assumed: router and destination are router ids (< n). Asserted: at the destination
(t = c) the mask is 0 (the router ejects); elsewhere the mask has exactly one port and that port
is one of the table's minimal ports. One cycle, no state: `mode prove` at depth 1 is a complete
check of every (router, destination, source, ...) combination.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Module, Signal
from amaranth.lib.memory import Memory


def unit_harness(q: int = 2, supernode: str = "iq", degree: int = 3, unit_factory=None, table_patch=None):
    """unit_factory(net) -> the unit (default PolarStarUnit(net)); table_patch(rows) may change
    the reference rows (a list of n·n ints) in place (a planted wrong entry)."""
    from routing_logic.table import MinimalTable
    from topologies import polarstar

    from ..routing_units import PolarStarUnit, min_table_rows
    net = polarstar(q, supernode, degree)
    n, R = net.num_routers, int(net.ports.max())
    routing = MinimalTable(net)
    rows = [r for c in range(n) for r in min_table_rows(routing, c)]
    if table_patch:
        table_patch(rows)
    m = Module()
    dut = unit_factory(net) if unit_factory else PolarStarUnit(net)
    m.submodules.dut = dut
    router = Signal(range(n), name="router")
    query = Signal(dut.query_layout, name="query")
    m.d.comb += [dut.router.eq(router), dut.query[0].eq(query)]
    m.submodules.table = table = Memory(shape=R, depth=n * n, init=rows)
    rp = table.read_port(domain="comb")
    m.d.comb += rp.addr.eq(router * n + query.dst)
    m.d.comb += [Assume(router < n), Assume(query.dst < n)]
    mask = dut.answer[0].mask
    with m.If(query.dst == router):
        m.d.comb += Assert(mask == 0)
    with m.Else():
        m.d.comb += [Assert(mask != 0), Assert((mask & (mask - 1)) == 0), Assert((mask & ~rp.data) == 0)]
    return m, [router, query.as_value()]


__all__ = ["unit_harness"]
