"""The one exception type for bad user-facing parameters, shared by every stage.

Raised with a one-line message naming the parameter and what is allowed; the CLI turns it
into that line on stderr and exit status 2.
"""


class ParameterError(ValueError):
    """A parameter is out of its allowed set; the message names it and the allowed values."""


def require(cond: bool, message: str) -> None:
    if not cond:
        raise ParameterError(message)
