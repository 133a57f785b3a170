"""Unbounded proofs (SymbiYosys `mode prove`: k-induction) of each router stage, and the
equivalence check of the arithmetic PolarStar unit, at P = 5 ports, V = 3 VCs, B = 4 entries
(hdl/formal/*_props.py; the table of properties, depths and times is in docs/hdl.md, "Formal
proofs"). Every proof has a negative test: a planted bug (a stage subclass with one thing wrong)
must make it fail with a counterexample (FAIL, not UNKNOWN), so the proof is not vacuous.

CI runs one configuration per stage (the pipelined one the FPGA presets use where the stage has
one) and its negative test; `PSTAR_COSIM=full` adds the other pipeline options.
"""
import resource
import time

import numpy as np
import pytest
import tiers
from amaranth.hdl import Cat, Const, Signal

from hdl.buffer import VCBuffer
from hdl.delay import delay_line
from hdl.delay import register as _reg
from hdl.formal.alloc_props import sa_harness, va_harness, va_waiting_harness
from hdl.formal.buffer_props import buffer_harness
from hdl.formal.output_props import output_harness
from hdl.formal.router_props import router5_harness
from hdl.formal.runner import prove
from hdl.formal.unit_props import unit_harness
from hdl.router import Router
from hdl.router.input_unit import InputUnit
from hdl.router.output_unit import OutputUnit
from hdl.router.switch_allocator import SwitchAllocator
from hdl.router.vc_allocator import VCAllocator
from hdl.routing_units import PolarStarUnit

ROM = "flatten; memory_map; opt -fast"      # the unit check's tables as logic (no memory state)
FULL = tiers.full_only("long proof")

# the pipeline and latencies of fpga/presets.toml target-100mhz (at P = 5, V = 3, B = 4)
FPGA_TARGET = {"va_stages": 2, "va_separable": 1, "va_choice_stage": 1, "sa_stages": 3, "st_stage": 2,
               "link_latency": 3, "credit_latency": 3}

# the VC allocator of fpga/presets.toml target-100mhz
SEPARABLE_VA = {"va_separable": 1, "va_stages": 2, "va_choice_stage": 1}

# the pipeline net26 had with the central VA (fpga/presets.toml net26 now: separable VA, va_stages 1)
NET26 = {"va_stages": 2, "sa_stages": 2, "st_stage": 1}

