"""k-means on three Gaussian blobs: argmin assignment, masked-mean update, fixed iterations."""

from __future__ import annotations

from typing import Any

#: points per blob
SIZES = {"small": 200, "large": 200 * 16}
RTOL, ATOL = 1e-9, 1e-12


def run(np: Any, n: int) -> Any:
    """The centroids after 10 iterations, and the final inertia."""
    np.random.seed(42)
    k = 3
    X = np.vstack([np.random.randn(n, 2) * 0.6 + [0, 0],
                   np.random.randn(n, 2) * 0.6 + [3, 3],
                   np.random.randn(n, 2) * 0.6 + [0, 4]])

    idx = np.random.choice(len(X), k, replace=False)
    centroids = X[idx]
    for _it in range(10):
        dists = np.sqrt(((X[:, np.newaxis, :] - centroids[np.newaxis, :, :])**2).sum(axis=2))
        labels = np.argmin(dists, axis=1)
        centroids = np.array([X[labels == j].mean(axis=0) for j in range(k)])

    inertia = np.sum((X - centroids[labels])**2)
    return centroids, float(inertia)
