"""The area/Fmax sweep of one router on the ECP5-85F (`pstar fpga sweep`), with its table and plot.

Two families of points, each a full Yosys + nextpnr build of the router design (one router with
traffic generators and checkers on every port, fpga/tops.py) at a 100 MHz constraint:

* `router-P{P}-V{V}-B{B}-W{W}`: the router with the arithmetic PolarStar unit for P ∈ {4, 8, 16}
  ports (PolarStar q=2 IQ d'=0, q=3 IQ d'=3 and q=11 IQ d'=3, each with one endpoint, so
  P = q + 1 + d' + 1), V ∈ {2, 4}, B ∈ {4, 8}, W ∈ {32, 64} data bits per flit.
* `unit-{polarstar|min}-q{q}[-id]`: the routing unit alone (`--design unit`,
  fpga.tops.RoutingUnitTop) of PolarStar q IQ d'=3 (one endpoint, so P = q + 5 lanes, one per
  input port as in the router), arithmetic or table, for q ∈ {3, 5, 7, 11}: 104 to 1,064
  routers. Without `-id` it is router 0's unit with its id a constant (as the FPGA network
  builds it: a table unit is then a ROM that synthesis minimizes); with `-id` the id is an input
  (`--id-input`: one design for every router, a table unit is a loadable RAM). The whole router
  at those P is the router family's business (and at P = 16 it does not fit the 85F).

Every point is built with a preset's build options (`pstar fpga sweep --preset NAME`; by default
the board's default router preset, the one `pstar fpga build` starts from: target-100mhz, the
pipelined router) and the flags given; each point keeps its own design and sizes.

Results are appended to OUT.json as each point finishes (a rerun skips the points already there
unless named in `only`), and OUT.md / OUT.png are rewritten from all of them. A router point
that cannot fit because a measured point with the same P and no more VCs, buffer depth or flit
width already did not (`implied_misfit`) is not built: its row names the measured point. Points
neither built nor implied are listed as not built, so the table always shows every point.
"""
from __future__ import annotations

import dataclasses
import json
import pathlib
import re
import sys

from topologies.errors import ParameterError

from . import build as build_module
from .build import FpgaConfig, build, check_placer, check_pnr_margin, check_pnr_router, source_commit, validate

BOARD = "ulx3s-85f"
PORT_SPECS = {4: "polarstar:q=2,supernode=iq,degree=0", 8: "polarstar:q=3,supernode=iq,degree=3",
              16: "polarstar:q=11,supernode=iq,degree=3"}
UNIT_QS = (3, 5, 7, 11)
OUT = "docs/fpga_sweep"            # OUT.json, OUT.md, OUT.png: where the table lives (docs/fpga_sweep.md)
ECP5_85F_LUTS = 83640


def points(quick: bool = False) -> dict:
    pts = {}
    for P, spec in PORT_SPECS.items():
        for V in (2, 4):
            for B in (4, 8):
                for W in (32, 64):
                    pts[f"router-P{P}-V{V}-B{B}-W{W}"] = FpgaConfig(
                        board=BOARD, design="router", spec=spec, routing="polarstar", ports=P, vcs=V,
                        depth=B, flit_width=W)
    for q in UNIT_QS:
        for unit in ("polarstar", "min"):
            spec = f"polarstar:q={q},supernode=iq,degree=3"
            for suffix, generic in (("", False), ("-id", True)):
                pts[f"unit-{unit}-q{q}{suffix}"] = FpgaConfig(
                    board=BOARD, design="unit", spec=spec, routing=unit, ports=q + 1 + 3 + 1, vcs=4, depth=8,
                    flit_width=32, id_input=generic)
    if quick:
        keep = ("router-P4-V2-B4-W32", "router-P4-V4-B8-W64", "unit-polarstar-q3", "unit-min-q3")
        pts = {k: pts[k] for k in keep}
    return pts


