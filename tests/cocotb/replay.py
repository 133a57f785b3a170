"""Fast lockstep: the Verilated network replays the model's endpoint side (C++, no cocotb).

network_bench.py drives every endpoint from Python each cycle, which holds a 104-router
co-simulation to a few hundred cycles/s. Here the model (`NetworkSim(endpoint_trace=...)`) logs
what its endpoints do: every flit sent (cycle, endpoint, VC, packet, seq, or a garbage flit)
and every credit they count. A C++ Verilator harness (replay_main.cpp) replays the sends into
the RTL chunk by chunk and answers with what the RTL gave the endpoints. Per chunk, Python
checks that:
  - the RTL ejected exactly the model's flits: cycle, endpoint and every field but vc and hops;
  - it returned exactly the model's credits (cycle, endpoint, VC). The endpoints' only inputs
    are these credits, so their decisions (when to send, on which VC) are the ones the RTL's
    credits lead to: the replay is the same closed loop as network_bench.py's;
  - `dropped` steps exactly when the model drops garbage (one cycle later, as read).
The first difference is reported with its cycle, endpoint and decoded flit.

`replay(spec, routing, vcs, load, cycles, ...)` -> report dict (flits, credits, drops, speed).
"""
from __future__ import annotations

import pathlib
import subprocess
import sys
import time

import numpy as np

from endpoints import Flits, garbage_flit
from lockstep import network_build
from sim.engine import EV_CREDIT, EV_INJECT
from sim.flit import CHANGED_IN_FLIGHT
from sim.network_sim import NetworkSim
from sim.params import RouterParams
from topologies import build

MAIN = pathlib.Path(__file__).resolve().parent / "replay_main.cpp"
# values the endpoint puts in these fields (Endpoints.template)
INJECT_CONSTANTS = {"hops": 0, "inter": 0, "phase": 1}


def payload_words(pk: np.ndarray, seq: np.ndarray, bits: int) -> np.ndarray:
    """endpoints.payload_of, vectorized (uint64; payload fields wider than 64 bits are zero above)."""
    v = pk.astype(np.uint64) * np.uint64(2654435761) + seq.astype(np.uint64) * np.uint64(40503) + np.uint64(12345)
    return v & np.uint64((1 << bits) - 1) if bits < 64 else v


class FlitWords:
    """Flits as rows of 32-bit words (the harness's wire format), packed with the layout's
    field offsets; `keep` masks out the fields the network changes (sim.flit.CHANGED_IN_FLIGHT)."""

    def __init__(self, fields: dict, W: int):
        self.fields, self.W = fields, W
        self.nw = (W + 31) // 32
        self.keep = self.pack({k: np.array([(1 << min(w, 64)) - 1], dtype=np.uint64)
                               for k, (_, w) in fields.items() if k not in CHANGED_IN_FLIGHT}, 1)[0]

    def pack(self, values: dict, n: int) -> np.ndarray:
        out = np.zeros((n, self.nw), dtype=np.uint64)
        for name, v in values.items():
            off, w = self.fields[name]
            v = np.broadcast_to(np.asarray(v, dtype=np.uint64), (n,))
            for j in range(0, min(w, 64), 32):
                pw = min(32, w - j)
                piece = (v >> np.uint64(j)) & np.uint64((1 << pw) - 1)
                i, s = divmod(off + j, 32)
                out[:, i] |= (piece << np.uint64(s)) & np.uint64(0xFFFFFFFF)
                if s and pw > 32 - s:
                    out[:, i + 1] |= piece >> np.uint64(32 - s)
        return out.astype(np.uint32)

    def from_int(self, value: int) -> np.ndarray:
        return np.array([(value >> (32 * k)) & 0xFFFFFFFF for k in range(self.nw)], dtype=np.uint32)

    def to_int(self, words) -> int:
        return sum(int(w) << (32 * k) for k, w in enumerate(words))