# (id, harness factory, k (induction depth), yosys script, CI?)
PROOFS = [
    ("buffer_registered_fronts", lambda: buffer_harness(3, 4), 1, "", True),
    ("buffer_lutram_fronts", lambda: buffer_harness(3, 4, registered_front=False), 1, "", False),
    ("output_unit", lambda: output_harness(4, 5, 3, 4), 1, "", False),
    ("output_unit_thermometer", lambda: output_harness(4, 5, 3, 4, flags=2, thermometer=True), 1, "", True),
    ("output_unit_credit_latency3_sa3_link2",
     lambda: output_harness(4, 5, 3, 4, credit_delay=3, flags=3, link_delay=2), 1, "", True),
    ("va_central", lambda: va_harness(3, 4), 1, "", False),
    ("va_stages2", lambda: va_harness(3, 4, va_stages=2), 1, "", False),
    ("va_choice_stage", lambda: va_harness(3, 4, va_choice_stage=1), 1, "", True),
    ("va_stages2_choice_stage", lambda: va_harness(3, 4, va_stages=2, va_choice_stage=1), 1, "", False),
    ("va_separable", lambda: va_harness(3, 4, va_separable=1), 5, "", False),
    # a head's bounded waiting at the separable VA (the FPGA target's: registered requests and choice)
    ("va_separable_bounded_waiting", lambda: va_waiting_harness(3, 4, hold=3, **SEPARABLE_VA)[:2], 3, "", False),
    # the same for an ejecting head (it asks for local VC separable_eject_vc)
    ("va_separable_bounded_waiting_eject", lambda: va_waiting_harness(3, 4, hold=3, eject=True, **SEPARABLE_VA)[:2],
     3, "", True),
    ("sa_one_stage", lambda: sa_harness(3, 4), 1, "", False),
    ("sa_one_stage_two_iters", lambda: sa_harness(3, 4, alloc_iters=2), 1, "", False),
    ("sa_two_stages", lambda: sa_harness(3, 4, sa_stages=2), 1, "", False),
    ("sa_three_stages", lambda: sa_harness(3, 4, sa_stages=3), 2, "", True),
    ("polarstar_unit_q2_iq3", lambda: unit_harness(2, "iq", 3), 1, ROM, True),
    ("polarstar_unit_q3_iq3", lambda: unit_harness(3, "iq", 3), 1, ROM, False),
    # the whole router, one-cycle allocators: ownership, release at a tail, credits (k-induction)
    ("router5_ownership_and_credits", lambda: router5_harness(3, 4), 1, "", True),
    ("router5_va_stages2_choice_stage", lambda: router5_harness(3, 4, va_stages=2, va_choice_stage=1), 1, "", False),
    # pipelined SA: + the nomination/grant registers' invariants and the buffers' (router_inv.py)
    ("router5_sa_stages2", lambda: router5_harness(3, 4, sa_stages=2), 1, "", False),
    ("router5_sa_stages3_st_stage1", lambda: router5_harness(3, 4, sa_stages=3, st_stage=1), 1, "", False),
    ("router5_sa_stages3_st_stage2", lambda: router5_harness(3, 4, sa_stages=3, st_stage=2), 1, "", False),
    # packets never interleave on an output VC (+ the traversal registers' invariants with st_stage 1)
    ("router5_sa_stages3_st_stage1_packets",
     lambda: router5_harness(3, 4, checks=("packets",), sa_stages=3, st_stage=1), 1, "", False),
    ("router5_sa_stages3_st_stage2_packets",
     lambda: router5_harness(3, 4, checks=("packets",), sa_stages=3, st_stage=2), 1, "", False),
    # full tier: CI runs the same with link and credit latency 3 (below), which checks all of it too
    ("router4_sa_stages3_st_stage2_packets_v2_b2",
     lambda: router5_harness(2, 2, q=2, checks=("packets",), sa_stages=3, st_stage=2), 1, "", False),
    # + bounded response (any honest downstream) and the VA's bounded waiting (ejecting heads too)
    ("router5_packets_and_liveness", lambda: router5_harness(3, 4, checks=("packets", "liveness")), 1, "", False),
    ("router4_packets_and_liveness_v2_b2", lambda: router5_harness(2, 2, q=2, checks=("packets", "liveness")), 1, "",
     False),
    # link latency 3, credit latency 3 (the FPGA target's): + the flits in the input units' link
    # registers and the credits in the output unit's credit line (router_inv.link_invariants)
    # the pipelined SA's bounded response (hdl/formal/sa_response.py), any honest downstream;
    # with the central VA (net26's pipeline) the registered requests' bounded waiting too
    ("router5_net26_pipeline_response",
     lambda: router5_harness(3, 4, checks=("liveness",), **NET26), 1, "", False),
    ("router5_fpga_target_sa_response", lambda: router5_harness(3, 4, checks=("liveness",), **FPGA_TARGET), 1, "",
     False),
    ("router4_fpga_target_sa_response_v2_b2",
     lambda: router5_harness(2, 2, q=2, checks=("liveness",), **FPGA_TARGET), 1, "", True),
    ("router5_link3_credit3", lambda: router5_harness(3, 4, link_latency=3, credit_latency=3), 1, "", False),
    ("router5_sa_stages3_st_stage2_link3_credit3_packets",
     lambda: router5_harness(3, 4, checks=("packets",), sa_stages=3, st_stage=2, link_latency=3, credit_latency=3),
     1, "", False),
    ("router4_sa_stages3_st_stage2_link3_credit3_packets_v2_b2",
     lambda: router5_harness(2, 2, q=2, checks=("packets",), sa_stages=3, st_stage=2, link_latency=3,
                             credit_latency=3), 1, "", True),
    # packet order with any heads (a malformed one dropped with the rest of its packet)
    ("router5_packets_malformed_heads", lambda: router5_harness(3, 4, checks=("packets", "malformed")), 1, "", False),
    ("router5_sa_stages3_st_stage2_link3_credit3_packets_malformed_heads",
     lambda: router5_harness(3, 4, checks=("packets", "malformed"), sa_stages=3, st_stage=2, link_latency=3,
                             credit_latency=3), 1, "", False),
    # the FPGA target's pipeline (fpga/presets.toml target-100mhz) but its separable VA: + the VA's
    # registered requests tied to the fronts
    ("router5_fpga_target_pipeline_packets_malformed_heads",
     lambda: router5_harness(3, 4, checks=("packets", "malformed"), va_stages=2, va_choice_stage=1, sa_stages=3,
                             st_stage=2, link_latency=3, credit_latency=3), 1, "", False),
    # the separable VA inside the router: + its launches and grants in flight (router_inv.separable_invariants)
    ("router5_va_separable", lambda: router5_harness(3, 4, va_separable=1), 1, "", False),
    ("router5_fpga_target_packets_malformed_heads",
     lambda: router5_harness(3, 4, checks=("packets", "malformed"), **FPGA_TARGET), 1, "", False),
]


