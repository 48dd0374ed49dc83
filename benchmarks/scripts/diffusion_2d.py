"""2-D diffusion of a hat function, explicit steps with slices and Dirichlet walls."""

from __future__ import annotations

from typing import Any

SIZES = {"small": 41, "large": 41 * 4}
RTOL, ATOL = 1e-10, 1e-12


def diffuse(np: Any, u: Any, nt: int, dt: float, dx: float, dy: float, nu: float) -> Any:
    """*u* after *nt* explicit diffusion steps, walls held at 1."""
    for _n in range(nt + 1):
        un = u.copy()
        u[1:-1, 1:-1] = (un[1:-1, 1:-1]
                         + nu * dt / dx**2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2])
                         + nu * dt / dy**2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1]))
        u[0, :] = 1
        u[-1, :] = 1
        u[:, 0] = 1
        u[:, -1] = 1
    return u


def run(np: Any, n: int) -> Any:
    """The field after 100 steps on an *n* x *n* grid."""
    nx = ny = n
    nt = 100
    nu = 0.05
    dx = 2 / (nx - 1)
    dy = 2 / (ny - 1)
    sigma = 0.25
    dt = sigma * dx * dy / nu

    u = np.ones((ny, nx))
    u[int(0.5 / dy):int(1 / dy + 1), int(0.5 / dx):int(1 / dx + 1)] = 2
    return diffuse(np, u, nt, dt, dx, dy, nu)


def run_jit(la: Any, n: int) -> Any:
    """:func:`run` with one step under ``la.jit``."""
    nx = ny = n
    nu = 0.05
    dx = 2 / (nx - 1)
    dy = 2 / (ny - 1)
    dt = 0.25 * dx * dy / nu

    u = la.ones((ny, nx))
    u[int(0.5 / dy):int(1 / dy + 1), int(0.5 / dx):int(1 / dx + 1)] = 2

    @la.jit
    def step(u: Any) -> Any:
        return diffuse(la, u, 0, dt, dx, dy, nu)

    for _ in range(101):
        u = step(u)
    return u
