"""Verilator co-simulation of the RTL (`hdl`) in lockstep with the model (`sim`).

* `cosim.replay`: the fast lockstep; the model logs its endpoints' side and a plain Verilator
  executable (`replay_main.cpp`: the network top; `netlist_main.cpp`: the router module wired in
  C++) replays it, every flit, credit and drop compared (`python -m cosim.replay ...`);
* `cosim.lockstep`: the network's RTL build (`network_build`), and the cocotb lockstep;
* `cosim.harness`: build-once Verilator builds in `build/cocotb/`; `cosim.compiler`: the C++
  compiler of its plain executables;
* `cosim.endpoints`: the endpoint side of docs/microarchitecture.md in plain Python.

The C++ sources ship with the package (package data) and are found next to these modules.
"""
