"""Array creation: full, zeros, arange, linspace, eye, meshgrid, ..."""

from __future__ import annotations

import builtins as _builtins
import operator
from typing import Any

import numpy as _np

from lazyarray.api.dtypes import __array_namespace_info__
from lazyarray.api.manipulation import broadcast_arrays, stack
from lazyarray.api.ufuncs import where
from lazyarray.errors import LazyArrayError, ShapeError
from lazyarray.handle import LazyArray, asarray
from lazyarray.ops import construct as _construct
from lazyarray.ops import elementwise as _elementwise
from lazyarray.ops import manipulate as _manipulate

# {{{ creation

def _check_device(device) -> None:
    if device is not None and device != __array_namespace_info__().default_device():
        raise LazyArrayError(f"lazyarray uses one device; cannot place an array on "
                             f"{device!r}")


def _holds_lazy(obj) -> bool:
    return isinstance(obj, LazyArray) or (
        isinstance(obj, (list, tuple)) and _builtins.any(_holds_lazy(o) for o in obj))


def array(obj: Any, dtype: Any = None, *, copy: bool | None = True, ndmin: int = 0,
          device: Any = None) -> LazyArray:
    """NumPy's ``np.array``: a lazy array of *obj* (nested lists or tuples,
    NumPy arrays, scalars, lazy arrays, lists of lazy arrays) with at least
    *ndmin* axes; lazy arrays in *obj* are copied (*copy*) or converted on
    the device."""
    _check_device(device)
    if isinstance(obj, (list, tuple)) and _holds_lazy(obj):
        if not obj:
            result = asarray(_np.array(obj, dtype=dtype))
        else:
            parts = [array(o, copy=False) for o in obj]
            result = stack(parts)
            if dtype is not None:
                result = result.astype(dtype)
    elif isinstance(obj, LazyArray):
        result = obj.astype(dtype) if dtype is not None else obj
        if copy and result is obj:
            result = obj.copy()
    else:
        result = asarray(_np.array(obj, dtype=dtype))
    if result.ndim < ndmin:
        result = result.reshape((1,) * (ndmin - result.ndim) + result.shape)
    return result


def _check_order(order: Any) -> None:
    """NumPy's check of a creation function's memory *order* (a lazy array's
    values are the same in any order)."""
    if order not in ("C", "F", "c", "f", "A", "K", None):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")


def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", *,
         device: Any = None) -> LazyArray:
    """An array of *shape* filled with *fill_value* (NumPy's full; an array
    *fill_value* is broadcast to *shape*)."""
    _check_device(device)
    _check_order(order)
    if getattr(fill_value, "ndim", None) or isinstance(fill_value, (list, tuple)):
        values = asarray(fill_value)
        values = values.astype(values.dtype if dtype is None else dtype)
        shape = _construct.normalize_shape(shape)
        try:
            return LazyArray(_manipulate.broadcast_to(values.node, shape))
        except ValueError:
            raise ValueError(f"could not broadcast input array from shape {values.shape} "
                             f"into shape {shape}") from None
    return LazyArray(_construct.full(shape, fill_value, dtype))


def zeros(shape: Any, dtype: Any = None, order: str = "C", *, device: Any = None) -> LazyArray:
    """An array of *shape* filled with zeros (float64 unless *dtype*)."""
    return full(shape, 0, float if dtype is None else dtype, order, device=device)


def ones(shape: Any, dtype: Any = None, order: str = "C", *, device: Any = None) -> LazyArray:
    """An array of *shape* filled with ones (float64 unless *dtype*)."""
    return full(shape, 1, float if dtype is None else dtype, order, device=device)


def empty(shape: Any, dtype: Any = None, order: str = "C", *, device: Any = None) -> LazyArray:
    """Like :func:`zeros` (lazy arrays are never uninitialized)."""
    return zeros(shape, dtype, order, device=device)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None, *, device: Any = None,
              order: str = "K", subok: bool = True) -> LazyArray:
    """An array of *x*'s shape and dtype (or *shape*, *dtype*) filled with *fill_value*
    (NumPy's *order* and *subok* are accepted: lazy arrays are C-ordered and
    of one class)."""
    x = asarray(x)
    return full(x.shape if shape is None else shape, fill_value,
                x.dtype if dtype is None else dtype, device=device)


def zeros_like(x: Any, dtype: Any = None, shape: Any = None, *, device: Any = None,
               order: str = "K", subok: bool = True) -> LazyArray:
    """An array of *x*'s shape and dtype (or *shape*, *dtype*) filled with zeros."""
    return full_like(x, 0, dtype, shape, device=device)


def ones_like(x: Any, dtype: Any = None, shape: Any = None, *, device: Any = None, order: str = "K",
              subok: bool = True) -> LazyArray:
    """An array of *x*'s shape and dtype (or *shape*, *dtype*) filled with ones."""
    return full_like(x, 1, dtype, shape, device=device)


def empty_like(x: Any, dtype: Any = None, shape: Any = None, *, device: Any = None,
               order: str = "K", subok: bool = True) -> LazyArray:
    """Like :func:`zeros_like` (lazy arrays are never uninitialized)."""
    return zeros_like(x, dtype, shape, device=device)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> LazyArray:
    """A lazy array with the values of *x*, any object with ``__dlpack__``
    (read through NumPy, then copied to the device)."""
    _check_device(device)
    if isinstance(x, LazyArray):
        return x
    if copy is False:
        raise ValueError("from_dlpack(copy=False): lazyarray always copies to its device")
    return asarray(_np.from_dlpack(x))


