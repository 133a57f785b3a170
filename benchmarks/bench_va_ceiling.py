"""How fast can the VC allocator's structure run on the ECP5-85F, alone? (docs/fpga_results_log.md, "100 MHz")

Out-of-context Yosys + nextpnr builds (yowasp, speed grade 6 as on the ULX3S, static placer) of
small designs cut from the router's VC allocation, with nothing else on the die: their Fmax is a
ceiling for any router whose VA has that structure.

  arbiter N [own]   one `hdl.arbiter.RoundRobinArbiter(N)` (`own_commit` with `own`), requests
                    registered in, grant registered out, committing its own grant.
  va NV comb        the target router's VA loop in its single-cycle form: NV input VCs, each with
                    a registered request (an output VC index), NV round-robin arbiters of NV
                    requesters (one per output VC), the grants back at the input VCs in the same
                    cycle (a granted request is dropped, the allocation recorded).
  va NV reg         the same with each arbiter's grant registered where it is made, so a cycle
                    holds only the way in (requests to arbiters) and the pointer update
                    (`own_commit` arbiters, as such a design would use).
  va PxV hier       two registered levels: per input port and output VC a V:1 arbiter over the
                    port's VCs, then per output VC a P:1 arbiter over the ports, its grant
                    registered; a VC with a request in flight does not ask again.
  va PxV hier-x     the same with a register more at each end of the crossings (requests at the
                    arbiters, grants at the input ports): 4 cycles from request to allocation.
  va PxV sep-x      input-first separable and pipelined like hier-x, but each input port
                    launches one request a cycle (a V:1 arbiter per port, not per output VC),
                    its output VC decoded to one-hot before the port's register.

  python benchmarks/bench_va_ceiling.py [--vcs-in 32] [--ports 8] [--seed 1] [--only arbiter,va-comb,va-reg,va-hier,va-hier-x,va-sep-x]

Prints one row per design: TRELLIS_COMB, TRELLIS_FF, Fmax and the critical path (fpga.report).
"""
from __future__ import annotations

import argparse
import functools
import json
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from amaranth.back import verilog  # noqa: E402
from amaranth.hdl import Cat, Const, Module, Signal  # noqa: E402
from amaranth.lib import wiring  # noqa: E402
from amaranth.lib.wiring import In, Out  # noqa: E402

from fpga.build import tool_env  # noqa: E402
from fpga.report import critical_path, describe_critical_path  # noqa: E402
from hdl.arbiter import RoundRobinArbiter, one_hot_select  # noqa: E402
from hdl.delay import count_down  # noqa: E402
from hdl.delay import register as _reg  # noqa: E402


