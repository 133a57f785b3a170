"""The router contract both sides read: the flit layouts and the router parameters.

`topologies` -> `routing_logic` -> {`sim`, `hdl`} -> `fpga`: the model (`sim`) and the RTL (`hdl`)
import their contract from here, not from each other.
"""
