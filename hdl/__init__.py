"""Amaranth RTL: the VC router, routing units and network elaboration to Verilog."""
