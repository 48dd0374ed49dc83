"""Host overhead per call of small lazyarray operations (W8's, issue 21), for
A/B comparisons of source trees on a busy machine.

One process measures, on 1000 float32 elements, the median and the minimum
over samples of many calls of:

- ``build``: ``A + B`` (the graph only);
- ``eager``: ``(A + B).compute()`` on computed arrays;
- ``eager_cl``: ``(la.asarray(a) + la.asarray(b)).compute()`` on pyopencl
  arrays (the suite's W8 eager call, without its wait);
- ``eager_w1``: W1's ``(A*B + C*D - np.sin(E)).compute()`` (one fused kernel);
- ``jit``: a warm ``la.jit(lambda a, b: a + b)(A, B)``;
- ``w8_eager``, ``w8_jit``: the last two each followed by ``queue.finish()``
  (W8 as the suite times it).

``--host-only`` replaces ``pyopencl.enqueue_nd_range_kernel`` by a function
that does nothing once every kernel ran: the Python side alone (on PoCL the
device shares the host's cores; the ``w8_*`` rows are then left out).

``--ab BEFORE AFTER`` runs this script ``--rounds`` times in each of two
source trees (``PYTHONPATH``), alternating, and prints per row the median
of the per-process medians and the smallest minimum::

    python benchmarks/overhead.py --ab /tmp/before /tmp/after --rounds 8 --host-only
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

N = 1000


def measure(host_only: bool, samples: int, calls: int) -> dict[str, tuple[float, float]]:
    """Per row: (median, minimum) microseconds per call."""
    import numpy as np
    import pyopencl as cl
    import pyopencl.array as cla

    import lazyarray as la
    from lazyarray.run import default_queue

    queue = default_queue()
    rng = np.random.default_rng(0)
    da, db = (cla.to_device(queue, rng.random(N, dtype=np.float32)) for _ in range(2))
    A, B = la.asarray(da.get()), la.asarray(db.get())
    C, D, E = (la.asarray(rng.random(N, dtype=np.float32)) for _ in range(3))
    f = la.jit(lambda a, b: a + b)
    rows = {
        "build": lambda: A + B,
        "eager": lambda: (A + B).compute(),
        "eager_cl": lambda: (la.asarray(da) + la.asarray(db)).compute(),
        "eager_w1": lambda: (A * B + C * D - np.sin(E)).compute(),
        "jit": lambda: f(A, B),
        "w8_eager": lambda: ((la.asarray(da) + la.asarray(db)).compute(), queue.finish()),
        "w8_jit": lambda: (f(A, B).compute(), queue.finish()),
    }
    for fn in rows.values():
        fn()
    queue.finish()
    if host_only:
        cl.enqueue_nd_range_kernel = lambda *args, **kwargs: None
        del rows["w8_eager"], rows["w8_jit"]
    result = {}
    for name, fn in rows.items():
        for _ in range(calls // 2):
            fn()
        times = []
        for _ in range(samples):
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            queue.finish()
            times.append((time.perf_counter() - start) / calls * 1e6)
        result[name] = (statistics.median(times), min(times))
    return result


def ab(trees: list[str], rounds: int, argv: list[str]) -> None:
    found: dict[str, dict[str, list[tuple[float, float]]]] = {t: {} for t in trees}
    for k in range(rounds):
        for tree in trees if k % 2 == 0 else trees[::-1]:
            env = dict(os.environ, PYTHONPATH=tree)
            done = subprocess.run([sys.executable, __file__, *argv], env=env, cwd=tree,
                                  capture_output=True, text=True, check=True)
            for name, value in json.loads(done.stdout.strip().splitlines()[-1]).items():
                found[tree].setdefault(name, []).append(tuple(value))
    print("us per call: median of process medians / smallest minimum")
    for name in found[trees[0]]:
        cells = []
        for tree in trees:
            values = found[tree][name]
            cells.append(f"{statistics.median(v[0] for v in values):7.1f} / "
                         f"{min(v[1] for v in values):6.1f}")
        print(f"{name:10s} " + "   ".join(cells))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host-only", action="store_true")
    p.add_argument("--samples", type=int, default=9)
    p.add_argument("--calls", type=int, default=500)
    p.add_argument("--ab", nargs=2, metavar=("BEFORE", "AFTER"))
    p.add_argument("--rounds", type=int, default=6)
    args = p.parse_args()
    if args.ab:
        argv = ["--samples", str(args.samples), "--calls", str(args.calls)]
        ab(args.ab, args.rounds, argv + (["--host-only"] if args.host_only else []))
    else:
        print(json.dumps(measure(args.host_only, args.samples, args.calls)))


if __name__ == "__main__":
    main()
