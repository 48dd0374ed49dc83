"""Gravitational N-body with softening: pairwise separations by broadcasting, leapfrog."""

from __future__ import annotations

from typing import Any

#: particles (the pair arrays grow with the square: 16 times the elements)
SIZES = {"small": 64, "large": 64 * 4}
RTOL, ATOL = 1e-7, 1e-9


def acceleration(np: Any, pos: Any, mass: Any, G: float, softening: float) -> Any:
    """The acceleration of every particle from all the others."""
    d = pos[np.newaxis, :, :] - pos[:, np.newaxis, :]        # d[i, j] = x_j - x_i
    r2 = np.sum(d**2, axis=2) + softening**2
    inv_r3 = r2**(-1.5)
    return G * np.sum(d * (inv_r3 * mass[np.newaxis, :])[:, :, np.newaxis], axis=1)


def energy(np: Any, pos: Any, vel: Any, mass: Any, G: float, softening: float) -> float:
    """Kinetic plus potential energy."""
    ke = 0.5 * np.sum(mass[:, np.newaxis] * vel**2)
    d = pos[np.newaxis, :, :] - pos[:, np.newaxis, :]
    r = np.sqrt(np.sum(d**2, axis=2) + softening**2)
    pe = -G * np.sum(np.triu(mass[:, np.newaxis] * mass[np.newaxis, :] / r, 1))
    return float(ke + pe)


def run(np: Any, n: int) -> Any:
    """Positions after 50 leapfrog steps of *n* particles, and the final energy."""
    G = 1.0
    softening = 0.1
    dt = 0.01
    steps = 50

    np.random.seed(17)
    mass = 20.0 * np.ones(n) / n
    pos = np.random.randn(n, 3)
    vel = np.random.randn(n, 3)
    vel -= np.mean(mass[:, np.newaxis] * vel, axis=0) / np.mean(mass)

    acc = acceleration(np, pos, mass, G, softening)
    for _i in range(steps):
        vel += acc * dt / 2
        pos += vel * dt
        acc = acceleration(np, pos, mass, G, softening)
        vel += acc * dt / 2
    return pos, energy(np, pos, vel, mass, G, softening)


def run_jit(la: Any, n: int) -> Any:
    """:func:`run` with one leapfrog step under ``la.jit``."""
    G, softening, dt = 1.0, 0.1, 0.01
    la.random.seed(17)
    mass = 20.0 * la.ones(n) / n
    pos = la.random.randn(n, 3)
    vel = la.random.randn(n, 3)
    vel -= la.mean(mass[:, la.newaxis] * vel, axis=0) / la.mean(mass)

    @la.jit
    def kick_drift_kick(pos: Any, vel: Any, acc: Any) -> Any:
        vel = vel + acc * dt / 2
        pos = pos + vel * dt
        acc = acceleration(la, pos, mass, G, softening)
        vel = vel + acc * dt / 2
        return pos, vel, acc

    acc = acceleration(la, pos, mass, G, softening)
    for _ in range(50):
        pos, vel, acc = kick_drift_kick(pos, vel, acc)
    return pos, energy(la, pos, vel, mass, G, softening)
