"""Place and route one synthesized design at several nextpnr seeds, in parallel, and keep the best.

nextpnr's result depends on its placement seed: on the target router a few MHz either way, and
some seeds do not finish routing in an hour. `pstar fpga build --seeds 1-5 --jobs 2 --minutes 60`
synthesizes once, then runs nextpnr once per seed in `<build dir>/seed-N/` (at most `jobs` at a
time, each stopped after `minutes`), packs the bitstream of the best seed (timing met first,
then the highest Fmax) and reports every seed, with the median, min and max Fmax over all of
them: a seed that did not finish (stopped, or nextpnr failed) counts as 0 MHz, since a flow that
has to be rerun until a seed routes has not closed timing.

The seeds' nextpnr and pack commands are the build script's own lines (`build_top.sh`, written
by Amaranth's platform), with the seed replaced: the same options as a one-seed build.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import shutil
import signal
import statistics
import subprocess
import time

from topologies.errors import ParameterError
from topologies.spec import ascii_int

from .report import diagnose, overflow_so_far, read_report

# the build script's inputs of place and route, linked (or copied) into each seed's folder
PNR_INPUTS = ("top.json", "top.lpf", "top.pcf", "top.rpt")
CHECK_FIT_EVERY = 10          # polls (of 0.5 s) between looks at a running seed's utilisation
MAX_SEEDS = 64


@dataclasses.dataclass(frozen=True)
class SeedRun:
    """Parameters: `seeds`, the nextpnr seeds; `jobs`, how many run at once; `minutes`, each
    seed's time limit (None: none)."""
    seeds: tuple
    jobs: int = 1
    minutes: float | None = None

    def __post_init__(self):
        if not self.seeds or len(self.seeds) > MAX_SEEDS or len(set(self.seeds)) != len(self.seeds):
            raise ParameterError(f"seeds: 1..{MAX_SEEDS} different seeds, got {list(self.seeds)}")
        for s in self.seeds:
            if not isinstance(s, int) or isinstance(s, bool) or not 0 <= s < 2**31:
                raise ParameterError(f"seeds: {s!r} is not a seed in 0..2147483647")
        if not isinstance(self.jobs, int) or isinstance(self.jobs, bool) or self.jobs < 1:
            raise ParameterError(f"jobs={self.jobs!r}: must be an integer >= 1")
        if self.minutes is not None and not (isinstance(self.minutes, (int, float)) and self.minutes > 0):
            raise ParameterError(f"minutes={self.minutes!r}: must be a number > 0")


def parse_seeds(text: str) -> tuple:
    """"1-5", "1,3,7" or a mix ("1-3,8") -> the seeds in the order written."""
    seeds = []
    for part in str(text).split(","):
        try:
            if "-" in part.strip()[1:]:
                lo, hi = part.split("-", 1)
                lo, hi = ascii_int(lo), ascii_int(hi)
                if hi < lo or hi - lo >= MAX_SEEDS:
                    raise ValueError
                seeds.extend(range(lo, hi + 1))
            else:
                seeds.append(ascii_int(part))
        except ValueError:
            raise ParameterError(f"seeds: {text!r} is not a list of seeds like 1-5 or 1,3,7") from None
    return tuple(seeds)


def script_lines(out_dir: pathlib.Path) -> dict:
    """The build script's place-and-route and pack lines: {"pnr", "pack"}."""
    lines = (out_dir / "build_top.sh").read_text().splitlines()
    found = {}
    for key, tools in (("pnr", ("$NEXTPNR_ECP5", "$NEXTPNR_ICE40")),
                       ("pack", ("$ECPPACK", "$ICEPACK"))):
        found[key] = next((ln for ln in lines if any(ln.startswith(f'"{t}"') for t in tools)), None)
        if found[key] is None:
            raise ParameterError(f"seeds: no {key} line in {out_dir / 'build_top.sh'}")
    if not re.search(r"--seed \d+", found["pnr"]):
        raise ParameterError(f"seeds: the nextpnr line of {out_dir / 'build_top.sh'} has no --seed")
    return found


