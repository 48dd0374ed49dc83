"""grudge's distributed wave example on several MPI ranks, on
LazyarrayMPIArrayContext, grudge's eager MPIPyOpenCLArrayContext or its
lazy pytato context (MPIPytatoArrayContext, as the example's ``--lazy``).

The example (``examples/wave/wave-op-mpi.py`` of a grudge checkout, passed
with ``--example``) is imported as a module: its operator (with the
rank-boundary exchange, ``op.interior_trace_pairs`` with a ``comm_tag``),
state, initial bump and LSRK45 step are used unchanged; the mesh is
cut into strips along x and scattered. The right-hand side is
compiled (``actx.compile``), as the example does. Rank 0 prints the L2
norm of ``u`` every ``--every`` steps, the first step's time, the median
later step, the traces of the compiled right-hand side and the calls of
``to_numpy`` during the later steps (0 when the exchange is inside the
compiled graph); the median later step's CPU time (this process's
threads: PoCL's device threads too) is steadier than its wall time on a
shared machine::

    mpiexec -n 2 python benchmarks/grudge_wave_mpi.py \
        --example <grudge>/examples/wave/wave-op-mpi.py --context lazyarray --steps 40

Each rank keeps its compiler caches apart (``POCL_CACHE_DIR`` and
``LAZYARRAY_CACHE_DIR`` get the rank's number appended when set).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

import numpy as np


def _rank_caches(rank: int) -> None:
    for name in ("POCL_CACHE_DIR", "LAZYARRAY_CACHE_DIR", "KERNELCORE_CACHE_DIR"):
        if os.environ.get(name):
            os.environ[name] = f"{os.environ[name]}-rank{rank}"


def main(argv: list[str] | None = None) -> dict | None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--example", required=True, help="grudge's wave-op-mpi.py")
    parser.add_argument("--context",
                        choices=["lazyarray", "lazyarray-steps", "eager", "pytato"],
                        default="lazyarray")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--nel", type=int, default=16)
    parser.add_argument("--order", type=int, default=3)
    args = parser.parse_args(argv)

    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    _rank_caches(comm.rank)

    import warnings
    warnings.simplefilter("ignore")
    import sys

    import pyopencl as cl
    from grudge import op
    from grudge.discretization import make_discretization_collection
    from grudge.shortcuts import compiled_lsrk45_step
    from meshmode.distributed import membership_list_to_map
    from meshmode.mesh.generation import generate_regular_rect_mesh
    from meshmode.mesh.processing import partition_mesh
    from pytools import obj_array
    sys.path.insert(0, os.path.dirname(__file__))
    from dg_wave import load_example

    example = load_example(args.example)
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    if args.context.startswith("lazyarray"):
        from lazyarray.arraycontext import LazyarrayMPIArrayContext
        # (lazyarray-steps: each kernel of a compiled function launched on its own)
        actx: Any = LazyarrayMPIArrayContext(
            comm, queue, single_launch=False if args.context == "lazyarray-steps" else None)
    elif args.context == "pytato":
        from grudge.array_context import MPIPytatoArrayContext
        from pyopencl.tools import ImmediateAllocator, MemoryPool
        actx = MPIPytatoArrayContext(comm, queue, mpi_base_tag=15000,
                                     allocator=MemoryPool(ImmediateAllocator(queue)))
    else:
        from grudge.array_context import MPIPyOpenCLArrayContext
        actx = MPIPyOpenCLArrayContext(comm, queue)

    if comm.rank == 0:
        mesh = generate_regular_rect_mesh(a=(-0.5, -0.5), b=(0.5, 0.5),
                                          nelements_per_axis=(args.nel, args.nel))
        # strips along x (pymetis, which the example uses, is not needed)
        centers = mesh.vertices[0][mesh.groups[0].vertex_indices].mean(axis=1)
        membership = np.minimum(((centers + 0.5) * comm.size).astype(int), comm.size - 1)
        parts = partition_mesh(mesh, membership_list_to_map(membership))
        local_mesh = comm.scatter([parts[i] for i in range(comm.size)])
    else:
        local_mesh = comm.scatter(None)
    dcoll = make_discretization_collection(actx, local_mesh, order=args.order)
    fields = example.WaveState(
        u=example.bump(actx, dcoll),
        v=obj_array.new_1d([dcoll.zeros(actx) for _ in range(dcoll.dim)]))
    dt = actx.to_numpy(0.45 * example.estimate_rk4_timestep(actx, dcoll, 1)) * 5 / 4
    compiled_rhs = actx.compile(
        lambda t, w: example.wave_operator(actx, dcoll, c=1, w=w, quad_tag=None))
    fields = actx.thaw(actx.freeze(fields))

    host_reads = [0]
    to_numpy = actx.to_numpy

    def counted(array: Any) -> Any:
        host_reads[0] += 1
        return to_numpy(array)

    norms = []
    times = []
    cpu_times = []
    t = 0.0
    for istep in range(args.steps):
        if istep == 1:
            actx.to_numpy = counted
        queue.finish()
        start, cpu_start = time.perf_counter(), time.process_time()
        fields = compiled_lsrk45_step(actx, fields, t, dt, compiled_rhs)
        fields = actx.thaw(actx.freeze(fields))
        queue.finish()
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
        t += dt
        if istep % args.every == 0 or istep == args.steps - 1:
            actx.to_numpy = to_numpy
            norms.append((istep, float(to_numpy(op.norm(dcoll, fields.u, 2)))))
            actx.to_numpy = counted if istep >= 1 else to_numpy
    actx.to_numpy = to_numpy
    row = {"context": args.context, "ranks": comm.size, "steps": args.steps,
           "first_step_s": times[0], "step_ms": 1e3 * statistics.median(times[1:]),
           "step_cpu_ms": 1e3 * statistics.median(cpu_times[1:]),
           "traces": getattr(compiled_rhs, "trace_count", None),
           "to_numpy_in_steps": host_reads[0], "norms": norms}
    row = comm.bcast(row if comm.rank == 0 else None)
    if comm.rank == 0:
        print(json.dumps(row), flush=True)
    return row if np.isfinite(norms[-1][1]) else None


if __name__ == "__main__":
    main()
