"""Topologies: finite fields, ER_q, supernodes, star products, PolarStar, the Network netlist.

First stage of the toolkit: nothing here imports routing_logic, sim, hdl or fpga.
"""
from .errors import ParameterError
from .network import Network
from .spec import build, parse_spec, FAMILIES
from .polarstar import polarstar, design_space, largest, moore_bound, PolarStarStructure
from .er import ERGraph
from .supernodes import inductive_quad, paley, complete, make_supernode, Supernode
from .distances import distance_stats, distance_matrix
from .exports import export, load_json, to_json_dict, from_json_dict

__all__ = ["ParameterError", "Network", "build", "parse_spec", "FAMILIES", "polarstar", "design_space",
           "largest", "moore_bound", "PolarStarStructure", "ERGraph", "inductive_quad", "paley", "complete",
           "make_supernode", "Supernode", "distance_stats", "distance_matrix", "export", "load_json",
           "to_json_dict", "from_json_dict"]
