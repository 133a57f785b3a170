"""SPEC strings `family:key=value,...` -> Network, through one registry of topology families.

Each family registers its builder with typed parameters; unknown families/keys and bad values
raise ParameterError naming what is allowed. Other modules add families with `@family(...)`.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

from .errors import ParameterError
from .network import Network

REQUIRED = object()


def parse_dims(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(t) for t in str(text).lower().split("x"))
    except ValueError:
        raise ParameterError(f"dims={text!r}: expected sizes joined by 'x', e.g. 9x9x8") from None
    if not dims or min(dims) < 2:
        raise ParameterError(f"dims={text!r}: every size must be >= 2, e.g. 9x9x8")
    return dims


@dataclass
class Family:
    name: str
    builder: Callable[..., Network]
    params: dict            # key -> (type or parser, default or REQUIRED)
    help: str
    takes_p: bool

    def usage(self) -> str:
        keys = ",".join(f"{k}=.." if d is REQUIRED else f"[{k}={d}]" for k, (_, d) in self.params.items())
        return f"{self.name}:{keys}"


FAMILIES: dict[str, Family] = {}


def family(name: str, help: str, **params):
    """Register `builder(**params[, p=...])` as SPEC family `name`; params: key=(type, default)."""
    def deco(builder):
        takes_p = "p" in inspect.signature(builder).parameters
        FAMILIES[name] = Family(name, builder, params, help, takes_p)
        return builder
    return deco


def _convert(fam: Family, key: str, raw: str):
    typ, _ = fam.params[key]
    if typ is int:
        try:
            return int(raw)
        except ValueError:
            raise ParameterError(f"{key}={raw!r}: must be an integer ({fam.usage()})") from None
    return typ(raw)


def parse_spec(spec: str) -> tuple[Family, dict]:
    _load_families()
    if not isinstance(spec, str) or not spec.strip():
        raise ParameterError(f"SPEC={spec!r}: expected family:key=value,... (families: {', '.join(sorted(FAMILIES))})")
    name, _, rest = spec.strip().partition(":")
    fam = FAMILIES.get(name.strip().lower())
    if fam is None:
        raise ParameterError(f"family={name!r}: unknown; allowed: {', '.join(sorted(FAMILIES))}")
    kwargs = {}
    for item in filter(None, (t.strip() for t in rest.split(","))):
        key, eq, raw = item.partition("=")
        key = key.strip().lower()
        if not eq or not raw.strip():
            raise ParameterError(f"SPEC item {item!r}: expected key=value ({fam.usage()})")
        if key not in fam.params:
            raise ParameterError(f"key={key!r}: unknown for {fam.name}; allowed: {', '.join(fam.params)}")
        if key in kwargs:
            raise ParameterError(f"key={key!r}: given twice")
        kwargs[key] = _convert(fam, key, raw.strip())
    for key, (_, default) in fam.params.items():
        if key not in kwargs:
            if default is REQUIRED:
                raise ParameterError(f"key={key!r}: required for {fam.name} ({fam.usage()})")
            kwargs[key] = default
    return fam, kwargs


def build(spec: str, p: int | None = None) -> Network:
    """Build the Network named by SPEC; `p` overrides the endpoints per router."""
    fam, kwargs = parse_spec(spec)
    if p is not None and (not isinstance(p, int) or p < 0):
        raise ParameterError(f"p={p!r}: endpoints per router must be an integer >= 0")
    if fam.takes_p:
        return fam.builder(**kwargs, p=p)
    net = fam.builder(**kwargs)
    return net if p is None else net.with_endpoints(p)


_loaded = False


def _load_families() -> None:
    """Import the modules that register families (kept here so the registry is complete)."""
    global _loaded
    if not _loaded:
        _loaded = True
        from . import families  # noqa: F401
