"""`make_routing(name, net, **params)`: every routing by name, deadlock-checked when built.

  min        table-based, all minimal ports (BFS), any Network          default VCs: diameter
  polarstar  arithmetic minimal next hop on PolarStar (paths=single|all)  default VCs: 3
  polarized  Polarized (distances=auto|table|arithmetic)                 default VCs: 4D-3
  valiant    Valiant, random intermediate router                         default VCs: 2D
  ugal       UGAL-L, 4 sampled intermediates                             default VCs: 2D

Building checks the routing/VC pair (`deadlock.assert_deadlock_free`): a pair that can deadlock
raises `DeadlockError` (a `ParameterError`) whose one line names a dependency cycle.
"""
from __future__ import annotations

import inspect

from topologies.errors import ParameterError
from topologies.network import Network

from .base import Routing, vc_policy_class
from .deadlock import assert_deadlock_free
from .polarized import Polarized
from .polarstar import PolarStarMinimal
from .table import MinimalTable
from .valiant import UGAL, Valiant

ROUTINGS: dict[str, type[Routing]] = {
    "min": MinimalTable,
    "polarstar": PolarStarMinimal,
    "polarized": Polarized,
    "valiant": Valiant,
    "ugal": UGAL,
}


def make_routing(name: str, net: Network, check_deadlock: bool = True, vc_policy: str = "hops", **params) -> Routing:
    """Routing `name` on `net` with VC policy `vc_policy` (routing_logic.base.VC_POLICIES); params
    go to its constructor (vcs=, distances=, paths=, ...)."""
    cls = ROUTINGS.get(str(name).lower()) if isinstance(name, str) else None
    if cls is None:
        raise ParameterError(f"routing={name!r}: unknown; allowed: {', '.join(ROUTINGS)}")
    allowed = [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "net", "oracle")]
    for key in params:
        if key not in allowed:
            raise ParameterError(f"{key}={params[key]!r}: not a parameter of routing {name}; "
                                 f"allowed: {', '.join(allowed)}")
    vc_policy_class(vc_policy)                     # before a costly constructor
    routing = cls(net, **params)
    if vc_policy != "hops":
        routing.set_vc_policy(vc_policy)
    if check_deadlock:
        assert_deadlock_free(routing)
    return routing
