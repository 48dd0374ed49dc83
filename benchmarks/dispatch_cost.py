"""What one recorded operation costs in Python on the device tier, and what
a step of an eager loop costs (recording its graph, then evaluating it).

Per operation: the best of several timed repeats (microseconds) and the
number of Python-level function calls it makes (a count that does not move
with the machine's load). Per step: the course's 2-D Laplace sweep with its
norm read every step, split into recording and evaluation, with launches,
plans and graph walks per step.

    python benchmarks/dispatch_cost.py [--quick] [--json out.json] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import sys
import time
import timeit
from pathlib import Path
from typing import Any

import common
import numpy as np

#: statements over ``a``, ``b`` (31 x 31 float64) and ``y`` (31 float64)
OPERATIONS = [
    "a + b", "a * 2.0", "2.0 * a", "a + 1", "(a + b) * 2.0", "la.abs(a)", "np.abs(a)",
    "la.sum(a)", "a[1:-1, 2:]", "a[:, 0]", "a.copy()",
    "c = a.copy(); c[:, 0] = 0", "c = a.copy(); c[:, -1] = y",
    "c = a.copy(); c[0, :] = c[1, :]", "c = a.copy(); c[1:-1, 1:-1] = b[1:-1, 1:-1]",
]


def python_calls(statement: str, namespace: dict) -> int:
    """The Python and C function calls *statement* makes (after a first run)."""
    code = compile(statement, "<statement>", "exec")
    exec(code, namespace)
    count = [0]

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1

    sys.setprofile(profile)
    try:
        exec(code, namespace)
    finally:
        sys.setprofile(None)
    return count[0]


def operation_costs(la: Any, number: int) -> list[dict]:
    """Per statement of :data:`OPERATIONS`: microseconds and Python calls."""
    namespace = {"la": la, "np": np, "a": la.asarray(np.ones((31, 31))),
                 "b": la.asarray(np.ones((31, 31))), "y": la.asarray(np.ones(31))}
    rows = []
    for statement in OPERATIONS:
        seconds = min(timeit.repeat(statement, globals=namespace, number=number, repeat=5))
        rows.append({"operation": statement, "us": 1e6 * seconds / number,
                     "calls": python_calls(statement, namespace)})
    return rows


def jacobi_step(xp: Any, p: Any, y: Any, dx: float, dy: float) -> tuple:
    """The Laplace sweep of the CFD course (benchmarks/scripts/laplace_2d.py)."""
    pn = p.copy()
    p[1:-1, 1:-1] = ((dy**2 * (pn[1:-1, 2:] + pn[1:-1, 0:-2])
                      + dx**2 * (pn[2:, 1:-1] + pn[0:-2, 1:-1])) / (2 * (dx**2 + dy**2)))
    p[:, 0] = 0
    p[:, -1] = y
    p[0, :] = p[1, :]
    p[-1, :] = p[-2, :]
    return p, xp.sum(xp.abs(p) - xp.abs(pn)) / xp.sum(xp.abs(pn))


def step_costs(la: Any, n: int, count: int) -> dict:
    """Milliseconds per step recording and evaluating the sweep on an n x n
    grid, with launches, plans and graph walks per step, and NumPy's step."""
    import importlib
    stats = importlib.import_module("lazyarray.run.steps").STATS
    evaluation = importlib.import_module("lazyarray.run.evaluation")
    walks = [0]
    original = evaluation.graph_structure

    def counting(root):
        walks[0] += 1
        return original(root)

    evaluation.graph_structure = counting
    dx, dy = 2 / (n - 1), 1 / (n - 1)
    p, y = la.zeros((n, n)), la.linspace(0, 1, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(5):
            p, norm = jacobi_step(la, p, y, dx, dy)
            float(norm)
        before = dict(stats), walks[0]
        record = evaluate = 0.0
        for _ in range(count):
            start = time.perf_counter()
            p, norm = jacobi_step(la, p, y, dx, dy)
            middle = time.perf_counter()
            float(norm)
            record += middle - start
            evaluate += time.perf_counter() - middle
        evaluation.graph_structure = original
        host, hy = np.zeros((n, n)), np.linspace(0, 1, n)
        start = time.perf_counter()
        for _ in range(count):
            host, norm = jacobi_step(np, host, hy, dx, dy)
            float(norm)
        numpy_ms = 1e3 * (time.perf_counter() - start) / count
    return {"n": n, "record_ms": 1e3 * record / count, "evaluate_ms": 1e3 * evaluate / count,
            "numpy_ms": numpy_ms,
            "launches": (stats["launches"] - before[0]["launches"]) / count,
            "planned": (stats["planned"] - before[0]["planned"]) / count,
            "walks": (walks[0] - before[1]) / count}


def _rows(result: dict) -> list[list[str]]:
    return [[row["operation"], f"{row['us']:.1f}", str(row["calls"])]
            for row in result["operations"]]


def _step_line(step: dict) -> str:
    return (f"Laplace sweep {step['n']}x{step['n']}: record {step['record_ms']:.3f} ms, "
            f"evaluate {step['evaluate_ms']:.3f} ms (NumPy {step['numpy_ms']:.3f} ms); "
            f"per step {step['launches']:.1f} launches, {step['planned']:.1f} plans, "
            f"{step['walks']:.1f} graph walks")


def text_report(result: dict) -> str:
    header = ["operation (device tier)", "us", "calls"]
    return common.text_table(header, _rows(result)) + "\n\n" + _step_line(result["step"])


def markdown_report(result: dict) -> str:
    device = result["environment"]["device"]["name"]
    return "\n".join([f"# Dispatch cost on {device}", "",
                      common.markdown_table(["operation (device tier)", "us", "Python calls"],
                                            _rows(result)),
                      "", _step_line(result["step"]), ""])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repeats (a smoke run)")
    parser.add_argument("--json", type=Path, help="where the JSON results go")
    parser.add_argument("--markdown", type=Path, help="where the Markdown report goes")
    args = parser.parse_args()
    common.prepare_environment(None)
    import lazyarray as la
    from lazyarray.run.device import default_queue
    la.set_tier("device")
    result = {"quick": args.quick, "environment": common.environment(default_queue()),
              "operations": operation_costs(la, 50 if args.quick else 2000),
              "step": step_costs(la, 31, 10 if args.quick else 200)}
    return common.write_reports(args, result, True, "dispatch-cost", text_report,
                                markdown_report, "")


if __name__ == "__main__":
    sys.exit(main())
