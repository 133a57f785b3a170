"""Finite fields GF(q) as small integer lookup tables, built with `galois`.

Elements are the integers 0..q-1 in galois' integer representation (for q = p^m the base-p
digits are the polynomial coefficients). Tables make vectorized NumPy arithmetic fast and are
also what the hardware routing units are generated from (log/antilog for prime powers).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .errors import ParameterError


TRIAL_DIVISION_LIMIT = 1 << 24      # above this, galois' primality tests (its import takes ~1 s)


def is_prime_power(q: int) -> bool:
    """q = p^k for a prime p and k >= 1: trial division for small q, `galois.is_prime_power` above
    (answers at once for 2^61 − 1, where trial division runs for hours)."""
    if q < 2:
        return False
    if q > TRIAL_DIVISION_LIMIT:
        import galois
        return bool(galois.is_prime_power(int(q)))
    p = 2
    while p * p <= q and q % p:
        p += 1
    if q % p:
        p = q  # q itself is prime
    while q % p == 0:
        q //= p
    return q == 1


def prime_powers(lo: int, hi: int) -> list[int]:
    return [q for q in range(max(lo, 2), hi + 1) if is_prime_power(q)]


class FiniteField:
    """GF(q) with add/mul/neg/inv tables (uint16/uint32 arrays indexed by element integers)."""

    def __init__(self, q: int):
        if not isinstance(q, (int, np.integer)) or not is_prime_power(int(q)):
            raise ParameterError(f"q={q!r}: must be a prime power (2, 3, 4, 5, 7, 8, 9, 11, ...)")
        import galois  # imported lazily: it takes about a second

        self.q = q = int(q)
        self.galois = gf = galois.GF(q)
        self.characteristic = int(gf.characteristic)
        self.degree = int(gf.degree)
        dtype = np.uint16 if q <= 1 << 15 else np.uint32
        elems = gf(np.arange(q))
        self.add = np.asarray(elems[:, None] + elems[None, :]).astype(dtype)
        self.mul = np.asarray(elems[:, None] * elems[None, :]).astype(dtype)
        self.neg = np.asarray(-elems).astype(dtype)
        inv = np.zeros(q, dtype=dtype)
        inv[1:] = np.asarray(gf(np.arange(1, q)) ** -1)
        self.inv = inv
        alpha = gf.primitive_element
        self.primitive_element = int(alpha)
        self.antilog = np.asarray(alpha ** np.arange(q - 1)).astype(dtype)
        log = np.zeros(q, dtype=dtype)
        log[self.antilog] = np.arange(q - 1)
        self.log = log
        self.squares = np.unique(self.mul[np.arange(1, q), np.arange(1, q)])

    def sub(self, a, b):
        return self.add[a, self.neg[b]]

    def __repr__(self) -> str:
        return f"GF({self.q})"


@lru_cache(maxsize=None)
def field(q: int) -> FiniteField:
    return FiniteField(q)
