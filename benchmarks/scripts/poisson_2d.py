"""2-D Poisson equation with two point sources, a fixed number of Jacobi sweeps."""

from __future__ import annotations

from typing import Any

SIZES = {"small": 50, "large": 50 * 4}
RTOL, ATOL = 1e-9, 1e-12


def run(np: Any, n: int) -> Any:
    """The pressure after 100 sweeps on an *n* x *n* grid of [0, 2] x [0, 1]."""
    nx = ny = n
    nt = 100
    xmin, xmax = 0, 2
    ymin, ymax = 0, 1
    dx = (xmax - xmin) / (nx - 1)
    dy = (ymax - ymin) / (ny - 1)

    p = np.zeros((ny, nx))
    b = np.zeros((ny, nx))
    b[int(ny / 4), int(nx / 4)] = 100
    b[int(3 * ny / 4), int(3 * nx / 4)] = -100

    for _it in range(nt):
        pd = p.copy()
        p[1:-1, 1:-1] = (((pd[1:-1, 2:] + pd[1:-1, :-2]) * dy**2
                          + (pd[2:, 1:-1] + pd[:-2, 1:-1]) * dx**2
                          - b[1:-1, 1:-1] * dx**2 * dy**2)
                         / (2 * (dx**2 + dy**2)))
        p[0, :] = 0
        p[ny - 1, :] = 0
        p[:, 0] = 0
        p[:, nx - 1] = 0
    return p


def run_jit(la: Any, n: int) -> Any:
    """:func:`run` with one sweep under ``la.jit``."""
    nx = ny = n
    dx = 2 / (nx - 1)
    dy = 1 / (ny - 1)
    p = la.zeros((ny, nx))
    b = la.zeros((ny, nx))
    b[int(ny / 4), int(nx / 4)] = 100
    b[int(3 * ny / 4), int(3 * nx / 4)] = -100

    @la.jit
    def sweep(p: Any, b: Any) -> Any:
        pd = p.copy()
        p[1:-1, 1:-1] = (((pd[1:-1, 2:] + pd[1:-1, :-2]) * dy**2
                          + (pd[2:, 1:-1] + pd[:-2, 1:-1]) * dx**2
                          - b[1:-1, 1:-1] * dx**2 * dy**2)
                         / (2 * (dx**2 + dy**2)))
        p[0, :] = 0
        p[-1, :] = 0
        p[:, 0] = 0
        p[:, -1] = 0
        return p

    for _ in range(100):
        p = sweep(p, b)
    return p
