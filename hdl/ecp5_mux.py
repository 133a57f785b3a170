"""Wide multiplexers built from the ECP5's slice multiplexers, for the crossbar of an FPGA build.

An ECP5 slice holds two LUT4s and a PFUMX, a 2:1 multiplexer of the two LUTs' outputs with a
select input of its own; an L6MUX21 joins two slices' PFUMX outputs the same way. So an 8:1
multiplexer of one bit is four LUT4s (each a 2:1 by index bit 0), two PFUMX (bit 1) and an L6MUX21
(bit 2): four LUT sites, where Yosys and ABC map a one-hot AND-OR of eight terms into five LUT4s
and an 8:1 written as 2:1 multiplexers into six (ABC's LUT mapping does not find the slice's
multiplexers by itself). The cells are instantiated by name, so a design with them builds for the
ECP5 only; `hdl.crossbar.Crossbar` uses them when the router is built for it (`ecp5_muxes`).
"""
from __future__ import annotations

from amaranth.hdl import Cat, Instance, Module, Mux, Signal, Value

# the widest select built from slice multiplexers: 2:1 in a LUT4, then PFUMX, then L6MUX21
MAX_INPUTS = 8


def ecp5_index_select(m: Module, index, values, name: str) -> Value:
    """values[index] (up to MAX_INPUTS values of one width; an index past the last value gives
    some value), per bit: LUT4 2:1 multiplexers by index bit 0, a PFUMX by bit 1 over each two of
    them, an L6MUX21 by bit 2 over the two PFUMX. The cells' simulation models are Yosys's
    (`share/ecp5/common_sim.vh`: PFUMX Z = C0 ? ALUT : BLUT, L6MUX21 Z = SD ? D1 : D0)."""
    vals = [Value.cast(v) for v in values]
    if not 1 <= len(vals) <= MAX_INPUTS:
        raise ValueError(f"values: {len(vals)}; an ECP5 slice multiplexer takes 1..{MAX_INPUTS}")
    if len(vals) == 1:
        return vals[0]
    width = max(len(v) for v in vals)
    # pad to a power of two with the first value (an index past the last one never comes): each
    # PFUMX input is then a LUT4's 2:1, which the slice needs in front of its multiplexer
    size = 2 if len(vals) == 2 else 4 if len(vals) <= 4 else 8
    vals += [vals[0]] * (size - len(vals))
    luts = [Mux(index[0], vals[k + 1], vals[k]) for k in range(0, size, 2)]
    if size == 2:
        return luts[0]
    bits = []
    for b in range(width):
        pf = []
        for k in range(0, len(luts), 2):
            a, z = Signal(name=f"{name}_lut{k}_{b}"), Signal(name=f"{name}_pfumx{k // 2}_{b}")
            c = Signal(name=f"{name}_lut{k + 1}_{b}")
            m.d.comb += [a.eq(luts[k][b]), c.eq(luts[k + 1][b])]
            m.submodules[f"{name}_pfumx{k // 2}_{b}"] = Instance("PFUMX", i_ALUT=c, i_BLUT=a, i_C0=index[1], o_Z=z)
            pf.append(z)
        if len(pf) == 1:
            bits.append(pf[0])
            continue
        z = Signal(name=f"{name}_l6mux_{b}")
        m.submodules[f"{name}_l6mux_{b}"] = Instance("L6MUX21", i_D0=pf[0], i_D1=pf[1], i_SD=index[2], o_Z=z)
        bits.append(z)
    return Cat(*bits)


__all__ = ["MAX_INPUTS", "ecp5_index_select"]
