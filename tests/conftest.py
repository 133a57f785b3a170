"""Shared fixtures: small PolarStar networks built once per session; the lockstep's compiler."""
import os
import shutil

import pytest

from topologies import polarstar

# The lockstep executables of the tests are compiled by the system's C++ compiler unless
# PSTAR_CXX says otherwise: on a clean machine zig first builds its C++ runtime, about 110 s of
# one core that CI would pay before its first replay (the same C++; zig's code only runs faster,
# which the benchmarks measure). test_cosim_harness checks the default choice itself.
if "PSTAR_CXX" not in os.environ and shutil.which("c++"):
    os.environ["PSTAR_CXX"] = "c++"


@pytest.fixture(scope="session")
def ps_q3_iq3():
    return polarstar(3, "iq", 3)


@pytest.fixture(scope="session")
def ps_q11_iq3():
    return polarstar(11, "iq", 3)
