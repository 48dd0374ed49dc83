"""meshmode's simple DG example (2-D wave equation, RK4) on several array
contexts: where a time step's time goes.

The example (``examples/simple-dg.py`` of a meshmode checkout, passed with
``--example``) is imported as a module; its discretization, operator, state
container and RK4 step are used unchanged. This script runs its time loop as
the example's ``main`` does: an eager ``PyOpenCLArrayContext`` holds the
state and does the RK4 combinations, the right-hand side runs on the context
under test through ``actx.compile``, each call wrapped in
``thaw(freeze(...))`` both ways. The VTK output is left out; the norm of
``u`` is read back every 10 steps, as the example logs it.

Contexts (``--contexts``): ``eager`` (meshmode's ``PyOpenCLArrayContext``
for the right-hand side too), ``pytato`` (meshmode's
``PytatoPyOpenCLArrayContext``), ``lazyarray``
(:class:`lazyarray.arraycontext.LazyarrayArrayContext`; ``lazyarray-steps``
with each kernel of a compiled function launched on its own,
``lazyarray-one`` with a compiled function always one sequential kernel:
see :mod:`lazyarray.run.sequence`).

Per context it prints the wall time, the first step (tracing, planning,
builds) and the later steps' time per step, kernel launches and host
transfers per step (counted at pyopencl's enqueue functions, for every
context alike), and for lazyarray the traces, kernels planned and
launches per step (``lazyarray.run.STATS``). ``--stages`` times the parts
of each later step (outer freeze/thaw, the compiled call, the result's
freeze/thaw, the RK combinations); ``--profile FILE`` writes a cProfile of
the later steps of the last context. ``--json FILE`` writes the rows.

    python benchmarks/dg_wave.py --example <meshmode>/examples/simple-dg.py \
        --contexts eager pytato lazyarray --t-final 0.6

Needs meshmode, arraycontext (and pytato for ``pytato``) in the environment
(docs/pde-backend.md, "Installing").
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import json
import statistics
import sys
import time
from collections import Counter
from typing import Any

import numpy as np

#: pyopencl calls counted while a step runs (kernel launches, host transfers,
#: device copies)
COUNTS: Counter = Counter()
#: the compiled right-hand sides (for inspection after a run)
COMPILED: list = []


def _count_pyopencl_calls() -> None:
    """Count kernel launches and buffer transfers at pyopencl's entry points
    (the generated kernel invokers call ``_cl.enqueue_nd_range_kernel``;
    lazyarray calls ``pyopencl.enqueue_nd_range_kernel``)."""
    import pyopencl as cl
    import pyopencl._cl as _cl

    def counted(module: Any, name: str, what: str) -> None:
        original = getattr(module, name)
        if getattr(original, "_counted", False):
            return

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            COUNTS[what] += 1
            return original(*args, **kwargs)

        wrapper._counted = True  # type: ignore[attr-defined]
        setattr(module, name, wrapper)

    counted(_cl, "enqueue_nd_range_kernel", "launches")
    if cl.enqueue_nd_range_kernel is not _cl.enqueue_nd_range_kernel:
        counted(cl, "enqueue_nd_range_kernel", "launches")
    counted(_cl, "_enqueue_read_buffer", "reads")
    counted(_cl, "_enqueue_write_buffer", "writes")
    counted(_cl, "_enqueue_copy_buffer", "copies")


def load_example(path: str) -> Any:
    """The example script as a module (its ``main`` is not run)."""
    spec = importlib.util.spec_from_file_location("simple_dg_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def make_allocator(queue: Any, kind: str) -> Any:
    """The allocator of meshmode's contexts: ``pool`` (a pyopencl memory pool
    of buffers, as production codes pass) or ``default`` (the contexts' own:
    pytato's takes shared virtual memory where the device has it, which
    pyopencl's elementwise kernels reject under NVIDIA's OpenCL)."""
    if kind == "default":
        return None
    import pyopencl.tools as cl_tools
    return cl_tools.MemoryPool(cl_tools.ImmediateAllocator(queue))


def make_context(name: str, queue: Any, allocator: Any = None) -> Any:
    if name == "eager":
        from meshmode.array_context import PyOpenCLArrayContext
        return PyOpenCLArrayContext(queue, allocator=allocator)
    if name == "pytato":
        from meshmode.array_context import PytatoPyOpenCLArrayContext
        return PytatoPyOpenCLArrayContext(queue, allocator=allocator)
    if name.startswith("lazyarray"):
        from lazyarray.arraycontext import LazyarrayArrayContext
        # lazyarray-steps: each compiled step its own launch; lazyarray-one:
        # one sequential kernel whatever the size (lazyarray: chosen by size)
        single = {"lazyarray": None, "lazyarray-steps": False, "lazyarray-one": True}[name]
        return LazyarrayArrayContext(queue, single_launch=single)
    raise ValueError(f"unknown context {name!r}")


class _Stages:
    """Seconds spent in each part of the steps, summed."""

    def __init__(self, queue: Any, on: bool):
        self.queue = queue
        self.on = on
        self.seconds: Counter = Counter()

    def timed(self, what: str, f: Any, *args: Any) -> Any:
        if not self.on:
            return f(*args)
        self.queue.finish()
        start = time.perf_counter()
        result = f(*args)
        self.queue.finish()
        self.seconds[what] += time.perf_counter() - start
        return result


def run(example: Any, name: str, t_final: float, nel_1d: int, order: int, queue: Any,
        stages: bool = False, profile: str | None = None, allocator: str = "pool") -> dict:
    """The example's time loop with the right-hand side on context *name*."""
    from meshmode.array_context import PyOpenCLArrayContext
    from meshmode.dof_array import flat_norm
    from meshmode.mesh.generation import generate_regular_rect_mesh
    from pytools import obj_array

    import lazyarray.run as la_run

    memory = make_allocator(queue, allocator)
    actx_outer = PyOpenCLArrayContext(queue, allocator=memory)
    actx_rhs = actx_outer if name == "eager" else make_context(name, queue, memory)
    mesh = generate_regular_rect_mesh(a=(-0.5, -0.5), b=(0.5, 0.5),
                                      nelements_per_axis=(nel_1d, nel_1d))
    dt = 0.7 / (nel_1d * order**2)        # the example's step
    discr = example.DGDiscretization(actx_outer, mesh, order=order)
    fields = example.WaveState(
        u=example.bump(actx_outer, discr),
        v=obj_array.new_1d([discr.zeros(actx_outer) for _ in range(discr.dim)]))

    def rhs(t: Any, q: Any) -> Any:
        return example.wave_operator(actx_rhs, discr, c=1, q=q)

    compiled_rhs = actx_rhs.compile(rhs)
    COMPILED.append(compiled_rhs)
    timer = _Stages(queue, stages)

    def rhs_wrapper(t: Any, q: Any) -> Any:
        q_in = timer.timed("thaw(freeze(state))", lambda: actx_rhs.thaw(actx_outer.freeze(q)))
        r = timer.timed("compiled rhs", compiled_rhs, t, q_in)
        return timer.timed("thaw(freeze(rhs))", lambda: actx_outer.thaw(actx_rhs.freeze(r)))

    step_times: list[float] = []
    counts: list[Counter] = []
    stats: list[dict] = []
    norms: list[float] = []
    profiler = cProfile.Profile() if profile else None
    t = np.float64(0)
    istep = 0
    queue.finish()
    start = time.perf_counter()
    while t < t_final:
        if istep == 1 and profiler is not None:
            profiler.enable()
        if istep == 1:
            timer.seconds.clear()
        COUNTS.clear()
        before = dict(la_run.STATS)
        t0 = time.perf_counter()
        rk_start = sum(timer.seconds.values())
        fields = example.rk4_step(fields, t, dt, rhs_wrapper)
        queue.finish()
        elapsed = time.perf_counter() - t0
        if stages:
            timer.seconds["RK4 combinations (eager)"] += elapsed - (
                sum(timer.seconds.values()) - rk_start)
        step_times.append(elapsed)
        counts.append(Counter(COUNTS))
        stats.append({k: la_run.STATS[k] - before.get(k, 0) for k in la_run.STATS})
        if istep % 10 == 0:
            norms.append(float(actx_outer.to_numpy(flat_norm(fields.u, 2))))
        t += dt
        istep += 1
    queue.finish()
    wall = time.perf_counter() - start
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile)
    later = step_times[1:] or step_times

    def per_step(what: str, rows: list) -> float:
        tail = rows[1:] or rows
        return sum(r.get(what, 0) for r in tail) / len(tail)

    row = {
        "context": name, "steps": istep, "t_final": float(t), "wall_s": wall,
        "first_step_s": step_times[0],
        "per_step_ms": 1e3 * statistics.median(later),
        "per_step_mean_ms": 1e3 * statistics.fmean(later),
        "launches_per_step": per_step("launches", counts),
        "reads_per_step": per_step("reads", counts),
        "writes_per_step": per_step("writes", counts),
        "copies_per_step": per_step("copies", counts),
        "first_step_launches": counts[0]["launches"],
        "final_norm": float(actx_outer.to_numpy(flat_norm(fields.u, 2))),
        "norms": norms,
    }
    if name.startswith("lazyarray"):
        row["traces"] = compiled_rhs.trace_count
        row["planned_first_step"] = stats[0]["planned"]
        row["planned_per_step"] = per_step("planned", stats)
        row["lazyarray_launches_per_step"] = per_step("launches", stats)
    if stages:
        n = max(len(later), 1)
        row["stages_ms_per_step"] = {k: 1e3 * v / n for k, v in timer.seconds.items()}
    return row


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--example", required=True,
                        help="path of meshmode's examples/simple-dg.py")
    parser.add_argument("--contexts", nargs="+", default=["eager", "pytato", "lazyarray"],
                        choices=["eager", "pytato", "lazyarray", "lazyarray-steps",
                                 "lazyarray-one"])
    parser.add_argument("--t-final", type=float, default=3.0)
    parser.add_argument("--nel", type=int, default=16, help="elements per axis (x2 triangles)")
    parser.add_argument("--order", type=int, default=3)
    parser.add_argument("--stages", action="store_true",
                        help="time the parts of each step (waits for the queue between them)")
    parser.add_argument("--profile", help="cProfile of the later steps (last context)")
    parser.add_argument("--allocator", choices=["pool", "default"], default="pool",
                        help="memory of meshmode's contexts (see make_allocator)")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)

    import pyopencl as cl

    _count_pyopencl_calls()
    example = load_example(args.example)
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    rows = []
    for name in args.contexts:
        row = run(example, name, args.t_final, args.nel, args.order, queue,
                  stages=args.stages, allocator=args.allocator,
                  profile=args.profile if name == args.contexts[-1] else None)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "norms"}), flush=True)
    ref = rows[0]["final_norm"]
    for row in rows[1:]:
        print(f"{row['context']}: final norm of u differs from {rows[0]['context']}'s "
              f"by {abs(row['final_norm'] - ref):.3e} (relative "
              f"{abs(row['final_norm'] - ref) / abs(ref):.3e})")
    print(f"{'context':<10} {'wall s':>8} {'first s':>8} {'ms/step':>9} {'launches':>9} "
          f"{'reads':>6} {'writes':>6} {'plans':>6}")
    for row in rows:
        print(f"{row['context']:<10} {row['wall_s']:8.2f} {row['first_step_s']:8.2f} "
              f"{row['per_step_ms']:9.2f} {row['launches_per_step']:9.1f} "
              f"{row['reads_per_step']:6.1f} {row['writes_per_step']:6.1f} "
              f"{row.get('planned_per_step', float('nan')):6.2f}")
        for k, v in row.get("stages_ms_per_step", {}).items():
            print(f"    {k:<28} {v:8.2f} ms/step")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
