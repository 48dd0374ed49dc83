"""1-D linear convection of a square wave, explicit upwind steps written with slices.

The first program of a CFD course: ``u_t + c u_x = 0`` on [0, 2] with a hat
of height 2, ``un = u.copy()`` every step, the inflow value written back.
"""

from __future__ import annotations

from typing import Any

#: grid points at the textbook size and at 16 times the elements
SIZES = {"small": 81, "large": 81 * 16}
RTOL, ATOL = 1e-10, 1e-12


def run(np: Any, n: int) -> Any:
    """The wave after 200 steps on *n* points."""
    nx = n
    dx = 2 / (nx - 1)
    nt = 200
    c = 1.0
    sigma = 0.5
    dt = sigma * dx / c

    u = np.ones(nx)
    u[int(0.5 / dx):int(1 / dx + 1)] = 2

    for _step in range(nt):
        un = u.copy()
        u[1:] = un[1:] - c * dt / dx * (un[1:] - un[:-1])
        u[0] = 1.0
    return u


def run_jit(la: Any, n: int) -> Any:
    """:func:`run` with the step under ``la.jit``."""
    nx = n
    dx = 2 / (nx - 1)
    nt = 200
    c = 1.0
    dt = 0.5 * dx / c

    u = la.ones(nx)
    u[int(0.5 / dx):int(1 / dx + 1)] = 2

    @la.jit
    def step(u: Any) -> Any:
        un = u.copy()
        u[1:] = un[1:] - c * dt / dx * (un[1:] - un[:-1])
        u[0] = 1.0
        return u

    for _ in range(nt):
        u = step(u)
    return u
