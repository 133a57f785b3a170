"""Host side of the FPGA traffic tops: command bytes, report decoding and a serial-port CLI.

  python -m fpga.host --port /dev/ttyUSB1 [--baud 115200] [--load 64] [--pattern uniform|shift]
                      [--shift K] [--budget N] [--run SECONDS] [--json]

sets the load / pattern / shift / budget, clears the counters, starts the traffic, waits, pauses,
waits for the network to drain, asks for a report and prints it (a table, or one JSON object).
The protocol and the frame are described in `fpga.status`. Needs pyserial (imported only here).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from .status import ARG_BYTES, COMMANDS, MAGIC

HEADER = 12          # magic (2), E (2), dropped (4), cycles (4)
ENTRY = 10           # sent (4), received (4), errors (2)


def encode_command(name: str, value: int | None = None) -> bytes:
    """Bytes of one command: encode_command("load", 64) == b"L@", encode_command("start") == b"S".
    Names: start, pause, load, pattern, shift, budget, stall, clear, corrupt, report; pattern
    also takes "uniform" / "shift"."""
    if name not in COMMANDS:
        raise ValueError(f"command={name!r}: unknown; allowed: {', '.join(COMMANDS)}")
    code = COMMANDS[name]
    nargs = ARG_BYTES.get(code, 0)
    if nargs == 0:
        if value is not None:
            raise ValueError(f"{name}: takes no value")
        return code
    if name == "pattern" and isinstance(value, str):
        if value not in ("uniform", "shift"):
            raise ValueError(f"pattern={value!r}: must be uniform or shift")
        value = 0 if value == "uniform" else 1
    hi = (1 << (8 * nargs)) - 1 if name != "pattern" else 1
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= hi:
        raise ValueError(f"{name}={value!r}: must be an integer in 0..{hi}")
    return code + value.to_bytes(nargs, "big")


def frame_length(E: int) -> int:
    return HEADER + ENTRY * E + 1


def decode_report(frame: bytes) -> dict:
    """{"endpoints": E, "dropped", "cycles", "sent": [...], "received": [...], "errors": [...]}."""
    frame = bytes(frame)
    if len(frame) < HEADER + 1:
        raise ValueError(f"report: {len(frame)} bytes, shorter than a frame header")
    if tuple(frame[:2]) != MAGIC:
        raise ValueError(f"report: bad magic {frame[:2].hex()}, expected a55a")
    E = int.from_bytes(frame[2:4], "big")
    if len(frame) != frame_length(E):
        raise ValueError(f"report: {len(frame)} bytes, expected {frame_length(E)} for {E} entries")
    if sum(frame[:-1]) & 0xFF != frame[-1]:
        raise ValueError(f"report: bad checksum {frame[-1]:#04x}, expected {sum(frame[:-1]) & 0xFF:#04x}")
    out = {"endpoints": E, "dropped": int.from_bytes(frame[4:8], "big"),
           "cycles": int.from_bytes(frame[8:12], "big"), "sent": [], "received": [], "errors": []}
    for e in range(E):
        rec = frame[HEADER + ENTRY * e: HEADER + ENTRY * (e + 1)]
        out["sent"].append(int.from_bytes(rec[0:4], "big"))
        out["received"].append(int.from_bytes(rec[4:8], "big"))
        out["errors"].append(int.from_bytes(rec[8:10], "big"))
    return out


def read_report(port, timeout: float = 5.0) -> dict:
    """Send 'R' on an open pyserial port and read one frame."""
    port.reset_input_buffer()
    port.write(encode_command("report"))
    deadline = time.monotonic() + timeout

    def read(n):
        buf = b""
        while len(buf) < n:
            if time.monotonic() > deadline:
                raise TimeoutError(f"report: timed out after {len(buf)} of {n} bytes")
            buf += port.read(n - len(buf))
        return buf

    head = read(HEADER)
    if tuple(head[:2]) != MAGIC:
        raise ValueError(f"report: bad magic {head[:2].hex()}, expected a55a")
    E = int.from_bytes(head[2:4], "big")
    return decode_report(head + read(frame_length(E) - HEADER))


def format_table(rep: dict) -> str:
    lines = [f"entries {rep['endpoints']}  enabled cycles {rep['cycles']}  dropped {rep['dropped']}",
             f"{'entry':>5} {'sent':>10} {'received':>10} {'errors':>6}"]
    for e in range(rep["endpoints"]):
        lines.append(f"{e:>5} {rep['sent'][e]:>10} {rep['received'][e]:>10} {rep['errors'][e]:>6}")
    lines.append(f"{'total':>5} {sum(rep['sent']):>10} {sum(rep['received']):>10} {sum(rep['errors']):>6}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m fpga.host", description=__doc__.splitlines()[0])

    def ranged(lo, hi):
        def conv(text):
            try:
                v = int(text, 0)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{text!r}: not an integer") from None
            if not lo <= v <= hi:
                raise argparse.ArgumentTypeError(f"{v}: must be in {lo}..{hi}")
            return v
        return conv

    def seconds(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: not a number") from None
        if not 0 <= v <= 86400:
            raise argparse.ArgumentTypeError(f"{v}: must be in 0..86400 seconds")
        return v

    ap.add_argument("--port", required=True, help="serial device, e.g. /dev/ttyUSB1")
    ap.add_argument("--baud", type=ranged(300, 12_000_000), default=115200)
    ap.add_argument("--load", type=ranged(0, 255), default=64, help="packet probability x 256 per cycle")
    ap.add_argument("--pattern", choices=("uniform", "shift"), default="uniform")
    ap.add_argument("--shift", type=ranged(0, 255), default=1)
    ap.add_argument("--budget", type=ranged(0, 65535), default=0, help="packets per generator, 0 = unlimited")
    ap.add_argument("--run", type=seconds, default=1.0, help="seconds of traffic")
    ap.add_argument("--json", action="store_true")
    return ap


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        import serial
    except ImportError:
        print("fpga.host: pyserial is missing: pip install pyserial", file=sys.stderr)
        return 2
    try:
        port = serial.Serial(args.port, args.baud, timeout=0.2)
    except (serial.SerialException, OSError, ValueError) as exc:
        print(f"fpga.host: --port {args.port}: {str(exc).splitlines()[0] if str(exc) else exc!r}", file=sys.stderr)
        return 2
    try:
        with port:
            cmds = [encode_command("pause"), encode_command("load", args.load),
                    encode_command("pattern", args.pattern), encode_command("shift", args.shift),
                    encode_command("budget", args.budget), encode_command("clear"), encode_command("start")]
            port.write(b"".join(cmds))
            port.flush()
            time.sleep(args.run)
            port.write(encode_command("pause"))
            port.flush()
            time.sleep(0.1)                     # drain: far more than the network needs
            rep = read_report(port)
    except (TimeoutError, ValueError, OSError) as exc:
        print(f"fpga.host: {exc}", file=sys.stderr)
        return 1
    rep["settings"] = {"load": args.load, "pattern": args.pattern, "shift": args.shift, "budget": args.budget,
                       "run_s": args.run}
    print(json.dumps(rep) if args.json else format_table(rep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
