"""Board tops: a board-independent traffic top (`fpga.tops`) placed on a real board's pins and clock.

`BOARDS` names the supported boards (`ulx3s-85f`: ECP5 LFE5U-85F on the ULX3S, the main target;
`icebreaker`: iCE40 UP5K, for one small router). `BoardTop(inner, board, freq_mhz)` wires the
inner component's `uart_rx`/`uart_tx`/`leds` to the board's FTDI UART and LEDs and drives its
`sync` domain:

* ECP5: an EHXPLLL turns the 25 MHz board clock into `freq_mhz` (parameters found by
  `ecp5_pll_params`, the search `ecppll` does), with the PLL's output net constrained to that
  frequency so that nextpnr times the design at it; reset is held until the PLL locks, and
  reaches the flip-flops on a global network (a DCCA buffer).
* iCE40: the 12 MHz board clock directly (the UP5K designs here are timed at 12 MHz; nextpnr
  still reports the design's maximum frequency).
"""
from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import ClockDomain, Const, Elaboratable, Instance, Module, Signal
from amaranth.lib import io
from amaranth.lib.cdc import ResetSynchronizer

from topologies.errors import ParameterError


@dataclass(frozen=True)
class Board:
    name: str
    module: str          # amaranth_boards module
    platform: str        # platform class in it
    family: str          # "ecp5" | "ice40"
    clock_mhz: float     # board oscillator
    leds: int
    pll: bool            # can the top synthesize another frequency?
    ebr: int = 0         # block RAMs the router buffers may take (ECP5 DP16KD; 0: none)

    def make_platform(self):
        import importlib
        return getattr(importlib.import_module(self.module), self.platform)()


BOARDS = {
    "ulx3s-85f": Board("ulx3s-85f", "amaranth_boards.ulx3s", "ULX3S_85F_Platform", "ecp5", 25.0, 8, True, 208),
    "icebreaker": Board("icebreaker", "amaranth_boards.icebreaker", "ICEBreakerPlatform", "ice40", 12.0, 2, False),
}


def get_board(name: str) -> Board:
    if name not in BOARDS:
        raise ParameterError(f"board={name!r}: unknown; allowed: {', '.join(BOARDS)}")
    return BOARDS[name]


def ecp5_pll_params(fin_mhz: float, fout_mhz: float) -> dict:
    """EHXPLLL dividers for fout from fin (ECP5 data sheet ranges: PFD 3.125-400 MHz, VCO 400-800
    MHz, output 3.125-400 MHz), the closest achievable frequency; ties to the smallest dividers."""
    if not 3.125 <= fout_mhz <= 400:
        raise ParameterError(f"freq={fout_mhz}: the ECP5 PLL makes 3.125..400 MHz")
    best = None
    for clki in range(1, 129):
        fpfd = fin_mhz / clki
        if fpfd < 3.125:
            break
        for clkfb in range(1, 81):
            fo = fpfd * clkfb
            if fo > 400:
                break
            for clkop in range(1, 129):
                fvco = fo * clkop
                if fvco < 400:
                    continue
                if fvco > 800:
                    break
                err = abs(fo - fout_mhz)
                if best is None or err < best[0] - 1e-9:
                    best = (err, clki, clkfb, clkop, fo, fvco)
                break                     # the smallest CLKOP_DIV with fvco in range
    if best is None or best[0] > 0.01 * fout_mhz:
        raise ParameterError(f"freq={fout_mhz}: no ECP5 PLL setting within 1% from {fin_mhz} MHz")
    _, clki, clkfb, clkop, fo, fvco = best
    return {"CLKI_DIV": clki, "CLKFB_DIV": clkfb, "CLKOP_DIV": clkop, "CLKOP_CPHASE": clkop - 1,
            "freq_mhz": fo, "vco_mhz": fvco}


