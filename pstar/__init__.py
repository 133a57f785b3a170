"""`pstar`: the command line that fronts every stage (topology, routing, simulation, RTL, FPGA)."""
