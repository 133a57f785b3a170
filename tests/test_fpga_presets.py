"""FPGA build presets (fpga/presets.toml) and the single source of the build flags' defaults
(FpgaConfig's fields, made into flags by fpga/cli.py). Dry runs only: nothing is placed or routed."""
import argparse
import ast
import dataclasses
import json
import pathlib
import re
import tomllib

import pytest

from fpga.build import BUILD_OPTIONS, FpgaConfig
from fpga.cli import given_values
from fpga.presets import DESIGN_FIELDS, MEASURED_KEYS, PRESETS_FILE, configure, default_for, get, load, presets
from pstar.cli import make_parser
from topologies.errors import ParameterError
from cli_run import run_cli

ROOT = pathlib.Path(__file__).resolve().parent.parent
# the README's measured 100 MHz command (100.13 MHz at seed 6, RTL 3c20bcb), as it was written but for the seed
# (the preset's: the best of seeds 1-5 at its last measurement) and synth_ecp5's own abc9 script: router1 with
# timing-driven rip-up, median 93.47 MHz over seeds 1-5 at RTL dd6c817 and 95.18 at the RTL of 1f45a9e, where
# router2 without it gave 82.07 (router1 routed none of seeds 1-5 in 25 minutes at RTL 1aa04cf, a larger router)
TARGET_LINE = ("--board ulx3s-85f --design router polarstar:q=3,supernode=iq,degree=3 --ports 8 --vcs 4 --depth 8 "
               "--flit-width 64 --va-stages 2 --sa-stages 3 --st-stage 2 --flit lean --body-bram auto --placer static "
               "--va-separable 1 --va-choice-stage 1 --link-latency 3 --credit-latency 3 "
               "--pnr-router router1 --tmg-ripup --seed 3").split()
# the 26-router network's options: those it was first measured with (48.79 MHz, 93.3 % of the 85F, RTL
# ade6fbb), with the registered links it has had since e1c98f6, the arithmetic unit since a3f47db, block-RAM
# bodies behind a second switch-traversal register and router1 since its build at dbcc3ee, and its
# best seed (docs/fpga.md, "Current figures")
NET26_LINE = ("--board ulx3s-85f --design network polarstar:q=3,supernode=iq,degree=0 --routing polarstar --vcs 2 "
              "--vc-policy turns --depth 4 --va-stages 1 --va-separable 1 --sa-stages 2 --st-stage 2 "
              "--packet-id-bits 8 --flit lean --no-wide-luts --body-bram auto --front lutram --pnr-router router1 "
              "--placer static --link-latency 2 --credit-latency 2 --seed 1").split()


cli = run_cli


def flags_config(argv) -> FpgaConfig:
    """The FpgaConfig of `pstar fpga build ARGV` from its flags and FpgaConfig's defaults alone."""
    return configure(given_values(make_parser().parse_args(["fpga", "build", *argv])), board_default=False)[0]


def test_the_presets_file_parses_and_names_every_field():
    data = tomllib.loads(PRESETS_FILE.read_text())
    fields = {f.name for f in dataclasses.fields(FpgaConfig)} - {"build_dir"}
    assert {"target-100mhz", "net26", "icebreaker-router", "ci-router"} <= set(data["presets"])
    for name, table in data["presets"].items():
        written = set(table) - {"about", "measured"}
        assert written <= fields and fields - written <= {"ports", "freq_mhz"}, name   # none-default ones only
        assert 0 < len(table["about"]) <= 100, name
        for key, value in table.get("measured", {}).items():
            assert isinstance(value, MEASURED_KEYS[key]), (name, key)
        if "measured" in table:       # the figure is of the preset's build: its seed, a commit
            assert table["measured"]["seed"] == table["seed"] and table["measured"]["commit"], name
            assert {"fmax_mhz", "lut4", "ff"} <= set(table["measured"]), name
    assert default_for("ulx3s-85f", "router") == "target-100mhz" and default_for("ulx3s-85f", "unit") is None


def test_a_bad_presets_file_is_refused(tmp_path):
    good = PRESETS_FILE.read_text()
    for bad, needle in ((good.replace("seed = 1\n", "seed = 1\nspeed = 1\n", 1), "unknown fields ['speed']"),
                        (good.replace("placer = \"static\"\n", "", 1), "missing ['placer']"),
                        (re.sub(r"^fmax_mhz = .*$", 'fmax_mhz = "fast"', good, count=1, flags=re.M), "measured fmax_mhz"),
                        (good.replace('router = "target-100mhz"', 'router = "net26"'), "not a ulx3s-85f router")):
        path = tmp_path / "p.toml"
        path.write_text(bad)
        with pytest.raises(ValueError, match=needle.replace("[", r"\[").replace("]", r"\]")):
            load(path)