def _param(p):
    name, make, k, script, ci = p
    return pytest.param(name, make, k, script, id=name, marks=() if ci else FULL)


def _cpu():
    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


def _run(name, make, k, script, tmp_path, timeout=1800, mode="prove"):
    t0, w0 = _cpu(), time.monotonic()
    harness, ports = make()
    r = prove(harness, ports, name, mode=mode, depth=k, workdir=tmp_path, timeout=timeout, script=script)
    print(f"\n{name}: {r.status}, k={k}, CPU {_cpu() - t0:.1f} s (Python + Yosys + solver), "
          f"wall {time.monotonic() - w0:.1f} s")
    return r


@pytest.mark.slow
@pytest.mark.parametrize("name,make,k,script", [_param(p) for p in PROOFS])
def test_stage_proof(name, make, k, script, tmp_path):
    r = _run(name, make, k, script, tmp_path)
    assert r.passed, f"{name}: {r.status}, log {r.log}"


@FULL
def test_router5_packets_never_interleave_bounded(tmp_path):
    """The whole router's properties plus packet order on every output VC, bounded: 6 cycles from
    reset (about 6 minutes of CPU, 10 on a loaded machine), with any heads (malformed ones
    dropped); the unbounded proofs above assume well-formed heads (docs/hdl.md)."""
    r = _run("router5_bmc", lambda: router5_harness(3, 4, checks=("bmc",)), 6, "", tmp_path, timeout=3600, mode="bmc")
    assert r.passed, f"router5_bmc: {r.status}, log {r.log}"



# a head's bounded waiting at the VC allocator alone: 24 cycles from reset hold five allocations
# of a 3-cycle packet, one more than the input VCs that can hold the head's output VC
VA_WAITING_DEPTH = 24


def _va_waiting(name, params, tmp_path):
    return _run(name, lambda: va_waiting_harness(3, 4, hold=3, **params)[:2], VA_WAITING_DEPTH, "", tmp_path,
                mode="bmc")


@FULL
def test_central_va_bounds_a_heads_waiting(tmp_path):
    """The central allocator with registered requests and choice (the net26 preset's VA) gives
    the head's output VC to others at most n times in these cycles (proved unbounded in the
    router: `_va_fairness`; the separable allocator's, unbounded in the same harness:
    `va_separable_bounded_waiting`)."""
    r = _va_waiting("va_waiting_central", {"va_stages": 2, "va_choice_stage": 1}, tmp_path)
    assert r.passed, f"va_waiting_central: {r.status}, log {r.log}"


# heads whose output VC another VC of their own port can ask for, at the separable VA (the FPGA
# target's): a port launches one request per output VC, so such a head may wait for its
# sibling's grant before it launches; bounded only (docs/hdl.md). (head, n, BMC depth): the
# planted bugs below lose the VC n + 1 times (4 cycles a loss) by step 43 (class 2) and 22
# (injection), so the depth also covers heads that start waiting about 20 cycles after reset
SIBLING_HEADS = {
    "class2": ((1, 1), 8, 64),      # a class-2 VC: VCs 1 and 2 of every network port ask for it
    "inject": ((4, 2), 3, 44),      # a class-0 VC: every VC of the local port (4) asks for it
}


