"""Netlist files as networks: our JSON netlist and BookSim2 `anynet`, wherever a SPEC is taken.

`read_netlist(path)` reads either format (by suffix: `.json`; `.anynet`/`.txt`; otherwise by
content) and returns the `Network`. Every check names the first bad entry (`links[3]: ...`,
`line 7: ...`) in a one-line `ParameterError`. `netlist_path(spec)` says whether a SPEC string
names a file (an existing file, or a netlist suffix).

anynet (BookSim2's `anynet_file`): one line per router, `router R` then its endpoints `node E`
and its neighbours `router S`, each optionally followed by an integer link latency (only 1 is
accepted: a pstar network has one link latency). As in BookSim, a router-router link may be
listed on both lines (as our exporter writes it) or on one. Port k of router R is its k-th
listed neighbour (links listed only on the far side come after). Endpoint ids must run 0, 1, ...
router by router, as pstar numbers endpoints. A `node E router R` line adds endpoint E to R.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from .errors import ParameterError
from .network import Network

JSON_SUFFIXES = (".json",)
ANYNET_SUFFIXES = (".anynet", ".txt")
MAX_BYTES = 2 << 30            # refuse netlist files over 2 GiB before reading them


def netlist_path(spec) -> Path | None:
    """The path a SPEC names when it is a file: one that exists, or has a '/' or a netlist
    suffix (a family SPEC has neither); else None."""
    if not isinstance(spec, (str, Path)):
        return None
    path = Path(spec)
    try:
        if path.exists():
            return path
    except (OSError, ValueError):          # name too long, NUL byte: not a file
        return None
    # a name with a control character is left to the SPEC parser, whose error quotes it
    named = str(spec).isprintable() and ("/" in str(spec) or path.suffix.lower() in JSON_SUFFIXES + ANYNET_SUFFIXES)
    return path if named else None


def read_netlist(path) -> Network:
    """The Network of a JSON netlist or BookSim2 anynet file (format by suffix, else by content)."""
    path = Path(path)
    try:
        if path.is_dir():
            raise ParameterError(f"netlist {path}: is a directory, expected a .json or anynet file")
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ParameterError(f"netlist {path}: {size} bytes, more than the {MAX_BYTES} this reader takes")
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ParameterError(f"netlist {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ParameterError(f"netlist {path}: not a text file") from None
    suffix = path.suffix.lower()
    if suffix in JSON_SUFFIXES or (suffix not in ANYNET_SUFFIXES and text.lstrip().startswith("{")):
        return _json(path, text)
    first = text.split(None, 1)[:1]
    if suffix not in ANYNET_SUFFIXES and first not in (["router"], ["node"]):
        raise ParameterError(f"netlist {path}: neither a pstar JSON netlist nor a BookSim2 anynet file "
                             f"(anynet lines start with 'router' or 'node')")
    return parse_anynet(text, name=path.stem, where=str(path))


def _json(path: Path, text: str) -> Network:
    from .exports import from_json_dict

    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ParameterError(f"netlist {path}: not JSON ({e.msg} at line {e.lineno})") from None
    try:
        return from_json_dict(d)
    except ParameterError as e:
        raise ParameterError(f"netlist {path}: {str(e).removeprefix('netlist: ')}") from None


def _tokens(text: str, where: str):
    """(line number, head kind, head id, [(kind, id), ...]) per non-blank line, weights checked."""
    for lineno, line in enumerate(text.splitlines(), 1):
        tok = line.split()
        if not tok:
            continue
        at = f"{where} line {lineno}"
        items, k = [], 0
        while k < len(tok):
            kind = tok[k]
            if kind not in ("router", "node"):
                raise ParameterError(f"{at}: {kind!r} where 'router' or 'node' was expected")
            if k + 1 >= len(tok) or not tok[k + 1].isdigit() or not tok[k + 1].isascii():
                raise ParameterError(f"{at}: '{kind}' must be followed by an id >= 0")
            items.append((kind, int(tok[k + 1])))
            k += 2
            if k < len(tok) and tok[k].lstrip("-").isdigit():
                if tok[k] != "1":
                    raise ParameterError(f"{at}: link latency {tok[k]!r} after {kind} {items[-1][1]}: "
                                         f"only 1 (pstar networks have one link latency)")
                if len(items) == 1:
                    raise ParameterError(f"{at}: link latency {tok[k]!r} after the line's own {kind}")
                k += 1
        yield lineno, at, items[0], items[1:]


def parse_anynet(text: str, name: str = "anynet", where: str = "anynet") -> Network:
    """The Network of a BookSim2 anynet text (see the module docstring for the rules)."""
    heads: dict[int, str] = {}
    nbrs: dict[int, list[int]] = defaultdict(list)          # router -> listed neighbours, in order
    nodes: list[tuple[int, int, str]] = []                   # (endpoint id, router, where)
    for lineno, at, (kind, hid), body in _tokens(text, where):
        if kind == "node":
            routers = [v for k, v in body if k == "router"]
            if len(body) != 1 or not routers:
                raise ParameterError(f"{at}: a 'node {hid}' line names exactly one router")
            nodes.append((hid, routers[0], at))
            continue
        if hid in heads:
            raise ParameterError(f"{at}: router {hid} already has a line ({heads[hid]})")
        heads[hid] = at
        for k, v in body:
            if k == "node":
                nodes.append((v, hid, at))
            elif v == hid:
                raise ParameterError(f"{at}: router {hid} linked to itself")
            else:
                nbrs[hid].append(v)
    if not heads and not nodes:
        raise ParameterError(f"{where}: no 'router' lines")
    ids = set(heads) | set(nbrs) | {v for vs in nbrs.values() for v in vs} | {r for _, r, _ in nodes}
    n = max(ids) + 1
    missing = sorted(set(range(n)) - ids)
    if missing:
        raise ParameterError(f"{where}: router {missing[0]} appears nowhere (routers must be 0..{n - 1})")
    links, ports = _pair_links(n, nbrs, heads, where)
    return Network.from_links(name, ports, links, _endpoints(n, nodes, where))


def _pair_links(n: int, nbrs: dict, heads: dict, where: str):
    """Links [ra, pa, rb, pb]: the i-th listing of b on a's line pairs with the i-th of a on b's."""
    listed = {r: defaultdict(list) for r in nbrs}           # r -> v -> r's ports listing v
    for r, vs in nbrs.items():
        for port, v in enumerate(vs):
            listed[r][v].append(port)
    ports = np.zeros(n, dtype=np.int64)
    for r, vs in nbrs.items():
        ports[r] = len(vs)
    links = []
    for a in sorted(nbrs):
        for b, pa_list in listed[a].items():
            pb_list = listed.get(b, {}).get(a, [])
            if pb_list and len(pb_list) != len(pa_list):
                raise ParameterError(f"{heads[a]}: router {a} lists router {b} {len(pa_list)} times but "
                                     f"router {b}'s line lists router {a} {len(pb_list)} times")
            if pb_list and b < a:
                continue                                       # paired from b's side
            for i, pa in enumerate(pa_list):
                if pb_list:
                    pb = pb_list[i]
                else:                                          # one-sided listing: a new port on b
                    pb = int(ports[b])
                    ports[b] += 1
                links.append([a, pa, b, pb])
    return np.asarray(links, dtype=np.int64).reshape(-1, 4), ports


def _endpoints(n: int, nodes: list, where: str) -> np.ndarray:
    """Endpoint counts per router; ids must be 0, 1, ... router by router, each once."""
    seen = {}
    for e, r, at in nodes:
        if e in seen:
            raise ParameterError(f"{at}: node {e} already attached ({seen[e]})")
        seen[e] = at
    counts = np.bincount(np.asarray([r for _, r, _ in nodes], dtype=np.int64), minlength=n)
    first = np.concatenate([[0], np.cumsum(counts)])
    for e, r, at in sorted(nodes, key=lambda t: (t[1], t[0])):
        want = first[r]
        if e != want:
            raise ParameterError(f"{at}: node {e} at router {r}: pstar numbers endpoints router by router, "
                                 f"so router {r}'s nodes must be {want}..{first[r + 1] - 1}")
        first[r] += 1
    return counts.astype(np.int32)
