"""`import lazyarray` against `import numpy`, each in fresh processes.

Runs ``--repeat`` pairs of child processes, alternating the two imports so
that machine load hits both alike, and prints the median wall time of each
import (timed inside the child, around the import statement only) and their
ratio. Whether lazyarray's modules had bytecode cached is printed too:
without it (a checkout used with ``PYTHONDONTWRITEBYTECODE`` set and never
compiled) every process compiles lazyarray's sources again.

    python benchmarks/import_cost.py [--repeat 15] [--json out.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
from pathlib import Path

_CHILD = ("import time; t = time.perf_counter(); import {module}; "
          "print(time.perf_counter() - t)")


def import_seconds(module: str) -> float:
    """Seconds a fresh interpreter takes to import *module*."""
    out = subprocess.run([sys.executable, "-c", _CHILD.format(module=module)],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def bytecode_cached(package: str) -> bool:
    """Whether every module of *package* has up-to-date cached bytecode."""
    root = Path(importlib.util.find_spec(package).origin).parent
    for source in root.rglob("*.py"):
        cached = Path(importlib.util.cache_from_source(str(source)))
        if not cached.exists() or cached.stat().st_mtime < source.stat().st_mtime:
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    times: dict[str, list[float]] = {"numpy": [], "lazyarray": []}
    for _ in range(args.repeat):
        for module in times:
            times[module].append(import_seconds(module))
    medians = {m: statistics.median(t) for m, t in times.items()}
    result = {"median_s": medians, "ratio": medians["lazyarray"] / medians["numpy"],
              "lazyarray_bytecode_cached": bytecode_cached("lazyarray"),
              "repeat": args.repeat, "python": sys.version.split()[0]}
    for module, t in medians.items():
        print(f"import {module:10s} {t * 1e3:7.1f} ms (median of {args.repeat})")
    print(f"ratio {result['ratio']:.2f}  (lazyarray bytecode cached: "
          f"{result['lazyarray_bytecode_cached']})")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
