"""k-nearest-neighbour classification of 2-D points by majority vote."""

from __future__ import annotations

from typing import Any

#: training points (test points: a quarter as many)
SIZES = {"small": 200, "large": 200 * 4}
RTOL, ATOL = 0, 0


def run(np: Any, n: int) -> Any:
    """The predicted labels of the test points (k = 5) and the accuracy."""
    np.random.seed(3)
    X_train = np.random.randn(n, 2)
    y_train = (X_train[:, 0] * X_train[:, 1] + 0.3 * np.random.randn(n) > 0).astype(int)
    m = n // 4
    X_test = np.random.randn(m, 2)
    y_test = (X_test[:, 0] * X_test[:, 1] > 0).astype(int)

    k = 5
    dists = np.sum((X_test[:, np.newaxis, :] - X_train[np.newaxis, :, :])**2, axis=-1)
    nearest = np.argsort(dists, axis=1)[:, :k]
    votes = y_train[nearest]
    y_pred = (votes.sum(axis=1) > k / 2).astype(int)
    accuracy = np.mean(y_pred == y_test)
    return y_pred, float(accuracy)