def _start(out_dir: pathlib.Path, line: str, seed: int, env: dict):
    sdir = out_dir / f"seed-{seed}"
    sdir.mkdir(exist_ok=True)
    for name in PNR_INPUTS:
        link, src = sdir / name, out_dir / name
        if link.is_symlink() or link.exists():
            link.unlink()
        if src.exists():       # a hard link or a copy: YoWASP's sandboxed tools do not follow symlinks
            try:
                os.link(src, link)
            except OSError:
                shutil.copyfile(src, link)
    for stale in ("report.json", "top.tim", "top.config", "top.asc", "top.bit", "top.bin"):
        (sdir / stale).unlink(missing_ok=True)
    log = open(sdir / "pnr.log", "w")
    # its own process group: a stop ends nextpnr, not only the shell that started it
    proc = subprocess.Popen(["sh", "-c", "exec " + re.sub(r"--seed \d+", f"--seed {seed}", line)], cwd=sdir,
                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return sdir, proc, log


def stop_group(proc) -> None:
    """Kill a tool's process group (nextpnr and anything it started), reap it, and wait (up to
    5 s) until the group is gone: the kill reaches the group's other processes asynchronously."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    for _ in range(500):
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)


def overflowing(ticks: int, tim_path: pathlib.Path) -> bool:
    """Whether a running nextpnr's log (`tim_path`) shows the design over the device, looked at
    every CHECK_FIT_EVERY polls (`ticks`, counted by the caller's poll loop)."""
    return ticks % CHECK_FIT_EVERY == 0 and overflow_so_far(tim_path) is not None


def _finished(sdir, proc, seed, minutes, family, clock_mhz) -> dict:
    row = {"seed": seed, "minutes": round(minutes, 1), "dir": str(sdir)}
    if proc.returncode == 0 and (sdir / "report.json").exists():
        fig = read_report(sdir, "top", family, clock_mhz)
        return row | {"status": "routed", "fmax_mhz": fig.get("fmax_mhz"), "timing_met": fig.get("timing_met"),
                      "lut4": fig.get("lut4")}
    return row | {"status": "failed", "error": diagnose(sdir, "top")}


def place_and_route(out_dir: pathlib.Path, env: dict, family: str, clock_mhz: float, run: SeedRun, say) -> tuple:
    """nextpnr at every seed of `run` on the synthesized `out_dir` (top.json there), then the pack
    of the best. Returns (the best seed's folder or None, a row per seed in seed order)."""
    lines = script_lines(out_dir)
    waiting, running, rows, ticks = list(run.seeds), {}, {}, 0
    try:
        while waiting or running:
            while waiting and len(running) < run.jobs:
                seed = waiting.pop(0)
                running[seed] = (*_start(out_dir, lines["pnr"], seed, env), time.monotonic())
            time.sleep(0.5)
            ticks += 1
            for seed, (sdir, proc, log, t0) in list(running.items()):
                spent = (time.monotonic() - t0) / 60
                if proc.poll() is None and run.minutes is not None and spent > run.minutes:
                    stop_group(proc)
                    rows[seed] = {"seed": seed, "minutes": round(spent, 1), "dir": str(sdir), "status": "stopped",
                                  "error": f"not routed in {run.minutes:g} minutes"}
                elif proc.poll() is not None:
                    rows[seed] = _finished(sdir, proc, seed, spent, family, clock_mhz)
                elif overflowing(ticks, sdir / "top.tim"):
                    stop_group(proc)                  # does not fit: the log says why (`_finished`)
                    rows[seed] = _finished(sdir, proc, seed, spent, family, clock_mhz)
                else:
                    continue
                log.close()
                del running[seed]
                r = rows[seed]
                say(f"seed {seed}: " + (f"{r['fmax_mhz']} MHz" if r["status"] == "routed" else r["error"]) +
                    f" ({r['minutes']} min; {len(rows)} of {len(run.seeds)} done)")
    finally:
        for sdir, proc, log, _ in running.values():      # interrupted: no nextpnr left behind
            stop_group(proc)
            log.close()
    ordered = [rows[s] for s in run.seeds]
    routed = [r for r in ordered if r["status"] == "routed" and r["fmax_mhz"] is not None]
    if not routed:
        return None, ordered
    best = max(routed, key=lambda r: (bool(r["timing_met"]), r["fmax_mhz"]))
    sdir = pathlib.Path(best["dir"])
    with open(sdir / "pack.log", "w") as log:
        done = subprocess.run(["sh", "-c", lines["pack"]], cwd=sdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise ParameterError(f"seeds: packing the bitstream of seed {best['seed']} failed (log: {sdir / 'pack.log'})")
    return sdir, ordered


def summary(rows: list) -> dict:
    """Median, min and max Fmax over every seed (one that did not finish counts as 0 MHz), and how
    many finished and met timing."""
    fmax = [r.get("fmax_mhz") or 0.0 for r in rows]
    return {"seeds_run": len(rows), "seeds_routed": sum(r["status"] == "routed" for r in rows),
            "seeds_met": sum(bool(r.get("timing_met")) for r in rows),
            "fmax_median_mhz": round(statistics.median(fmax), 2), "fmax_min_mhz": min(fmax), "fmax_max_mhz": max(fmax)}


__all__ = ["SeedRun", "parse_seeds", "overflowing", "place_and_route", "script_lines", "summary"]
