"""`pstar demo`: the whole pipeline on the 26-router PolarStar, run in-process.

CI runs it without the Verilator step (its build takes about a minute of both cores); the
PSTAR_COSIM=full tier runs it whole and checks the report says RTL = model."""
import json
import os
import re

import pytest

import tiers
from pstar.cli import main
from pstar.cosim import unavailable


def _demo(tmp_path, capsys, *extra):
    out = tmp_path / "demo"
    assert main(["demo", "--out-dir", str(out), "--cycles", "2000", "--json", *extra]) == 0
    cap = capsys.readouterr()
    return out, json.loads(cap.out), cap.err


def _check_common(out, data, err):
    assert sorted(data["files"]) == sorted(p.name for p in out.iterdir())
    assert {"network.json", "network.anynet", "network.v", "report.md"} <= set(data["files"])
    assert data["routers"] == 26 and data["routing_check"]["minimal"] and data["routing_check"]["pairs"] == 650
    sim = data["simulation"]
    assert sim["lost"] == 0 and abs(sim["accepted"] - 0.4) < 0.03
    text = (out / "network.v").read_text()
    assert text.count("pstar_router ") >= 26 and data["verilog"]["lines"] == text.count("\n")
    assert [line[:5] for line in err.splitlines() if line.startswith("[")][:4] == ["[1/6]", "[2/6]", "[3/6]", "[4/6]"]


def test_demo_without_cosim(tmp_path, capsys):
    out, data, err = _demo(tmp_path, capsys, "--no-cosim")
    _check_common(out, data, err)
    assert data["cosim"] == {"skipped": "--no-cosim"}
    assert "co-simulation skipped: --no-cosim" in (out / "report.md").read_text()


@tiers.full_only("a Verilator build of the 26-router network")
@pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))
def test_demo_whole_pipeline(tmp_path, capsys):
    out, data, err = _demo(tmp_path, capsys)
    _check_common(out, data, err)
    c = data["cosim"]
    assert c["rtl_equals_model"] and c["verilog_is_network_v"] and c["mismatch"] is None
    assert c["flits_matched"] > 0.35 * 2000 * 26
    report = (out / "report.md").read_text()
    assert f"RTL = model, {c['flits_matched']} flits" in report
    assert "RTL = model" in err


@pytest.mark.parametrize("args,message", [
    (["--out-dir", "FILE"], "is a file, expected a folder"),
    (["--out-dir", "missing/x"], "folder .*missing.* does not exist"),
    (["--spec", "polarstar:q=6"], "q=6: must be a prime power"),
    (["--spec", "torus:dims=3x3"], "not a PolarStar"),
    (["--load", "0"], "--load=0.0: must be in"),
])
def test_demo_bad_input_leaves_nothing(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("x")
    if "--out-dir" not in args:
        args = args + ["--out-dir", "out"]
    assert main(["demo", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(message, err)
    assert sorted(os.listdir(tmp_path)) == ["FILE"]


def test_demo_exits_1_when_a_check_fails(tmp_path, capsys, monkeypatch):
    """A failed check (here the routing check, told a pair was not minimal) is reported and the
    demo exits 1: scripts and CI see it, not only a reader of the report."""
    import routing_logic.polarstar as rp
    real = rp.verify_against_bfs

    def one_wrong(*a, **kw):
        return {**real(*a, **kw), "next_hop_failures": 1}
    monkeypatch.setattr(rp, "verify_against_bfs", one_wrong)
    out = tmp_path / "demo"
    assert main(["demo", "--out-dir", str(out), "--cycles", "200", "--no-cosim", "--json", "--quiet"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert not data["routing_check"]["minimal"] and (out / "report.md").exists()