def sweep_options(preset: str | None = None, **flow) -> dict:
    """The FpgaConfig fields every point takes: the preset's options (how a design is built, not
    which: fpga.presets.DESIGN_FIELDS stay each point's; no preset: the board's default router
    preset, `default_preset`), then `flow` (fields set on the command line; None: not given),
    checked on a small point before anything is built."""
    from .presets import DESIGN_FIELDS, get
    preset = preset or default_preset()
    opts = get(preset).options() if preset else {}
    opts.update({k: v for k, v in flow.items() if v is not None})
    bad = [k for k in opts if k in DESIGN_FIELDS or k not in FpgaConfig.__dataclass_fields__ or k == "build_dir"]
    if bad:
        raise ParameterError(f"{bad[0]}: not an option a sweep sets (each point has its own design and sizes)")
    for check, name in ((check_pnr_router, "pnr_router"), (check_placer, "placer"), (check_pnr_margin, "pnr_margin")):
        if name in opts:
            check(opts[name])
    validate(dataclasses.replace(points(quick=True)["router-P4-V2-B4-W32"], **opts))
    return opts


def default_preset() -> str | None:
    """The preset a sweep takes its build options from when none is named: the one `pstar fpga
    build` starts a router from on the sweep's board (fpga/presets.toml, `[defaults]`)."""
    from .presets import default_for
    return default_for(BOARD, "router")


def run_sweep(quick: bool = False, out: str = OUT, only: str | None = None, no_build: bool = False,
              progress: bool = True, preset: str | None = None, seeds=None, **flow) -> list[dict]:
    """Build the missing points (or those named in `only`) and rewrite OUT.md / OUT.png;
    `no_build`: only rewrite the table and the plot from OUT.json; `progress`: say each point and
    each build step on stderr; `preset` and `flow` (pnr_router=, placer=, wide_luts=, ...): the
    build options of every point (`sweep_options`; no preset: `default_preset`); `seeds`
    (an `fpga.seeds.SeedRun`): each point placed and routed at every seed, its row with the
    median, min and max Fmax."""
    opts = sweep_options(preset, **flow)     # before any point is built, not as an error row in every point
    if no_build and only:
        raise ParameterError(f"only={only!r}: names points to build, and no-build builds none")
    pts = {n: dataclasses.replace(c, **opts) for n, c in points(quick).items()}
    names = [s.strip() for s in only.split(",")] if only else None
    if names:
        bad = [n for n in names if n not in pts]
        if bad:
            raise ParameterError(f"only={bad[0]!r}: not a sweep point; e.g. {', '.join(list(pts)[:3])}")
    out = pathlib.Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    path = out.with_suffix(".json")
    done = json.loads(path.read_text()) if path.exists() else {}
    todo = [] if no_build else [n for n in pts if (names is None and n not in done) or (names is not None and n in names)]
    for i, name in enumerate(todo):
        implied = implied_misfit(name, done) if names is None else None
        if progress:
            sys.stderr.write(f"[sweep] {i + 1}/{len(todo)} {name}"
                             + (f": skipped, cannot fit ({implied} does not)\n" if implied else "\n"))
        if implied:
            continue
        commit = source_commit()
        try:
            cfg = fit_lean_header(pts[name])
            rep = build(cfg, progress=progress, seeds=seeds)
            rep.pop("utilization", None)
            if cfg.packet_id_bits != pts[name].packet_id_bits:
                rep.update(packet_id_bits=cfg.packet_id_bits, packet_ids_cut_from=pts[name].packet_id_bits)
        except ParameterError as e:
            rep = {"error": str(e), "commit": commit}
        rep["name"] = name
        done = record(path, name, rep)
    rows = table_rows(pts, done)
    out.with_suffix(".md").write_text(markdown(rows) + "\n")
    plot(rows, out.with_suffix(".png"))
    return rows


MIN_PACKET_ID_BITS = 8


