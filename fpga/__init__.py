"""FPGA flows: board tops, traffic generators/checkers, Yosys + nextpnr builds and reports."""
