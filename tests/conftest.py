"""Shared fixtures (small PolarStar networks built once per session) and the test order."""
import pytest

from topologies import polarstar


@pytest.fixture(scope="session")
def ps_q3_iq3():
    return polarstar(3, "iq", 3)


@pytest.fixture(scope="session")
def ps_q11_iq3():
    return polarstar(11, "iq", 3)


def pytest_collection_modifyitems(items):
    """Tests marked `slow` (Verilator and nextpnr builds, long co-simulations) start first, in
    file order, the rest after them: with pyproject's `--maxschedchunk 1` each pytest-xdist
    worker takes the next test when it is free, so the long ones run beside the short ones
    instead of one of them starting last and holding the run (CI's 20-minute budget)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