def fit_lean_header(cfg: FpgaConfig) -> FpgaConfig:
    """`cfg`, or with lean flits whose header does not fit the flit width (7-bit router ids and
    16-bit packet ids need 34 bits; the 32-bit points at P = 8 and 16 have 32) the same point
    with the longest packet id that fits, down to MIN_PACKET_ID_BITS: the packet id only tells
    the checkers' packets apart, and wraps sooner. Any other error is raised (a dry run's)."""
    for bits in range(cfg.packet_id_bits, MIN_PACKET_ID_BITS - 1, -1):
        candidate = dataclasses.replace(cfg, packet_id_bits=bits)
        try:
            build_module.build(candidate, dry_run=True)      # checks the flit layout too, in seconds
            return candidate
        except ParameterError as e:
            if cfg.flit != "lean" or "flit=lean: the header" not in str(e):
                raise
    return cfg


def record(path: pathlib.Path, name: str, row: dict) -> dict:
    """Add one finished point to OUT.json and return all of them. The file is read again under a
    lock just before the write, so sweeps of different points may run at the same time without
    one dropping the rows the other wrote since it started."""
    import fcntl
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = json.loads(path.read_text()) if path.exists() else {}
        done[name] = row
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(done, indent=1, sort_keys=True))
        tmp.replace(path)
    return done


def _router_size(name: str):
    """(P, V, B, W) of a `router-P{P}-V{V}-B{B}-W{W}` point, None for other points."""
    m = re.fullmatch(r"router-P(\d+)-V(\d+)-B(\d+)-W(\d+)", name)
    return tuple(map(int, m.groups())) if m else None


def _misfit(row: dict) -> bool:
    """A measured build that overflowed the device (fpga.report.overflow's "design does not fit: LUT4:
    N needed, ..."), not another error that says "does not fit" (a lean header in its flit). A
    multi-seed build shares one netlist, so one seed that overflowed is enough: builds from
    before the flow stopped such seeds early list the others as stopped at the time limit."""
    err = row.get("error", "")
    overflowed = err.startswith("design does not fit") or (
        err.startswith("seeds: no seed routed: ") and ": design does not fit: " in err)
    return overflowed and "implied_by" not in row


def _shown_error(row: dict) -> str:
    """A row's error for the table: of a build that overflowed, the overflow alone."""
    err = row["error"]
    return err[err.index("design does not fit"):] if _misfit(row) else err


def implied_misfit(name: str, done: dict) -> str | None:
    """The measured router point that shows `name` cannot fit the device, or None: one with the
    same P whose V, B and W are each at most `name`'s and whose build stopped with "does not fit".
    Such a router has all of that one's logic and more (more VCs: more buffers and allocator
    inputs; deeper buffers; wider flits), so it cannot fit either."""
    size = _router_size(name)
    if size is None:
        return None
    for other, row in done.items():
        o = _router_size(other)
        if o and other != name and o[0] == size[0] and all(a <= b for a, b in zip(o[1:], size[1:])) and _misfit(row):
            return other
    return None


def table_rows(pts, done: dict) -> list[dict]:
    """One row per point of `pts` (names, in table order): its measured row if built, else a row
    saying that it cannot fit (`implied_misfit`) or that it is not built yet."""
    rows = []
    for n in pts:
        if n in done:
            rows.append(done[n])
        elif implied := implied_misfit(n, done):
            need = re.search(r"(\w+): (\d+) needed", done[implied]["error"])
            why = f" ({need.group(1)}: {need.group(2)} needed)" if need else ""
            rows.append({"name": n, "implied_by": implied,
                         "error": f"does not fit: not built, larger than {implied}{why}"})
        else:
            rows.append({"name": n, "not_built": True, "error": "not built yet (`pstar fpga sweep` builds it)"})
    return rows


def _unit_q(name: str) -> int:
    """q of a `unit-{unit}-q{q}[-id]` point."""
    return int(name.split("-q")[1].split("-")[0])


