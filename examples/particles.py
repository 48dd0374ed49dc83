"""Charged particles in a harmonic trap, leapfrog in a Python loop: NumPy, lazyarray, la.jit.

Each particle feels the trap, -k x, and a softened Coulomb repulsion from every
other particle, computed from all pairwise differences by broadcasting
(``pos[:, None, :] - pos[None, :, :]``). The integrator is kick-drift-kick
leapfrog; a light friction lets the cloud settle towards a crystal. The step
function runs on NumPy arrays, on lazy arrays (``la.asarray``) and jitted
(``la.jit``), and lazyarray's positions, velocities and energies are checked
against NumPy's.

Run: ``.venv/bin/python examples/particles.py [--n 128] [--steps 200]``
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import lazyarray as la
from lazyarray.run import STATS

K_TRAP = 1.0        # trap stiffness
CHARGE2 = 0.05      # product of the charges (repulsion strength)
SOFT = 0.05         # softening length
FRICTION = 0.2


def forces(pos):
    """Trap plus pairwise softened Coulomb forces on each particle."""
    d = pos[:, None, :] - pos[None, :, :]                   # d[i, j] = x_i - x_j
    r2 = (d ** 2).sum(-1) + SOFT ** 2
    inv_r3 = r2 ** -1.5                                      # the i == j term: d = 0
    repulsion = CHARGE2 * (d * inv_r3[:, :, None]).sum(axis=1)
    return repulsion - K_TRAP * pos


def energy(pos, vel):
    """Kinetic + trap + pair energy (each pair once)."""
    d = pos[:, None, :] - pos[None, :, :]
    r = np.sqrt((d ** 2).sum(-1) + SOFT ** 2)
    n = pos.shape[0]
    pair = CHARGE2 * ((1.0 / r).sum() - n / SOFT) / 2       # minus the i == j terms
    return 0.5 * (vel ** 2).sum() + 0.5 * K_TRAP * (pos ** 2).sum() + pair


def step(pos, vel, dt):
    """One kick-drift-kick step with a velocity-proportional friction."""
    vel = vel + 0.5 * dt * (forces(pos) - FRICTION * vel)
    pos = pos + dt * vel
    vel = vel + 0.5 * dt * (forces(pos) - FRICTION * vel)
    return pos, vel


def run(pos, vel, steps, dt, stepper, sync):
    """(pos, vel, seconds for the first step, seconds per later step)."""
    t0 = time.perf_counter()
    pos, vel = stepper(pos, vel, dt)
    sync(pos, vel)
    first = time.perf_counter() - t0
    t1 = time.perf_counter()
    for _ in range(steps - 1):
        pos, vel = stepper(pos, vel, dt)
    sync(pos, vel)
    return pos, vel, first, (time.perf_counter() - t1) / max(steps - 1, 1)


def lazy_sync(*arrays):
    for a in arrays:
        a.block_until_ready()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=128, help="number of particles")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--dt", type=float, default=0.01)
    args = parser.parse_args()

    rng = np.random.default_rng(42)
    pos0 = rng.normal(scale=0.7, size=(args.n, 3))
    vel0 = rng.normal(scale=0.1, size=(args.n, 3))

    e0 = float(energy(pos0, vel0))
    pos, vel, first, per = run(pos0, vel0, args.steps, args.dt, step, lambda *a: None)
    e1 = float(energy(pos, vel))
    print(f"particles: {args.n} in a trap, {args.steps} leapfrog steps of {args.dt}, "
          f"float64; energy {e0:.4f} -> {e1:.4f}")
    results = {"numpy": (first, per, None, None)}

    jitted = la.jit(step)
    failures = []
    for name, stepper in (("lazyarray eager", step), ("lazyarray jit", jitted)):
        planned, launches = STATS["planned"], STATS["launches"]
        try:
            lpos, lvel, first, per = run(la.asarray(pos0), la.asarray(vel0), args.steps,
                                         args.dt, stepper, lazy_sync)
            np.testing.assert_allclose(np.asarray(lpos), pos, rtol=1e-8, atol=1e-10)
            np.testing.assert_allclose(np.asarray(lvel), vel, rtol=1e-8, atol=1e-10)
            np.testing.assert_allclose(float(energy(lpos, lvel)), e1, rtol=1e-9)
        except Exception as e:                      # report and go on to the next mode
            failures.append(name)
            print(f"  {name}: FAILED: {type(e).__name__}: {str(e).strip()[:400]}")
            continue
        results[name] = (first, per, STATS["planned"] - planned,
                         STATS["launches"] - launches)

    print(f"  {'':16s} {'first step':>12s} {'per step':>10s} {'kernels planned':>16s}"
          f" {'launches':>9s}")
    for name, (first, per, planned, launches) in results.items():
        extra = "" if planned is None else f" {planned:16d} {launches:9d}"
        print(f"  {name:16s} {first * 1e3:9.1f} ms {per * 1e3:7.2f} ms{extra}")
    if "lazyarray jit" in results:
        print(f"  la.jit traced step {jitted.trace_count} time(s)")
    if failures:
        print("MISMATCH or error in: " + ", ".join(failures))
        return 1
    print("lazyarray eager and jit agree with NumPy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
