"""PolarStar = ER_q * G' (PolarStar paper §5–§7) and its design space.

Router (x, a) with x an ER_q vertex id and a a supernode vertex has id x*|V(G')| + a; port numbering
as in `star_product`. Diameter ≤ 3 by Theorem 1 (IQ, Property R*) or Theorem 2 (Paley, R1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .er import ERGraph
from .errors import ParameterError
from .field import is_prime_power, prime_powers
from .network import Network
from .star_product import star_product
from .supernodes import SUPERNODES, Supernode, make_supernode, supernode_order


@dataclass(frozen=True, eq=False)
class PolarStarStructure:
    """What routing needs: the ER_q structure graph, the supernode and f."""
    er: ERGraph
    sn: Supernode

    @property
    def q(self) -> int:
        return self.er.q

    @property
    def sn_order(self) -> int:
        return self.sn.order

    def router(self, x, a):
        return np.asarray(x) * self.sn.order + np.asarray(a)

    def er_vertex(self, r):
        return np.asarray(r) // self.sn.order

    def sn_vertex(self, r):
        return np.asarray(r) % self.sn.order

    def er_port(self, slot):
        """Network port of ER slot k."""
        return self.sn.degree + np.asarray(slot)


def polarstar(q: int, supernode: str = "iq", degree: int = 3, p: int | None = None) -> Network:
    """PolarStar ER_q * G'_{d'}: (q²+q+1)·|V(G')| routers, max degree q+1+d'.

    `p` endpoints per router; default ⌊radix/3⌋ as in the paper's Table 3.
    """
    if not isinstance(q, int) or not is_prime_power(q):
        raise ParameterError(f"q={q!r}: must be a prime power (2, 3, 4, 5, 7, 8, 9, 11, ...)")
    sn = make_supernode(supernode, degree)
    er = ERGraph(q)
    radix = q + 1 + degree
    if p is None:
        p = radix // 3
    spec = f"polarstar:q={q},supernode={supernode},degree={degree}"
    name = f"PolarStar(q={q}, {supernode}, d'={degree})"
    return star_product(name, er.slots, sn, endpoints=p, spec=spec, structure=PolarStarStructure(er, sn))


def moore_bound(degree: int, diameter: int) -> int:
    """1 + d·Σ_{i<D} (d-1)^i (§2.2)."""
    return 1 + degree * sum((degree - 1) ** i for i in range(diameter))


@dataclass(frozen=True)
class DesignPoint:
    q: int
    supernode: str
    degree: int          # d'
    routers: int

    @property
    def radix(self) -> int:
        return self.q + 1 + self.degree

    @property
    def moore_efficiency(self) -> float:
        return self.routers / moore_bound(self.radix, 3)

    def as_dict(self) -> dict:
        return {"q": self.q, "supernode": self.supernode, "degree": self.degree, "routers": self.routers,
                "radix": self.radix, "moore_efficiency": round(self.moore_efficiency, 6)}


def design_space(radix: int, supernodes=("iq", "paley")) -> list[DesignPoint]:
    """Every feasible (q, supernode, d') with q + 1 + d' = radix (§7.1), largest first."""
    if not isinstance(radix, int) or radix < 3:
        raise ParameterError(f"radix={radix!r}: must be an integer >= 3")
    for s in supernodes:
        if s not in SUPERNODES:
            raise ParameterError(f"supernode={s!r}: allowed values are {', '.join(SUPERNODES)}")
    out = []
    for q in prime_powers(2, radix - 1):
        d = radix - q - 1
        for s in supernodes:
            m = supernode_order(s, d)
            if m:
                out.append(DesignPoint(q, s, d, (q * q + q + 1) * m))
    out.sort(key=lambda c: (-c.routers, c.q, c.supernode))
    return out


def largest(radix: int, supernodes=("iq", "paley")) -> DesignPoint:
    ds = design_space(radix, supernodes)
    if not ds:
        raise ParameterError(f"radix={radix}: no feasible PolarStar configuration")
    return ds[0]
