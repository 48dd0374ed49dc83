"""2-D viscous Burgers' equation with an adaptive time step: NumPy, lazyarray, la.jit.

    u_t + u u_x + v u_y = nu (u_xx + u_yy)
    v_t + u v_x + v v_y = nu (v_xx + v_yy)

on the unit square, written the way a CFD course writes it: ``un = u.copy()``,
the interior updated by slice assignment (backward differences for the
convective terms, central ones for diffusion), boundary values set by slice
assignment. The time step changes every step: it is recomputed from the
solution by a CFL condition (``dt = sigma * min(dx / max|u|+|v|, dx**2 / nu)``),
so ``la.jit`` sees a new Python float on every call.

The same ``step`` function runs three ways: on NumPy arrays, on lazy arrays
(``la.asarray``), and jitted (``la.jit(step)``). Both lazyarray results are
checked against NumPy's.

Run: ``.venv/bin/python examples/pde_timestep.py [--n 64] [--steps 150]``
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import lazyarray as la
from lazyarray.run import STATS


def step(u, v, dt, dx, nu):
    """One explicit Euler step of 2-D Burgers' equation (any NumPy-like arrays)."""
    un = u.copy()
    vn = v.copy()
    c = dt / dx                  # convection
    d = nu * dt / dx ** 2        # diffusion
    uc, vc = un[1:-1, 1:-1], vn[1:-1, 1:-1]
    u[1:-1, 1:-1] = (uc
                     - c * uc * (uc - un[1:-1, :-2])
                     - c * vc * (uc - un[:-2, 1:-1])
                     + d * (un[1:-1, 2:] - 2 * uc + un[1:-1, :-2])
                     + d * (un[2:, 1:-1] - 2 * uc + un[:-2, 1:-1]))
    v[1:-1, 1:-1] = (vc
                     - c * uc * (vc - vn[1:-1, :-2])
                     - c * vc * (vc - vn[:-2, 1:-1])
                     + d * (vn[1:-1, 2:] - 2 * vc + vn[1:-1, :-2])
                     + d * (vn[2:, 1:-1] - 2 * vc + vn[:-2, 1:-1]))
    # Dirichlet boundaries: the far field moves with speed 1
    for w in (u, v):
        w[0, :] = 1.0
        w[-1, :] = 1.0
        w[:, 0] = 1.0
        w[:, -1] = 1.0
    return u, v


def time_step(u, v, dx, nu, sigma=0.2):
    """The CFL-limited step for the current solution (a host number)."""
    speed = float(np.max(np.abs(u)) + np.max(np.abs(v)))
    return sigma * min(dx / speed, dx ** 2 / nu)


def initial(n: int) -> tuple[np.ndarray, np.ndarray]:
    """A raised square pulse on a unit flow."""
    u = np.ones((n, n))
    v = np.ones((n, n))
    lo, hi = n // 4, n // 2
    u[lo:hi, lo:hi] = 2.0
    v[lo:hi, lo:hi] = 1.5
    return u, v


def simulate(u, v, steps, dx, nu, stepper, sync):
    """Advance *steps* steps; returns (u, v, simulated time, seconds for the
    first step, seconds per later step)."""
    t_sim = 0.0
    t0 = time.perf_counter()
    dt = time_step(u, v, dx, nu)
    u, v = stepper(u, v, dt, dx, nu)
    t_sim += dt
    sync(u, v)
    first = time.perf_counter() - t0
    t1 = time.perf_counter()
    for _ in range(steps - 1):
        dt = time_step(u, v, dx, nu)       # reads the solution: one sync per step
        u, v = stepper(u, v, dt, dx, nu)
        t_sim += dt
    sync(u, v)
    per_step = (time.perf_counter() - t1) / max(steps - 1, 1)
    return u, v, t_sim, first, per_step


def lazy_sync(*arrays):
    for a in arrays:
        a.block_until_ready()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64, help="grid points per side")
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--nu", type=float, default=0.01)
    args = parser.parse_args()
    n, steps, nu = args.n, args.steps, args.nu
    dx = 1.0 / (n - 1)
    u0, v0 = initial(n)

    results = {}
    u, v, t_np, first, per = simulate(u0.copy(), v0.copy(), steps, dx, nu, step,
                                      lambda *a: None)
    results["numpy"] = (first, per, None, None)
    print(f"Burgers 2-D, {n}x{n}, {steps} steps to t = {t_np:.4f} (adaptive dt), float64")

    jitted = la.jit(step)
    failures = []
    for name, stepper in (("lazyarray eager", step), ("lazyarray jit", jitted)):
        planned, launches = STATS["planned"], STATS["launches"]
        try:
            lu, lv, t_la, first, per = simulate(la.asarray(u0), la.asarray(v0), steps, dx,
                                                nu, stepper, lazy_sync)
            np.testing.assert_allclose(np.asarray(lu), u, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(np.asarray(lv), v, rtol=1e-9, atol=1e-12)
            assert abs(t_la - t_np) <= 1e-9 * t_np, (t_la, t_np)
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
        print(f"  la.jit traced step {jitted.trace_count} time(s) for {steps} different dt")
    if failures:
        print("MISMATCH or error in: " + ", ".join(failures))
        return 1
    print("lazyarray eager and jit agree with NumPy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
