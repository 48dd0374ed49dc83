"""lazyarray.distributed on one process (MPI_COMM_SELF): block ranges,
decomposition, halo steps against NumPy, global reductions. The multi-rank
runs are in tests/test_distributed_mpi.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

mpi4py = pytest.importorskip("mpi4py", reason="mpi4py is not installed (the 'scale' extra)")
from mpi4py import MPI  # noqa: E402

import lazyarray as la  # noqa: E402
from lazyarray.distributed import (  # noqa: E402
    CartesianDecomposition,
    HaloStep,
    allreduce,
    block_range,
    cfl_dt,
    norm,
)


def test_block_range_covers_in_order():
    for n in (1, 7, 10, 33):
        for parts in (1, 2, 3, 4):
            ranges = [block_range(n, parts, k) for k in range(parts)]
            assert ranges[0][0] == 0 and ranges[-1][1] == n
            assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
            sizes = [b - a for a, b in ranges]
            assert max(sizes) - min(sizes) <= 1


def test_decomposition_one_rank():
    d = CartesianDecomposition(MPI.COMM_SELF, (6, 5), periods=(True, False), halo=1)
    assert d.dims == (1, 1) and d.local_shape == (6, 5) and d.size == 1
    assert d.neighbors[(1, 0)] == 0 and d.neighbors[(-1, 0)] == 0   # wraps onto itself
    assert d.neighbors[(0, 1)] == MPI.PROC_NULL                      # does not wrap
    i, j = d.global_indices()
    assert i.shape == (6, 1) and j.shape == (1, 5)
    g = np.arange(30.0).reshape(6, 5)
    assert np.array_equal(d.gather(la.asarray(d.scatter(g))), g)
    with pytest.raises(ValueError, match="thinner than the halo"):
        CartesianDecomposition(MPI.COMM_SELF, (1, 5), halo=2)


def laplace9(p):
    """A 9-point stencil of reach 2 on one axis (reads corners: edges and
    corners of the halo must be right)."""
    c = p[2:-2, 2:-2]
    return (c + 0.1 * (p[:-4, 2:-2] + p[4:, 2:-2] + p[2:-2, 1:-3] + p[2:-2, 3:-1])
            + 0.05 * (p[1:-3, 1:-3] + p[3:-1, 3:-1] + p[:-4, :-4] - p[4:, :-4]))


def numpy_steps(fn, u, steps, halo, mode, fixed=None):
    for _ in range(steps):
        p = np.pad(u, halo, mode=mode)
        u = fn(p) if fixed is None else fn(p, fixed)
    return u


@pytest.mark.parametrize("shape", [(9, 11), (4, 4), (3, 7)])
def test_halo_step_matches_numpy_periodic(shape, rng):
    d = CartesianDecomposition(MPI.COMM_SELF, shape, periods=True, halo=2)
    u0 = rng.standard_normal(shape)
    step = HaloStep(d, laplace9)
    got = step.run(la.asarray(u0), 4).get()
    np.testing.assert_allclose(got, numpy_steps(laplace9, u0, 4, 2, "wrap"),
                               rtol=1e-12, atol=1e-12)


def test_halo_step_fill_and_aux(rng):
    """Past a boundary that does not wrap the halo holds the fill value;
    auxiliary arrays are cut as the output is."""
    shape = (8, 10)
    d = CartesianDecomposition(MPI.COMM_SELF, shape, periods=(False, True), halo=1)
    u0 = rng.standard_normal(shape)
    fixed = np.zeros(shape, bool)
    fixed[::3, 1::4] = True

    def fn(p, keep):
        xp = la if isinstance(p, la.LazyArray) else np
        c = p[1:-1, 1:-1]
        return xp.where(keep, c, 0.25 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2]
                                         + p[1:-1, 2:]))

    step = HaloStep(d, fn, fill=2.0)
    got = step.run(la.asarray(u0), 3, la.asarray(fixed)).get()
    u = u0
    for _ in range(3):
        p = np.pad(u, ((0, 0), (1, 1)), mode="wrap")
        p = np.pad(p, ((1, 1), (0, 0)), constant_values=2.0)
        u = fn(p, fixed)
    np.testing.assert_allclose(got, u, rtol=1e-12, atol=1e-12)


def test_halo_step_traces_once_and_refuses_jit(rng):
    d = CartesianDecomposition(MPI.COMM_SELF, (6, 6), periods=True, halo=1)
    step = HaloStep(d, lambda p: p[1:-1, 1:-1] + p[2:, 1:-1], trace=True)
    u = la.asarray(rng.standard_normal((6, 6)))
    step.run(u, 5).compute()
    assert step._interior.trace_count == 1 and step._boundary.trace_count == 1
    assert step.exchange._pack.trace_count == 1
    assert len(step.trace) == 5

    @la.jit
    def inside(x):
        return step(x)

    with pytest.raises(la.LazyArrayError, match="outside la.jit"):
        inside(u)

    bad = HaloStep(d, lambda p: p)
    with pytest.raises(la.LazyArrayError, match="must return the input's shape"):
        bad(u)


def test_allreduce_norm_cfl_one_rank():
    comm = MPI.COMM_SELF
    x = la.asarray(np.array([3.0, -4.0]))
    assert allreduce(la.sum(x), comm=comm) == -1.0
    assert allreduce(np.array([1, 2]), "max", comm).tolist() == [1, 2]
    assert norm(x, comm=comm) == 5.0
    assert norm(x, 1, comm) == 7.0 and norm(x, np.inf, comm) == 4.0
    assert cfl_dt(x, dx=0.5, cfl=0.4, comm=comm) == pytest.approx(0.05)
    assert cfl_dt(la.zeros(3), dx=1.0, comm=comm) == math.inf
    with pytest.raises(ValueError):
        allreduce(1.0, "mean", comm)
