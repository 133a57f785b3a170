"""Baseline topology families the papers compare PolarStar and SpectralFly against.

Each builder validates its parameters up front (ParameterError naming the parameter and the
allowed values), returns a CSR `Network` and registers a SPEC family:

* `slimfly:q=..`         Slim Fly = MMS graph (McKay–Miller–Širáň, geometric form of Hafner [SpectralFly
                         ref. 29]); 2q² routers, radix (3q − δ)/2 with q = 4w + δ, diameter 2.
* `dragonfly:a=..`       canonical Dragonfly DF(a) of SpectralFly §IV: a + 1 complete groups of a
                         routers, one global link per router, radix a.
  `dragonfly:a=..,h=..[,p=..]`  balanced Dragonfly (Kim et al.): g = a·h + 1 groups, h global links
                         per router, radix a − 1 + h, p endpoints (default h).
                         Global-link arrangement ("consecutive"): group G numbers its a·h global
                         ports k = r·h + j (router r, its j-th global port) and port k goes to group
                         (G + k + 1) mod g, where it lands on port g − 2 − k. For h = 1 (and
                         g = a + 1) this is the canonical DF(a).
* `hyperx:dims=9x9x8`    HyperX = Hamming graph: routers are coordinate tuples, adjacent when they
                         differ in exactly one coordinate.
* `bundlefly:p=..,s=..`  Bundlefly BF(p, s) = MMS(s) * Paley(p) star product with f(a) = g·a for a
                         primitive g (Property R1, PolarStar paper Theorem 2): 2ps² routers,
                         radix (p − 1)/2 + (3s − δ)/2, diameter ≤ 3.
* `fattree:k=..`         3-level k-ary fat-tree (Al-Fares): k pods of k/2 edge + k/2 aggregation
                         routers, (k/2)² core routers; only edge routers have endpoints (k/2 each),
                         the others have endpoints = 0 (indirect network).
* `jellyfish:n=..,d=..,seed=..`  random d-regular graph (Jellyfish), reproducible from the seed.
* `torus:dims=..`        k-ary n-cube with wrap-around (a dimension of size 2 gives one link).

Endpoints per router default to round(radix / 3) for the direct families (PolarStar paper §9.1:
p is a third of the network radix), which reproduces its Table 3 (HyperX 9x9x8 -> 8).
Keys named `p` inside a SPEC (dragonfly, bundlefly) are family parameters; the CLI's `-p` still
overrides the endpoints afterwards.
"""
from __future__ import annotations

import itertools

import numpy as np

from .errors import ParameterError
from .field import field, is_prime_power
from .network import Network
from .spec import REQUIRED, family, parse_dims
from .star_product import star_product
from .supernodes import paley, paley_orders_ok


def default_endpoints(radix: int) -> int:
    """round(radix / 3), the direct-network concentration used in the PolarStar paper (§9.1)."""
    return max(1, int(np.floor(radix / 3 + 0.5)))


