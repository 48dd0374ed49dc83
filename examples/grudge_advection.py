"""2-D scalar advection with grudge's operators (meshmode's mesh and
discretizations), run on lazyarray's LazyarrayArrayContext and on meshmode's
eager PyOpenCLArrayContext, which must agree.

``u_t + div(c u) = 0`` on the unit square with the constant velocity ``c``,
nodal DG with an upwind flux on a regular triangle mesh; the exact solution
(a translated sine product) enters through every boundary face. A classical
RK4 step is compiled whole (``actx.compile``; the time and the time step
are traced numbers), and the state is frozen and thawed after each step.

    python examples/grudge_advection.py [--n N] [--order P] [--steps S]

Needs meshmode and grudge (installed from their repositories) beside the
'pde' extra, see docs/pde-backend.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyopencl as cl

VELOCITY = (0.8, 0.45)


def exact(actx, x, t):
    """The exact solution at nodes *x* (a pair of coordinate arrays) at *t*."""
    shifted = [x[k] - VELOCITY[k] * t for k in range(2)]
    return actx.np.sin(2 * np.pi * shifted[0]) * actx.np.cos(np.pi * shifted[1])


def march(actx, n: int, order: int, steps: int) -> dict:
    """RK4 steps of the advection operator on *actx*: the final state on the
    host, its L2 error, and the times of the first and later steps."""
    import grudge.geometry as geo
    from grudge import op
    from grudge.discretization import make_discretization_collection
    from grudge.dof_desc import BoundaryDomainTag, as_dofdesc
    from meshmode.mesh import BTAG_ALL
    from meshmode.mesh.generation import generate_regular_rect_mesh
    from pytools import obj_array

    mesh = generate_regular_rect_mesh(a=(0, 0), b=(1, 1), nelements_per_axis=(n, n))
    dcoll = make_discretization_collection(actx, mesh, order=order)
    boundary = as_dofdesc(BoundaryDomainTag(BTAG_ALL))
    x = actx.thaw(dcoll.nodes())
    x_boundary = actx.thaw(dcoll.nodes(boundary))

    def upwind(pair):
        normal = geo.normal(actx, dcoll, pair.dd)
        c_n = VELOCITY[0] * normal[0] + VELOCITY[1] * normal[1]
        return op.project(dcoll, pair.dd, "all_faces",
                          c_n * actx.np.where(c_n > 0, pair.int, pair.ext))

    def rhs(t, u):
        pairs = [*op.interior_trace_pairs(dcoll, u),
                 op.bv_trace_pair(dcoll, boundary, interior=u,
                                  exterior=exact(actx, x_boundary, t))]
        flux = sum(upwind(p) for p in pairs)
        volume = op.weak_local_div(dcoll, obj_array.new_1d([VELOCITY[0] * u,
                                                            VELOCITY[1] * u]))
        return op.inverse_mass(dcoll, volume - op.face_mass(dcoll, flux))

    def rk4(t, dt, u):
        k1 = rhs(t, u)
        k2 = rhs(t + dt / 2, u + dt / 2 * k1)
        k3 = rhs(t + dt / 2, u + dt / 2 * k2)
        k4 = rhs(t + dt, u + dt * k3)
        return u + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    step = actx.compile(rk4)
    h = 1.0 / n
    dt = 0.2 * h / ((order + 1) ** 2 * max(VELOCITY))
    u = actx.thaw(actx.freeze(exact(actx, x, 0.0)))
    t = 0.0
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        u = actx.thaw(actx.freeze(step(t, dt, u)))
        times.append(time.perf_counter() - start)
        t += dt
    error = actx.to_numpy(op.norm(dcoll, u - exact(actx, x, t), 2))
    return {"u": actx.to_numpy(actx.np.concatenate([actx.np.ravel(g) for g in u])),
            "error": float(error), "t": t, "first_s": times[0],
            "step_s": float(np.median(times[1:])) if steps > 1 else times[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=8, help="elements per axis (times 2 triangles)")
    parser.add_argument("--order", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()

    import warnings

    from meshmode.array_context import PyOpenCLArrayContext

    from lazyarray.arraycontext import LazyarrayArrayContext

    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    results = {}
    for name, make in (("lazyarray", lambda: LazyarrayArrayContext(queue)),
                       ("pyopencl (eager)", lambda: PyOpenCLArrayContext(queue))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results[name] = r = march(make(), args.n, args.order, args.steps)
        print(f"{name:>17}: first step {r['first_s']:.3f} s, then "
              f"{1e3 * r['step_s']:.2f} ms per step; L2 error {r['error']:.3e} at "
              f"t = {r['t']:.4f}")
    lazy, eager = results["lazyarray"], results["pyopencl (eager)"]
    diff = np.abs(lazy["u"] - eager["u"]).max()
    print(f"states differ by {diff:.2e}")
    assert diff < 1e-10 and abs(lazy["error"] - eager["error"]) < 1e-10
    print("ok: lazyarray and the eager context agree")


if __name__ == "__main__":
    main()