def _sibling_run(case, allocator_cls, tmp_path, expect):
    head, n, depth = SIBLING_HEADS[case]
    name = f"va_separable_sibling_{case}{'' if allocator_cls is None else '_' + allocator_cls.__name__}"
    got = {}

    def make():
        m, free, got["n"] = va_waiting_harness(3, 4, hold=3, allocator_cls=allocator_cls, head=head,
                                               **SEPARABLE_VA)
        return m, free
    r = _run(name, make, depth, "", tmp_path, mode="bmc")
    assert got["n"] == n                # the input VCs that can ask for the head's output VC
    assert r.passed == expect and (expect or "FAIL" in r.status), f"{name}: {r.status}, log {r.log}"


@FULL
@pytest.mark.parametrize("case", list(SIBLING_HEADS))
def test_separable_va_bounds_a_sibling_heads_waiting(case, tmp_path):
    """A head whose output VC a sibling VC of its port can also ask for loses it to other input
    VCs at most n times (n the input VCs that can ask for it) in the BMC's cycles from reset."""
    _sibling_run(case, None, tmp_path, expect=True)


# ---- planted bugs: each must make its proof fail with a counterexample ----

class OffByOneBuffer(VCBuffer):
    _slack = 1          # the full flag off by one: accepts a write when full


class WrongVCCredit(OutputUnit):
    """A returned credit counted on the next VC (its one-hot decode rotated)."""
    def _returned(self, m, o):
        oh = super()._returned(m, o)
        return Cat(oh[1:], oh[0])


def _with(obj, attr, value, fn):
    saved = getattr(obj, attr)
    setattr(obj, attr, value)
    try:
        return fn()
    finally:
        setattr(obj, attr, saved)


class StaleVCCreditLine(OutputUnit):
    """credit_latency >= 2: a returned credit decoded with the VC of the credit arriving now, not
    of the one delayed with it."""
    def _returned(self, m, o):
        cv, cvc = self.credit_in[o].valid, self.credit_in[o].payload
        dv, _ = delay_line(m, cv, cvc, self.credit_latency - 2, f"cin{o}")
        return _reg(m, Cat(*[dv & (cvc == w) for w in range(self.V)]), f"cin{o}_oh")


def _line_with_stale_vc(m, valid, payload, stages, name, shape=None):
    """`delay.delay_line`, but the flit leaves it with the VC of the flit one register behind."""
    regs = []
    for k in range(stages):
        v2, d2 = Signal(name=f"{name}_v{k}"), Signal(shape, name=f"{name}_d{k}", reset_less=True)
        m.d.sync += [v2.eq(valid), d2.eq(payload)]
        valid, payload = v2, d2
        regs.append(d2)
    if stages >= 2:
        out = Signal(shape, name=f"{name}_stale")
        m.d.comb += [out.eq(payload), out.vc.eq(regs[-2].vc)]
        payload = out
    return valid, payload


class StaleVCLinkInput(InputUnit):
    """link_latency >= 3: each flit written to the VC of the flit behind it on the link."""
    def elaborate(self, platform):
        import hdl.router.input_unit as module
        return _with(module, "delay_line", _line_with_stale_vc,
                     lambda: super(StaleVCLinkInput, self).elaborate(platform))


class DropKeepsCreditInput(InputUnit):
    """A malformed flit dropped without its credit returned (only a send returns one)."""
    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.credit_out.valid.eq(self.send.any())
        return m


class NonRequesterVA(VCAllocator):
    """Asks for every input VC, whether its front wants an output VC or not."""
    def _choose(self, m, i, v, best, key_less):
        ones = [[Const(1, 1)] * self.cfg.V for _ in range(self.cfg.P)]
        return _with(self, "request", ones, lambda: super(NonRequesterVA, self)._choose(m, i, v, best, key_less))


class StaleRequestVA(VCAllocator):
    """va_stages 2: a request registered for the second stage even when it was granted in the
    first (a VC can be granted twice)."""
    def _registered_requests(self, m, req, won_any):
        return super()._registered_requests(m, req, [Const(0, 1)] * len(won_any))


class BusyBlindVA(VCAllocator):
    """Sees every output VC as free (grants a VC a packet holds)."""
    def elaborate(self, platform):
        zeros = [Const(0, self.cfg.V)] * self.cfg.P
        return _with(self, "busy", zeros, lambda: super(BusyBlindVA, self).elaborate(platform))


