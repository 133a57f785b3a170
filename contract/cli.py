"""argparse flags made from the contract's specs (`contract.params.SPECS`): every command that
builds a router takes its router flags from here, so a flag's default, range, choices and help
are those of the contract.

    add_router_arguments(parser, only=("vcs", "depth", "vc_policy"))
    args = parser.parse_args()
    params = router_params_from_args(args)          # a RouterParams of the flags given

An integer flag is range-checked as it is parsed: a value outside the contract's range (with
`fpga=True`, the FPGA prototypes' narrower one where the spec has it) ends with argparse's
one-line error, naming the flag, e.g. `argument --vcs: vcs=65: must be an integer in 1..64`.
"""
from __future__ import annotations

import argparse

from topologies.spec import ascii_int

from .params import PARAMS, SPECS, RouterParams, Spec


def _int_type(spec: Spec, fpga: bool):
    """argparse `type=` of an integer spec: int(text) within its range, or a one-line error."""
    name = spec.flag.lstrip("-")

    def parse(text: str) -> int:
        try:
            value = ascii_int(text)
        except ValueError:
            value = text
        message = spec.error(value, fpga, name)
        if message:
            raise argparse.ArgumentTypeError(message)
        return value

    parse.__name__ = spec.name
    return parse


def _metavar(spec: Spec, fpga: bool):
    if spec.metavar:
        return spec.metavar
    lo, hi = spec.bounds(fpga)
    return "{" + ",".join(map(str, range(lo, hi + 1))) + "}" if hi - lo <= 3 else "N"


def argument_kwargs(spec: Spec, fpga: bool = False, computed: str | None = None, note: str = "") -> dict:
    """The add_argument keywords of `spec` (`computed`: what the command makes the default when the
    flag is not given; the flag's default is then None)."""
    shown = computed if computed is not None else spec.default
    kw = {"dest": spec.name, "default": None if computed is not None else spec.default}
    if spec.choices:
        kw["choices"] = spec.choices
        text = f"{spec.help}{note} (default: {shown})"
    else:
        kw["type"] = _int_type(spec, fpga)
        kw["metavar"] = _metavar(spec, fpga)
        shows_values = kw["metavar"].startswith("{")     # {0,1,2}: the values, no range needed
        text = f"{spec.help}{note} (default: {shown}{'' if shows_values else '; ' + spec.range_text(fpga)})"
    kw["help"] = text.replace("%", "%%")
    return kw


def selected(only=None, exclude=()) -> list[Spec]:
    """The specs named in `only` (in that order; default: all of them), less those in `exclude`."""
    names = list(SPECS) if only is None else list(only)
    unknown = [n for n in [*names, *exclude] if n not in SPECS]
    if unknown:
        raise KeyError(f"{unknown[0]!r}: not a contract parameter or option; known: {', '.join(SPECS)}")
    return [SPECS[n] for n in names if n not in exclude]


def add_router_arguments(parser, only=None, exclude=(), fpga: bool = False, computed=None, notes=None) -> list[Spec]:
    """Add a flag per contract spec to `parser` (`only`/`exclude`: spec names). `fpga`: range-check
    with the FPGA prototypes' limits. `computed`: {name: what the command computes as the default
    when the flag is absent}. `notes`: {name: text added to the help}. Returns the specs added."""
    computed, notes = computed or {}, notes or {}
    specs = selected(only, exclude)
    for spec in specs:
        flags = [spec.short, spec.flag] if spec.short else [spec.flag]
        parser.add_argument(*flags, **argument_kwargs(spec, fpga, computed.get(spec.name), notes.get(spec.name, "")))
    return specs


def values_from_args(args) -> dict:
    """{spec name: value} of every contract flag `args` holds a value for (None: not given)."""
    return {name: getattr(args, name) for name in SPECS if getattr(args, name, None) is not None}


def router_params_from_args(args, **given) -> RouterParams:
    """RouterParams of the flags in `args` (the contract's defaults for the rest), `given` on top."""
    kw = {k: v for k, v in values_from_args(args).items() if k in PARAMS}
    return RouterParams(**{**kw, **given})


__all__ = ["add_router_arguments", "argument_kwargs", "router_params_from_args", "selected", "values_from_args"]
