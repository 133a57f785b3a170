"""`python -m sim.precompile` (run by an editable install, build_backend/pstar_backend.py): what it
compiles serves every other network and routing, and the packages it imports are the ones the
build backend asks pip for."""
import importlib.util
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import sim.threads

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys
from sim import precompile
assert precompile.main(["--quiet"]) == 0
modules = sorted({m.split(".")[0] for m in sys.modules})

from contract.params import RouterParams
from sim import engine, network_sim
from sim.experiment import default_vcs
from topologies import polarstar

def compiled():
    return {f: len(getattr(engine, f).signatures) for f in ("run_cycles", "run_cycles_parallel")}

before = compiled()
net = polarstar(3, "iq", 3)                # 104 routers, not the precompiled network's size
for blocks in (1, 2) if int(sys.argv[1]) >= 2 else (1,):
    network_sim.blocks_for = lambda threads, routers, cycles, b=blocks: b
    for routing in network_sim.MODES:
        network_sim.NetworkSim(net, routing, RouterParams(vcs=default_vcs(net, routing)), load=0.3,
                               threads=blocks).run(20)
print(json.dumps({"modules": modules, "before": before, "after": compiled()}))
"""


def _backend():
    spec = importlib.util.spec_from_file_location("pstar_backend", ROOT / "build_backend" / "pstar_backend.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_precompiled_engine_serves_other_networks_and_the_build_env_has_its_imports():
    threads = sim.threads.max_threads()
    out = subprocess.run([sys.executable, "-c", CHILD, str(threads)], cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=900)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    # the engines a run uses were compiled; another size and every routing add no compilation
    assert res["before"]["run_cycles"] >= 1
    assert res["before"]["run_cycles_parallel"] >= (1 if threads >= 2 else 0)
    assert res["after"] == res["before"]
    # the project's dependencies that the precompile imports are exactly those pip installs for it
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower().replace("-", "_"): d for d in deps}
    imported = {n for n in names if n in res["modules"]}
    backend = _backend()
    assert imported == set(backend.PRECOMPILE_IMPORTS)
    assert sorted(backend.precompile_requirements()) == sorted(names[n] for n in imported)
