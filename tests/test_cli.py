"""The `pstar` command line: JSON outputs, exports, and one-line errors with exit status 2."""
import json
import subprocess
import sys

import pytest


def pstar(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "pstar.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_topology_json(tmp_path):
    r = pstar("topology", "polarstar:q=3,supernode=iq,degree=3", "--json", "--out", str(tmp_path / "n.json"))
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert (d["routers"], d["links"], d["radix"], d["endpoints"], d["diameter"]) == (104, 364, 7, 208, 3)
    assert round(d["mean_distance"], 6) == 2.496639
    assert json.loads((tmp_path / "n.json").read_text())["routers"] == 104


def test_topology_paley_and_er():
    d = json.loads(pstar("topology", "polarstar:q=8,supernode=paley,degree=6", "-p", "3", "--json").stdout)
    assert d["routers"] == 73 * 13 and d["radix"] == 15 and d["endpoints"] == 3 * 949 and d["diameter"] <= 3
    d = json.loads(pstar("topology", "er:q=7", "--json").stdout)
    assert d["routers"] == 57 and d["diameter"] == 2


def test_design_space_json(tmp_path):
    r = pstar("design-space", "--radix", "15", "--json", "--plot", str(tmp_path / "ds.png"))
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["largest"] == {"q": 11, "supernode": "iq", "degree": 3, "routers": 1064, "radix": 15,
                            "moore_efficiency": d["largest"]["moore_efficiency"]}
    assert len(d["configs"]) >= 2
    assert (tmp_path / "ds.png").stat().st_size > 10_000


def test_human_output():
    r = pstar("topology", "polarstar:q=3,supernode=iq,degree=3")
    assert r.returncode == 0 and "routers" in r.stdout and "104" in r.stdout


@pytest.mark.parametrize("args,word", [
    (["topology", "polarstar:q=6"], "q=6"),
    (["topology", "polarstar:q=3,supernode=iq,degree=5"], "degree=5"),
    (["topology", "polarstar:q=3,supernode=paley,degree=3"], "p = 2d'+1 vertices"),
    (["topology", "nosuch:q=3"], "family='nosuch'"),
    (["topology", "polarstar:q=3,colour=red"], "key='colour'"),
    (["topology", "polarstar:q=three"], "q='three'"),
    (["topology", "polarstar:q=3", "-p", "x"], "-p"),
    (["topology", "polarstar:q=3", "--out", "/tmp/x.xyz"], "unknown suffix"),
    (["design-space", "--radix", "1"], "radix=1"),
    (["nosuch"], "invalid choice"),
])
def test_bad_input_is_one_line_exit_2(args, word):
    r = pstar(*args)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_demo(tmp_path):
    r = pstar("demo", "--out-dir", str(tmp_path / "demo"), "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["topology"]["routers"] == 1064 and d["topology"]["diameter"] == 3
    for f in d["files"]:
        assert (tmp_path / "demo").exists() and __import__("pathlib").Path(f).stat().st_size > 0


def test_route_with_turn_classes():
    """`pstar route --vc-policy turns`: PolarStar minimal routing checked deadlock-free with 2 VCs
    (exact CDG), where hop classes with 2 VCs are refused naming a cycle."""
    spec = "polarstar:q=3,supernode=iq,degree=3"
    r = pstar("route", spec, "--routing", "polarstar", "--check", "--vc-policy", "turns", "--vcs", "2", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["deadlock_free"] is True and d["deadlock_check"] == "cdg" and d["minimal"] is True
    assert d["vc_policy"].startswith("turn-indexed") and d["vcs"] == 2
    r = pstar("route", spec, "--routing", "polarstar", "--vcs", "2")
    assert r.returncode == 2 and "not deadlock-free: channel dependency cycle" in r.stderr


def test_sim_link_latency_adds_a_cycle_per_link():
    """At near-zero load a packet crosses hops + 2 links (injection, the hops, ejection): one more
    cycle of link latency adds hops + 2 cycles to the mean latency, and a wrong value is one line."""
    def run(ll):
        r = pstar("sim", "polarstar:q=3,supernode=iq,degree=0", "--routing", "min", "--vcs", "2", "--vc-policy",
                  "turns", "--depth", "4", "--load", "0.02", "--link-latency", str(ll), "--json")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    one, three = run(1), run(3)
    assert [d["params"]["link_latency"] for d in (one, three)] == [1, 3]
    assert three["params"]["credit_latency"] == 1 and three["params"]["va_stages"] == 1
    assert one["hops_mean"] == three["hops_mean"] and one["accepted"] == pytest.approx(three["accepted"], rel=0.02)
    assert three["latency_mean"] - one["latency_mean"] == pytest.approx(2 * (one["hops_mean"] + 2), abs=0.2)
    r = pstar("sim", "polarstar:q=3,supernode=iq,degree=0", "--load", "0.1", "--credit-latency", "0")
    assert r.returncode == 2 and "argument --credit-latency: credit-latency=0: must be an integer in 1..64" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
