"""The one exception type for bad user-facing parameters, shared by every stage.

Raised with a one-line message naming the parameter and what is allowed; the CLI turns it
into that line on stderr and exit status 2.
"""


class ParameterError(ValueError):
    """A parameter is out of its allowed set; the message names it and the allowed values."""


def require(cond: bool, message: str) -> None:
    if not cond:
        raise ParameterError(message)


def check_seed(seed, name: str = "seed") -> int:
    """A random seed as numpy's generators take it: a non-negative integer."""
    import numbers
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise ParameterError(f"{name}={seed!r}: must be a non-negative integer")
    return int(seed)