class ReplayRTL:
    """The harness process: reset at start, `load(rows)`, `run(t0, cycles, cyc, ep, words)`."""

    def __init__(self, exe: str, E: int, W: int, vb: int, load_bits: int):
        self.nw = (W + 31) // 32
        self.lw = (load_bits + 31) // 32
        self.proc = subprocess.Popen([exe, str(E), str(W), str(vb), str(load_bits)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)

    def load(self, rows):
        data = np.array([[(r >> (32 * k)) & 0xFFFFFFFF for k in range(self.lw)] for r in rows], dtype="<u4")
        self._send(b"L" + np.uint32(len(rows)).tobytes() + data.tobytes())

    def run(self, t0: int, cycles: int, cyc: np.ndarray, ep: np.ndarray, words: np.ndarray):
        rec = np.zeros(len(cyc), dtype=[("c", "<i4"), ("e", "<i4"), ("w", "<u4", (self.nw,))])
        rec["c"], rec["e"], rec["w"] = cyc, ep, words
        self._send(b"R" + np.array([t0, cycles, len(cyc)], dtype="<i8").tobytes() + rec.tobytes())
        ne, nc, nd = np.frombuffer(self._read(24), dtype="<i8")
        ej = np.frombuffer(self._read(int(ne) * (8 + 4 * self.nw)),
                           dtype=[("c", "<i4"), ("e", "<i4"), ("w", "<u4", (self.nw,))])
        cr = np.frombuffer(self._read(int(nc) * 12), dtype="<i4").reshape(-1, 3)
        dr = np.frombuffer(self._read(int(nd) * 8), dtype="<i4").reshape(-1, 2)
        return ej, cr, dr

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b"Q")
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
            self.proc.wait(timeout=30)

    def _send(self, data: bytes):
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise RuntimeError(f"the Verilator harness stopped (exit {self.proc.wait()})") from None

    def _read(self, n: int) -> bytes:
        data = self.proc.stdout.read(n) if n else b""
        if len(data) != n:
            raise RuntimeError(f"the Verilator harness stopped (exit {self.proc.wait()})")
        return data


class _Matcher:
    """Rows (cycle first, then the fields compared) from the RTL and the model, compared up to a
    horizon each chunk; rows past it wait for the next chunk."""

    def __init__(self, width: int):
        self.rtl = np.zeros((0, width), dtype=np.int64)
        self.model = np.zeros((0, width), dtype=np.int64)
        self.count = 0

    def add(self, rtl: np.ndarray, model: np.ndarray):
        self.rtl = np.concatenate([self.rtl, rtl])
        self.model = np.concatenate([self.model, model])

    def compare(self, horizon: int):
        """-> None, or (cycle, rtl rows of that cycle not in the model, model rows not in the RTL)."""
        a, b = self.rtl, self.model
        ia, ib = a[:, 0] <= horizon, b[:, 0] <= horizon
        x, y = _sorted(a[ia]), _sorted(b[ib])
        self.rtl, self.model = a[~ia], b[~ib]
        if len(x) == len(y) and np.array_equal(x, y):
            self.count += len(x)
            return None
        n = min(len(x), len(y))
        diff = np.flatnonzero((x[:n] != y[:n]).any(axis=1))
        k = int(diff[0]) if len(diff) else n
        cycle = int(min(x[k, 0] if k < len(x) else np.iinfo(np.int64).max,
                        y[k, 0] if k < len(y) else np.iinfo(np.int64).max))
        xs, ys = x[x[:, 0] == cycle], y[y[:, 0] == cycle]
        only_x = [r for r in xs.tolist() if r not in ys.tolist()]
        only_y = [r for r in ys.tolist() if r not in xs.tolist()]
        return cycle, only_x[:4], only_y[:4]


def _sorted(rows: np.ndarray) -> np.ndarray:
    return rows[np.lexsort(rows.T[::-1])] if len(rows) else rows


