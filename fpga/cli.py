"""argparse flags made from `FpgaConfig` (fpga/build.py): every `pstar fpga` command takes its build
flags from here, so a flag's default, choices, range and help are written once, in FpgaConfig's
fields (`fpga.build.option`), as the router's flags come from the contract (`contract.cli`).

Every flag's argparse default is None, "not given": the command fills what is not given from a
preset, then from FpgaConfig's defaults (`fpga.presets.configure`), so a flag given on the command
line always beats the preset. The help shows FpgaConfig's default after the preset's.

    add_build_arguments(parser, ("board", "seed", "placer"))
    add_router_flags(parser)                     # the contract's router flags a build takes
    given = given_values(args)                   # {FpgaConfig field: value} of the flags given
"""
from __future__ import annotations

import argparse

from contract.cli import add_router_arguments, values_from_args
from topologies.spec import ascii_int

from .build import BUILD_OPTIONS, ROUTER_SPECS, BuildOption


def _number(opt: BuildOption):
    """argparse `type=` of an integer or float option (ASCII digits; the range is checked by
    `fpga.build.validate`, which names the option as the flag does)."""
    def parse(text: str):
        try:
            return ascii_int(text) if opt.kind == "int" else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {'integer' if opt.kind == 'int' else 'number'}: {text!r}") from None
    parse.__name__ = opt.kind
    return parse


def shown_default(opt: BuildOption) -> str:
    if isinstance(opt.default, bool):
        return opt.flag if opt.default else "--no-" + opt.flag.lstrip("-")
    return "none" if opt.default is None else f"{opt.default:g}" if isinstance(opt.default, float) else str(opt.default)


def argument_kwargs(opt: BuildOption) -> dict:
    """The add_argument keywords of one FpgaConfig option: default None (not given), help with
    FpgaConfig's default and range."""
    kw = {"dest": opt.name, "default": None}
    extra = ""
    if isinstance(opt.default, bool):
        kw["action"] = argparse.BooleanOptionalAction
    elif opt.choices:        # checked by fpga.build.validate, as a preset's values are: the same message
        kw["metavar"] = "{" + ",".join(opt.choices) + "}"
    else:
        if opt.kind in ("int", "float"):
            kw["type"] = _number(opt)
            if opt.lo is not None:
                extra = f"; {opt.lo}..{opt.hi}"
        kw["metavar"] = opt.metavar
    kw["help"] = f"{opt.help} (default: the preset's, else {shown_default(opt)}{extra})".replace("%", "%%")
    return kw


def add_build_arguments(parser, names) -> None:
    """A flag per FpgaConfig option in `names` (field names, in that order)."""
    for name in names:
        opt = BUILD_OPTIONS[name]
        parser.add_argument(opt.flag, **argument_kwargs(opt))


def add_router_flags(parser) -> None:
    """The contract's flags of the router parameters a build takes (fpga.build.ROUTER_SPECS, with the
    FPGA prototypes' ranges), not given unless on the command line (a preset may set them)."""
    specs = [spec.name for spec in ROUTER_SPECS.values()]
    add_router_arguments(parser, only=specs, fpga=True,
                         computed={n: f"the preset's, else {ROUTER_SPECS_BY_NAME[n].default}" for n in specs})


ROUTER_SPECS_BY_NAME = {spec.name: spec for spec in ROUTER_SPECS.values()}


def given_values(args) -> dict:
    """{FpgaConfig field: value} of every build flag given on the command line (the router's
    flags under their FpgaConfig names: payload_bits is flit_width)."""
    given = {name: getattr(args, name) for name in BUILD_OPTIONS if getattr(args, name, None) is not None}
    router = values_from_args(args)
    given.update({field: router[spec.name] for field, spec in ROUTER_SPECS.items() if spec.name in router})
    return given


__all__ = ["add_build_arguments", "add_router_flags", "argument_kwargs", "given_values", "shown_default"]
