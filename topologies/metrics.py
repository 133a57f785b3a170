"""Structural metrics of a `Network`: distances, spectrum, bisection, Moore efficiency, resilience.

* Distances (diameter, mean distance, histogram; h-ASPL / h-diameter over endpoints) come from
  the bit-parallel BFS in `distances.py`.
* Spectrum (SpectralFly paper §II, §IV-c): λ = the largest adjacency eigenvalue magnitude other
  than the trivial ±k (we drop the Perron value once, and its negative once when the graph is
  bipartite), the Ramanujan check λ ≤ 2√(k−1) for k-regular graphs, and the normalized Laplacian
  gap μ1 = second smallest eigenvalue of I − D^{-1/2} A D^{-1/2} (= (k − λ2)/k for k-regular).
  Dense `eigvalsh` up to DENSE_LIMIT routers, sparse `eigsh` (Lanczos) above.
* Bisection (PolarStar paper §11.1, SpectralFly §IV-d): fraction of links cut by a balanced
  METIS bisection (pymetis), best over several seeds. Indirect networks (routers without
  endpoints) are balanced by endpoints and normalized by the links incident to routers with
  endpoints, as in the PolarStar paper's Fig. 12.
* Moore bound 1 + d·Σ_{i<D}(d−1)^i and efficiency n / bound for the radix and diameter.
* Link-failure resilience (PolarStar §11.2, SpectralFly §IV-A): remove links in a random order;
  the disconnection ratio (fraction removed when the network first disconnects, found by binary
  search on connectivity, which is monotone along the order) over N trials, its median, and
  diameter / mean distance at each step of the median trial (Fig. 14).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .distances import distance_stats, host_distance_stats
from .errors import ParameterError, check_seed
from .network import Network
from .polarstar import moore_bound

DENSE_LIMIT = 4000


# ---- graph helpers -------------------------------------------------------------------------------

def simple_adjacency(net: Network):
    """Symmetric float64 scipy CSR adjacency; parallel links are summed into one entry (multiplicity)."""
    A = net.adjacency().astype(np.float64)
    A.sum_duplicates()
    return A


def is_connected(net: Network) -> bool:
    from scipy.sparse.csgraph import connected_components

    return connected_components(net.adjacency(), directed=False)[0] == 1


def is_bipartite(A) -> bool:
    """2-colourable: BFS depth parity from one root per component must differ across every link."""
    from scipy.sparse.csgraph import breadth_first_order, connected_components

    n = A.shape[0]
    ncomp, lab = connected_components(A, directed=False)
    depth = np.full(n, -1, dtype=np.int64)
    for c in range(ncomp):
        root = int(np.argmax(lab == c))
        order, pred = breadth_first_order(A, root, directed=False, return_predecessors=True)
        depth[root] = 0
        for v in order[1:]:                # BFS order: the parent is already numbered
            depth[v] = depth[pred[v]] + 1
    coo = A.tocoo()
    return bool(((depth[coo.row] - depth[coo.col]) % 2 == 1).all())


# ---- spectrum ------------------------------------------------------------------------------------

@dataclass
class Spectrum:
    lam: float                 # λ: largest non-trivial adjacency eigenvalue magnitude
    lambda2: float             # second largest adjacency eigenvalue (signed)
    mu1: float                 # normalized spectral gap 1 − max non-trivial |ν| (SpectralFly Table I)
    laplacian_mu1: float       # second smallest eigenvalue of the normalized Laplacian, 1 − ν2
    regular: bool
    degree: int                # k (max degree)
    bipartite: bool
    method: str

    @property
    def ramanujan_bound(self) -> float:
        return 2 * math.sqrt(self.degree - 1)

    @property
    def ramanujan(self) -> bool | None:
        """λ ≤ 2√(k−1) (only defined for k-regular graphs)."""
        return bool(self.lam <= self.ramanujan_bound + 1e-9) if self.regular else None

    def as_dict(self) -> dict:
        return {"lambda": self.lam, "lambda2": self.lambda2, "ramanujan": self.ramanujan,
                "ramanujan_bound": self.ramanujan_bound, "mu1": self.mu1, "laplacian_mu1": self.laplacian_mu1,
                "regular": self.regular, "bipartite": self.bipartite, "spectrum_method": self.method}


def _extremes(M, n: int, dense: bool, v0) -> np.ndarray:
    """The two largest and two smallest eigenvalues of the symmetric matrix M, sorted."""
    if dense:
        import scipy.linalg as la

        D = M.toarray()
        top = la.eigh(D, eigvals_only=True, subset_by_index=[n - 2, n - 1])
        bot = la.eigh(D, eigvals_only=True, subset_by_index=[0, 1])
    else:
        from scipy.sparse.linalg import eigsh

        top = eigsh(M, k=2, which="LA", v0=v0, return_eigenvectors=False, tol=1e-10)
        bot = eigsh(M, k=2, which="SA", v0=v0, return_eigenvectors=False, tol=1e-10)
    return np.sort(np.concatenate([bot, top]))


def _nontrivial_magnitude(ev: np.ndarray, bipartite: bool) -> float:
    rest = ev[:-1]                 # drop the Perron eigenvalue once
    if bipartite:
        rest = rest[1:]            # and its negative once
    return float(np.abs(rest).max())


def spectrum(net: Network, dense_limit: int = DENSE_LIMIT) -> Spectrum:
    """Adjacency λ, λ2, the Ramanujan check and the normalized gaps (dense ≤ dense_limit, else Lanczos)."""
    import scipy.sparse as sp

    n = net.num_routers
    if n < 4:
        raise ParameterError(f"network: spectrum needs at least 4 routers ({n} given)")
    A = simple_adjacency(net)
    deg = np.asarray(A.sum(axis=1)).ravel()
    if (deg == 0).any():
        raise ParameterError("network: spectrum needs every router to have a link")
    k = int(deg.max())
    regular = bool((deg == deg[0]).all())
    bip = is_bipartite(A)
    dense = n <= dense_limit
    v0 = np.random.default_rng(0).standard_normal(n)
    ev = _extremes(A, n, dense, v0)
    lam = _nontrivial_magnitude(ev, bip)
    if regular:
        nev = ev / k
    else:
        dinv = sp.diags(1 / np.sqrt(deg))
        nev = _extremes((dinv @ A @ dinv).tocsr(), n, dense, v0)
    mu1 = 1 - _nontrivial_magnitude(nev, bip)
    return Spectrum(lam, float(ev[-2]), float(mu1), float(1 - nev[-2]), regular, k, bip,
                    "dense" if dense else "sparse")


# ---- bisection ------------------------------------------------------------------------------------

@dataclass
class Bisection:
    cut: int                    # links crossing the best bisection
    links: int                  # normalizing link count
    parts: np.ndarray           # (n,) 0/1
    seeds: int
    balance_by: str             # "routers" or "endpoints"

    @property
    def fraction(self) -> float:
        return self.cut / self.links if self.links else 0.0

    def as_dict(self) -> dict:
        return {"bisection_cut": self.cut, "bisection_links": self.links, "bisection_fraction": self.fraction,
                "bisection_seeds": self.seeds, "bisection_balance": self.balance_by,
                "bisection_sizes": [int((self.parts == 0).sum()), int((self.parts == 1).sum())]}


def cut_size(net: Network, parts: np.ndarray) -> int:
    L = net.links()
    return int((parts[L[:, 0]] != parts[L[:, 2]]).sum())


def bisection(net: Network, seeds: int = 8) -> Bisection:
    """Best balanced METIS bisection over `seeds` random seeds (pymetis)."""
    import pymetis

    if not isinstance(seeds, int) or seeds < 1:
        raise ParameterError(f"seeds={seeds!r}: must be an integer >= 1")
    n = net.num_routers
    if n < 2:
        raise ParameterError("network: bisection needs at least 2 routers")
    A = simple_adjacency(net).tocsr()
    A.sum_duplicates()
    xadj = A.indptr.astype(np.int64)
    adjncy = A.indices.astype(np.int64)
    ew = A.data.astype(np.int64)
    multi = bool((ew > 1).any())
    indirect = bool((net.endpoints == 0).any() and net.num_endpoints > 0)
    vweights = net.endpoints.astype(np.int64) if indirect else None
    best = None
    for seed in range(seeds):
        opts = pymetis.Options(seed=seed, ufactor=1, ncuts=1)
        _, parts = pymetis.part_graph(2, pymetis.CSRAdjacency(xadj, adjncy), eweights=ew if multi else None,
                                      vweights=vweights, options=opts)
        parts = np.asarray(parts, dtype=np.int8)
        c = cut_size(net, parts)
        if best is None or c < best[0]:
            best = (c, parts)
    if indirect:
        L = net.links()
        has = net.endpoints > 0
        norm = int((has[L[:, 0]] | has[L[:, 2]]).sum())
    else:
        norm = net.num_links
    return Bisection(best[0], norm, best[1], seeds, "endpoints" if indirect else "routers")


# ---- Moore bound ---------------------------------------------------------------------------------------

def moore_efficiency(net: Network, diameter: int | None = None) -> dict:
    if diameter is None:
        diameter = distance_stats(net).diameter
    if diameter is None:
        return {"moore_bound": None, "moore_efficiency": None}
    mb = moore_bound(net.radix, diameter)
    return {"moore_bound": mb, "moore_efficiency": net.num_routers / mb}


# ---- resilience ------------------------------------------------------------------------------------------

def _subnet(net: Network, links: np.ndarray) -> Network:
    """Network with only the given links (ports kept, the others left unconnected)."""
    peer = np.full(len(net.peer), -1, dtype=net.peer.dtype)
    ga = net.offsets[links[:, 0]] + links[:, 1]
    gb = net.offsets[links[:, 2]] + links[:, 3]
    peer[ga] = gb
    peer[gb] = ga
    return Network(net.name, net.offsets, peer, net.endpoints, spec=net.spec)


def _connected_with(n: int, ends: np.ndarray, hosts: np.ndarray | None) -> bool:
    """Are the routers (the routers with endpoints, if given) in one component of these links?"""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    A = sp.coo_matrix((np.ones(len(ends)), (ends[:, 0], ends[:, 1])), shape=(n, n))
    _, lab = connected_components(A, directed=False)
    if hosts is None:
        return bool((lab == lab[0]).all())
    l = lab[hosts]
    return bool((l == l[0]).all())


def disconnection_point(net: Network, order: np.ndarray, hosts=None) -> int:
    """Largest i such that removing links order[:i] keeps the network connected."""
    L = net.links()
    ends = L[:, [0, 2]]
    n = net.num_routers
    if not _connected_with(n, ends, hosts):
        return -1
    lo, hi = 0, len(order)        # connected after removing `lo` links, disconnected after `hi`
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _connected_with(n, ends[order[mid:]], hosts):
            lo = mid
        else:
            hi = mid
    return lo


@dataclass
class Resilience:
    trials: int
    step: float
    ratios: np.ndarray             # per-trial disconnection ratio (fraction of links removed that disconnects)
    curves: list                   # per-trial list of (failed_fraction, diameter, mean_distance)
    median_trial: int

    @property
    def median_ratio(self) -> float:
        return float(np.median(self.ratios))

    def as_dict(self) -> dict:
        curve = self.curves[self.median_trial]
        return {"trials": self.trials, "step": self.step, "disconnection_ratio_median": self.median_ratio,
                "disconnection_ratio_min": float(self.ratios.min()), "disconnection_ratio_max": float(self.ratios.max()),
                "disconnection_ratios": [round(float(r), 6) for r in self.ratios],
                "median_trial": self.median_trial,
                "curve": [{"failed_fraction": f, "diameter": d, "mean_distance": m} for f, d, m in curve]}


def resilience(net: Network, step: float = 0.05, trials: int = 20, seed: int = 0, curves: str = "median",
               progress=None) -> Resilience:
    """Random link failures until disconnection (PolarStar paper §11.2: 100 trials, median ratio).

    Distances are measured between routers that have endpoints (all routers for direct networks),
    as the paper does for Fat-tree and Megafly. `curves`: "median" computes the diameter/mean
    curve of the median trial only, "all" of every trial.
    """
    if not (0 < step < 1):
        raise ParameterError(f"fail-links={step!r}: the failure step must be a fraction in (0, 1), e.g. 0.05")
    if not isinstance(trials, int) or trials < 1:
        raise ParameterError(f"trials={trials!r}: must be an integer >= 1")
    L = net.links()
    m = len(L)
    if m == 0:
        raise ParameterError("network: has no links")
    hosts = np.nonzero(net.endpoints > 0)[0] if (net.endpoints == 0).any() and net.num_endpoints else None
    rng = np.random.default_rng(check_seed(seed))
    orders, ratios = [], []
    for t in range(trials):
        order = rng.permutation(m)
        k = disconnection_point(net, order, hosts)
        orders.append(order)
        ratios.append((k + 1) / m)
        if progress:
            progress(0.5 / trials)
    ratios = np.array(ratios)
    med = float(np.median(ratios))
    median_trial = int(np.argmin(np.abs(ratios - med)))
    want = range(trials) if curves == "all" else [median_trial]
    out = [[] for _ in range(trials)]
    for t in want:
        order = orders[t]
        limit = ratios[t] * m - 1          # links removable while still connected
        f = 0.0
        i = 0
        while True:
            removed = int(round(f * m))
            if removed > limit:
                break
            sub = _subnet(net, L[np.sort(order[removed:])])
            if hosts is None:
                st = distance_stats(sub)
                out[t].append((round(f, 6), st.diameter, st.mean_distance))
            else:
                hs = host_distance_stats(sub, router_pairs=True)
                out[t].append((round(f, 6), hs["router_diameter"], hs["router_mean_distance"]))
            i += 1
            f = i * step
        if progress:
            progress(0.5 / len(want))
    return Resilience(trials, step, ratios, out, median_trial)


def plot_resilience(res: Resilience, path: str, title: str = "") -> None:
    """Diameter and mean path length vs failed-link fraction, like PolarStar Fig. 14."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for t, curve in enumerate(res.curves):
        if not curve:
            continue
        f = [100 * c[0] for c in curve]
        style = dict(color="tab:blue", lw=2) if t == res.median_trial else dict(color="gray", lw=0.5, alpha=0.5)
        ax1.plot(f, [c[1] for c in curve], **style)
        ax2.plot(f, [c[2] for c in curve], **style)
    for ax in (ax1, ax2):
        ax.axvline(100 * res.median_ratio, color="tab:red", ls=":", label=f"median disconnection {100 * res.median_ratio:.1f}%")
        ax.set_xlabel("failed links (%)")
        ax.legend(loc="upper left")
    from matplotlib.ticker import MaxNLocator

    ax1.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax1.set_ylabel("diameter")
    ax2.set_ylabel("average shortest path length")
    fig.suptitle(title or "Link-failure resilience")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# ---- everything at once ----------------------------------------------------------------------------------

def metrics(net: Network, bisection_seeds: int = 8, distances: bool = True, spectral: bool = True) -> dict:
    """The structural metrics as one dict (keys of `pstar metrics --json`)."""
    d = {"name": net.name, "spec": net.spec, "routers": net.num_routers, "links": net.num_links,
         "radix": net.radix, "min_degree": int(net.degree.min()), "endpoints": net.num_endpoints}
    diameter = None
    if distances:
        st = distance_stats(net)
        d.update(st.as_dict())
        diameter = st.diameter
        if net.num_endpoints > 1:
            hs = host_distance_stats(net)
            d["h_aspl"], d["h_diameter"] = hs["h_aspl"], hs["h_diameter"]
    if spectral:
        d.update(spectrum(net).as_dict())
    d.update(bisection(net, bisection_seeds).as_dict())
    if diameter is not None:
        d.update(moore_efficiency(net, diameter))
    else:
        d.update({"moore_bound": None, "moore_efficiency": None})
    return d
