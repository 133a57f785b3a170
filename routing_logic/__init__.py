"""Routing logic: the golden per-hop routing model the simulator and the RTL are checked against.

Interface (details in `routing_logic.base`):

    r = make_routing(name, net, vcs=None, **params)      # min | polarstar | polarized | valiant | ugal
    state = r.inject(s, t, occupancy, rng)               # RouteState(src, dst, hops, inter, phase)
    r.route(c, state, in_port, in_vc) -> (Candidate(port, vc, priority), ...)   # port EJECT = -1
    state = r.advance(c, state, port)                    # after the hop: hops + 1, phase bit
    r.candidates_batch(c_array, StateArrays)             # the same for many head flits at once
    r.num_vcs, r.vc_policy                               # hop-indexed: vc = min(hops, num_vcs - 1)

The simulator adds the occupancy (credits used on the output VC) to each candidate's priority
and takes the minimum; ties go to the lowest port, then the lowest VC (`base.select`).

Modules: `polarstar` (table-free arithmetic minimal routing and exact distance on PolarStar),
`table` (BFS tables on any Network), `polarized` (Micro'22 Polarized routing), `valiant`
(Valiant and UGAL-L), `deadlock` (channel dependency graphs), `registry` (`make_routing`).
Imports topologies only, never sim/hdl/fpga.
"""
from .base import EJECT, NO_ROUTER, VC_POLICIES, Candidate, HopVC, RouteState, TurnVC, Routing, StateArrays, select, walk_idle
from .deadlock import DeadlockError, assert_deadlock_free, check_deadlock, deadlock_verdict, min_vcs
from .polarized import Polarized
from .polarstar import PolarStarArithmetic, PolarStarMinimal
from .registry import ROUTINGS, make_routing
from .table import MinimalTable, TableOracle, make_oracle
from .valiant import UGAL, Valiant

__all__ = ["EJECT", "NO_ROUTER", "VC_POLICIES", "Candidate", "HopVC", "TurnVC", "RouteState", "Routing", "StateArrays", "select",
           "walk_idle", "DeadlockError", "assert_deadlock_free", "check_deadlock", "deadlock_verdict", "min_vcs",
           "Polarized", "PolarStarArithmetic", "PolarStarMinimal", "ROUTINGS", "make_routing", "MinimalTable",
           "TableOracle", "make_oracle", "UGAL", "Valiant"]