def replay(spec: str, routing: str, vcs: int, load: float, cycles: int, seed: int = 1, fail: float = 0.0,
           garbage=None, chunk: int = 5000, tamper=None, progress=None, model_net=None, drain: bool = False) -> dict:
    """Model and RTL in lockstep for `cycles` cycles of uniform traffic at `load`. `garbage`: as
    `NetworkSim.add_garbage`'s arguments. `drain`: then the sources stop (`stop_sources`: queued
    packets are abandoned) and both run until the network is empty. `tamper(kind, rows) -> rows`
    alters the model's ejections ("eject": rows cycle, endpoint, packet, seq) or endpoint events
    ("events") of a chunk before use (to test the report). `progress(text)` is called every ~10%
    of the run. Returns the report; "mismatch" is None when every flit, credit and drop matched."""
    net = build(spec)
    model_net = model_net or (net.without_links(fraction=fail, seed=seed) if fail else net)
    params = RouterParams(vcs=vcs)
    chunk = max(1, min(chunk, cycles))
    model = NetworkSim(model_net, routing, params, "uniform", load, seed=seed,
                       trace=chunk * model_net.num_endpoints + 16, endpoint_trace=2 * chunk * model_net.num_endpoints + 16)
    if garbage is not None:
        model.add_garbage(*garbage)
    def exe_for(top):
        return str(MAIN), ["PS_LOADABLE"] if top.loadable else []

    meta, top, cfg = network_build(spec, routing, vcs, fail, seed, routing_obj=model.routing, exe=exe_for)
    fields = {k: tuple(v) for k, v in cfg["fields"].items()}
    fw = FlitWords(fields, cfg["W"])
    flits = Flits(fields)
    L, E = cfg["L"], cfg["E"]
    ep_router = np.asarray(cfg["ep_router"], dtype=np.int64)
    ep_local = np.asarray(cfg["ep_local"], dtype=np.int64)
    pay_bits = fields["payload"][1]
    keep = fw.keep.astype(np.int64)
    garbage_words = {}

    def flit_rows(pk, seq, vc=None):
        s, d = model.pk_src[pk], model.pk_dst[pk]
        vals = {"src": ep_router[s], "src_ep": ep_local[s], "dst": ep_router[d], "dst_ep": ep_local[d],
                "packet": pk, "seq": seq, "head": seq == 0, "tail": seq == L - 1,
                "payload": payload_words(pk, seq, pay_bits), **INJECT_CONSTANTS}
        if vc is not None:
            vals["vc"] = vc
        return fw.pack(vals, len(pk))

    load_bits = 0
    rtl = None
    t_start = time.perf_counter()
    ejects = _Matcher(2 + fw.nw)
    credits = _Matcher(3)
    drops = _Matcher(2)
    drops_model = 0
    mismatch = None
    head_sent = np.full(1024, -1, dtype=np.int64)      # per packet: cycle its head left the source
    max_net = max_total = 0
    try:
        exe = pathlib.Path(meta["build_dir"]) / "sim" / "replay"
        if top.loadable:
            rb, ab = cfg["load_bits"]
            load_bits = len(top.load.payload.as_value())
            rows = [r | (t << rb) | (row << (rb + ab)) for r, table in enumerate(cfg["load"])
                    for t, row in enumerate(table)]
        rtl = ReplayRTL(str(exe), E, cfg["W"], cfg["vb"], load_bits)
        if top.loadable:
            rtl.load(rows)
        report_every = max(chunk, cycles // 10)
        t1 = 0
        while True:
            t0 = t1
            if t0 >= cycles:
                if not drain or (model.in_flight == 0 and model.queued_flits == 0):
                    break
                if t0 == cycles:
                    model.stop_sources()
                elif t0 > cycles + 100 * chunk:
                    raise RuntimeError(f"the model did not drain in {t0 - cycles} cycles")
                t1 = t0 + min(chunk, 1000)
            else:
                t1 = min(cycles, t0 + chunk)
            model.trace_len[0] = 0
            model.etrace_len[0] = 0
            model.run(t1 - t0)
            if model.trace_len[0] > len(model.trace) or model.etrace_len[0] > len(model.etrace):
                raise RuntimeError("model trace overflow (internal: capacity per chunk too small)")
            ev = model.etrace[:model.etrace_len[0]]
            tr = model.trace[:model.trace_len[0]]
            if tamper:
                ev, tr = tamper("events", ev.copy()), tamper("eject", tr.copy())
            # the endpoints' sends of [t0, t1), replayed
            inj = ev[ev[:, 0] == EV_INJECT]
            inj = inj[np.argsort(inj[:, 1], kind="stable")]
            words = np.zeros((len(inj), fw.nw), dtype=np.uint32)
            real = inj[:, 5] >= 0
            words[real] = flit_rows(inj[real, 4], inj[real, 5], inj[real, 3])
            for k in np.flatnonzero(~real):
                g, kind = int(inj[k, 4]), -1 - int(inj[k, 5])
                if g not in garbage_words:
                    garbage_words[g] = garbage_flit(flits, g, kind, cfg["N"], cfg["p"])
                words[k] = fw.from_int(garbage_words.pop(g) | (int(inj[k, 3]) << fields["vc"][0]))
            heads = inj[real & (inj[:, 5] == 0)]
            if len(heads):
                if heads[:, 4].max() >= len(head_sent):
                    head_sent = np.concatenate([head_sent, np.full(max(len(head_sent), heads[:, 4].max() + 1), -1)])
                head_sent[heads[:, 4]] = heads[:, 1]
            tails = tr[tr[:, 3] == L - 1]
            if len(tails):
                max_net = max(max_net, int((tails[:, 0] - head_sent[tails[:, 2]]).max()))
                max_total = max(max_total, int((tails[:, 0] - model.pk_ctime[tails[:, 2]]).max()))
            ej, cr, dr = rtl.run(t0, t1 - t0, inj[:, 1], inj[:, 2], words)
            # ejections: arrivals <= t1 are complete on both sides
            got = np.column_stack([ej["c"], ej["e"], ej["w"].astype(np.int64) & keep]) if len(ej) else \
                np.zeros((0, 2 + fw.nw), dtype=np.int64)
            want = np.column_stack([tr[:, 0], tr[:, 1], flit_rows(tr[:, 2], tr[:, 3]).astype(np.int64) & keep])
            ejects.add(got, want)
            bad = ejects.compare(t1)
            if bad:
                mismatch = {"kind": "eject", "cycle": bad[0],
                            "rtl_only": [(r[1], flits.unpack(fw.to_int(r[2:]))) for r in bad[1]],
                            "model_only": [{"endpoint": r[1], **{k: v for k, v in flits.unpack(fw.to_int(r[2:])).items()
                                                                  if k in ("packet", "seq", "src", "dst")}}
                                           for r in bad[2]]}
                break
            # credits the endpoints count in cycle c: the model's deliveries < t1 are complete
            cm = ev[ev[:, 0] == EV_CREDIT][:, [1, 2, 3]]
            credits.add(cr.astype(np.int64), cm)
            bad = credits.compare(t1 - 1)
            if bad:
                mismatch = {"kind": "credit", "cycle": bad[0], "rtl_only": bad[1], "model_only": bad[2]}
                break
            # `dropped` read in cycle t counts the model's drops of cycles < t
            gd = model.g_drop[:model.num_garbage]
            new = np.sort(gd[(gd >= t0) & (gd < t1)])
            if len(new):
                c, n = np.unique(new + 1, return_counts=True)
                steps = np.column_stack([c, drops_model + np.cumsum(n)])
                drops_model += int(n.sum())
            else:
                steps = np.zeros((0, 2), dtype=np.int64)
            drops.add(dr.astype(np.int64), steps)
            bad = drops.compare(t1 - 1)
            if bad:
                mismatch = {"kind": "dropped", "cycle": bad[0], "rtl": bad[1], "model": bad[2]}
                break
            if progress and (t1 // report_every != t0 // report_every or t1 == cycles) and t1 <= cycles:
                el = time.perf_counter() - t_start
                progress(f"{routing} on {net.num_routers} routers: cycle {t1}/{cycles}, {ejects.count} flits match, "
                         f"{t1 / el:.0f} cycles/s")
    finally:
        if rtl is not None:
            rtl.close()
    seconds = time.perf_counter() - t_start
    return {"spec": spec, "routing": routing, "vcs": vcs, "load": load, "fail": fail, "cycles": cycles,
            "drain_cycles": max(0, t1 - cycles), "flits_matched": ejects.count, "credits_matched": credits.count, "model_ejected": model.ejected_flits,
            "model_injected": model.injected_flits, "in_flight_at_end": model.in_flight,
            "dropped": drops_model, "garbage_sent": model.garbage_sent, "mismatch": mismatch,
            "packets_abandoned": model.abandoned_packets, "max_packet_latency": max_total,
            "max_network_latency": max_net,
            "seconds": round(seconds, 2), "cycles_per_s": round(t1 / seconds, 1),
            "build": {k: meta[k] for k in ("elaborate_s", "verilator_s", "build_dir")}, "model": model}


if __name__ == "__main__":        # python tests/cocotb/replay.py SPEC ROUTING VCS LOAD CYCLES
    rep = replay(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]),
                 progress=lambda s: print(s, file=sys.stderr, flush=True))
    rep.pop("model")
    print(rep)
