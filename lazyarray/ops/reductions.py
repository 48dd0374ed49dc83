"""Reductions (sum, prod, max, min, any, all, mean, var, std, argmax, argmin,
count_nonzero) over axes.

Public names: reduce, normalize_axes, mean, var, argreduce, count_nonzero, scan.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from lazyarray.errors import AxisError, NoDeviceVersion, ShapeError
from lazyarray.graph import Const, Map, Node, Reduce, Scan
from lazyarray.ops.elementwise import cast, elementwise, imag_part, real_part
from lazyarray.ops.shape import reshape

_NUMPY: dict[str, Any] = {"sum": np.sum, "product": np.prod, "max": np.max, "min": np.min,
          "any": np.any, "all": np.all}


#: reductions of bools to bools, and the logical reduction each is
_BOOLEAN = {"max": "any", "sum": "any", "min": "all", "product": "all"}


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """*axis* (None, an int or a tuple) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    # (integers only, as NumPy: '1' and 1.0 are refused, not converted)
    axes = axis if isinstance(axis, (tuple, list)) else (operator.index(axis),)
    result = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise AxisError(f"axis {a} is out of bounds for an array of dimension {ndim}")
        result.append(a % ndim)
    if len(set(result)) != len(result):
        raise ShapeError(f"repeated axis in {axis}")
    return tuple(sorted(result))


#: float32 and complex64 sums over at least this many elements add in double
#: precision (then round): NumPy's pairwise sums are exact to a few ulps, a
#: device's lanes add long runs one after the other (a sum of 10^7 float32
#: 0.1s was 3.8e-4 off)
WIDE_SUM = 1 << 16
#: ... in this dtype
_WIDE = {np.dtype(np.float32): np.dtype(np.float64),
         np.dtype(np.complex64): np.dtype(np.complex128)}


def reduce(op: str, node: Node, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
           dtype: Any = None) -> Node:
    """The node of reduction *op* of *node* over *axis* (NumPy semantics;
    long single-precision sums added in double precision: see :data:`WIDE_SUM`)."""
    axes = normalize_axes(axis, node.ndim)
    keepdims = _flag(keepdims)
    size = int(np.prod([node.shape[a] for a in axes], dtype=np.int64))
    if op in ("max", "min") and node.dtype.kind == "c":
        raise NoDeviceVersion(f"{op} of complex values (NumPy orders them by real, then "
                              f"imaginary part) is not computed on the device; np.{op}(x) "
                              "computes it with NumPy on the host")
    if op in ("max", "min") and size == 0:
        raise ShapeError(f"zero-size array to reduction operation {op}imum which has no "
                         "identity")
    if dtype is None:
        dtype = _NUMPY[op](np.zeros(1, node.dtype)).dtype
    if np.dtype(dtype).kind == "b" and op in _BOOLEAN:
        op = _BOOLEAN[op]       # (the sum of bools as bool is an or: NumPy's add.reduce)
    if op in ("any", "all"):
        # the truth of a value is x != 0 (complex values are no conditions in
        # OpenCL, and layouts that store partial results convert them to bool
        # as C does: 0.5 would be false)
        arg = cast(node, np.bool_)
    else:
        arg = node if np.dtype(dtype) == node.dtype else cast(node, dtype)
    wider = _WIDE.get(np.dtype(dtype)) if op == "sum" and size >= WIDE_SUM else None
    if wider is not None:
        return cast(Reduce(op, axes, cast(arg, wider), wider, keepdims), dtype)
    return Reduce(op, axes, arg, dtype, keepdims)


def mean(node: Node, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
         dtype: Any = None) -> Node:
    """Arithmetic mean over *axis* (NumPy's result dtype)."""
    axes = normalize_axes(axis, node.ndim)
    count = int(np.prod([node.shape[a] for a in axes], dtype=np.int64))
    result_dtype = np.dtype(dtype) if dtype is not None else \
        np.mean(np.zeros(1, node.dtype)).dtype
    total = reduce("sum", node, axes, keepdims, dtype=result_dtype)
    if result_dtype.kind == "c":
        return _complex_mean(total, count)
    return Map("true_divide", (total, _divisor(count, result_dtype)), total.shape, result_dtype)


