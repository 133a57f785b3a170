"""Network netlist: construction checks, exports and the JSON round trip."""
import json

import networkx as nx
import pytest

from topologies import Network, ParameterError, build, export, load_json
from topologies.exports import from_json_dict, to_json_dict



def test_from_links_and_queries():
    net = Network.from_links("t", [2, 3, 1], [[0, 0, 1, 2], [0, 1, 2, 0]], [1, 2, 0])
    assert net.num_routers == 3 and net.num_links == 2
    assert net.neighbor(0, 0) == (1, 2) and net.neighbor(1, 2) == (0, 0)
    assert net.neighbor(1, 0) == (-1, -1)
    assert net.degree.tolist() == [2, 1, 1] and net.radix == 2
    assert net.links().tolist() == [[0, 0, 1, 2], [0, 1, 2, 0]]
    with pytest.raises(ParameterError, match="router=5"):
        net.neighbor(5, 0)


@pytest.mark.parametrize("links,word", [
    ([[0, 0, 3, 0]], r"links\[0\]: router_b=3"),
    ([[0, 2, 1, 0]], r"links\[0\]: port_a=2"),
    ([[0, 0, 1, 0], [0, 0, 2, 0]], r"links\[1\]: port_a of router 0 is already used"),
    ([[0, 0, 0, 1]], r"links\[0\]: self-link"),
])
def test_bad_links(links, word):
    with pytest.raises(ParameterError, match=word):
        Network.from_links("t", [2, 2, 2], links)


def test_json_roundtrip_polarstar(tmp_path, ps_q3_iq3):
    path = tmp_path / "n.json"
    export(ps_q3_iq3, path)
    d = json.loads(path.read_text())
    assert d["routers"] == 104 and len(d["links"]) == 364 and d["endpoints"] == [2] * 104
    back = load_json(path)
    assert back.same_netlist(ps_q3_iq3)
    assert back.structure is not None and back.structure.q == 3


def test_json_roundtrip_plain_and_validation(tmp_path):
    net = Network.from_edges("ring", 5, [(i, (i + 1) % 5) for i in range(5)], endpoints=1)
    d = to_json_dict(net)
    assert from_json_dict(d).same_netlist(net)
    d2 = dict(d, links=d["links"] + [[0, 0, 2, 0]])
    with pytest.raises(ParameterError, match="links"):
        from_json_dict(d2)
    with pytest.raises(ParameterError, match="missing key 'routers'"):
        from_json_dict({"links": []})
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(ParameterError, match="not JSON"):
        load_json(bad)


def test_json_spec_mismatch_is_rejected(ps_q3_iq3):
    d = to_json_dict(ps_q3_iq3)
    d["links"] = d["links"][1:]
    with pytest.raises(ParameterError, match="do not match its spec"):
        from_json_dict(d)


def test_graphml_and_dot(tmp_path, ps_q3_iq3):
    export(ps_q3_iq3, tmp_path / "n.graphml")
    g = nx.read_graphml(tmp_path / "n.graphml")
    ref = nx.Graph(ps_q3_iq3.to_networkx())
    assert g.number_of_nodes() == 104 and g.number_of_edges() == 364
    assert nx.is_isomorphic(nx.Graph(g), ref)
    assert {(int(u), int(v)) for u, v in g.edges()} | {(int(v), int(u)) for u, v in g.edges()} >= set(ref.edges())
    export(ps_q3_iq3, tmp_path / "n.dot")
    text = (tmp_path / "n.dot").read_text()
    assert text.count(" -- ") == 364


def test_anynet(tmp_path, ps_q3_iq3):
    export(ps_q3_iq3, tmp_path / "n.anynet")
    lines = (tmp_path / "n.anynet").read_text().splitlines()
    assert len(lines) == 104
    nodes, edges = [], set()
    for line in lines:
        tok = line.split()
        r = int(tok[1])
        for kind, val in zip(tok[2::2], tok[3::2]):
            if kind == "node":
                nodes.append(int(val))
            else:
                edges.add(frozenset({r, int(val)}))
    assert sorted(nodes) == list(range(208))
    assert edges == {frozenset(e) for e in nx.Graph(ps_q3_iq3.to_networkx()).edges()}


def test_unknown_export_suffix(tmp_path, ps_q3_iq3):
    with pytest.raises(ParameterError, match="unknown suffix"):
        export(ps_q3_iq3, tmp_path / "n.txt")


def test_build_with_endpoints():
    net = build("polarstar:q=3,supernode=iq,degree=3", p=4)
    assert net.num_endpoints == 416
    assert build("polarstar:q=11").num_endpoints == 5 * 1064


@pytest.mark.parametrize("corrupt,message", [
    (lambda L: L.__setitem__(3, [L[3][0], 99, L[3][2], L[3][3]]), r"links\[3\]: port_a=99 out of range"),
    (lambda L: L.__setitem__(2, [L[2][0], L[2][1], 50, 0]), r"links\[2\]: router_b=50 is not a router"),
    (lambda L: L.__setitem__(1, [1, 0, 1, 1]), r"links\[1\]: self-link on router 1"),
    (lambda L: L.append([L[0][0], L[0][1], 3, 1]), r"links\[5\]: port_a of router 0 is already used"),
    (lambda L: L.__setitem__(4, [0, "1", 2, 0]), r"links\[4\]=.* must be \[router_a"),
], ids=["port-out-of-range", "dangling", "self-link", "port-used-twice", "wrong-type"])
def test_json_netlist_errors_name_the_first_bad_entry(tmp_path, corrupt, message):
    net = Network.from_edges("ring", 5, [(i, (i + 1) % 5) for i in range(5)], endpoints=1)
    d = to_json_dict(net)
    d["ports"] = [2] * 5
    corrupt(d["links"])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ParameterError, match=message):
        load_json(path)


def test_dot_escapes_the_network_name(tmp_path):
    net = Network.from_edges('a "b" \\c\nd', 3, [(0, 1), (1, 2)], endpoints=1)
    export(net, tmp_path / "n.dot")
    lines = (tmp_path / "n.dot").read_text().splitlines()
    assert lines[0] == 'graph "a \\"b\\" \\\\c\\nd" {'
    assert len(lines) == 1 + 3 + 2 + 1 and lines[-1] == "}"
