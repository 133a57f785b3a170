"""The fast lockstep (cosim/replay.py): the Verilated network replays the model's endpoint
side from C++ and every ejected flit, credit and drop is compared with the model.

The cocotb lockstep (test_cocotb_network.py) is the reference closed loop; these tests check
that the replay agrees with the model on the same networks (with garbage and a drain), with
both engines: "top" (the Verilated network top of `network_verilog`) and "netlist" (the router
module wired in C++ from the same link table, single- and multi-threaded), that its comparison
catches a moved flit and a missing credit and names them, and they run the 104-router network
(PolarStar q=3 IQ d'=3) with min, arithmetic PolarStar and Polarized routing near saturation
(2,000 cycles in CI, 20,000 with PSTAR_COSIM=full): every ejected flit in cycle, endpoint and
contents.
"""
import os

import numpy as np
import pytest

import cosim.replay as replay_module
import tiers
from cosim.endpoints import Flits, payload_of
from cosim.replay import FlitWords, default_threads, payload_words, replay
from hdl.network import NetworkPlan
from sim.engine import EV_CREDIT

PS26 = "polarstar:q=3,supernode=iq,degree=0"
PS104 = "polarstar:q=3,supernode=iq,degree=3"
FULL_ONLY = tiers.full_only("another 104-router Verilator build")
pytestmark = pytest.mark.slow


def test_flit_words_pack_like_endpoints():
    """The vectorized packing equals the per-flit Python packing the cocotb benches use."""
    fields = {"head": (0, 1), "tail": (1, 1), "vc": (2, 3), "a": (5, 30), "b": (35, 16), "payload": (51, 32)}
    fw = FlitWords(fields, 83)
    rng = np.random.default_rng(3)
    vals = {k: rng.integers(0, 1 << w, 50, dtype=np.uint64) for k, (_, w) in fields.items() if k != "payload"}
    pk, seq = rng.integers(0, 1 << 20, 50), rng.integers(0, 4, 50)
    vals["payload"] = payload_words(pk, seq, 32)
    words = fw.pack(vals, 50)
    flits = Flits(fields)
    for i in range(50):
        one = {k: int(v[i]) for k, v in vals.items()}
        assert one["payload"] == payload_of(int(pk[i]), int(seq[i]), 32)
        assert fw.to_int(words[i]) == flits.pack(**one)
    assert fw.to_int(fw.keep) == flits.pack(**{k: (1 << w) - 1 for k, (_, w) in fields.items() if k != "vc"})
    real = FlitWords({"head": (0, 1), "vc": (1, 2), "hops": (3, 4), "phase": (7, 1), "dst": (8, 5)}, 13)
    assert real.to_int(real.keep) == 0b1_1111_0000_0001


# CI: the netlist engine on one thread; the whole-top engine and two threads in the full tier
@pytest.mark.parametrize("engine,threads", [pytest.param("top", 1, marks=tiers.full_only("another Verilator build")),
                                            ("netlist", 1), pytest.param("netlist", 2, marks=tiers.full_only("CI budget"))])
def test_replay_matches_model_with_garbage_and_drain(engine, threads):
    """26 routers beyond saturation, with garbage: every flit, credit and drop matches, and after
    the sources stop the network drains with every injected flit delivered."""
    rng = np.random.default_rng(5)
    n = 120
    garbage = (rng.integers(0, 26, n), rng.integers(10, 5000, n), rng.integers(0, 4, n))
    rep = replay(PS26, "polarstar", 4, 0.9, 6000, garbage=garbage, chunk=1500, drain=True, engine=engine,
                 threads=threads)
    assert rep["engine"] == engine
    # the netlist engine evaluates the routers function by function (cosim/eval_order.py
    # recognizes this Verilator's schedule: a new version it does not would only be slower)
    assert rep["per_function"] == (engine == "netlist")
    model = rep["model"]
    assert rep["mismatch"] is None, rep["mismatch"]
    assert rep["flits_matched"] == model.injected_flits == model.ejected_flits > 0.4 * 6000 * 26
    assert rep["credits_matched"] == model.injected_flits + model.garbage_sent
    assert rep["dropped"] == model.dropped == model.garbage_sent == n
    assert rep["packets_abandoned"] > 0 and rep["in_flight_at_end"] == 0
    assert 0 < rep["max_network_latency"] <= rep["max_packet_latency"]
    # each side's CPU time is counted (the harness's once it has quit), within what the wall time allows
    for side in ("python", "rtl"):
        assert 0 < rep[f"{side}_cpu_s"] <= os.cpu_count() * rep["seconds"] + 0.5, (side, rep)
        cycles = rep["cycles"] + rep["drain_cycles"]
        assert rep[f"{side}_cycles_per_cpu_s"] == pytest.approx(cycles / rep[f"{side}_cpu_s"], rel=0.05)


