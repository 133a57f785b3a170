"""Cycle-accurate reference model of the router and network, traffic patterns and experiments."""
