"""The table of router parameters and options, made from the contract (`contract.params.SPECS`).

    python -m contract.doc_table            # print the markdown table
    python -m contract.doc_table --write    # put it into docs/microarchitecture.md, between the markers

docs/microarchitecture.md holds the table between BEGIN and END; tests/test_contract.py fails when
it differs from the one printed here.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

from .params import OPTIONS, SPECS, Spec

BEGIN = "<!-- begin: python -m contract.doc_table -->"
END = "<!-- end: python -m contract.doc_table -->"
DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "microarchitecture.md"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def commands_taking() -> dict:
    """{spec name: the `pstar` commands whose parser has its flag}, read off the parsers themselves
    (the commands build them with contract.cli; imported here only, to document them)."""
    import argparse as ap

    from pstar.cli import make_parser

    taking = {name: [] for name in SPECS}

    def walk(parser, prefix):
        for action in parser._actions:
            if isinstance(action, ap._SubParsersAction):
                for cmd, sub in action.choices.items():
                    if sub not in seen:
                        seen.add(sub)
                        walk(sub, f"{prefix} {cmd}".strip())
            elif action.dest in SPECS and SPECS[action.dest].flag in action.option_strings:
                taking[action.dest].append(prefix)

    seen = set()
    walk(make_parser(), "")
    return taking


def row(spec: Spec, commands=()) -> str:
    name = f"`{spec.name}`" + (" (option)" if spec.name in OPTIONS else "")
    flags = ", ".join(f"`{f}`" for f in (spec.short, spec.flag) if f)
    where = ", ".join(commands) or "none (library only)"
    if spec.choices:
        default, values = f"`{spec.default}`", ", ".join(f"`{c}`" for c in spec.choices)
    else:
        default, values = str(spec.default), spec.range_text()
        if spec.fpga:
            values += f" (FPGA {spec.range_text(fpga=True)})"
    return f"| {name} | {flags} | {where} | {default} | {values} | {_cell(spec.help)} |"


def table() -> str:
    """The markdown table: one row per `RouterParams` field, then one per option."""
    taking = commands_taking()
    head = ["| name | flag | `pstar` commands | default | range or choices | meaning |", "|---|---|---|---|---|---|"]
    return "\n".join(head + [row(spec, taking[name]) for name, spec in SPECS.items()])


def section(text: str) -> str:
    """What `text` holds between BEGIN and END (ValueError when the markers are missing)."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip("\n")


def write(path: pathlib.Path = DOC) -> bool:
    """Put the table into `path` between the markers; True when that changed the file."""
    text = path.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    new = text[:start] + "\n" + table() + "\n" + text[end:]
    if new != text:
        path.write_text(new)
    return new != text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m contract.doc_table", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write the table into {DOC.name} between the markers")
    args = parser.parse_args(argv)
    if args.write:
        print(f"{DOC}: {'updated' if write() else 'already up to date'}")
    else:
        print(table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