@tiers.full_only("CI budget: a fallback clocking; CI replays with the default one")
def test_replay_with_eval_per_router():
    """The netlist engine's other clocking, eval() per router (where cosim/eval_order.py does not
    recognize Verilator's schedule): the same closed loop, every flit and credit matched."""
    rep = replay(PS26, "polarstar", 4, 0.9, 1500, chunk=500, per_function=False)
    assert rep["per_function"] is False and rep["mismatch"] is None, rep["mismatch"]
    assert rep["flits_matched"] == rep["model"].ejected_flits > 0.4 * 1500 * 26


def test_replay_turn_classes_in_the_shared_module(monkeypatch):
    """Turn VC classes (2 VCs, minimal routing: the classes of the 26-router FPGA network) in the
    shared router module, whose class steps come from its `up` input, tied per router: every flit
    and credit as the model delivers them, near saturation. With every `up` tied to 0 (a
    down-then-up turn never steps a class) the replay reports a mismatch."""
    rep = replay(PS26, "min", 2, 0.6, 3000, threads=1, vc_policy="turns")
    assert rep["mismatch"] is None, rep["mismatch"]
    assert rep["model"].routing.vc_policy.name == "turns" and rep["vc_policy"] == "turns"
    assert rep["flits_matched"] == rep["model"].ejected_flits > 0.4 * 3000 * 26
    monkeypatch.setattr(NetworkPlan, "up_of", lambda self, r: 0)
    bad = replay(PS26, "min", 2, 0.6, 1000, threads=1, vc_policy="turns")
    assert bad["mismatch"] is not None


# CI: 2,000 cycles of each routing (a Verilator build each); the full tier 20,000
CYCLES_104 = 20000 if tiers.FULL else 2000


@pytest.mark.parametrize("routing,vcs,load,cycles", [
    # VCs as tests/test_cocotb_network.py: 4, or for Polarized the fewest its CDG accepts here (8);
    # loads just past each routing's saturation (accepted ~0.66 min, ~0.62 PolarStar, ~0.47 Polarized)
    # the arithmetic PolarStar unit's cases S, SS, ES, SE need 104 routers; the table units are
    # also checked against routing_logic in test_hdl_routing.py
    ("polarstar", 4, 0.7, CYCLES_104), ("min", 4, 0.7, CYCLES_104), ("polarized", 8, 0.6, CYCLES_104)])
def test_replay_104_routers_near_saturation(routing, vcs, load, cycles):
    """The 104-router network (208 endpoints), `cycles` of uniform traffic near saturation (2,000 in
    CI, 20,000 in the full tier): every ejected flit, credit and cycle matches the model (netlist
    engine; the cocotb lockstep of the same configurations is the PSTAR_COSIM=full tier of
    test_cocotb_network.py)."""
    rep = replay(PS104, routing, vcs, load, cycles)
    model = rep["model"]
    assert rep["mismatch"] is None, rep["mismatch"]
    assert rep["per_function"]             # the routers evaluated function by function (eval_order)
    assert rep["threads"] == default_threads("netlist", 104)      # two on a machine with two cores
    assert rep["flits_matched"] == model.ejected_flits > 0.5 * load * cycles * model.net.num_endpoints
    assert rep["credits_matched"] >= rep["flits_matched"]
    print(f"\n104 routers, {routing}: {rep['flits_matched']} flits, {rep['cycles_per_s']} cycles/s "
          f"(per CPU second: model and checks {rep['python_cycles_per_cpu_s']}, Verilator {rep['rtl_cycles_per_cpu_s']}), build {rep['build']}")


