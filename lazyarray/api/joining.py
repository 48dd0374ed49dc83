"""NumPy's functions that add, remove, split and rotate parts of arrays:
append, insert, delete, column_stack, dstack, array_split, atleast_1d/2d/3d,
rot90. Results are views or gathers on the device; the positions of
``insert``/``delete`` come from their (host) index arguments.
"""

from __future__ import annotations

import operator as _operator
from typing import Any

import numpy as _np

from lazyarray.api._device import gather
from lazyarray.api.manipulation import broadcast_to, concatenate, flip, moveaxis
from lazyarray.errors import IndexingError, ShapeError
from lazyarray.handle import LazyArray, asarray
from lazyarray.ops.reductions import normalize_axes as _normalize_axes


def _axis(axis, ndim: int) -> int:
    (axis,) = _normalize_axes(axis, ndim)
    return axis


def _host_index(obj):
    """*obj* (an index, a sequence of them, a mask) on the host: a lazy
    array is computed (positions decide the result's layout)."""
    return obj.get() if isinstance(obj, LazyArray) else obj


# {{{ at least n dimensions

def _at_least(arrays: tuple, shape_of):
    results = []
    for a in arrays:
        a = asarray(a)
        shape = shape_of(a.shape)
        results.append(a.reshape(shape) if shape != a.shape else a)
    return results[0] if len(results) == 1 else tuple(results)


def atleast_1d(*arys: Any) -> LazyArray | tuple[LazyArray, ...]:
    """Each array with at least one axis (NumPy's atleast_1d; views)."""
    return _at_least(arys, lambda s: s if len(s) >= 1 else (1,))


def atleast_2d(*arys: Any) -> LazyArray | tuple[LazyArray, ...]:
    """Each array with at least two axes, new ones first (NumPy's atleast_2d)."""
    return _at_least(arys, lambda s: s if len(s) >= 2 else (1,) * (2 - len(s)) + s)


