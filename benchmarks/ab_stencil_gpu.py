"""GPU A/B behind issue 21's stencil layouts: lazyarray's kernels of W5 (ten
heat steps) over several shapes, with each work-item computing one element
(the layout before), or 2, 4 or 8 consecutive rows of a column
(``lazyarray.lower.stencil``), and with the steps fused in pairs or one per
kernel. Kernel times from profiling events, as % of a buffer copy's
bandwidth per step; every variant's result is compared with the first's.

    python benchmarks/ab_stencil_gpu.py [divisor of the longer axis, default 1]
"""
import functools
import os
import sys

os.environ["LAZYARRAY_DISK_CACHE"] = "0"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import pyopencl.array as cla
from rows_gpu import copy_seconds
from workloads import HEAT_STEPS, Ops, bind, w5

import lazyarray as la
import lazyarray.lower.kernel as lower_kernel
from lazyarray.explain import kernel_profiles
from lazyarray.plan import storage
from lazyarray.run import default_queue
from lazyarray.run import steps as runtime

SHAPES = [(16777216, 4), (8388608, 3), (8192, 8192), (1048576, 64), (64, 1048576),
          (4, 16777216), (16384, 16384)]
VARIANTS = ["library", "per element", "2 rows", "4 rows", "8 rows", "a step per kernel",
            "steps in pairs"]
_READS, _SCHEDULE = lower_kernel.reads_rows, lower_kernel.stencil_schedule
_LIMIT, _NARROW = storage.RECOMPUTE_LIMIT["gpu"], storage.NARROW_ROWS_LIMIT


def use(variant: str) -> None:
    """Patch lazyarray's choices for *variant* (all restored first)."""
    lower_kernel.reads_rows, lower_kernel.stencil_schedule = _READS, _SCHEDULE
    storage.RECOMPUTE_LIMIT["gpu"], storage.NARROW_ROWS_LIMIT = _LIMIT, _NARROW
    if variant == "per element":
        lower_kernel.reads_rows = lambda *args: False
    elif variant.endswith(" rows"):
        lower_kernel.stencil_schedule = functools.partial(_SCHEDULE, rows=int(variant[0]))
    elif variant == "a step per kernel":
        storage.RECOMPUTE_LIMIT["gpu"] = storage.NARROW_ROWS_LIMIT = 3
    elif variant == "steps in pairs":
        storage.NARROW_ROWS_LIMIT = 100
    runtime._KERNELS.clear()
    runtime._PLANS.clear()


def main() -> None:
    q = default_queue()
    print(q.device.name, q.device.driver_version)
    f = bind(w5, Ops(la))
    divisor = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    for rows, cols in SHAPES:
        shape = (rows // divisor, cols) if rows > cols else (rows, cols // divisor)
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        copy = 2 * x.nbytes / copy_seconds(q.context, q.device, x.nbytes, 10)
        row, first = [], None
        for variant in VARIANTS:
            use(variant)
            d = la.asarray(cla.to_device(q, x))
            got = np.asarray(f(d))
            first = got if first is None else first
            profiles = kernel_profiles(f(d), repeat=10)
            t = sum(p.seconds for p in profiles)
            same = "" if np.array_equal(got, first) else " DIFFERS"
            row.append(f"{variant}: {len(profiles)} kernels {t * 1e6:.0f} us "
                       f"{2 * HEAT_STEPS * x.nbytes / t / copy * 100:.0f}%{same}")
        print(f"W5 {shape[0]}x{shape[1]}: " + " | ".join(row), flush=True)


if __name__ == "__main__":
    main()