def test_a_build_at_several_seeds_shows_its_median():
    from fpga.presets import Preset, measured_fmax
    one = {"fmax_mhz": 100.13, "seed": 6, "lut4": 1, "ff": 1, "commit": "abc1234"}
    several = one | {"seeds": "1-5", "fmax_median_mhz": 97.68, "fmax_min_mhz": 0.0, "fmax_max_mhz": 100.13}
    assert measured_fmax(Preset("a", "b", {}, one)) == "100.13 MHz (seed 6)"
    assert measured_fmax(Preset("a", "b", {}, several)) == "median 97.68 MHz (min 0.00, max 100.13; seeds 1-5)"
    assert measured_fmax(Preset("a", "b", {}, {})) == "not recorded"


def test_the_target_preset_is_the_readme_line():
    assert get("target-100mhz").config() == flags_config(TARGET_LINE)
    assert get("net26").config() == flags_config(NET26_LINE)
    # the preset builds its best measured seed, and the guide's current figures are its measured ones
    m = get("target-100mhz").measured
    assert m["seed"] == get("target-100mhz").config().seed and m["fmax_mhz"] == m["fmax_max_mhz"]
    guide = " ".join((ROOT / "docs" / "fpga.md").read_text().split())
    assert (f"{m['lut4']:,} TRELLIS_COMB, {m['ff']:,} FF" in guide and f"RTL {m['commit']}" in guide
            and f"median {m['fmax_median_mhz']:.2f} MHz ({m['fmax_min_mhz']:.2f}..{m['fmax_max_mhz']:.2f})" in guide)


def test_presets_are_the_builds_they_name():
    """The sweep points and CI's bitstream build (tests/test_fpga_build.py) the presets stand for."""
    from fpga.sweep import points
    pts = points()
    assert get("target-onecycle").config() == dataclasses.replace(pts["router-P8-V4-B8-W64"], pnr_router="router2")
    assert get("unit-q7-id").config() == pts["unit-polarstar-q7-id"]
    assert get("ci-router").config() == FpgaConfig(
        board="ulx3s-85f", design="router", spec="polarstar:q=2,supernode=iq,degree=0", ports=4, vcs=3, depth=4,
        flit_width=16, st_stage=1, body_bram="auto", freq_mhz=50, pnr_margin=10)


@pytest.mark.parametrize("name", list(presets()))
def test_every_preset_dry_runs(name, capsys):
    code, out, err = cli(["fpga", "build", "--preset", name, "--dry-run", "--json"], capsys)
    assert code == 0, err
    rep, cfg = json.loads(out), get(name).config()
    assert (rep["preset"], rep["preset_from"]) == (name, "--preset")
    assert (rep["board"], rep["design"], rep["spec"], rep["vcs"], rep["depth"]) == \
        (cfg.board, cfg.design, cfg.spec, cfg.vcs, cfg.depth)
    assert rep["abc"] == cfg.abc and rep["wide_luts"] == cfg.wide_luts
    assert rep["nextpnr"].startswith(f"--seed {cfg.seed} --router {cfg.pnr_router} --placer {cfg.placer}")
    assert rep["nextpnr"].endswith("--tmg-ripup") == cfg.tmg_ripup
    assert rep["build_dir"].endswith(cfg.key())


def test_flags_given_beat_the_preset(capsys):
    code, out, err = cli(["fpga", "build", "--preset", "target-100mhz", "--seed", "3", "--tmg-ripup", "--vcs", "2",
                          "--pnr-router", "router1", "--flit", "wide", "--dry-run", "--json"], capsys)
    rep = json.loads(out)
    assert code == 0 and rep["nextpnr"] == "--seed 3 --router router1 --placer static --tmg-ripup" and rep["vcs"] == 2
    assert rep["flit"] == "wide" and (rep["sa_stages"], rep["link_latency"], rep["abc"]) == (3, 3, "default")
    cfg, source = configure({"seed": 2, "spec": "polarstar:q=2,supernode=iq,degree=0", "ports": None}, "net26")
    assert (cfg.seed, cfg.spec, cfg.vc_policy, cfg.front) == (2, "polarstar:q=2,supernode=iq,degree=0", "turns", "lutram")
    assert source == {"preset": "net26", "preset_from": "--preset"}


def test_an_unknown_preset_is_one_line_exit_2(capsys):
    for command in (["build", "--dry-run"], ["sweep", "--no-build"], ["area"]):
        code, out, err = cli(["fpga", *command, "--preset", "target-200mhz"], capsys)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert "preset='target-200mhz': unknown; known: target-100mhz," in err, err


