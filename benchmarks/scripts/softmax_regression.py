"""Softmax (multinomial logistic) regression trained by full-batch gradient descent."""

from __future__ import annotations

from typing import Any

#: points per class
SIZES = {"small": 100, "large": 100 * 16}
RTOL, ATOL = 1e-8, 1e-10


def make_data(np: Any, n: int) -> tuple[Any, Any, Any]:
    """Three Gaussian classes in 2-D: inputs with a bias column, one-hot targets, labels."""
    np.random.seed(5)
    X = np.concatenate([np.random.randn(n, 2) + [2, 0],
                        np.random.randn(n, 2) + [-1, 2],
                        np.random.randn(n, 2) + [-1, -2]])
    y = np.repeat(np.arange(3), n)
    Xb = np.hstack([np.ones((3 * n, 1)), X])
    Y = np.eye(3)[y]
    return Xb, Y, y


def softmax(np: Any, scores: Any) -> Any:
    """Row-wise softmax."""
    scores = scores - scores.max(axis=1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=1, keepdims=True)


def run(np: Any, n: int) -> Any:
    """The weights after 200 steps, and the final cross-entropy loss."""
    Xb, Y, y = make_data(np, n)
    N = Xb.shape[0]
    W = np.zeros((3, 3))
    lr = 0.5
    losses = []
    for epoch in range(200):
        P = softmax(np, Xb @ W)
        grad = Xb.T @ (P - Y) / N
        W -= lr * grad
        if epoch % 50 == 0:
            losses.append(float(-np.mean(np.sum(Y * np.log(P + 1e-12), axis=1))))
    P = softmax(np, Xb @ W)
    loss = -np.mean(np.log(P[np.arange(N), y]))
    return W, float(loss)


def run_jit(la: Any, n: int) -> Any:
    """:func:`run` with a gradient step under ``la.jit``."""
    Xb, Y, y = make_data(la, n)
    N = Xb.shape[0]
    W = la.zeros((3, 3))

    @la.jit
    def train_step(W: Any, Xb: Any, Y: Any) -> Any:
        P = softmax(la, Xb @ W)
        return W - 0.5 * (Xb.T @ (P - Y) / N), -la.mean(la.sum(Y * la.log(P + 1e-12), axis=1))

    losses = []
    for epoch in range(200):
        W, loss = train_step(W, Xb, Y)
        if epoch % 50 == 0:
            losses.append(float(loss))
    P = softmax(la, Xb @ W)
    return W, float(-la.mean(la.log(P[la.arange(N), y])))
