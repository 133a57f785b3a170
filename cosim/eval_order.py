"""The order in which a Verilated module's eval runs its logic, read from the generated C++, for
a main that evaluates many instances of one module function by function (netlist_main.cpp).

Verilator's `eval()` of a model whose only trigger is the rising edge of `clk` runs, once per
call, the input logic (`ico_sequent` functions, on the first iteration of the `ico` loop) and,
at a rising edge, the clocked logic (`nba_sequent` functions); each function reads and writes
that instance's state only. Calling each function for every instance before the next one (the
same order within each instance) is the same computation with the function's code kept hot:
the 104-router replay's routers run about 17 % faster (docs/hdl.md). Only that schedule is
recognized; anything else (other triggers, an `act` region, several trigger bits) gets
`PS_EVAL_ORDER 0`, and the main calls `eval()` as before. Statements Verilator writes inline in
`eval_nba` between its calls (the min router has some) become functions of the header.
"""
from __future__ import annotations

import pathlib
import re

HEADER = "eval_order.h"              # written next to the generated C++, for the main to include
_RECOGNIZED = "#define PS_EVAL_ORDER 1"
_CALL = re.compile(r"^\s*(\w+)\(vlSelf\);\s*$")
# a statement declaring a local (Verilator's CData ... VlWide<N> types)
_DECL = re.compile(r"^\s*(const\s+)?([CSIQE]Data\b|Vl\w+<)")
# lines of a generated function that do nothing at run time
_INERT = re.compile(r"^\s*(VL_DEBUG_IF\(.*\);|V\w+__Syms\* const __restrict vlSymsp.*;|auto& vlSelfRef = .*;|// \w+|\{|\}|)\s*$")


def _body(text: str, root: str, name: str) -> list[str] | None:
    """The lines of `void {root}___{name}({root}* vlSelf) { ... }`, or None."""
    head = f"void {root}___{name}({root}* vlSelf) {{"
    i = text.find("\n" + head)
    if i < 0:
        return None
    j = text.find("\n}\n", i + 1)
    return text[i + 1 + len(head):j].splitlines()


def _code(lines) -> str:
    """The statements of a body without its inert lines or any whitespace."""
    return "".join(re.sub(r"\s+", "", x) for x in lines or () if not _INERT.match(x))


def _steps_under_trigger(lines, trigger: str) -> list | None:
    """The steps of a body that is exactly `if ((1ULL & vlSelfRef.{trigger}[0U])) { ... }` (besides
    inert lines), in order: a called function's name, or a tuple of the statements Verilator
    wrote inline between the calls. None for any other body, or statements that need more than
    the instance (`vlSymsp`) or declare locals another step could read."""
    guard = f"if ((1ULL & vlSelfRef.{trigger}[0U])) {{"
    steps, depth, state = [], 0, "before"          # before the guard, inside it, after it
    for line in lines or ():
        if state == "inside":
            if depth == 0 and line.strip() == "}":
                state = "after"
            elif depth == 0 and (m := _CALL.match(line)):
                steps.append(m.group(1))
            elif depth == 0 and _INERT.match(line) and line.strip() != "{":
                continue
            else:
                if "vlSymsp" in line or _DECL.match(line):
                    return None
                if not steps or isinstance(steps[-1], str):
                    steps.append(())
                steps[-1] += (line,)
                depth += line.count("{") - line.count("}")
        elif state == "before" and line.strip() == guard:
            state = "inside"
        elif not _INERT.match(line):
            return None
    code = [x for x in steps if isinstance(x, tuple)]
    if state != "after" or depth or not steps or any(not _code(x) for x in code):
        return None
    return steps


def schedule(sim_dir: pathlib.Path, toplevel: str) -> tuple[list, list] | None:
    """(input-logic steps, clocked-logic steps) of `V{toplevel}`'s eval in `sim_dir`, in eval's
    order (`_steps_under_trigger`), or None when its schedule is not the one described above."""
    root = f"V{toplevel}___024root"
    text = "\n" + "\n".join(p.read_text() for p in sorted(sim_dir.glob(f"{root}__*.cpp")))
    ico = _steps_under_trigger(_body(text, root, "eval_ico"), "__VicoTriggered")
    nba = _steps_under_trigger(_body(text, root, "eval_nba"), "__VnbaTriggered")
    ico_trigger = _code(_body(text, root, "eval_triggers_vec__ico"))
    act_trigger = _code(_body(text, root, "eval_triggers_vec__act"))
    act = _body(text, root, "eval_act")
    if ico is None or nba is None or any(_CALL.match(x) for x in act or ()):
        return None
    # the ico trigger is its first iteration alone; the act trigger is clk's rising edge alone
    if ico_trigger != ("vlSelfRef.__VicoTriggered[0U]=((0xfffffffffffffffeULL&vlSelfRef.__VicoTriggered[0U])"
                       "|(IData)((IData)(vlSelfRef.__VicoFirstIteration)));"):
        return None
    if act_trigger != ("vlSelfRef.__VactTriggered[0U]=(QData)((IData)(((IData)(vlSelfRef.clk)&(~(IData)("
                       "vlSelfRef.__Vtrigprevexpr___TOP__clk__0)))));vlSelfRef.__Vtrigprevexpr___TOP__clk__0=vlSelfRef.clk;"):
        return None
    return ico, nba


def header(sim_dir: pathlib.Path, toplevel: str) -> str:
    """eval_order.h for netlist_main.cpp: PS_EVAL_ORDER 1 with the arrays ps_ico and ps_nba of
    `schedule`'s functions, or PS_EVAL_ORDER 0."""
    sched = schedule(sim_dir, toplevel)
    lines = ["// generated by cosim/eval_order.py after verilating: the eval schedule of the module"]
    if sched is None:
        return "\n".join(lines + ["#define PS_EVAL_ORDER 0", ""])
    root = f"V{toplevel}___024root"
    lines.append(_RECOGNIZED)
    for name, steps in zip(("ps_ico", "ps_nba"), sched):
        fns = []
        for step in steps:
            if isinstance(step, str):
                lines.append(f"void {step}({root}*);")
                fns.append(step)
            else:             # statements eval runs inline, as a function of their own
                fns.append(f"{name}_inline_{len(fns)}")
                lines += [f"static void {fns[-1]}({root}* vlSelf) {{", f"    {root}& vlSelfRef = *vlSelf;",
                          *step, "}"]
        lines.append(f"static void (*const {name}[])({root}*) = {{{', '.join(fns)}}};")
    return "\n".join(lines + [""])


def write(sim_dir: pathlib.Path, toplevel: str) -> None:
    """`header` into `sim_dir`/eval_order.h, after verilating."""
    (sim_dir / HEADER).write_text(header(sim_dir, toplevel))


def recognized(sim_dir: pathlib.Path) -> bool:
    """Whether the eval_order.h `write` left in `sim_dir` has the schedule (PS_EVAL_ORDER 1)."""
    return _RECOGNIZED in (sim_dir / HEADER).read_text()
