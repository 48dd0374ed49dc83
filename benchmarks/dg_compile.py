"""Compile time of a DG-like right-hand side: planning + code generation of
each kernel lazyarray makes for it (the PDE backend's first-step cost).

The operator has the shape of a nodal discontinuous Galerkin operator on
simplices (meshmode/grudge style), on random connectivity: per field,

- element-local volume derivatives: ``einsum("ei,xij,exj->ei", ...)`` with
  per-element geometric factors of shape (E, 1) (size-1 label broadcasting);
- face values gathered with index arrays (interior and exterior traces);
- boundary faces masked by ``where``;
- an upwind numerical flux with face normals;
- the lift: a reduction over faces and face nodes (``einsum("ifj,efj->ei")``).

Several fields are computed together (the leaves of one state container),
as ``actx.freeze`` does. Each planned kernel's planning + code generation
time is read from lazyarray's ``lowered ... in N ms`` log lines (info
level), with kernel caches and disk recipes off.

    .venv/bin/python benchmarks/dg_compile.py [--elements E] [--fields K] [--order P]

Public names: DGGeometry, make_geometry, dg_rhs, measure.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import time
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class DGGeometry:
    """Discretization data of a random simplicial mesh (dim 3, E elements,
    N nodes per element, F faces with Nf nodes each)."""

    diff: Any            # (3, N, N) reference derivative matrices
    jac: Any             # (3, E, 1) per-element geometric factors
    face_idx: Any        # (E, F, Nf) flat indices of interior face nodes
    nbr_idx: Any         # (E, F, Nf) flat indices of exterior face nodes
    boundary: Any        # (E, F, 1) 1 on boundary faces, 0 inside
    normals: Any         # (3, E, F, 1) outward unit normals
    lift: Any            # (N, F, Nf) lift matrix
    face_jac: Any        # (E, F, 1) face / volume Jacobian ratio


def _nodes(order: int) -> tuple[int, int]:
    """Nodes per tetrahedron and per face at polynomial *order*."""
    return (order + 1) * (order + 2) * (order + 3) // 6, (order + 1) * (order + 2) // 2


def make_geometry(elements: int, order: int, to_device, seed: int = 0) -> DGGeometry:
    """Random but well-formed geometry; *to_device* turns NumPy arrays into
    the backend's arrays."""
    rng = np.random.default_rng(seed)
    n, nf = _nodes(order)
    faces = 4
    face_nodes = rng.integers(0, n, size=(faces, nf))
    elem = np.arange(elements)[:, None, None]
    face_idx = elem * n + face_nodes[None, :, :]
    neighbor = rng.permutation(elements)[:, None, None]
    nbr_idx = neighbor * n + face_nodes[None, ::-1, :]
    boundary = (rng.random((elements, faces, 1)) < 0.1).astype(np.float64)
    normals = rng.standard_normal((3, elements, faces, 1))
    normals /= np.sqrt((normals ** 2).sum(axis=0, keepdims=True))
    return DGGeometry(
        diff=to_device(rng.standard_normal((3, n, n)) / n),
        jac=to_device(1 + 0.1 * rng.random((3, elements, 1))),
        face_idx=to_device(face_idx.astype(np.int64)),
        nbr_idx=to_device(nbr_idx.astype(np.int64)),
        boundary=to_device(boundary),
        normals=to_device(normals),
        lift=to_device(rng.standard_normal((n, faces, nf)) / n),
        face_jac=to_device(1 + 0.1 * rng.random((elements, faces, 1))))


def dg_rhs(u: Any, velocity: tuple[float, float, float], g: DGGeometry, np_: Any) -> Any:
    """The advection right-hand side ``-a . grad u`` in weak DG form with an
    upwind flux, for one field *u* of shape (E, N); *np_* is the array
    namespace (``lazyarray`` or an array context's ``np``)."""
    flat = np_.reshape(u, (-1,))
    # volume term: per element, reference derivatives times geometric factors
    volume = 0
    for d in range(3):
        du = np_.einsum("ij,ej->ei", g.diff[d], u)
        volume = volume + velocity[d] * np_.einsum("ex,ei->ei", g.jac[d], du)
    # traces: gathers by index arrays; boundary faces see an inflow value 0
    u_int = flat[g.face_idx]
    u_ext = np_.where(g.boundary, 0 * u_int, flat[g.nbr_idx])
    a_n = sum(velocity[d] * g.normals[d] for d in range(3))
    upwind = np_.where(a_n > 0, u_int, u_ext)
    flux = g.face_jac * a_n * (u_int - upwind)
    return -volume + np_.einsum("ifj,efj->ei", g.lift, flux)


class _Lowered(logging.Handler):
    """Collects the milliseconds of lazyarray's ``lowered ... in N ms`` lines."""

    pattern = re.compile(r"^lowered (.*) in ([0-9.]+) ms")

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.kernels: list[tuple[str, float]] = []

    def emit(self, record: logging.LogRecord) -> None:
        m = self.pattern.match(record.getMessage())
        if m:
            self.kernels.append((m.group(1), float(m.group(2))))


def measure(elements: int = 512, fields: int = 4, order: int = 3) -> dict:
    """Compute the right-hand sides of *fields* fields together on fresh
    caches; per kernel, its planning + code generation milliseconds."""
    os.environ["LAZYARRAY_DISK_CACHE"] = "0"
    import lazyarray as la
    from lazyarray.arraycontext.freeze import compute_together
    from lazyarray.run import steps

    saved = steps._KERNELS
    steps._KERNELS = {}
    handler = _Lowered()
    log = logging.getLogger("lazyarray.run.steps")
    level = log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        g = make_geometry(elements, order, la.asarray)
        n, _ = _nodes(order)
        rng = np.random.default_rng(1)
        us = [la.asarray(rng.standard_normal((elements, n))) for _ in range(fields)]
        velocities = [tuple(rng.standard_normal(3)) for _ in range(fields)]
        start = time.perf_counter()
        rhs = [dg_rhs(u, v, g, la) for u, v in zip(us, velocities)]
        values = compute_together([r.node for r in rhs])
        total = time.perf_counter() - start
        check = np.asarray(values[0].get())
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        steps._KERNELS = saved
    ms = [t for _, t in handler.kernels]
    return {"elements": elements, "fields": fields, "order": order,
            "kernels": len(ms), "max_ms": max(ms, default=0.0),
            "total_lowering_ms": sum(ms), "first_run_s": total,
            "finite": bool(np.isfinite(check).all()),
            "per_kernel": handler.kernels}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--elements", type=int, default=512)
    parser.add_argument("--fields", type=int, default=4)
    parser.add_argument("--order", type=int, default=3)
    args = parser.parse_args()
    result = measure(args.elements, args.fields, args.order)
    for what, ms in result.pop("per_kernel"):
        print(f"  lowered {what} in {ms:.1f} ms")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
