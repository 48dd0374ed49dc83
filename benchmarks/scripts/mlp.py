"""A two-layer perceptron (tanh, sigmoid output) learning XOR-like data by backprop."""

from __future__ import annotations

from typing import Any

#: training points
SIZES = {"small": 256, "large": 256 * 16}
RTOL, ATOL = 1e-7, 1e-9


def init(np: Any, n: int, hidden: int = 16) -> tuple[Any, ...]:
    """Data and initial weights."""
    np.random.seed(7)
    X = np.random.uniform(-1, 1, (n, 2))
    y = ((X[:, 0] * X[:, 1]) > 0).astype(float).reshape(-1, 1)
    W1 = np.random.randn(2, hidden) * 0.5
    b1 = np.zeros(hidden)
    W2 = np.random.randn(hidden, 1) * 0.5
    b2 = np.zeros(1)
    return X, y, W1, b1, W2, b2


def sigmoid(np: Any, z: Any) -> Any:
    """The logistic function."""
    return 1 / (1 + np.exp(-z))


def step(np: Any, X: Any, y: Any, W1: Any, b1: Any, W2: Any, b2: Any,
         lr: float) -> tuple[Any, ...]:
    """One gradient-descent step on the binary cross-entropy; new weights and the loss."""
    n = X.shape[0]
    # forward
    h = np.tanh(X @ W1 + b1)
    out = sigmoid(np, h @ W2 + b2)
    loss = -np.mean(y * np.log(out + 1e-9) + (1 - y) * np.log(1 - out + 1e-9))
    # backward
    dz2 = (out - y) / n
    dW2 = h.T @ dz2
    db2 = dz2.sum(axis=0)
    dh = dz2 @ W2.T * (1 - h**2)
    dW1 = X.T @ dh
    db1 = dh.sum(axis=0)
    return W1 - lr * dW1, b1 - lr * db1, W2 - lr * dW2, b2 - lr * db2, loss


def run(np: Any, n: int) -> Any:
    """The output layer's weights after 200 steps, and the final loss."""
    X, y, W1, b1, W2, b2 = init(np, n)
    history = []
    for epoch in range(200):
        W1, b1, W2, b2, loss = step(np, X, y, W1, b1, W2, b2, 1.0)
        if epoch % 20 == 0:
            history.append(float(loss))
    return W2, float(loss)


def run_jit(la: Any, n: int) -> Any:
    """:func:`run` with the step under ``la.jit``."""
    X, y, W1, b1, W2, b2 = init(la, n)
    train = la.jit(lambda X, y, W1, b1, W2, b2: step(la, X, y, W1, b1, W2, b2, 1.0))
    history = []
    for epoch in range(200):
        W1, b1, W2, b2, loss = train(X, y, W1, b1, W2, b2)
        if epoch % 20 == 0:
            history.append(float(loss))
    return W2, float(loss)
