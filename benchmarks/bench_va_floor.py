"""The area floor of VC allocation: how much of a router could folding VC allocation into switch
allocation save, at most? (docs/fpga_results_log.md, "The VC allocator's floor")

`pstar fpga area` of one router, twice: as it is, and with its VC allocator (hdl/router/
vc_allocator.py) replaced by the least logic any allocator of that router needs: a head is granted
the lowest free output VC of its hop's class at the port its route names (at a local port, the
lowest free one), with no arbitration between heads. Two heads may then win one output VC: the
floor is wrong as a router and stands for area only. An allocator that lets the switch
allocator's output arbiters settle the VCs too still needs this much, so the difference is the
most such a change saves. Routing units with single-port routes only (the arithmetic PolarStar
and table units; a Polarized head chooses between ports).

  python benchmarks/bench_va_floor.py [pstar fpga area arguments, e.g. --preset net26 SPEC]

Prints the LUT sites per component (hierarchy kept), the flattened router's LUT sites and
flip-flops, real and floor, and the difference.

  python benchmarks/bench_va_floor.py --cosim SPEC ROUTING VCS [CYCLES [RUNS]]

The same two routers in the co-simulation instead (cosim.replay, netlist engine, one thread): the
network idle (load 0, so that the floor's wrong grants never show), CYCLES cycles (default 6000),
RUNS runs of each (default 3); prints the Verilated routers' cycles per CPU second, median (min..
max). Any routing unit: the floor takes the lowest port of a Polarized route. How much faster the
RTL side of a lockstep could get from any VC allocator (Verilator evaluates every router's whole
logic each cycle, busy or idle; loaded, the real router runs about a fifth slower than idle).
"""
from __future__ import annotations

import hashlib
import json
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def floor_elaborate(self, platform):
    """VCAllocator.elaborate's stand-in: grant = request, the route's output port and the lowest
    free VC of the hop's class there (the class the router's `up` step picks, with turn classes
    from the `up` input), no arbiters."""
    from amaranth.hdl import Cat, Const, Module, Signal
    from hdl.arbiter import lowest_set_bit
    m = Module()
    cfg, vcmap = self.cfg, self.vcmap
    P, V, R = cfg.P, cfg.V, cfg.R
    taken = [[[] for _ in range(V)] for _ in range(P)]
    for iv in range(P * V):
        i, v = divmod(iv, V)
        port = lowest_set_bit(self.route[i][v], R, m, f"floor_port_{i}_{v}")
        groups = {}                       # (o, condition) -> the VCs it may take there
        for o, w in vcmap.ovcs_of[iv]:
            if o >= R:
                at = self.eject[i][v] & ((self.dst_ep[i][v] == o - R) if cfg.p > 1 else Const(1, 1))
                groups.setdefault((o, None), (at, []))[1].append(w)
                continue
            at = ~self.eject[i][v] & port[o]
            if vcmap.dynamic and i < R and len(vcmap.next_classes(iv, o)) > 1:
                step = self.up[i] & self.up[o]
                s = int(cfg.vc_class[w] == vcmap.next_class(iv, o, 1))
                at = at & (step if s else ~step)
                groups.setdefault((o, s), (at, []))[1].append(w)
            else:
                groups.setdefault((o, None), (at, []))[1].append(w)
        full = [Const(0, 1)] * (P * V)
        for (o, _), (at, ws) in groups.items():
            free = Cat(*[~self.busy[o][w] for w in ws])
            pick = lowest_set_bit(free, len(ws), m, f"floor_pick_{i}_{v}_{o}_{len(taken[o][ws[0]])}")
            for k, w in enumerate(ws):
                g = Signal(name=f"floor_grant_{i}_{v}_{o}_{w}")
                m.d.comb += g.eq(self.request[i][v] & at & pick[k])
                full[o * V + w] = g
                taken[o][w].append(g)
        # the granted VC's number: the OR of the numbers of the (one-hot) grants
        wb = len(self.grant_w[i][v])
        number = [Cat(*[full[o * V + w] & ((w >> b) & 1) for o in range(P) for w in range(V)]).any() for b in range(wb)]
        m.d.comb += [self.grant[i][v].eq(Cat(*full)), self.grant_w[i][v].eq(Cat(*number))]
    for o in range(P):
        m.d.comb += self.taken[o].eq(Cat(*[Cat(*t).any() if t else Const(0, 1) for t in taken[o]]))
    return m


def fail(message: str):
    """Bad input (here or in `pstar fpga area`): one line on stderr, exit status 2."""
    sys.stderr.write(f"bench_va_floor: {message.removeprefix('bench_va_floor: ')}\n")
    sys.exit(2)


def use_floor():
    """VCAllocator.elaborate -> floor_elaborate, and the co-simulation's builds keyed apart from
    the real router's (cosim.harness keys a build by the RTL's sources, which the floor leaves as
    they are)."""
    from cosim import harness
    from hdl.router import vc_allocator
    vc_allocator.VCAllocator.elaborate = floor_elaborate
    harness.SOURCES_DIGEST = hashlib.sha256(harness.SOURCES_DIGEST + b"|va-floor").digest()


