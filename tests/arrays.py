"""Test inputs shared by the namespace tests (fft, linalg)."""

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
