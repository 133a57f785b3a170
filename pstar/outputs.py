"""Output files of the `pstar` commands: checked before the work starts, written whole or not at all.

    path = check_output(args.plot, "--plot", PLOT_SUFFIXES)       # at the top of run(): bad path -> one line
    ...the work...
    result.outputs.append(Output("--plot", path, lambda tmp: plot(..., tmp), key="plot"))

`pstar.cli.main` writes a Result's outputs after the work, each to a temporary file beside the
target that is renamed over it once complete, so a failed write (disk full, folder removed meanwhile)
leaves no partial file. A failure is one line on stderr and exit status 2; the results computed so
far are still printed on stdout, and the line says so.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from topologies.errors import ParameterError

PLOT_SUFFIXES = (".png", ".svg", ".pdf")


class OutputError(ParameterError):
    """An output could not be written (after the work was done)."""


def check_output(path, flag: str, suffixes=None) -> Path:
    """`path` as a Path once it can be written: a known suffix (when `suffixes` is given), not a
    folder, its parent an existing writable folder. ParameterError naming `flag` otherwise."""
    text = str(path)
    if not text.strip():
        raise ParameterError(f"{flag}={text!r}: expected a file name")
    p = Path(text)
    if p.is_dir():
        raise ParameterError(f"{flag} {text}: is a folder, expected a file name")
    if suffixes is not None and p.suffix.lower() not in suffixes:
        got = f"unknown suffix {p.suffix.lower()!r}" if p.suffix else "no suffix"
        raise ParameterError(f"{flag} {text}: {got}; allowed: {', '.join(suffixes)}")
    _check_parent(p, flag)
    if p.exists() and not os.access(p, os.W_OK):
        raise ParameterError(f"{flag} {text}: not writable")
    return p


def check_output_dir(path, flag: str) -> Path:
    """A folder the command may create or fill: not an existing file, its parent a writable folder."""
    text = str(path)
    if not text.strip():
        raise ParameterError(f"{flag}={text!r}: expected a folder name")
    p = Path(text)
    if p.exists():
        if not p.is_dir():
            raise ParameterError(f"{flag} {text}: is a file, expected a folder")
        if not os.access(p, os.W_OK | os.X_OK):
            raise ParameterError(f"{flag} {text}: folder not writable")
        return p
    _check_parent(p, flag)
    return p


def _check_parent(p: Path, flag: str) -> None:
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise ParameterError(f"{flag} {p}: folder {str(parent)!r} {what}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ParameterError(f"{flag} {p}: folder {str(parent)!r} not writable")


@dataclass
class Output:
    """One file a command writes once its work is done: `write(tmp_path)` writes the whole file."""
    flag: str
    path: Path
    write: Callable[[Path], object]
    key: str | None = None      # the key of the command's data that names this file (dropped on failure)


def write_output(out: Output):
    """Run `out.write` on a temporary file beside `out.path` (same suffix, so that writers choosing
    the format by suffix choose the right one), then rename it over the target. OutputError on any
    failure, with no file left behind. Returns what the writer returned."""
    path = Path(out.path)
    tmp = path.with_name(f".{path.stem}.partial-{os.getpid()}{path.suffix}")
    try:
        value = out.write(tmp)
        os.replace(tmp, path)
        return value
    except OSError as e:
        reason = e.strerror or str(e)
    except MemoryError:
        reason = "out of memory"
    except ParameterError as e:      # a writer that reports its own OSError (topologies.export)
        reason = str(e).replace(str(tmp), str(path))
    finally:
        if tmp.exists():
            try:
                tmp.unlink()
            except OSError:
                pass
    raise OutputError(f"{out.flag} {path}: cannot write ({reason})")


def write_outputs(outputs, data: dict | None) -> str | None:
    """Write every output; None when all were written, else the one-line error naming the first
    that failed, the files that were written, and that the results are on stdout."""
    written, failed = [], None
    for out in outputs:
        try:
            write_output(out)
            written.append(str(out.path))
        except OutputError as e:
            failed = failed or str(e)
            if data is not None and out.key:
                data.pop(out.key, None)
    if failed is None:
        return None
    kept = "; the results are printed on stdout"
    if written:
        kept += f", and written to {', '.join(written)}"
    return failed + kept
