"""1-D heat equation, forward Euler in time and central differences in space."""

from __future__ import annotations

from typing import Any

SIZES = {"small": 81, "large": 81 * 16}
RTOL, ATOL = 1e-9, 1e-12


def run(np: Any, n: int) -> Any:
    """The temperature after 500 steps on *n* points of [0, 1], ends held at 0."""
    L = 1.0
    alpha = 1.0
    nx = n
    dx = L / (nx - 1)
    r = 0.4                       # alpha dt / dx^2, below 1/2 for stability
    dt = r * dx**2 / alpha
    nt = 500

    x = np.linspace(0, L, nx)
    u = np.sin(np.pi * x) + 0.5 * np.sin(3 * np.pi * x)

    t = 0.0
    for _k in range(nt):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2 * u[1:-1] + u[:-2])
        u[0] = 0
        u[-1] = 0
        t += dt
    return u


def run_jit(la: Any, n: int) -> Any:
    """:func:`run` with the step under ``la.jit``."""
    nx = n
    r = 0.4
    x = la.linspace(0, 1.0, nx)
    u = la.sin(la.pi * x) + 0.5 * la.sin(3 * la.pi * x)

    @la.jit
    def step(u: Any) -> Any:
        u[1:-1] = u[1:-1] + r * (u[2:] - 2 * u[1:-1] + u[:-2])
        u[0] = 0
        u[-1] = 0
        return u

    for _ in range(500):
        u = step(u)
    return u
