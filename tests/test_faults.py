"""Link failures: the damaged netlist, routing recomputed on it, deadlock freedom, and delivery.

PolarStar q=3 IQ d'=3 (104 routers) with 5%, 10% and 20% of its links failed: table minimal is
recomputed on the damaged network, arithmetic PolarStar falls back to per-router exceptions; the
channel-dependency check runs on each (routing, VCs); the model delivers every packet, and every
route is checked hop by hop against BFS on the damaged network. Polarized routing reaches dead
ends on these damaged networks; packets escape there to minimal routing (routing_logic/polarized.py):
its routes are checked against an explicit walk of the route graph, its VC need by the channel
dependency graph, and its delivery in the model.
"""
import numpy as np
import pytest

from routing_logic.base import EJECT, RouteState
from routing_logic.registry import make_routing
from sim.network_sim import NetworkSim
from contract.params import RouterParams
from topologies import build
from topologies.distances import distance_matrix
from topologies.errors import ParameterError
from topologies.metrics import resilience

PS104 = "polarstar:q=3,supernode=iq,degree=3"
FRACTIONS = (0.05, 0.10, 0.20)


@pytest.fixture(scope="module")
def ps104():
    return build(PS104)


@pytest.fixture(scope="module", params=FRACTIONS, ids=lambda f: f"{int(f * 100)}pct")
def damaged(request, ps104):
    return request.param, ps104.without_links(fraction=request.param, seed=1)


def test_failure_draws_refuse_a_negative_seed(ps104):
    """numpy refuses negative seeds from deep inside; every seeded draw says so in one line first."""
    with pytest.raises(ParameterError, match="seed=-1: must be a non-negative integer"):
        ps104.without_links(fraction=0.1, seed=-1)
    with pytest.raises(ParameterError, match="seed=-3"):
        resilience(ps104, trials=1, seed=-3)


def test_without_links_keeps_numbering(ps104):
    links = ps104.links()
    d = ps104.without_links(links[[0, 5]])
    assert d.num_links == ps104.num_links - 2
    assert np.array_equal(d.offsets, ps104.offsets) and d.structure is ps104.structure
    for ra, pa, rb, pb in links[[0, 5]].tolist():
        assert d.neighbor(ra, pa) == (-1, -1) and d.neighbor(rb, pb) == (-1, -1)
    ra, pa, rb, pb = links[1].tolist()
    assert d.neighbor(ra, pa) == (rb, pb)
    assert len(d.attrs["failed_links"]) == 2
    again = d.without_links([[rb, pb, ra, pa]])          # either orientation names the link
    assert again.num_links == ps104.num_links - 3
    with pytest.raises(ParameterError, match="not a link"):
        d.without_links(links[[0]])                      # already failed
    with pytest.raises(ParameterError, match="fraction"):
        ps104.without_links(fraction=1.5)


def test_fraction_is_connected_and_counted(damaged, ps104):
    f, d = damaged
    assert d.num_links == ps104.num_links - round(f * ps104.num_links)
    assert d.is_connected()


@pytest.mark.parametrize("routing", ["min", "polarstar"])
def test_routes_minimal_on_damaged(damaged, routing):
    """Every hop of every route uses a live link and shortens the damaged distance."""
    f, d = damaged
    ro = make_routing(routing, d)                        # deadlock check on the damaged CDG inside
    dist = distance_matrix(d).astype(int)
    rng = np.random.default_rng(7)
    for s, t in rng.integers(d.num_routers, size=(300, 2)).tolist():
        c, state, hops = s, RouteState(s, t), 0
        while True:
            cand = ro.route(c, state)
            if cand[0].port == EJECT:
                assert c == t
                break
            nxt, _ = d.neighbor(c, cand[0].port)
            assert nxt >= 0, f"{routing}: route {s}->{t} uses a failed port {cand[0].port} at {c}"
            assert dist[nxt, t] == dist[c, t] - 1
            state = ro.advance(c, state, cand[0].port)
            c, hops = nxt, hops + 1
            assert hops <= ro.max_route_length


