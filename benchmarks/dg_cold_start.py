"""The first call of a compiled PDE operator on LazyarrayArrayContext, with
empty caches and then in a second process that finds them filled.

Workloads (``--workload``):

- ``simple-dg``: the right-hand side of meshmode's ``examples/simple-dg.py``
  (``--example`` gives its path), compiled, on the example's state;
- ``grudge``: the compiled RK4 step of ``examples/grudge_advection.py``;
- ``dg1d``: the compiled RK4 step of ``examples/dg_advection.py``.

``--fresh DIR`` runs the workload twice, each in a new process whose caches
(lazyarray's recipes, kernelcore's code and binaries, pyopencl's, PoCL's and
NVIDIA's compiler caches) all live in *DIR*, emptied first: the first process starts
from nothing, the second finds what the first stored. Without it, the
workload runs once in this process with the caches as they are.

Per run it prints the setup (mesh, discretization: not counted), the first
call and its parts (tracing the function, planning the program, the first
run: lowering and builds), the first call's CPU time (this process's
threads: PoCL builds on the calling thread; a better guide than the wall
time on a loaded machine) with the load average, the second call, the
kernels planned and the recipes loaded from disk::

    python benchmarks/dg_cold_start.py --workload simple-dg \
        --example <meshmode>/examples/simple-dg.py --fresh /tmp/cold
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

#: seconds per part of the first call (see :func:`_timed_parts`)
PARTS: Counter = Counter()



def _children_cpu() -> float:
    """CPU seconds of this process's finished child processes (a compiler's
    linker run as a program, for instance)."""
    t = os.times()
    return t.children_user + t.children_system

def _timed_parts() -> None:
    """Time ``CompiledFunction._trace`` (tracing and planning),
    ``plan_program`` (planning) and ``Program.run`` (running: the first one
    lowers and builds)."""
    from lazyarray.arraycontext import compile as compile_module

    def timed(owner: Any, name: str, part: str) -> None:
        original = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                PARTS[part] += time.perf_counter() - start

        setattr(owner, name, wrapper)

    timed(compile_module.CompiledFunction, "_trace", "trace + plan")
    timed(compile_module, "plan_program", "plan")
    timed(compile_module.Program, "run", "run")


def simple_dg(example_path: str, queue: Any, single: bool | None = None) -> tuple[Any, tuple]:
    """meshmode's simple-dg right-hand side compiled, and its arguments."""
    import numpy as np
    from meshmode.array_context import PyOpenCLArrayContext
    from meshmode.mesh.generation import generate_regular_rect_mesh
    from pytools import obj_array

    from lazyarray.arraycontext import LazyarrayArrayContext

    sys.path.insert(0, str(Path(__file__).parent))
    from dg_wave import load_example

    example = load_example(example_path)
    outer = PyOpenCLArrayContext(queue)
    actx = LazyarrayArrayContext(queue, single_launch=single)
    mesh = generate_regular_rect_mesh(a=(-0.5, -0.5), b=(0.5, 0.5),
                                      nelements_per_axis=(16, 16))
    discr = example.DGDiscretization(outer, mesh, order=3)
    fields = example.WaveState(
        u=example.bump(outer, discr),
        v=obj_array.new_1d([discr.zeros(outer) for _ in range(discr.dim)]))
    rhs = actx.compile(lambda t, q: example.wave_operator(actx, discr, c=1, q=q))
    return (lambda: actx.freeze(rhs(np.float64(0), actx.thaw(outer.freeze(fields))))), ()


def grudge_step(queue: Any, single: bool | None = None) -> Any:
    """examples/grudge_advection.py's compiled RK4 step on its first state
    (the modules ``march`` imports are imported here, in the setup: grudge's
    ``op`` imports pytato, some 0.3 s that are no part of the operator)."""
    sys.path.insert(0, str(Path(__file__).parent.parent / "examples"))
    import grudge.discretization
    import grudge.geometry
    import grudge.op  # noqa: F401
    from grudge_advection import march

    from lazyarray.arraycontext import LazyarrayArrayContext

    actx = LazyarrayArrayContext(queue, single_launch=single)
    return lambda: march(actx, 8, 3, 2)


