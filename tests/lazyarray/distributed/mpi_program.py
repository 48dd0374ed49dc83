"""Run by tests/test_distributed_mpi.py under ``mpiexec -n 2``: global
reductions and a halo-2 stencil reading corners, on every rank, against
NumPy. Prints ``OK <rank>`` on success."""

from __future__ import annotations

import math
import sys

import numpy as np
from mpi4py import MPI

from lazyarray.distributed import use_rank_caches

comm = MPI.COMM_WORLD
use_rank_caches(comm.rank, threads=1)

import lazyarray as la  # noqa: E402
from lazyarray.distributed import CartesianDecomposition, HaloStep, allreduce, cfl_dt, norm  # noqa: E402

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from test_single_process import laplace9, numpy_steps  # noqa: E402

rng = np.random.default_rng(7)
shape = (13, 10)
g = rng.standard_normal(shape)
d = CartesianDecomposition(comm, shape, periods=True, halo=2, dims=(comm.size, 1))
local = la.asarray(d.scatter(g if d.rank == 0 else None))

# reductions: equal on every rank, the maxima exact, sums within rounding
total = allreduce(la.sum(local), comm=comm)
assert len(set(comm.allgather(float(total)))) == 1
assert math.isclose(float(total), g.sum(), rel_tol=1e-13)
assert norm(local, np.inf, comm) == np.abs(g).max()
assert math.isclose(norm(local, 2, comm), np.linalg.norm(g), rel_tol=1e-13)
assert cfl_dt(local, dx=0.1, cfl=0.5, comm=comm) == 0.05 / np.abs(g).max()
parts = allreduce(np.full(3, comm.rank + 1.0), "sum", comm)
assert parts.tolist() == [sum(range(1, comm.size + 1))] * 3

# a stencil of reach 2 that reads the halo's corners
out = d.gather(HaloStep(d, laplace9).run(local, 3))
if d.rank == 0:
    np.testing.assert_allclose(out, numpy_steps(laplace9, g, 3, 2, "wrap"), rtol=1e-12,
                               atol=1e-12)
# (one write per line, which a pipe keeps whole: print writes its parts one
# by one, and two ranks' parts interleaved as "OKOK 0 1")
sys.stdout.write(f"OK {comm.rank}\n")
sys.stdout.flush()
