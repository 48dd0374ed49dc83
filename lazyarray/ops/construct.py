"""Arrays made from shapes and parts: filled arrays, ranges, the identity
matrix, concatenation and stacking.

Public names: full, iota, concatenate, stack.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any

import numpy as np

from lazyarray.errors import AxisError, ConcretizationError, ShapeError, unsupported_dtype_error
from lazyarray.graph import Concat, Iota, Map, Node, View
from lazyarray.ops.elementwise import constant
from lazyarray.ops.shape import getitem, reshape


class ShapeTypeError(ShapeError, TypeError):
    """A shape that is not made of integers (a TypeError, as in NumPy)."""


def normalize_shape(shape: Any) -> tuple[int, ...]:
    """*shape* (an integer or a sequence of them) as a tuple of ints."""
    if isinstance(shape, (numbers.Integral, np.integer)) or getattr(shape, "ndim", None) == 0:
        shape = (shape,)                # (a 0-d integer array too, as NumPy takes it)
    try:
        # (operator.index, as NumPy: a float such as 3.5 is refused, not truncated)
        shape = tuple(operator.index(s) for s in shape)
    except ConcretizationError:
        raise       # (a size computed inside la.jit: its own message says what to do)
    except TypeError:
        raise ShapeTypeError(f"a shape must be an integer or a sequence of integers, "
                             f"got {shape!r}") from None
    if any(s < 0 for s in shape):
        raise ShapeError(f"negative dimensions are not allowed: {shape}")
    return shape


def _check_dtype(dtype: np.dtype) -> np.dtype:
    if dtype.kind not in "biufc" or dtype == np.float16:
        raise unsupported_dtype_error(dtype)
    return dtype


def checked_size(shape: tuple[int, ...], dtype: np.dtype) -> tuple[int, ...]:
    """*shape*, for arrays of *dtype* that memory can address (NumPy's
    ValueError for larger ones)."""
    if math.prod(shape) * dtype.itemsize > _MAX_BYTES:
        raise ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than "
                         "the maximum possible size.")
    return shape


#: the most bytes an array may take (NumPy's: the largest intp)
_MAX_BYTES = np.iinfo(np.intp).max


def full(shape: Any, value: Any, dtype: Any = None) -> Node:
    """An array of *shape* with every element *value*."""
    shape = normalize_shape(shape)
    dtype = _check_dtype(np.dtype(dtype) if dtype is not None
                         else np.asarray(value).dtype)
    return View(constant(value, dtype), (), checked_size(shape, dtype))


def iota(shape: Any, axis: int) -> Node:
    """int64 indices along *axis* of an array of *shape*."""
    return Iota(checked_size(normalize_shape(shape), np.dtype(np.int64)), axis)


def _axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def concatenate(nodes: list[Node], axis: int | None = 0, dtype: Any = None) -> Node:
    """*nodes* joined along *axis* (``None``: flattened first)."""
    if not nodes:
        raise ShapeError("need at least one array to concatenate")
    if axis is None:
        nodes = [reshape(n, -1) for n in nodes]
        axis = 0
    axis = operator.index(axis)     # (NumPy's TypeError for anything but an integer)
    ndim = nodes[0].ndim
    if ndim == 0:
        raise ShapeError("zero-dimensional arrays cannot be concatenated")
    axis = _axis(axis, ndim)
    for k, n in enumerate(nodes):
        if n.ndim != ndim:
            raise ShapeError(
                f"all the input arrays must have the same number of dimensions, but "
                f"array 0 has {ndim} dimension(s) and array {k} has {n.ndim}")
        for ax in range(ndim):
            if ax != axis and n.shape[ax] != nodes[0].shape[ax]:
                raise ShapeError(
                    f"all the input array dimensions except for the concatenation axis "
                    f"must match exactly, but along dimension {ax}, array 0 has size "
                    f"{nodes[0].shape[ax]} and array {k} has size {n.shape[ax]}")
    result_dtype = np.dtype(dtype) if dtype is not None else np.result_type(
        *(n.dtype for n in nodes))
    if len(nodes) == 1:
        n = nodes[0]
        return n if n.dtype == result_dtype else Map("astype", (n,), n.shape, result_dtype)
    return Concat(nodes, axis, result_dtype)


def stack(nodes: list[Node], axis: int = 0) -> Node:
    """*nodes* (all of one shape) joined along a new *axis*."""
    if not nodes:
        raise ShapeError("need at least one array to stack")
    shape = nodes[0].shape
    if any(n.shape != shape for n in nodes):
        raise ShapeError("all input arrays must have the same shape, got "
                         + ", ".join(str(n.shape) for n in nodes))
    axis = _axis(axis, len(shape) + 1)
    key = (slice(None),) * axis + (None,)
    return concatenate([getitem(n, key) for n in nodes], axis)
