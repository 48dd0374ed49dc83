"""What building a kernel costs on the Python side, stage by stage, in a
fresh process with empty caches (lazyarray's recipes, kernelcore's code and
binaries, PoCL's cache: all in a new temporary folder per case).

Each case runs in its own Python process (the first kernel a user's script
builds pays every lazy import and first-use cost; those are part of the
measurement). Stages, wall (``perf_counter``) and CPU (``process_time``)
milliseconds, summed over the kernels of a case:

- ``plan``: lazyarray's planning of the evaluated graph (stored nodes,
  kernel inputs, structure keys, recipe look-up), lowering excluded;
- ``lower``: lazyarray's lowering to a kernelcore kernel (``build_kernel``;
  for the kernelcore case, ``make_kernel`` + ``split_iname`` + ``tag_inames``);
- ``types``: ``add_dtypes`` + ``infer_types`` (what ``get_executor`` does);
- ``preprocess``, ``schedule`` (``linearize``), ``codegen`` (C source);
- ``executor``: the code key and the Python invoker of the typed kernel;
- ``build``: the OpenCL program built by the device's compiler.

``python`` is everything but ``build``.

    python benchmarks/kernel_build_cost.py [--repeat N] [--profile CASE]
        [--sources DIR] [--first-call] [--markdown out.md] [--json out.json]

``--first-call`` also times a user's whole first call per lazyarray case
(importing lazyarray, then the first result with its build, garbage
collections included). ``--sources DIR`` writes each kernel's generated source (to diff code before
and after a change); ``--profile CASE`` prints a cProfile of that case's
Python stages (cumulative time) instead of the table.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import kernelcore as lp
import lazyarray as la
import lazyarray.run.steps as steps
from kernelcore.codegen.kernel import _generate
from kernelcore.diagnostic import recording_warnings
from kernelcore.runtime import invoke
from kernelcore.runtime.build import compile_program
from kernelcore.runtime.invoke import Executor
from lazyarray.run.device import default_queue

BENCH_DIR = Path(__file__).resolve().parent
STAGES = ("plan", "lower", "types", "preprocess", "schedule", "codegen", "executor", "build")
CASES = ("elementwise3", "laplace_step", "row_sum", "matmul", "kc_tutorial")
#: the profiler that :func:`profile` runs during the Python stages
PROFILER: list = []


# {{{ the cases (run in the child process)

def _lazy_root(case: str):
    """The node a first evaluation of *case* computes (lazyarray cases)."""
    return lazy_case(case).node


def lazy_case(case: str) -> la.LazyArray:
    """The array a lazyarray *case* computes (not evaluated yet)."""
    rng = np.random.default_rng(0)
    if case == "elementwise3":
        a, b, c = (la.asarray(rng.random(100_000)) for _ in range(3))
        out = a * b + 2.0 * la.sin(c)
    elif case == "laplace_step":
        n = 31
        dx, dy = 2 / (n - 1), 1 / (n - 1)
        p, y = la.asarray(rng.random((n, n))), la.asarray(np.linspace(0, 1, n))
        pn = p.copy()
        p[1:-1, 1:-1] = ((dy**2 * (pn[1:-1, 2:] + pn[1:-1, 0:-2])
                          + dx**2 * (pn[2:, 1:-1] + pn[0:-2, 1:-1])) / (2 * (dx**2 + dy**2)))
        p[:, 0] = 0
        p[:, -1] = y
        p[0, :] = p[1, :]
        p[-1, :] = p[-2, :]
        out = p
    elif case == "row_sum":
        out = la.asarray(rng.random((512, 300))).sum(axis=1)
    elif case == "matmul":
        out = la.asarray(rng.random((128, 96))) @ la.asarray(rng.random((96, 64)))
    else:
        raise ValueError(case)
    return out


class _Clock:
    """Wall and CPU seconds per stage, and of the garbage collector's runs
    (in any stage)."""

    def __init__(self) -> None:
        self.wall = dict.fromkeys(STAGES, 0.0)
        self.cpu = dict.fromkeys(STAGES, 0.0)
        self.gc = [0.0, 0]
        self.gc_by_stage = dict.fromkeys(STAGES, 0.0)
        self.stage = ""
        self._gc_start = 0.0
        gc.callbacks.append(self._collecting)

    def _collecting(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            seconds = time.perf_counter() - self._gc_start
            self.gc[0] += seconds
            if self.stage:
                self.gc_by_stage[self.stage] += seconds
            self.gc[1] += info["generation"] == 2

    def run(self, stage: str, fn, *args):
        w, c = time.perf_counter(), time.process_time()
        self.stage = stage
        if PROFILER and stage != "build":
            PROFILER[0].enable()
        try:
            return fn(*args)
        finally:
            if PROFILER:
                PROFILER[0].disable()
            self.stage = ""
            self.wall[stage] += time.perf_counter() - w
            self.cpu[stage] += time.process_time() - c


def _lazy_kernels(case: str, clock: _Clock) -> list:
    """The kernelcore kernels of *case*'s first evaluation, planned and
    lowered as :func:`lazyarray.run.steps.plan_graph` does (lowering timed
    apart from planning)."""
    root = _lazy_root(case)
    lowered = [0.0, 0.0]
    originals = steps.build_kernel, steps.build_flat_kernel

    def timed(fn):
        def lower(*args, **kwargs):
            w, c = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                lowered[0] += time.perf_counter() - w
                lowered[1] += time.process_time() - c
        return lower

    steps.build_kernel, steps.build_flat_kernel = (timed(f) for f in originals)
    try:
        planned = clock.run("plan", steps.plan_graph, root)
    finally:
        steps.build_kernel, steps.build_flat_kernel = originals
    clock.wall["plan"] -= lowered[0]
    clock.cpu["plan"] -= lowered[1]
    clock.wall["lower"] += lowered[0]
    clock.cpu["lower"] += lowered[1]
    return [st.kernel for st in planned if st.compiled is not None]


def _tutorial_kernel():
    """The kernel of loopy's tutorial: ``out = 2*a``, split by 128 onto the
    grid."""
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]")
    knl = lp.split_iname(knl, "i", 128, outer_tag="g.0", inner_tag="l.0")
    return lp.add_dtypes(knl, {"a": np.float32}).executable_kernel()


def measure(case: str, sources: str | None) -> dict:
    """Per-stage seconds of *case* (in this process)."""
    clock = _Clock()
    queue = default_queue()
    if case == "kc_tutorial":
        kernels = [clock.run("lower", _tutorial_kernel)]
    else:
        kernels = _lazy_kernels(case, clock)
    for k, knl in enumerate(kernels):
        typed = clock.run("types", lambda knl=knl: lp.infer_types(lp.add_dtypes(knl, {})))
        pre = clock.run("preprocess", lp.preprocess_kernel, typed)
        lin = clock.run("schedule", lp.linearize, pre)

        def generate(lin=lin):
            with recording_warnings():
                return _generate(lin)
        code = clock.run("codegen", generate)

        def executor(typed=typed, code=code):
            # (the code key and the invoker; the code is the one just generated)
            generate_code = invoke.code_for
            invoke.code_for = lambda key, generate: code
            try:
                return Executor(typed)
            finally:
                invoke.code_for = generate_code
        clock.run("executor", executor)
        clock.run("build", compile_program, queue.context, code.source)
        if sources:
            Path(sources, f"{case}-{k}.cl").write_text(code.source)
    gc.callbacks.remove(clock._collecting)
    return {"case": case, "kernels": len(kernels), "gc_ms": 1e3 * clock.gc[0],
            "full_collections": clock.gc[1],
            "gc_in_python_ms": 1e3 * sum(v for s, v in clock.gc_by_stage.items() if s != "build"),
            "wall_ms": {s: 1e3 * v for s, v in clock.wall.items()},
            "cpu_ms": {s: 1e3 * v for s, v in clock.cpu.items()}}


def profile(case: str) -> None:
    """Print a cProfile of *case*'s Python stages (the build left out)."""
    PROFILER.append(cProfile.Profile())
    measure(case, None)
    stats = pstats.Stats(PROFILER[0], stream=sys.stdout)
    stats.sort_stats("cumulative").print_stats(70)
    stats.sort_stats("tottime").print_stats(40)
    stats.print_callers(r"_compile\b|_parse_sub|lex\b")