def test_polarstar_fallback_only_where_needed(damaged, ps104):
    f, d = damaged
    intact = make_routing("polarstar", ps104, check_deadlock=False)
    ro = make_routing("polarstar", d)
    ex = ro.exception_counts()
    assert ex.sum() > 0 and not intact.exception_counts().any()
    n = d.num_routers
    nxt_i, nxt_d = intact._next_port(*np.divmod(np.arange(n * n), n)), ro._next_port(*np.divmod(np.arange(n * n), n))
    changed = int((nxt_i != nxt_d).sum())
    assert changed == ex.sum()                           # overrides exactly where the unit is wrong


def test_arithmetic_distances_refused_on_damaged(damaged):
    with pytest.raises(ParameterError, match="failed links"):
        make_routing("polarized", damaged[1], distances="arithmetic")


def _longest_by_walk(r, s, t):
    """Longest route s -> t by depth-first search over (router, phase) through route()/advance()
    (independent of route_lengths' bitset sweep); raises on a cycle or a dead end."""
    from functools import lru_cache

    @lru_cache(maxsize=None)
    def longest(c, phase, depth):
        assert depth < 40, f"route cycles ({s} -> {t})"
        if c == t:
            return 0
        st = RouteState(s, t, hops=0, phase=phase)
        cands = r.route(c, st)
        assert cands, f"dead end at {c} for ({s}, {t})"
        nxt = r.advance(c, st, cands[0].port).phase
        return 1 + max(longest(r.neighbor(c, x.port), nxt, depth + 1) for x in cands)

    return longest(s, 1, 0)


def test_polarized_escapes_dead_ends(damaged):
    """Dead ends are real on the damaged network; packets escape there (phase 0, minimal ports):
    no route cycles, every pair is connected, the shortest route is the damaged distance, and the
    longest route (with escapes) equals an explicit walk of the route graph."""
    from routing_logic.polarized import Polarized
    f, d = damaged
    r = Polarized(d, distances="table")
    L = r.route_lengths()
    dist = distance_matrix(d).astype(np.int64)
    assert L["dead_ends"] > 0 and L["cyclic"] == 0
    assert np.array_equal(L["shortest"], dist)
    assert np.array_equal(L["zero_load"], dist)
    assert L["longest"].max() <= r.max_route_length
    rng = np.random.default_rng(int(f * 100))
    for s, t in rng.integers(d.num_routers, size=(25, 2)).tolist():
        assert _longest_by_walk(r, s, t) == L["longest"][s, t]
    # pairs whose longest route goes through a dead end (longer than any dead-end-free route could be)
    worst = np.argwhere(L["longest"] == L["longest"].max())[:5]
    for s, t in worst.tolist():
        assert _longest_by_walk(r, s, t) == L["longest"][s, t]


def test_polarized_vcs_on_a_damaged_network(ps104):
    """The deadlock check runs on the damaged network's routing and VC policy, escapes included:
    11 hop-indexed VCs are enough at 10% failed links, 10 are not."""
    from routing_logic.deadlock import DeadlockError
    d = ps104.without_links(fraction=0.10, seed=1)
    make_routing("polarized", d, vcs=11)
    with pytest.raises(DeadlockError):
        make_routing("polarized", d, vcs=10)


@pytest.mark.parametrize("routing", ["min", "polarstar", "polarized"])
def test_model_delivers_every_packet(damaged, routing):
    f, d = damaged
    probe = make_routing(routing, d, check_deadlock=False)
    vcs = max(4, probe.default_vcs())
    sim = NetworkSim(d, routing, RouterParams(vcs=vcs), "uniform", 0.6, seed=3)
    sim.run(3000)
    sim.stop_injection()
    for _ in range(40):
        if sim.in_flight == 0 and sim.queued_flits == 0:
            break
        sim.run(500)
    pk = sim.packets()
    assert sim.num_packets > 3000 and (pk["done"] >= 0).all(), f"{(pk['done'] < 0).sum()} packets not delivered"
    assert (pk["eseq"] == sim.params.packet_flits).all()
    if routing == "polarized":                  # some packets escaped a dead end on the way
        assert (sim.pk_phase[:sim.num_packets] == 0).sum() > 0
