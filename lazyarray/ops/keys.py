"""Indexing keys: NumPy's key forms read into one entry per axis, checked
(NumPy's errors), and basic keys (integers, slices, ``None``, ``...``)
planned into a view's axis map once per array shape.

Public names: expand, plan_key, basic_key, basic_plan, is_basic_key, is_element_key,
is_array, is_index_array, is_int, is_mask, scalar_bool, check_entry, as_array.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from lazyarray.errors import IndexingError
from lazyarray.ops.inputs import ArrayHandle


def is_index_array(k: Any) -> bool:
    return isinstance(k, (list, np.ndarray, ArrayHandle))


def is_array(k: Any) -> bool:
    """Whether an entry of an expanded key is an index array."""
    return isinstance(k, (np.ndarray, ArrayHandle))


def is_mask(k: Any) -> bool:
    return is_array(k) and k.dtype == np.bool_


def is_int(k: Any) -> bool:
    return isinstance(k, (numbers.Integral, np.integer)) and not isinstance(k, (bool, np.bool_))


def check_entry(k: Any) -> None:
    if isinstance(k, (bool, np.bool_)):
        raise IndexingError("boolean scalar indices are not supported (use a boolean "
                            "array)")
    if not (is_int(k) or isinstance(k, slice) or k is None or k is Ellipsis
            or is_index_array(k)):
        raise IndexingError(f"only integers, slices (`:`), ellipsis (`...`), None and "
                            f"integer or boolean arrays are valid indices, not "
                            f"{type(k).__name__}")


def as_array(k: Any) -> ArrayHandle | np.ndarray:
    """An index array as a LazyArray or a NumPy array (an empty list is an
    integer index, as in NumPy)."""
    if isinstance(k, ArrayHandle):
        return k
    host = np.asarray(k)
    if host.size == 0 and host.dtype == np.float64 and isinstance(k, list):
        host = host.astype(np.int64)
    return host


def expand(key: Any, ndim: int) -> list:
    """*key* as a list with one entry per axis of the array (``None`` entries
    aside; a boolean array stands for as many axes as it has): the ellipsis
    expanded, missing trailing slices added."""
    key = list(key) if isinstance(key, tuple) else [key]
    key = [np.arange(k.start, k.stop, k.step) if isinstance(k, range) else k for k in key]
    for k in key:
        check_entry(k)
    key = [as_array(k) if is_index_array(k) else k for k in key]
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexingError("an index can only have a single ellipsis ('...')")

    def width(k):
        if k is None or k is Ellipsis:
            return 0
        return k.ndim if is_mask(k) else 1

    used = sum(width(k) for k in key)
    if used > ndim:
        raise IndexingError(f"too many indices for array: array is {ndim}-dimensional, "
                            f"but {used} were indexed")
    fill = [slice(None)] * (ndim - used)
    if any(k is Ellipsis for k in key):
        at = next(j for j, k in enumerate(key) if k is Ellipsis)
        return key[:at] + fill + key[at + 1:]
    return key + fill


def plan_key(shape: tuple[int, ...], key: list) -> tuple[list[tuple], tuple[int, ...], list[tuple]]:
    """For a key of integers, slices and ``None`` (already expanded): the
    View's axis map, the result's shape, and per axis of the array its
    ``(start, step, length)`` (length ``None``: an integer index)."""
    axis_map: list[tuple]
    ranges: list[tuple]
    axis_map, out_shape, ranges = [], [], []
    axis = 0
    for k in key:
        if k is None:
            out_shape.append(1)
            continue
        extent = shape[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(extent)
            length = len(range(start, stop, step))
            axis_map.append(("axis", len(out_shape), start if length else 0, step))
            ranges.append((start if length else 0, step, length))
            out_shape.append(length)
        else:
            i = int(k)
            if not -extent <= i < extent:
                if not -(1 << 63) <= i < 1 << 63:
                    raise OverflowError("Python int too large to convert to C long")
                raise IndexingError(f"index {i} is out of bounds for axis {axis} with size "
                                    f"{extent}")
            axis_map.append(("const", i % extent))
            ranges.append((i % extent, 1, None))
        axis += 1
    return axis_map, tuple(out_shape), ranges


def scalar_bool(k: Any) -> bool:
    return isinstance(k, (bool, np.bool_)) or (
        getattr(k, "ndim", None) == 0 and getattr(k, "dtype", None) == np.bool_)


#: per array shape and hashable basic key (see :func:`basic_key`): the
#: View's axis map, the result's shape and the ranges of ``plan_key``
_BASIC_PLANS: dict[tuple, tuple] = {}


def basic_key(key: Any) -> tuple | None:
    """*key* as a hashable tuple when it is made of integers (Python's or
    NumPy's), slices of them, ``None`` and ``...`` only (the keys of loop
    bodies), else None (other keys take the general path)."""
    entries = key if type(key) is tuple else (key,)
    out: list = []
    for k in entries:
        kind = type(k)
        if kind is int or k is None or k is Ellipsis:
            out.append(k)
        elif kind is slice:
            bounds: tuple = (k.start, k.stop, k.step)
            start, stop, step = bounds
            if (start is None or type(start) is int) and (stop is None or type(stop) is int) \
                    and (step is None or type(step) is int):
                out.append(bounds)          # (the commonest: Python integers or none)
                continue
            if not all(b is None or type(b) is int or isinstance(b, np.integer)
                       for b in bounds):
                return None
            out.append(tuple(None if b is None else int(b) for b in bounds))
        elif isinstance(k, np.integer):
            out.append(int(k))              # (NumPy's integers, as positions from np.where)
        else:
            return None
    return tuple(out)


def basic_plan(shape: tuple, key: Any) -> tuple | None:
    """For a :func:`basic_key` *key* of an array of *shape*: its View's axis
    map, the result's shape, the per-axis ranges and whether it picks one
    element, remembered; None for other keys."""
    hashable = basic_key(key)
    if hashable is None:
        return None
    plan = _BASIC_PLANS.get((shape, hashable))
    if plan is None:
        axis_map, out_shape, ranges = plan_key(shape, expand(key, len(shape)))
        element = len(hashable) == len(shape) and all(type(k) is int for k in hashable)
        plan = (tuple(axis_map), out_shape, tuple(ranges), element)
        if len(_BASIC_PLANS) >= 4096:
            _BASIC_PLANS.clear()
        _BASIC_PLANS[(shape, hashable)] = plan
    return plan


def is_basic_key(key: Any) -> bool:
    """Whether *key* has only integers, slices, ``None`` and ``...`` (NumPy
    gives a view)."""
    entries = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, slice) or is_int(k)
               for k in entries)


def is_element_key(key: Any, ndim: int) -> bool:
    """Whether basic *key* picks one element by an integer per axis (NumPy
    gives a scalar, not a view)."""
    entries = key if isinstance(key, tuple) else (key,)
    return len(entries) == ndim and all(is_int(k) for k in entries)
