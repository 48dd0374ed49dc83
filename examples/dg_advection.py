"""Nodal discontinuous Galerkin advection in 1-D, written against
arraycontext, run on lazyarray's LazyarrayArrayContext and checked against
arraycontext's eager PyOpenCLArrayContext.

Two fields, advected at speeds +1 and -0.5 on the periodic interval [0, 1],
are one arraycontext container. Each element carries the polynomial of
degree ``--order`` through its Gauss-Lobatto nodes; the right-hand side is
the strong form with an upwind flux: per-element derivative matrices
(einsum), face traces gathered with index arrays, the upwind choice by
``where``, and the lift of the face jumps. The right-hand side is compiled
(``actx.compile``, the stage time a traced argument); RK4 advances the
state, which is frozen and thawed after every step, as PDE codes do between
steps.

    python examples/dg_advection.py [--elements K] [--order N] [--steps S]

Needs arraycontext (and loopy for the eager context), see
docs/pde-backend.md.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import numpy.polynomial.legendre as leg
import pyopencl as cl
from arraycontext import (
    Array,
    PyOpenCLArrayContext,
    dataclass_array_container,
    with_container_arithmetic,
)

SPEEDS = (1.0, -0.5)


@with_container_arithmetic(bcasts_across_obj_array=True, rel_comparison=True)
@dataclass_array_container
@dataclass(frozen=True)
class State:
    """The two advected fields, each of shape (elements, nodes)."""

    u: Array
    v: Array

    __array_ufunc__ = None


def reference_element(order: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gauss-Lobatto nodes on [-1, 1], the nodal derivative matrix and the
    lift of the two end-point values (columns: left, right)."""
    n = order + 1
    inner = leg.legroots(leg.legder([0] * order + [1])) if order > 1 else np.array([])
    r = np.concatenate([[-1.0], np.sort(inner), [1.0]])
    # Vandermonde matrix of the orthonormal Legendre polynomials, and its derivative
    scale = np.sqrt((2 * np.arange(n) + 1) / 2)
    vdm = np.stack([leg.legval(r, np.eye(n)[j]) * scale[j] for j in range(n)], axis=1)
    dvdm = np.stack([leg.legval(r, leg.legder(np.eye(n)[j])) * scale[j]
                     for j in range(n)], axis=1)
    diff = dvdm @ np.linalg.inv(vdm)
    mass_inv = vdm @ vdm.T
    ends = np.zeros((n, 2))
    ends[0, 0] = ends[-1, 1] = 1.0
    return r, diff, mass_inv @ ends


class Discretization:
    """K equal elements on [0, 1] (periodic) with order-N elements, its
    arrays made by *actx*."""

    def __init__(self, actx, elements: int, order: int):
        self.actx = actx
        r, diff, lift = reference_element(order)
        n = order + 1
        h = 1.0 / elements
        self.x = (np.arange(elements)[:, None] + (r[None, :] + 1) / 2) * h
        k = np.arange(elements)
        # flat indices of each element's (left, right) end nodes, and of the
        # nodes facing them in the neighbouring elements
        face = np.stack([k * n, k * n + n - 1], axis=1).reshape(-1)
        facing = np.stack([((k - 1) % elements) * n + n - 1, ((k + 1) % elements) * n],
                          axis=1).reshape(-1)
        self.shape = (elements, n)
        self.face_idx = actx.from_numpy(face.astype(np.int64))
        self.facing_idx = actx.from_numpy(facing.astype(np.int64))
        self.normals = actx.from_numpy(np.tile([-1.0, 1.0], (elements, 1)))
        self.diff = actx.from_numpy(diff)
        self.lift = actx.from_numpy(lift)
        self.rx = 2.0 / h

    def advect(self, u, speed: float):
        """``-speed du/dx`` in strong DG form with the upwind flux."""
        actx = self.actx
        elements = self.shape[0]
        flat = actx.np.reshape(u, (-1,))
        u_in = actx.np.reshape(flat[self.face_idx], (elements, 2))
        u_out = actx.np.reshape(flat[self.facing_idx], (elements, 2))
        a_n = speed * self.normals
        upwind = actx.np.where(a_n > 0, u_in, u_out)
        jump = a_n * (u_in - upwind)
        dudx = actx.einsum("ij,ej->ei", self.diff, u)
        return self.rx * (-speed * dudx + actx.einsum("if,ef->ei", self.lift, jump))

    def rhs(self, t, state: State) -> State:
        """The right-hand side of both fields."""
        return State(u=self.advect(state.u, SPEEDS[0]), v=self.advect(state.v, SPEEDS[1]))

    def exact(self, t: float) -> State:
        """The exact solution at time *t* (host arrays)."""
        return State(u=np.sin(2 * np.pi * (self.x - SPEEDS[0] * t)),
                     v=np.cos(2 * np.pi * (self.x - SPEEDS[1] * t)))