def markdown(rows: list[dict]) -> str:
    """Two tables: the router points, then the routing-unit points."""
    head = "| point | routing | P | V | B | W | flit bits | LUT4 | FF | DP16KD | LUTRAM | Fmax (MHz) | nextpnr router " \
           "| commit |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    uhead = "| point | unit | router id | routers | lanes | LUT4 | FF | DP16KD | LUTRAM | Fmax (MHz) | nextpnr router " \
            "| commit |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
    lines, ulines = [head], [uhead]
    for r in rows:
        unit = r["name"].startswith("unit-")
        if "error" in r and unit:
            ulines.append(f"| {r['name']} | | | | | {_shown_error(r)} | | | | | | {r.get('commit') or ''} |")
            continue
        if "error" in r:
            lines.append(f"| {r['name']} | | | | | | | {_shown_error(r)} | | | | | | {r.get('commit') or ''} |")
            continue
        tail = (f"{r.get('lut4', '')} | {r.get('ff', '')} | {r.get('bram', '')} | {r.get('lutram', '')} | "
                f"{_fmax(r)} | {r.get('pnr_router', 'router1')}{', static placer' if r.get('placer') == 'static' else ''}"
                f"{', timing-driven rip-up' if r.get('tmg_ripup') else ''}"
                f"{', timed %g %% faster' % r['pnr_margin'] if r.get('pnr_margin') else ''}"
                f"{'' if r.get('wide_luts', True) else ', no wide LUTs'} | "
                f"{r.get('commit') or ''} |")
        if unit:
            kind = "arithmetic" if r["routing"] == "polarstar" else f"table ({r['routing']})"
            rid = "input" if r.get("id_input") else "constant"
            ulines.append(f"| {r['name']} | {kind} | {rid} | {r.get('network_routers', '')} | {r.get('lanes', '')} | {tail}")
        else:
            cut = f" ({r['packet_id_bits']}-bit packet ids)" if "packet_ids_cut_from" in r else ""
            lines.append(f"| {r['name']} | {r['routing']} | {r['ports']} | {r['vcs']} | {r['depth']} | "
                         f"{r['flit_width']} | {r.get('flit_bits', '')}{cut} | {tail}")
    out = "\n".join(lines)
    if len(ulines) > 1:
        out += "\n\nRouting unit alone (`--design unit`: query registers -> unit -> signature register; one lane per router port):\n\n" + "\n".join(ulines)
    return out


def _fmax_value(row: dict) -> float:
    """A row's Fmax: its build's, or over several seeds their median."""
    return row.get("fmax_median_mhz", row["fmax_mhz"])


def _fmax(row: dict) -> str:
    """A row's Fmax cell: its build's, or over several seeds the median (min–max, seeds; a seed
    not routed in its time counts as 0 MHz, and the cell says how many routed)."""
    if "fmax_median_mhz" in row:
        routed = row.get("seeds_routed", row["seeds_run"])
        unrouted = f", {routed} routed: the others count as 0" if routed < row["seeds_run"] else ""
        return (f"{row['fmax_median_mhz']} ({row['fmax_min_mhz']}–{row['fmax_max_mhz']}, "
                f"{row['seeds_run']} seeds{unrouted})")
    return str(row.get("fmax_mhz", ""))


def _fmax_span(row: dict) -> tuple[float, float, float]:
    """(value, below, above) of a row's Fmax for an error bar: over several seeds the median and
    its distance to the min and max, else the one build's Fmax."""
    v = _fmax_value(row)
    return v, v - row.get("fmax_min_mhz", v), row.get("fmax_max_mhz", v) - v


def _needed_lut4(row: dict) -> int | None:
    need = re.search(r"LUT4: (\d+) needed", row.get("error", ""))
    return int(need.group(1)) if need else None


def _series(ax_area, ax_fmax, label, pts, misfits, style):
    """One line in each panel: pts (x, row) measured, misfits (x, LUT4 needed) as x marks in the
    line's colour on the area panel (a line with no measured point keeps its colour and label)."""
    pts, misfits = sorted(pts, key=lambda p: p[0]), sorted(misfits)
    ls, mk = style
    if pts:
        line, = ax_area.plot([x for x, _ in pts], [r["lut4"] for _, r in pts], ls, marker=mk, label=label)
        spans = [_fmax_span(r) for _, r in pts]
        ax_fmax.errorbar([x for x, _ in pts], [v for v, _, _ in spans], yerr=[[b for _, b, _ in spans],
                         [a for _, _, a in spans]], fmt=ls, marker=mk, color=line.get_color(), capsize=3, label=label)
        color = line.get_color()
    else:
        color = ax_area.plot([], [], ls, marker=mk, label=label)[0].get_color()
    for x, need in misfits:
        ax_area.plot([x], [need], "x", color=color, markersize=9, mew=2)