def test_the_router_default_is_the_board_preset(capsys):
    """With no SPEC, the board's default preset; with the target router's sizes, its options; with
    other sizes (or another board or design), FpgaConfig's defaults."""
    target = get("target-100mhz").config()
    assert configure({})[0] == target
    same = {k: v for k, v in vars(target).items() if k in ("spec", "ports", "flit_width")}
    cfg, source = configure(same)
    assert cfg == target and source["preset_from"] == "the ulx3s-85f router default"
    assert configure({**same, "vcs": 2})[0] == FpgaConfig(**same, vcs=2)
    assert configure({**same, "design": "unit"})[0] == FpgaConfig(**same, design="unit")
    assert configure({"board": "icebreaker"})[0] == get("icebreaker-router").config()
    code, out, err = cli(["fpga", "build", "--dry-run", "--json"], capsys)
    assert code == 0 and json.loads(out)["nextpnr"] == (f"--seed {target.seed} --router {target.pnr_router} "
                                                   f"--placer {target.placer}" + " --tmg-ripup" * target.tmg_ripup)
    code, out, err = cli(["fpga", "build", "polarstar:q=2,supernode=iq,degree=0", "--dry-run", "--json"], capsys)
    assert code == 0 and json.loads(out)["preset"] is None and json.loads(out)["sa_stages"] == 1
    assert "a router on the ulx3s-85f from target-100mhz" in " ".join(flag_help("build", "--preset").split())


def test_presets_lists_names_and_figures(capsys):
    code, out, err = cli(["fpga", "presets"], capsys)
    target = get("target-100mhz").measured
    assert code == 0 and "target-100mhz *" in out
    assert (f"median {target['fmax_median_mhz']:.2f} MHz (min {target['fmax_min_mhz']:.2f}, "
            f"max {target['fmax_max_mhz']:.2f}; seeds {target['seeds']})") in out
    assert f"{target['lut4']:,}" in out
    assert all(name in out for name in presets())
    code, out, err = cli(["fpga", "presets", "--json"], capsys)
    listed = {p["name"]: p for p in json.loads(out)["presets"]}
    assert list(listed) == list(presets()) and listed["target-100mhz"]["default_for"] == "ulx3s-85f router"
    assert FpgaConfig(**listed["net26"]["config"]) == get("net26").config()
    with open(PRESETS_FILE, "rb") as f:                # the measured block as the file has it
        written = tomllib.load(f)["presets"]["net26"]["measured"]
    assert listed["net26"]["measured"] == written and listed["ci-router"]["measured"] == {}


def test_sweep_takes_a_presets_options(tmp_path, monkeypatch):
    import fpga.sweep as sweep
    opts = sweep.sweep_options("target-100mhz", placer="heap", seed=None)
    target_seed = get("target-100mhz").config().seed
    assert not set(opts) & set(DESIGN_FIELDS)
    assert (opts["seed"], opts["abc"], opts["placer"]) == (target_seed, "default", "heap")
    with pytest.raises(ParameterError, match="vcs: not an option a sweep sets"):
        sweep.sweep_options(vcs=2)
    built = []
    monkeypatch.setattr(sweep, "build", lambda cfg, progress=True, seeds=None: built.append(cfg) or {
        "lut4": 1, "ff": 1, "fmax_mhz": 1.0, "design": cfg.design, "routing": cfg.routing, "ports": cfg.ports,
        "vcs": cfg.vcs, "depth": cfg.depth, "flit_width": cfg.flit_width})
    monkeypatch.setattr(sweep, "plot", lambda rows, path: None)
    sweep.run_sweep(out=str(tmp_path / "s"), only="router-P4-V2-B4-W32", preset="net26", progress=False)
    assert built == [dataclasses.replace(sweep.points()["router-P4-V2-B4-W32"], **get("net26").options())]


def test_the_presets_file_is_package_data():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "presets.toml" in project["tool"]["setuptools"]["package-data"]["fpga"]
    assert PRESETS_FILE.parent == ROOT / "fpga"


# --- one source for the build options' defaults: FpgaConfig -----------------------------------------

def flag_help(command: str, flag: str) -> str:
    parser = make_parser()
    for word in ("fpga", command):
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[word]
    return next(a for a in parser._actions if flag in a.option_strings).help


