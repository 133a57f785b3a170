"""SpectralFly: the Lubotzky–Phillips–Sarnak Ramanujan graphs LPS(p, q) (SpectralFly paper §III, Def. 3).

LPS(p, q), for distinct odd primes p and q, is the Cayley graph Cay(G, S) with
  * G = PSL(2, F_q) when the Legendre symbol (p/q) = 1, PGL(2, F_q) when (p/q) = −1;
  * S = the p + 1 matrices [[a0 + a1·x + a3·y, −a1·y + a2 + a3·x], [−a1·y − a2 + a3·x, a0 − a1·x − a3·y]]
    (mod q) for the solutions (a0, a1, a2, a3) of a0² + a1² + a2² + a3² = p with a0 > 0 odd
    (p ≡ 1 mod 4) or a0 > 0 even / a0 = 0 and a1 > 0 (p ≡ 3 mod 4), where x² + y² + 1 ≡ 0 (mod q).
It is (p + 1)-regular on n = (3 − (p/q))·(q³ − q)/4 vertices, bipartite in the PGL case, and
Ramanujan (λ ≤ 2√p) when q > 2√p; for q ≤ 2√p we build it anyway and warn.

Group elements are 2×2 matrices modulo scalars, stored in the normal form whose first nonzero
entry is 1 (code = ((a·q + b)·q + c)·q + d). PSL(2, q) is the index-2 subgroup of PGL(2, q) of
matrices whose determinant is a square. Router ids follow the sorted codes; router u's port j
leads to u·s_j (the Cayley structure routing can use), the link back arrives on the port of s_j⁻¹.
"""
from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass

import numpy as np

from .errors import ParameterError
from .network import Network
from .spec import REQUIRED, family


def is_prime(n: int) -> bool:
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    f = 3
    while f * f <= n:
        if n % f == 0:
            return False
        f += 2
    return True


