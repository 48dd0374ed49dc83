"""GPU A/B behind issue 21's elements per work-item (kernelcore's
``auto_parallelize``, GPU_ITEMS): lazyarray's kernels of W2, ``2*x``,
``a+b`` and W1 built with 1, 2, 4 and 8 elements per work-item; kernel
times from profiling events as % of a buffer copy's bandwidth.

    python benchmarks/ab_items_gpu.py
"""
import os
import sys

os.environ["LAZYARRAY_DISK_CACHE"] = "0"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from rows_gpu import copy_seconds

import lazyarray as la
from kernelcore.transform import parallel
from lazyarray.explain import kernel_profiles
from lazyarray.run import default_queue
from lazyarray.run import steps as runtime


def w2(x):
    for _ in range(8):
        x = x * 0.999 + 0.5 * la.sqrt(la.abs(x) + 1)
    return x


#: (name, log2 of the elements, inputs, function of the inputs)
CASES = [("W2 8 sqrt", 28, 1, lambda a: w2(a[0])), ("2*x", 28, 1, lambda a: 2 * a[0]),
         ("a+b", 27, 2, lambda a: a[0] + a[1]),
         ("W1 a*b+c*d-sin(e)", 26, 5, lambda a: a[0] * a[1] + a[2] * a[3] - la.sin(a[4]))]


def main() -> None:
    q = default_queue()
    dev = q.device
    print(dev.name, dev.driver_version)
    rng = np.random.default_rng(0)
    copy: dict[int, float] = {}
    for name, log2, nin, fn in CASES:
        n = 1 << log2
        args = [la.asarray(rng.random(n, dtype=np.float32) * 2 - 1) for _ in range(nin)]
        if log2 not in copy:
            copy[log2] = 2 * 4 * n / copy_seconds(q.context, dev, 4 * n, 10)
        row = []
        for items in (1, 2, 4, 8):
            parallel.GPU_ITEMS = items
            runtime._KERNELS.clear()
            runtime._PLANS.clear()
            t = sum(p.seconds for p in kernel_profiles(fn(args), repeat=10))
            row.append(f"items {items}: {t * 1e6:7.1f} us "
                       f"{4 * n * (nin + 1) / t / copy[log2] * 100:5.1f}%")
        print(f"{name} 2^{log2}: " + " | ".join(row), flush=True)


if __name__ == "__main__":
    main()
