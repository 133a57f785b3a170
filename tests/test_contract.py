"""The contract (`contract/params.py`) is the one place a router parameter's default, range,
choices and help are written: the docs table is generated from it, no module of pstar/, fpga/,
sim/ or hdl/ restates a default or a limit, and the commands' flags are the contract's."""
import argparse
import ast
import pathlib
import re

import pytest

from contract import doc_table
from contract.cli import add_router_arguments, router_params_from_args
from contract.params import DEFAULTS, OPTIONS, PARAMS, SPECS, RouterParams
from pstar.cli import make_parser

from cli_run import run_cli
from topologies.errors import ParameterError

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCANNED = ("pstar", "fpga", "sim", "hdl")
# the names a contract parameter goes by in code: its own, and its flag's (flit_width, packet)
NAMES = set(SPECS) | {spec.dest for spec in SPECS.values()}
FLAGS = {flag: spec.name for spec in SPECS.values() for flag in (spec.flag, spec.short) if flag}
# (path, name) -> why a literal under a contract name there is not a router default
NOT_ROUTER_DEFAULTS = {
    ("hdl/formal/properties.py", "vcs"): "the formal harnesses' sizes, chosen small for the solver",
    ("hdl/formal/properties.py", "depth"): "the formal harnesses' sizes, chosen small for the solver",
    ("hdl/formal/properties.py", "packet_flits"): "the formal harnesses' sizes, chosen small for the solver",
    ("hdl/formal/runner.py", "depth"): "the bounded model check's depth, not a buffer's",
}
# restatements in files owned by a change still under way: (path, name) -> why it is left for now.
# Remove an entry once its file reads the contract (VC_POLICY.default and so on).
PENDING = {("sim/network_sim.py", "vc_policy"): "NetworkSim's signature; sim/network_sim.py is being restructured"}


def test_docs_table_is_the_generated_one():
    docs = doc_table.section(doc_table.DOC.read_text())
    assert docs == doc_table.table(), "docs/microarchitecture.md is stale: run python -m contract.doc_table --write"


def test_doc_table_has_a_row_per_spec_with_its_default_and_range():
    table = doc_table.table()
    for name, spec in SPECS.items():
        line = next(row for row in table.splitlines() if row.startswith(f"| `{name}`"))
        values = ", ".join(f"`{c}`" for c in spec.choices) if spec.choices else spec.range_text()
        assert spec.flag in line and values in line, line
        assert (f"`{spec.default}`" if spec.choices else f" {spec.default} ") in line, line


# --- the contract's own behaviour --------------------------------------------------------------

def test_router_params_keep_their_api():
    p = RouterParams(vcs=2, depth=4)
    assert (p.vcs, p.depth, p.packet_flits) == (2, 4, DEFAULTS["packet_flits"])
    assert p.as_dict() == {**DEFAULTS, "vcs": 2, "depth": 4}
    assert RouterParams().as_dict() == DEFAULTS == {name: spec.default for name, spec in PARAMS.items()}
    assert list(PARAMS) == list(DEFAULTS) == list(RouterParams.__dataclass_fields__)


@pytest.mark.parametrize("name", list(PARAMS))
def test_router_params_check_the_spec_limits(name):
    spec = PARAMS[name]
    extra = {"sa_stages": 1} if name == "alloc_iters" else {}
    for ok in (spec.lo, spec.hi):
        assert getattr(RouterParams(**{name: ok, **extra}), name) == ok
    for bad in (spec.lo - 1, spec.hi + 1, str(spec.lo), True, 1.0):
        with pytest.raises(ParameterError, match=re.escape(f"{name}={bad!r}: must be an integer in {spec.lo}..{spec.hi}")):
            RouterParams(**{name: bad, **extra})


def test_pipelined_sa_takes_one_iteration():
    with pytest.raises(ParameterError, match=r"alloc_iters=2: the pipelined switch allocator \(sa_stages=2\)"):
        RouterParams(sa_stages=2, alloc_iters=2)


def test_options_have_their_choices_and_default():
    from contract.flit import FLIT_FORMATS, HEADERS
    from routing_logic.base import VC_POLICIES
    assert OPTIONS["flit"].choices == FLIT_FORMATS and OPTIONS["header"].choices == HEADERS
    assert OPTIONS["vc_policy"].choices == tuple(VC_POLICIES)
    for spec in OPTIONS.values():
        assert spec.default in spec.choices
        with pytest.raises(ParameterError, match=f"{spec.name}='nope': must be one of"):
            spec.check("nope")


