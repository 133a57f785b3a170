"""The timing census of a synthesized ECP5 netlist (fpga/logic_depth.py): on a small design whose
register-to-register paths have known depths, synthesized by Yosys as the FPGA build does, each
register's estimate orders as its logic does, its path starts and ends at flip-flops, `sources`
keeps only the paths from the registers named, and `pstar fpga build --census` lists a real
router's worst paths after synthesis alone."""
import json
import subprocess

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fpga.build import tool_env
from fpga.logic_depth import CLK_TO_Q_NS, ROUTE_NS, SETUP_NS, census, group_name, main
from pstar.cli import main as pstar_main


class Depths(wiring.Component):
    """Registers `shallow` (one register's copy), `wide_and` (an AND of 64 registered bits: a
    tree of LUT4s, at least three levels) and `xor_chain` (a chain of 12 dependent XOR-AND steps,
    each needing a new input: at least four levels of cells), all from registered inputs."""
    a: In(64)
    o: Out(3)

    def elaborate(self, platform):
        m = Module()
        r = Signal(64, name="src")
        m.d.sync += r.eq(self.a)
        shallow, wide_and, xor_chain = Signal(name="shallow"), Signal(name="wide_and"), Signal(name="xor_chain")
        acc = r[0]
        for k in range(1, 13):
            acc = (acc ^ r[k]) & (r[k + 20] | acc)
        m.d.sync += [shallow.eq(r[63]), wide_and.eq(r.all()), xor_chain.eq(acc)]
        m.d.comb += self.o.eq(Cat(shallow, wide_and, xor_chain))
        return m


@pytest.fixture(scope="module")
def netlist(tmp_path_factory):
    d = tmp_path_factory.mktemp("depths")
    (d / "top.il").write_text(rtlil.convert(Depths(), name="top"))
    env = tool_env("ecp5")
    subprocess.run([env["YOSYS"], "-q", "-p", "read_rtlil top.il; synth_ecp5 -top top; write_json top.json"],
                   cwd=d, env=env, check=True)
    return str(d / "top.json")


def test_estimates_order_as_the_logic(netlist):
    eps = {e.name: e for e in census(netlist)}
    shallow, wide, chain = eps["shallow"], eps["wide_and"], eps["xor_chain"]
    # a register copy: clock-to-q, one net, setup, no logic cell
    assert shallow.arrival_ns == pytest.approx(CLK_TO_Q_NS + ROUTE_NS + SETUP_NS)
    assert len(shallow.path) == 2
    assert shallow.arrival_ns < wide.arrival_ns < chain.arrival_ns
    assert sum(t == "LUT4" for _, t, _ in wide.path) >= 3
    assert len(chain.path) - 2 >= 4                    # LUT4s, or wide-LUT muxes selected by the chain
    for e in (shallow, wide, chain):
        assert e.path[0][1] == "TRELLIS_FF" and e.path[-1][1] == "TRELLIS_FF"
        times = [t for _, _, t in e.path]
        assert times == sorted(times) and times[-1] == pytest.approx(e.arrival_ns)
    # one group per signal, its bits together; `src` is fed by the module's input pins, which no
    # cell drives: not a register-to-register path
    assert wide.bits == shallow.bits == chain.bits == 1 and "src" not in eps


def test_sources_keep_only_the_paths_from_those_registers(netlist):
    assert {e.name for e in census(netlist, sources=r"^src")} == {"shallow", "wide_and", "xor_chain"}
    assert census(netlist, sources=r"^no_such_register") == []


def test_group_names_and_cli(netlist, capsys):
    assert group_name("inner.router.sa_gnt_3_TRELLIS_FF_Q_2") == "inner.router.sa_gnt_3"
    assert group_name("inner.act_TRELLIS_FF_Q") == "inner.act"
    main([netlist, "--top", "2", "--paths", "1"])
    out = capsys.readouterr().out
    assert out.splitlines()[1].endswith("xor_chain") and "TRELLIS_FF" in out


def test_build_census_lists_a_router_after_synthesis(tmp_path, capsys):
    code = pstar_main(["fpga", "build", "polarstar:q=2,supernode=iq,degree=0", "--board", "ulx3s-85f", "--ports", "4",
                       "--vcs", "2", "--depth", "2", "--flit-width", "8", "--census", "5", "--quiet", "--json",
                       "--build-dir", str(tmp_path)])
    rep = json.loads(capsys.readouterr().out)
    assert code == 0 and len(rep["census"]) == 5 and (tmp_path / "top.json").exists()
    assert not (tmp_path / "top.config").exists()                 # no place and route
    worst = [g["estimate_ns"] for g in rep["census"]]
    assert worst == sorted(worst, reverse=True) and rep["census"][0]["register"].startswith("inner.")