def rk4_step(rhs, t, dt, state):
    """One classical Runge-Kutta step."""
    k1 = rhs(t, state)
    k2 = rhs(t + dt / 2, state + dt / 2 * k1)
    k3 = rhs(t + dt / 2, state + dt / 2 * k2)
    k4 = rhs(t + dt, state + dt * k3)
    return state + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def run(actx, elements: int, order: int, steps: int, whole_step: bool = True) -> dict:
    """March *steps* RK4 steps on *actx*; the final state on the host and
    the times. With *whole_step*, the whole RK step is compiled (the time
    and the time step are traced arguments: no retracing per step), else
    the right-hand side only, the RK combinations recorded around it."""
    disc = Discretization(actx, elements, order)
    dt = 0.2 / (elements * order ** 2)
    if whole_step:
        compiled = actx.compile(lambda t, dt, state: rk4_step(disc.rhs, t, dt, state))
    else:
        rhs = actx.compile(disc.rhs)

        def compiled(t, dt, state):
            return rk4_step(rhs, t, dt, state)

    state = actx.thaw(actx.freeze(actx.from_numpy(disc.exact(0.0))))
    t = 0.0
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        state = actx.thaw(actx.freeze(compiled(t, dt, state)))
        actx.queue.finish()
        times.append(time.perf_counter() - start)
        t += dt
    host = actx.to_numpy(state)
    error = max(np.abs(host.u - disc.exact(t).u).max(), np.abs(host.v - disc.exact(t).v).max())
    norm = float(actx.to_numpy(actx.np.linalg.norm(state)))
    return {"state": host, "norm": norm, "error": error, "first_s": times[0],
            "step_s": float(np.median(times[1:])) if steps > 1 else times[0], "t": t}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--elements", type=int, default=64)
    parser.add_argument("--order", type=int, default=4)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--compile", choices=("step", "rhs"), default="step",
                        help="compile the whole RK step (default) or the right-hand side")
    args = parser.parse_args()
    from lazyarray.arraycontext import LazyarrayArrayContext

    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    results = {}
    for name, actx in (("lazyarray", LazyarrayArrayContext(queue)),
                       ("pyopencl (eager)", PyOpenCLArrayContext(queue))):
        results[name] = r = run(actx, args.elements, args.order, args.steps,
                                whole_step=args.compile == "step")
        print(f"{name:>17}: first step (compile) {r['first_s']:.3f} s, "
              f"then {1e3 * r['step_s']:.2f} ms per step; norm {r['norm']:.14f}, "
              f"error vs exact {r['error']:.2e} at t = {r['t']:.4f}")
    lazy, eager = results["lazyarray"], results["pyopencl (eager)"]
    diff = max(np.abs(lazy["state"].u - eager["state"].u).max(),
               np.abs(lazy["state"].v - eager["state"].v).max())
    print(f"norms differ by {abs(lazy['norm'] - eager['norm']):.2e}, "
          f"states by {diff:.2e}")
    assert abs(lazy["norm"] - eager["norm"]) < 1e-10 and diff < 1e-10
    print("ok: lazyarray and the eager context agree")


if __name__ == "__main__":
    main()