class ArbiterAlone(wiring.Component):
    """One arbiter between registers: requests in, grant out, committing every grant."""

    def __init__(self, n: int, own: bool):
        self.n, self.own = n, own
        super().__init__({"requests": In(n), "grant": Out(n)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.arb = arb = RoundRobinArbiter(self.n, own_commit=self.own)
        req = Signal(self.n)
        m.d.sync += [req.eq(self.requests), self.grant.eq(arb.grant)]
        m.d.comb += [arb.requests.eq(req), arb.commit.eq(arb.valid), arb.commit_grant.eq(arb.grant)]
        return m


class _VAForm(wiring.Component):
    """What the VA forms share: nv input VCs, each loaded with a request for output VC `req` on
    `new`; `busy` output VCs (registered in) may not be granted; `held`: the input VCs holding an
    output VC. Subclasses build the allocation between them."""

    def __init__(self, nv: int):
        self.nv = nv
        super().__init__({"req": In(range(nv)).array(nv), "new": In(nv), "busy": In(nv), "held": Out(nv)})

    def _requests(self, m, target_shape, target_name="rq_ovc"):
        """The request registers (valid, target) and the registered busy vector."""
        nv = self.nv
        valid = [Signal(name=f"rq_valid_{i}") for i in range(nv)]
        target = [Signal(target_shape, name=f"{target_name}_{i}") for i in range(nv)]
        busy = _reg(m, self.busy, "busy")
        return valid, target, busy

    def _allocate(self, m, won):
        """Each input VC's allocation accumulates its grants won[iv] (one bit per output VC);
        `held` says which hold one. Yields (iv, its grant vector) for the caller's request
        updates, input VC by input VC."""
        alloc = [Signal(self.nv, name=f"alloc_{iv}") for iv in range(self.nv)]
        for iv in range(self.nv):
            w = Cat(*won[iv])
            m.d.sync += alloc[iv].eq(alloc[iv] | w)
            yield iv, w
        m.d.comb += self.held.eq(Cat(*[a.any() for a in alloc]))


class VAHierarchical(_VAForm):
    """A VA whose every cycle stays local or makes one crossing (see the module docstring):
    ports x vcs input VCs, as many output VCs."""

    def __init__(self, ports: int, vcs: int, crossing_regs: bool = False):
        self.ports, self.vcs, self.crossing_regs = ports, vcs, crossing_regs
        super().__init__(ports * vcs)

    def elaborate(self, platform):
        m = Module()
        P, V = self.ports, self.vcs
        nv = P * V
        valid, target, busy = self._requests(m, range(nv))
        trip = 4 if self.crossing_regs else 2
        pending = [Signal(range(trip + 1), name=f"rq_pending_{i}") for i in range(nv)]
        # stage 1, inside input port i: per output VC, one of i's VCs asking for it (registered)
        port_req = [[Signal(name=f"port_req_{i}_{ov}") for ov in range(nv)] for i in range(P)]
        port_vc = [[Signal(V, name=f"port_vc_{i}_{ov}") for ov in range(nv)] for i in range(P)]
        launched = [Const(0, 1)] * nv
        for i in range(P):
            for ov in range(nv):
                arb = RoundRobinArbiter(V, own_commit=True)
                m.submodules[f"pre_{i}_{ov}"] = arb
                reqs = Cat(*[valid[i * V + v] & (pending[i * V + v] == 0) & (target[i * V + v] == ov) for v in range(V)])
                m.d.comb += [arb.requests.eq(reqs), arb.commit.eq(arb.valid), arb.commit_grant.eq(arb.grant)]
                m.d.sync += [port_req[i][ov].eq(arb.valid), port_vc[i][ov].eq(arb.grant)]
                for v in range(V):
                    launched[i * V + v] = launched[i * V + v] | arb.grant[v]
        # stage 2, at output VC ov: one input port (registered grant, back to the port next cycle)
        won = [[None] * nv for _ in range(nv)]
        for ov in range(nv):
            arb = RoundRobinArbiter(P, own_commit=True)
            m.submodules[f"arb_{ov}"] = arb
            ok = ~busy[ov]
            preq = [self._crossing(m, port_req[i][ov], f"xreq_{i}_{ov}") for i in range(P)]
            pvc = [self._crossing(m, port_vc[i][ov], f"xvc_{i}_{ov}") for i in range(P)]
            m.d.comb += [arb.requests.eq(Cat(*preq)), arb.commit.eq(arb.valid & ok), arb.commit_grant.eq(arb.grant)]
            for i in range(P):
                g = Signal(V, name=f"grant_{ov}_{i}")
                m.d.sync += g.eq(pvc[i] & (arb.grant[i] & ok).replicate(V))
                g = self._crossing(m, g, f"xgrant_{ov}_{i}")
                for v in range(V):
                    won[i * V + v][ov] = g[v]
        for iv, w in self._allocate(m, won):
            with m.If(self.new[iv]):
                m.d.sync += [valid[iv].eq(1), pending[iv].eq(0), target[iv].eq(self.req[iv])]
            with m.Else():
                count_down(m, pending[iv], launched[iv], trip)
                with m.If(w.any()):
                    m.d.sync += valid[iv].eq(0)
        return m

    def _crossing(self, m, value, name):
        """With crossing_regs, one register more on a signal that crosses between the input ports
        and the output VCs' arbiters, so that the crossing is a cycle's only wire."""
        return _reg(m, value, name) if self.crossing_regs else value


class VASeparable(_VAForm):
    """Input-first separable VA, pipelined: per input port a V:1 arbiter launches one of its VCs'
    requests a cycle (registered, its output VC decoded to one-hot at the port), a register at
    each end of the crossings, per output VC a P:1 arbiter with its grant registered."""

    def __init__(self, ports: int, vcs: int):
        self.ports, self.vcs = ports, vcs
        super().__init__(ports * vcs)

    def elaborate(self, platform):
        m = Module()
        P, V = self.ports, self.vcs
        nv = P * V
        trip = 4
        valid, target, busy = self._requests(m, nv, "rq_ovc_oh")          # one-hot, decoded on entry
        pending = [Signal(range(trip + 1), name=f"rq_pending_{i}") for i in range(nv)]
        reg = functools.partial(_reg, m)
        xreq, xvc = [], []
        for i in range(P):
            arb = RoundRobinArbiter(V, own_commit=True)
            m.submodules[f"port_{i}"] = arb
            m.d.comb += [arb.requests.eq(Cat(*[valid[i * V + v] & (pending[i * V + v] == 0) for v in range(V)])),
                         arb.commit.eq(arb.valid), arb.commit_grant.eq(arb.grant)]
            for v in range(V):
                count_down(m, pending[i * V + v], arb.grant[v], trip)
            ovs = reg(one_hot_select(arb.grant, [target[i * V + v] for v in range(V)]), f"port_ovs_{i}")
            vc = reg(arb.grant, f"port_vc_{i}")
            xreq.append(reg(ovs, f"xreq_{i}"))
            xvc.append(reg(vc, f"xvc_{i}"))
        won = [[None] * nv for _ in range(nv)]
        for ov in range(nv):
            arb = RoundRobinArbiter(P, own_commit=True)
            m.submodules[f"arb_{ov}"] = arb
            ok = ~busy[ov]
            m.d.comb += [arb.requests.eq(Cat(*[xreq[i][ov] for i in range(P)])),
                         arb.commit.eq(arb.valid & ok), arb.commit_grant.eq(arb.grant)]
            for i in range(P):
                g = reg(reg(xvc[i] & (arb.grant[i] & ok).replicate(V), f"grant_{ov}_{i}"), f"xgrant_{ov}_{i}")
                for v in range(V):
                    won[i * V + v][ov] = g[v]
        for iv, w in self._allocate(m, won):
            with m.If(self.new[iv]):
                m.d.sync += [valid[iv].eq(1), target[iv].eq(1 << self.req[iv])]
            with m.Elif(w.any()):
                m.d.sync += valid[iv].eq(0)
        return m


class VALoop(_VAForm):
    """NV input VCs x NV output VCs of separable VC allocation (see the module docstring)."""

    def __init__(self, nv: int, registered: bool):
        self.registered = registered
        # the router's arbiters commit through commit_grant; a registered design would use own_commit
        super().__init__(nv)

    def elaborate(self, platform):
        m = Module()
        nv = self.nv
        valid, target, busy = self._requests(m, range(nv))
        won = [[None] * nv for _ in range(nv)]
        for ov in range(nv):
            arb = RoundRobinArbiter(nv, own_commit=self.registered)
            m.submodules[f"arb_{ov}"] = arb
            ok = ~busy[ov]
            m.d.comb += [arb.requests.eq(Cat(*[valid[i] & (target[i] == ov) for i in range(nv)])),
                         arb.commit.eq(arb.valid & ok), arb.commit_grant.eq(arb.grant)]
            for i in range(nv):
                g = arb.grant[i] & ok
                won[i][ov] = _reg(m, g, f"grant_{ov}_{i}") if self.registered else g
        for i, w in self._allocate(m, won):
            with m.If(self.new[i]):
                m.d.sync += [valid[i].eq(1), target[i].eq(self.req[i])]
            with m.Elif(w.any()):
                m.d.sync += valid[i].eq(0)
        return m


def place_and_route(component, seed: int) -> dict:
    env = tool_env("ecp5")
    with tempfile.TemporaryDirectory() as d:
        (pathlib.Path(d) / "top.v").write_text(verilog.convert(component, name="top"))
        subprocess.run([env["YOSYS"], "-q", "-l", "yosys.log", "-p", "read_verilog top.v; synth_ecp5 -top top -json top.json"],
                       cwd=d, env=env, check=True, stdout=subprocess.DEVNULL)
        # out of context: the ports need no pins; the run "fails" only at the bitstream stage
        subprocess.run([env["NEXTPNR_ECP5"], "--85k", "--speed", "6", "--package", "CABGA381", "--json", "top.json",
                        "--freq", "200", "--out-of-context", "--placer", "static", "--seed", str(seed),
                        "--report", "report.json", "--log", "nextpnr.log"],
                       cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        path = pathlib.Path(d) / "report.json"
        if not path.exists():
            raise SystemExit(f"nextpnr wrote no report; its log:\n{(pathlib.Path(d) / 'nextpnr.log').read_text()[-2000:]}")
        rep = json.loads(path.read_text())
    util = rep["utilization"]
    cp = critical_path(rep)
    return {"comb": util["TRELLIS_COMB"]["used"], "ff": util["TRELLIS_FF"]["used"],
            "fmax_mhz": round(1000 / cp["total_ns"], 2) if cp else None, "critical_path": cp}


KINDS = ("arbiter", "va-comb", "va-reg", "va-hier", "va-hier-x", "va-sep-x")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vcs-in", type=int, default=32, help="input (= output) VCs of the VA loop (target: 8 x 4)")
    ap.add_argument("--ports", type=int, default=8, help="input ports of the hierarchical VA (--vcs-in / ports VCs each)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default=",".join(KINDS), help=f"comma-separated, of: {', '.join(KINDS)}")
    args = ap.parse_args(argv)
    kinds = args.only.split(",")
    if not set(kinds) <= set(KINDS):
        raise SystemExit(f"--only: {args.only!r}; allowed: comma-separated {', '.join(KINDS)}")
    if args.vcs_in < 2 or args.ports < 1 or args.vcs_in % args.ports:
        raise SystemExit(f"--vcs-in {args.vcs_in} --ports {args.ports}: at least 2 VCs, a multiple of the ports")
    nv, P = args.vcs_in, args.ports
    designs = []
    if "arbiter" in kinds:
        designs += [(f"arbiter {n}{' own' if own else ''}", lambda n=n, own=own: ArbiterAlone(n, own))
                    for n in (8, 16, 32) for own in (False, True)]
    if "va-comb" in kinds:
        designs.append((f"va {nv} comb", lambda: VALoop(nv, False)))
    if "va-reg" in kinds:
        designs.append((f"va {nv} reg", lambda: VALoop(nv, True)))
    if "va-hier" in kinds:
        designs.append((f"va {P}x{nv // P} hier", lambda: VAHierarchical(P, nv // P)))
    if "va-hier-x" in kinds:
        designs.append((f"va {P}x{nv // P} hier-x", lambda: VAHierarchical(P, nv // P, crossing_regs=True)))
    if "va-sep-x" in kinds:
        designs.append((f"va {P}x{nv // P} sep-x", lambda: VASeparable(P, nv // P)))
    print(f"ECP5-85F speed 6, out of context, static placer, seed {args.seed}")
    print(f"{'design':<16} {'COMB':>7} {'FF':>6} {'Fmax MHz':>9}  critical path")
    for name, make in designs:
        t = time.time()
        print(f"  [{name}] placing and routing ...", file=sys.stderr, flush=True)
        r = place_and_route(make(), args.seed)
        print(f"{name:<16} {r['comb']:>7} {r['ff']:>6} {r['fmax_mhz']:>9}  {describe_critical_path(r['critical_path'])}"
              f"  [{time.time() - t:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
