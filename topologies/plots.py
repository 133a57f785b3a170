"""Plots of topology families (matplotlib, Agg backend; PNG or SVG by suffix)."""
from __future__ import annotations

from .polarstar import design_space, moore_bound


def plot_design_space(radixes, path) -> None:
    """Order of every feasible PolarStar vs radix (Fig. 7) and the largest's Moore efficiency (Fig. 1)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    best = []
    for s, color in (("iq", "tab:blue"), ("paley", "tab:orange")):
        xs, ys = [], []
        for r in radixes:
            for c in design_space(r, (s,)):
                xs.append(r)
                ys.append(c.routers)
        ax1.scatter(xs, ys, s=6, color=color, label=f"PolarStar-{s.upper() if s == 'iq' else 'Paley'}")
    for r in radixes:
        ds = design_space(r)
        if ds:
            best.append((r, ds[0]))
    ax1.plot([r for r, _ in best], [moore_bound(r, 3) for r, _ in best], "k--", lw=1, label="Moore bound (D=3)")
    ax1.set_yscale("log")
    ax1.set_xlabel("network radix")
    ax1.set_ylabel("routers")
    ax1.set_title("Feasible PolarStar configurations")
    ax1.legend()
    ax2.plot([r for r, _ in best], [c.moore_efficiency for _, c in best], "o-", ms=3)
    ax2.axhline(8 / 27, color="gray", ls=":", label="8/27 (asymptote)")
    ax2.set_xlabel("network radix")
    ax2.set_ylabel("largest order / Moore bound")
    ax2.set_title("Moore-bound efficiency of the largest PolarStar")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