class CreditBlindSA(SwitchAllocator):
    """Eligibility that ignores the credits of the held output VC."""
    def _eligible(self, m, nom, gnt, won):
        k = self.cfg.params.sa_stages
        ones = [[Const((1 << k) - 1, k)] * self.cfg.V for _ in range(self.cfg.P)]
        return _with(self, "credit", ones, lambda: super(CreditBlindSA, self)._eligible(m, nom, gnt, won))


class BusyBlindRouter(Router):
    """A router whose VC allocator sees every output VC as free."""
    def _stages(self, m):
        import hdl.router.router as module
        return _with(module, "VCAllocator", BusyBlindVA, lambda: super(BusyBlindRouter, self)._stages(m))


def _router_with(name, cls):
    """A Router whose stage `name` (a class the router module builds) is `cls`."""
    import hdl.router.router as module

    class Planted(Router):
        def _stages(self, m):
            return _with(module, name, cls, lambda: super(Planted, self)._stages(m))
    return Planted


class NominationBlindSA(SwitchAllocator):
    """Pipelined SA that nominates a VC as if it had no nomination or grant in flight (may send
    a flit it no longer has, or after its tail)."""
    def _eligible(self, m, nom, gnt, won):
        zeros = [Const(0, self.cfg.V)] * self.cfg.P
        return super()._eligible(m, zeros if nom is not None else None, zeros, won)


class StuckPointerSA(SwitchAllocator):
    """The input stage's round-robin pointers never move (a VC can starve)."""
    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += [m._named_submodules[f"sa_in_{i}"][0].commit.eq(0) for i in range(self.cfg.P)]
        return m


class _StuckArbitersVA(VCAllocator):
    """A VC allocator whose arbiters named with one of `stuck_prefixes()` never move their
    pointers."""
    def stuck_prefixes(self) -> tuple[str, ...]:
        raise NotImplementedError

    def elaborate(self, platform):
        m = super().elaborate(platform)
        prefixes = self.stuck_prefixes()
        m.d.comb += [arb.commit.eq(0) for name, (arb, _) in m._named_submodules.items() if name.startswith(prefixes)]
        return m


class StuckOutputPointerSVA(_StuckArbitersVA):
    """The separable VA's output arbiters' pointers never move (a port before the head's in
    round-robin order wins its output VC for ever)."""
    def stuck_prefixes(self):
        return ("sva_out_",)


class StuckPortPointerSVA(_StuckArbitersVA):
    """The separable VA's launch arbiters' pointers never move (a VC of a port before the head's
    in round-robin order keeps launching)."""
    def stuck_prefixes(self):
        return ("sva_port_",)


class StuckPointerVA(_StuckArbitersVA):
    """The output VCs' round-robin pointers never move (a head can lose its VC for ever)."""
    def stuck_prefixes(self):
        return ("va_arb_",)


class StuckLocalPointerVA(_StuckArbitersVA):
    """The local port's VCs' round-robin pointers never move (an ejecting head can lose them for
    ever); the network output VCs' arbiters are right."""
    def stuck_prefixes(self):
        return tuple(f"va_arb_{o}_" for o in range(self.cfg.R, self.cfg.P))


class FlickeringRequestRouter(Router):
    """Input VC (0, 0)'s request to the VC allocator drops every other cycle while its head waits
    (the separable VA's waiting proof assumes a request stays until granted)."""
    def _connect_allocators(self, m, stages, alloc):
        frees = super()._connect_allocators(m, stages, alloc)
        inputs, vca = stages[0], stages[1]
        valid, fr = alloc[0], inputs[0].front[0]
        toggle = Signal(name="flicker")
        m.d.sync += toggle.eq(~toggle)
        m.d.comb += vca.request[0][0].eq(inputs[0].count_gt[0][0] & ~valid[0][0] & fr.flit.head & ~fr.bad & toggle)
        return frees