def _finish(ax_area, ax_fmax, xlabel, area_title, fmax_title, any_misfit):
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    ax_area.axhline(ECP5_85F_LUTS, color="grey", lw=0.8, ls=":", label="ECP5-85F (83,640 LUT4)")
    if any_misfit:
        ax_area.plot([], [], "kx", markersize=9, mew=2, label="does not fit (LUT4 needed)")
    ax_area.set_yscale("log")
    ax_area.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax_area.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax_area.yaxis.set_minor_formatter(NullFormatter())
    ax_area.set_ylabel("LUT4 (TRELLIS_COMB)")
    ax_fmax.set_ylabel("Fmax (MHz): median, bar min..max of the seeds")
    ax_fmax.set_ylim(bottom=0)
    for ax, title in ((ax_area, area_title), (ax_fmax, fmax_title)):
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
    handles, labels = ax_area.get_legend_handles_labels()
    if handles:
        ax_fmax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)


def plot(rows: list[dict], path: pathlib.Path) -> None:
    """Two rows of panels: the router points (area and Fmax against P, a line per V, B, W), then
    the routing units (against q, a line per unit and id kind); each legend beside its row, every
    point that does not fit an x at the LUT4 it needed, Fmax as median with min..max bars."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ((r_area, r_fmax), (u_area, u_fmax)) = plt.subplots(2, 2, figsize=(13, 9))
    routers = {n: r for r in rows if (n := _router_size(r["name"]))}
    misfit = [(size, need) for size, r in routers.items() if _misfit(r) and (need := _needed_lut4(r))]
    for V in (2, 4):
        for W, mk in ((32, "o"), (64, "s")):
            for B, ls in ((4, ":"), (8, "-")):
                pts = [(s[0], r) for s, r in routers.items() if s[1:] == (V, B, W) and "error" not in r]
                _series(r_area, r_fmax, f"V={V} B={B} W={W}", pts,
                        [(s[0], need) for s, need in misfit if s[1:] == (V, B, W)], (ls, mk))
    ports = sorted({s[0] for s in routers}) or [4]
    for ax in (r_area, r_fmax):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ports, [str(p) for p in ports])
        ax.minorticks_off()
    _finish(r_area, r_fmax, "router ports P", "Router with traffic harness: area", "Router with traffic harness: Fmax",
            bool(misfit))
    units = [r for r in rows if r["name"].startswith("unit-")]
    for unit, generic, mk, ls in (("polarstar", False, "o", "-"), ("min", False, "s", "-"),
                                  ("polarstar", True, "o", "--"), ("min", True, "s", "--")):
        mine = [r for r in units if r["name"].split("-")[1] == unit and r["name"].endswith("-id") == generic]
        label = ("arithmetic PolarStar unit" if unit == "polarstar" else "table unit (min)") + \
            (", id input" if generic else ", constant id")
        _series(u_area, u_fmax, label, [(_unit_q(r["name"]), r) for r in mine if "error" not in r],
                [(_unit_q(r["name"]), need) for r in mine if (need := _needed_lut4(r))], (ls, mk))
    _finish(u_area, u_fmax, "PolarStar q (IQ d'=3): routers = 8(q²+q+1)", "Routing unit (q + 5 lanes): area",
            "Routing unit: Fmax", any(_needed_lut4(r) for r in units))
    for ax in (u_area, u_fmax):
        ax.set_xticks(UNIT_QS, [str(q) for q in UNIT_QS])
        if not any("error" not in r or _needed_lut4(r) for r in units):
            ax.text(0.5, 0.5, "no routing-unit point built yet\n(pstar fpga sweep --only unit-polarstar-q3,...)",
                    ha="center", va="center", transform=ax.transAxes, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


__all__ = ["BOARD", "OUT", "default_preset", "fit_lean_header", "implied_misfit", "markdown", "points", "record", "run_sweep", "sweep_options", "table_rows"]
