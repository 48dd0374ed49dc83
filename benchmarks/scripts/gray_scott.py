"""Gray-Scott reaction-diffusion with a five-point Laplacian made of ``np.roll``.

A square of V seeded with noise in the middle of a U = 1 field, periodic
boundaries, the usual spot-forming parameters.
"""

from __future__ import annotations

from typing import Any

SIZES = {"small": 64, "large": 64 * 4}
RTOL, ATOL = 1e-8, 1e-10


def laplacian(np: Any, Z: Any) -> Any:
    """The periodic five-point Laplacian of *Z* (grid spacing 1)."""
    return (np.roll(Z, 1, axis=0) + np.roll(Z, -1, axis=0)
            + np.roll(Z, 1, axis=1) + np.roll(Z, -1, axis=1) - 4 * Z)


def run(np: Any, n: int) -> Any:
    """``V`` after 200 steps on an *n* x *n* grid."""
    Du, Dv, F, k = 0.16, 0.08, 0.035, 0.065
    steps = 200

    np.random.seed(1)
    U = np.ones((n, n))
    V = np.zeros((n, n))
    r = n // 8
    c = n // 2
    U[c - r:c + r, c - r:c + r] = 0.50
    V[c - r:c + r, c - r:c + r] = 0.25
    U += 0.05 * np.random.random((n, n))
    V += 0.05 * np.random.random((n, n))

    for _i in range(steps):
        UVV = U * V * V
        U += Du * laplacian(np, U) - UVV + F * (1 - U)
        V += Dv * laplacian(np, V) + UVV - (F + k) * V
    return V


def run_jit(la: Any, n: int) -> Any:
    """:func:`run` with one step under ``la.jit``."""
    Du, Dv, F, k = 0.16, 0.08, 0.035, 0.065
    la.random.seed(1)
    U = la.ones((n, n))
    V = la.zeros((n, n))
    r = n // 8
    c = n // 2
    U[c - r:c + r, c - r:c + r] = 0.50
    V[c - r:c + r, c - r:c + r] = 0.25
    U += 0.05 * la.random.random((n, n))
    V += 0.05 * la.random.random((n, n))

    @la.jit
    def step(U: Any, V: Any) -> Any:
        UVV = U * V * V
        U2 = U + Du * laplacian(la, U) - UVV + F * (1 - U)
        V2 = V + Dv * laplacian(la, V) + UVV - (F + k) * V
        return U2, V2

    for _ in range(200):
        U, V = step(U, V)
    return V
