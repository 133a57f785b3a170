"""Constructor helper: a component whose parameter check fails is not reported as unused.

Amaranth warns about every `Elaboratable` that is created and never elaborated; a constructor
that raises TypeError/ValueError on a bad parameter has still created the object (and maybe
sub-components). `quiet_on_error` silences those warnings for that case only.
"""
from __future__ import annotations

import functools

from amaranth.hdl import Elaboratable


def quiet_on_error(init):
    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        try:
            init(self, *args, **kwargs)
        except Exception:
            for obj in [self, *vars(self).values()]:
                if isinstance(obj, Elaboratable):
                    obj._MustUse__silence = True
            raise
    return wrapper


__all__ = ["quiet_on_error"]
