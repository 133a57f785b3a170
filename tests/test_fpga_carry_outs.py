"""fpga/carry_outs.py: unread CCU2C carry outputs are unconnected, and nextpnr then packs one
feed-out CCU2C (two TRELLIS_COMB) fewer for each, with nothing else changed."""
import json
import re
import subprocess

import pytest

from fpga.carry_outs import drop_unread_carry_outs, unread_carry_outs


def _ccu2c(cin, cout, s0):
    return {"type": "CCU2C", "port_directions": {"CIN": "input", "A0": "input", "COUT": "output", "S0": "output"},
            "connections": {"CIN": [cin], "A0": [2], "COUT": [cout], "S0": [s0]}}


def test_only_unread_carry_outs_are_found():
    lut = {"type": "LUT4", "port_directions": {"A": "input", "Z": "output"}, "connections": {"A": [11], "Z": [12]}}
    module = {"ports": {"q": {"direction": "output", "bits": [21]}},
              "cells": {"chained": _ccu2c("0", 10, 30), "next": _ccu2c(10, 13, 31),      # 13: read by nothing
                        "read": _ccu2c("0", 11, 32),                                    # 11: a LUT reads it
                        "port": _ccu2c("1", 21, 33), "lut": lut}}                       # 21: a module port
    assert unread_carry_outs(module) == ["next"]


def _synth_counter(tmp_path, env) -> str:
    """A 12-bit counter and a 9-bit compare through Yosys for the ECP5 (carry chains whose
    last COUT nothing reads, and one, the compare's, that a LUT does)."""
    (tmp_path / "c.v").write_text(
        "module top(input clk, input [8:0] a, input [8:0] b, output reg [11:0] q, output reg lt);\n"
        "always @(posedge clk) begin q <= q + 1'b1; lt <= a < b; end\nendmodule\n")
    subprocess.run([env["YOSYS"], "-q", "-p", "synth_ecp5 -top top -json c.json", "c.v"], cwd=tmp_path, env=env,
                   check=True)
    return str(tmp_path / "c.json")


def _packed_comb(tmp_path, env, netlist) -> int:
    log = tmp_path / "pack.log"
    subprocess.run([env["NEXTPNR_ECP5"], "--pack-only", "--85k", "--package", "CABGA381", "--json", netlist,
                    "--log", "pack.log"], cwd=tmp_path, env=env, check=True, capture_output=True)
    return int(re.search(r"TRELLIS_COMB:\s+(\d+)/", log.read_text()).group(1))


def test_nextpnr_packs_a_feed_out_fewer_for_each(tmp_path):
    from fpga.build import tool_env
    from topologies.errors import ParameterError
    try:
        env = tool_env("ecp5")
    except ParameterError as e:
        pytest.skip(str(e))
    path = _synth_counter(tmp_path, env)
    before = _packed_comb(tmp_path, env, "c.json")
    netlist = json.loads(open(path).read())
    cells_before = netlist["modules"]["top"]["cells"]
    dropped = drop_unread_carry_outs(path)
    assert dropped >= 1
    after_netlist = json.loads(open(path).read())
    cells_after = after_netlist["modules"]["top"]["cells"]
    assert cells_after.keys() == cells_before.keys()
    changed = [n for n in cells_after if cells_after[n] != cells_before[n]]
    assert len(changed) == dropped and all(cells_after[n]["connections"]["COUT"] == ["x"] for n in changed)
    assert _packed_comb(tmp_path, env, "c.json") == before - 2 * dropped
    assert drop_unread_carry_outs(path) == 0                   # nothing left to drop
