"""Topologies: finite fields, ER_q, supernodes, star products, PolarStar, the Network netlist.

First stage of the toolkit: nothing here imports routing_logic, sim, hdl or fpga.
"""
from .errors import ParameterError
from .network import Network
from .spec import parse_spec, FAMILIES
from .imports import netlist_path, read_netlist
from .polarstar import polarstar, design_space, largest, moore_bound, PolarStarStructure
from .er import ERGraph
from .supernodes import inductive_quad, paley, complete, make_supernode, Supernode
from .distances import distance_stats, distance_matrix
from .exports import export, load_json, to_json_dict, from_json_dict


def build(spec, p: int | None = None) -> Network:
    """The Network named by SPEC (`family:key=value,...`) or by a netlist file (our JSON or a
    BookSim2 anynet file, see topologies.imports); `p` overrides the endpoints per router."""
    path = netlist_path(spec)
    if path is None:
        from .spec import build as build_spec
        return build_spec(spec, p=p)
    if p is not None and (not isinstance(p, int) or isinstance(p, bool) or p < 0):
        raise ParameterError(f"p={p!r}: endpoints per router must be an integer >= 0")
    net = read_netlist(path)
    return net if p is None else net.with_endpoints(p)


__all__ = ["ParameterError", "Network", "build", "parse_spec", "FAMILIES", "polarstar", "design_space",
           "largest", "moore_bound", "PolarStarStructure", "ERGraph", "inductive_quad", "paley", "complete",
           "make_supernode", "Supernode", "distance_stats", "distance_matrix", "export", "load_json",
           "to_json_dict", "from_json_dict", "read_netlist"]
