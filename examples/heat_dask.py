"""2-D heat equation (5-point Jacobi update, float64) as Dask tasks running
lazyarray: the same scheme and checks as examples/heat_mpi.py.

Run (writes the field)::

    .venv/bin/python examples/heat_dask.py --n 256 --steps 100 --bc periodic \
        --chunks 128 --out heat.npy [--check] [--mode blocks|device] [--workers 2]

``--mode blocks`` (the default): each step is ``la.dask.map_overlap`` over
NumPy blocks, on a ``distributed`` LocalCluster of ``--workers`` processes
(one thread each) on the loopback interface; each worker compiles the step
once (``la.jit``) and runs it on its device. ``--mode device``: the chunks
are lazy arrays that stay on this process's device from step to step
(Dask's threaded scheduler, ``dask.array`` with the ``lazyarray`` backend).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heat_mpi import initial, numpy_heat, ring, update


def block_step(p, fixed=None):
    """One step of a block padded by one cell (*fixed*: the padded ring mask)."""
    return update(p, None if fixed is None else fixed[1:-1, 1:-1])


def run_blocks(n: int, steps: int, bc: str, chunks: int, client=None) -> np.ndarray:
    """The heat run as ``la.dask.map_overlap`` tasks (on *client*'s cluster,
    else Dask's default scheduler)."""
    import dask.array as da

    import lazyarray.dask as ld

    i, j = np.ogrid[:n, :n]
    u = da.from_array(initial(n, i, j), chunks=chunks)
    extra = (da.from_array(np.broadcast_to(ring(n, i, j), (n, n)), chunks=chunks),) \
        if bc == "dirichlet" else ()
    boundary = "periodic" if bc == "periodic" else 0
    for _ in range(steps):
        u = ld.map_overlap(block_step, u, *extra, depth=1, boundary=boundary, trim=False,
                           chunks=u.chunks)
    if client is not None:
        return client.compute(u).result()
    return u.compute()


def run_device(n: int, steps: int, bc: str, chunks: int) -> np.ndarray:
    """The heat run with lazy-array chunks (threaded scheduler)."""
    import dask.array as da

    import lazyarray as la
    import lazyarray.dask

    i, j = np.ogrid[:n, :n]
    u = da.from_array(initial(n, i, j), chunks=chunks).to_backend("lazyarray")
    extra = (da.from_array(np.broadcast_to(ring(n, i, j), (n, n)), chunks=chunks)
             .to_backend("lazyarray"),) if bc == "dirichlet" else ()
    boundary = "periodic" if bc == "periodic" else 0
    meta = la.empty((0, 0))
    for _ in range(steps):
        u = da.map_overlap(block_step, u, *extra, depth=1, boundary=boundary, trim=False,
                           chunks=u.chunks, meta=meta, dtype=np.float64)
    return u.compute(scheduler="threads").get()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--bc", choices=("periodic", "dirichlet"), default="periodic")
    parser.add_argument("--chunks", type=int, default=128)
    parser.add_argument("--out", help="where to save the field (.npy)")
    parser.add_argument("--check", action="store_true", help="compare with NumPy")
    parser.add_argument("--mode", choices=("blocks", "device"), default="blocks")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    if args.mode == "device":
        field = run_device(args.n, args.steps, args.bc, args.chunks)
    else:
        from distributed import Client, LocalCluster

        from lazyarray.dask import WorkerSetup
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          host="127.0.0.1", dashboard_address=None) as cluster, \
                Client(cluster) as client:
            client.register_plugin(WorkerSetup())
            field = run_blocks(args.n, args.steps, args.bc, args.chunks, client)
    summary = {"n": args.n, "steps": args.steps, "bc": args.bc, "chunks": args.chunks,
               "mode": args.mode, "seconds": time.perf_counter() - t0}
    if args.out:
        np.save(args.out, field)
    if args.check:
        err = float(np.max(np.abs(field - numpy_heat(args.n, args.steps, args.bc))))
        summary["max_abs_error_vs_numpy"] = err
        if not err <= 1e-12:
            print(f"heat_dask: differs from NumPy by {err}", file=sys.stderr)
            return 1
    print("heat_dask:", json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
