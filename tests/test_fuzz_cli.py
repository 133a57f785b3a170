"""Property-based bad input (hypothesis): SPEC strings and every `pstar` subcommand's options.

Whatever the arguments, `pstar` ends with exit status 0 (a valid result) or 2 with exactly one
line on stderr, never a traceback. Numbers are drawn small so that no example builds or simulates
something large; the strings are arbitrary.
"""
import contextlib
import io
import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pstar.cli import main, make_parser
from topologies import build
from topologies.errors import ParameterError
from topologies.spec import FAMILIES, _load_families

_load_families()

small_int = st.integers(-3, 14).map(str)
junk = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)
value = st.one_of(small_int, junk, st.sampled_from(["iq", "paley", "complete", "3x3", "0x2", "1e9", "nan", ""]),
                  st.floats(-1, 2).map(str))


@st.composite
def specs(draw):
    fam = draw(st.one_of(st.sampled_from(sorted(FAMILIES)), junk))
    keys = sorted(FAMILIES[fam].params) if fam in FAMILIES else []
    pairs = draw(st.lists(st.tuples(st.one_of(st.sampled_from(keys or ["q"]), junk), value), max_size=4))
    sep = draw(st.sampled_from([":", "", "::", ":="]))
    return fam + sep + ",".join(f"{k}={v}" for k, v in pairs)


