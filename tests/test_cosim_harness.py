"""cosim.harness: a build's folder (its cache key) follows the compiler settings it is made with."""
import pathlib

import pytest

from cosim import compiler, harness


class _Stop(Exception):
    pass


def _folder(tmp_path, monkeypatch, makeflags, exe=None):
    """The build folder `harness.build` picks for one configuration under `makeflags`."""
    monkeypatch.setattr(harness, "BUILD_ROOT", tmp_path)
    monkeypatch.setenv("MAKEFLAGS", makeflags)
    before = set(tmp_path.iterdir())

    def make_verilog():
        raise _Stop

    with pytest.raises(_Stop):
        harness.build("cfg", "key", make_verilog, "top", exe=exe)
    new = set(tmp_path.iterdir()) - before
    return new.pop().name if new else None


def test_other_optimization_flags_are_another_build(tmp_path, monkeypatch):
    default = _folder(tmp_path, monkeypatch, "")
    assert "OPT_FAST=-O2" in harness.make_settings()
    assert _folder(tmp_path, monkeypatch, "") is None                     # the same folder again
    assert _folder(tmp_path, monkeypatch, "-j2 --jobserver-auth=3,4") is None   # not a compiler setting
    other = _folder(tmp_path, monkeypatch, "OPT_FAST=-O0")
    assert other is not None and other != default and other.startswith("cfg-")


def test_the_executables_compiler_is_part_of_their_build(tmp_path, monkeypatch):
    """An executable built by another compiler (`PSTAR_CXX`) is another build; a cocotb build,
    which make's c++ always compiles, is the same."""
    main = tmp_path / "src" / "main.cpp"
    main.parent.mkdir()
    main.write_text("int main() { return 0; }\n")
    builds = tmp_path / "builds"
    builds.mkdir()
    monkeypatch.delenv("PSTAR_CXX", raising=False)
    zig = compiler.exe_compiler()
    assert pathlib.Path(zig[0]).name == "zig" and zig[1] == "c++"
    default = _folder(builds, monkeypatch, "", exe=(main, []))
    cocotb = _folder(builds, monkeypatch, "")
    monkeypatch.setenv("PSTAR_CXX", "c++")
    assert compiler.exe_compiler() == ["c++"]
    gcc = _folder(builds, monkeypatch, "", exe=(main, []))
    assert gcc is not None and gcc != default and default is not None
    assert _folder(builds, monkeypatch, "") is None and cocotb is not None


def test_a_failing_compiler_is_named(tmp_path, monkeypatch):
    """A plain executable whose compiler fails: the error names the compiler and PSTAR_CXX."""
    monkeypatch.setattr(harness, "BUILD_ROOT", tmp_path)
    monkeypatch.setenv("PSTAR_CXX", "false")
    main = tmp_path / "src" / "main.cpp"
    main.parent.mkdir()
    main.write_text("int main() { return 0; }\n")
    verilog = "module top(input clk, output reg q); always @(posedge clk) q <= ~q; endmodule\n"
    with pytest.raises(RuntimeError, match="make, exit 2, compiler false; PSTAR_CXX picks another"):
        harness.build("fails", "key", lambda: (verilog, {}), "top", exe=(main, []))


def test_a_missing_compiler_is_reported(monkeypatch):
    """Without ziglang and without PSTAR_CXX, the compiler is missing, and `pstar.cosim.unavailable`
    says so (when Verilator itself is there); PSTAR_CXX alone is enough."""
    import importlib.util

    from pstar import cosim
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ziglang" else real(name, *a))
    monkeypatch.delenv("PSTAR_CXX", raising=False)
    assert "pip install ziglang" in compiler.missing()
    why = cosim.unavailable()
    assert why is not None
    if "Verilator" not in why:          # Verilator and its tools are there: the compiler is the reason
        assert why == compiler.missing()
    monkeypatch.setenv("PSTAR_CXX", "c++")
    assert compiler.missing() is None
