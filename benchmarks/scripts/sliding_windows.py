"""Sliding-window statistics of a random walk: moving average in a loop, rolling std, cumsums."""

from __future__ import annotations

from typing import Any

#: samples in the series
SIZES = {"small": 500, "large": 500 * 16}
RTOL, ATOL = 1e-7, 1e-7


def run(np: Any, n: int) -> Any:
    """The moving average (window 20) and rolling standard deviation."""
    np.random.seed(2)
    x = np.cumsum(np.random.randn(n))
    w = 20

    # moving average, one window at a time
    ma = []
    for i in range(len(x) - w + 1):
        ma.append(float(x[i:i + w].mean()))
    ma = np.array(ma)

    # rolling std from running sums of x and x**2
    c1 = np.concatenate(([0.0], np.cumsum(x)))
    c2 = np.concatenate(([0.0], np.cumsum(x**2)))
    mean = (c1[w:] - c1[:-w]) / w
    var = (c2[w:] - c2[:-w]) / w - mean**2
    std = np.sqrt(np.maximum(var, 0))
    return ma, std
