"""Experiments on the model: one load point (warm-up, measurement window, drain), load sweeps,
saturation search, and latency–throughput plots (PolarStar paper Fig. 9 style).

Measurement convention (as BookSim): packets created during the measurement window are the
measured ones; latency = tail arrival at the destination endpoint − creation cycle; accepted
throughput = flits ejected during the window / (injecting endpoints × window cycles). After the
window, injection stops and the network drains; `lost` counts created flits never delivered
(0 unless the run was cut short by the drain limit).
"""
from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from routing_logic.deadlock import assert_deadlock_free
from routing_logic.registry import make_routing
from topologies.errors import ParameterError
from topologies.network import Network

from .netcache import cached_routing
from .network_sim import GEN_DRAWS, MODES, NetworkSim, check_memory, uses_arithmetic
from contract.params import VC_POLICY, RouterParams

CDG_CHECK_LIMIT = 300   # routers: below this a CDG check admits VC counts under the proven bound


# routings built in this process for the last few networks: the BFS tables are built once per
# network and routing, and shared by the runs and sweep points that use them (only the VCs
# differ); bounded, since a routing holds its network and tables of n² entries
_ROUTINGS: "OrderedDict[int, tuple[Network, dict]]" = OrderedDict()
ROUTING_MEMO_NETWORKS = 2


def _routing(net: Network, routing: str, vcs: int, vc_policy: str, depth: int | None):
    """make_routing(routing, net, vcs=vcs, vc_policy=vc_policy) (+ buffer_depth for polarized),
    not deadlock-checked, built once per (network, routing, policy, depth) in this process."""
    depth = depth if routing == "polarized" else None
    entry = _ROUTINGS.get(id(net))
    if entry is None or entry[0] is not net:
        entry = _ROUTINGS[id(net)] = (net, {})
        while len(_ROUTINGS) > ROUTING_MEMO_NETWORKS:
            _ROUTINGS.popitem(last=False)
    _ROUTINGS.move_to_end(id(net))
    memo = entry[1]
    key = (routing, vc_policy, depth)
    base = memo.get(key)
    if base is None:
        kw = {"buffer_depth": depth} if depth is not None else {}
        base = memo[key] = cached_routing(net, (routing, vc_policy, 1, depth), lambda: make_routing(
            routing, net, check_deadlock=False, vc_policy=vc_policy, vcs=1, **kw))    # V set below
    if base.num_vcs == vcs:
        return base
    return base.with_vcs(vcs)


def build_routing(net: Network, routing: str, params: RouterParams, vcs_given: bool = True,
                  vc_policy: str = VC_POLICY.default):
    """routing_logic's routing with the run's VCs and VC policy (routing_logic.base.VC_POLICIES);
    refuses VC counts that are not deadlock-free."""
    if routing not in MODES:
        raise ParameterError(f"routing={routing!r}: unknown; allowed: {', '.join(MODES)}")
    r = _routing(net, routing, params.vcs, vc_policy, params.depth)
    need = r.default_vcs()
    if params.vcs < need:
        if net.num_routers > CDG_CHECK_LIMIT:
            raise ParameterError(f"vcs={params.vcs}: routing {routing} needs {need} {vc_policy[:-1]}-indexed VCs on this network "
                                 f"(fewer only after a channel-dependency check, run up to {CDG_CHECK_LIMIT} routers)")
        assert_deadlock_free(r)
    return r


def default_vcs(net: Network, routing: str, vc_policy: str = VC_POLICY.default, depth: int | None = None) -> int:
    """4 VCs as in the paper's setup, or more when the routing needs them for deadlock freedom
    (`depth`: polarized's buffer depth, so that the routing built here is the run's)."""
    if routing not in MODES:
        raise ParameterError(f"routing={routing!r}: unknown; allowed: {', '.join(MODES)}")
    r = _routing(net, routing, 1, vc_policy, depth if depth is not None else RouterParams().depth)
    return max(4, r.default_vcs())


@dataclass
class Point:
    load: float
    data: dict


