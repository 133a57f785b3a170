"""SPEC families: the PolarStar family and its factor graphs.

Other topology modules register themselves in their own files; this module imports them so the
registry is complete whenever a SPEC is parsed.
"""
from __future__ import annotations

from .er import ERGraph
from .network import Network
from .polarstar import polarstar
from .spec import REQUIRED, Size, family, parse_dims, size_estimate
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


# ---- size estimates (spec.check_size): from the parameters alone, never raising -----------------

def _n(v) -> int:
    """A parameter as a non-negative int for the estimate (a bad value counts as 0: the builder refuses it)."""
    return int(v) if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


def _field_bytes(q: int) -> int:
    """GF(q) add/mul tables and the int64 temporaries `galois` makes while filling them."""
    return 48 * q * q


def _dims(text) -> tuple[int, ...]:
    try:
        return parse_dims(text)
    except Exception:
        return ()


def _product(values) -> int:
    n = 1
    for v in values:
        n *= v
    return n


@size_estimate("polarstar")
def _polarstar_size(q, supernode, degree) -> Size:
    q, d = _n(q), _n(degree)
    order = {"iq": 2 * d + 2, "paley": 2 * d + 1}.get(str(supernode).lower(), d + 1)
    routers = (q * q + q + 1) * order
    return Size(routers, routers * (q + 1 + d), _field_bytes(q) + _field_bytes(order) + 8 * order * order)


@size_estimate("er")
def _er_size(q) -> Size:
    q = _n(q)
    return Size(q * q + q + 1, (q * q + q + 1) * (q + 1), _field_bytes(q))


@size_estimate("slimfly")
def _slimfly_size(q) -> Size:
    q = _n(q)
    return Size(2 * q * q, q * q * (3 * q + 1), _field_bytes(q))


@size_estimate("dragonfly")
def _dragonfly_size(a, h, p) -> Size:
    a, h = _n(a), (1 if h is None else _n(h))
    routers = (a * h + 1) * a
    return Size(routers, routers * (a - 1 + h) if a else 0)


@size_estimate("hyperx")
def _hyperx_size(dims) -> Size:
    d = _dims(dims)
    routers = _product(d)
    return Size(routers, routers * sum(k - 1 for k in d), routers * len(d) * 16)


@size_estimate("torus")
def _torus_size(dims) -> Size:
    d = _dims(dims)
    routers = _product(d)
    return Size(routers, routers * 2 * len(d), routers * len(d) * 16)


@size_estimate("bundlefly")
def _bundlefly_size(p, s) -> Size:
    p, s = _n(p), _n(s)
    routers = 2 * p * s * s
    return Size(routers, routers * ((p + 3 * s) // 2 + 1), _field_bytes(p) + _field_bytes(s))


@size_estimate("fattree")
def _fattree_size(k) -> Size:
    k = _n(k)
    routers = 5 * k * k // 4
    return Size(routers, routers * k, 200 * k ** 3, python_steps=k ** 3)   # its link list is built in Python


@size_estimate("jellyfish")
def _jellyfish_size(n, d, seed) -> Size:
    n, d = _n(n), _n(d)
    return Size(n, n * d, 600 * n * d)                   # networkx: about 600 B per edge end


@size_estimate("lps")
def _lps_size(p, q) -> Size:
    p, q = _n(p), _n(q)
    routers = (q ** 3 - q) // 2 if q else 0
    # candidate matrices (q³ rows of 4 int64 plus meshgrids) and the p+1 generators per router;
    # the (2√p + 1)⁴ four-square candidates are enumerated one by one in Python
    return Size(routers, routers * (p + 1), 160 * q ** 3 + 24 * routers * (p + 1),
                python_steps=(2 * _isqrt(p) + 1) ** 4)


def _isqrt(v: int) -> int:
    import math
    return math.isqrt(v)