class EarlyReleaseRouter(Router):
    """Releases an input VC's output VC when its head leaves, not its tail."""
    def _connect_allocators(self, m, stages, alloc):
        frees = super()._connect_allocators(m, stages, alloc)
        inputs, _, swa, _, outs = stages
        valid, _, oh, _ = alloc
        V = self.params.vcs
        early = [Signal(V, name=f"early_{i}") for i in range(self.P)]
        for i in range(self.P):
            heads = Cat(*[inputs[i].front[v].flit.head for v in range(V)])
            m.d.comb += early[i].eq(frees[i] | swa.send[i] & heads)
            for v in range(V):
                with m.If(early[i][v]):
                    m.d.sync += valid[i][v].eq(0)
        self._planted = (outs, oh, early)
        return frees

    def elaborate(self, platform):
        m = super().elaborate(platform)
        outs, oh, early = self._planted
        for o in range(self.P):
            m.d.comb += outs.released[o].eq(Cat(*[self._on((o, w), early, oh) for w in range(self.params.vcs)]))
        return m


def _bad_unit(net):
    """The unit with one wrong entry in its supernode first-port table (router a of a supernode
    towards b sends on another port)."""
    import copy
    u = PolarStarUnit(net)
    a = copy.copy(u.unit)
    sp = np.array(a.sn_port).copy()
    sp[0, 1] = 0 if sp[0, 1] != 0 else 1
    a.sn_port = sp
    u.unit = a
    return u


def _drop_a_minimal_port(rows):
    """The reference with a wrong entry: router 1 has no minimal port towards router 0."""
    n = int(round(len(rows) ** 0.5))
    rows[1 * n + 0] = 0


# (id, harness factory, k, script, CI?): k large enough for the base case to reach the bug
BROKEN = [
    ("buffer_full_flag_off_by_one", lambda: buffer_harness(3, 4, buffer_cls=OffByOneBuffer), 6, "", True),
    ("buffer_full_flag_off_by_one_lutram",
     lambda: buffer_harness(3, 4, buffer_cls=OffByOneBuffer, registered_front=False), 6, "", False),
    ("output_unit_credit_to_wrong_vc",
     lambda: output_harness(4, 5, 3, 4, credit_delay=3, flags=3, link_delay=2, unit_cls=WrongVCCredit), 10, "",
     False),
    ("output_unit_dishonest_downstream", lambda: output_harness(4, 5, 3, 4, dishonest=True), 3, "", False),
    ("va_grant_to_non_requester", lambda: va_harness(3, 4, allocator_cls=NonRequesterVA, va_choice_stage=1), 2, "",
     True),
    ("va_separable_grants_busy_vc", lambda: va_harness(3, 4, allocator_cls=BusyBlindVA, va_separable=1), 5, "",
     False),
    ("sa_ignores_credit", lambda: sa_harness(3, 4, allocator_cls=CreditBlindSA, sa_stages=3), 5, "", True),
    ("sa_one_stage_ignores_credit", lambda: sa_harness(3, 4, allocator_cls=CreditBlindSA), 2, "", False),
    ("router5_two_holders_of_an_output_vc", lambda: router5_harness(3, 4, router_cls=BusyBlindRouter), 5, "",
     False),
    ("router5_dishonest_downstream", lambda: router5_harness(3, 4, checks=("dishonest",)), 2, "", False),
    ("router4_sa_stages2_nomination_blind",
     lambda: router5_harness(2, 2, q=2, sa_stages=2, router_cls=_router_with("SwitchAllocator", NominationBlindSA)),
     6, "", False),
    ("router4_release_at_head",
     lambda: router5_harness(2, 2, q=2, checks=("packets",), router_cls=EarlyReleaseRouter),
     4, "", False),
    ("router4_stuck_sa_pointer",
     lambda: router5_harness(2, 2, q=2, checks=("liveness",),
                             router_cls=_router_with("SwitchAllocator", StuckPointerSA)),
     8, "", False),
    ("router4_stuck_va_pointer",
     lambda: router5_harness(2, 2, q=2, checks=("liveness",), router_cls=_router_with("VCAllocator", StuckPointerVA)),
     6, "", True),
    ("router4_link3_flit_to_wrong_vc",
     lambda: router5_harness(2, 2, q=2, sa_stages=3, st_stage=2, link_latency=3, credit_latency=3,
                             router_cls=_router_with("InputUnit", StaleVCLinkInput)), 5, "", False),
    ("router4_credit3_credit_to_wrong_vc",
     lambda: router5_harness(2, 2, q=2, link_latency=3, credit_latency=3,
                             router_cls=_router_with("OutputUnit", StaleVCCreditLine)), 10, "", False),
    ("router4_malformed_drop_keeps_credit",
     lambda: router5_harness(2, 2, q=2, checks=("packets", "malformed"),
                             router_cls=_router_with("InputUnit", DropKeepsCreditInput)), 4, "", False),
    ("router4_va_stages2_request_kept_after_grant",
     lambda: router5_harness(2, 2, q=2, checks=("packets", "malformed"), va_stages=2, va_choice_stage=1, sa_stages=3,
                             st_stage=2, link_latency=3, credit_latency=3,
                             router_cls=_router_with("VCAllocator", StaleRequestVA)), 6, "", False),
    ("router4_va_separable_two_holders",
     lambda: router5_harness(2, 2, q=2, va_separable=1, router_cls=_router_with("VCAllocator", BusyBlindVA)), 6, "",
     False),
    ("router4_va_stages2_stuck_va_pointer",
     lambda: router5_harness(2, 2, q=2, checks=("liveness",), va_stages=2,
                             router_cls=_router_with("VCAllocator", StuckPointerVA)), 8, "", False),
    ("router4_stuck_local_va_pointer",
     lambda: router5_harness(2, 2, q=2, checks=("liveness",),
                             router_cls=_router_with("VCAllocator", StuckLocalPointerVA)), 6, "", False),
    ("router4_fpga_target_flickering_va_request",
     lambda: router5_harness(2, 2, q=2, checks=("liveness",), **FPGA_TARGET, router_cls=FlickeringRequestRouter),
     6, "", False),
    ("router4_speculative_sa_starves_a_lone_tail",
     lambda: router5_harness(2, 2, q=2, checks=("liveness",), sa_stages=3, st_stage=2,
                             router_cls=_router_with("SwitchAllocator", SpeculativeSA)), 4, "", False),
    ("polarstar_unit_wrong_entry", lambda: unit_harness(2, "iq", 3, unit_factory=_bad_unit), 1, ROM, True),
    ("polarstar_unit_reference_wrong_entry",
     lambda: unit_harness(2, "iq", 3, table_patch=_drop_a_minimal_port), 1, ROM, False),
]


