"""SPEC strings `family:key=value,...` -> Network, through one registry of topology families.

Each family registers its builder with typed parameters; unknown families/keys and bad values
raise ParameterError naming what is allowed. Other modules add families with `@family(...)`.

Before anything is built, `check_size` estimates the memory the network needs from the parameters
alone (routers, ports and each family's construction tables, `size_estimate(...)`) and refuses one
that needs more than the machine has free, in a few microseconds: a mistyped q then ends with one
line instead of running until the memory is gone.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

from .errors import ParameterError
from .network import Network

REQUIRED = object()


def ascii_int(text: str) -> int:
    """int(text) for ASCII digits only (Python's int() also reads '٣' and '1_000'); ValueError otherwise."""
    t = str(text).strip()
    digits = t[1:] if t[:1] in "+-" else t
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError(f"invalid integer: {text!r}")
    return int(t)


def parse_dims(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(ascii_int(t) for t in str(text).lower().split("x"))
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
    size: Callable[..., "Size"] | None = None    # the network's size from the parameters (size_estimate)

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


def size_estimate(name: str):
    """Register `estimate(**params) -> Size` for family `name` (its SPEC parameters after conversion,
    defaults filled in). It must not raise on bad values: those are the builder's to refuse."""
    def deco(estimate):
        FAMILIES[name].size = estimate
        return estimate
    return deco


@dataclass
class Size:
    """What a build allocates: routers, ports (sum of the routers' radixes) and construction tables."""
    routers: int
    ports: int
    table_bytes: int = 0
    python_steps: int = 0       # iterations of a pure-Python loop in the construction

    # bytes per router and per port, measured as peak RSS of large builds: 79 B/port for
    # hyperx:dims=10000 (7.9 GB), 75 for er:q=211, 85 for dragonfly:a=60,h=30, 140 for slimfly:q=97
    ROUTER_BYTES = 128
    PORT_BYTES = 128
    # a construction loop of more Python steps than this takes over a minute: refused like a size
    PYTHON_STEPS = 10 ** 8

    def bytes(self, endpoints: int = 0) -> int:
        return (self.routers * self.ROUTER_BYTES + self.ports * self.PORT_BYTES + self.table_bytes
                + self.routers * max(endpoints, 0) * 8)


def available_memory() -> int:
    """Bytes this process can still allocate: MemAvailable, within the address-space limit and the
    cgroup's memory limit when those are set."""
    import resource

    limits = []
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        limits.append(int(info["MemAvailable"].split()[0]) * 1024)
    except (OSError, KeyError, ValueError):
        try:
            import os
            limits.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            pass
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        limits.append(soft - _current_address_space())
    try:
        with open("/sys/fs/cgroup/memory.max") as f, open("/sys/fs/cgroup/memory.current") as g:
            cap = f.read().strip()
            if cap != "max":
                limits.append(int(cap) - int(g.read()))
    except (OSError, ValueError):
        pass
    return max(0, min(limits)) if limits else 1 << 62


def _current_address_space() -> int:
    try:
        with open("/proc/self/statm") as f:
            import os
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def human_bytes(n: int) -> str:
    """1.3 GB, 8.0 TB; beyond petabytes 4.8e+24 B."""
    if n >= 10 ** 18:
        return f"{n:.1e} B"
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} PB"


def check_memory(nbytes: int, what: str) -> None:
    """Refuse (ParameterError) a job that needs about `nbytes` when fewer are available."""
    free = available_memory()
    if nbytes > free:
        raise ParameterError(f"{what}: needs about {human_bytes(nbytes)} of memory, "
                             f"{human_bytes(free)} available")


def check_size(fam: Family, kwargs: dict, p: int | None = None) -> None:
    """Refuse a network whose estimated build memory is more than the machine has free."""
    if fam.size is None:
        return
    size = fam.size(**kwargs)
    endpoints = p if isinstance(p, int) else 0
    need = size.bytes(endpoints)
    what = f"{fam.name}: {size.routers:,} routers, {size.ports:,} ports" if size.routers < 10 ** 15 else \
        f"{fam.name}: about 10^{len(str(size.routers)) - 1} routers"
    if size.python_steps > Size.PYTHON_STEPS:
        raise ParameterError(f"{what}: the construction needs about {size.python_steps:.1e} Python steps "
                             f"(hours); at most {Size.PYTHON_STEPS:.0e} are run")
    if need > available_memory():
        check_memory(need, what)


def _convert(fam: Family, key: str, raw: str):
    typ, _ = fam.params[key]
    if typ is int:
        try:
            return ascii_int(raw)
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
    check_size(fam, kwargs)
    return fam, kwargs


def build(spec: str, p: int | None = None) -> Network:
    """Build the Network named by SPEC; `p` overrides the endpoints per router."""
    fam, kwargs = parse_spec(spec)
    if p is not None and (not isinstance(p, int) or p < 0):
        raise ParameterError(f"p={p!r}: endpoints per router must be an integer >= 0")
    if p:
        check_size(fam, kwargs, p)
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
