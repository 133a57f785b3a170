"""`pstar verilog`: writes a network's Verilog (one router module, or one per router), and
refuses bad input with one line and exit status 2."""
import json

import tiers

from pstar.cli import main

SMALL = "polarstar:q=2,supernode=complete,degree=0"      # 7 routers


def test_verilog_writes_network(tmp_path, capsys):
    out = tmp_path / "net.v"
    assert main(["verilog", SMALL, "--out", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    text = out.read_text()
    assert data["routers"] == 7 and data["router_modules"] == 1 and data["bytes"] == len(text)
    assert text.count("pstar_router router") == 7              # one module, seven instances
    assert "module pstar_network(" in text and "module pstar_router(" in text
    for r in range(7):
        assert f".id(3'd{r})" in text


def test_verilog_errors_are_one_line(tmp_path, capsys):
    out = str(tmp_path / "x.v")
    for argv in (["verilog", "er:q=3", "--out", out],                       # arithmetic unit needs PolarStar
                 ["verilog", SMALL, "--routing", "valiant", "--out", out],
                 ["verilog", SMALL, "--routing", "min", "-V", "1", "--out", out],  # not deadlock-free
                 ["verilog", "polarstar:q=6", "--out", out]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("pstar verilog: error:") and "\n" not in err, err


def test_verilog_shared_turn_classes_tie_up_ports(tmp_path, capsys):
    """Turn classes with the shared module: one module with an `up` input, tied at each instance
    to the ports that lead to a router of larger id; up[i] & up[o] is the routing's class step
    from input port i to output port o at every router (the steps the model takes)."""
    import re

    from routing_logic.registry import make_routing
    from topologies import build

    spec = "polarstar:q=2,supernode=iq,degree=0"
    out = tmp_path / "net.v"
    assert main(["verilog", spec, "-V", "2", "--vc-policy", "turns", "--routing", "min", "--out", str(out),
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    text = out.read_text()
    assert data["vc_policy"] == "turns" and data["router_modules"] == 1
    ups = {int(r): int(u) for r, u in re.findall(r"router(\d+) \(.*?\.up\(\d+'d(\d+)\)", text)}
    net = build(spec)
    steps = make_routing("min", net, vcs=2, vc_policy="turns").class_steps()
    R = steps.shape[1]
    assert sorted(ups) == list(range(net.num_routers))
    for r, up in ups.items():
        assert [[up >> i & up >> o & 1 for o in range(R)] for i in range(R)] == steps[r].tolist(), r
    assert any(steps[r].any() for r in ups) and not all(steps[r].all() for r in ups)


@tiers.full_only("CI budget: 26 router modules elaborated")
def test_verilog_per_router_turn_classes(tmp_path, capsys):
    """One module per router, 2 VCs with turn classes: every instance connects only the ports its
    module has (no `id`: the ids are constants)."""
    out = tmp_path / "net.v"
    assert main(["verilog", "polarstar:q=2,supernode=iq,degree=0", "-V", "2", "--vc-policy", "turns", "--per-router",
                 "--routing", "min", "--out", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    text = out.read_text()
    assert data["vc_policy"] == "turns" and data["vcs"] == 2 and data["router_modules"] == 14
    assert ".id(" not in text and text.count("module pstar_router_") == 14
