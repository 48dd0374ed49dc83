"""Kernel helpers at loopy's module path (``loopy.kernel.tools``), defined in
:mod:`kernelcore.transform.instruction` and :mod:`kernelcore.creation`.

Public names: get_global_barrier_order, find_most_recent_global_barrier,
make_copy_kernel.
"""

from kernelcore.creation import make_copy_kernel
from kernelcore.transform.instruction import (
    find_most_recent_global_barrier,
    get_global_barrier_order,
)

__all__ = ["get_global_barrier_order", "find_most_recent_global_barrier",
           "make_copy_kernel"]