def legendre(a: int, p: int) -> int:
    """Legendre symbol (a/p) for an odd prime p: 1, −1 or 0."""
    t = pow(a % p, (p - 1) // 2, p)
    return -1 if t == p - 1 else int(t)


def four_square_solutions(p: int) -> list[tuple[int, int, int, int]]:
    """The p + 1 normalized solutions of a0² + a1² + a2² + a3² = p (Definition 3)."""
    r = math.isqrt(p)
    out = []
    for a in itertools.product(range(-r, r + 1), repeat=4):
        if sum(v * v for v in a) != p:
            continue
        a0, a1 = a[0], a[1]
        if p % 4 == 1:
            ok = a0 > 0 and a0 % 2 == 1
        else:
            ok = (a0 > 0 and a0 % 2 == 0) or (a0 == 0 and a1 > 0)
        if ok:
            out.append(a)
    return out


def _normalize(mats: np.ndarray, q: int, inv: np.ndarray) -> np.ndarray:
    """Scale each (.., 4) matrix so its first nonzero entry is 1."""
    nz = mats != 0
    first = np.argmax(nz, axis=-1)
    lead = np.take_along_axis(mats, first[..., None], axis=-1)
    return (mats * inv[lead]) % q


def _codes(mats: np.ndarray, q: int) -> np.ndarray:
    m = mats.astype(np.int64)
    return ((m[..., 0] * q + m[..., 1]) * q + m[..., 2]) * q + m[..., 3]


@dataclass(frozen=True, eq=False)
class LPSStructure:
    p: int
    q: int
    group: str                  # "PSL" or "PGL"
    elements: np.ndarray        # (n, 4) normalized matrices [a, b, c, d] mod q, router id = row
    generators: np.ndarray      # (p+1, 4) normalized generator matrices; port j multiplies by generators[j]
    inverse_port: np.ndarray    # (p+1,) port k with s_k = s_j^-1
    xy: tuple[int, int]         # the solution of x² + y² + 1 ≡ 0 (mod q)


def lps_order(p: int, q: int) -> int:
    return (3 - legendre(p, q)) * (q ** 3 - q) // 4


def check_lps(p, q) -> tuple[int, int]:
    for name, v in (("p", p), ("q", q)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not is_prime(int(v)) or v == 2:
            raise ParameterError(f"{name}={v!r}: LPS needs p and q distinct odd primes (3, 5, 7, 11, 13, ...)")
    if p == q:
        raise ParameterError(f"q={q!r}: LPS needs p and q distinct odd primes (p={p} given)")
    return int(p), int(q)


def lps(p: int, q: int, endpoints: int | None = None) -> Network:
    """LPS(p, q) as a Network; `endpoints` per router default round((p+1)/3)."""
    from .zoo import default_endpoints

    p, q = check_lps(p, q)
    if q <= 2 * math.sqrt(p):
        warnings.warn(f"LPS(p={p}, q={q}): q <= 2·sqrt(p), so the Ramanujan property is not guaranteed", stacklevel=2)
    leg = legendre(p, q)
    group = "PSL" if leg == 1 else "PGL"
    inv = np.zeros(q, dtype=np.int64)
    inv[1:] = [pow(int(v), q - 2, q) for v in range(1, q)]
    # x^2 + y^2 + 1 = 0 mod q
    sq = {(v * v) % q: v for v in range(q)}
    xy = next((x, sq[(-1 - x * x) % q]) for x in range(q) if (-1 - x * x) % q in sq)
    x, y = xy
    gens = []
    for a0, a1, a2, a3 in four_square_solutions(p):
        gens.append([a0 + a1 * x + a3 * y, -a1 * y + a2 + a3 * x, -a1 * y - a2 + a3 * x, a0 - a1 * x - a3 * y])
    gens = _normalize(np.array(gens, dtype=np.int64) % q, q, inv)
    # group elements in normal form
    squares = np.zeros(q, dtype=bool)
    squares[(np.arange(1, q) ** 2) % q] = True
    # normal forms: (0, 1, c, d) and (1, b, c, d); (0, 0, *, *) are singular
    e = np.arange(q)
    c1, d1 = np.meshgrid(e, e, indexing="ij")
    low = np.stack([np.zeros(q * q, np.int64), np.ones(q * q, np.int64), c1.ravel(), d1.ravel()], 1)
    b2, c2, d2 = np.meshgrid(e, e, e, indexing="ij")
    high = np.stack([np.ones(q ** 3, np.int64), b2.ravel(), c2.ravel(), d2.ravel()], 1)
    cand = np.concatenate([low, high])
    det = (cand[:, 0] * cand[:, 3] - cand[:, 1] * cand[:, 2]) % q
    ok = det != 0
    if group == "PSL":
        ok &= squares[det]
    elements = cand[ok]
    del cand
    codes = _codes(elements, q)          # already sorted (lexicographic product order)
    n = len(elements)
    assert n == lps_order(p, q), (n, lps_order(p, q))
    # neighbours u * s_j
    a, b, c, d = (elements[:, i, None] for i in range(4))
    ga, gb, gc, gd = (gens[None, :, i] for i in range(4))
    prod = np.stack([(a * ga + b * gc) % q, (a * gb + b * gd) % q, (c * ga + d * gc) % q, (c * gb + d * gd) % q], -1)
    nbr = np.searchsorted(codes, _codes(_normalize(prod, q, inv), q))
    K = len(gens)
    # inverse generator pairing: s_j s_k = identity (projectively)
    ident = _codes(_normalize(np.array([1, 0, 0, 1]), q, inv), q)
    ja, jb = np.meshgrid(np.arange(K), np.arange(K), indexing="ij")
    A, B = gens[ja], gens[jb]
    pr = np.stack([(A[..., 0] * B[..., 0] + A[..., 1] * B[..., 2]) % q, (A[..., 0] * B[..., 1] + A[..., 1] * B[..., 3]) % q,
                   (A[..., 2] * B[..., 0] + A[..., 3] * B[..., 2]) % q, (A[..., 2] * B[..., 1] + A[..., 3] * B[..., 3]) % q], -1)
    is_inv = _codes(_normalize(pr, q, inv), q) == ident
    gen_codes = _codes(gens, q)
    simple = (len(np.unique(gen_codes)) == K and not (gen_codes == ident).any() and (is_inv.sum(axis=1) == 1).all())
    ep = default_endpoints(K) if endpoints is None else endpoints
    spec = f"lps:p={p},q={q}"
    name = f"LPS(p={p}, q={q})"
    attrs = {"family": "lps", "p": p, "q": q, "group": group, "legendre": leg}
    if simple:
        inv_port = np.argmax(is_inv, axis=1)
        u = np.repeat(np.arange(n), K)
        j = np.tile(np.arange(K), n)
        v = nbr.ravel()
        k = inv_port[j]
        keep = (u < v) | ((u == v) & (j < k))
        links = np.stack([u[keep], j[keep], v[keep], k[keep]], 1)
        structure = LPSStructure(p, q, group, elements, gens, inv_port, xy)
        return Network.from_links(name, np.full(n, K), links, endpoints=ep, spec=spec, structure=structure, attrs=attrs)
    # degenerate generator set (q too small): multigraph without self-loops
    u = np.repeat(np.arange(n), K)
    v = nbr.ravel()
    keep = u < v
    structure = LPSStructure(p, q, group, elements, gens, np.full(K, -1), xy)
    net = Network.from_edges(name, n, np.stack([u[keep], v[keep]], 1), endpoints=ep, spec=spec,
                             structure=structure, attrs=attrs)
    loops = int((u == v).sum())
    distinct = len(np.unique(gen_codes))
    lo, hi = int(net.degree.min()), int(net.degree.max())
    shape = f"still {K}-regular" if lo == hi == K else f"degrees {lo}..{hi}, not {K}-regular"
    dropped = f", {loops} self-loop port(s) dropped" if loops else ""
    reason = (f"only {distinct} of the {K} generators are distinct modulo q" if distinct < K else
              f"the {K} generators modulo q include the identity or no one-to-one inverse pairing")
    warnings.warn(f"LPS(p={p}, q={q}): {reason}: built as a multigraph with parallel links{dropped}, {shape}",
                  stacklevel=2)
    return net


@family("lps", "SpectralFly LPS(p, q) Ramanujan graph (p, q distinct odd primes; (p+1)-regular)",
        p=(int, REQUIRED), q=(int, REQUIRED))
def _lps(**kw):
    return lps(kw["p"], kw["q"])
