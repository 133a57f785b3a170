"""The test tiers: CI runs the default one (the README's test command); `PSTAR_COSIM=full` adds
the long co-simulations, replays and proofs kept out of CI's 20-minute budget."""
import os

import pytest

FULL = os.environ.get("PSTAR_COSIM", "") == "full"


def full_only(why: str):
    """A mark that skips the test unless PSTAR_COSIM=full; `why` says what makes it long."""
    return pytest.mark.skipif(not FULL, reason=f"{why}: run with PSTAR_COSIM=full")
