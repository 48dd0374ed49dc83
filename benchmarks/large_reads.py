"""Single operations on large arrays, their result read into NumPy (or reduced),
against NumPy on the same values: what a script pays beyond the host tier's
limit, where arrays live in the device's buffers and each read copies out.

Best of seven timed runs after one untimed, milliseconds, one process.

    python benchmarks/large_reads.py [--sizes 1048576,8388608] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

#: (name, function of two arrays) of each case: reads into NumPy or reductions
CASES: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("np.asarray(x * 2)", lambda x, y: np.asarray(x * 2)),
    ("np.asarray(x * 2 + y)", lambda x, y: np.asarray(x * 2 + y)),
    ("np.asarray(x[1:] - x[:-1])", lambda x, y: np.asarray(x[1:] - x[:-1])),
    ("np.asarray(np.sin(x) + y)", lambda x, y: np.asarray(np.sin(x) + y)),
    ("float((x * y).sum())", lambda x, y: float((x * y).sum())),
    ("float(x.mean())", lambda x, y: float(x.mean())),
]


def best_ms(case: Callable[[Any, Any], Any], x: Any, y: Any, repeat: int = 7) -> float:
    """The shortest of *repeat* timed runs of ``case(x, y)`` after an untimed one."""
    case(x, y)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        case(x, y)
        best = min(best, time.perf_counter() - start)
    return 1e3 * best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1048576,2097152,8388608",
                        help="element counts, comma-separated")
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args()

    import lazyarray as la
    from lazyarray.run import default_queue

    rows = ["| elements | case | NumPy ms | lazyarray ms | ratio |", "|---:|---|---:|---:|---:|"]
    rng = np.random.default_rng(0)
    for n in (int(s) for s in args.sizes.split(",")):
        xn, yn = rng.random(n), rng.random(n)
        xl, yl = la.asarray(xn), la.asarray(yn)
        for name, case in CASES:
            numpy_ms, lazy_ms = best_ms(case, xn, yn), best_ms(case, xl, yl)
            rows.append(f"| {n:,} | `{name}` | {numpy_ms:.2f} | {lazy_ms:.2f} "
                        f"| {lazy_ms / numpy_ms:.2f} |")
    table = "\n".join([f"device: {default_queue().device.name.strip()}", "", *rows])
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(table + "\n")


if __name__ == "__main__":
    main()
