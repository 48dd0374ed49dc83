"""2-D nonlinear convection of a square pulse (u and v), upwind steps with slices."""

from __future__ import annotations

from typing import Any

SIZES = {"small": 41, "large": 41 * 4}
RTOL, ATOL = 1e-9, 1e-10


def run(np: Any, n: int) -> Any:
    """``u`` and ``v`` after 100 steps on an *n* x *n* grid."""
    nx = ny = n
    nt = 100
    dx = 2 / (nx - 1)
    dy = 2 / (ny - 1)
    sigma = 0.2
    dt = sigma * dx

    u = np.ones((ny, nx))
    v = np.ones((ny, nx))
    u[int(.5 / dy):int(1 / dy + 1), int(.5 / dx):int(1 / dx + 1)] = 2
    v[int(.5 / dy):int(1 / dy + 1), int(.5 / dx):int(1 / dx + 1)] = 2

    for _ in range(nt + 1):
        un = u.copy()
        vn = v.copy()
        u[1:, 1:] = (un[1:, 1:]
                     - (un[1:, 1:] * dt / dx * (un[1:, 1:] - un[1:, :-1]))
                     - vn[1:, 1:] * dt / dy * (un[1:, 1:] - un[:-1, 1:]))
        v[1:, 1:] = (vn[1:, 1:]
                     - (un[1:, 1:] * dt / dx * (vn[1:, 1:] - vn[1:, :-1]))
                     - vn[1:, 1:] * dt / dy * (vn[1:, 1:] - vn[:-1, 1:]))
        u[0, :] = 1
        u[-1, :] = 1
        u[:, 0] = 1
        u[:, -1] = 1
        v[0, :] = 1
        v[-1, :] = 1
        v[:, 0] = 1
        v[:, -1] = 1
    return u, v


def run_jit(la: Any, n: int) -> Any:
    """:func:`run` with one step of both fields under ``la.jit``."""
    nx = ny = n
    dx = 2 / (nx - 1)
    dy = 2 / (ny - 1)
    dt = 0.2 * dx

    u = la.ones((ny, nx))
    v = la.ones((ny, nx))
    u[int(.5 / dy):int(1 / dy + 1), int(.5 / dx):int(1 / dx + 1)] = 2
    v[int(.5 / dy):int(1 / dy + 1), int(.5 / dx):int(1 / dx + 1)] = 2

    @la.jit
    def step(u: Any, v: Any) -> Any:
        un = u.copy()
        vn = v.copy()
        u[1:, 1:] = (un[1:, 1:] - un[1:, 1:] * dt / dx * (un[1:, 1:] - un[1:, :-1])
                     - vn[1:, 1:] * dt / dy * (un[1:, 1:] - un[:-1, 1:]))
        v[1:, 1:] = (vn[1:, 1:] - un[1:, 1:] * dt / dx * (vn[1:, 1:] - vn[1:, :-1])
                     - vn[1:, 1:] * dt / dy * (vn[1:, 1:] - vn[:-1, 1:]))
        for w in (u, v):
            w[0, :] = 1
            w[-1, :] = 1
            w[:, 0] = 1
            w[:, -1] = 1
        return u, v

    for _ in range(101):
        u, v = step(u, v)
    return u, v
