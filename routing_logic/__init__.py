"""Routing logic: the golden per-hop routing model (PolarStar arithmetic, Polarized, table, Valiant, UGAL), VC policies, deadlock checks."""
