"""Subcommands of `pstar`, one module each; `Result` is what every `run(args)` returns."""
from __future__ import annotations

from dataclasses import dataclass

from routing_logic.base import VC_POLICIES


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


def add_latencies(p) -> None:
    """`--link-latency` and `--credit-latency` (RouterParams; the model and the RTL take any value)."""
    from contract.params import DEFAULTS
    p.add_argument("--link-latency", type=int, default=DEFAULTS["link_latency"], metavar="N",
                   help="cycles from switch allocation to the next router's buffer (default 1; each cycle more "
                        "is a register on every link, for the clock of networks spread over a die)")
    p.add_argument("--credit-latency", type=int, default=DEFAULTS["credit_latency"], metavar="N",
                   help="cycles from a buffer pop to the upstream router's credit (default 1)")


def add_vc_policy(p, note: str = "") -> None:
    """`--vc-policy`, as every command that builds a routing takes it (`note`: what this command adds)."""
    p.add_argument("--vc-policy", default="hops", choices=tuple(VC_POLICIES),
                   help="VC classes: hops (class = hops taken, the default) or turns (class = down-then-up turns "
                        "over router ids: PolarStar minimal routing with 2 VCs; docs/routing.md)" + note)


def add_header(p) -> None:
    """`--header` and `--flit`, the flit layout options every command that elaborates the RTL
    takes (contract.flit.HEADERS, contract.flit.FLIT_FORMATS)."""
    from contract.flit import FLIT_FORMATS, HEADERS
    p.add_argument("--header", default=HEADERS[0], choices=HEADERS,
                   help="optional header fields the flits carry: those the routing unit reads (routing, the "
                        "default: none for min and polarstar, the phase bit for polarized) or all (also the hop "
                        "count and the Valiant intermediate, which no unit reads)")
    p.add_argument("--flit", default=FLIT_FORMATS[0], choices=FLIT_FORMATS,
                   help="flit format: wide (every flit carries the header beside its payload, the default) or "
                        "lean (the header in head flits only, in the payload bits: narrower flits, buffers and "
                        "crossbars; the header must fit the flit width)")
