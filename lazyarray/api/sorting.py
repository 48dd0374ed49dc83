"""Sorting on the device (:mod:`lazyarray.ops.sort`): ``sort`` and
``argsort`` with NumPy's signatures and the Array API's *descending*, and
``partition``/``argpartition`` (a full sort satisfies their contract).

Every sort is stable: ties keep their original order, whatever *kind*
says, so ``argsort`` equals NumPy's ``argsort(kind="stable")``. NaNs sort
last (first with *descending*, which keeps ties in their original order as
the Array API asks).

Public names: sort, argsort, partition, argpartition.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

import lazyarray.ops as _ops
from lazyarray.api.creation import zeros
from lazyarray.handle import LazyArray, asarray

_INT64 = np.dtype(np.int64)


def _check(dtype: np.dtype, kind, order, stable) -> None:
    """NumPy's checks of *kind*, *order* and *stable* (on an empty array of
    *dtype*: the same errors NumPy raises)."""
    if kind is None and order is None and stable is None:
        return
    np.sort(np.empty(0, dtype), kind=kind, order=order, stable=stable)


def _layout(a, axis) -> tuple[LazyArray, int]:
    """*a* as a lazy array and the normalized *axis* (None: flattened, axis 0)."""
    x = asarray(a)
    if axis is None:
        return x.reshape(-1), 0
    return x, normalize_axis_index(operator.index(axis), x.ndim)


def _sorted(x: LazyArray, axis: int, descending: bool, output: str) -> LazyArray:
    """*x* sorted along *axis* (``values``) or the positions that sort it
    (``indices``)."""
    if x.size == 0 or x.shape[axis] == 1:
        return x.copy() if output == "values" else zeros(x.shape, _INT64)
    return LazyArray(_ops.sort.sort_nodes(x.node, axis, descending)[output])


def sort(a: Any, axis: int | None = -1, kind: str | None = None, order: str | None = None, *,
         stable: bool | None = None, descending: bool = False) -> LazyArray:
    """NumPy's sort along *axis* (None: the flattened array), on the device;
    *descending* (Array API) puts the largest first, ties in their original
    order."""
    x = asarray(a)
    _check(x.dtype, kind, order, stable)
    x, axis = _layout(x, axis)
    return _sorted(x, axis, bool(descending), "values")


def argsort(a: Any, axis: int | None = -1, kind: str | None = None, order: str | None = None, *,
            stable: bool | None = None, descending: bool = False) -> LazyArray:
    """NumPy's argsort along *axis* (None: the flattened array), on the
    device: int64 positions, ties in their original order (NumPy's
    ``kind="stable"``); *descending* as in :func:`sort`."""
    x = asarray(a)
    _check(x.dtype, kind, order, stable)
    if x.ndim == 0:
        return zeros((1,), _INT64)
    x, axis = _layout(x, axis)
    return _sorted(x, axis, bool(descending), "indices")


def _check_kth(kth, n: int) -> None:
    """NumPy's checks of partition's *kth* for an axis of length *n*."""
    k = np.asarray(kth)
    if k.dtype.kind == "b":
        raise ValueError("Booleans unacceptable as partition index")
    if k.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    if k.ndim > 1:
        raise ValueError("kth must be a scalar or a sequence of at most one dimension")
    for v in k.reshape(-1).tolist():
        if not -n <= v < n:
            raise ValueError(f"kth(={v}) out of bounds ({n})")


def _check_select(kind: str, order) -> None:
    """NumPy's checks of partition's *kind* and *order*."""
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {kind!r})")
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")


def partition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect",
              order: str | None = None) -> LazyArray:
    """NumPy's partition: here the whole axis sorted (which puts every
    *kth* element in its sorted place, smaller ones before, larger after)."""
    x = asarray(a)
    _check_select(kind, order)
    x, axis = _layout(x, axis)
    _check_kth(kth, x.shape[axis])
    return _sorted(x, axis, False, "values")


def argpartition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect",
                 order: str | None = None) -> LazyArray:
    """NumPy's argpartition: here the positions that sort the whole axis."""
    x = asarray(a)
    _check_select(kind, order)
    if x.ndim == 0:
        return zeros((1,), _INT64)
    x, axis = _layout(x, axis)
    _check_kth(kth, x.shape[axis])
    return _sorted(x, axis, False, "indices")


__all__ = ["sort", "argsort", "partition", "argpartition"]