def atleast_3d(*arys: Any) -> LazyArray | tuple[LazyArray, ...]:
    """Each array with at least three axes (NumPy's atleast_3d: a 1-D array
    of n becomes 1 x n x 1, a 2-D one m x n x 1)."""
    def shape_of(s: tuple) -> tuple:
        return {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(len(s), s)
    return _at_least(arys, shape_of)

# }}}


# {{{ joining and splitting

def append(arr: Any, values: Any, axis: int | None = None) -> LazyArray:
    """*values* appended to *arr* (flattened both without *axis*), as
    NumPy's append."""
    arr, values = asarray(arr), asarray(values)
    if axis is None:
        return concatenate([arr.reshape(-1), values.reshape(-1)])
    return concatenate([arr, values], axis=axis)


def column_stack(tup: Any) -> LazyArray:
    """1-D arrays as columns (and 2-D arrays as they are) joined side by side."""
    arrays = []
    for a in tup:
        a = asarray(a)
        arrays.append(a.reshape(1, -1).T if a.ndim == 1 else
                      a.reshape(1, 1) if a.ndim == 0 else a)
    return concatenate(arrays, axis=1)


def dstack(tup: Any) -> LazyArray:
    """Arrays joined along the third axis (after :func:`atleast_3d`)."""
    arrays = [atleast_3d(a) for a in tup]
    return concatenate(arrays, axis=2)


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[LazyArray]:
    """NumPy's split: views of consecutive parts along *axis* (a number of
    equal parts, or the split positions)."""
    try:
        sections = _operator.index(indices_or_sections)
    except TypeError:
        pass
    else:
        n = asarray(ary).shape[_axis(axis, asarray(ary).ndim)]
        if sections == 0:
            raise ZeroDivisionError("integer modulo by zero")
        if sections < 0 or n % sections:
            raise ShapeError("array split does not result in an equal division")
    return array_split(ary, indices_or_sections, axis)


def hsplit(ary: Any, indices_or_sections: Any) -> list[LazyArray]:
    """NumPy's hsplit: :func:`split` along the columns (the only axis of a vector)."""
    ary = asarray(ary)
    if ary.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list[LazyArray]:
    """NumPy's vsplit: :func:`split` along the rows."""
    ary = asarray(ary)
    if ary.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def dsplit(ary: Any, indices_or_sections: Any) -> list[LazyArray]:
    """NumPy's dsplit: :func:`split` along the third axis."""
    ary = asarray(ary)
    if ary.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[LazyArray]:
    """Views of consecutive parts of *ary* along *axis*: a number of parts
    (the first ones one longer when they cannot all be equal) or the split
    positions (NumPy's array_split)."""
    ary = asarray(ary)
    axis = _axis(axis, ary.ndim)
    n = ary.shape[axis]
    try:
        sections = _operator.index(indices_or_sections)
    except TypeError:
        positions = [int(p) for p in _host_index(indices_or_sections)]
        bounds = [0, *positions, n]
    else:
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = [0]
        for size in sizes:
            bounds.append(bounds[-1] + size)
    head = (slice(None),) * axis
    return [ary[head + (slice(lo, hi),)] for lo, hi in zip(bounds, bounds[1:])]

# }}}


# {{{ insert and delete

def _index_list(obj, n: int, what: str) -> _np.ndarray:
    """*obj* (an integer, slice, sequence or boolean mask) as int64 positions."""
    if isinstance(obj, slice):
        return _np.arange(*obj.indices(n), dtype=_np.int64)
    positions = _np.asarray(_host_index(obj))
    if positions.dtype == _np.bool_:
        if positions.ndim != 1:
            raise ShapeError(f"boolean array argument obj to {what} must be one dimensional")
        return _np.flatnonzero(positions)
    if positions.size == 0:
        return positions.astype(_np.int64).reshape(-1)
    if positions.dtype.kind not in "iu":
        raise IndexingError("arrays used as indices must be of integer (or boolean) type")
    if positions.ndim > 1:
        raise ShapeError(f"index array argument obj to {what} must be one dimensional "
                         "or scalar")
    return positions.astype(_np.int64).reshape(-1)


def _values_for(values, dtype, ndim: int) -> LazyArray:
    """*values* converted to *dtype* with at least *ndim* axes (new ones first)."""
    if isinstance(values, LazyArray):
        values = values.astype(dtype, copy=False)
    else:
        values = asarray(_np.array(values, dtype=dtype))
    return values.reshape((1,) * (ndim - values.ndim) + values.shape)


def _along(arr, axis: int | None) -> tuple[LazyArray, int, int]:
    """*arr* as a lazy array (flattened when *axis* is None), the axis and its length."""
    arr = asarray(arr)
    if axis is None:
        arr, axis = arr.reshape(-1), 0
    axis = _axis(axis, arr.ndim)
    return arr, axis, arr.shape[axis]


def _in_bounds(positions: _np.ndarray, high: int, axis: int, n: int) -> _np.ndarray:
    """*positions* made nonnegative, after checking ``-n <= p < high``."""
    bad = positions[(positions < -n) | (positions >= high)]
    if bad.size:
        raise IndexingError(f"index {bad[0]} is out of bounds for axis {axis} with size {n}")
    return _np.where(positions < 0, positions + n, positions)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> LazyArray:
    """*arr* with *values* inserted before the positions *obj* along *axis*
    (flattened without it), as NumPy's insert. A lazy *obj* is computed."""
    arr, axis, n = _along(arr, axis)
    positions = _index_list(obj, n, "insert")
    scalar = not isinstance(obj, slice) and _np.ndim(_host_index(obj)) == 0
    head = (slice(None),) * axis
    if positions.size == 1:
        index = int(_in_bounds(positions, n + 1, axis, n)[0])
        values = _values_for(values, arr.dtype, arr.ndim)
        if scalar:
            values = moveaxis(values, 0, axis)
        shape = arr.shape[:axis] + (values.shape[axis],) + arr.shape[axis + 1:]
        values = broadcast_to(values, shape)
        return concatenate([arr[head + (slice(None, index),)], values,
                            arr[head + (slice(index, None),)]], axis=axis)
    positions = _in_bounds(positions, n + 1, axis, n)
    count = positions.size
    order = _np.argsort(positions, kind="stable")
    placed = positions.copy()
    placed[order] += _np.arange(count)
    source = _np.empty(n + count, _np.int64)
    is_old = _np.ones(n + count, bool)
    is_old[placed] = False
    source[is_old] = _np.arange(n)
    source[placed] = n + _np.arange(count)
    values = _values_for(values, arr.dtype, arr.ndim)
    shape = arr.shape[:axis] + (count,) + arr.shape[axis + 1:]
    values = broadcast_to(values, shape)
    both = concatenate([arr, values], axis=axis)
    return gather(both, asarray(source), axis)


def delete(arr: Any, obj: Any, axis: int | None = None) -> LazyArray:
    """*arr* without the parts at the positions *obj* along *axis*
    (flattened without it), as NumPy's delete. A lazy *obj* is computed."""
    arr, axis, n = _along(arr, axis)
    host = None if isinstance(obj, slice) else _np.asarray(_host_index(obj))
    if host is not None and host.dtype == _np.bool_:
        if host.shape != (n,):
            raise ShapeError(f"boolean array argument obj to delete must be one "
                             f"dimensional and match the axis length of {n}")
        keep = ~host
    else:
        positions = _in_bounds(_index_list(obj, n, "delete"), n, axis, n)
        keep = _np.ones(n, bool)
        keep[positions] = False
    kept = _np.flatnonzero(keep)
    if kept.size == n:
        return arr.copy()
    return gather(arr, asarray(kept.astype(_np.int64)), axis)

# }}}


def rot90(m: Any, k: int = 1, axes: Any = (0, 1)) -> LazyArray:
    """*m* rotated by 90 degrees *k* times in the plane of *axes*, from the
    first axis towards the second (NumPy's rot90; a view)."""
    m = asarray(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if m.ndim < 2:
        raise ShapeError("Axes must be different.")
    first, second = (_axis(a, m.ndim) for a in axes)
    if first == second:
        raise ShapeError("Axes must be different.")
    k = _operator.index(k) % 4
    if k == 0:
        return m[...]
    if k == 2:
        return flip(flip(m, first), second)
    order = list(range(m.ndim))
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return flip(m, second).transpose(order)
    return flip(m.transpose(order), second)


__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "append", "column_stack", "dstack",
           "split", "array_split", "hsplit", "vsplit", "dsplit", "insert", "delete", "rot90"]
