"""Channel flow driven by a body force, periodic in x, until the flow is steady.

Navier-Stokes as in the cavity, with the periodic neighbours taken by
``np.roll`` along x, no-slip walls at the bottom and top, and the loop
stopping when the relative change of ``sum(u)`` per step is small.
"""

from __future__ import annotations

from typing import Any

SIZES = {"small": 41, "large": 41 * 4}
RTOL, ATOL = 1e-6, 1e-9


def run(np: Any, n: int) -> Any:
    """``u``, ``v`` and ``p`` when steady (at most 60 steps) on an *n* x *n* grid."""
    nx = ny = n
    nit = 30
    dx = 2 / (nx - 1)
    dy = 2 / (ny - 1)
    rho = 1
    nu = .1
    F = 1
    dt = 4 * dx**2     # 0.01 at 41 points

    u = np.zeros((ny, nx))
    v = np.zeros((ny, nx))
    p = np.zeros((ny, nx))
    b = np.zeros((ny, nx))

    def east(f: Any) -> Any:
        return np.roll(f, -1, axis=1)

    def west(f: Any) -> Any:
        return np.roll(f, 1, axis=1)

    udiff = 1
    stepcount = 0
    while udiff > .001 and stepcount < 60:
        un = u.copy()
        vn = v.copy()

        dudx = (east(un) - west(un)) / (2 * dx)
        dvdx = (east(vn) - west(vn)) / (2 * dx)
        b[1:-1, :] = rho * (1 / dt * (dudx[1:-1] + (vn[2:] - vn[:-2]) / (2 * dy))
                            - dudx[1:-1]**2
                            - 2 * (un[2:] - un[:-2]) / (2 * dy) * dvdx[1:-1]
                            - ((vn[2:] - vn[:-2]) / (2 * dy))**2)

        for _q in range(nit):
            pn = p.copy()
            p[1:-1, :] = (((east(pn) + west(pn))[1:-1] * dy**2
                           + (pn[2:] + pn[:-2]) * dx**2)
                          / (2 * (dx**2 + dy**2))
                          - dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1])
            p[-1, :] = p[-2, :]
            p[0, :] = p[1, :]

        u[1:-1] = (un[1:-1]
                   - un[1:-1] * dt / dx * (un[1:-1] - west(un)[1:-1])
                   - vn[1:-1] * dt / dy * (un[1:-1] - un[:-2])
                   - dt / (2 * rho * dx) * (east(p) - west(p))[1:-1]
                   + nu * (dt / dx**2 * (east(un) - 2 * un + west(un))[1:-1]
                           + dt / dy**2 * (un[2:] - 2 * un[1:-1] + un[:-2]))
                   + F * dt)
        v[1:-1] = (vn[1:-1]
                   - un[1:-1] * dt / dx * (vn[1:-1] - west(vn)[1:-1])
                   - vn[1:-1] * dt / dy * (vn[1:-1] - vn[:-2])
                   - dt / (2 * rho * dy) * (p[2:] - p[:-2])
                   + nu * (dt / dx**2 * (east(vn) - 2 * vn + west(vn))[1:-1]
                           + dt / dy**2 * (vn[2:] - 2 * vn[1:-1] + vn[:-2])))
        u[0, :] = 0
        u[-1, :] = 0
        v[0, :] = 0
        v[-1, :] = 0

        udiff = (np.sum(u) - np.sum(un)) / np.sum(u)
        stepcount += 1
    return u, v, p
