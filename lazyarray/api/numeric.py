"""Everyday NumPy functions on the device: diagonals and triangles, index
grids, spaced sequences, gathering, choosing, membership, convolution,
products of vectors and polynomials, comparisons of whole arrays.

Sorted-value searches and gathers (:mod:`lazyarray.api._device`) run on the
device; ``isin`` with many test elements sorts them (``la.sort``, on the device).
"""

from __future__ import annotations

import builtins as _builtins
import math as _math
import operator as _operator
import warnings as _warnings
from typing import Any

import numpy as _np

from lazyarray.api._device import (
    COMPARE_LIMIT,
    check_indices,
    dtype_probe,
    gather,
    gather_along,
    iota,
    ndim_of,
    searchsorted_device,
    shape_of,
    tracing,
)
from lazyarray.api.creation import arange, full, zeros, zeros_like
from lazyarray.api.manipulation import broadcast_to, moveaxis, pad, stack
from lazyarray.api.sorting import sort as _sort
from lazyarray.api.ufuncs import isnan, log10, where
from lazyarray.api.ufuncs import sign as _sign
from lazyarray.errors import DTypeError, IndexingError, ShapeError
from lazyarray.handle import LazyArray, asarray
from lazyarray.host.dispatch import SMALL, host_call, host_ready
from lazyarray.ops import construct as _construct
from lazyarray.ops.reductions import normalize_axes as _normalize_axes

_INT64 = _np.dtype(_np.int64)

# {{{ diagonals and triangles

