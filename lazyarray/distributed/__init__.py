"""lazyarray programs on MPI ranks (mpi4py): each rank holds one block of a
global grid and runs the same lazy program on it.

- :class:`CartesianDecomposition`: the blocks, neighbours and periodicity,
  with ``scatter``/``gather`` of whole fields;
- :class:`HaloExchange` and :class:`HaloStep`: a stencil update whose halo
  exchange (faces packed on the device, nonblocking persistent MPI requests)
  runs while the device computes the interior, the boundary strips after;
- :func:`allreduce`, :func:`norm`, :func:`cfl_dt`: global reductions that
  give the same value on every rank, run after run;
- :func:`use_rank_caches`: a compiler cache per rank (PoCL's is not safe
  when several processes build at once).

``mpi4py`` is needed (``pip install lazyarray[scale]``); see docs/scale-out.md.
"""

from __future__ import annotations

import os
import tempfile


def use_rank_caches(rank: int | str, base: str | None = None, threads: int | None = None) -> str:
    """Give this process (MPI rank or Dask worker number *rank*) a PoCL
    kernel cache of its own under *base* (default: ``$POCL_CACHE_DIR``, else
    the temporary directory), and *threads* PoCL threads if given. Call it
    before lazyarray first uses the device; returns the cache directory."""
    base = base or os.environ.get("POCL_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), "pocl-cache")
    path = os.path.join(base, f"rank{rank}")
    os.makedirs(path, exist_ok=True)
    os.environ["POCL_CACHE_DIR"] = path
    if threads is not None:
        os.environ["POCL_MAX_PTHREAD_COUNT"] = str(threads)
        os.environ["POCL_CPU_MAX_CU_NUM"] = str(threads)
    return path


from lazyarray.distributed.decomposition import CartesianDecomposition, block_range  # noqa: E402
from lazyarray.distributed.halo import HaloExchange, HaloStep  # noqa: E402
from lazyarray.distributed.reductions import allreduce, cfl_dt, norm  # noqa: E402

__all__ = ["CartesianDecomposition", "HaloExchange", "HaloStep", "allreduce", "block_range",
           "cfl_dt", "norm", "use_rank_caches"]
