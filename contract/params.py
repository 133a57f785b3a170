"""Router parameters and options: each declared once, here, with its default, its range or
choices, its help text and its command-line flag. `sim`, `hdl`, `fpga` and the `pstar` commands
read them from here (`contract.cli` makes the argparse flags, `contract.doc_table` the table of
docs/microarchitecture.md); nothing else restates a default or a limit.

`RouterParams` (frozen dataclass): the parameters both the model and the RTL take. Each field's
`metadata` holds its spec (`param` below); `PARAMS` gives them as `Spec`s. `OPTIONS`: the
router-building options that are not fields of `RouterParams` but that every front end takes
(the flit format, the header fields carried, the VC policy), as `Spec`s with their choices:
`FLIT_FORMAT`, `HEADER`, `VC_POLICY`. Signature defaults read `VC_POLICY.default` and so on.

`fpga` in a spec: the narrower range the FPGA prototypes take (fpga/build.py), where there is one.
See docs/microarchitecture.md for what each parameter means cycle by cycle.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from topologies.errors import ParameterError

# the VC policies of routing_logic.base.VC_POLICIES, by name: written here so that reading the
# contract does not import the routing logic (~0.5 s); tests/test_contract.py checks they agree
VC_POLICY_NAMES = ("hops", "turns")

# va_separable = 1: cycles from an input port's launch of a VC request to the cycle its grant is
# applied when the output VC is free (launch register, crossing register, output arbiter -> grant
# register, grant register at the port); a request waits at its output VC's arbiter until granted
# (docs/microarchitecture.md, "Separable VC allocation")
SEPARABLE_VA_TRIP = 4


@dataclass(frozen=True)
class Spec:
    """One router parameter or option as every front end shows it: an integer in lo..hi
    (`fpga`: the FPGA prototypes' narrower (lo, hi), or None), or one of `choices`."""
    name: str
    default: object
    flag: str
    help: str
    lo: int | None = None
    hi: int | None = None
    choices: tuple = ()
    short: str | None = None          # a one-letter alias of the flag (-V)
    metavar: str | None = None
    fpga: tuple | None = None

    @property
    def dest(self) -> str:
        """The flag as an identifier (--flit-width -> flit_width): what argparse and FpgaConfig call it."""
        return self.flag.lstrip("-").replace("-", "_")

    def bounds(self, fpga: bool = False) -> tuple:
        return self.fpga if fpga and self.fpga else (self.lo, self.hi)

    def range_text(self, fpga: bool = False) -> str:
        if self.choices:
            return ", ".join(self.choices)
        lo, hi = self.bounds(fpga)
        return f"{lo}..{hi}"

    def error(self, value, fpga: bool = False, name: str | None = None) -> str | None:
        """Why `value` is refused (the one-line message), or None when it is allowed."""
        name = name or self.name
        if self.choices:
            return None if value in self.choices else f"{name}={value!r}: must be one of {', '.join(self.choices)}"
        lo, hi = self.bounds(fpga)
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            return f"{name}={value!r}: must be an integer in {lo}..{hi}"
        return None

    def check(self, value, fpga: bool = False, name: str | None = None):
        """`value`, or a ParameterError naming `name` (default: the parameter's name)."""
        message = self.error(value, fpga, name)
        if message:
            raise ParameterError(message)
        return value


def param(default: int, lo: int, hi: int, flag: str, help: str, **more):
    """A RouterParams field: its default, range lo..hi, flag, help (and short, metavar, fpga)."""
    return field(default=default, metadata={"lo": lo, "hi": hi, "flag": flag, "help": help, **more})


@dataclass(frozen=True)
class RouterParams:
    vcs: int = param(4, 1, 64, "--vcs", "virtual channels per port (V)", short="-V", metavar="V", fpga=(1, 16))
    depth: int = param(8, 1, 1 << 16, "--depth", "flits per VC buffer (B)", short="-B", metavar="B", fpga=(2, 256))
    packet_flits: int = param(4, 1, 256, "--packet", "flits per packet (L)", metavar="L")
    link_latency: int = param(
        1, 1, 64, "--link-latency", "cycles from switch allocation to the next router's buffer (each cycle more "
        "is a register on every link, for the clock of networks spread over a die)", metavar="N", fpga=(1, 8))
    credit_latency: int = param(1, 1, 64, "--credit-latency", "cycles from a buffer pop to the upstream router's "
                                "credit", metavar="N", fpga=(1, 8))
    watchdog: int = param(2000, 10, 10**9, "--watchdog", "idle cycles with flits in flight before a deadlock report",
                          metavar="N")
    payload_bits: int = param(32, 0, 4096, "--flit-width", "flit data (payload) bits; the routing and flow-control "
                              "fields travel beside them", metavar="W", fpga=(1, 1024))
    packet_id_bits: int = param(
        16, 1, 32, "--packet-id-bits", "bits of the packet id every flit carries for the checkers (the low bits of "
        "the source's packet count; fewer make large prototypes smaller, the id then wraps sooner)", metavar="N")
    alloc_iters: int = param(1, 1, 8, "--alloc-iters", "switch-allocator iterations per cycle", metavar="N")
    va_stages: int = param(1, 1, 2, "--va-stages", "VC allocation in one cycle (1) or pipelined over two (2)")
    sa_stages: int = param(
        1, 1, 3, "--sa-stages", "switch allocation in one cycle (1), over two: input stage, then output stage (2), "
        "or three: the output stage's grants registered, the flits sent a cycle later (3); 2 and 3 need "
        "alloc_iters 1")
    st_stage: int = param(
        0, 0, 2, "--st-stage", "switch traversal in the cycle of switch allocation (0), in the cycle after (1: "
        "SA's choices registered, the buffer body read synchronously) or two cycles after (2: the body read "
        "registered once more, off a block RAM's clock-to-output path); the flit reaches the link st_stage "
        "cycles later")
    va_separable: int = param(
        0, 0, 1, "--va-separable", "1: separable pipelined VC allocation (each input port launches one request a "
        "cycle, which waits at a P:1 arbiter per output VC until granted; registers at both ends of each "
        f"crossing: {SEPARABLE_VA_TRIP} more cycles per allocation, short paths)")
    va_choice_stage: int = param(
        0, 0, 1, "--va-choice-stage", "1: the VC choice reads last cycle's output VC state (the best free VC per "
        "output and class registered; the VA arbiters check 'free' again)")

    def __post_init__(self):
        for spec in PARAMS.values():
            spec.check(getattr(self, spec.name))
        if self.sa_stages > 1 and self.alloc_iters != 1:
            raise ParameterError(f"alloc_iters={self.alloc_iters}: the pipelined switch allocator (sa_stages={self.sa_stages}) "
                                 "takes 1 iteration only")

    def as_dict(self) -> dict:
        return asdict(self)


PARAMS = {f.name: Spec(f.name, f.default, **f.metadata) for f in fields(RouterParams)}
DEFAULTS = {name: spec.default for name, spec in PARAMS.items()}

FLIT_FORMAT = Spec(
    "flit", "wide", "--flit", "flit format: wide (every flit carries the header beside its payload) or lean "
    "(the header in head flits only, in the payload bits: narrower flits, buffers and crossbars; the header "
    "must fit the flit width)", choices=("wide", "lean"))
HEADER = Spec(
    "header", "routing", "--header", "optional header fields the flits carry: those the routing unit reads "
    "(routing: none for min and polarstar, the phase bit for polarized) or all (also the hop count and the "
    "Valiant intermediate, which no unit reads)", choices=("routing", "all"))
VC_POLICY = Spec(
    "vc_policy", "hops", "--vc-policy", "VC classes: hops (class = hops taken) or turns (class = down-then-up "
    "turns over router ids: PolarStar minimal routing with 2 VCs; docs/routing.md)", choices=VC_POLICY_NAMES)
OPTIONS = {spec.name: spec for spec in (FLIT_FORMAT, HEADER, VC_POLICY)}
SPECS = {**PARAMS, **OPTIONS}

__all__ = ["DEFAULTS", "FLIT_FORMAT", "HEADER", "OPTIONS", "PARAMS", "RouterParams", "SEPARABLE_VA_TRIP", "SPECS",
           "Spec", "VC_POLICY", "VC_POLICY_NAMES", "param"]
