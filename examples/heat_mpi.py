"""2-D heat equation (5-point Jacobi update, float64) on MPI ranks with
lazyarray: each rank updates its block; halos are exchanged inside each step
while the device computes the block's interior.

Run (rank 0 writes the gathered field)::

    mpiexec -n 2 .venv/bin/python examples/heat_mpi.py --n 256 --steps 100 \
        --bc periodic --out heat.npy [--check] [--json timings.json]

The scheme: ``u0[i, j] = sin(2 pi i / N) cos(2 pi j / N) + ((i j) % 7) / 7``
on an N x N grid; each step ``u += 0.2 * (u[i-1,j] + u[i+1,j] + u[i,j-1] +
u[i,j+1] - 4 u[i,j])``, with periodic wrap-around, or (``--bc dirichlet``)
the outermost ring held at its initial values. ``--check`` compares the
result with NumPy on rank 0. Runs on any number of ranks (also without
``mpiexec``) give the same bits.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from mpi4py import MPI


def initial(n: int, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """The initial field at global indices *i*, *j* (broadcast)."""
    return np.sin(2 * np.pi * i / n) * np.cos(2 * np.pi * j / n) + ((i * j) % 7) / 7


def update(p, fixed=None):
    """The new values of a block from the block padded by one cell (*fixed*:
    where the old value is kept). NumPy or lazy arrays."""
    c = p[1:-1, 1:-1]
    new = c + 0.2 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * c)
    if fixed is None:
        return new
    if isinstance(new, np.ndarray):
        return np.where(fixed, c, new)
    import lazyarray as la
    return la.where(fixed, c, new)


def ring(n: int, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Whether the global cells *i*, *j* are on the outermost ring."""
    return (i == 0) | (i == n - 1) | (j == 0) | (j == n - 1)


def numpy_heat(n: int, steps: int, bc: str) -> np.ndarray:
    """The reference: the same scheme in NumPy."""
    i, j = np.ogrid[:n, :n]
    u = initial(n, i, j)
    fixed = ring(n, i, j) if bc == "dirichlet" else None
    for _ in range(steps):
        u = update(np.pad(u, 1, mode="wrap" if bc == "periodic" else "constant"), fixed)
    return u


def run(comm, n: int, steps: int, bc: str, overlap: bool = True, trace: bool = False,
        repeat: int = 0):
    """The heat run on the ranks of *comm*: ``(decomposition, local result,
    timings)``; *repeat* > 0 also times that many runs of *steps* steps."""
    import lazyarray as la
    from lazyarray.distributed import CartesianDecomposition, HaloStep

    decomp = CartesianDecomposition(comm, (n, n), periods=(bc == "periodic"), halo=1)
    i, j = decomp.global_indices()
    u0 = la.asarray(initial(n, i, j))
    aux = (la.asarray(np.broadcast_to(ring(n, i, j), decomp.local_shape)),) \
        if bc == "dirichlet" else ()
    step = HaloStep(decomp, update, np.float64, overlap=overlap, trace=trace)
    u = step.run(u0, steps, *aux).compute()
    la.synchronize()
    timings: dict = {}
    if repeat:
        best = float("inf")
        for _ in range(repeat):
            decomp.cart.Barrier()
            if step.trace is not None:
                step.trace.clear()
            t0 = time.perf_counter()
            v = step.run(u0, steps, *aux).compute()
            la.synchronize()
            elapsed = time.perf_counter() - t0
            best = min(best, decomp.cart.allreduce(elapsed, op=MPI.MAX))
        del v
        timings["seconds"] = best
        if step.trace:
            waits, mpi, running = zip(*step.trace)
            # medians: on a shared machine a few steps stall for other reasons
            timings.update(pack_wait=float(np.median(waits)), exchange=float(np.median(mpi)),
                           exchange_hidden=float(np.mean(running)))
    return decomp, u, timings


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--bc", choices=("periodic", "dirichlet"), default="periodic")
    parser.add_argument("--out", help="where rank 0 saves the global field (.npy)")
    parser.add_argument("--check", action="store_true", help="compare with NumPy on rank 0")
    parser.add_argument("--no-overlap", action="store_true",
                        help="wait for the interior before exchanging (baseline)")
    parser.add_argument("--repeat", type=int, default=0, help="time this many runs")
    parser.add_argument("--json", help="rank 0 writes the timings here")
    args = parser.parse_args(argv)

    comm = MPI.COMM_WORLD
    if comm.size > 1 or "POCL_CACHE_DIR" in os.environ:
        # PoCL's kernel cache is not safe under concurrent builds: one per rank
        from lazyarray.distributed import use_rank_caches
        use_rank_caches(comm.rank)
    decomp, u, timings = run(comm, args.n, args.steps, args.bc, overlap=not args.no_overlap,
                             trace=bool(args.repeat), repeat=args.repeat)
    field = decomp.gather(u)
    if comm.rank != 0:
        return 0
    assert field is not None
    if args.out:
        np.save(args.out, field)
    summary = {"n": args.n, "steps": args.steps, "bc": args.bc, "ranks": comm.size,
               "dims": list(decomp.dims), "overlap": not args.no_overlap, **timings}
    if args.check:
        err = float(np.max(np.abs(field - numpy_heat(args.n, args.steps, args.bc))))
        summary["max_abs_error_vs_numpy"] = err
        if not err <= 1e-12:
            print(f"heat_mpi: differs from NumPy by {err}", file=sys.stderr)
            return 1
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    print("heat_mpi:", json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