# }}}


# {{{ the driver

def _fresh_env(folder: str) -> dict:
    env = dict(os.environ)
    for var, sub in (("LAZYARRAY_CACHE_DIR", "lazyarray"), ("KERNELCORE_CACHE_DIR", "kernelcore"),
                     ("POCL_CACHE_DIR", "pocl"), ("PYOPENCL_CACHE_DIR", "pyopencl")):
        env[var] = str(Path(folder, sub))
        Path(env[var]).mkdir(parents=True)
    env["LAZYARRAY_TIER"] = "device"
    # (modules compiled to bytecode once, as in an installed package, not at
    # every import: a process started with PYTHONDONTWRITEBYTECODE would
    # measure Python's compiler)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir(), "kernel-build-cost-pycache"))
    env["XDG_CACHE_HOME"] = str(Path(folder, "xdg"))
    return env


def run_case(case: str, sources: str | None) -> dict:
    """:func:`measure` of *case* in a fresh process with empty caches."""
    with tempfile.TemporaryDirectory(prefix="kbc-") as folder:
        args = [sys.executable, __file__, "--child", case]
        if sources:
            args += ["--sources", sources]
        out = subprocess.run(args, env=_fresh_env(folder), check=True, capture_output=True,
                             text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


#: a user's first call, run by ``python -c`` in a fresh process: lazyarray
#: imported (timed apart), then one case computed and read back (kernelcore
#: and the benchmark's other modules are imported on the way, as lazyarray
#: imports kernelcore at its first evaluation)
_FIRST_CALL = """
import gc, json, sys, time
collected = [0.0, 0.0]
def note(phase, info):
    if phase == "start":
        collected[1] = time.perf_counter()
    else:
        collected[0] += time.perf_counter() - collected[1]
gc.callbacks.append(note)
w0, c0 = time.perf_counter(), time.process_time()
import numpy as np
import lazyarray
w1, c1 = time.perf_counter(), time.process_time()
collected[0] = 0.0
sys.path.insert(0, sys.argv[1])
import kernel_build_cost
np.asarray(kernel_build_cost.lazy_case(sys.argv[2]))
w2, c2 = time.perf_counter(), time.process_time()
print(json.dumps({"case": sys.argv[2], "import_ms": 1e3 * (w1 - w0),
                  "import_cpu_ms": 1e3 * (c1 - c0), "first_ms": 1e3 * (w2 - w1),
                  "first_cpu_ms": 1e3 * (c2 - c1), "first_gc_ms": 1e3 * collected[0]}))
"""


def first_call(case: str) -> dict:
    """A user's first call of lazyarray *case* in a fresh process with empty
    caches (milliseconds: importing lazyarray; the first result, build included)."""
    with tempfile.TemporaryDirectory(prefix="kbc-") as folder:
        out = subprocess.run([sys.executable, "-c", _FIRST_CALL, str(BENCH_DIR), case],
                             env=_fresh_env(folder), check=True, capture_output=True,
                             text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def first_call_table(rows: list[dict]) -> str:
    lines = ["First call of each lazyarray case in a fresh process, empty caches "
             "(best of the repeats; ms wall, CPU in brackets):", "",
             "| case | import lazyarray | first result (build included) | of it: gc |",
             "|---|---|---|---|"]
    lines += [f"| {r['case']} | {r['import_ms']:.0f} ({r['import_cpu_ms']:.0f}) | "
              f"{r['first_ms']:.0f} ({r['first_cpu_ms']:.0f}) | {r['first_gc_ms']:.1f} |"
              for r in rows]
    return "\n".join(lines)


def _best(runs: list[dict]) -> dict:
    """Per stage, the smallest time over repeated runs (wall and CPU apart)."""
    best = dict(runs[0])
    for unit in ("wall_ms", "cpu_ms"):
        best[unit] = {s: min(r[unit][s] for r in runs) for s in STAGES}
    best["gc_in_python_ms"] = min(r["gc_in_python_ms"] for r in runs)
    return best


def table(rows: list[dict], device: str, repeat: int) -> str:
    head = "| case | kernels | " + " | ".join(STAGES) + " | python | of it: gc |"
    lines = [f"Device: {device}. Best of {repeat} fresh processes per case; "
             "wall ms, CPU ms (process_time) in brackets, summed over the case's kernels.",
             "", head, "|" + "---|" * (len(STAGES) + 4)]
    for r in rows:
        cells = [f"{r['wall_ms'][s]:.1f} ({r['cpu_ms'][s]:.1f})" for s in STAGES]
        python = sum(r["wall_ms"][s] for s in STAGES if s != "build")
        python_cpu = sum(r["cpu_ms"][s] for s in STAGES if s != "build")
        lines.append(f"| {r['case']} | {r['kernels']} | " + " | ".join(cells)
                     + f" | {python:.1f} ({python_cpu:.1f}) | {r['gc_in_python_ms']:.1f} |")
    return "\n".join(lines)


def _device() -> str:
    dev = default_queue().device
    return f"{dev.name.strip()} ({dev.platform.name})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--profile-child", help=argparse.SUPPRESS)
    parser.add_argument("--profile", choices=CASES)
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=CASES)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sources")
    parser.add_argument("--first-call", action="store_true",
                        help="also time a user's whole first call per case")
    parser.add_argument("--markdown")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.sources)))
        return
    if args.profile_child:
        profile(args.profile_child)
        return
    if args.profile:
        with tempfile.TemporaryDirectory(prefix="kbc-") as folder:
            # (a child process: the environment is read when Python starts)
            subprocess.run([sys.executable, __file__, "--profile-child", args.profile],
                           env=_fresh_env(folder), check=True)
        return
    if args.sources:
        Path(args.sources).mkdir(parents=True, exist_ok=True)
    run_case(args.cases[0], None)       # (bytecode of every module written)
    rows = [_best([run_case(c, args.sources) for _ in range(args.repeat)]) for c in args.cases]
    text = table(rows, _device(), args.repeat)
    if args.first_call:
        firsts = [min((first_call(c) for _ in range(args.repeat)),
                      key=lambda r: r["first_cpu_ms"]) for c in args.cases if c != "kc_tutorial"]
        text += "\n\n" + first_call_table(firsts)
        rows += firsts
    sys.stdout.write(text + "\n")
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()

# }}}
