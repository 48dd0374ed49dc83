"""Lid-driven cavity flow: Navier-Stokes with a pressure Poisson inner loop.

The course's three functions: the source term of the pressure equation, the
pressure solve (``nit`` Jacobi sweeps with Neumann walls), and the velocity
update with the lid moving at ``u = 1``.
"""

from __future__ import annotations

from typing import Any

SIZES = {"small": 41, "large": 41 * 4}
RTOL, ATOL = 1e-8, 1e-10


def build_up_b(np: Any, b: Any, rho: float, dt: float, u: Any, v: Any,
               dx: float, dy: float) -> Any:
    """The right-hand side of the pressure equation, written into *b*."""
    b[1:-1, 1:-1] = (rho * (1 / dt * ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)
                                      + (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))
                            - ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx))**2
                            - 2 * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy)
                                   * (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx))
                            - ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))**2))
    return b


def pressure_poisson(np: Any, p: Any, dx: float, dy: float, b: Any, nit: int) -> Any:
    """*p* after *nit* Jacobi sweeps (p = 0 at the lid, zero gradient elsewhere)."""
    for _q in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy**2
                          + (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx**2)
                         / (2 * (dx**2 + dy**2))
                         - dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1, 1:-1])
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[:, 0] = p[:, 1]
        p[-1, :] = 0
    return p


def cavity_flow(np: Any, nt: int, u: Any, v: Any, dt: float, dx: float, dy: float,
                p: Any, rho: float, nu: float, nit: int) -> tuple[Any, Any, Any]:
    """*nt* time steps of the cavity."""
    b = np.zeros((u.shape[0], u.shape[1]))
    for _n in range(nt):
        un = u.copy()
        vn = v.copy()
        b = build_up_b(np, b, rho, dt, u, v, dx, dy)
        p = pressure_poisson(np, p, dx, dy, b, nit)

        u[1:-1, 1:-1] = (un[1:-1, 1:-1]
                         - un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, 0:-2])
                         - vn[1:-1, 1:-1] * dt / dy * (un[1:-1, 1:-1] - un[0:-2, 1:-1])
                         - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2])
                         + nu * (dt / dx**2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1]
                                               + un[1:-1, 0:-2])
                                 + dt / dy**2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1]
                                                 + un[0:-2, 1:-1])))
        v[1:-1, 1:-1] = (vn[1:-1, 1:-1]
                         - un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, 0:-2])
                         - vn[1:-1, 1:-1] * dt / dy * (vn[1:-1, 1:-1] - vn[0:-2, 1:-1])
                         - dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1])
                         + nu * (dt / dx**2 * (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1]
                                               + vn[1:-1, 0:-2])
                                 + dt / dy**2 * (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1]
                                                 + vn[0:-2, 1:-1])))
        u[0, :] = 0
        u[:, 0] = 0
        u[:, -1] = 0
        u[-1, :] = 1    # the lid
        v[0, :] = 0
        v[-1, :] = 0
        v[:, 0] = 0
        v[:, -1] = 0
    return u, v, p


def run(np: Any, n: int) -> Any:
    """``u``, ``v`` and ``p`` after 50 steps (50 pressure sweeps each) on *n* x *n*."""
    nx = ny = n
    nt = 50
    nit = 50
    dx = 2 / (nx - 1)
    dy = 2 / (ny - 1)
    rho = 1
    nu = .1
    dt = 0.4 * dx**2    # 0.001 at 41 points; shrinks with dx**2 to stay stable

    u = np.zeros((ny, nx))
    v = np.zeros((ny, nx))
    p = np.zeros((ny, nx))
    return cavity_flow(np, nt, u, v, dt, dx, dy, p, rho, nu, nit)
