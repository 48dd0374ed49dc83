"""GPU A/B of column reductions (issue 21, W3 columns): ``x.sum(axis=0)``
over ten shapes from 2 to 16777216 columns, kernel times from profiling
events (both kernels of a split layout), as % of a buffer copy of the input;
every result is checked against NumPy.

Run it in each source tree being compared (``PYTHONPATH``); *tag* labels
the lines; *groups* overrides ``GPU_COLUMN_GROUPS_PER_UNIT``::

    python benchmarks/ab_columns_gpu.py TAG [groups]
"""
import os
import sys

import numpy as np
import pyopencl.array as cla

os.environ["LAZYARRAY_DISK_CACHE"] = "0"
sys.path.insert(0, os.path.dirname(__file__))

from rows_gpu import copy_seconds

import lazyarray as la
from lazyarray.explain import kernel_profiles
from lazyarray.lower import reduction
from lazyarray.run import default_queue

SHAPES = ((16777216, 4), (33554432, 2), (16777216, 3), (8388608, 8), (2097152, 32),
          (1048576, 64), (262144, 256), (8192, 8192), (64, 1048576), (4, 16777216))


def main() -> None:
    tag = sys.argv[1]
    if len(sys.argv) > 2:
        reduction.GPU_COLUMN_GROUPS_PER_UNIT = int(sys.argv[2])
        tag += f"-g{sys.argv[2]}"
    queue = default_queue()
    for shape in SHAPES:
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        copy = 2 * x.nbytes / copy_seconds(queue.context, queue.device, x.nbytes, 10)
        d = la.asarray(cla.to_device(queue, x))
        ok = np.allclose(np.asarray(d.sum(axis=0)), x.sum(axis=0, dtype=np.float64),
                         rtol=1e-4, atol=1e-2)
        seconds = sum(p.seconds for p in kernel_profiles(d.sum(axis=0), repeat=15))
        print(f"{tag} cols {shape}: {seconds * 1e6:8.1f} us "
              f"{x.nbytes / seconds / copy * 100:5.1f}% of copy{'' if ok else ' WRONG'}",
              flush=True)


if __name__ == "__main__":
    main()
