"""The `pstar` command line: JSON outputs, exports, and one-line errors with exit status 2."""
import json
import subprocess
import sys

import pytest


def pstar(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "pstar.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_topology_json(tmp_path):
    r = pstar("topology", "polarstar:q=3,supernode=iq,degree=3", "--json", "--out", str(tmp_path / "n.json"))
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert (d["routers"], d["links"], d["radix"], d["endpoints"], d["diameter"]) == (104, 364, 7, 208, 3)
    assert round(d["mean_distance"], 6) == 2.496639
    assert json.loads((tmp_path / "n.json").read_text())["routers"] == 104


def test_topology_paley_and_er():
    d = json.loads(pstar("topology", "polarstar:q=8,supernode=paley,degree=6", "-p", "3", "--json").stdout)
    assert d["routers"] == 73 * 13 and d["radix"] == 15 and d["endpoints"] == 3 * 949 and d["diameter"] <= 3
    d = json.loads(pstar("topology", "er:q=7", "--json").stdout)
    assert d["routers"] == 57 and d["diameter"] == 2


def test_design_space_json(tmp_path):
    r = pstar("design-space", "--radix", "15", "--json", "--plot", str(tmp_path / "ds.png"))
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["largest"] == {"q": 11, "supernode": "iq", "degree": 3, "routers": 1064, "radix": 15,
                            "moore_efficiency": d["largest"]["moore_efficiency"]}
    assert len(d["configs"]) >= 2
    assert (tmp_path / "ds.png").stat().st_size > 10_000


def test_human_output():
    r = pstar("topology", "polarstar:q=3,supernode=iq,degree=3")
    assert r.returncode == 0 and "routers" in r.stdout and "104" in r.stdout


@pytest.mark.parametrize("args,word", [
    (["topology", "polarstar:q=6"], "q=6"),
    (["topology", "polarstar:q=3,supernode=iq,degree=5"], "degree=5"),
    (["topology", "polarstar:q=3,supernode=paley,degree=3"], "p = 2d'+1 vertices"),
    (["topology", "nosuch:q=3"], "family='nosuch'"),
    (["topology", "polarstar:q=3,colour=red"], "key='colour'"),
    (["topology", "polarstar:q=three"], "q='three'"),
    (["topology", "polarstar:q=3", "-p", "x"], "-p"),
    (["topology", "polarstar:q=3", "--out", "/tmp/x.xyz"], "unknown suffix"),
    (["design-space", "--radix", "1"], "radix=1"),
    (["nosuch"], "invalid choice"),
])
def test_bad_input_is_one_line_exit_2(args, word):
    r = pstar(*args)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_route_with_turn_classes():
    """`pstar route --vc-policy turns`: PolarStar minimal routing checked deadlock-free with 2 VCs
    (exact CDG), where hop classes with 2 VCs are refused naming a cycle."""
    spec = "polarstar:q=3,supernode=iq,degree=3"
    r = pstar("route", spec, "--routing", "polarstar", "--check", "--vc-policy", "turns", "--vcs", "2", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["deadlock_free"] is True and d["deadlock_check"] == "cdg" and d["minimal"] is True
    assert d["vc_policy"].startswith("turn-indexed") and d["vcs"] == 2
    r = pstar("route", spec, "--routing", "polarstar", "--vcs", "2")
    assert r.returncode == 2 and "not deadlock-free: channel dependency cycle" in r.stderr


def test_sim_link_latency_adds_a_cycle_per_link():
    """At near-zero load a packet crosses hops + 2 links (injection, the hops, ejection): one more
    cycle of link latency adds hops + 2 cycles to the mean latency, and a wrong value is one line."""
    def run(ll):
        r = pstar("sim", "polarstar:q=3,supernode=iq,degree=0", "--routing", "min", "--vcs", "2", "--vc-policy",
                  "turns", "--depth", "4", "--load", "0.02", "--link-latency", str(ll), "--json")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    one, three = run(1), run(3)
    assert [d["params"]["link_latency"] for d in (one, three)] == [1, 3]
    assert three["params"]["credit_latency"] == 1 and three["params"]["va_stages"] == 1
    assert one["hops_mean"] == three["hops_mean"] and one["accepted"] == pytest.approx(three["accepted"], rel=0.02)
    assert three["latency_mean"] - one["latency_mean"] == pytest.approx(2 * (one["hops_mean"] + 2), abs=0.2)
    r = pstar("sim", "polarstar:q=3,supernode=iq,degree=0", "--load", "0.1", "--credit-latency", "0")
    assert r.returncode == 2 and "argument --credit-latency: credit-latency=0: must be an integer in 1..64" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


# --- in-process checks of the promise: one line and exit 2, never a traceback -----------------------

import contextlib  # noqa: E402
import io  # noqa: E402
import time  # noqa: E402

from pstar.cli import main, make_parser  # noqa: E402


def run_main(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("argv,word", [
    (["design-space", "--radix", "15", "--plot", "/nonexistent/x.png"], "'/nonexistent' does not exist"),
    (["design-space", "--radix", "15", "--plot", "{tmp}/x.txt"], "unknown suffix '.txt'"),
    (["design-space", "--radix", "15", "--plot", "{tmp}/x"], "no suffix"),
    (["design-space", "--radix", "15", "--plot", "{tmp}"], "is a folder"),
    (["metrics", "er:q=3", "--plot", "/nonexistent/x.png"], "--plot"),
    (["sweep", "er:q=3", "--plot", "/nonexistent/x.png"], "--plot"),
    (["hostswitch", "--hosts", "8", "--radix", "4", "--steps", "5", "--out", "/nonexistent/e.txt"], "--out"),
    (["topology", "er:q=3", "--out", "{tmp}/plain.txt/n.json"], "is not a folder"),
    (["verilog", "er:q=3", "--out", "{tmp}"], "is a folder"),
    (["fpga", "sweep", "--no-build", "--out", "/nonexistent/sw"], "does not exist"),
    (["fpga", "sweep", "--no-build", "--out", "{tmp}/sw"], "does not exist"),
])
def test_bad_output_is_refused_before_the_work(argv, word, tmp_path):
    (tmp_path / "plain.txt").write_text("x")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    t0 = time.perf_counter()
    code, out, err = run_main(*argv)
    assert code == 2 and out == ""
    assert word in one_error_line(err) and argv[0] in err
    assert time.perf_counter() - t0 < 5           # refused before any network is built or simulated
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.txt"]


def test_failed_write_keeps_the_results(tmp_path, monkeypatch):
    """A write failing after the sweep: its results still reach stdout, the error line says so, and the
    half-written file is removed."""
    import sim.experiment

    def half_then_full(curves, path, title=""):
        open(path, "w").write("half a plot")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sim.experiment, "plot_sweeps", half_then_full)
    plot = tmp_path / "s.png"
    code, out, err = run_main("sweep", "polarstar:q=2,supernode=iq,degree=0", "--loads", "0.1,0.2", "--cycles", "40",
                              "--warmup", "5", "--plot", str(plot), "--json")
    assert code == 2
    line = one_error_line(err)
    assert "--plot" in line and "No space left on device" in line and "printed on stdout" in line
    d = json.loads(out)
    assert [p["load"] for p in d["curves"]["min"]] == [0.1, 0.2] and "plot" not in d
    assert list(tmp_path.iterdir()) == []


# The cases: each refused in well under a second with the estimate in the line. The machine
# is taken to have 8 GB free so that hyperx:dims=10000 (about 8 GB at its peak) is refused anywhere.
@pytest.mark.parametrize("spec,word", [
    ("polarstar:q=10007", "needs about"), ("hyperx:dims=10000", "needs about"),
    ("torus:dims=100000x100000", "needs about"), ("slimfly:q=2147483648", "needs about"),
    ("polarstar:q=9223372036854775808", "needs about"), ("polarstar:q=2^63", "must be an integer"),
    ("dragonfly:a=12345678901234567890,h=12345678901234567890", "needs about"),
    ("polarstar:q=3,degree=1000000000", "needs about"), ("polarstar:q=2305843009213693951", "needs about"),
    ("lps:p=10007,q=3", "Python steps"), ("polarstar:q=٣", "q='٣'"), ("torus:dims=٣x3", "dims="),
])
def test_too_big_is_refused_at_once(spec, word, monkeypatch):
    import topologies.spec

    monkeypatch.setattr(topologies.spec, "available_memory", lambda: 8 * 10 ** 9)
    run_main("topology", "er:q=3")                       # imports done
    t0 = time.process_time()                             # CPU time: the CI machine is shared
    code, out, err = run_main("topology", spec)
    assert time.process_time() - t0 < 1.0
    assert code == 2 and word in one_error_line(err), err


def test_size_estimate_is_close_to_the_build():
    """The estimate is within a small factor of the network's own arrays, and lets normal builds through."""
    from topologies import build
    from topologies.spec import available_memory, parse_spec

    assert available_memory() > 10 ** 8
    fam, kw = parse_spec("hyperx:dims=8x8x8")
    size = fam.size(**kw)
    net = build("hyperx:dims=8x8x8")
    assert (size.routers, size.ports) == (net.num_routers, int(net.ports.sum()))
    fam, kw = parse_spec("polarstar:q=3,supernode=paley,degree=2")
    assert fam.size(**kw).routers == build("polarstar:q=3,supernode=paley,degree=2").num_routers == 65


def test_hostswitch_huge_is_refused_at_once():
    make_parser()
    t0 = time.process_time()
    code, _, err = run_main("hostswitch", "--hosts", "1000000000", "--radix", "3", "--steps", "1")
    assert code == 2 and "hosts=1000000000" in one_error_line(err)
    assert time.process_time() - t0 < 1.0


@pytest.mark.parametrize("exc,word", [(KeyboardInterrupt(), "pstar: interrupted"),
                                      (MemoryError(), "out of memory"),
                                      (OSError(5, "Input/output error"), "Input/output error")])
def test_interrupt_memory_and_os_errors_are_one_line(exc, word, monkeypatch):
    import pstar.commands.topology as topology

    def fail(*a, **k):
        raise exc
    monkeypatch.setattr(topology, "build", fail)
    code, out, err = run_main("topology", "er:q=3")
    assert code == 2 and out == "" and word in one_error_line(err)


def test_lps_warnings_are_lines_and_in_json():
    code, out, err = run_main("topology", "lps:p=13,q=3", "--json")
    assert code == 0
    lines = err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("warning: LPS(p=13, q=3): ") for line in lines), err
    warnings = json.loads(out)["warnings"]
    assert sorted(warnings) == sorted(line[len("warning: "):] for line in lines)
    degenerate = next(w for w in warnings if "generators" in w)
    assert "11 of the 14" in degenerate and "still 14-regular" in degenerate   # it is 14-regular


def _options(parser):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from ((f"{name} {n}", a) for n, a in _options(sub))
        elif action.option_strings and action.dest != "help":
            yield "", action


def test_every_option_has_help_and_progress_goes_with_quiet():
    parser = make_parser()
    missing = [f"{where.strip()} {a.option_strings[0]}" for where, a in _options(parser) if not a.help]
    assert not missing, missing
    sub = next(a for a in parser._actions if a.choices and "sim" in a.choices).choices
    for name in ("demo", "sim", "sweep", "route", "metrics", "hostswitch"):
        flags = {f for a in sub[name]._actions for f in a.option_strings}
        assert "--quiet" in flags and "--no-progress" in flags, name
    text = sub["sim"].format_help()
    assert "(default: 5000)" in text and "(default: 1000)" in text and "(default: uniform)" in text


def test_failure_draw_seed_is_reported():
    code, out, err = run_main("sim", "polarstar:q=2,supernode=iq,degree=0", "--load", "0.05", "--cycles", "40",
                              "--warmup", "5", "--fail-links", "0.2", "--fail-seed", "7", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["fail_seed"] == 7 and d["failed_links"] > 0 and d["seed"] == 1


@pytest.mark.parametrize("argv", [["design-space", "--radix", "١٥"], ["topology", "er:q=3", "-p", "1_0"],
                                  ["hostswitch", "--hosts", "٨", "--radix", "4"]])
def test_options_take_ascii_digits_only(argv):
    code, out, err = run_main(*argv)
    assert code == 2 and out == "" and "invalid integer" in one_error_line(err)


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full")
def test_full_stdout_is_one_line(tmp_path):
    """`pstar ... > /dev/full`: one line naming stdout and the file that was written, exit 2."""
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "pstar.cli", "topology", "er:q=3", "--out", str(tmp_path / "n.json")],
                           stdout=full, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 2
    line = one_error_line(r.stderr)
    assert "stdout: cannot write (No space left on device)" in line and "n.json" in line
    assert json.loads((tmp_path / "n.json").read_text())["routers"] == 13