class BoardTop(Elaboratable):
    """`inner` (members uart_rx, uart_tx, leds) on `board`'s pins, clocked at `freq_mhz`."""

    def __init__(self, inner, board: Board, freq_mhz: float | None = None):
        self.inner, self.board = inner, board
        if freq_mhz is None:
            freq_mhz = board.clock_mhz
        if not board.pll and abs(freq_mhz - board.clock_mhz) > 1e-6:
            raise ParameterError(f"freq={freq_mhz}: the {board.name} top runs at its {board.clock_mhz:g} MHz "
                                 "board clock")
        self.pll = ecp5_pll_params(board.clock_mhz, freq_mhz) if board.pll and freq_mhz != board.clock_mhz else None
        self.freq_mhz = self.pll["freq_mhz"] if self.pll else board.clock_mhz

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = self.inner
        if self.pll is not None:
            m.submodules.clk_buf = clk_in = io.Buffer("i", platform.request(platform.default_clk, dir="-"))
            m.domains.sync = cd = ClockDomain("sync")
            locked = Signal()
            p = self.pll
            m.submodules.pll = Instance(
                "EHXPLLL",
                a_FREQUENCY_PIN_CLKI=str(self.board.clock_mhz), a_FREQUENCY_PIN_CLKOP=f"{p['freq_mhz']:.4f}",
                a_ICP_CURRENT="12", a_LPF_RESISTOR="8", a_MFG_ENABLE_FILTEROPAMP="1", a_MFG_GMCREF_SEL="2",
                p_PLLRST_ENA="DISABLED", p_INTFB_WAKE="DISABLED", p_STDBY_ENABLE="DISABLED",
                p_DPHASE_SOURCE="DISABLED", p_OUTDIVIDER_MUXA="DIVA", p_CLKOP_ENABLE="ENABLED",
                p_CLKI_DIV=p["CLKI_DIV"], p_CLKOP_DIV=p["CLKOP_DIV"], p_CLKOP_CPHASE=p["CLKOP_CPHASE"],
                p_CLKOP_FPHASE=0, p_FEEDBK_PATH="CLKOP", p_CLKFB_DIV=p["CLKFB_DIV"],
                i_RST=Const(0), i_STDBY=Const(0), i_CLKI=clk_in.i, i_CLKFB=cd.clk,
                i_PHASESEL0=Const(0), i_PHASESEL1=Const(0), i_PHASEDIR=Const(0), i_PHASESTEP=Const(0),
                i_PHASELOADREG=Const(0), i_PLLWAKESYNC=Const(0), i_ENCLKOP=Const(0),
                o_CLKOP=cd.clk, o_LOCK=locked)
            platform.add_clock_constraint(cd.clk, p["freq_mhz"] * 1e6)
            # the reset leaves its synchronizer (in a domain of its own on the same clock) through
            # a DCCA clock buffer, so that nextpnr routes it on a global network to the flip-flops'
            # LSR inputs: as one fabric net to ~7,000 of them it was a critical path at some seeds
            # (20.97 ns, 20.02 of it routing, at seed 1 of the target router)
            m.domains.por = por = ClockDomain("por")
            por.clk = cd.clk                   # the same net: nextpnr's constraint names it "clk"
            m.submodules.rst_sync = ResetSynchronizer(~locked, domain="por")
            m.submodules.rst_global = Instance("DCCA", i_CLKI=por.rst, i_CE=Const(1), o_CLKO=cd.rst)
        uart = platform.request("uart", 0, dir="-")
        m.submodules.uart_rx = rx = io.Buffer("i", uart.rx)
        m.submodules.uart_tx = tx = io.Buffer("o", uart.tx)
        m.d.comb += [inner.uart_rx.eq(rx.i), tx.o.eq(inner.uart_tx)]
        for k in range(self.board.leds):
            m.submodules[f"led{k}"] = led = io.Buffer("o", platform.request("led", k, dir="-"))
            m.d.comb += led.o.eq(inner.leds[k])
        return m


__all__ = ["BOARDS", "Board", "BoardTop", "ecp5_pll_params", "get_board"]