def test_cli_helper_makes_flags_and_params():
    p = argparse.ArgumentParser()
    add_router_arguments(p, only=("vcs", "packet_flits", "flit"))
    args = p.parse_args(["-V", "3", "--packet", "2"])
    assert router_params_from_args(args) == RouterParams(vcs=3, packet_flits=2) and args.flit == "wide"
    assert router_params_from_args(args, depth=2).depth == 2
    with pytest.raises(KeyError, match="not a contract parameter"):
        add_router_arguments(p, only=("nope",))


# --- nothing outside the contract restates a default or a limit ------------------------------

def _literal(node) -> bool:
    """A constant other than None, or a tuple/list of constants."""
    if isinstance(node, ast.Constant):
        return node.value is not None
    return isinstance(node, (ast.Tuple, ast.List)) and bool(node.elts) and all(_literal(e) for e in node.elts)


def _name_of(node):
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _is_contract_name(text) -> bool:
    return isinstance(text, str) and text.replace("-", "_").lstrip("_") in NAMES


def _argument_issue(call):
    flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    dest = next((k.value.value for k in call.keywords if k.arg == "dest" and isinstance(k.value, ast.Constant)), None)
    hit = next((f for f in flags if f in FLAGS), None)
    name = FLAGS[hit] if hit else dest if dest in SPECS else None
    if name:
        return name, f"flag {hit or dest} declared here: take it from contract.cli.add_router_arguments"
    return None


def _call_issue(call):
    """add_argument of a contract flag, or a range check such as _int("vcs", v, 1, 16)."""
    if _name_of(call.func) == "add_argument":
        return _argument_issue(call)
    if call.args and isinstance(call.args[0], ast.Constant) and _is_contract_name(call.args[0].value):
        ints = [a for a in call.args[1:] if isinstance(a, ast.Constant) and type(a.value) is int]
        if len(ints) >= 2:
            name = call.args[0].value.replace("-", "_")
            return name, f"limits of {name} written here ({', '.join(str(a.value) for a in ints)}): use the contract's"
    return None


def _field_default(value):
    """The literal default of a class-body field (`= 4` or `= field(default=4)`), or None."""
    if _literal(value):
        return value
    if isinstance(value, ast.Call) and _name_of(value.func) == "field":
        return next((k.value for k in value.keywords if k.arg == "default" and _literal(k.value)), None)
    return None


def _function_issues(fn):
    args = fn.args
    positional = args.posonlyargs + args.args
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    for arg, default in pairs:
        if arg.arg in NAMES and _literal(default):
            yield default.lineno, arg.arg, f"parameter {arg.arg}={ast.unparse(default)}: default it from the contract"