def test_census_on_ice40_is_a_one_line_error(capsys):
    code = pstar_main(["fpga", "build", "polarstar:q=2,supernode=iq,degree=0", "--board", "icebreaker", "--ports", "4",
                       "--vcs", "1", "--depth", "2", "--flit-width", "4", "--census", "5"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "census" in err and "\n" not in err


class ArbiterBesideChain(wiring.Component):
    """An 8-requester round-robin arbiter (as the switch allocator's output stage) between
    registers, beside an unrelated chain of `chain` dependent XOR-AND steps (with 1, no step: the
    arbiter alone beside one register)."""
    req: In(8)
    x: In(40)
    o: Out(9)

    def __init__(self, chain: int = 40):
        self.chain = chain
        super().__init__()

    def elaborate(self, platform):
        from hdl.arbiter import RoundRobinArbiter
        m = Module()
        m.submodules.arb = arb = RoundRobinArbiter(8, own_commit=True)
        r, rx = Signal(8, name="req_q"), Signal(40, name="x_q")
        gnt, y = Signal(8, name="gnt"), Signal(name="chain")
        m.d.sync += [r.eq(self.req), rx.eq(self.x), gnt.eq(arb.grant)]
        m.d.comb += [arb.requests.eq(r), arb.commit.eq(arb.valid)]
        acc = rx[0]
        for k in range(1, self.chain):
            step = Signal(name=f"step{k}")
            m.d.comb += step.eq((acc ^ rx[k]) & (rx[k - 1] | acc))
            acc = step
        m.d.sync += y.eq(acc)
        m.d.comb += self.o.eq(Cat(gnt, y))
        return m


@pytest.fixture(scope="module")
def mapped_by_script(tmp_path_factory):
    """ArbiterBesideChain synthesized with each of the build's abc9 scripts (fpga.build.abc_script),
    and without its chain with the default one: {script (`alone-default`): the netlist's JSON path}."""
    from fpga.build import ABC_SCRIPTS, abc_script
    tmp = tmp_path_factory.mktemp("abc")
    env = tool_env("ecp5")
    out = {}
    for name, design in (("", ArbiterBesideChain()), ("alone-", ArbiterBesideChain(chain=1))):
        (tmp / f"{name}top.il").write_text(rtlil.convert(design, name="top"))
        for abc in ABC_SCRIPTS if not name else ("default",):
            script = f"read_rtlil {name}top.il{abc_script(abc)}\nsynth_ecp5 -top top\nwrite_json {name}{abc}.json\n"
            (tmp / f"{name}{abc}.ys").write_text(script)
            subprocess.run([env["YOSYS"], "-q", "-s", f"{name}{abc}.ys"], cwd=tmp, env=env, check=True)
            out[name + abc] = str(tmp / f"{name}{abc}.json")
    return out


def test_abc_depth_script_keeps_short_paths_short(mapped_by_script):
    """synth_ecp5's default abc9 script deepens the arbiter's paths towards the depth of the
    chain beside it; `--abc depth` keeps them near the arbiter's own depth (synthesized alone).
    Levels with the pointer masks reset to 0: alone 3, beside the chain 5 (`depth`) and 8
    (`default`)."""
    levels = {}
    for abc in ("alone-default", "default", "depth"):
        eps = {e.name: e for e in census(mapped_by_script[abc])}
        # the grant register drives the output port, so its group takes the port's name
        levels[abc] = max(sum(t == "LUT4" for _, t, _ in eps[g].path) for g in ("o", "arb.mask"))
    own = levels["alone-default"]
    assert levels["depth"] - own <= 2 < 4 <= levels["default"] - own, levels


def test_abc_area_script_takes_fewer_luts(mapped_by_script):
    """`--abc area` maps the same logic into fewer LUT4s than either other script (70 against
    117 and 97)."""
    luts = {}
    for abc in ("area", "default", "depth"):
        with open(mapped_by_script[abc]) as f:
            cells = json.load(f)["modules"]["top"]["cells"].values()
        luts[abc] = sum(c["type"] == "LUT4" for c in cells)
    assert luts["area"] < 0.8 * min(luts["default"], luts["depth"]), luts
