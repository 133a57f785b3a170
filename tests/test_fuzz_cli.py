"""Property-based bad input (hypothesis): SPEC strings and every `pstar` subcommand's options.

Whatever the arguments, `pstar` ends with exit status 0 (a valid result) or 2 with exactly one
line on stderr, never a traceback. Numbers are drawn small so that no example builds or simulates
something large; the strings are arbitrary.
"""
import contextlib
import io

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pstar.cli import main
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


FUZZ = settings(max_examples=int(__import__("os").environ.get("PSTAR_FUZZ_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


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
