"""Entry point of the `pstar` console script.

Every subcommand lives in `pstar/commands/<name>.py` with `add_parser(subparsers)` and
`run(args) -> Result`; it takes `--json` (one JSON object on stdout). Bad input of any kind ends
with one line on stderr and exit status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys

from topologies.errors import ParameterError

COMMANDS = ["demo", "topology", "design_space", "metrics", "hostswitch", "route", "sim", "sweep", "verilog", "fpga"]


def one_line(message: str) -> str:
    """The message with control characters escaped, so that it stays one line on any terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(message))


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: error: {one_line(message)}\n")


def make_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="pstar", description="PolarStar router toolkit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    sub.required = True
    for name in COMMANDS:
        mod = importlib.import_module(f"pstar.commands.{name}")
        p = mod.add_parser(sub)
        p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
        p.set_defaults(_run=mod.run)
    return parser


def main(argv=None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    try:
        result = args._run(args)
    except ParameterError as e:
        print(f"pstar {args.command}: error: {one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pstar: interrupted", file=sys.stderr)
        return 130
    try:
        if args.json:
            json.dump(result.data, sys.stdout, separators=(",", ":"))
            sys.stdout.write("\n")
        else:
            print(result.text)
        sys.stdout.flush()
    except BrokenPipeError:         # e.g. `pstar ... --json | head`
        sys.stdout = None
    return 0


if __name__ == "__main__":
    sys.exit(main())
