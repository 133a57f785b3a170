"""Netlist exports (JSON, BookSim2 anynet, GraphML, DOT); files are read by topologies.imports.

JSON netlist: {"format": "pstar-netlist/1", "name", "spec", "routers": n, "ports": [per router],
"links": [[router_a, port_a, router_b, port_b], ...], "endpoints": [per router]}. Loading it gives
the same Network (same ports, links and endpoints); when "spec" names a family, the construction
data (`structure`) is rebuilt from it and the netlist is checked against the rebuilt one.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .errors import ParameterError
from .network import Network

FORMAT = "pstar-netlist/1"
SUFFIXES = (".json", ".anynet", ".graphml", ".dot")


def to_json_dict(net: Network) -> dict:
    return {"format": FORMAT, "name": net.name, "spec": net.spec, "routers": net.num_routers,
            "ports": net.ports.tolist(), "links": net.links().tolist(), "endpoints": net.endpoints.tolist()}


def from_json_dict(d: dict) -> Network:
    if not isinstance(d, dict):
        raise ParameterError("netlist: expected a JSON object")
    for key in ("routers", "links", "endpoints"):
        if key not in d:
            raise ParameterError(f"netlist: missing key {key!r}")
    n = d["routers"]
    if not isinstance(n, int) or n < 1:
        raise ParameterError(f"netlist: routers={n!r} must be a positive integer")
    links = d["links"]
    if not isinstance(links, list):
        raise ParameterError("netlist: links must be a list of [router_a, port_a, router_b, port_b]")
    for i, l in enumerate(links):
        if not (isinstance(l, list) and len(l) == 4 and all(isinstance(v, int) for v in l)):
            raise ParameterError(f"netlist: links[{i}]={l!r} must be [router_a, port_a, router_b, port_b] integers")
    eps = d["endpoints"]
    _check_counts("endpoints", eps, n)
    arr = np.asarray(links, dtype=np.int64).reshape(-1, 4)
    ports = d.get("ports")
    if ports is None:  # smallest port numbering that holds every link
        ports = np.zeros(n, dtype=np.int64)
        for c in (0, 2):
            ok = (arr[:, c] >= 0) & (arr[:, c] < n)
            np.maximum.at(ports, arr[ok, c], arr[ok, c + 1] + 1)
    else:
        _check_counts("ports", ports, n)
    net = Network.from_links(d.get("name", "netlist"), ports, arr, eps)
    spec = d.get("spec") or ""
    if spec:
        from .spec import build

        ref = build(spec)
        if not (np.array_equal(ref.offsets, net.offsets) and np.array_equal(ref.peer, net.peer)):
            raise ParameterError(f"netlist: links do not match its spec {spec!r}")
        from dataclasses import replace

        net = replace(ref, name=net.name, endpoints=net.endpoints)
    return net


def _check_counts(key: str, values, n: int) -> None:
    """`values` is a list of n integers >= 0; else the error names the first bad entry."""
    if not isinstance(values, list):
        raise ParameterError(f"netlist: {key} must be a list of {n} integers >= 0")
    for i, v in enumerate(values):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ParameterError(f"netlist: {key}[{i}]={v!r} must be an integer >= 0")
    if len(values) != n:
        raise ParameterError(f"netlist: {key} has {len(values)} entries for {n} routers")


def load_json(path) -> Network:
    try:
        d = json.loads(Path(path).read_text())
    except OSError as e:
        raise ParameterError(f"netlist {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ParameterError(f"netlist {path}: not JSON ({e.msg} at line {e.lineno})") from None
    return from_json_dict(d)


def write_anynet(net: Network, f) -> None:
    """BookSim2 anynet: `router R node E... router S...` per router, endpoints numbered globally."""
    first = np.concatenate([[0], np.cumsum(net.endpoints)])
    indptr, indices = net.csr()
    for r in range(net.num_routers):
        nodes = " ".join(f"node {e}" for e in range(first[r], first[r + 1]))
        nbrs = " ".join(f"router {v}" for v in indices[indptr[r]:indptr[r + 1]].tolist())
        f.write(" ".join(t for t in (f"router {r}", nodes, nbrs) if t) + "\n")


def write_graphml(net: Network, f) -> None:
    f.write('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
            '<key id="endpoints" for="node" attr.name="endpoints" attr.type="int"/>\n'
            '<key id="port_a" for="edge" attr.name="port_a" attr.type="int"/>\n'
            '<key id="port_b" for="edge" attr.name="port_b" attr.type="int"/>\n'
            '<graph id="G" edgedefault="undirected">\n')
    for r, e in enumerate(net.endpoints.tolist()):
        f.write(f'<node id="{r}"><data key="endpoints">{e}</data></node>\n')
    for ra, pa, rb, pb in net.links().tolist():
        f.write(f'<edge source="{ra}" target="{rb}"><data key="port_a">{pa}</data>'
                f'<data key="port_b">{pb}</data></edge>\n')
    f.write("</graph>\n</graphml>\n")


def dot_string(text: str) -> str:
    """`text` as a DOT quoted string: quotes and backslashes escaped, line breaks as \\n."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c.isprintable() else "\\n" if c == "\n" else " " for c in text) + '"'


def write_dot(net: Network, f) -> None:
    """Graphviz DOT: routers as nodes with their endpoint count, links with their ports."""
    f.write(f"graph {dot_string(net.name)} {{\n")
    for r, e in enumerate(net.endpoints.tolist()):
        f.write(f"  {r} [endpoints={e}];\n")
    for ra, pa, rb, pb in net.links().tolist():
        f.write(f'  {ra} -- {rb} [taillabel="{pa}", headlabel="{pb}"];\n')
    f.write("}\n")


def export(net: Network, path) -> str:
    """Write `net` in the format given by the suffix of `path`; returns the format name."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ParameterError(f"--out {path}: unknown suffix {suffix!r}; allowed: {', '.join(SUFFIXES)}")
    try:
        with open(path, "w") as f:
            if suffix == ".json":
                json.dump(to_json_dict(net), f, separators=(",", ":"))
            elif suffix == ".anynet":
                write_anynet(net, f)
            elif suffix == ".graphml":
                write_graphml(net, f)
            else:
                write_dot(net, f)
    except OSError as e:
        raise ParameterError(f"--out {path}: {e.strerror}") from None
    return suffix[1:]
