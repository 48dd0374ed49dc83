"""Optional autotuning of work-group sizes (``LAZYARRAY_TUNE=1``; off by default).

On its first run, an elementwise kernel is built with each candidate
work-group size, each version is timed on the run's own arguments, and the
fastest is kept. Only elementwise kernels are tuned: every version computes
each element with the same operations, so tuning never changes a result
(reductions are not tuned: their layout decides the order of the additions).
The choice lives on in the kernel's disk recipe, so later processes reuse it
without timing again.

Public names: tuning_enabled, tune, CANDIDATES.
"""

from __future__ import annotations

import logging
import os
import time

import numpy as np

logger = logging.getLogger(__name__)

#: work-group sizes tried, per device kind
CANDIDATES = {"cpu": (32, 64, 128, 256), "gpu": (64, 128, 256, 512)}
#: timed runs per candidate (after one untimed run)
RUNS = 3


def _code(knl) -> str:
    import kernelcore as lp
    return lp.generate_code_v2(knl).device_code()


def tuning_enabled() -> bool:
    return os.environ.get("LAZYARRAY_TUNE", "").lower() in ("1", "true", "yes")


def tune(default, build, kind: str, run) -> tuple:
    """The fastest of the kernels ``build(group_size)`` for the candidate
    sizes of *kind* and *default* (the untuned kernel), timed by ``run(knl)``
    (which runs one kernel and waits for it); and the timings by size."""
    versions = {None: default}
    codes = {_code(default)}
    for size in CANDIDATES[kind]:
        knl = build(size)
        code = _code(knl)
        if code not in codes:       # schedules that take no group size build one kernel
            versions[size] = knl
            codes.add(code)
    if len(versions) == 1:
        return default, {}
    timings = {}
    for size, knl in versions.items():
        run(knl)
        samples = []
        for _ in range(RUNS):
            start = time.perf_counter()
            run(knl)
            samples.append(time.perf_counter() - start)
        timings[size] = float(np.median(samples))
    best = min(timings, key=timings.get)
    logger.info("tuned work-group size: %s (%s)", best or "default",
                ", ".join(f"{s or 'default'}: {1e3 * t:.3f} ms" for s, t in timings.items()))
    return versions[best], timings
