"""Networks built from a SPEC, kept on disk per user so that a run does not rebuild them.

Building the 1,064-router PolarStar takes ~4 s, almost all of it galois compiling GF(q) (galois
compiles per process, with no cache); the network itself is ~90 kB. `build_network(spec, p)`
returns `topologies.build(spec, p)`, from `cache_root()/networks/<key>.pkl` when it is there
(see `sim.cache_root`). The key hashes the SPEC, p, the Python and NumPy versions and the source
of every `topologies` module, so a change to the topology code rebuilds the network. Netlist
files are not cached (their content may change), nor builds that warn. `PSTAR_NETWORK_CACHE=0`
switches the cache off.

The file is a pickle written by this module, in the user's own cache folder (as Numba's cache
is). Its finite fields are stored as their tables: galois' GF(q) class is rebuilt only if
something asks for `field.galois` (nothing in the toolkit does). `dumps`/`loads` are the same
serialization, used to send a network to Dask workers.
"""
from __future__ import annotations

import hashlib
import io
import os
import pickle
import platform
import tempfile
import warnings
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from topologies.field import FiniteField

from . import cache_root


class LoadedField(FiniteField):
    """A FiniteField read back from its tables (no galois build unless `galois` is read)."""

    @cached_property
    def galois(self):
        import galois
        return galois.GF(self.q)


def _load_field(state: dict) -> LoadedField:
    f = LoadedField.__new__(LoadedField)
    f.__dict__.update(state)
    return f


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, FiniteField):
            return _load_field, ({k: v for k, v in vars(obj).items() if k != "galois"},)
        return NotImplemented


class _RoutingPickler(_Pickler):
    """Pickles an object that refers to the network `net` without it (`_RoutingUnpickler` puts
    the caller's network back)."""

    def __init__(self, file, net):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.net = net

    def persistent_id(self, obj):
        return "net" if obj is self.net else None


class _RoutingUnpickler(pickle.Unpickler):
    def __init__(self, file, net):
        super().__init__(file)
        self.net = net

    def persistent_load(self, pid):
        if pid != "net":
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")
        return self.net


def dumps(net) -> bytes:
    """The network as bytes, its finite fields as tables only (`loads` reads them)."""
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(net)
    return buf.getvalue()


def loads(data: bytes):
    return pickle.loads(data)


@lru_cache(maxsize=None)
def code_stamp(*packages: str) -> str:
    """Hash of the source of `packages` (the folders next to `topologies`), Python's and NumPy's versions."""
    import topologies

    root = Path(topologies.__file__).parent.parent
    h = hashlib.sha256(f"{platform.python_version()}|{np.__version__}".encode())
    for package in packages:
        for path in sorted((root / package).glob("*.py")):
            h.update(f"{package}/{path.name}".encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def enabled() -> bool:
    return os.environ.get("PSTAR_NETWORK_CACHE", "1") != "0"


def cache_path(spec: str, p: int | None) -> Path:
    key = hashlib.sha256(f"{spec}|{p}|{code_stamp('topologies')}".encode()).hexdigest()[:32]
    return cache_root() / "networks" / f"{key}.pkl"


def build_network(spec: str, p: int | None = None):
    """`topologies.build(spec, p)`, from the user's network cache when it holds it."""
    from topologies import build, netlist_path

    if not enabled() or netlist_path(spec) is not None:
        return build(spec, p=p)
    path = cache_path(spec, p)
    try:
        return loads(path.read_bytes())
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError):
        pass                                    # absent, unreadable or stale: build it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net = build(spec, p=p)
    for w in caught:                            # shown as usual, and such a build is not cached
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if not caught:
        _write(path, dumps(net))
    return net


ROUTING_CACHE_LIMIT = 256 << 20     # bytes: a larger routing is rebuilt each time


def cached_routing(net, key: tuple, make):
    """`make()` (a routing on `net`), from the cache when a routing of this key was built on a
    network with the same links, endpoints and SPEC with the same routing_logic code."""
    if not enabled():
        return make()
    h = hashlib.sha256(repr((net.name, net.spec, key, code_stamp("topologies", "routing_logic"))).encode())
    for a in (net.offsets, net.peer, net.endpoints):
        h.update(np.ascontiguousarray(a).tobytes())
    path = cache_root() / "routings" / f"{h.hexdigest()[:32]}.pkl"
    try:
        with open(path, "rb") as f:
            return _RoutingUnpickler(f, net).load()
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError):
        pass
    routing = make()
    buf = io.BytesIO()
    _RoutingPickler(buf, net).dump(routing)
    if buf.tell() <= ROUTING_CACHE_LIMIT:
        _write(path, buf.getvalue())
    return routing


def _write(path: Path, data: bytes) -> None:
    """Write atomically (a parallel run reads the old file or the new one); no cache on OSError."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