def diag(v: Any, k: int = 0) -> LazyArray:
    """The *k*-th diagonal of a 2-D *v*, or a 2-D array with the 1-D *v* on
    its *k*-th diagonal (NumPy's diag)."""
    v = asarray(v)
    k = _operator.index(k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ShapeError("Input must be 1- or 2-d.")
    size = v.shape[0] + abs(k)
    padded = pad(v, (0, abs(k)))
    values = padded[:, None] if k >= 0 else padded[None, :]
    rows, cols = iota((size, size), 0), iota((size, size), 1)
    return where(cols - rows == k, values, zeros((), v.dtype))


def diagflat(v: Any, k: int = 0) -> LazyArray:
    """A 2-D array with the flattened *v* on its *k*-th diagonal."""
    return diag(asarray(v).reshape(-1), k)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> LazyArray:
    """The diagonal of the 2-D subarrays of *axis1* and *axis2*, as a new
    last axis (NumPy's diagonal: a read-only view)."""
    a = asarray(a)
    if a.ndim < 2:
        raise ShapeError("diag requires an array of at least two dimensions")
    (axis1,), (axis2,) = _normalize_axes(axis1, a.ndim), _normalize_axes(axis2, a.ndim)
    if axis1 == axis2:
        raise ShapeError("axis1 and axis2 cannot be the same")
    rest = [d for d in range(a.ndim) if d not in (axis1, axis2)]
    moved = a.transpose(rest + [axis1, axis2])
    n, m = a.shape[axis1], a.shape[axis2]
    offset = _operator.index(offset)
    length = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    head = moved.shape[:-2]
    if length == 0:
        return zeros(head + (0,), a.dtype)._read_only()
    start = max(0, -offset) * m + max(0, offset)
    flat = moved.reshape(head + (n * m,))
    return flat[..., start:start + (length - 1) * (m + 1) + 1:m + 1]._read_only()


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> LazyArray:
    """The sum along a diagonal (NumPy's trace)."""
    if out is not None:
        raise TypeError("lazyarray.trace does not take out=")
    return diagonal(a, offset, axis1, axis2).sum(-1, dtype=dtype)


def _triangle_indices(n: int, k: int, m: int, lower: bool) -> tuple[LazyArray, LazyArray]:
    """Row and column indices of the lower (or upper) triangle of an n x m
    array, in C order."""
    k = _operator.index(k)
    rows = _np.arange(n)
    first = _np.zeros(n, _np.int64) if lower else _np.clip(rows + k, 0, m)
    last = _np.clip(rows + k + 1, 0, m) if lower else _np.full(n, m)
    count = int(_np.maximum(last - first, 0).sum())
    row_index = arange(n, dtype=_INT64)
    starts = (row_index + k).clip(0, m) if not lower else zeros(n, _INT64)
    counts = ((row_index + k + 1).clip(0, m) if lower else full(n, m, _INT64)) - starts
    counts = counts.clip(0, None) if n else counts
    if count == 0:
        return zeros(0, _INT64), zeros(0, _INT64)
    ends = counts.cumsum()
    position = arange(count, dtype=_INT64)
    row = searchsorted_device(ends, position, "right")
    col = position - gather(ends - counts, row) + gather(starts, row)
    return row, col


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[LazyArray, LazyArray]:
    """Indices of the lower triangle of an ``n x m`` array (NumPy's tril_indices)."""
    return _triangle_indices(int(n), k, int(n if m is None else m), True)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[LazyArray, LazyArray]:
    """Indices of the upper triangle of an ``n x m`` array (NumPy's triu_indices)."""
    return _triangle_indices(int(n), k, int(n if m is None else m), False)


def _shape_2d(arr) -> tuple[int, int]:
    shape = arr.shape if isinstance(arr, LazyArray) else shape_of(arr)
    if len(shape) != 2:
        raise ShapeError("input array must be 2-d")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[LazyArray, LazyArray]:
    """Indices of the lower triangle of the 2-D *arr*."""
    n, m = _shape_2d(arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[LazyArray, LazyArray]:
    """Indices of the upper triangle of the 2-D *arr*."""
    n, m = _shape_2d(arr)
    return triu_indices(n, k, m)

# }}}


# {{{ index grids and spaced sequences

def indices(dimensions: Any, dtype: Any = int, sparse: bool = False
            ) -> LazyArray | tuple[LazyArray, ...]:
    """The indices of a grid of shape *dimensions*: one array of shape
    ``(len(dimensions), *dimensions)``, or with *sparse* a tuple of arrays
    that broadcast (NumPy's indices)."""
    dimensions = tuple(_operator.index(d) for d in dimensions)
    n = len(dimensions)
    if sparse:
        return tuple(iota(tuple(d if j == k else 1 for j, d in enumerate(dimensions)), k)
                     .astype(dtype) for k in range(n))
    if n == 0:
        return zeros((0,), dtype)
    return stack([iota(dimensions, k).astype(dtype) for k in range(n)])


class _Grid:
    """``mgrid[...]`` / ``ogrid[...]``: coordinate arrays from slices
    (a complex step is a number of points, the end included)."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    @classmethod
    def _size(cls, key) -> float:
        """How many elements the grid of *key* has (infinite for a key that
        is not all slices: NumPy's error decides)."""
        parts = key if isinstance(key, tuple) else (key,)
        if not all(isinstance(s, slice) for s in parts):
            return _math.inf
        return _math.prod(max(cls._count(s)[2], 0) for s in parts) * len(parts)

    @staticmethod
    def _count(s: slice) -> tuple:
        start = 0 if s.start is None else s.start
        step = 1 if s.step is None else s.step
        if isinstance(step, (complex, _np.complexfloating)):
            return start, step, int(abs(step)), True  # type: ignore[call-overload]
        return start, step, int(_math.ceil((s.stop - start) / step)), False

    def __getitem__(self, key):
        if host_ready(()) and self._size(key) <= SMALL:
            # (a small grid is NumPy's, on the host tier)
            return host_call((_np.ogrid if self.sparse else _np.mgrid).__getitem__, (key,))
        if not isinstance(key, tuple):
            start, step, count, points = self._count(key)
            if not points:
                return arange(start, key.stop, step)
            kind = _np.result_type(start, key.stop, abs(step))
            step = (key.stop - start) / float(count - 1) if count != 1 else 1
            return arange(0, count, 1, dtype=kind) * step + start
        parts = [self._count(s) for s in key]
        kind = _np.result_type(0, *(v for s, (start, step, _, _) in zip(key, parts)
                                    for v in (start, s.stop, abs(step) if _np.iscomplexobj(step)
                                              else step)))
        sizes = tuple(max(count, 0) for _, _, count, _ in parts)
        grids = indices(sizes, kind, sparse=self.sparse)
        grids = list(grids) if self.sparse else [grids[k] for k in range(len(key))]
        for k, (s, (start, step, count, points)) in enumerate(zip(key, parts)):
            if points:
                step = (s.stop - start) / float(count - 1) if count != 1 else 1
            grids[k] = grids[k] * step + start
        return tuple(grids) if self.sparse else stack(grids) if grids else \
            zeros((0,), kind)


#: NumPy's mgrid: dense coordinate arrays, ``mgrid[0:2, 0:3:4j]``
mgrid = _Grid(sparse=False)
#: NumPy's ogrid: open (broadcasting) coordinate arrays
ogrid = _Grid(sparse=True)


def _spaced(start, stop, num: int, endpoint: bool, axis: int):
    """NumPy's linspace of (broadcast) array-like *start* and *stop*, the
    samples along *axis*."""
    num = _operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    kind = _np.result_type(dtype_probe(start), dtype_probe(stop))
    kind = kind if kind.kind in "fc" else _np.dtype(_np.float64)
    start, stop = asarray(start), asarray(stop)
    shape = _np.broadcast_shapes(start.shape, stop.shape)
    delta = stop.astype(kind) - start.astype(kind)
    div = num - 1 if endpoint else num
    steps = iota((num,) + shape, 0).astype(kind)
    if div > 0:
        step = delta / div
        y = where(step == 0, steps / div * delta, steps * step)
    else:
        y = steps * delta
    y = y + start
    if endpoint and num > 1:
        y = where(iota(y.shape, 0) == num - 1, stop.astype(y.dtype), y)
    return moveaxis(y, 0, axis) if axis != 0 else y


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: float = 10.0,
             dtype: Any = None, axis: int = 0) -> LazyArray:
    """*num* powers of *base* with exponents evenly spaced from *start* to
    *stop* (NumPy's logspace)."""
    if not isinstance(base, (float, int)) and ndim_of(base):
        base = asarray(base)
        ndim = len(_np.broadcast_shapes(shape_of(start), shape_of(stop), base.shape))
        start, stop, base = (asarray(x).reshape((1,) * (ndim - ndim_of(x)) + shape_of(x))
                             for x in (start, stop, base))
        base = base.reshape(base.shape[:axis % (ndim + 1)] + (1,)
                            + base.shape[axis % (ndim + 1):])
    y = _spaced(start, stop, num, endpoint, axis)
    result = asarray(base) ** y if isinstance(base, LazyArray) else base ** y
    return result if dtype is None else result.astype(dtype)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> LazyArray:
    """*num* numbers spaced evenly on a log scale from *start* to *stop*
    (NumPy's geomspace; real values; lazy *start*/*stop* are checked for
    zeros, which computes them)."""
    kind = _np.result_type(dtype_probe(start), dtype_probe(stop), float(num),
                           _np.zeros((), _np.float64))
    if kind.kind == "c":
        raise DTypeError("geomspace of complex values is not supported")
    start, stop = asarray(start).astype(kind), asarray(stop).astype(kind)
    if not tracing() and _builtins.bool(((start == 0).any() | (stop == 0).any()).get()):
        raise ValueError("Geometric sequence cannot include zero")
    sign = _sign(start)
    start, stop = start / sign, stop / sign
    result = logspace(log10(start), log10(stop), num, endpoint, 10.0, axis=0)
    if num > 0:
        index = iota(result.shape, 0)
        result = where(index == 0, start, result)
        if num > 1 and endpoint:
            result = where(index == num - 1, stop, result)
    result = result * sign
    if axis != 0:
        result = moveaxis(result, 0, axis)
    return result if dtype is None else result.astype(dtype)

# }}}


# {{{ gathering, choosing, membership

def argwhere(a: Any) -> LazyArray:
    """The indices of the non-zero elements, one row each, in C order
    (NumPy's argwhere). The number of rows depends on the data: it is
    computed first (a running count on the device), then the rows are found
    on the device; inside ``la.jit`` this raises ConcretizationError."""
    a = asarray(a)
    if a.ndim == 0:
        return argwhere(a.reshape(1))[:, :0]
    if a.size == 0:
        return zeros((0, a.ndim), _INT64)
    ends = a.astype(_np.bool_).reshape(-1).astype(_INT64).cumsum()
    count = int(ends[-1])
    if count == 0:
        return zeros((0, a.ndim), _INT64)
    flat = searchsorted_device(ends, arange(count, dtype=_INT64), "right")
    coords: list[LazyArray]
    coords, stride = [], 1
    for n in reversed(a.shape):
        coords.insert(0, (flat // stride) % n if n != 1 else zeros(count, _INT64))
        stride *= n
    return stack(coords, axis=1)


def take_along_axis(arr: Any, indices: Any, axis: int | None = -1) -> LazyArray:
    """Values of *arr* at *indices* along *axis*, matched elementwise along
    the other axes (NumPy's take_along_axis). Out-of-bounds indices raise
    IndexError, which computes the index array's extremes first (outside
    ``la.jit``; traced calls wrap indices modulo the extent)."""
    arr, indices = asarray(arr), asarray(indices)
    if indices.dtype.kind not in "iu":
        raise IndexingError("`indices` must be an integer array")
    if axis is None:
        if indices.ndim != 1:
            raise ShapeError("when axis=None, `indices` must have a single dimension.")
        arr, axis = arr.reshape(-1), 0
    elif arr.ndim != indices.ndim:
        raise ShapeError("`indices` and `arr` must have the same number of dimensions")
    (axis,) = _normalize_axes(axis, arr.ndim)
    check_indices(indices, arr.shape[axis], axis)
    return gather_along(arr, indices, axis)


def _of_dtype(value, dtype) -> LazyArray:
    """*value* (a scalar, NumPy or lazy array) as a lazy array of *dtype*."""
    if isinstance(value, LazyArray):
        return value.astype(dtype, copy=False)
    host = _np.asarray(value)
    if host.ndim == 0:
        return LazyArray(_construct.full((), host.astype(dtype)[()], dtype))
    return asarray(host.astype(dtype))


def select(condlist: Any, choicelist: Any, default: int = 0) -> LazyArray:
    """Elements of the first choice whose condition holds, else *default*
    (NumPy's select)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    choices = list(choicelist) + [default]
    try:
        dtype = _np.result_type(*(c if type(c) in (int, float, complex) else dtype_probe(c)
                                  for c in choices))
    except TypeError as e:
        raise TypeError(f"Choicelist and default value do not have a common dtype: {e}") \
            from None
    conds = [asarray(c) for c in condlist]
    for k, cond in enumerate(conds):
        if cond.dtype != _np.bool_:
            raise TypeError(f"invalid entry {k} in condlist: should be boolean ndarray")
    choices = [_of_dtype(c, dtype) for c in choices]
    shape = _np.broadcast_shapes(*(x.shape for x in conds + choices))
    result = broadcast_to(choices[-1], shape)
    for cond, choice in zip(conds[::-1], choices[-2::-1]):
        result = where(cond, choice, result)
    return broadcast_to(result, shape)


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False, *,
         kind: str | None = None) -> LazyArray:
    """Whether each element of *element* is one of *test_elements* (NumPy's
    isin). Up to :data:`COMPARE_LIMIT` test elements are compared with every
    element on the device; more are sorted (``la.sort``, on the device) and
    searched by bisection on the device. *kind* is accepted and ignored."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    element, test = asarray(element), asarray(test_elements).reshape(-1)
    m = test.shape[0]
    if m == 0:
        found = zeros(element.shape, _np.bool_)
    elif m <= COMPARE_LIMIT:
        found = (element[..., None] == test).any(-1)
    else:
        ordered = _sort(test)
        position = searchsorted_device(ordered, element, "left").clip(0, m - 1)
        found = gather(ordered, position) == element
    return ~found if invert else found

# }}}


# {{{ convolution

_MODES = {"valid": "valid", "same": "same", "full": "full", 0: "valid", 1: "same", 2: "full",
          "v": "valid", "s": "same", "f": "full"}


def _vector(x, name: str) -> LazyArray:
    x = asarray(x)
    if x.ndim > 1:
        raise ShapeError("object too deep for desired array")
    x = x.reshape(1) if x.ndim == 0 else x
    if x.shape[0] == 0:
        raise ValueError(f"{name} cannot be empty")
    return x


def _full_products(a: LazyArray, v: LazyArray) -> LazyArray:
    """``c[t] = sum_j a[t + j - (len(v) - 1)] * v[j]`` for every overlap
    (zeros outside *a*): a gather of the windows and one reduction."""
    n, m = a.shape[0], v.shape[0]
    kind = _np.result_type(a.dtype, v.dtype)
    length = n + m - 1
    index = iota((length, m), 0) + iota((length, m), 1) - (m - 1)
    inside = (index >= 0) & (index < n)
    # (no products with the zeros outside *a*: inf * 0 would be NaN)
    products = gather(a, where(inside, index, 0)) * v
    return where(inside, products, 0).sum(-1, dtype=kind)


def _mode_slice(full_result: LazyArray, mode, start_same: int, start_valid: int,
                long: int, short: int) -> LazyArray:
    try:
        mode = _MODES[mode]
    except (KeyError, TypeError):
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})") \
            from None
    if mode == "full":
        return full_result
    if mode == "same":
        return full_result[start_same:start_same + long]
    return full_result[start_valid:start_valid + long - short + 1]


def convolve(a: Any, v: Any, mode: str = "full") -> LazyArray:
    """The discrete linear convolution of two 1-D sequences (NumPy's
    convolve), on the device: one reduction over the shifted products."""
    a, v = _vector(a, "a"), _vector(v, "v")
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    n, m = a.shape[0], v.shape[0]
    full_result = _full_products(a, v[::-1])
    return _mode_slice(full_result, mode, m - 1 - m // 2, m - 1, n, m)


def correlate(a: Any, v: Any, mode: str = "valid") -> LazyArray:
    """The cross-correlation ``c[k] = sum_n a[n + k] * conj(v[n])`` of two
    1-D sequences (NumPy's correlate), on the device."""
    a, v = _vector(a, "a"), _vector(v, "v")
    n, m = a.shape[0], v.shape[0]
    if n >= m:
        full_result = _full_products(a, v.conj() if v.dtype.kind == "c" else v)
        return _mode_slice(full_result, mode, m - 1 - m // 2, m - 1, n, m)
    # (the windows of the longer sequence: the reversed correlation of v
    # with a, conjugated)
    swapped = _full_products(v, a.conj() if a.dtype.kind == "c" else a)[::-1]
    full_result = swapped.conj() if swapped.dtype.kind == "c" else swapped
    return _mode_slice(full_result, mode, n // 2, n - 1, m, n)

# }}}


# {{{ products and polynomials

def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> LazyArray:
    """The cross product of vectors of 3 (or 2) components along the given
    axes (NumPy's cross)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ShapeError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    if a.shape[-1] == 2 or b.shape[-1] == 2:
        # (2-D vectors: what this NumPy says, a deprecation warning or, in
        # later versions, an error)
        with _warnings.catch_warnings(record=True) as said:
            _warnings.simplefilter("always")
            _np.cross(_np.zeros(a.shape[-1]), _np.zeros(b.shape[-1]))
        for warning in said:
            _warnings.warn(warning.message, warning.category, stacklevel=2)
    shape = _np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    kind = _np.result_type(a.dtype, b.dtype)
    a, b = a.astype(kind, copy=False), b.astype(kind, copy=False)
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return broadcast_to(z, shape)
    if a.shape[-1] == 2:
        b2 = b[..., 2]
        x, y = a1 * b2, -(a0 * b2)
    elif b.shape[-1] == 2:
        a2 = a[..., 2]
        x, y = -(a2 * b1), a2 * b0
    else:
        a2, b2 = a[..., 2], b[..., 2]
        x, y = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2
    result = stack([broadcast_to(c, shape) for c in (x, y, z)], axis=-1)
    return moveaxis(result, -1, axisc)


def kron(a: Any, b: Any) -> LazyArray:
    """The Kronecker product: blocks of *b* scaled by the elements of *a*
    (NumPy's kron)."""
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    nd = max(a.ndim, b.ndim)
    sa, sb = (1,) * (nd - a.ndim) + a.shape, (1,) * (nd - b.ndim) + b.shape
    spread_a = a.reshape(tuple(v for s in sa for v in (s, 1)))
    spread_b = b.reshape(tuple(v for s in sb for v in (1, s)))
    return (spread_a * spread_b).reshape(tuple(p * q for p, q in zip(sa, sb)))


def polyval(p: Any, x: Any) -> LazyArray:
    """The polynomial with coefficients *p* (highest power first) at *x*
    (NumPy's polyval, by Horner's scheme)."""
    x = asarray(x)
    if _np.ndim(p) == 0:
        raise TypeError("iteration over a 0-d array")
    # (the coefficients are p's rows: a 2-D p gives polynomials side by side)
    coefficients = [p[k] for k in range(p.shape[0])] if isinstance(p, LazyArray) \
        else list(_np.asarray(p))
    y = zeros_like(x)
    for c in coefficients:
        y = y * x + c
    return y

# }}}


# {{{ comparisons of whole arrays

def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    """Whether *a1* and *a2* have the same shape and elements (NumPy's
    array_equal; computes now)."""
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return False
    if a1.size == 0:
        return True
    same = a1 == a2
    if equal_nan:
        same = same | (isnan(a1) & isnan(a2))
    return _builtins.bool(same.all())


def array_equiv(a1: Any, a2: Any) -> bool:
    """Whether *a1* and *a2* broadcast to one shape and are equal there
    (NumPy's array_equiv; computes now)."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        shape = _np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return False
    if 0 in shape:
        return True
    return _builtins.bool((a1 == a2).all())

# }}}


__all__ = ["diag", "diagflat", "diagonal", "trace", "tril_indices", "triu_indices",
           "tril_indices_from", "triu_indices_from", "indices", "mgrid", "ogrid",
           "logspace", "geomspace", "argwhere", "take_along_axis", "select", "isin",
           "convolve", "correlate", "cross", "kron", "polyval", "array_equal", "array_equiv"]
