"""Router parameters and their defaults: the one place both `sim` and `hdl` read them.

See docs/microarchitecture.md for what each one means cycle by cycle.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from topologies.errors import ParameterError

DEFAULTS = {"alloc_iters": 1, "vcs": 4, "depth": 8, "packet_flits": 4, "link_latency": 1, "credit_latency": 1, "watchdog": 2000,
            "payload_bits": 32, "packet_id_bits": 16, "va_stages": 1, "sa_stages": 1, "st_stage": 0,
            "va_separable": 0, "va_choice_stage": 0}

# va_separable = 1: cycles from an input port's launch of a VC request to the cycle its answer is
# applied (launch register, crossing register, output arbiter -> grant register, crossing register);
# the VC may launch again only after it (docs/microarchitecture.md, "Separable VC allocation")
SEPARABLE_VA_TRIP = 4


@dataclass(frozen=True)
class RouterParams:
    vcs: int = DEFAULTS["vcs"]                      # V: virtual channels per port
    depth: int = DEFAULTS["depth"]                  # B: flits per VC buffer
    packet_flits: int = DEFAULTS["packet_flits"]    # L: flits per packet
    link_latency: int = DEFAULTS["link_latency"]    # cycles, SA grant -> downstream FIFO
    credit_latency: int = DEFAULTS["credit_latency"]  # cycles, FIFO pop -> upstream credit
    watchdog: int = DEFAULTS["watchdog"]            # idle cycles with flits in flight -> deadlock
    payload_bits: int = DEFAULTS["payload_bits"]    # payload field of the flit
    packet_id_bits: int = DEFAULTS["packet_id_bits"]  # the flit's packet id (low bits of the source's count)
    alloc_iters: int = DEFAULTS["alloc_iters"]      # switch-allocator iterations per cycle
    va_stages: int = DEFAULTS["va_stages"]          # VC allocation: 1 (choose + arbitrate), 2 (pipelined)
    # switch allocation: 1, 2 (input stage, then output stage), or 3 (the output stage's grant
    # registered: the granted flit is sent in the cycle after)
    sa_stages: int = DEFAULTS["sa_stages"]
    # switch traversal: 0 in the SA cycle, 1 in the cycle after (SA's choices registered, the
    # body read synchronous), 2 a cycle later still (the body read registered once more: a block
    # RAM's clock-to-output off the crossbar's path); the flit reaches the link st_stage cycles later
    st_stage: int = DEFAULTS["st_stage"]
    # 1: separable pipelined VC allocation (each input port launches one request a cycle, a P:1
    # arbiter per output VC, registers at both ends of each crossing: 4 more cycles per allocation)
    va_separable: int = DEFAULTS["va_separable"]
    # 1: the VC choice reads the output VCs' state (free, occupancy) of the previous cycle: the
    # best free VC per (network output, class) is registered; the VA arbiters check "free" again
    va_choice_stage: int = DEFAULTS["va_choice_stage"]

    def __post_init__(self):
        limits = {"vcs": (1, 64), "depth": (1, 1 << 16), "packet_flits": (1, 256), "link_latency": (1, 64),
                  "credit_latency": (1, 64), "watchdog": (10, 10**9), "payload_bits": (0, 4096), "packet_id_bits": (1, 32), "alloc_iters": (1, 8),
                  "va_stages": (1, 2), "sa_stages": (1, 3), "st_stage": (0, 2), "va_separable": (0, 1),
                  "va_choice_stage": (0, 1)}
        for key, (lo, hi) in limits.items():
            v = getattr(self, key)
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                raise ParameterError(f"{key}={v!r}: must be an integer in {lo}..{hi}")
        if self.sa_stages > 1 and self.alloc_iters != 1:
            raise ParameterError(f"alloc_iters={self.alloc_iters}: the pipelined switch allocator (sa_stages={self.sa_stages}) "
                                 "takes 1 iteration only")

    def as_dict(self) -> dict:
        return asdict(self)