@tiers.full_only("CI budget: a Verilator build; CI checks the Polarized unit on damaged networks in test_hdl_routing.py")
def test_replay_polarized_on_a_damaged_network():
    """10% of the 26-router network's links failed: the model routes the damaged network with
    Polarized (recomputed tables, dead-end escapes), the RTL keeps its wiring and gets the same
    tables through `load`; every flit, credit and cycle matches, and some packets escape a dead end
    (VCs: the fewest the damaged channel dependency graph accepts, as test_cocotb_network.py)."""
    rep = replay(PS26, "polarized", 8, 0.5, 4000, fail=0.1)
    model = rep["model"]
    assert rep["mismatch"] is None, rep["mismatch"]
    assert rep["flits_matched"] == model.ejected_flits > 0.3 * 4000 * model.net.num_endpoints
    assert rep["credits_matched"] >= rep["flits_matched"]
    assert (model.pk_phase[:model.num_packets] == 0).any()          # some packets escaped dead ends
    assert len(model.net.attrs["failed_links"]) == round(0.1 * (model.net.num_links + len(model.net.attrs["failed_links"])))


def test_default_threads_follow_the_network_size(monkeypatch):
    """Two threads from 64 routers on with two cores or more (26 routers replay faster on one,
    104 on two); the top engine and a one-core machine one."""
    monkeypatch.setattr(replay_module, "cores", lambda: 2)
    assert [default_threads("netlist", n) for n in (26, 63, 64, 104, 1064)] == [1, 1, 2, 2, 2]
    assert default_threads("top", 104) == 1
    monkeypatch.setattr(replay_module, "cores", lambda: 1)
    assert default_threads("netlist", 104) == 1


def test_netlist_engine_refuses_other_link_latency():
    from contract.params import RouterParams
    from hdl.network import plan
    from cosim.replay import netlist_header
    from topologies import build
    top = plan(build(PS26), "min", RouterParams(vcs=4, link_latency=2))
    with pytest.raises(ValueError, match="engine='netlist': link and credit latency 1"):
        netlist_header(top)
    with pytest.raises(ValueError, match="engine='x': allowed: netlist, top"):
        replay(PS26, "min", 4, 0.5, 10, engine="x")
    with pytest.raises(ValueError, match="threads=0: must be an integer >= 1"):
        replay(PS26, "min", 4, 0.5, 10, threads=0)
    with pytest.raises(ValueError, match="threads=2: engine='top' runs on one thread"):
        replay(PS26, "min", 4, 0.5, 10, engine="top", threads=2)


def test_replay_names_a_moved_flit():
    """Move one ejection of the model a cycle later: the report names that cycle, endpoint and packet."""
    moved = {}

    def tamper(kind, rows):
        if kind == "eject" and "row" not in moved and len(rows) > 300:
            moved["row"] = rows[300].tolist()
            rows[300, 0] += 1
        return rows

    rep = replay(PS26, "polarstar", 4, 0.6, 3000, chunk=1000, tamper=tamper)
    cycle, endpoint, packet, seq = moved["row"]
    mm = rep["mismatch"]
    assert mm["kind"] == "eject" and mm["cycle"] == cycle
    assert any(e == endpoint and f["packet"] == packet & 0xFFFF and f["seq"] == seq for e, f in mm["rtl_only"])


def test_replay_catches_a_missing_credit():
    """Drop one credit from the model's endpoint events: the credit comparison names it."""
    gone = {}

    def tamper(kind, rows):
        if kind == "events" and "row" not in gone:
            k = int(np.flatnonzero(rows[:, 0] == EV_CREDIT)[50])
            gone["row"] = rows[k].tolist()
            rows = np.delete(rows, k, axis=0)
        return rows

    rep = replay(PS26, "polarstar", 4, 0.6, 2000, chunk=1000, tamper=tamper)
    _, cycle, endpoint, vc, _, _ = gone["row"]
    mm = rep["mismatch"]
    assert mm["kind"] == "credit" and mm["cycle"] == cycle
    assert [cycle, endpoint, vc] in mm["rtl_only"] and not mm["model_only"]