def _int(name: str, value, lo: int, allowed: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise ParameterError(f"{name}={value!r}: {allowed}")
    return int(value)


# ---- Slim Fly / MMS ------------------------------------------------------------------------------

def mms_delta(q: int) -> int:
    """δ ∈ {-1, 0, 1} with q = 4w + δ."""
    r = q % 4
    return {1: 1, 0: 0, 3: -1}.get(r, None)


def mms_generator_sets(q: int) -> tuple[np.ndarray, np.ndarray]:
    """The sets X and X' of GF(q) elements (as integers) of the MMS construction (Hafner 2004)."""
    F = field(q)
    xi = np.concatenate([F.antilog, F.antilog])        # xi[i] = ξ^i for 0 <= i < 2(q-1)
    d = mms_delta(q)
    w = (q - d) // 4
    if d == 1:
        X = [xi[i] for i in range(0, q - 1, 2)]
        Xp = [xi[i] for i in range(1, q - 1, 2)]
    elif d == 0:
        X = [xi[i] for i in range(0, q - 1, 2)]
        Xp = [xi[i] for i in range(1, q, 2)]
    else:
        X = [xi[i] for i in range(0, 2 * w - 1, 2)] + [xi[i] for i in range(2 * w - 1, 4 * w - 2, 2)]
        Xp = [xi[i] for i in range(1, 2 * w, 2)] + [xi[i] for i in range(2 * w, 4 * w - 1, 2)]
    return np.array(sorted(set(int(v) for v in X))), np.array(sorted(set(int(v) for v in Xp)))


def mms_slots(q: int) -> np.ndarray:
    """(2q², K) neighbour table of the MMS graph, K = (3q − δ)/2.

    Vertex (0, x, y) has id x·q + y, vertex (1, m, c) has id q² + m·q + c.
    (0,x,y) ~ (0,x,y') iff y − y' ∈ X;  (1,m,c) ~ (1,m,c') iff c − c' ∈ X';  (0,x,y) ~ (1,m,c) iff y = m·x + c.
    """
    F = field(q)
    X, Xp = mms_generator_sets(q)
    e = np.arange(q)
    # side 0: (x, y) -> (x, y + t) for t in X, then (1, m, y - m x) for every m
    x0, y0 = np.divmod(np.arange(q * q), q)
    local0 = x0[:, None] * q + F.add[y0[:, None], X[None, :]]
    c = F.sub(y0[:, None], F.mul[e[None, :], x0[:, None]])
    cross0 = q * q + e[None, :] * q + c
    # side 1: (m, c) -> (m, c + t) for t in X', then (0, x, m x + c) for every x
    m1, c1 = np.divmod(np.arange(q * q), q)
    local1 = q * q + m1[:, None] * q + F.add[c1[:, None], Xp[None, :]]
    y = F.add[F.mul[m1[:, None], e[None, :]], c1[:, None]]
    cross1 = e[None, :] * q + y
    if len(X) != len(Xp):
        raise AssertionError("MMS sets must have equal size")
    return np.concatenate([np.concatenate([local0, cross0], axis=1),
                           np.concatenate([local1, cross1], axis=1)]).astype(np.int64)


def _check_mms_q(q, name="q"):
    if isinstance(q, bool) or not isinstance(q, (int, np.integer)) or not is_prime_power(int(q)) or q < 3 or q % 4 == 2:
        raise ParameterError(f"{name}={q!r}: the MMS graph needs a prime power q >= 3, q = 4w + δ with δ ∈ {{-1, 0, 1}} "
                             f"(3, 4, 5, 7, 8, 9, 11, 13, ...)")
    return int(q)


def slimfly(q: int, p: int | None = None) -> Network:
    """Slim Fly SF(q): the MMS graph on 2q² routers, radix (3q − δ)/2, diameter 2."""
    q = _check_mms_q(q)
    slots = mms_slots(q)
    radix = slots.shape[1]
    n = len(slots)
    u = np.repeat(np.arange(n), radix)
    v = slots.ravel()
    keep = u < v
    ep = default_endpoints(radix) if p is None else p
    return Network.from_edges(f"SlimFly(q={q})", n, np.stack([u[keep], v[keep]], 1), endpoints=ep,
                              spec=f"slimfly:q={q}", attrs={"family": "slimfly", "q": q, "delta": mms_delta(q)})


# ---- Dragonfly -------------------------------------------------------------------------------------

def dragonfly(a: int, h: int | None = None, p: int | None = None) -> Network:
    """Dragonfly: canonical DF(a) when h is None, else balanced (a, h) with g = a·h + 1 groups.

    Router id = group·a + r. Ports 0..a−2: the other routers of the group in increasing order;
    ports a−1 .. a−2+h: global ports j = 0..h−1 (arrangement in the module docstring).
    """
    a = _int("a", a, 2, "routers per group must be an integer >= 2")
    canonical = h is None
    h = 1 if canonical else _int("h", h, 1, "global links per router must be an integer >= 1")
    g = a * h + 1
    n = g * a
    links = []
    # local links: router r1 < r2 of group G; r2 is port r2 - 1 of r1, r1 is port r1 of r2
    r1, r2 = np.triu_indices(a, 1)
    base = np.repeat(np.arange(g) * a, len(r1))
    r1, r2 = np.tile(r1, g), np.tile(r2, g)
    loc = np.stack([base + r1, r2 - 1, base + r2, r1], axis=1)
    links.append(loc)
    # global links: group G port k -> group (G + k + 1) mod g, port g - 2 - k; keep each once
    Gs = np.repeat(np.arange(g), a * h)
    k = np.tile(np.arange(a * h), g)
    G2 = (Gs + k + 1) % g
    k2 = g - 2 - k
    keep = (Gs < G2)
    ga, ka, gb, kb = Gs[keep], k[keep], G2[keep], k2[keep]
    glob = np.stack([ga * a + ka // h, a - 1 + ka % h, gb * a + kb // h, a - 1 + kb % h], axis=1)
    links.append(glob)
    radix = a - 1 + h
    if p is None:
        p = default_endpoints(radix) if canonical else h
    p = _int("p", p, 0, "endpoints per router must be an integer >= 0")
    ports = np.full(n, radix, dtype=np.int64)
    spec = f"dragonfly:a={a}" if canonical else f"dragonfly:a={a},h={h},p={p}"
    name = f"Dragonfly(a={a})" if canonical else f"Dragonfly(a={a}, h={h}, g={g})"
    return Network.from_links(name, ports, np.concatenate(links), endpoints=p, spec=spec,
                              attrs={"family": "dragonfly", "a": a, "h": h, "g": g, "canonical": canonical,
                                     "arrangement": "consecutive"})


# ---- HyperX / Hamming and torus -------------------------------------------------------------------

def _mixed_radix(dims):
    n = int(np.prod(dims))
    coords = np.array(list(itertools.product(*[range(d) for d in dims])), dtype=np.int64).reshape(n, len(dims))
    strides = np.array([int(np.prod(dims[i + 1:])) for i in range(len(dims))], dtype=np.int64)
    return n, coords, strides


def hyperx(dims, p: int | None = None) -> Network:
    """HyperX / Hamming graph H(dims): routers adjacent iff they differ in exactly one coordinate."""
    dims = parse_dims(dims) if isinstance(dims, str) else tuple(int(d) for d in dims)
    if not dims or min(dims) < 2:
        raise ParameterError(f"dims={dims!r}: every size must be >= 2, e.g. 9x9x8")
    n, coords, strides = _mixed_radix(dims)
    edges = []
    ids = np.arange(n)
    for i, d in enumerate(dims):
        for delta in range(1, d):
            other = ids + (((coords[:, i] + delta) % d) - coords[:, i]) * strides[i]
            keep = ids < other
            edges.append(np.stack([ids[keep], other[keep]], 1))
    radix = sum(d - 1 for d in dims)
    text = "x".join(map(str, dims))
    return Network.from_edges(f"HyperX({text})", n, np.concatenate(edges),
                              endpoints=default_endpoints(radix) if p is None else p,
                              spec=f"hyperx:dims={text}", attrs={"family": "hyperx", "dims": list(dims)})


def torus(dims, p: int | None = None) -> Network:
    """Torus (k-ary n-cube): ±1 in each dimension with wrap-around; size-2 dimensions give one link."""
    dims = parse_dims(dims) if isinstance(dims, str) else tuple(int(d) for d in dims)
    if not dims or min(dims) < 2:
        raise ParameterError(f"dims={dims!r}: every size must be >= 2, e.g. 8x8x8")
    n, coords, strides = _mixed_radix(dims)
    ids = np.arange(n)
    edges = []
    for i, d in enumerate(dims):
        other = ids + (((coords[:, i] + 1) % d) - coords[:, i]) * strides[i]
        if d == 2:
            keep = ids < other
            edges.append(np.stack([ids[keep], other[keep]], 1))
        else:
            edges.append(np.stack([ids, other], 1))
    radix = sum(1 if d == 2 else 2 for d in dims)
    text = "x".join(map(str, dims))
    return Network.from_edges(f"Torus({text})", n, np.concatenate(edges),
                              endpoints=default_endpoints(radix) if p is None else p,
                              spec=f"torus:dims={text}", attrs={"family": "torus", "dims": list(dims)})


# ---- Bundlefly --------------------------------------------------------------------------------------

def bundlefly(p: int, s: int, endpoints: int | None = None) -> Network:
    """Bundlefly BF(p, s) = MMS(s) * Paley(p): 2ps² routers (Lei et al. 2020; SpectralFly §IV)."""
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not paley_orders_ok(int(p)):
        raise ParameterError(f"p={p!r}: Bundlefly's Paley supernode needs a prime power p ≡ 1 (mod 4) (5, 9, 13, 17, 25, 29, ...)")
    s = _check_mms_q(s, "s")
    sn = paley(int(p))
    slots = mms_slots(s)
    radix = sn.degree + slots.shape[1]
    ep = default_endpoints(radix) if endpoints is None else endpoints
    return star_product(f"Bundlefly(p={p}, s={s})", slots, sn, endpoints=ep, spec=f"bundlefly:p={p},s={s}",
                        structure={"family": "bundlefly", "p": int(p), "s": s})


# ---- Fat-tree ----------------------------------------------------------------------------------------

def fattree(k: int) -> Network:
    """3-level k-ary fat-tree: ids edge (pod·k/2 + i), then aggregation, then core routers.

    Edge router e of pod P: ports 0..k/2−1 up to the aggregation routers of its pod.
    Aggregation router j of pod P: ports 0..k/2−1 down to the edge routers, k/2..k−1 up to core
    routers j·k/2 + c. Core router j·k/2 + c: port P to pod P's aggregation router j.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2 or k % 2:
        raise ParameterError(f"k={k!r}: the fat-tree needs an even k >= 2 (2, 4, 6, ...)")
    k = int(k)
    h = k // 2
    n_edge = k * h
    n_core = h * h
    edge = lambda P, i: P * h + i                      # noqa: E731
    agg = lambda P, j: n_edge + P * h + j              # noqa: E731
    core = lambda j, c: 2 * n_edge + j * h + c         # noqa: E731
    links = []
    for P in range(k):
        for i in range(h):
            for j in range(h):
                links.append((edge(P, i), j, agg(P, j), i))
        for j in range(h):
            for c in range(h):
                links.append((agg(P, j), h + c, core(j, c), P))
    n = 2 * n_edge + n_core
    ports = np.array([h] * n_edge + [k] * n_edge + [k] * n_core)
    endpoints = np.array([h] * n_edge + [0] * (n_edge + n_core), dtype=np.int32)
    return Network.from_links(f"FatTree(k={k})", ports, np.array(links), endpoints=endpoints, spec=f"fattree:k={k}",
                              attrs={"family": "fattree", "k": k, "indirect": True,
                                     "levels": {"edge": [0, n_edge], "aggregation": [n_edge, 2 * n_edge],
                                                "core": [2 * n_edge, n]}})


# ---- Jellyfish ------------------------------------------------------------------------------------------

def jellyfish(n: int, d: int, seed: int = 0, p: int | None = None) -> Network:
    """Jellyfish: a uniformly random simple d-regular graph on n routers (networkx pairing model)."""
    n = _int("n", n, 2, "routers must be an integer >= 2")
    d = _int("d", d, 1, "degree must be an integer >= 1")
    if d >= n or (n * d) % 2:
        raise ParameterError(f"d={d}: a d-regular graph on n={n} routers needs d < n and n·d even")
    import networkx as nx

    g = nx.random_regular_graph(d, n, seed=int(seed))
    edges = np.array(sorted(tuple(sorted(e)) for e in g.edges()), dtype=np.int64)
    return Network.from_edges(f"Jellyfish(n={n}, d={d}, seed={seed})", n, edges,
                              endpoints=default_endpoints(d) if p is None else p,
                              spec=f"jellyfish:n={n},d={d},seed={seed}", attrs={"family": "jellyfish", "seed": int(seed)})


# ---- SPEC registrations -----------------------------------------------------------------------------------

@family("slimfly", "Slim Fly: MMS graph on 2q² routers (q a prime power, q ≢ 2 mod 4)", q=(int, REQUIRED))
def _slimfly(q, p=None):
    return slimfly(q, p)


@family("dragonfly", "Dragonfly: canonical DF(a) (a+1 groups of a), or balanced with h (g = a·h+1 groups) and p",
        a=(int, REQUIRED), h=(int, None), p=(int, None))
def _dragonfly(**kw):
    return dragonfly(kw["a"], kw["h"], kw["p"])


@family("hyperx", "HyperX / Hamming graph over dims, e.g. 9x9x8", dims=(str, REQUIRED))
def _hyperx(dims, p=None):
    return hyperx(dims, p)


@family("bundlefly", "Bundlefly BF(p, s) = MMS(s) * Paley(p), 2ps² routers", p=(int, REQUIRED), s=(int, REQUIRED))
def _bundlefly(**kw):
    return bundlefly(kw["p"], kw["s"])


@family("fattree", "3-level k-ary fat-tree (indirect: only edge routers have endpoints)", k=(int, REQUIRED))
def _fattree(k):
    return fattree(k)


@family("jellyfish", "Jellyfish: random d-regular graph on n routers", n=(int, REQUIRED), d=(int, REQUIRED),
        seed=(int, 0))
def _jellyfish(n, d, seed, p=None):
    return jellyfish(n, d, seed, p)


@family("torus", "torus (k-ary n-cube) over dims, e.g. 8x8x8", dims=(str, REQUIRED))
def _torus(dims, p=None):
    return torus(dims, p)
