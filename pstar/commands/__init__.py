"""Subcommands of `pstar`, one module each; `Result` is what every `run(args)` returns.

The router flags (--vcs, --depth, --vc-policy, --flit, ...) come from the contract
(`contract.cli.add_router_arguments`): their defaults, ranges and help are written there only."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Result:
    data: dict      # printed as JSON with --json
    text: str       # printed otherwise


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
