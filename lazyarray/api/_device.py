"""Device building blocks shared by lazyarray's NumPy-named functions
(:mod:`lazyarray.api.numeric`, :mod:`lazyarray.api.statistics`,
:mod:`lazyarray.api.histograms`): searching sorted values, gathering along
an axis, checking indices, laying out reductions.

Public names: COMPARE_LIMIT, tracing, iota, gather, searchsorted_device,
check_indices, gather_along, reduction_layout, shape_of, ndim_of, dtype_probe.
"""

from __future__ import annotations

import builtins as _builtins
import math as _math
from typing import Any

import numpy as _np

from lazyarray.api.creation import full, zeros
from lazyarray.api.manipulation import broadcast_to, stack
from lazyarray.api.ufuncs import isnan, where
from lazyarray.errors import IndexingError
from lazyarray.graph import Gather
from lazyarray.handle import LazyArray, asarray
from lazyarray.ops import construct as _construct
from lazyarray.ops.elementwise import typing_probe
from lazyarray.ops.reductions import normalize_axes as _normalize_axes
from lazyarray.ops.shape import check_host_indices
from lazyarray.tracing import TRACING, traced_argument_data

_INT64 = _np.dtype(_np.int64)

#: at most this many sorted values are searched by comparing with each of
#: them (one fused reduction); more by a bisection of gathers
COMPARE_LIMIT = 32

def tracing() -> bool:
    """Whether ``la.jit`` is tracing (checks that need values are skipped)."""
    return _builtins.bool(TRACING.names)


def iota(shape: Any, axis: int) -> LazyArray:
    """int64 indices along *axis* of an array of *shape*."""
    return LazyArray(_construct.iota(tuple(shape), axis))


def gather(x: LazyArray, index: LazyArray, axis: int = 0) -> LazyArray:
    """*x* read at the integer positions *index* along *axis* (the axis is
    replaced by *index*'s axes); positions are taken modulo the extent, so
    negative ones count from the end."""
    return LazyArray(Gather(x.node, asarray(index).node, axis))


def _precedes(a, b, strict: bool) -> LazyArray:
    """``a < b`` (*strict*) or ``a <= b`` in the order of a sort: NaN after
    every number."""
    a, b = asarray(a), asarray(b)
    if strict:
        result = a < b
        if b.dtype.kind in "fc":
            result = result | (isnan(b) & ~isnan(a)) if a.dtype.kind in "fc" else \
                result | isnan(b)
        return result
    result = a <= b
    return result | isnan(b) if b.dtype.kind in "fc" else result


def searchsorted_device(sorted_values: Any, values: Any, side: str = "left") -> LazyArray:
    """NumPy's searchsorted of *values* in the sorted 1-D *sorted_values*
    (int64 positions; NaN sorts last), on the device: by comparisons with
    every element for up to :data:`COMPARE_LIMIT` of them, else by a
    bisection of ``log2(n)`` steps."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    sorted_values, values = asarray(sorted_values), asarray(values)
    n = sorted_values.shape[0]
    strict = side == "left"
    if n <= COMPARE_LIMIT:
        if n == 0:
            return zeros(values.shape, _INT64)
        return _precedes(sorted_values, values[..., None], strict).sum(-1, dtype=_INT64)
    lo, hi = zeros(values.shape, _INT64), full(values.shape, n, _INT64)
    for _ in range(n.bit_length()):
        mid = (lo + hi) // 2
        open_ = lo < hi
        after = _precedes(gather(sorted_values, mid), values, strict)
        lo = where(open_ & after, mid + 1, lo)
        hi = where(open_ & ~after, mid, hi)
    return lo


def check_indices(index: LazyArray, extent: int, axis: int) -> None:
    """IndexError if an element of *index* lies outside ``[-extent, extent)``
    (computes the smallest and largest index; skipped while ``la.jit`` traces)."""
    if index.size == 0:
        return
    if tracing():
        # (an index argument is checked in the call that traces, with its values)
        data = traced_argument_data(index.node)
        if data is not None:
            check_host_indices(data.get(), extent, axis)
        return
    low, high = (int(v) for v in stack([index.min(), index.max()]).astype(_INT64).get())
    for bad in (low, high):
        if not -extent <= bad < extent:
            raise IndexingError(f"index {bad} is out of bounds for axis {axis} with size "
                                f"{extent}")


def gather_along(arr: LazyArray, index: LazyArray, axis: int) -> LazyArray:
    """``arr`` read at *index* along *axis*, the other axes matched
    elementwise (broadcast); *index* has as many axes as *arr* and is not
    checked (positions modulo the extent)."""
    shape = list(_np.broadcast_shapes(arr.shape[:axis] + (1,) + arr.shape[axis + 1:],
                                      index.shape[:axis] + (1,) + index.shape[axis + 1:]))
    shape[axis] = index.shape[axis]
    shape = tuple(shape)  # type: ignore[assignment]
    n = arr.shape[axis]
    if 0 in shape:
        return zeros(shape, arr.dtype)
    if n == 0:
        raise IndexingError(f"cannot take from an empty axis {axis}")
    index = index.astype(_INT64, copy=False)
    index = broadcast_to(where(index < 0, index + n, index), shape)
    flat, stride = index * _math.prod(arr.shape[axis + 1:]), 1
    for d in reversed(range(arr.ndim)):
        if d != axis and arr.shape[d] != 1:
            flat = flat + iota(shape, d) * stride
        stride *= arr.shape[d]
    return gather(arr.reshape(-1), flat)


def reduction_layout(a: LazyArray, axis: Any) -> tuple[LazyArray, tuple, tuple]:
    """*a* with the axes *axis* (None: all) moved to the end and merged into
    one; the shape of the other axes, and the result shape with *keepdims*."""
    axes = _normalize_axes(axis, a.ndim)
    rest = [d for d in range(a.ndim) if d not in axes]
    moved = a.transpose(rest + list(axes)) if a.ndim else a
    rest_shape = tuple(a.shape[d] for d in rest)
    kept = tuple(1 if d in axes else a.shape[d] for d in range(a.ndim))
    count = _math.prod(a.shape[d] for d in axes)
    return moved.reshape(rest_shape + (count,)), rest_shape, kept


def shape_of(x: Any) -> tuple:
    """The shape of an array, lazy or not, or of a nested sequence or scalar
    (without NumPy's dispatch, which would compute a lazy array)."""
    return tuple(x.shape) if isinstance(x, LazyArray) else _np.shape(x)


def ndim_of(x: Any) -> int:
    """The number of axes of *x* (see :func:`shape_of`)."""
    return len(shape_of(x))


def dtype_probe(x: Any) -> _np.ndarray | _builtins.bool | int | float | complex:
    """What NumPy's typing functions take for *x*: Python scalars as they
    are (weak), arrays by their dtypes."""
    if isinstance(x, LazyArray):
        # (a traced Python number is weak, as the number itself)
        return typing_probe(x.node)
    if isinstance(x, (_builtins.bool, int, float, complex)):
        return x
    return _np.empty(0, _np.asarray(x).dtype)


__all__: list[str] = []