def run_point(net: Network, routing: str = "min", traffic: str = "uniform", load: float = 0.1,
              params: RouterParams | None = None, warmup: int = 1000, cycles: int = 5000,
              drain: int | None = None, seed: int = 1, progress=None, routing_obj=None,
              vc_policy: str = VC_POLICY.default, threads: int | None = None) -> dict:
    if not isinstance(cycles, int) or cycles < 1:
        raise ParameterError(f"cycles={cycles!r}: must be a positive integer")
    if not isinstance(warmup, int) or warmup < 0:
        raise ParameterError(f"warmup={warmup!r}: must be an integer >= 0")
    params = params or RouterParams(vcs=default_vcs(net, routing, vc_policy))
    routing_obj = routing_obj or build_routing(net, routing, params, vc_policy=vc_policy)
    # the whole run's memory (packets included), before anything is allocated
    check_memory(net, params, warmup + cycles, load, uses_arithmetic(net, routing, routing_obj), routing)
    t0 = time.perf_counter()
    sim = NetworkSim(net, routing, params, traffic, load, seed, routing_obj=routing_obj, threads=threads)
    sim.reserve(warmup + cycles)
    sim.run(warmup, progress=progress)
    ej0 = sim.ejected_flits
    first_measured = sim.num_packets
    sim.run(cycles, progress=progress)
    ej1 = sim.ejected_flits
    last_measured = sim.num_packets
    sim.stop_injection()
    drain = drain if drain is not None else 4 * (warmup + cycles) + 10_000
    # drain in steps of 500 cycles, or of a generation chunk on large networks (sim.run)
    step = max(1, min(500, GEN_DRAWS // max(1, int(sim.active.sum()))))
    drained = 0
    while drained < drain and (sim.in_flight or sim.queued_flits):
        sim.run(min(step, drain - drained))
        drained += step
    seconds = time.perf_counter() - t0
    pk = sim.packets()
    sel = slice(first_measured, last_measured)
    done = pk["done"][sel]
    lat = (done - pk["created"][sel])[done >= 0]
    L = params.packet_flits
    active = int(sim.active.sum())
    lost = sim.num_packets * L - sim.ejected_flits
    hops = pk["hops"][sel][done >= 0]
    total_cycles = sim.cycle
    return {
        "routing": routing, "traffic": traffic, "load": load, "vcs": params.vcs, "depth": params.depth,
        "packet_flits": L, "params": params.as_dict(), "endpoints": active, "warmup": warmup, "cycles": cycles,
        "drain_cycles": drained,
        "offered": round(float(last_measured - first_measured) * L / max(active * cycles, 1), 6),
        "accepted": round((ej1 - ej0) / max(active * cycles, 1), 6),
        "latency_mean": round(float(lat.mean()), 3) if len(lat) else None,
        "latency_p99": float(np.percentile(lat, 99)) if len(lat) else None,
        "latency_max": int(lat.max()) if len(lat) else None,
        "measured_packets": int(last_measured - first_measured),
        "hops_mean": round(float(hops.mean()), 4) if len(hops) else None,
        "hop_histogram": np.bincount(hops).tolist() if len(hops) else [],
        "injected_flits": sim.injected_flits, "ejected_flits": sim.ejected_flits,
        "lost": int(lost), "seconds": round(seconds, 3), "threads": sim.threads,
        "router_cycles_per_second": round(net.num_routers * total_cycles / seconds),
    }


def sweep(net, routing, traffic, loads, params=None, warmup=1000, cycles=5000, seed=1, progress=None,
          vc_policy: str = VC_POLICY.default, threads: int | None = None) -> list[dict]:
    params = params or RouterParams(vcs=default_vcs(net, routing, vc_policy))
    r = build_routing(net, routing, params, vc_policy=vc_policy)
    out = []
    for load in loads:
        d = run_point(net, routing, traffic, load, params, warmup, cycles, seed=seed, routing_obj=r, threads=threads)
        out.append(d)
        if progress:
            progress(d)
    return out


def saturation(net, routing, traffic, params=None, warmup=1000, cycles=3000, seed=1, tol=0.02,
               progress=None, vc_policy: str = VC_POLICY.default, threads: int | None = None) -> dict:
    """Largest load whose accepted throughput stays within 5% of the offered load (bisection)."""
    params = params or RouterParams(vcs=default_vcs(net, routing, vc_policy))
    r = build_routing(net, routing, params, vc_policy=vc_policy)
    lo, hi = 0.0, 1.0
    best = None
    while hi - lo > tol:
        mid = round((lo + hi) / 2, 4)
        d = run_point(net, routing, traffic, mid, params, warmup, cycles, seed=seed, routing_obj=r, threads=threads)
        if progress:
            progress(d)
        if d["accepted"] >= 0.95 * d["offered"]:
            lo, best = mid, d
        else:
            hi = mid
    return {"saturation_load": lo, "point": best}


def plot_sweeps(curves: dict, path, title: str = "") -> None:
    """curves: label -> list of run_point dicts. Latency vs offered load, like the paper's Fig. 9."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for label, pts in curves.items():
        stable = [p for p in pts if p["accepted"] >= 0.95 * p["offered"] and p["latency_mean"] is not None]
        ax1.plot([p["load"] for p in stable], [p["latency_mean"] for p in stable], "o-", ms=3, label=label)
        ax2.plot([p["load"] for p in pts], [p["accepted"] for p in pts], "o-", ms=3, label=label)
    ax1.set_xlabel("offered load (flits/cycle/endpoint)")
    ax1.set_ylabel("mean packet latency (cycles)")
    ax1.set_title(title or "latency up to saturation")
    ax2.plot([0, 1], [0, 1], color="gray", ls=":", lw=1)
    ax2.set_xlabel("offered load (flits/cycle/endpoint)")
    ax2.set_ylabel("accepted throughput")
    ax2.set_title("throughput")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
