"""The network Verilog passes `verilator --lint-only -Wall` without the warning classes that mean
a real defect: LATCH (a combinational block that keeps state), MULTIDRIVEN (a signal driven from
two places) and ASCRANGE (a zero-width field written as `[-1:0]`). The other classes Verilator's
-Wall reports (unused signals, width changes Amaranth makes on purpose) are counted, not failed.
"""
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

import bench_verilog  # noqa: E402
import tiers  # noqa: E402

from contract.params import RouterParams  # noqa: E402
from hdl.network import build_routing, network_verilog  # noqa: E402
from topologies import polarstar  # noqa: E402


def test_lint_counts_warning_classes():
    text = ("%Warning-LATCH: a.v:3:1: Latch inferred\n%Warning-UNUSEDSIGNAL: a.v:4:1: x\n"
            "%Warning-LATCH: a.v:9:1: y\n")
    assert bench_verilog.lint_counts(text) == {"LATCH": 2, "UNUSEDSIGNAL": 1}


def test_lint_catches_a_latch_and_a_second_driver(tmp_path):
    """The lint check itself: a planted latch and a register driven from two blocks are reported."""
    bad = tmp_path / "bad.v"
    bad.write_text("module bad(input clk, input en, input d, output reg q, output reg r);\n"
                   "  always @* if (en) q = d;\n  always @(posedge clk) r <= d;\n"
                   "  always @(negedge clk) r <= en;\nendmodule\n")
    _, _, counts, _ = bench_verilog.lint(bad, top="bad")
    assert counts["LATCH"] == 1 and counts["MULTIDRIVEN"] == 1, counts


@pytest.mark.slow
@pytest.mark.parametrize("routing,vcs,vc_policy", [
    ("polarstar", 4, "hops"), ("min", 2, "turns"),     # turn classes: the shared module's `up` input
    pytest.param("polarized", 5, "hops", marks=tiers.full_only("CI budget: a minute"))])
def test_network_verilog_lints_clean(routing, vcs, vc_policy, tmp_path):
    """The 26-router network (PolarStar q=3 IQ d'=0) as `pstar verilog` writes it."""
    net = polarstar(3, "iq", 0)
    params = RouterParams(vcs=vcs)
    text, _ = network_verilog(net, routing, params, routing_obj=build_routing(net, routing, params, vc_policy))
    path = tmp_path / "net.v"
    path.write_text(text)
    seconds, gb, counts, code = bench_verilog.lint(path)
    bad = {k: counts[k] for k in bench_verilog.BAD_CLASSES if counts[k]}
    assert code == 0 and not bad, (bad, dict(counts))
    print(f"\n{routing}: lint {seconds:.0f} s, {gb:.2f} GB, warnings {dict(counts)}")
