"""Run the `sim` model and the Verilated network on the same packets (pytest-free, shared by
cosim/replay.py, tests/test_cocotb_network.py, benchmarks/bench_hdl.py and benchmarks/soak.py).

`lockstep(spec, routing, vcs, load, cycles)` runs `NetworkSim` (uniform random traffic), builds
(or reuses) the Verilator model of the whole network (`hdl.network.network_verilog`, packed
endpoint buses, one router module as a Verilator hierarchical block), replays the model's packets
through the cocotb bench tests/cocotb/network_bench.py (a source checkout only) and returns
(cocotb results, report, build info, model). `network_build` (the RTL build alone) is what
cosim/replay.py uses.

Garbage (`garbage`): malformed flits scheduled at endpoints (`NetworkSim.add_garbage`: endpoint,
creation cycle, kind). The model runs with them; network_bench.py sends the RTL the same flits by
the same endpoint rule, and besides every ejected flit compares the RTL's `dropped` with the
model's drop count every cycle and at the end.

Link failures (`fail`): the model runs on the network with that fraction of its links failed
(`Network.without_links(fraction=fail, seed=seed)`) and routing recomputed for it; the RTL keeps
the intact wiring (a failed link is one that no route uses) and gets the damaged network's tables
(min, polarized) or PolarStar exception CAM through its `load` port, as a deployed network would
be reconfigured.
"""
from __future__ import annotations

import json
import pathlib
import tempfile

import numpy as np
from amaranth.hdl import Shape

from cosim import harness
from hdl.network import network_verilog, plan
from hdl.verilog_out import to_verilog
from hdl.routing_units import exception_entries
from routing_logic.registry import make_routing
from contract.flit import index_bits
from sim.network_sim import NetworkSim
from contract.params import DEFAULTS, RouterParams
from topologies import build


# RouterParams options a build name records as -{tag}{value} when not at their default
NAME_TAGS = (("va_stages", "va"), ("sa_stages", "sa"), ("st_stage", "st"), ("link_latency", "ll"),
             ("credit_latency", "cl"))


def network_build(spec: str, routing: str, vcs: int, fail: float = 0.0, seed: int = 1, routing_obj=None,
                  name=None, exe=None, netlist: bool = False, vc_policy: str = "hops", body_block_bits: int = 0,
                  flit: str = "wide", **options):
    """(build meta, NetworkTop plan, endpoint/load config) for the network's RTL; a cocotb build,
    or with `exe` (see `harness.build`; a callable gets the plan) a plain Verilator executable:
    of the network top (`network_verilog`), or with `netlist=True` of the router module alone,
    for a main that wires the routers itself (netlist_main.cpp). `options`: other RouterParams
    fields (va_stages, sa_stages, st_stage, link_latency, credit_latency); body_block_bits: bits of
    each buffer body in block RAM (hdl/buffer.py); flit: the flit format (contract.flit.FLIT_FORMATS)."""
    net = build(spec)
    params = RouterParams(vcs=vcs, **options)
    if routing_obj is None:
        model_net = net.without_links(fraction=fail, seed=seed) if fail else net
        kw = {"buffer_depth": params.depth} if routing == "polarized" else {}
        routing_obj = make_routing(routing, model_net, vcs=vcs, vc_policy=vc_policy, **kw)
    # one shared router module (with turn classes, their class steps from its `up` input)
    turns = routing_obj.vc_policy.name != "hops"
    top = plan(net, routing, params, routing_obj=routing_obj, body_block_bits=body_block_bits, flit=flit)
    key = f"{spec}|{routing}|{params}|C={top.C}" + (f"|{routing_obj.vc_policy.name}" if turns else "")
    if body_block_bits:
        key += f"|block={body_block_bits}"
    if flit != "wide":
        key += f"|flit={flit}"
    name = name or (f"net-{net.num_routers}-{routing}-v{vcs}"
                    + "".join(f"-{tag}{getattr(params, key)}" for key, tag in NAME_TAGS
                              if getattr(params, key) != DEFAULTS[key])
                    + ("-turns" if turns else "") + (f"-ebr{body_block_bits}" if body_block_bits else "")
                    + ("" if flit == "wide" else f"-{flit}")
                    + (f"-id{params.packet_id_bits}" if params.packet_id_bits != DEFAULTS["packet_id_bits"] else ""))
    K = exception_entries(routing_obj)
    if K or len(routing_obj.net.attrs.get("failed_links", ())):
        key += f"|K={K}"
        name += f"-c{top.C}" + (f"-k{K}" if K else "")

    def make_verilog():
        if netlist:
            text = to_verilog(top.proto, top.module_name, flatten=True)
        else:
            text, _ = network_verilog(net, routing, params, packed=True, routing_obj=routing_obj,
                                      body_block_bits=body_block_bits, flit=flit)
        return text, {"routers": net.num_routers, "endpoints": net.num_endpoints}

    if callable(exe):
        exe = exe(top)
    if netlist:
        meta = harness.build(name + "-netlist", key, make_verilog, top.module_name, exe=exe)
    else:
        meta = harness.build(name, key, make_verilog, "pstar_network", hier_blocks=["pstar_router"],
                             exe=exe)
    eps = net.endpoints.astype(np.int64)
    first = np.concatenate([[0], np.cumsum(eps)])
    ep_router = np.repeat(np.arange(net.num_routers), eps)
    cfg = {
        "E": net.num_endpoints, "V": vcs, "B": params.depth, "L": params.packet_flits,
        "W": top.layout.size, "vb": index_bits(vcs),
        "fields": {k: [f.offset, f.width] for k, f in top.layout},
        "ep_router": ep_router.tolist(), "ep_local": (np.arange(net.num_endpoints) - first[ep_router]).tolist(),
        "N": net.num_routers, "p": int(eps.max()),
    }
    if top.loadable:
        cfg["load"] = [top.table_rows(r) for r in range(net.num_routers)]
        cfg["load_bits"] = [index_bits(net.num_routers), Shape.cast(top.proto.unit.load_layout["addr"].shape).width]
    return meta, top, cfg


