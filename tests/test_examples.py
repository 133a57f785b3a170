"""The user documentation's code runs: examples/pipeline.py top to bottom, and the Python blocks
of docs/api.md in order as one session (the co-simulation block in the PSTAR_COSIM=full tier)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tiers

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_pipeline_example(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "pipeline.py"), str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert "route 0 -> 57: [0, 81, 56, 57]" in lines
    assert "10712 router pairs: minimal" in lines
    loads = [line for line in lines if line.startswith("load ")]
    assert len(loads) == 3 and all(float(line.split()[3].rstrip(",")) > 0.09 for line in loads)
    assert (tmp_path / "out" / "ps104.json").is_file()
    assert (tmp_path / "out" / "ps26.v").read_text().count("pstar_router ") >= 26


def _api_blocks(kind: str) -> list[str]:
    text = (ROOT / "docs" / "api.md").read_text()
    return re.findall(rf"```python{kind}\n(.*?)```", text, flags=re.S)


def _run_api(tmp_path, monkeypatch, with_cosim: bool) -> dict:
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    blocks = _api_blocks("") + (_api_blocks(" cosim") if with_cosim else [])
    assert len(blocks) >= 5
    for block in blocks:
        exec(compile(block, "docs/api.md", "exec"), ns)
    return ns


def test_api_doc_blocks_run(tmp_path, monkeypatch):
    ns = _run_api(tmp_path, monkeypatch, with_cosim=False)
    assert ns["path"] == [0, 81, 56, 57]
    assert ns["res"]["distance_mismatches"] == ns["res"]["next_hop_failures"] == 0
    assert abs(ns["point"]["accepted"] - 0.4) < 0.03 and ns["point"]["lost"] == 0
    assert os.path.getsize("sweep.png") > 0 and os.path.getsize("ps104.json") > 0
    assert ns["text"].count("pstar_router ") >= 26


@tiers.full_only("a Verilator build of the 26-router network")
def test_api_doc_cosim_block(tmp_path, monkeypatch):
    from pstar.cosim import unavailable
    if unavailable():
        pytest.skip(unavailable())
    ns = _run_api(tmp_path, monkeypatch, with_cosim=True)
    assert ns["rep"]["mismatch"] is None and ns["rep"]["flits_matched"] > 20000
