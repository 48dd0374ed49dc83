"""Test inputs shared by the namespace tests (fft, linalg), and a heat step
written with NumPy functions (lazy or not) for the layout tests."""

from __future__ import annotations

import numpy as np


def random_array(shape, dtype, seed: int = 0) -> np.ndarray:
    """Standard normal values of *dtype* (small integers for integer dtypes,
    independent real and imaginary parts for complex ones)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return rng.integers(-4, 5, shape).astype(dtype)
    a = rng.standard_normal(shape)
    if dtype.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def heat_step(u):
    """One explicit step of the 2-D heat equation on *u* (NumPy or lazy), its
    boundary kept, written with concatenations (as benchmarks/ W5)."""
    interior = u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                      - 4 * u[1:-1, 1:-1])
    middle = np.concatenate([u[1:-1, :1], interior, u[1:-1, -1:]], axis=1)
    return np.concatenate([u[:1], middle, u[-1:]], axis=0)
