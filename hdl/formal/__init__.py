"""Formal proofs of the router's flow-control invariants (SymbiYosys via YoWASP; see runner.py)."""
