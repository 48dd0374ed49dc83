"""What box kernels (kernels generic over shapes and offsets,
``lazyarray/lower/boxes.py``) save and cost: the course's Laplace sweep
(a stencil into the interior, boundary columns and rows written) and a
periodic ``np.roll`` Laplacian, on the device tier.

Per grid size: NumPy's step; lazyarray's steady step with the kernel built
for the shape and with the box kernel; and the first step on a grid of a new
size, with the box kernel built for other sizes before (nothing to build)
and without box kernels (the kernel of the new shape built then, the kernel
caches on disk off). Each process (one per grid size) starts with empty
in-memory kernel tables.

    python benchmarks/box_kernels.py [--sizes 300 1000] [--json out.json] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

STEPS = 20


def jacobi(xp, p, y):
    """One sweep of the course's Laplace iteration."""
    pn = p.copy()
    p[1:-1, 1:-1] = (pn[1:-1, 2:] + pn[1:-1, 0:-2] + pn[2:, 1:-1] + pn[0:-2, 1:-1]) / 4
    p[:, 0] = 0
    p[:, -1] = y
    p[0, :] = p[1, :]
    p[-1, :] = p[-2, :]
    return p


def periodic(xp, u, y):
    """A periodic five-point Laplacian step by rolls."""
    return u + 0.1 * (xp.roll(u, 1, 0) + xp.roll(u, -1, 0) + xp.roll(u, 1, 1)
                      + xp.roll(u, -1, 1) - 4 * u)


WORKLOADS = {"jacobi": jacobi, "periodic": periodic}


def _steady(step, xp, n: int, wait) -> float:
    """Milliseconds per step, the best of three runs of STEPS steps."""
    p, y = xp.asarray(np.random.default_rng(0).random((n, n))), xp.asarray(np.linspace(0, 1, n))
    for _ in range(3):
        p = step(xp, p, y)
    wait(p)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(STEPS):
            p = step(xp, p, y)
        wait(p)
        best = min(best, (time.perf_counter() - start) / STEPS)
    return 1e3 * best


def _first(step, la, n: int) -> float:
    """Milliseconds of the first step (and its wait) on an *n* x *n* grid."""
    p, y = la.asarray(np.random.default_rng(1).random((n, n))), la.asarray(np.linspace(0, 1, n))
    start = time.perf_counter()
    step(la, p, y).block_until_ready()
    return 1e3 * (time.perf_counter() - start)


def measure(name: str, n: int) -> dict:
    """One workload at one grid size, in this process."""
    import lazyarray as la
    import lazyarray.run.steps as steps
    step = WORKLOADS[name]
    la.set_tier("device")
    (la.asarray(np.ones(3)) + 1).block_until_ready()   # (OpenCL and the compiler loaded)
    row: dict = {"workload": name, "n": n}
    row["numpy_ms"] = _steady(step, np, n, lambda p: None)
    steps.SPECIALIZE_RUNS = 10**9
    row["shaped_first_ms"] = _first(step, la, n)                 # (the first shape: its own)
    row["shaped_ms"] = _steady(step, la, n, lambda p: p.block_until_ready())
    _first(step, la, n + 7)                                       # (the box kernel built)
    row["box_first_ms"] = _first(step, la, n + 3)
    row["box_ms"] = _steady(step, la, n + 3, lambda p: p.block_until_ready())
    row["box_builds"] = steps.STATS["planned"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--child", nargs=2)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child[0], int(args.child[1]))))
        return
    env = dict(os.environ, LAZYARRAY_DISK_CACHE="0", LAZYARRAY_QUIET="1")
    rows = []
    for name in WORKLOADS:
        for n in args.sizes:
            out = subprocess.run([sys.executable, __file__, "--child", name, str(n)],
                                 env=env, capture_output=True, text=True, check=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    import lazyarray as la
    from lazyarray.run.device import default_queue
    device = default_queue().device.name.strip()
    la.set_tier("device")
    lines = [f"device: {device}; ms; steady: best of 3 x {STEPS} steps",
             "", "| workload | n | NumPy step | shaped step | box step | box / shaped "
             "| first step, new shape built | first step, box kernel |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['workload']} | {r['n']} | {r['numpy_ms']:.3f} | {r['shaped_ms']:.3f} "
                     f"| {r['box_ms']:.3f} | {r['box_ms'] / r['shaped_ms']:.2f} "
                     f"| {r['shaped_first_ms']:.1f} | {r['box_first_ms']:.1f} |")
    text = "\n".join(lines)
    print(text)
    if args.json:
        args.json.write_text(json.dumps({"device": device, "rows": rows}, indent=1))
    if args.markdown:
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    main()
