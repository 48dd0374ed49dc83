"""Run by tests/test_arraycontext_mpi.py under ``mpiexec -n 2``: a
LazyarrayMPIArrayContext on each rank of a periodic 1-D grid split unevenly
over the ranks; a compiled step exchanges the end values with both
neighbours (actx.exchange) and reduces the energy over the ranks
(actx.allreduce), replayed for several time steps, against NumPy on the whole
grid. Rank 0 prints ``OK 0 1`` when every rank succeeded."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from lazyarray.distributed import use_rank_caches

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
use_rank_caches(rank, threads=1)

import arraycontext  # noqa: E402
import pyopencl as cl  # noqa: E402
from arraycontext import Array, dataclass_array_container  # noqa: E402

from lazyarray.arraycontext import LazyarrayMPIArrayContext  # noqa: E402
from lazyarray.run import default_queue  # noqa: E402


@dataclass_array_container
@dataclass(frozen=True)
class Result:
    u: Array
    energy: Array


queue = cl.CommandQueue(cl.Context([default_queue().device]))
actx = LazyarrayMPIArrayContext(comm, queue)
assert isinstance(actx, arraycontext.ArrayContext)
# the same MPI communicator (an object of a subclass recording traced sends)
assert actx.mpi_communicator == comm and actx.clone().mpi_communicator == comm
assert isinstance(actx.mpi_communicator, type(comm))
assert actx.clone().queue is queue

sizes = [6 + k for k in range(size)]
n = sum(sizes)
start = sum(sizes[:rank])
x = np.arange(n)
g = np.sin(2 * np.pi * x / n) + (x % 3) / 3
left, right = (rank - 1) % size, (rank + 1) % size


def step(dt, u):
    ends = actx.np.concatenate([u[:1], u[-1:]])
    got = actx.exchange({left: ends, right: ends},
                        {left: ((2,), u.dtype), right: ((2,), u.dtype)})
    # the left neighbour's last value, the right neighbour's first
    padded = actx.np.concatenate([got[left][1:], u, got[right][:1]])
    new = u + dt * (padded[:-2] - 2 * u + padded[2:])
    return Result(u=new, energy=actx.allreduce(actx.np.sum(new * new)))


compiled = actx.compile(step)
u = actx.from_numpy(g[start:start + sizes[rank]].copy())
ref = g.copy()
for dt in (0.1, 0.2, 0.15):
    out = compiled(dt, u)
    ref = ref + dt * (np.roll(ref, 1) - 2 * ref + np.roll(ref, -1))
    u = actx.thaw(actx.freeze(out.u))
    whole = comm.allgather(actx.to_numpy(u))
    np.testing.assert_allclose(np.concatenate(whole), ref, rtol=0, atol=1e-13)
    energy = float(actx.to_numpy(out.energy))
    assert len(set(comm.allgather(energy))) == 1
    np.testing.assert_allclose(energy, (ref * ref).sum(), rtol=1e-13)
assert compiled.trace_count == 1

# containers reduce leaf by leaf; outside compile too
parts = actx.allreduce(Result(u=actx.from_numpy(np.full(3, rank + 1.0)),
                              energy=actx.from_numpy(np.arange(4) * (rank + 1))), "max")
assert actx.to_numpy(parts.u).tolist() == [float(size)] * 3
assert actx.to_numpy(parts.energy).tolist() == (np.arange(4) * size).tolist()
done = comm.gather(rank, root=0)
if rank == 0:                   # (one writer: the ranks' outputs interleave)
    print("OK", *sorted(done), flush=True)
