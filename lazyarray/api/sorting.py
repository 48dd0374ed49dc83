"""Sorting on the device: a bitonic sorting network along one axis (the other
axes are sorted independently), built from lazyarray's elementwise operations
and gathers.

The network orders (position, value) pairs by value, then by original
position, so the order is stable; NaN sorts after every number (before
every number when descending), -0.0 and +0.0 are equal. Every stage of the
network is one elementwise kernel whose stage numbers are scalar arguments:
arrays of one shape and dtype share one compiled stage kernel.

Public names: device_sort, device_argsort.
"""

from __future__ import annotations

import numpy as np

from lazyarray.api.manipulation import moveaxis
from lazyarray.api.ufuncs import isnan, where
from lazyarray.graph import Gather
from lazyarray.handle import LazyArray, asarray
from lazyarray.ops import construct as _construct
from lazyarray.errors import LazyArrayError
from lazyarray.run import evaluate
from lazyarray.tracing import TRACING

__all__ = ["device_sort", "device_argsort"]


def _iota(shape: tuple, axis: int) -> LazyArray:
    """int64 positions along *axis* of an array of *shape*."""
    return LazyArray(_construct.iota(tuple(shape), axis))


def _gather(x: LazyArray, index: LazyArray, axis: int) -> LazyArray:
    """*x* read at the integer positions *index* along *axis* (the axis is
    replaced by *index*'s axes; positions are taken modulo the extent)."""
    return LazyArray(Gather(x.node, index.node, axis))


def _stored(x: LazyArray) -> LazyArray:
    """*x* computed now, so that later kernels read it as an input."""
    evaluate(x.node)
    return x


def _before(a: LazyArray, b: LazyArray) -> LazyArray:
    """Whether value *a* sorts strictly before *b* (NaN after every number)."""
    less = a < b
    if a.dtype.kind == "f":
        less = less | (isnan(b) & ~isnan(a))
    return less


def _first(key: LazyArray, pos: LazyArray, other_key: LazyArray, other_pos: LazyArray,
           n: int, descending: bool) -> LazyArray:
    """Whether the element (*key*, *pos*) comes before (*other_key*,
    *other_pos*): positions from *n* on (padding) come last, then keys are
    compared, then positions."""
    pad, other_pad = pos >= n, other_pos >= n
    if descending:
        lower, higher = _before(other_key, key), _before(key, other_key)
    else:
        lower, higher = _before(key, other_key), _before(other_key, key)
    by_key = lower | (~higher & (pos < other_pos))
    return (~pad & other_pad) | ((pad == other_pad) & by_key)


def _network(keys: LazyArray, rows: int, n: int, descending: bool) -> LazyArray:
    """The stable sorting permutation of each row of *keys* (flattened,
    *rows* rows of *n* values): int64 positions, shape ``(rows, n)``."""
    m = 1 << max(n - 1, 0).bit_length()
    i = _iota((m,), 0)
    pos = _stored(_iota((rows, m), 1) + 0)
    offset = _iota((rows, m), 0) * n
    k = 2
    while k <= m:
        j = k // 2
        while j >= 1:
            partner = i ^ j
            other_pos = _gather(pos, partner, 1)
            key = _gather(keys, offset + pos, 0)
            other_key = _gather(keys, offset + other_pos, 0)
            first = _first(key, pos, other_key, other_pos, n, descending)
            wants_first = ((i & j) == 0) == ((i & k) == 0)
            pos = _stored(where(first == wants_first, pos, other_pos))
            j //= 2
        k *= 2
    if m != n:
        pos = pos[:, :n]
    return pos


def _rows(x, axis: int | None) -> tuple[LazyArray, LazyArray, int, tuple]:
    """*x* with *axis* moved last and flattened to ``(rows * n,)`` (stored),
    the keys the network compares, the axis's length and the moved shape."""
    if TRACING.names:
        raise LazyArrayError("device sorting runs its network stage by stage, so it cannot be "
                             "used inside la.jit; call it outside the jitted function")
    x = asarray(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    if x.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    if not -x.ndim <= axis < x.ndim:
        raise np.exceptions.AxisError(axis, x.ndim)
    moved = moveaxis(x, axis, -1)
    flat = moved.reshape(-1)
    keys = flat.astype(np.uint8) if flat.dtype == np.bool_ else flat
    return flat, keys, moved.shape[-1], moved.shape


def _permutation(x, axis: int | None, descending: bool
                 ) -> tuple[LazyArray, LazyArray | None, tuple, int]:
    """The flattened moved *x*, the sorting positions (``None`` when there is
    nothing to sort), the moved shape and the axis's position."""
    flat, keys, n, shape = _rows(x, axis)
    where_axis = 0 if axis is None else axis % max(asarray(x).ndim, 1)
    if flat.size == 0 or n <= 1:
        return flat, None, shape, where_axis
    rows = flat.size // n
    keys = _stored(keys)
    return flat, _network(keys, rows, n, descending), shape, where_axis


def device_argsort(x, axis: int | None = -1, *, descending: bool = False,
                   stable: bool = True) -> LazyArray:
    """The int64 positions that sort *x* along *axis* (``None``: flattened),
    computed on the device. Always stable: equal values keep their order
    (also when *descending*, as the Array API specifies); NaN sorts last
    (first when *descending*)."""
    del stable                  # (the network is always stable)
    flat, pos, shape, axis = _permutation(x, axis, descending)
    if pos is None:
        positions = _iota(shape, len(shape) - 1) if shape else _iota((0,), 0)
        return moveaxis(positions + 0, -1, axis) if shape else positions
    return moveaxis(pos.reshape(shape), -1, axis)


def device_sort(x, axis: int | None = -1, *, descending: bool = False) -> LazyArray:
    """*x* sorted along *axis* (``None``: flattened), computed on the device;
    NaN sorts last (first when *descending*)."""
    flat, pos, shape, axis = _permutation(x, axis, descending)
    if pos is None:
        return moveaxis(flat.reshape(shape) + 0 if flat.dtype != np.bool_ else
                        flat.reshape(shape).astype(np.bool_), -1, axis)
    n = shape[-1]
    offset = _iota(pos.shape, 0) * n
    return moveaxis(_gather(flat, offset + pos, 0).reshape(shape), -1, axis)
