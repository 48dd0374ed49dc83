"""Monte Carlo estimate of pi from uniform points in the unit square, in batches."""

from __future__ import annotations

from typing import Any

#: points per batch
SIZES = {"small": 100_000, "large": 100_000 * 16}
RTOL, ATOL = 1e-12, 1e-12


def run(np: Any, n: int) -> Any:
    """The mean of ten batch estimates of pi and their standard deviation."""
    np.random.seed(123)
    estimates = []
    for _batch in range(10):
        x = np.random.rand(n)
        y = np.random.rand(n)
        inside = np.sum(x**2 + y**2 <= 1.0)
        estimates.append(4 * inside / n)
    estimates = np.array(estimates)
    return float(estimates.mean()), float(estimates.std())
