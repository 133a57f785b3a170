"""Netlist files wherever a SPEC is taken (topologies/imports.py): our JSON and BookSim2 anynet.

Export -> import -> export is byte-identical for both formats, the imported network is the
original (ports, links, endpoints; anynet keeps the adjacency), malformed files are refused with
the first bad entry named, and CLI commands run on a file."""
import json

import numpy as np
import pytest

from pstar.cli import main
from topologies import Network, ParameterError, build, export
from topologies.imports import parse_anynet

SPECS = ["polarstar:q=3,supernode=iq,degree=3",        # 104 routers
         "polarstar:q=5,supernode=paley,degree=2",     # quadric routers keep a port hole
         "lps:p=3,q=5",                                # SpectralFly
         "slimfly:q=5", "fattree:k=4", "torus:dims=2x3"]


def _failed():
    return build("slimfly:q=5").without_links(fraction=0.1, seed=2)


@pytest.mark.parametrize("spec", SPECS + ["failed"])
@pytest.mark.parametrize("suffix", [".json", ".anynet"])
def test_round_trip_is_byte_identical(tmp_path, spec, suffix):
    net = _failed() if spec == "failed" else build(spec)
    first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    export(net, first)
    back = build(str(first))
    export(back, second)
    assert second.read_bytes() == first.read_bytes()
    indptr, indices = net.csr()
    b_indptr, b_indices = back.csr()
    assert np.array_equal(indptr, b_indptr) and np.array_equal(indices, b_indices)
    assert np.array_equal(back.endpoints, net.endpoints)
    if suffix == ".json":
        assert back.same_netlist(net) and back.name == net.name and back.spec == net.spec
        assert (back.structure is None) == (net.structure is None)
    elif (net.degree == net.ports).all():      # anynet lists connected ports only
        assert back.same_netlist(net)
    else:
        assert (back.ports == net.degree).all() and not back.same_netlist(net)


def test_json_keeps_the_polarstar_structure_and_p_overrides(tmp_path, ps_q3_iq3):
    path = tmp_path / "ps.json"
    export(ps_q3_iq3, path)
    back = build(str(path), p=5)
    assert back.structure is not None and back.structure.q == 3
    assert back.num_endpoints == 5 * 104
    with pytest.raises(ParameterError, match="p=-1"):
        build(str(path), p=-1)


def test_booksim_forms_one_sided_links_weights_and_node_lines():
    text = ("router 0 node 0 router 1 1 router 2\n"
            "router 1 node 1 node 2 router 2 1\n"
            "\n"
            "node 3 router 2\n")
    net = parse_anynet(text)
    assert net.num_routers == 3 and net.num_links == 3
    assert net.endpoints.tolist() == [1, 2, 1]
    assert net.neighbor(0, 0) == (1, 1) and net.neighbor(0, 1) == (2, 0) and net.neighbor(1, 0) == (2, 1)
    both = parse_anynet("router 0 router 1\nrouter 1 router 0\n")
    assert both.num_links == 1 and both.ports.tolist() == [1, 1]


@pytest.mark.parametrize("text,message", [
    ("router 0 router 1\nrouter 1 router 0 routr 2\n", r"line 2: 'routr' where 'router' or 'node'"),
    ("router 0 router x\n", r"line 1: 'router' must be followed by an id"),
    ("router 0 router 1 3\nrouter 1\n", r"line 1: link latency '3' after router 1: only 1"),
    ("router 0 router 0\n", r"line 1: router 0 linked to itself"),
    ("router 0 router 1\nrouter 0 router 2\nrouter 1\nrouter 2\n", r"line 2: router 0 already has a line \(.*line 1\)"),
    ("router 0 router 2\nrouter 2 router 0\n", r"router 1 appears nowhere"),
    ("router 0 router 1 router 1\nrouter 1 router 0\n", r"line 1: router 0 lists router 1 2 times but router 1's"),
    ("router 0 node 0\nrouter 1 node 0 router 0\n", r"line 2: node 0 already attached \(.*line 1\)"),
    ("router 0 node 1\nrouter 1 node 0 router 0\n", r"line 1: node 1 at router 0: .* must be 0..0"),
    ("node 0 router 1 router 2\n", r"line 1: a 'node 0' line names exactly one router"),
], ids=["bad-word", "bad-id", "latency", "self-link", "two-lines", "gap", "multiplicity", "node-twice",
        "node-order", "node-line"])
def test_bad_anynet_is_refused_naming_the_entry(tmp_path, text, message):
    path = tmp_path / "bad.anynet"
    path.write_text(text)
    with pytest.raises(ParameterError, match=message) as e:
        build(str(path))
    assert str(path) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("change,message", [
    (lambda d: d["endpoints"].__setitem__(2, -1), r"endpoints\[2\]=-1 must be an integer >= 0"),
    (lambda d: d["ports"].__setitem__(4, "2"), r"ports\[4\]='2' must be an integer"),
    (lambda d: d["endpoints"].pop(), r"endpoints has 4 entries for 5 routers"),
    (lambda d: d["links"].__setitem__(3, [3, 1, 9, 0]), r"links\[3\]: router_b=9 is not a router"),
    (lambda d: d.pop("links"), r"missing key 'links'"),
])
def test_bad_json_is_refused_naming_the_entry(tmp_path, change, message):
    d = json.loads(json.dumps({"format": "pstar-netlist/1", "name": "ring", "spec": "", "routers": 5,
                               "ports": [2] * 5, "links": [[i, 0, (i + 1) % 5, 1] for i in range(5)],
                               "endpoints": [1] * 5}))
    assert build_json(tmp_path, d).num_links == 5
    change(d)
    with pytest.raises(ParameterError, match=message):
        build_json(tmp_path, d)


def build_json(tmp_path, d) -> Network:
    path = tmp_path / "n.json"
    path.write_text(json.dumps(d))
    return build(str(path))


def test_files_that_are_not_netlists(tmp_path):
    with pytest.raises(ParameterError, match="nothere.json: No such file"):
        build(str(tmp_path / "nothere.json"))
    with pytest.raises(ParameterError, match="is a directory"):
        build(str(tmp_path))
    other = tmp_path / "notes"
    other.write_text("hello world\n")
    with pytest.raises(ParameterError, match="neither a pstar JSON netlist nor a BookSim2 anynet"):
        build(str(other))
    (tmp_path / "x.json").write_text("{nope")
    with pytest.raises(ParameterError, match="not JSON"):
        build(str(tmp_path / "x.json"))
    sniffed = tmp_path / "ring"               # no suffix: the content says anynet
    sniffed.write_text("router 0 router 1\nrouter 1 router 0\n")
    assert build(str(sniffed)).num_links == 1


def test_cli_commands_take_a_file(tmp_path, capsys, ps_q3_iq3):
    anynet, js = tmp_path / "ps.anynet", tmp_path / "ps.json"
    export(ps_q3_iq3, anynet)
    export(ps_q3_iq3, js)
    assert main(["topology", str(anynet), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["routers"] == 104 and out["diameter"] == 3
    assert main(["sim", str(js), "--routing", "polarstar", "--load", "0.2", "--cycles", "300",
                 "--warmup", "100", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["spec"] == ps_q3_iq3.spec and out["lost"] == 0 and 0.15 < out["accepted"] < 0.25
    assert main(["route", str(anynet), "--routing", "polarstar"]) == 2
    assert "needs a PolarStar network" in capsys.readouterr().err
    assert main(["metrics", str(tmp_path / "missing.anynet")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.anynet: No such file" in err
