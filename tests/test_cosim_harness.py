"""cosim.harness: a build's folder (its cache key) follows the compiler settings it is made with."""
import pytest

from cosim import harness


class _Stop(Exception):
    pass


def _folder(tmp_path, monkeypatch, makeflags):
    """The build folder `harness.build` picks for one configuration under `makeflags`."""
    monkeypatch.setattr(harness, "BUILD_ROOT", tmp_path)
    monkeypatch.setenv("MAKEFLAGS", makeflags)
    before = set(tmp_path.iterdir())

    def make_verilog():
        raise _Stop

    with pytest.raises(_Stop):
        harness.build("cfg", "key", make_verilog, "top")
    new = set(tmp_path.iterdir()) - before
    return new.pop().name if new else None


def test_other_optimization_flags_are_another_build(tmp_path, monkeypatch):
    default = _folder(tmp_path, monkeypatch, "")
    assert "OPT_FAST=-O2" in harness.make_settings()
    assert _folder(tmp_path, monkeypatch, "") is None                     # the same folder again
    assert _folder(tmp_path, monkeypatch, "-j2 --jobserver-auth=3,4") is None   # not a compiler setting
    other = _folder(tmp_path, monkeypatch, "OPT_FAST=-O0")
    assert other is not None and other != default and other.startswith("cfg-")