def lockstep(spec: str, routing: str, vcs: int, load: float, cycles: int, seed: int = 1, tmp=None, name=None,
             tamper=None, fail: float = 0.0, garbage=None, vc_policy: str = "hops", body_block_bits: int = 0,
             flit: str = "wide", **options):
    """`tamper(trace) -> trace` alters the model's trace before the comparison (to test the report).
    `garbage`: (endpoints, cycles, kinds) for `NetworkSim.add_garbage`, or None. `options`: other
    RouterParams fields, for the model and the RTL alike."""
    net = build(spec)
    model_net = net.without_links(fraction=fail, seed=seed) if fail else net
    params = RouterParams(vcs=vcs, **options)
    model = NetworkSim(model_net, routing, params, "uniform", load, seed=seed,
                       trace=4 * cycles * net.num_endpoints + 16, vc_policy=vc_policy)
    if garbage is not None:
        model.add_garbage(*garbage)
    model.run(cycles)
    g = model.garbage()
    pk = model.packets()
    meta, top, cfg = network_build(spec, routing, vcs, fail, seed, routing_obj=model.routing, name=name,
                                   vc_policy=vc_policy, body_block_bits=body_block_bits, flit=flit, **options)
    cfg["cycles"] = cycles
    cfg["dropped"] = model.dropped
    tmp = pathlib.Path(tmp or tempfile.mkdtemp(prefix="lockstep-"))
    base = tmp / "lockstep"
    base.parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(str(base) + ".json").write_text(json.dumps(cfg))
    np.savez(str(base) + ".npz", src=pk["src"], dst=pk["dst"], created=pk["created"],
             trace=(tamper or (lambda tr: tr))(model.trace[:model.trace_len[0]].copy()),
             g_ep=g["endpoint"], g_time=g["created"], g_kind=g["kind"], g_drop=g["dropped"])
    results = harness.run(meta, "network_bench", {"PSTAR_LOCKSTEP": str(base)})
    report_file = pathlib.Path(str(base) + ".report.json")
    report = json.loads(report_file.read_text()) if report_file.exists() else {}
    return results, report, meta, model
