"""Shared fixtures: small PolarStar networks built once per session."""
import pytest

from topologies import polarstar


@pytest.fixture(scope="session")
def ps_q3_iq3():
    return polarstar(3, "iq", 3)


@pytest.fixture(scope="session")
def ps_q11_iq3():
    return polarstar(11, "iq", 3)


# Modules whose tests take minutes (Verilator builds of whole networks, nextpnr, SymbiYosys), in
# the order to start them. pytest-xdist hands tests out in collection order, so starting the long
# ones first leaves the many short ones to even out the two workers at the end, instead of one
# worker running a 3-minute replay while the other idles (the 20-minute CI budget).
LONG_FIRST = ("test_replay.py", "test_cocotb_network.py", "test_cocotb_garbage.py", "test_fpga_build.py",
              "test_cocotb_router.py", "test_hdl_network_sim.py", "test_fpga_traffic.py", "test_formal.py")


def pytest_collection_modifyitems(session, config, items):
    rank = {name: k for k, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FIRST)))    # stable: order kept within
