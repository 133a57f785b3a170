"""The simulator at scale (issue 43, item 4): above `network_sim.DENSE_ROUTERS` routers the
engine computes PolarStar distances and next hops with the arithmetic unit (`engine.Arith`,
ER_q- and supernode-sized tables) instead of n x n tables; the packet table and the state use
compact types; a run too big for the memory left is refused before anything is allocated."""
import numpy as np
import pytest

from cli_run import run_cli
from contract.params import RouterParams
from routing_logic.polarstar import PolarStarArithmetic
from routing_logic.registry import make_routing
from sim import engine, network_sim
from sim.network_sim import NetworkSim, arith_unit, estimate_bytes
from topologies import polarstar


@pytest.mark.parametrize("q, sn, d", [(3, "iq", 3), (5, "paley", 2), (4, "iq", 0), (3, "complete", 2), (7, "iq", 3),
                                      (3, "iq", 20), (9, "paley", 4)])
def test_engine_arithmetic_equals_the_routing_units_tables(q, sn, d):
    """Every pair: the engine's compiled D and next hop are routing_logic.polarstar's."""
    net = polarstar(q, sn, d)
    unit = PolarStarArithmetic(net.structure)
    dist, port = engine.arith_all_pairs(arith_unit(net), net.num_routers)
    assert np.array_equal(dist, unit.distance_table())
    assert np.array_equal(port, unit.next_port_table())


def _run(net, routing, arith, monkeypatch, cycles=400):
    monkeypatch.setattr(network_sim, "DENSE_ROUTERS", 0 if arith else 10**9)
    kw = {"buffer_depth": 8} if routing == "polarized" else {}
    V = 9 if routing == "polarized" else 6          # deadlock-free by construction (4D - 3, 2D)
    ro = make_routing(routing, net, vcs=V, **kw)
    sim = NetworkSim(net, routing, RouterParams(vcs=V, depth=8), load=0.4, seed=3, routing_obj=ro, trace=10**5)
    assert sim.arith == arith
    sim.run(cycles)
    return sim


@pytest.mark.parametrize("routing", ["min", "polarstar", "ugal", "polarized"])
def test_arithmetic_path_equals_the_table_path(routing, monkeypatch):
    """The same run on the 104-router PolarStar with tables and with the arithmetic unit: the
    same packets, hops, arrival cycles and ejections, flit for flit."""
    net = polarstar(3, "iq", 3, p=2)
    a = _run(net, routing, False, monkeypatch)
    b = _run(net, routing, True, monkeypatch)
    assert b.tables.dist.shape == (1, 1) and b.tables.nexthop.shape == (1, 1)
    assert a.num_packets == b.num_packets > 500
    for name in ("pk_hops", "pk_done", "pk_dst"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert np.array_equal(a.trace[:a.trace_len[0]], b.trace[:b.trace_len[0]])


def test_class_steps_in_chunks_equal_one_block():
    net = polarstar(3, "iq", 3)
    for policy in ("hops", "turns"):
        r = make_routing("min", net, vcs=4, vc_policy=policy, check_deadlock=False)
        full = r.class_steps()
        assert full.dtype == np.int64
        assert np.array_equal(r.class_steps(dtype=np.int8, chunk=7), full)


def test_estimate_counts_the_packets_and_drops_the_tables():
    net = polarstar(3, "iq", 3, p=2)
    prm = RouterParams()
    idle = estimate_bytes(net, prm)
    busy = estimate_bytes(net, prm, cycles=2000, load=0.3)
    assert busy["total"] - idle["total"] == busy["packets"] - idle["packets"] > 0
    assert estimate_bytes(net, prm, arith=True)["tables"] < idle["tables"]


@pytest.mark.parametrize("routing,options", [
    ("min", {}), ("polarized", {}), ("min", {"va_choice_stage": 1}), ("min", {"va_stages": 2}),
    ("polarstar", {"va_separable": 1, "sa_stages": 3, "alloc_iters": 1}), ("min", {"sa_stages": 2}),
    ("polarized", {"va_choice_stage": 1, "va_stages": 2}),
])
def test_state_estimate_is_the_allocation(routing, options):
    """state_bytes, which the memory check reads, counts exactly what NetworkSim allocates, and
    what only some configurations read is allocated only for them: the Polarized candidates
    (R bytes per input VC), the registered output state of va_choice_stage (2·2·4 bytes per
    network output VC and port), the pending requests of va_stages = 2 (8 bytes per input VC),
    the separable allocator's state (12 bytes per input VC, 4 per port), the switch allocator's
    nominations (sa_stages >= 2) and grants (sa_stages = 3), 4 bytes per port each."""
    net = polarstar(3, "iq", 3, p=2)
    prm = RouterParams(vcs=9 if routing == "polarized" else 4, **options)
    sim = NetworkSim(net, routing, prm, load=0.0)
    state = sum(a.nbytes for a in sim.routers.inputs + sim.routers.va + sim.routers.sa + sim.routers.outputs)
    n, R, P, V = net.num_routers, sim.R, sim.P, prm.vcs
    assert state == estimate_bytes(net, prm, routing=routing)["routers"]
    lean = engine.state_bytes(n, engine.make_config(RouterParams(vcs=V), engine.MIN, R, P, classes=1))
    extra = (P * V * R * (routing == "polarized") + 2 * 2 * R * V * 4 * prm.va_choice_stage
             + P * V * 8 * (prm.va_stages == 2) + (P * V * 12 + P * 4) * prm.va_separable
             + P * 4 * (prm.sa_stages >= 2) + P * 4 * (prm.sa_stages == 3))
    assert state - lean == n * extra


def test_a_run_too_big_for_memory_is_refused_with_one_line(monkeypatch, capsys):
    """`pstar sim` estimates the run's memory before allocating it: one line, exit status 2."""
    monkeypatch.setattr(network_sim, "available_memory", lambda: 1 << 20)
    code, out, err = run_cli(["sim", "polarstar:q=3,supernode=iq,degree=3", "-p", "2", "--load", "0.3",
                              "--cycles", "2000", "--quiet"], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "GB available" in err, err


def test_large_networks_other_than_polarstar_are_refused(monkeypatch):
    monkeypatch.setattr(network_sim, "DENSE_ROUTERS", 50)
    from topologies import build
    net = build("polarstar:q=3,supernode=iq,degree=3", p=2).without_links(fraction=0.05, seed=1)
    with pytest.raises(network_sim.ParameterError, match="intact"):
        NetworkSim(net, "min", RouterParams(), load=0.1)
