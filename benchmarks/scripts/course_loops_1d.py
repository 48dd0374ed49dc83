"""The first steps of a CFD course as they are first written: element by element.

Linear convection, nonlinear convection and diffusion in 1-D, each updating
``u[i]`` from ``un[i]`` and its neighbours in a Python loop over the points
(the vectorized slices come a lesson later), ``un = u.copy()`` every step.
"""

from __future__ import annotations

from typing import Any

#: grid points at the textbook size and at 16 times the elements
SIZES = {"small": 41, "large": 41 * 16}
RTOL, ATOL = 1e-12, 1e-12


def run(np: Any, n: int) -> Any:
    """The three waves after 25, 20 and 20 steps on *n* points."""
    nx = n
    dx = 2 / (nx - 1)
    c = 1.0
    dt = 0.025 * 40 / (nx - 1)

    # step 1: linear convection
    u = np.ones(nx)
    u[int(0.5 / dx):int(1 / dx + 1)] = 2
    for _n in range(25):
        un = u.copy()
        for i in range(1, nx):
            u[i] = un[i] - c * dt / dx * (un[i] - un[i - 1])
    linear = u

    # step 2: nonlinear convection
    u = np.ones(nx)
    u[int(0.5 / dx):int(1 / dx + 1)] = 2
    for _n in range(20):
        un = u.copy()
        for i in range(1, nx):
            u[i] = un[i] - un[i] * dt / dx * (un[i] - un[i - 1])
    nonlinear = u

    # step 3: diffusion
    nu = 0.3
    sigma = 0.2
    dt = sigma * dx**2 / nu
    u = np.ones(nx)
    u[int(0.5 / dx):int(1 / dx + 1)] = 2
    for _n in range(20):
        un = u.copy()
        for i in range(1, nx - 1):
            u[i] = un[i] + nu * dt / dx**2 * (un[i + 1] - 2 * un[i] + un[i - 1])
    return linear, nonlinear, u
