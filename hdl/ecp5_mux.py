"""Wide multiplexers built from the ECP5's slice multiplexers, for the crossbar of an FPGA build.

An ECP5 slice holds two LUT4s and a PFUMX, a 2:1 multiplexer of the two LUTs' outputs with a
select input of its own; an L6MUX21 joins two slices' PFUMX outputs the same way. So an 8:1
multiplexer of one bit is four LUT4s (each a 2:1 by index bit 0), two PFUMX (bit 1) and an L6MUX21
(bit 2): four LUT sites, where Yosys and ABC map a one-hot AND-OR of eight terms into five LUT4s
and an 8:1 written as 2:1 multiplexers into six (ABC's LUT mapping does not find the slice's
multiplexers by itself); a 4:1 is two LUT4s and a PFUMX, against three LUT4s one-hot. The cells are instantiated by name, so a design with them builds for the
ECP5 only; `hdl.crossbar.Crossbar` uses them when the router is built for it (`ecp5_muxes`).
"""
from __future__ import annotations

from amaranth.hdl import Cat, Instance, Module, Mux, Signal, Value

# the widest select built from slice multiplexers: 2:1 in a LUT4, then PFUMX, then L6MUX21
MAX_INPUTS = 8


def _slice_mux4(m: Module, index, vals, name: str) -> list:
    """Per bit, the PFUMX of four values' two LUT4 2:1s (index bits 0, 1)."""
    luts = [Mux(index[0], vals[k + 1], vals[k]) for k in (0, 2)]
    out = []
    for b in range(len(luts[0])):
        lo, hi, z = (Signal(name=f"{name}_{what}_{b}") for what in ("lut0", "lut1", "pfumx"))
        m.d.comb += [lo.eq(luts[0][b]), hi.eq(luts[1][b])]
        m.submodules[f"{name}_pfumx_{b}"] = Instance("PFUMX", i_ALUT=hi, i_BLUT=lo, i_C0=index[1], o_Z=z)
        out.append(z)
    return out


def ecp5_index_select(m: Module, index, values, name: str) -> Value:
    """values[index] (up to MAX_INPUTS values of one width; an index past the last value gives
    some value), per bit: two LUT4 2:1s by index bit 0 and a PFUMX by bit 1 over them for each
    four values; for eight, an L6MUX21 by bit 2 over two such PFUMX. Five or six values take a
    LUT4 for bit 2 instead (the L6MUX21's inputs must be PFUMX outputs), and so as many LUT4s as
    the one-hot AND-OR; four, seven and eight take fewer. The cells' simulation models are Yosys's
    (`share/ecp5/common_sim.vh`: PFUMX Z = C0 ? ALUT : BLUT, L6MUX21 Z = SD ? D1 : D0)."""
    vals = [Value.cast(v) for v in values]
    n = len(vals)
    if not 1 <= n <= MAX_INPUTS:
        raise ValueError(f"values: {n}; an ECP5 slice multiplexer takes 1..{MAX_INPUTS}")
    if n <= 2:
        return vals[0] if n == 1 else Mux(index[0], vals[1], vals[0])
    # padded with the first value (an index past the last one never comes), so that each PFUMX
    # input is a LUT4's 2:1, which the slice needs in front of its multiplexer
    pad = vals + [vals[0]] * (MAX_INPUTS - n)
    low = _slice_mux4(m, index, pad[:4], f"{name}_a")
    if n <= 4:
        return Cat(*low)
    if n <= 6:
        return Mux(index[2], Mux(index[0], pad[5], pad[4]) if n == 6 else pad[4], Cat(*low))
    high = _slice_mux4(m, index, pad[4:], f"{name}_b")
    bits = []
    for b, (d0, d1) in enumerate(zip(low, high)):
        z = Signal(name=f"{name}_l6mux_{b}")
        m.submodules[f"{name}_l6mux_{b}"] = Instance("L6MUX21", i_D0=d0, i_D1=d1, i_SD=index[2], o_Z=z)
        bits.append(z)
    return Cat(*bits)


__all__ = ["MAX_INPUTS", "ecp5_index_select"]