@pytest.mark.parametrize("name,make,k,script", [_param(p) for p in BROKEN])
def test_planted_bug_fails_its_proof(name, make, k, script, tmp_path):
    r = _run(name, make, k, script, tmp_path)
    assert not r.passed and "FAIL" in r.status, f"{name}: {r.status}, log {r.log}"


@FULL
@pytest.mark.parametrize("eject", [False, True], ids=["network", "eject"])
def test_stuck_output_pointer_breaks_separable_waiting(eject, tmp_path):
    """The separable VA's bounded waiting with its output arbiters' pointers stuck: the port
    before the head's keeps winning, and the potential L + D <= n fails 19 cycles from reset
    (BMC: the head's five losses take 4 cycles each, beyond the proof's k = 3); for a network
    output VC (n = 4) and for the local VC of an ejecting head (n = 5: one loss, 4 cycles, more)."""
    name = f"va_separable_stuck_output_pointer_{'eject' if eject else 'network'}"
    r = _run(name, lambda: va_waiting_harness(3, 4, hold=3, allocator_cls=StuckOutputPointerSVA, eject=eject,
                                              **SEPARABLE_VA)[:2], 26 if eject else 20, "", tmp_path, mode="bmc")
    assert not r.passed and "FAIL" in r.status, f"{name}: {r.status}, log {r.log}"


@FULL
@pytest.mark.parametrize("case,allocator_cls", [("class2", StuckOutputPointerSVA), ("inject", StuckPortPointerSVA)],
                         ids=["class2", "inject"])
def test_stuck_pointer_breaks_sibling_waiting(case, allocator_cls, tmp_path):
    """The sibling heads' bound with the output arbiters' pointers stuck (class 2: a port before
    the head's keeps winning; FAIL at step 43) or the launch arbiters' (inject: the local port's
    VCs 0 and 1 keep launching before VC 2; FAIL at step 22)."""
    _sibling_run(case, allocator_cls, tmp_path, expect=False)