def meshgrid(*arrays: Any, indexing: str = "xy", sparse: bool = False, copy: bool = True
             ) -> list[LazyArray]:
    """Coordinate arrays from 1-D *arrays* (NumPy's meshgrid, as views), a list
    as the Array API 2024.12 specifies (NumPy 2 returns a tuple)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    arrays = [asarray(a).reshape(-1) for a in arrays]  # type: ignore[assignment]
    n = len(arrays)
    shapes = [(1,) * k + (-1,) + (1,) * (n - k - 1) for k in range(n)]
    if indexing == "xy" and n > 1:
        shapes[0], shapes[1] = ((1, -1) + (1,) * (n - 2), (-1, 1) + (1,) * (n - 2))
    grids = [a.reshape(s) for a, s in zip(arrays, shapes)]
    if sparse:
        return grids
    return broadcast_arrays(*grids)


def _band(n_rows, n_cols, k, lower: _builtins.bool) -> LazyArray:
    """Whether each element of an ``n_rows x n_cols`` matrix is on or below
    (*lower*) / above the *k*-th diagonal."""
    rows = LazyArray(_construct.iota((n_rows, n_cols), 0))
    cols = LazyArray(_construct.iota((n_rows, n_cols), 1))
    return cols <= rows + int(k) if lower else cols >= rows + int(k)


def tri(N: Any, M: Any = None, k: int = 0, dtype: Any = float) -> LazyArray:
    """Ones at and below the *k*-th diagonal (NumPy's tri)."""
    return _band(int(N), int(N if M is None else M), k, True).astype(
        float if dtype is None else dtype)


def tril(x: Any, k: int = 0) -> LazyArray:
    """*x* with the elements above the *k*-th diagonal zeroed (last two axes)."""
    x = asarray(x)
    if x.ndim < 2:
        raise ShapeError("tril needs an array of at least 2 dimensions")
    return where(_band(x.shape[-2], x.shape[-1], k, True), x, zeros((), x.dtype))


def triu(x: Any, k: int = 0) -> LazyArray:
    """*x* with the elements below the *k*-th diagonal zeroed (last two axes)."""
    x = asarray(x)
    if x.ndim < 2:
        raise ShapeError("triu needs an array of at least 2 dimensions")
    return where(_band(x.shape[-2], x.shape[-1], k, False), x, zeros((), x.dtype))


def arange(start: Any, stop: Any = None, step: int = 1, dtype: Any = None, *, device: Any = None
           ) -> LazyArray:
    """Evenly spaced values in ``[start, stop)`` (NumPy's arange)."""
    _check_device(device)
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ZeroDivisionError("division by zero")       # (NumPy's, for a step of 0)
    natural = _np.result_type(start, stop, step)
    length = _builtins.max(0, int(_np.ceil((stop - start) / step)))
    index = LazyArray(_construct.iota((length,), 0))
    if natural.kind in "iub":
        values = index * int(step) + int(start)
    else:
        values = index * float(step) + float(start)
    return values.astype(natural if dtype is None else dtype)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0, *, device: Any = None) -> Any:
    """*num* evenly spaced values from *start* to *stop* (NumPy's linspace;
    with *retstep* also the spacing, NaN where it is undefined)."""
    _check_device(device)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    if _np.ndim(start) or _np.ndim(stop):
        raise ValueError("linspace of array endpoints is not supported on the device; "
                         "give scalar start and stop")
    _np.lib.array_utils.normalize_axis_index(axis, 1)
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    index = LazyArray(_construct.iota((num,), 0))
    values = index * float(step) + float(start)
    if endpoint and num > 1:
        values = where(index == num - 1, float(stop), values)
    natural = _np.result_type(float(start), float(stop))
    if dtype is not None and _np.dtype(dtype).kind in "iu":
        values = LazyArray(_elementwise.elementwise("floor", values.node))  # (NumPy rounds down)
    values = values.astype(natural if dtype is None else dtype)
    if not retstep:
        return values
    # (NumPy's spacing: of the endpoints' type, NaN where undefined)
    spacing = _np.subtract(stop, start, dtype=_np.result_type(start, stop, float(num)))
    return values, (spacing / div if div > 0 else _np.nan)


def eye(N: Any, M: Any = None, k: int = 0, dtype: Any = None, *, n_cols: Any = None,
        device: Any = None) -> LazyArray:
    """Ones on the *k*-th diagonal of an ``N x M`` array, zeros elsewhere
    (*n_cols* is the Array API's name of *M*)."""
    _check_device(device)
    dtype = float if dtype is None else dtype
    if n_cols is not None and M is not None:
        raise TypeError("eye(): M and n_cols name the same argument")
    M = n_cols if M is None else M
    shape = (operator.index(N), operator.index(N if M is None else M))
    k = operator.index(k)
    if not -shape[0] < k < shape[1]:
        return zeros(shape, dtype)          # (the diagonal lies outside the array)
    rows = LazyArray(_construct.iota(shape, 0))
    cols = LazyArray(_construct.iota(shape, 1))
    return (rows + k == cols).astype(dtype)


def identity(n: Any, dtype: Any = None) -> LazyArray:
    """The *n* x *n* identity matrix."""
    return eye(n, dtype=dtype)

# }}}


__all__ = ["array", "full", "zeros", "ones", "empty", "full_like", "zeros_like", "ones_like",
           "empty_like", "from_dlpack", "meshgrid", "tri", "tril", "triu", "arange",
           "linspace", "eye", "identity"]
