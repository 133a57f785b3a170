"""Subcommands of `pstar`, one module each; `Result` is what every `run(args)` returns.

The router flags (--vcs, --depth, --vc-policy, --flit, ...) come from the contract
(`contract.cli.add_router_arguments`): their defaults, ranges and help are written there only.
Output files are checked and written through `pstar.outputs`; progress bars through `progress`,
switched off by `--quiet` in every command that shows one."""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field


# the SPEC positional of every command that takes a topology
SPEC_HELP = "family:key=value,... (e.g. {example}) or a netlist file: pstar JSON or BookSim2 anynet"


@dataclass
class Result:
    data: dict      # printed as JSON with --json
    text: str       # printed otherwise
    outputs: list = field(default_factory=list)     # pstar.outputs.Output: files written after the work
    failed: bool = False    # a check the command ran failed: exit status 1 after the output


def integer(text: str) -> int:
    """argparse `type=` for integers written in ASCII digits (int() also reads '٣' and '1_000')."""
    from topologies.spec import ascii_int
    try:
        return ascii_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer: {text!r}") from None


def add_quiet(p) -> None:
    """`--quiet` (and the older `--no-progress`, hidden): no progress bars on stderr."""
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.add_argument("--no-progress", dest="quiet", action="store_true", help=argparse.SUPPRESS)


def progress(args, total=None, desc: str = "", **kw):
    """A tqdm bar on stderr, off with --quiet and when stderr is not a terminal."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, file=sys.stderr, leave=False,
                disable=True if getattr(args, "quiet", False) else None, **kw)


def table(rows, headers=None) -> str:
    """Left-aligned plain-text table."""
    rows = [[str(c) for c in r] for r in rows]
    if headers:
        rows = [list(map(str, headers))] + rows
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))] if rows else []
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    if headers:
        lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
