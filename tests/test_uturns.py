"""Routers without u-turns (hdl.router.Router(uturns=...)): a network of minimal-routing routers
never sends a head back by the port it came in by, so `NetworkPlan` builds their VC maps, and with
them the allocators' and the crossbar's paths from port i to port i, without those output VCs."""
import functools
import gc
import warnings

import numpy as np
import pytest
from amaranth.hdl import UnusedElaboratable
from scipy.sparse.csgraph import shortest_path

from contract.params import RouterParams
from fpga.tops import RouterTrafficTop
from hdl.network import plan
from routing_logic.base import EJECT
from routing_logic.registry import make_routing
from topologies import polarstar


@functools.lru_cache(maxsize=None)
def _net(q, supernode, degree, fail=0.0):
    net = polarstar(q, supernode, degree)
    return net.without_links(fraction=fail, seed=3) if fail else net


@pytest.mark.parametrize("routing", ["min", "polarstar"])
@pytest.mark.parametrize("spec", [(3, "iq", 0), (3, "iq", 3), (4, "iq", 0, 0.05)])
def test_minimal_routings_never_turn_a_head_back(routing, spec):
    """The property the routers rely on, from the routing model: for every router b and
    destination t, every router a that b's candidates lead to routes t's heads on, never back to b
    (the model's candidates for a head at a that came from b, hop classes as in the network)."""
    net = _net(*spec)
    rt = make_routing(routing, net, vcs=4)
    n, back, hops = net.num_routers, 0, 0
    for b in range(n):
        for t in range(n):
            if t == b:
                continue
            state = rt.inject(b, t)
            for cand in {c.port for c in rt.route(b, state)}:
                a = rt.neighbor(b, cand)
                after = rt.advance(b, state, cand)
                ports = {c.port for c in rt.route(a, after)} - {EJECT}
                back += sum(rt.neighbor(a, p) == b for p in ports)
                hops += 1
    assert hops >= n * (n - 1) and back == 0


@pytest.mark.parametrize("routing,uturns", [("min", False), ("polarstar", False), ("polarized", True)])
def test_network_routers_hold_no_output_vc_of_their_input_port(routing, uturns):
    """A network's routers: without u-turns exactly when the routing unit is minimal, and then no
    input VC of network port i can hold an output VC of port i (every other one it could before)."""
    net = _net(3, "iq", 0)
    prm = RouterParams(vcs=5 if routing == "polarized" else 4)
    router = plan(net, routing, prm).proto
    kept = plan(net, routing, prm, uturns=True).proto
    V, R = prm.vcs, router.R
    assert router.uturns is uturns and kept.uturns is True
    for iv, ovcs in enumerate(router.vcmap.ovcs_of):
        i = iv // V
        same = [ow for ow in kept.vcmap.ovcs_of[iv] if ow[0] == i and i < R]
        assert sorted(ovcs) == sorted(ow for ow in kept.vcmap.ovcs_of[iv] if uturns or ow not in same)
        assert uturns or i >= R or not any(o == i for o, _ in ovcs)
    assert any(o == iv // V for iv, ovcs in enumerate(kept.vcmap.ovcs_of[:R * V]) for o, _ in ovcs)


@pytest.mark.parametrize("routing", ["min", "polarized"])
def test_a_router_fed_by_neighbour_emulators_is_built_as_in_a_network(routing):
    """The single-router FPGA top builds its router as a network does: with a minimal unit
    without u-turns, and then each emulated neighbour sends to every router but itself and those
    one hop nearer to it than to the router under test (BFS distances): their shortest paths
    lead back. With a non-minimal unit (Polarized) the router keeps its u-turns and the
    neighbours send anywhere."""
    net = _net(3, "iq", 0)
    with warnings.catch_warnings():          # the top is built to be looked at, not elaborated
        warnings.simplefilter("ignore", UnusedElaboratable)
        top = RouterTrafficTop(net, routing, RouterParams(vcs=9 if routing == "polarized" else 4), divisor=8, router=5)
        uturns, dsts, nbs = top.router.uturns, top.dsts, top.neighbours
        del top
        gc.collect()
    dist = shortest_path(net.adjacency(), unweighted=True).astype(np.int64)
    n, me = net.num_routers, 5
    assert uturns is (routing == "polarized")
    for nb, d in zip(nbs, dsts):
        want = [t for t in range(n) if t != nb and (uturns or dist[nb, t] != dist[me, t] - 1)]
        assert d == want
        assert uturns or len(want) < n - 1          # some destinations are left out