class SpeculativeSA(SwitchAllocator):
    """Pipelined SA with the old speculative eligibility: a nomination counted as in flight
    whether it wins this cycle's output stage or not (a lone tail then asks every other cycle)."""
    def _eligible(self, m, nom, gnt, won):
        return super()._eligible(m, nom, gnt, [Const(1, 1)] * self.cfg.P if won else won)


def _lone_tail_wait(sa_stages: int, st_stage: int, tail_at: int, cycles: int = 60, router_cls=Router) -> int | None:
    """Simulate router 0 of PolarStar q=3 IQ d'=0 (P = 5, V = 3, B = 4): input ports 0 and 2 stream
    one long packet each (every flit their credits allow) and input port 1 a 2-flit packet whose
    tail comes at cycle `tail_at`, all on VC 0 and to the local endpoint (the three hold the
    three local output VCs). Returns the cycles from the victim's tail reaching its buffer to its
    leaving (None: still waiting after `cycles`)."""
    from amaranth.sim import Simulator

    from contract.flit import flit_layout
    from contract.params import RouterParams
    from topologies import polarstar

    net = polarstar(3, "iq", 0)
    R = int(net.ports.max())
    prm = RouterParams(vcs=3, depth=4, packet_flits=64, payload_bits=1, packet_id_bits=2, sa_stages=sa_stages,
                       st_stage=st_stage)
    dut = router_cls(R, 1, prm, flit_layout(net.num_routers, 1, prm), lambda lanes: PolarStarUnit(net, lanes),
                     net.num_routers, 3, router_id=0)
    left = []

    async def bench(ctx):
        credit, seq = [4, 4, 4], [0, 0, 0]
        for t in range(cycles):
            for i in range(3):
                go = credit[i] > 0 and (i != 1 or t in (0, tail_at))
                ctx.set(dut.flit_in[i].valid, go)
                if go:
                    tail = i == 1 and t == tail_at
                    ctx.set(dut.flit_in[i].payload, {"head": seq[i] == 0, "tail": tail, "vc": 0, "src": 1 + i, "dst": 0,
                                                     "hops": 1, "seq": seq[i], "packet": i})
                    credit[i], seq[i] = credit[i] - 1, seq[i] + 1
            await ctx.tick()
            credit = [c + ctx.get(dut.credit_out[i].valid) for i, c in enumerate(credit)]
            out = dut.flit_out[dut.P - 1]
            flit = ctx.get(out.payload)
            if ctx.get(out.valid) and flit.packet == 1 and flit.tail:
                left.append(t)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return left[0] - tail_at - 1 if left else None


@FULL
@pytest.mark.parametrize("sa_stages,st_stage", [(2, 0), (2, 1), (3, 0), (3, 2)])
def test_pipelined_sa_serves_a_lone_tail(sa_stages, st_stage):
    """The pipelined SA's lone tail (a VC holding an output VC with one flit, its tail, and a
    credit), with two ports streaming to the same output: it was a counterexample to a bounded
    response when a nomination counted as in flight whether it won or not (it asked every other
    cycle, the two streams took turns and the output arbiter's pointer passed it each time;
    `SpeculativeSA`, checked to starve it). A losing nomination now takes nothing in flight, so
    the tail asks in every cycle and the output's round robin serves it within P - 1 other grants:
    it leaves within the pipeline's latency (sa_stages - 1 + st_stage) + P - 1 cycles of
    arriving, for the tail arriving on either parity of cycle."""
    P = 5
    bound = sa_stages - 1 + st_stage + P - 1
    tails = range(5, 9)
    assert all(_lone_tail_wait(1, 0, t) <= 1 for t in tails)
    waits = [_lone_tail_wait(sa_stages, st_stage, t) for t in tails]
    assert all(w is not None and w <= bound for w in waits), f"waits {waits} (None: never left in 60 cycles), bound {bound}"
    starved = [_lone_tail_wait(sa_stages, st_stage, t, router_cls=_router_with("SwitchAllocator", SpeculativeSA))
               for t in (6, 8)]
    assert None in starved, f"the speculative rule served the tail: waits {starved}"