def run(argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
    return code, err.getvalue()


def routers_or_zero(spec: str) -> int:
    """How many routers a valid spec builds; 0 for an invalid one."""
    try:
        return build(spec).num_routers
    except ParameterError:
        return 0


def check(argv):
    code, err = run(argv)
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in err, (argv, err)


FUZZ = settings(max_examples=int(os.environ.get("PSTAR_FUZZ_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(specs())
def test_spec_parser_raises_only_parameter_error(spec):
    try:
        net = build(spec)
    except ParameterError as e:
        assert "\n" not in str(e)
    else:
        assert net.num_routers >= 1


@FUZZ
@given(specs(), st.booleans())
def test_topology_command(spec, as_json):
    check(["topology", spec] + (["--json"] if as_json else []))


option = st.one_of(st.tuples(st.sampled_from(["--routing", "--traffic", "--load", "--cycles", "--warmup", "--vcs",
                                               "--depth", "--packet", "--alloc-iters", "--fail-links", "--seed",
                                               "-p"]), value),
                   st.tuples(junk.map(lambda s: "--" + s), value))
small_spec = st.sampled_from(["polarstar:q=2,supernode=iq,degree=0", "polarstar:q=3,supernode=paley,degree=2",
                              "er:q=3", "polarstar:q=2"])


@FUZZ
@given(small_spec, st.lists(option, max_size=4))
def test_sim_command(spec, opts):
    argv = ["sim", spec]
    for k, v in opts:
        argv += [k, v]
    if "--load" not in argv:
        argv += ["--load", "0.1"]
    if "--cycles" not in argv:
        argv += ["--cycles", "50"]
    if "--warmup" not in argv:
        argv += ["--warmup", "10"]
    check(argv)


@FUZZ
@given(st.sampled_from(["route", "metrics", "design_space", "verilog"]), st.one_of(small_spec, specs()),
       st.lists(st.tuples(st.sampled_from(["--routing", "-V", "--src", "--dst", "--fail-links", "--radix",
                                           "--trials", "-B", "--out"]), value), max_size=3))
def test_other_commands(cmd, spec, opts):
    # a valid spec can draw a large network (q up to 13), whose Verilog takes minutes: those are
    # not bad input, and the rest of the suite elaborates large networks
    if cmd in ("verilog", "metrics"):
        assume(routers_or_zero(spec) <= 64)
    argv = [cmd] if cmd == "design_space" else [cmd, spec]
    for k, v in opts:
        if k == "--out":
            v = "/nonexistent-dir/x." + v
        argv += [k, v]
    check(argv)


@FUZZ
@given(st.one_of(small_spec, specs()),
       st.lists(st.tuples(st.sampled_from(["--board", "--design", "--routing", "--ports", "--vcs", "--depth",
                                           "--flit-width", "--freq", "--router", "--seed"]),
                          st.one_of(value, st.sampled_from(["ulx3s-85f", "icebreaker", "router", "network", "unit",
                                                            "polarstar", "min"]))), max_size=5),
       st.booleans(), st.booleans())
def test_fpga_build_options(spec, opts, id_input, no_wide_luts):
    """`pstar fpga build --dry-run`: every option is checked before any tool runs."""
    argv = ["fpga", "build", spec, "--dry-run"] + (["--id-input"] if id_input else []) + \
        (["--no-wide-luts"] if no_wide_luts else [])
    for k, v in opts:
        argv += [k, v]
    if "--board" not in argv:
        argv += ["--board", "ulx3s-85f"]
    check(argv)


# --- output files: checked before the work, never half-written -------------------------------------

PATH_KINDS = ("ok", "missing-folder", "folder", "file-as-folder", "no-suffix", "bad-suffix", "empty")


def output_path(kind: str, folder: Path, suffix: str) -> str:
    """An --out/--plot argument of the given kind inside `folder` (a fresh temporary folder)."""
    (folder / "plain.txt").write_text("a file, not a folder\n")
    return {"ok": str(folder / f"out{suffix}"), "missing-folder": str(folder / "nosuch" / f"out{suffix}"),
            "folder": str(folder), "file-as-folder": str(folder / "plain.txt" / f"out{suffix}"),
            "no-suffix": str(folder / "out"), "bad-suffix": str(folder / "out.xyz"), "empty": ""}[kind]


def command_argv(cmd: str, draw, path: str) -> list[str]:
    """argv of `cmd` with random small numbers and specs, writing to `path`."""
    num = draw(st.one_of(st.integers(-2, 40).map(str), junk))
    if cmd == "topology":
        return ["topology", draw(st.one_of(small_spec, specs())), "--out", path]
    if cmd == "design-space":
        return ["design-space", "--radix", draw(st.one_of(st.integers(-2, 40).map(str), junk)), "--plot", path]
    if cmd == "metrics":
        return ["metrics", draw(small_spec), "--trials", draw(st.sampled_from(["1", "2", "0", num])),
                "--fail-step", draw(st.sampled_from(["0.3", "0.5", "1.5", "x"])), "--bisection-seeds", "1",
                "--no-spectrum", "--plot", path]
    if cmd == "sweep":
        return ["sweep", draw(small_spec), "--loads", draw(st.sampled_from(["0.1", "0.1,0.3", "2", "", num])),
                "--cycles", "30", "--warmup", "5", "--quiet", "--plot", path]
    if cmd == "hostswitch":
        return ["hostswitch", "--hosts", draw(st.sampled_from(["8", "12", "2", "1000000000", num])),
                "--radix", draw(st.sampled_from(["4", "5", "3", "1"])), "--steps", "20", "--quiet", "--out", path]
    if cmd == "verilog":          # a bad path is refused before elaboration, the good one elaborates q=2
        return ["verilog", "polarstar:q=2,supernode=iq,degree=0", "--out", path]
    if cmd == "fpga-sweep":
        return ["fpga", "sweep", "--no-build", "--out", path]
    return ["fpga", "build", draw(small_spec), "--board", "ulx3s-85f", "--dry-run", "--build-dir", path]


SUFFIX = {"topology": ".json", "design-space": ".png", "metrics": ".svg", "sweep": ".png", "hostswitch": ".txt",
          "verilog": ".v", "fpga-sweep": "", "fpga-build": ""}


def run_captured(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=int(os.environ.get("PSTAR_FUZZ_OUTPUT_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(SUFFIX)), st.sampled_from(PATH_KINDS), st.booleans(), st.data())
def test_every_output_is_written_whole_or_refused(cmd, kind, as_json, data):
    """Exit 0 and the file is complete, or exit 2 with one line and no file (nor a temporary one)."""
    if cmd == "verilog" and kind in ("ok", "no-suffix", "bad-suffix"):
        kind = "missing-folder"       # a path it takes is test_hdl_cli's: elaborating takes seconds
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = output_path(kind, folder, SUFFIX[cmd])
        argv = command_argv(cmd, data.draw, path) + (["--json"] if as_json else [])
        before = sorted(p.name for p in folder.iterdir())
        code, out, err = run_captured(argv)
        assert code in (0, 2), (argv, code, err)
        assert "Traceback" not in err and "Warning:" not in err, (argv, err)
        after = sorted(p.name for p in folder.iterdir())
        assert not [n for n in after if ".partial-" in n], (argv, after)
        if code == 2:
            lines = [line for line in err.splitlines() if line.strip()]
            assert len(lines) == 1 and lines[0].startswith("pstar"), (argv, err)
            assert after == before, (argv, before, after)
            return
        # an edge list or a build folder takes any name, and a build folder may exist already
        assert kind == "ok" or (cmd in ("hostswitch", "fpga-build") and kind in ("no-suffix", "bad-suffix")) \
            or (cmd == "fpga-build" and kind == "folder"), (argv, "a bad path was accepted")
        if as_json:
            d = json.loads(out)
            assert isinstance(d, dict)
        if cmd not in ("fpga-sweep", "fpga-build"):
            written = Path(path)
            assert written.is_file() and written.stat().st_size > 0, argv
            if cmd == "topology":
                assert json.loads(written.read_text())["format"] == "pstar-netlist/1"


@settings(max_examples=int(os.environ.get("PSTAR_FUZZ_EXAMPLES", "60")), deadline=None)
@given(st.sampled_from(sorted(FAMILIES)), st.data())
def test_huge_numbers_are_refused_at_once(name, data):
    """Every integer of a SPEC at 10^9..10^30 (sizes of `dims` too): refused in one line within a
    second, by the size estimate or the parameter checks, before anything is allocated."""
    import time

    import topologies.spec

    huge = st.integers(10 ** 9, 10 ** 30)
    items = []
    for key, (typ, _) in FAMILIES[name].params.items():
        if key == "dims":
            items.append(f"dims={'x'.join(map(str, data.draw(st.lists(huge, min_size=1, max_size=3))))}")
        elif typ is int and key != "seed":
            items.append(f"{key}={data.draw(huge)}")
    make_parser()                                   # the command modules imported before the clock starts
    old = topologies.spec.available_memory
    topologies.spec.available_memory = lambda: 8 * 10 ** 9
    try:
        t0 = time.process_time()                      # CPU time: the CI machine is shared
        code, out, err = run_captured(["topology", f"{name}:{','.join(items)}"])
        seconds = time.process_time() - t0
    finally:
        topologies.spec.available_memory = old
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (items, err)
    assert seconds < 1.0, (items, seconds)
