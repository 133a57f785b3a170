"""The engine's minimal-port table (sim.engine.minimal_ports): each bit against networkx's
shortest paths, and the same run with the table as without it (the VC choice reading a distance
per port), every array equal, for the routings that choose among minimal ports."""
import networkx as nx
import numpy as np
import pytest

import sim.network_sim as network_sim
from contract.params import RouterParams
from sim.engine import minimal_ports
from sim.network_sim import NetworkSim
from topologies import polarstar
from topologies.zoo import hyperx


@pytest.fixture(scope="module")
def ps104():
    return polarstar(3, "iq", 3)


@pytest.mark.parametrize("make", [lambda: polarstar(3, "iq", 3), lambda: hyperx((3, 4))], ids=["polarstar", "hyperx"])
def test_minimal_ports_are_the_ports_one_hop_closer(make):
    """Bit p of [c, t] exactly when the router on port p of c is one hop closer to t, by
    networkx's BFS distances (not the toolkit's distance matrix the table is built from)."""
    net = make()
    n, R = net.num_routers, int(net.ports.max())
    pr, _ = net.peer_table()
    nbr = np.full((n, R), -1, dtype=np.int64)
    rows = net.port_router.astype(np.int64)
    nbr[rows, np.arange(len(net.peer)) - net.offsets[rows]] = pr
    hops = dict(nx.all_pairs_shortest_path_length(net.to_networkx()))
    dist = np.array([[hops[c][t] for t in range(n)] for c in range(n)], dtype=np.uint8)
    mask = minimal_ports(nbr, dist)
    for c in range(n):
        for t in range(n):
            want = sum(1 << p for p in range(R) if nbr[c, p] >= 0 and hops[int(nbr[c, p])][t] + 1 == hops[c][t])
            assert int(mask[c, t]) == want, (c, t)
    assert (mask[np.arange(n), np.arange(n)] == 0).all()


def _state(s):
    parts = [*s.routers, s.links, s.endpoints, s.obs]
    out = {f"{type(p).__name__}.{f}": getattr(p, f) for p in parts for f in p._fields}
    out.update({f: getattr(s, f) for f in ("pk_hops", "pk_done", "pk_eseq", "pk_phase", "pk_inter")})
    return out


def _run(net, routing, params):
    run = NetworkSim(net, routing, params, load=0.5, seed=7, trace=10**6, threads=1)
    run.run(500)
    return run


@pytest.mark.parametrize("routing,params", [("min", RouterParams()), ("valiant", RouterParams(vcs=6)),
                                            ("ugal", RouterParams(vcs=8)), ("polarized", RouterParams(vcs=9))])
def test_runs_equal_with_and_without_the_table(ps104, monkeypatch, routing, params):
    """Near saturation (load 0.5), 500 cycles: every array of the run with the table equals the
    run that checks distances per port (MINPORT_ROUTERS = 0)."""
    fast = _run(ps104, routing, params)
    assert fast.tables.minport.shape == (104, 104)
    # built once per network: another simulation of it (a sweep's next point) shares the table
    assert NetworkSim(ps104, "min", RouterParams(), threads=1).tables.minport is fast.tables.minport
    monkeypatch.setattr(network_sim, "MINPORT_ROUTERS", 0)
    slow = _run(ps104, routing, params)
    assert slow.tables.minport.shape == (1, 1)
    assert fast.ejected_flits > 10_000
    a, b = _state(fast), _state(slow)
    for k in a:
        assert np.array_equal(a[k], b[k]), k