def cosim_child(mode: str, args: list[str]) -> int:
    """One idle replay: args SPEC ROUTING VCS CYCLES; prints the report's JSON."""
    from cosim.replay import replay
    if mode == "floor":
        use_floor()
    spec, routing, vcs, cycles = args[0], args[1], int(args[2]), int(args[3])
    try:
        rep = replay(spec, routing, vcs, 0.0, cycles, engine="netlist", threads=1)
    except ValueError as e:
        fail(str(e))
    print(json.dumps({k: rep[k] for k in ("rtl_cycles_per_cpu_s", "flits_matched", "mismatch", "build")}))
    return 0


def child(mode: str, args: list[str]) -> int:
    from hdl.router import vc_allocator
    if mode == "floor":
        real_init = vc_allocator.VCAllocator.__init__

        def checked_init(self, cfg, vcmap):
            if not cfg.single_port:
                fail("the routing unit's routes name several ports; the floor is for single-port routes "
                     "(polarstar, min)")
            real_init(self, cfg, vcmap)
        vc_allocator.VCAllocator.__init__ = checked_init
        use_floor()
    from pstar.cli import main
    return main(["fpga", "area", *args, "--json", "--quiet"])


def run(mode: str, args: list[str], kind: str = "--child") -> dict:
    done = subprocess.run([sys.executable, __file__, kind, mode, *args], capture_output=True, text=True)
    if done.returncode:
        # the child's one-line error (warnings Amaranth prints at exit may follow it)
        lines = [x for x in done.stderr.splitlines() if x.startswith("bench_va_floor:") or ": error:" in x]
        fail(lines[-1] if lines else f"{mode}: exit {done.returncode}")
    return json.loads(done.stdout.splitlines()[-1])


def cosim(args: list[str]) -> int:
    """--cosim SPEC ROUTING VCS [CYCLES [RUNS]]: idle replays of the real and the floor router."""
    if not 3 <= len(args) <= 5:
        fail("--cosim SPEC ROUTING VCS [CYCLES [RUNS]]")
    try:
        vcs = int(args[2])
        cycles, runs = (int(args[3]) if len(args) > 3 else 6000), (int(args[4]) if len(args) > 4 else 3)
    except ValueError as e:
        fail(f"--cosim: VCS, CYCLES and RUNS are integers ({e})")
    if cycles < 1 or runs < 1:
        fail("--cosim: CYCLES and RUNS must be at least 1")
    rates = {}
    for mode in ("real", "floor"):
        reps = [run(mode, [args[0], args[1], str(vcs), str(cycles)], "--cosim-child") for _ in range(runs)]
        bad = [r["mismatch"] for r in reps if r["mismatch"] is not None]
        if bad:
            fail(f"{mode}: the idle replay did not match the model: {bad[0]}")
        rates[mode] = [r["rtl_cycles_per_cpu_s"] for r in reps]
        sys.stderr.write(f"[va-floor] {mode}: {rates[mode]} (build {reps[0]['build']['build_dir']})\n")
    print(f"{args[0]} {args[1]} V={vcs}, idle, {cycles} cycles, netlist engine on one thread, {runs} runs:")
    print("Verilated routers' cycles per CPU second, median (min..max)")
    for mode in ("real", "floor"):
        r = rates[mode]
        print(f"  {mode:<6}{statistics.median(r):>10,.0f} ({min(r):,.0f}..{max(r):,.0f})")
    print(f"  floor / real: {statistics.median(rates['floor']) / statistics.median(rates['real']):.2f}x")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        return child(argv[1], argv[2:])
    if argv[:1] == ["--cosim-child"]:
        return cosim_child(argv[1], argv[2:])
    if argv[:1] == ["--cosim"]:
        return cosim(argv[1:])
    real, floor = run("real", argv), run("floor", argv)
    print(f"router {real['router']} of {real['spec']}, {real['routing']} unit: P={real['ports']} V={real['vcs']} "
          f"B={real['depth']} {real['flit_bits']}-bit {real['flit']} flits, VA "
          f"{'separable' if real['va_separable'] else 'central'}, {real['vc_policy']} classes"
          f"{', preset ' + real['preset'] if real.get('preset') else ''}")
    print(f"{'LUT sites':<22}{'real':>8}{'floor':>8}{'saved':>8}")
    for a, b in zip(real["components"], floor["components"]):
        print(f"  {a['component']:<20}{a['lut_sites']:>8}{b['lut_sites']:>8}{a['lut_sites'] - b['lut_sites']:>8}")
    for key, label in (("lut_sites", "flattened LUT sites"), ("TRELLIS_FF", "flattened FF")):
        x, y = real["flattened"][key], floor["flattened"][key]
        print(f"{label:<22}{x:>8}{y:>8}{x - y:>8}  ({100 * (x - y) / x:.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