def _class_issues(cls):
    for stmt in cls.body:
        target = stmt.target if isinstance(stmt, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id in NAMES and stmt.value is not None:
            default = _field_default(stmt.value)
            if default is not None:
                yield stmt.lineno, target.id, f"field {target.id} = {ast.unparse(default)}: default it from the contract"


def _defaults_dict_issues(node):
    """`X_DEFAULTS = {"vcs": 4, ...}`: a table of defaults restated."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if not any("DEFAULT" in (_name_of(t) or "").upper() for t in targets) or not isinstance(node.value, ast.Dict):
        return
    for key, value in zip(node.value.keys, node.value.values):
        if isinstance(key, ast.Constant) and key.value in NAMES and _literal(value):
            yield key.lineno, key.value, f"default {key.value}={ast.unparse(value)} in a table of defaults"


def restatements(source: str, path: str = "<string>") -> list[tuple[str, int, str, str]]:
    """(path, line, name, what) for every default or limit of a contract parameter written in `source`."""
    found = []
    for node in ast.walk(ast.parse(source, filename=path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            found += [(path, *issue) for issue in _function_issues(node)]
        elif isinstance(node, ast.ClassDef):
            found += [(path, *issue) for issue in _class_issues(node)]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            found += [(path, *issue) for issue in _defaults_dict_issues(node)]
        elif isinstance(node, ast.Call):
            issue = _call_issue(node)
            if issue:
                found.append((path, node.lineno, *issue))
    return found


PLANTED = '''
import dataclasses
def run(net, vc_policy: str = "hops", *, depth=8, flit_width=None): ...
def ok(net, vcs=None, header=HEADER.default): ...
class Config:
    vcs: int = 4
    flit: str = dataclasses.field(default="wide")
    ports: int = 3
    header: str = HEADER.default
KEY_DEFAULTS = {"link_latency": 1, "placer": "heap"}
def add(p):
    p.add_argument("--va-stages", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("-B", type=int)
    _int("credit-latency", cfg.credit_latency, 1, 8)
    make_routing(net, vcs=1)
'''


def test_the_scan_finds_planted_restatements():
    found = {(line, name) for _, line, name, _ in restatements(PLANTED)}
    assert found == {(3, "vc_policy"), (3, "depth"), (6, "vcs"), (7, "flit"), (10, "link_latency"),
                     (12, "va_stages"), (14, "depth"), (15, "credit_latency")}, found


def test_no_default_or_limit_is_restated_outside_the_contract():
    found = []
    for package in SCANNED:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            found += [f"{where}:{line}: {what}" for where, line, name, what in restatements(path.read_text(), rel)
                      if (where, name) not in NOT_ROUTER_DEFAULTS and (where, name) not in PENDING]
    assert not found, "defaults or limits written outside contract/params.py:\n" + "\n".join(found)


# --- the commands' flags are the contract's -------------------------------------------------

COMMANDS = (("sim",), ("sweep",), ("verilog",), ("route",), ("fpga", "build"), ("fpga", "area"))
# flags whose default the command computes when not given (None in the parser); the FPGA commands
# take every router flag from a preset when it is not given (fpga/presets.py), then the contract's
FPGA_ROUTER = {"vcs", "depth", "payload_bits", "va_stages", "sa_stages", "st_stage", "va_separable",
               "va_choice_stage", "vc_policy", "link_latency", "credit_latency", "header", "flit", "packet_id_bits"}
COMPUTED = {("sim",): {"vcs"}, ("sweep",): {"vcs"}, ("verilog",): {"vcs"}, ("route",): {"vcs"},
            ("fpga", "build"): FPGA_ROUTER, ("fpga", "area"): FPGA_ROUTER}


def subparser(parser, path):
    for word in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[word]
    return parser


def contract_actions(path):
    parser = subparser(make_parser(), path)
    return parser, {a.dest: a for a in parser._actions if a.dest in SPECS}


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_command_flags_are_the_contracts(path):
    parser, actions = contract_actions(path)
    fpga = path[0] == "fpga"
    assert actions, path
    for name, action in actions.items():
        spec = SPECS[name]
        assert action.option_strings == [f for f in (spec.short, spec.flag) if f], (path, name)
        assert action.default == (None if name in COMPUTED.get(path, ()) else spec.default), (path, name)
        assert spec.help.replace("%", "%%") in action.help, (path, name)
        if spec.choices:
            assert tuple(action.choices) == spec.choices, (path, name)
            continue
        lo, hi = spec.bounds(fpga)
        assert action.type(str(lo)) == lo and action.type(str(hi)) == hi, (path, name)
        for bad in (lo - 1, hi + 1):
            with pytest.raises(argparse.ArgumentTypeError, match=re.escape(f"={bad}: must be an integer in {lo}..{hi}")):
                action.type(str(bad))


def test_fpga_commands_take_what_a_build_takes():
    from fpga.build import ROUTER_SPECS, FpgaConfig
    fields = {f.name: f for f in FpgaConfig.__dataclass_fields__.values()}
    for field, spec in ROUTER_SPECS.items():
        assert fields[field].default == spec.default, field
    for path in (("fpga", "build"), ("fpga", "area")):
        assert set(contract_actions(path)[1]) == {spec.name for spec in ROUTER_SPECS.values()}, path


run = run_cli


SMALL = "polarstar:q=2,supernode=iq,degree=0"


@pytest.mark.parametrize("path,extra", [(("sim",), ["--load", "0.1"]), (("sweep",), []), (("verilog",), []),
                                        (("fpga", "build"), ["--board", "ulx3s-85f", "--dry-run"]),
                                        (("fpga", "area"), [])])
def test_out_of_range_is_one_line_exit_2(path, extra, capsys):
    hi = PARAMS["vcs"].bounds(path[0] == "fpga")[1]
    code, out, err = run([*path, SMALL, "--vcs", str(hi + 1), *extra], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert f"argument -V/--vcs: vcs={hi + 1}: must be an integer in 1..{hi}" in err, err
    args = make_parser().parse_args([*path, SMALL, "--vcs", str(hi), *extra])
    assert args.vcs == hi


def test_the_contracts_largest_vcs_runs(capsys):
    """`--vcs 64`, the contract's limit, simulates (and the FPGA's 16 passes a dry run)."""
    code, out, err = run(["sim", SMALL, "--routing", "min", "--vcs", "64", "--load", "0.05", "--warmup", "0",
                          "--cycles", "20", "--json"], capsys)
    assert code == 0 and '"vcs":64' in out, err
    code, out, err = run(["fpga", "build", SMALL, "--board", "ulx3s-85f", "--vcs", "16", "--dry-run", "--json"], capsys)
    assert code == 0 and '"vcs":16' in out, err
