"""Shared fixtures: small PolarStar networks built once per session."""
import pytest

from topologies import polarstar


@pytest.fixture(scope="session")
def ps_q3_iq3():
    return polarstar(3, "iq", 3)


@pytest.fixture(scope="session")
def ps_q11_iq3():
    return polarstar(11, "iq", 3)
