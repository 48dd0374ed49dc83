"""Global reductions over MPI ranks that give the same, reproducible value
on every rank.

Each rank reduces its own block on the device; the partial results are
gathered in rank order on every rank and combined there in that fixed order
(sums of scalars with ``math.fsum``: the correctly rounded sum of the
partials, whatever their order). The result does not depend on message
timing or on the MPI library's reduction tree; it is the same on every rank
and from run to run. (Sums over blocks of different sizes still round
differently for different decompositions; maxima and minima are exact.)

Public names: allreduce, norm, cfl_dt.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

import lazyarray as la

if TYPE_CHECKING:
    from mpi4py import MPI

_OPS = ("sum", "max", "min", "prod")


def _host(x) -> np.ndarray:
    if isinstance(x, la.LazyArray):
        return x.get()
    return np.asarray(x)


def _world():
    from mpi4py import MPI  # (mpi4py is optional)
    return MPI.COMM_WORLD


def allreduce(x: Any, op: str = "sum", comm: MPI.Comm | None = None) -> Any:
    """*x* (this rank's partial value: a scalar or an array, lazy or not)
    combined over the ranks of *comm* (default ``MPI.COMM_WORLD``) by *op*
    (``"sum"``, ``"max"``, ``"min"`` or ``"prod"``). A scalar comes back as a
    Python or NumPy scalar, an array as a NumPy array, equal on every rank."""
    if op not in _OPS:
        raise ValueError(f"op must be one of {_OPS}, got {op!r}")
    comm = comm if comm is not None else _world()
    local = _host(x)
    parts = comm.allgather(local)          # in rank order on every rank
    if local.ndim == 0:
        values = [p.item() for p in parts]
        if op == "sum":
            if local.dtype.kind == "f":
                return local.dtype.type(math.fsum(values))
            return local.dtype.type(functools.reduce(lambda a, b: a + b, values))
        if op == "prod":
            return local.dtype.type(functools.reduce(lambda a, b: a * b, values))
        return local.dtype.type(max(values) if op == "max" else min(values))
    combine = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[op]
    return functools.reduce(combine, parts)


def norm(x: Any, ord: float | str = 2, comm: MPI.Comm | None = None) -> float:
    """The norm of the global vector whose blocks the ranks hold (*x*: this
    rank's block): ``ord`` 2 (Euclidean), 1, or ``inf`` (largest
    magnitude)."""
    x = la.asarray(x)
    if ord == 2:
        return math.sqrt(float(allreduce(la.sum(la.abs(x) ** 2), "sum", comm)))
    if ord == 1:
        return float(allreduce(la.sum(la.abs(x)), "sum", comm))
    if ord in (np.inf, "inf"):
        return float(allreduce(la.max(la.abs(x)) if x.size else np.float64(0), "max", comm))
    raise ValueError(f"ord must be 1, 2 or inf, got {ord!r}")


def cfl_dt(speed: Any, dx: float, cfl: float = 0.5, comm: MPI.Comm | None = None) -> float:
    """The largest stable time step ``cfl * dx / max |speed|`` over all ranks
    (*speed*: this rank's block of wave or flow speeds); exact (a maximum),
    so every rank steps with the same ``dt``."""
    top = float(allreduce(la.max(la.abs(la.asarray(speed))), "max", comm))
    return math.inf if top == 0 else cfl * dx / top
