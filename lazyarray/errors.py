"""Exceptions of lazyarray (each also the built-in type a NumPy user expects).

Public names: LazyArrayError, ShapeError, AxisError, DTypeError, NoDeviceVersion, IndexingError,
ConcretizationError, NotTraceableWarning, ViewWriteError, DeviceMemoryError, MEMORY_STATUS,
device_memory_error, LONG_DOUBLES, long_double_error, unsupported_dtype_error, user_line,
user_place,
"""

from __future__ import annotations

import linecache
import os
import sys
from types import FrameType
from typing import TYPE_CHECKING

import numpy as np

from lazyarray.deferred import deferred

if TYPE_CHECKING:
    import pyopencl as cl
else:
    cl = deferred("pyopencl")       # (read only when an allocation failed)

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


class LazyArrayError(Exception):
    """Base class of lazyarray's errors."""


class ShapeError(LazyArrayError, ValueError):
    """Shapes that do not broadcast or do not fit an operation."""


class AxisError(ShapeError, np.exceptions.AxisError):
    """An axis outside an array's axes (NumPy's AxisError: also a ValueError
    and an IndexError)."""


class DTypeError(LazyArrayError, TypeError):
    """A dtype an operation does not support."""


class NoDeviceVersion(DTypeError):
    """An operation that NumPy defines but lazyarray's kernels do not
    compute for these dtypes yet (ufuncs run it on the host instead)."""


class IndexingError(LazyArrayError, IndexError):
    """An index outside an array, or more indices than axes."""


class ConcretizationError(LazyArrayError, TypeError):
    """A function that ``la.jit`` traces asked for the value of an array
    (``float(x)``, ``if x > 0:``, ``range(n)``, ``x.get()``, ``print(x)``...):
    while tracing, values are unknown, and one computed anyway would be
    frozen into every later call."""


class NotTraceableWarning(UserWarning):
    """A function under ``la.jit`` asked for values while traced; its calls
    on small host arrays, which ran it untraced until then, keep doing so."""


class ViewWriteError(LazyArrayError, ValueError):
    """A write through a view that cannot reach the array it views."""


class DeviceMemoryError(LazyArrayError, MemoryError):
    """An array the device has no room for (larger than its largest
    allocation, or than its free memory)."""


#: OpenCL's status names of a failed allocation
MEMORY_STATUS = ("INVALID_BUFFER_SIZE", "MEM_OBJECT_ALLOCATION_FAILURE", "OUT_OF_RESOURCES",
                 "OUT_OF_HOST_MEMORY")


def _size(nbytes: int) -> str:
    """*nbytes* in bytes and in the largest binary unit below it."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes} bytes ({nbytes / scale:.1f} {unit})"
    return f"{nbytes} bytes"


def device_memory_error(error: Exception, nbytes: int | None, device: cl.Device) -> Exception:
    """The error to raise for pyopencl's *error* on allocating *nbytes*
    (None: a size not known here) on *device*: a DeviceMemoryError naming
    the sizes where the allocation failed for want of memory, else *error*
    itself."""
    if getattr(error, "code", None) not in {getattr(cl.status_code, s) for s in MEMORY_STATUS}:
        return error
    asked = "an array" if nbytes is None else f"an array of {_size(nbytes)}"
    return DeviceMemoryError(
        f"the device has no room for {asked} ({error}): "
        f"{device.name.strip()} has {_size(device.global_mem_size)} of memory "
        f"(global_mem_size), and one array may take at most "
        f"{_size(device.max_mem_alloc_size)} (max_mem_alloc_size).\n  at {user_line()}\n"
        "Compute smaller pieces (slices of the arrays, a loop over blocks), use a smaller "
        "dtype, or reduce before storing (x.sum() of an expression stores no full-size "
        "array).")


#: NumPy's long doubles: lazyarray holds their arrays, NumPy computes with them
LONG_DOUBLES = frozenset(np.dtype(t) for t in (np.longdouble, np.clongdouble)
                         if np.dtype(t).itemsize > (8 if np.dtype(t).kind == "f" else 16))


def long_double_error(dtype: np.dtype) -> NoDeviceVersion:
    """The error of a device operation on long doubles (*dtype*)."""
    return NoDeviceVersion(
        f"lazyarray does not compute {dtype} (long double) on the device: OpenCL computes at "
        f"most float64 and complex128.\n  at {user_line()}\nOperators and NumPy's functions "
        "(np.sum(x), np.sin(x), ...) on it run on the host with NumPy; lazyarray's functions "
        "and methods do not: use NumPy's, compute on its value (x.get()), or convert it "
        "(x.astype(np.float64)), losing the extra precision.")


def unsupported_dtype_error(dtype: np.dtype) -> DTypeError:
    """The error of an array of *dtype*, which lazyarray does not hold."""
    if dtype == np.float16:
        fix = "convert it to float32 (a.astype(np.float32)): float16 is not supported"
    elif dtype.kind in "mM":
        fix = "convert it to integers (a.astype(np.int64)) or keep it in NumPy"
    else:
        fix = "keep it in NumPy (lazyarray computes numbers only)"
    return DTypeError(
        f"lazyarray does not support dtype {dtype}: it holds bool, integer, floating "
        f"(float32, float64) and complex arrays; {fix}.\n  at {user_line()}")


def inside_lazyarray(frame: FrameType) -> bool:
    """Whether *frame* runs lazyarray's own code."""
    return os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE)


def _user_frame():
    """The innermost frame outside lazyarray (None if none)."""
    frame = sys._getframe(2)
    while frame is not None and inside_lazyarray(frame):
        frame = frame.f_back
    return frame


def user_line() -> str:
    """Where the innermost caller outside lazyarray is: ``file:line (in
    function): source line``."""
    frame = _user_frame()
    if frame is None:
        return "(no caller outside lazyarray)"
    code = frame.f_code
    source = linecache.getline(code.co_filename, frame.f_lineno).strip()
    return f"{code.co_filename}:{frame.f_lineno} (in {code.co_name}): {source}"


def user_place() -> str:
    """The innermost caller outside lazyarray, short: ``source line
    (file:line)`` (the file without its directory)."""
    frame = _user_frame()
    if frame is None:
        return "lazyarray"
    code = frame.f_code
    place = f"{os.path.basename(code.co_filename)}:{frame.f_lineno}"
    source = linecache.getline(code.co_filename, frame.f_lineno).strip()
    if len(source) > 60:
        source = source[:57] + "..."
    return f"{source} ({place})" if source else place


