"""cosim.eval_order recognizes the eval schedule it may run function by function, and nothing
else (on text shaped as Verilator 5 writes it)."""
import pathlib

from cosim.eval_order import header, schedule

ROOT = "Vtop___024root"


def _fn(name, body):
    return (f"void {ROOT}___{name}({ROOT}* vlSelf) {{\n"
            f'    VL_DEBUG_IF(VL_DBG_MSGF("+    {ROOT}___{name}\\n"); );\n'
            "    Vtop__Syms* const __restrict vlSymsp VL_ATTR_UNUSED = vlSelf->vlSymsp;\n"
            "    auto& vlSelfRef = std::ref(*vlSelf).get();\n    // Body\n" + body + "}\n")


def _region(trigger, fns, bit="1ULL"):
    """The guarded region calling `fns`; an entry that is not a function name is a statement."""
    calls = "".join(f"        {ROOT}___{f}(vlSelf);\n" if f.isidentifier() else f"        {f}\n"
                    for f in fns)
    return f"    if (({bit} & vlSelfRef.{trigger}[0U])) {{\n{calls}    }}\n"


ICO_TRIGGER = ("    vlSelfRef.__VicoTriggered[0U] = ((0xfffffffffffffffeULL \n"
               "                                      & vlSelfRef.__VicoTriggered[0U]) \n"
               "                                     | (IData)((IData)(vlSelfRef.__VicoFirstIteration)));\n")
ACT_TRIGGER = ("    vlSelfRef.__VactTriggered[0U] = (QData)((IData)(\n"
               "        ((IData)(vlSelfRef.clk) \n         & (~ (IData)(vlSelfRef.__Vtrigprevexpr___TOP__clk__0)))));\n"
               "    vlSelfRef.__Vtrigprevexpr___TOP__clk__0 = vlSelfRef.clk;\n")
ICO = ["ico_sequent__TOP__0", "ico_sequent__TOP__1"]
NBA = ["nba_sequent__TOP__0", "nba_sequent__TOP__1", "nba_sequent__TOP__2"]


def _write(tmp_path: pathlib.Path, **change) -> pathlib.Path:
    parts = {"ico": _region("__VicoTriggered", ICO), "nba": _region("__VnbaTriggered", NBA),
             "ico_trigger": ICO_TRIGGER, "act_trigger": ACT_TRIGGER, "extra": ""}
    parts.update(change)
    (tmp_path / f"{ROOT}__0.cpp").write_text(
        _fn("eval_ico", parts["ico"]) + _fn("eval_triggers_vec__ico", parts["ico_trigger"]) + parts["extra"])
    (tmp_path / f"{ROOT}__1.cpp").write_text(
        _fn("eval_nba", parts["nba"]) + _fn("eval_triggers_vec__act", parts["act_trigger"]))
    return tmp_path


def test_the_rising_edge_schedule_is_recognized(tmp_path):
    assert schedule(_write(tmp_path), "top") == ([f"{ROOT}___{f}" for f in ICO], [f"{ROOT}___{f}" for f in NBA])
    h = header(tmp_path, "top")
    assert "#define PS_EVAL_ORDER 1" in h and f"static void (*const ps_nba[])({ROOT}*) = {{{ROOT}___nba_sequent__TOP__0," in h


def test_inline_statements_become_functions_of_the_header(tmp_path):
    """Statements eval_nba runs between its calls (Verilator inlines small functions) are a step
    of their own, in their place, compiled from the header."""
    stmt = ["vlSelfRef.a = (1U & (~ (IData)(vlSelfRef.b)));", "if (vlSelfRef.c) {", "    vlSelfRef.d = 2U;", "}"]
    nba = NBA[:2] + stmt + NBA[2:]
    ico, steps = schedule(_write(tmp_path, nba=_region("__VnbaTriggered", nba)), "top")
    assert ico == [f"{ROOT}___{f}" for f in ICO]
    assert steps[:2] == [f"{ROOT}___{f}" for f in NBA[:2]] and steps[3] == f"{ROOT}___{NBA[2]}"
    assert [x.strip() for x in steps[2]] == [x.strip() for x in stmt]
    h = header(tmp_path, "top")
    assert f"static void ps_nba_inline_2({ROOT}* vlSelf) {{" in h and "        if (vlSelfRef.c) {" in h
    assert f"ps_nba[])({ROOT}*) = {{{ROOT}___{NBA[0]}, {ROOT}___{NBA[1]}, ps_nba_inline_2, {ROOT}___{NBA[2]}}};" in h


def test_other_schedules_fall_back_to_eval(tmp_path):
    others = [
        # a second clocked trigger (another edge or an asynchronous reset)
        ("nba", _region("__VnbaTriggered", NBA) + _region("__VnbaTriggered", ["nba_sequent__TOP__3"], "2ULL")),
        # a statement besides the region
        ("ico", _region("__VicoTriggered", ICO) + "    vlSelfRef.x = 1U;\n"),
        # statements in the region that need more than the instance, or declare a local
        ("nba", _region("__VnbaTriggered", NBA[:1] + ["vlSymsp->TOP.x = 1U;"] + NBA[1:])),
        ("nba", _region("__VnbaTriggered", NBA[:1] + ["CData/*0:0*/ __Vtmp = vlSelfRef.x;"] + NBA[1:])),
        # the input logic triggered by something besides the first iteration
        ("ico_trigger", ICO_TRIGGER.replace("__VicoFirstIteration", "__VicoFirstIteration | vlSelfRef.y")),
        # clocked by more than clk's rising edge
        ("act_trigger", ACT_TRIGGER.replace("vlSelfRef.clk) ", "vlSelfRef.clk | vlSelfRef.clk2) ")),
        # an active region with logic of its own
        ("extra", _fn("eval_act", _region("__VactTriggered", ["act_sequent__TOP__0"]))),
    ]
    for k, (name, text) in enumerate(others):
        case = tmp_path / f"{k}-{name}"
        case.mkdir()
        assert schedule(_write(case, **{name: text}), "top") is None, (k, name)
        assert "#define PS_EVAL_ORDER 0" in header(case, "top")
    assert schedule(tmp_path, "top") is None            # no generated C++ at all