def _complex_mean(total: Node, count: int) -> Node:
    """*total* (a complex sum) over *count* as NumPy's mean divides it: by
    an ``intp``, so in double precision (then rounded to the sum's dtype),
    and its complex division by a real multiplies by the reciprocal."""
    with np.errstate(divide="ignore"):
        scale = np.float64(1) / np.float64(count)
    wide = cast(total, np.complex128)
    scaled = Map("multiply", (wide, Const(scale, np.float64, False)), wide.shape, wide.dtype)
    return cast(scaled, total.dtype)


def _divisor(count: float, dtype: np.dtype) -> Const:
    """The element count a mean of *dtype* divides by: for float32 and
    float64, a constant of that dtype (a scalar argument: a new count reuses
    the kernel; the division rounds as by the integer written in the code),
    else a Python integer as written."""
    if dtype in (np.float32, np.float64):
        return Const(float(count), dtype, False)
    return Const(count, np.int64, True)


def var(node: Node, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
        dtype: Any = None, ddof: float = 0) -> Node:
    """Variance over *axis* with *ddof* delta degrees of freedom (NumPy's var)."""
    axes = normalize_axes(axis, node.ndim)
    count = int(np.prod([node.shape[a] for a in axes], dtype=np.int64))
    # (over every axis, a 0-d mean: a scalar operand of a flat kernel, whose
    # windows at new offsets and lengths reuse it)
    centered = elementwise("subtract", node,
                           mean(node, axes, len(axes) < node.ndim, dtype))
    if centered.dtype.kind == "c":      # |d|^2, a real value
        re, im = real_part(centered), imag_part(centered)
        squares = elementwise("add", elementwise("multiply", re, re),
                              elementwise("multiply", im, im))
    else:
        squares = elementwise("multiply", centered, centered)
    # (summed in *dtype* as NumPy does, where it is a real one)
    real_dtype = dtype if dtype is not None and np.dtype(dtype).kind != "c" else None
    total = reduce("sum", squares, axes, keepdims, real_dtype)
    return Map("true_divide", (total, _divisor(max(count - ddof, 0), total.dtype)),
               total.shape, total.dtype)


def _flag(value: Any) -> bool:
    """*value* of a flag such as ``keepdims`` (a bool or an integer; NumPy's
    TypeError for anything else, which it does not take as true)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    return bool(operator.index(value))


def argreduce(op: str, node: Node, axis: int | None = None, keepdims: bool = False) -> Node:
    """Index of the largest (``argmax``) or smallest (``argmin``) element along
    *axis* (of the flattened array if None), first one on ties, NaN wins."""
    if node.dtype.kind == "c":
        raise NoDeviceVersion(f"{op} of complex values (NumPy orders them by real, then "
                              f"imaginary part) is not computed on the device; np.{op}(x) "
                              "computes it with NumPy on the host")
    axis = None if axis is None else operator.index(axis)
    extent = math.prod(node.shape) if axis is None \
        else node.shape[normalize_axes(axis, node.ndim)[0]]
    if extent == 0:
        raise ShapeError(f"attempt to get {op} of an empty sequence")
    if axis is None:
        flat = Reduce(op, (0,), reshape(node, -1), np.dtype(np.int64), False)
        return reshape(flat, (1,) * node.ndim) if keepdims else flat
    (axis,) = normalize_axes(axis, node.ndim)
    return Reduce(op, (axis,), node, np.dtype(np.int64), keepdims)


def count_nonzero(node: Node, axis: int | tuple[int, ...] | None = None, keepdims: bool = False
                  ) -> Node:
    """The number of non-zero elements over *axis*."""
    nonzero = elementwise("not_equal", node, Const(0, node.dtype, True))
    return reduce("sum", nonzero, axis, keepdims, dtype=np.int64)


def scan(op: str, node: Node, axis: int | None = None, dtype: Any = None) -> Node:
    """Running ``sum`` (cumsum) or ``product`` (cumprod) along *axis* (of the
    flattened array if None), with NumPy's result dtype."""
    if axis is None:
        node, axis = reshape(node, -1), 0
    axis = operator.index(axis)
    if node.ndim == 0:
        raise AxisError(f"axis {axis} is out of bounds for an array of dimension 0")
    (axis,) = normalize_axes(axis, node.ndim)
    if dtype is None:
        dtype = _NUMPY[op](np.zeros(1, node.dtype)).dtype
    arg = cast(node, dtype)
    if node.shape[axis] == 1:
        # (NumPy's running values start from the first element itself: a
        # kernel's one-term reduction would combine it with the identity)
        return arg
    return Scan(op, axis, arg, dtype)
