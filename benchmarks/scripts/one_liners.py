"""Short exercises of a NumPy course: each answer a line or two."""

from __future__ import annotations

from typing import Any

#: rows of the data matrix (the pairwise matrices have its square)
SIZES = {"small": 100, "large": 100 * 4}
RTOL, ATOL = 1e-9, 1e-12


def run(np: Any, n: int) -> Any:
    """The answers, as a tuple."""
    np.random.seed(8)
    A = np.random.rand(n, 5)
    x = np.random.randn(n)
    y = np.random.randn(n)

    # 1. normalize each row to unit length
    A_unit = A / np.sqrt((A**2).sum(axis=1))[:, np.newaxis]
    # 2. rows that sum to one
    A_prob = A / A.sum(axis=1, keepdims=True)
    # 3. standardize the columns
    A_std = (A - A.mean(axis=0)) / A.std(axis=0)
    # 4. pairwise Euclidean distance matrix
    D = np.sqrt(((A[:, np.newaxis, :] - A[np.newaxis, :, :])**2).sum(axis=-1))
    # 5. outer product two ways
    O1 = np.outer(x, y)
    O2 = x[:, None] * y[None, :]
    # 6. clip with np.where
    z = np.where(x > 1, 1, np.where(x < -1, -1, x))
    # 7. replace negatives by zero
    relu = np.where(y < 0, 0, y)
    # 8. count values in bins without np.histogram
    edges = np.linspace(-3, 3, 13)
    counts = ((x[:, None] >= edges[None, :-1]) & (x[:, None] < edges[None, 1:])).sum(axis=0)
    # 9. how many values lie within one standard deviation
    within = np.sum(np.abs(x - x.mean()) < x.std())
    # 10. index of the nearest value to 0.5
    nearest = np.abs(A[:, 0] - 0.5).argmin()
    # 11. the row of D with the largest mean distance
    far = D.mean(axis=1).argmax()
    return (A_unit, A_prob, A_std, D, O1 - O2, z, relu, counts, int(within),
            int(nearest), int(far))