def test_the_flags_are_made_from_fpga_config():
    parser = make_parser()
    for command in ("build", "area", "sweep"):
        sub = parser
        for word in ("fpga", command):
            sub = next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction)).choices[word]
        actions = {a.dest: a for a in sub._actions if a.dest in BUILD_OPTIONS}
        assert actions, command
        for name, action in actions.items():
            opt = BUILD_OPTIONS[name]
            assert action.default is None and (opt.flag in action.option_strings or name == "spec"), (command, name)
            assert name == "spec" or opt.help.replace("%", "%%") in action.help, (command, name)
            d = opt.default
            shown = ((opt.flag if d else "--no-" + opt.flag[2:]) if isinstance(d, bool) else "none" if d is None
                     else f"{d:g}" if isinstance(d, float) else str(d))
            assert f"(default: the preset's, else {shown}" in action.help, (command, name)
    args = parser.parse_args(["fpga", "build", "--seed", "3", "--no-wide-luts"])
    assert given_values(args) == {"seed": 3, "wide_luts": False}


def written_defaults(source: str, path: str, names: set, flags: set) -> list[str]:
    """Where `source` writes a default of an FpgaConfig build option: an add_argument of its flag
    (outside fpga/cli.py, which makes them), a parameter or class field of its name with a literal
    default other than None, or an entry of a table of defaults."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
            given = {a.value for a in node.args if isinstance(a, ast.Constant)} & (flags | {"--no-wide-luts"})
            found += [f"{path}:{node.lineno}: flag {f}" for f in given]
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)):
            a = node.args
            pairs = list(zip((a.posonlyargs + a.args)[::-1], a.defaults[::-1])) + list(zip(a.kwonlyargs, a.kw_defaults))
            found += [f"{path}:{d.lineno}: parameter {p.arg}" for p, d in pairs
                      if p.arg in names and isinstance(d, ast.Constant) and d.value is not None]
        elif isinstance(node, ast.ClassDef) and node.name != "FpgaConfig":
            found += [f"{path}:{s.lineno}: field {s.target.id}" for s in node.body if isinstance(s, ast.AnnAssign)
                      and getattr(s.target, "id", None) in names and isinstance(s.value, ast.Constant)
                      and s.value.value is not None]
        elif isinstance(node, ast.Dict):
            found += [f"{path}:{k.lineno}: table entry {k.value}" for k, v in zip(node.keys, node.values)
                      if isinstance(k, ast.Constant) and k.value in names and isinstance(v, ast.Constant)
                      and v.value == BUILD_OPTIONS[k.value].default and v.value is not None]
    return found


PLANTED = '''
def run_sweep(out, pnr_router="router1", placer=None, *, seed=1):
    p.add_argument("--abc", default="default")
    p.add_argument("--no-wide-luts", action="store_true")
class Row:
    front: str = "reg"
DEFAULTS = {"body_bram": "off", "board": "icebreaker"}
'''


def test_a_default_written_twice_is_found():
    names, flags = set(BUILD_OPTIONS) - {"spec"}, {o.flag for o in BUILD_OPTIONS.values()}
    found = written_defaults(PLANTED, "x.py", names, flags)
    assert sorted(s.split(": ", 1)[1] for s in found) == sorted(
        ["parameter pnr_router", "parameter seed", "flag --abc", "flag --no-wide-luts", "field front",
         "table entry body_bram"]), found
    sources = sorted((ROOT / "fpga").glob("*.py")) + [ROOT / "pstar" / "commands" / "fpga.py"]
    found = [hit for path in sources if path.name != "cli.py"
             for hit in written_defaults(path.read_text(), path.relative_to(ROOT).as_posix(), names, flags)]
    assert not found, "FPGA build defaults written outside FpgaConfig:\n" + "\n".join(found)


def test_the_docs_show_presets_not_option_lines():
    """docs/fpga.md's presets table is the file's; README and guide name only presets that exist and
    write no FPGA command longer than a terminal line."""
    import re

    from fpga.presets import markdown_table
    guide, readme = (ROOT / "docs" / "fpga.md").read_text(), (ROOT / "README.md").read_text()
    assert markdown_table() in guide
    assert len(guide.splitlines()) <= 400
    for text in (guide, readme):
        assert set(re.findall(r"--preset ([\w-]+)", text)) <= set(presets()) | {"NAME"}
        commands = re.sub(r"\\\n\s*", " ", text)               # continued lines as one command
        long = [c for c in re.findall(r"(pstar fpga (?:build|area|sweep)[^\n`]*)", commands) if len(c) > 100]
        assert not long, long


def test_the_readme_figures_are_the_presets():
    """The README's preset lines quote each preset's last measured median, rounded to a MHz."""
    import re
    readme = (ROOT / "README.md").read_text()
    figures = {name: int(mhz) for name, mhz in re.findall(r"--preset ([\w-]+) --json +#[^\n]*?(\d+) MHz", readme)}
    assert set(figures) >= {"target-100mhz", "net26"}, figures
    for name, mhz in figures.items():
        assert mhz == round(get(name).measured["fmax_median_mhz"]), (name, mhz)
