"""Weak scaling of the heat_mpi scheme over GPUs: one MPI rank per GPU, a
fixed block per rank (``--local`` squared float64 points), the global grid
growing with the ranks (``Compute_dims`` decides its layout).

Run on a machine of several GPUs (rank r computes on GPU r)::

    mpiexec -n 2 python3 benchmarks/heat_weak_gpu.py --local 8192 --steps 200 \
        --repeat 3 [--no-overlap] [--global NX NY] [--json FILE]

Rank 0 prints one JSON line: the grid, the best time of ``--repeat`` runs of
``--steps`` steps (the slowest rank's, after a first run that compiles), the
time per step, and the SHA-256 of the gathered field, so that runs on
different rank counts over one ``--global`` grid can be compared bit for bit.
The scheme is heat_mpi's, on an NX x NY grid: ``u0[i, j] = sin(2 pi i / NX)
cos(2 pi j / NY) + ((i j) % 7) / 7``, periodic.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from mpi4py import MPI

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))


def _pick_gpu(rank: int) -> None:
    """Make kernelcore compute on GPU *rank* of the first platform that has GPUs."""
    import pyopencl as cl
    for p, platform in enumerate(cl.get_platforms()):
        gpus = [d for d in platform.get_devices() if d.type & cl.device_type.GPU]
        if gpus:
            if rank >= len(gpus):
                raise SystemExit(f"rank {rank}: only {len(gpus)} GPUs")
            index = platform.get_devices().index(gpus[rank])
            os.environ["KERNELCORE_DEVICE"] = f"{p}:{index}"
            return
    raise SystemExit("no GPU")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--local", type=int, default=8192, help="block side per rank")
    parser.add_argument("--global", dest="grid", type=int, nargs=2, metavar=("NX", "NY"),
                        help="a fixed global grid instead of --local per rank")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-overlap", action="store_true")
    parser.add_argument("--json", help="rank 0 appends its JSON line here")
    parser.add_argument("--cpu", action="store_true", help="the default device (a check run)")
    args = parser.parse_args(argv)

    comm = MPI.COMM_WORLD
    for cache in ("KERNELCORE_CACHE_DIR", "LAZYARRAY_CACHE_DIR", "POCL_CACHE_DIR"):
        if cache in os.environ:         # (a cache of its own per rank)
            os.environ[cache] = os.path.join(os.environ[cache], f"rank{comm.rank}")
    if not args.cpu:
        _pick_gpu(comm.rank)
    from heat_mpi import update

    import lazyarray as la
    from lazyarray.distributed import CartesianDecomposition, HaloStep

    dims = MPI.Compute_dims(comm.size, [0, 0])
    grid = tuple(args.grid) if args.grid else (args.local * dims[0], args.local * dims[1])
    decomp = CartesianDecomposition(comm, grid, periods=True, halo=1, dims=dims)
    i, j = decomp.global_indices()
    u0 = la.asarray(np.sin(2 * np.pi * i / grid[0]) * np.cos(2 * np.pi * j / grid[1])
                    + ((i * j) % 7) / 7)
    step = HaloStep(decomp, update, np.float64, overlap=not args.no_overlap)
    u = step.run(u0, args.steps).compute()
    la.synchronize()
    best = float("inf")
    for _ in range(args.repeat):
        decomp.cart.Barrier()
        t0 = time.perf_counter()
        u = step.run(u0, args.steps).compute()
        la.synchronize()
        best = min(best, decomp.cart.allreduce(time.perf_counter() - t0, op=MPI.MAX))
    field = decomp.gather(u)
    if comm.rank == 0:
        assert field is not None
        line = {"ranks": comm.size, "dims": list(dims), "grid": list(grid),
                "steps": args.steps, "overlap": not args.no_overlap, "seconds": best,
                "ms_per_step": 1e3 * best / args.steps,
                "device": la.run.default_queue().device.name.strip(),
                "sha256": hashlib.sha256(np.ascontiguousarray(field).tobytes()).hexdigest()}
        print("heat_weak_gpu:", json.dumps(line), flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
