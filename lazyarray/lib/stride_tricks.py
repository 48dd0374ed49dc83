"""NumPy's ``numpy.lib.stride_tricks`` for lazy arrays.

A lazy array has no strides of its own (it is computed into a buffer of its
own shape), so both functions return lazy re-indexings of their argument:
no copy until used, fused into the kernel that reads them.
``sliding_window_view``'s result is read-only, as NumPy's (and refuses
``writeable=True``: writes to windows cannot reach the argument);
``as_strided``'s result is a new array.

Public names: sliding_window_view, as_strided.
"""

from __future__ import annotations

import math as _math
import operator as _operator
from typing import Any as _Any

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple as _normalize_axis_tuple

from lazyarray.api._device import gather as _gather
from lazyarray.api._device import iota as _iota
from lazyarray.api.creation import zeros as _zeros
from lazyarray.api.manipulation import moveaxis as _moveaxis
from lazyarray.api.manipulation import stack as _stack
from lazyarray.errors import IndexingError as _IndexingError
from lazyarray.errors import ViewWriteError as _ViewWriteError
from lazyarray.handle import LazyArray
from lazyarray.handle import asarray as _asarray
from lazyarray.host.namespace import install as _install_host_tier

#: windows of at most this many elements are joined slices; longer ones gather
_MOST_SLICES = 8


def _windows(x: LazyArray, axis: int, width: int) -> LazyArray:
    """*x* with *axis* cut to its ``n - width + 1`` window starts and a last
    axis of the *width* elements of each window."""
    starts = x.shape[axis] - width + 1
    if width == 0:
        return _zeros(x.shape[:axis] + (starts,) + x.shape[axis + 1:] + (0,), x.dtype)
    if width <= _MOST_SLICES:
        head = (slice(None),) * axis
        return _stack([x[head + (slice(k, k + starts),)] for k in range(width)], axis=-1)
    index = _iota((starts, width), 0) + _iota((starts, width), 1)
    return _moveaxis(_gather(x, index, axis), axis + 1, -1)


def sliding_window_view(x: _Any, window_shape: _Any, axis: _Any = None, *,
                        subok: bool = False, writeable: bool = False) -> LazyArray:
    """NumPy's sliding_window_view: every window of *window_shape* over the
    axes *axis* (all axes by default), the window's axes last."""
    x = _asarray(x)
    if writeable:
        raise _ViewWriteError("sliding_window_view(writeable=True): lazyarray's windows are "
                              "a re-indexing of the array, and writes to them cannot reach it; "
                              "write to the array itself (x[...] = ...)")
    shape = tuple(_operator.index(w) for w in _np.atleast_1d(window_shape).tolist()) \
        if _np.ndim(window_shape) else (_operator.index(window_shape),)
    if any(w < 0 for w in shape):
        raise ValueError("`window_shape` cannot contain negative values")
    if axis is None:
        if len(shape) != x.ndim:
            raise ValueError(f"Since axis is `None`, must provide window_shape for all "
                             f"dimensions of `x`; got {len(shape)} window_shape elements "
                             f"and `x.ndim` is {x.ndim}.")
        axes: tuple[int, ...] = tuple(range(x.ndim))
    else:
        axes = _normalize_axis_tuple(axis, x.ndim, allow_duplicate=True)
        if len(shape) != len(axes):
            raise ValueError(f"Must provide matching length window_shape and axis; got "
                             f"{len(shape)} window_shape elements and {len(axes)} axes "
                             "elements.")
    for ax, width in zip(axes, shape):
        if width > x.shape[ax]:
            raise ValueError("window shape cannot be larger than input array shape")
        x = _windows(x, ax, width)
    return x._read_only()


def as_strided(x: _Any, shape: _Any = None, strides: _Any = None, subok: bool = False,
               writeable: bool = True) -> LazyArray:
    """NumPy's as_strided over *x*'s C-ordered elements (``x.strides``):
    the elements that NumPy's view of that buffer would show, as a new lazy
    array (a gather; writes to it do not reach *x*). Strides must be
    multiples of the item size, and every element shown must lie inside *x*
    (NumPy would read past the buffer; lazyarray refuses)."""
    x = _asarray(x)
    shape = tuple(x.shape if shape is None else (_np.atleast_1d(shape).tolist()
                                                 if _np.ndim(shape) else [shape]))
    strides = tuple(x.strides if strides is None else _np.atleast_1d(strides).tolist())
    if len(shape) != len(strides):
        raise ValueError("mismatch in length of strides and shape")
    itemsize = x.dtype.itemsize
    if any(s % itemsize for s in strides):
        raise ValueError(f"as_strided: strides {strides} are not multiples of the item size "
                         f"{itemsize}, which lazyarray cannot show (it reads whole elements)")
    steps = [s // itemsize for s in strides]
    if not _math.prod(shape):
        return _zeros(shape, x.dtype)
    lowest = sum(st * (n - 1) for st, n in zip(steps, shape) if st < 0)
    highest = sum(st * (n - 1) for st, n in zip(steps, shape) if st > 0)
    if lowest < 0 or highest >= x.size:
        raise _IndexingError(f"as_strided: shape {shape} with strides {strides} reads "
                             f"elements {lowest}..{highest} of an array of {x.size}; "
                             "lazyarray shows only elements inside the array")
    index = _zeros(shape, _np.int64)
    for k, step in enumerate(steps):
        if step:
            index = index + _iota(shape, k) * step
    return _gather(x.reshape(-1), index, 0)


__all__ = ["sliding_window_view", "as_strided"]


# the host tier in front of the functions (NumPy's on host arrays)
_install_host_tier(globals(), _np.lib.stride_tricks, ["sliding_window_view"])


def __dir__() -> list[str]:
    """The namespace's API."""
    return sorted(__all__)
