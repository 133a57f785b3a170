"""Named FPGA build configurations (`fpga/presets.toml`) and how a command's flags meet them.

A preset is a whole `FpgaConfig` (every field written in the file, but for the two whose default
is none and that it may leave out) with a one-line `about` and the figures of its last measured
build (`measured`, copied from the docs; never read by the build). `configure(given, preset)`
makes the FpgaConfig of a command: each field from the command line if given, else from the
preset, else FpgaConfig's default. Without a preset, `pstar fpga build` starts from the board's
default preset for the design (`[defaults]` in the file) when the router asked for is that
preset's: with no SPEC at all, or the same SPEC text and sizes (`DESIGN_FIELDS`).
"""
from __future__ import annotations

import dataclasses
import functools
import pathlib
import tomllib

from topologies.errors import ParameterError

from .build import FpgaConfig

PRESETS_FILE = pathlib.Path(__file__).with_name("presets.toml")
# what the design is (the router asked for); the other fields are how it is built (pipeline, flits,
# synthesis, placement, seed, clock): the options a default preset or `pstar fpga sweep --preset` sets
DESIGN_FIELDS = ("board", "design", "spec", "routing", "ports", "router", "id_input", "vcs", "depth", "flit_width")
MEASURED_KEYS = {"fmax_mhz": float, "timing_met": bool, "seed": int, "lut4": int, "ff": int, "lutram": int,
                 "bram": int, "lc": int, "commit": str, "date": str, "minutes": float, "note": str,
                 # a build at several seeds (`--seeds`): the fields above are the preset's own seed's
                 "seeds": str, "fmax_median_mhz": float, "fmax_min_mhz": float, "fmax_max_mhz": float,
                 "seeds_met": int}
_FIELDS = {f.name: f for f in dataclasses.fields(FpgaConfig) if f.name != "build_dir"}
_MAY_OMIT = {name for name, f in _FIELDS.items() if f.default is None}     # ports, freq_mhz


@dataclasses.dataclass(frozen=True)
class Preset:
    name: str
    about: str
    values: dict            # FpgaConfig fields
    measured: dict          # the last measured build (MEASURED_KEYS), {} if none is recorded

    def config(self, **given) -> FpgaConfig:
        return FpgaConfig(**{**self.values, **given})

    def options(self) -> dict:
        """The fields that say how the design is built, not which design (not DESIGN_FIELDS)."""
        return {k: v for k, v in self.values.items() if k not in DESIGN_FIELDS}


def _preset(name: str, table: dict) -> Preset:
    """One `[presets.NAME]` table, checked for its keys (not its values: `fpga.build.validate` does)."""
    table = dict(table)
    about, measured = table.pop("about", None), table.pop("measured", {})
    if not isinstance(about, str) or not about:
        raise ValueError(f"{PRESETS_FILE.name}: preset {name!r} has no about line")
    unknown = sorted(set(table) - set(_FIELDS))
    missing = sorted(set(_FIELDS) - set(table) - _MAY_OMIT)
    if unknown or missing:
        raise ValueError(f"{PRESETS_FILE.name}: preset {name!r}: unknown fields {unknown}, missing {missing}")
    for key, value in measured.items():
        kind = MEASURED_KEYS.get(key)
        if kind is None or not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ValueError(f"{PRESETS_FILE.name}: preset {name!r}: measured {key} = {value!r}")
    return Preset(name, about, table, dict(measured))


@functools.lru_cache(maxsize=None)
def load(path: pathlib.Path = PRESETS_FILE) -> tuple[dict, dict]:
    """({name: Preset}, {(board, design): preset name}) from the presets file."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    presets = {name: _preset(name, table) for name, table in data.get("presets", {}).items()}
    defaults = {(board, design): name for board, per_design in data.get("defaults", {}).items()
                for design, name in per_design.items()}
    for (board, design), name in defaults.items():
        if name not in presets or (presets[name].values["board"], presets[name].values["design"]) != (board, design):
            raise ValueError(f"{path.name}: the default preset of {board} {design}, {name!r}, is not a {board} "
                             f"{design} preset")
    return presets, defaults


def presets() -> dict:
    return load()[0]


def get(name: str) -> Preset:
    """The preset `name`, or a one-line ParameterError naming the known ones."""
    known = presets()
    if name not in known:
        raise ParameterError(f"preset={name!r}: unknown; known: {', '.join(known)} (pstar fpga presets)")
    return known[name]


def default_for(board: str, design: str) -> str | None:
    """The name of the preset `pstar fpga build` starts from for `design` on `board`, if any."""
    return load()[1].get((board, design))


def _field_default(name: str):
    return _FIELDS[name].default


def configure(given: dict, preset: str | None = None, board_default: bool = True) -> tuple[FpgaConfig, dict]:
    """The FpgaConfig of a command and where it came from. `given`: FpgaConfig fields set on the
    command line (None: not given). `preset`: a preset's name. Without one and with
    `board_default`, the board's default preset for the design, if the router asked for is that
    preset's (no SPEC, or the same DESIGN_FIELDS). Returns (config, {"preset": name or None,
    "preset_from": "--preset" / "the ulx3s-85f router default" / None})."""
    given = {k: v for k, v in given.items() if v is not None}
    base, source = {}, {"preset": None, "preset_from": None}
    if preset is not None:
        base, source = get(preset).values, {"preset": preset, "preset_from": "--preset"}
    elif board_default:
        board, design = (given.get(k, _field_default(k)) for k in ("board", "design"))
        name = default_for(board, design)
        if name is not None:
            p = get(name)
            same = all(given.get(k, _field_default(k)) == p.values.get(k, _field_default(k)) for k in DESIGN_FIELDS)
            if "spec" not in given or same:
                base, source = p.values, {"preset": name, "preset_from": f"the {board} {design} default"}
    return FpgaConfig(**{**base, **given}), source


def measured_fmax(p: Preset) -> str:
    """'100.13 MHz (seed 6)', 'median 97.68 MHz (min 89.82, max 100.13; seeds 1-5)' for a build
    at several seeds, or 'not recorded'."""
    m = p.measured
    if "fmax_median_mhz" in m:
        return (f"median {m['fmax_median_mhz']:.2f} MHz (min {m['fmax_min_mhz']:.2f}, max {m['fmax_max_mhz']:.2f}; "
                f"seeds {m['seeds']})")
    return f"{m['fmax_mhz']:.2f} MHz (seed {m['seed']})" if "fmax_mhz" in m else "not recorded"


def markdown_table() -> str:
    """The presets table of docs/fpga.md: each preset with its last measured build."""
    known, defaults = load()
    default_of = {name for (board, design), name in defaults.items()}
    lines = ["| preset | board, design | what | last measured | LUT4 | FF | commit |",
             "|---|---|---|---|---|---|---|"]
    for name, p in known.items():
        m = p.measured
        area = [f"{m[k]:,}" if k in m else "" for k in ("lut4", "ff")]
        lines.append(f"| `{name}`{' (default)' if name in default_of else ''} | {p.values['board']}, "
                     f"{p.values['design']} | {p.about} | {measured_fmax(p)} | {' | '.join(area)} | "
                     f"{m.get('commit', '')} |")
    return "\n".join(lines)


__all__ = ["DESIGN_FIELDS", "MEASURED_KEYS", "PRESETS_FILE", "Preset", "configure", "default_for", "get", "load",
           "markdown_table", "measured_fmax", "presets"]