def dg1d_step(queue: Any, single: bool | None = None) -> Any:
    """examples/dg_advection.py's compiled RK4 step."""
    sys.path.insert(0, str(Path(__file__).parent.parent / "examples"))
    from dg_advection import run

    from lazyarray.arraycontext import LazyarrayArrayContext

    actx = LazyarrayArrayContext(queue, single_launch=single)
    return lambda: run(actx, 64, 4, 2)


def measure(workload: str, example: str | None, single: bool | None = None) -> dict:
    """One process's first and second call of *workload* (*single*: the
    context's ``single_launch``)."""
    import warnings

    import pyopencl as cl

    import lazyarray.run as la_run
    from kernelcore.runtime.build import BINARY_STATS
    from lazyarray.run import cache

    warnings.simplefilter("ignore")
    _timed_parts()
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    start = time.perf_counter()
    if workload == "simple-dg":
        assert example is not None, "--example is needed for simple-dg"
        call, _ = simple_dg(example, queue, single)
    elif workload == "grudge":
        call = grudge_step(queue, single)
    else:
        call = dg1d_step(queue, single)
    setup = time.perf_counter() - start
    times = []
    cpu_times = []
    child_cpu_times = []
    for _ in range(2):
        queue.finish()
        start, cpu_start = time.perf_counter(), time.process_time()
        children_start = _children_cpu()
        result = call()
        queue.finish()
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
        child_cpu_times.append(_children_cpu() - children_start)
    row = {"workload": workload, "setup_s": setup, "first_call_s": times[0],
           "first_call_cpu_s": cpu_times[0],
           "first_call_children_cpu_s": child_cpu_times[0], "load": os.getloadavg()[0],
           "second_call_s": times[1], "parts_s": dict(PARTS),
           "planned": la_run.STATS["planned"], "recipe_hits": cache.STATS["disk_hits"],
           "binary_hits": BINARY_STATS["hits"]}
    if workload != "simple-dg":
        # (these drivers time their own steps: the first includes the trace)
        row["driver_first_step_s"] = result["first_s"]
    return row


def _cache_env(directory: Path) -> dict:
    env = dict(os.environ)
    env.update(XDG_CACHE_HOME=str(directory / "xdg"), POCL_CACHE_DIR=str(directory / "pocl"),
               KERNELCORE_CACHE_DIR=str(directory / "kernelcore"),
               LAZYARRAY_CACHE_DIR=str(directory / "lazyarray"),
               CUDA_CACHE_PATH=str(directory / "nv"))    # (NVIDIA's own compiler cache)
    return env


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", choices=["simple-dg", "grudge", "dg1d"],
                        default="simple-dg")
    parser.add_argument("--example", help="meshmode's examples/simple-dg.py")
    parser.add_argument("--fresh", help="run twice in new processes, caches emptied in DIR")
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--single-launch", choices=["auto", "on", "off"], default="auto",
                        help="LazyarrayArrayContext's single_launch (auto: None)")
    args = parser.parse_args(argv)
    single = {"auto": None, "on": True, "off": False}[args.single_launch]
    rows = []
    if args.fresh:
        directory = Path(args.fresh)
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        for label in ("empty caches", "second process"):
            command = [sys.executable, __file__, "--workload", args.workload,
                       "--single-launch", args.single_launch]
            if args.example:
                command += ["--example", args.example]
            out = subprocess.run(command, env=_cache_env(directory), check=True,
                                 capture_output=True, text=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            row["run"] = label
            rows.append(row)
            print(json.dumps(row), flush=True)
    else:
        rows.append(measure(args.workload, args.example, single))
        print(json.dumps(rows[-1]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
