"""SPEC families: the PolarStar family and its factor graphs.

Other topology modules register themselves in their own files; this module imports them so the
registry is complete whenever a SPEC is parsed.
"""
from __future__ import annotations

from .er import ERGraph
from .network import Network
from .polarstar import polarstar
from .spec import REQUIRED, family
from .star_product import star_product
from .supernodes import complete


@family("polarstar", "PolarStar ER_q * G' (supernode iq, paley or complete; degree = d')",
        q=(int, REQUIRED), supernode=(str, "iq"), degree=(int, 3))
def _polarstar(q, supernode, degree, p=None) -> Network:
    return polarstar(q, supernode.lower(), degree, p)


@family("er", "Erdős–Rényi polarity graph ER_q (PolarFly), quadric loops dropped", q=(int, REQUIRED))
def _er(q, p=None) -> Network:
    from .field import is_prime_power
    from .errors import ParameterError
    if not is_prime_power(q):
        raise ParameterError(f"q={q!r}: must be a prime power (2, 3, 4, 5, 7, 8, 9, 11, ...)")
    er = ERGraph(q)
    # ER_q is the star product with a one-vertex supernode; the port of slot k is k.
    return star_product(f"ER({q})", er.slots, complete(0), endpoints=(q + 1) // 3 if p is None else p,
                        spec=f"er:q={q}", structure=er)
from . import zoo, lps  # noqa: F401,E402  (registers families)
