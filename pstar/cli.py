"""Entry point of the `pstar` console script.

Every subcommand lives in `pstar/commands/<name>.py` with `add_parser(subparsers)` and
`run(args) -> Result`; it takes `--json` (one JSON object on stdout). Bad input of any kind ends
with one line on stderr and exit status 2, never a traceback: a ParameterError, an output that
cannot be written (the results are still printed), OSError, MemoryError and Ctrl-C ("interrupted").
Python warnings raised during the work (e.g. LPS with a small q) are printed as one
`warning: ...` line each on stderr and listed under "warnings" in the --json object.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import warnings

from topologies.errors import ParameterError

COMMANDS = ["demo", "topology", "design_space", "metrics", "hostswitch", "route", "sim", "sweep", "verilog", "fpga"]


def one_line(message: str) -> str:
    """The message with control characters escaped, so that it stays one line on any terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(message))


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: error: {one_line(message)}\n")


def make_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (`only`: a command's module name) one with that command alone, so
    that `pstar sim ...` imports the sim command's module and not the FPGA flow's."""
    parser = OneLineParser(prog="pstar", description="PolarStar router toolkit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    sub.required = True
    for name in [only] if only else COMMANDS:
        mod = importlib.import_module(f"pstar.commands.{name}")
        p = mod.add_parser(sub)
        p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
        p.set_defaults(_run=mod.run)
    return parser


def main(argv=None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("pstar: interrupted", file=sys.stderr)
        return 2


def _command_of(argv) -> str | None:
    """The command module `argv` names as its first word (None: help, or no known command)."""
    args = sys.argv[1:] if argv is None else list(argv)
    word = args[0] if args and isinstance(args[0], str) else ""
    name = word.replace("-", "_")
    return name if name in COMMANDS and "_" not in word else None


def _main(argv) -> int:
    parser = make_parser(_command_of(argv))
    args = parser.parse_args(argv)
    name = f"pstar {args.command}"
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = args._run(args)
    except ParameterError as e:
        return _fail(name, e)
    except MemoryError:
        return _fail(name, "out of memory (the network or the job is too large for this machine)")
    except OSError as e:
        return _fail(name, f"{str(e.filename) + ': ' if e.filename else ''}{e.strerror or e}")
    messages = _warnings(caught)
    if messages and isinstance(result.data, dict):
        result.data["warnings"] = sorted(set(result.data.get("warnings", [])) | set(messages))
    from pstar.outputs import write_outputs

    failed = write_outputs(result.outputs, result.data)
    unprinted = _print(result, args.json)
    if unprinted:
        files = [str(o.path) for o in result.outputs if failed is None]
        return _fail(name, f"stdout: cannot write ({unprinted})" + (f"; written: {', '.join(files)}" if files else ""))
    if failed:
        return _fail(name, failed)
    for m in messages:
        print(f"warning: {one_line(m)}", file=sys.stderr)
    return 1 if result.failed else 0


def _fail(name: str, message) -> int:
    print(f"{name}: error: {one_line(message)}", file=sys.stderr)
    return 2


def _warnings(caught) -> list[str]:
    """The user warnings (not deprecations of the libraries we use), each message once, in order."""
    seen = {}
    for w in caught:
        if issubclass(w.category, UserWarning):
            seen.setdefault(str(w.message), None)
    return list(seen)


def _print(result, as_json: bool) -> str | None:
    """Print the result; None when done, else why stdout took none of it (a closed pipe is fine)."""
    try:
        if as_json:
            json.dump(result.data, sys.stdout, separators=(",", ":"))
            sys.stdout.write("\n")
        else:
            print(result.text)
        sys.stdout.flush()
    except BrokenPipeError:         # e.g. `pstar ... --json | head`
        _discard_stdout()
    except OSError as e:            # e.g. `pstar ... > /dev/full`
        _discard_stdout()
        return e.strerror or str(e)
    return None


def _discard_stdout() -> None:
    """Send what stdout still buffers to /dev/null, so that the flush at exit does not fail again."""
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):     # io.UnsupportedOperation: stdout is no file
        sys.stdout = None


if __name__ == "__main__":
    sys.exit(main())
