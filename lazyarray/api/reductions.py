"""Reductions and scans as functions (NumPy's sum, mean, cumsum, ...)."""

from __future__ import annotations

from typing import Any

from lazyarray.api.creation import zeros
from lazyarray.api.manipulation import concatenate
from lazyarray.errors import ShapeError
from lazyarray.handle import LazyArray, asarray
from lazyarray.ops.reductions import count_nonzero as _count
from lazyarray.reduction_keywords import NO_VALUE


def sum(x: Any, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
        keepdims: bool = False, initial: Any = NO_VALUE, where: Any = True) -> Any:
    """The sum along *axis* (NumPy's accumulator dtype unless *dtype*), from
    *initial*, of the elements *where* selects; written into *out* if given."""
    return asarray(x).sum(axis, dtype, out, keepdims, initial, where)


def all(x: Any, axis: int | tuple[int, ...] | None = None, out: Any = None, keepdims: bool = False,
        *, where: Any = True) -> Any:
    """Whether every element (along *axis*, that *where* selects) is nonzero."""
    return asarray(x).all(axis, out, keepdims, where=where)


def any(x: Any, axis: int | tuple[int, ...] | None = None, out: Any = None, keepdims: bool = False,
        *, where: Any = True) -> Any:
    """Whether some element (along *axis*, that *where* selects) is nonzero."""
    return asarray(x).any(axis, out, keepdims, where=where)


def max(x: Any, axis: int | tuple[int, ...] | None = None, out: Any = None, keepdims: bool = False,
        initial: Any = NO_VALUE, where: Any = True) -> Any:
    """The largest values along *axis* (NaN if any is NaN, as NumPy's max;
    no smaller than *initial*; *where* needs *initial*)."""
    return asarray(x).max(axis, out, keepdims, initial, where)


def min(x: Any, axis: int | tuple[int, ...] | None = None, out: Any = None, keepdims: bool = False,
        initial: Any = NO_VALUE, where: Any = True) -> Any:
    """The smallest values along *axis* (NaN if any is NaN, as NumPy's min;
    no larger than *initial*; *where* needs *initial*)."""
    return asarray(x).min(axis, out, keepdims, initial, where)


amax, amin = max, min


def mean(x: Any, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, *, where: Any = True) -> Any:
    """The mean along *axis* of the elements *where* selects (NumPy's result
    dtype: float64 for integers)."""
    return asarray(x).mean(axis, dtype, out, keepdims, where=where)


def prod(x: Any, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, initial: Any = NO_VALUE, where: Any = True) -> Any:
    """The product along *axis* (NumPy's accumulator dtype unless *dtype*),
    from *initial*, of the elements *where* selects."""
    return asarray(x).prod(axis, dtype, out, keepdims, initial, where)


def var(x: Any, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
        ddof: float = 0, keepdims: bool = False, *, where: Any = True, mean: Any = NO_VALUE,
        correction: float | None = None) -> Any:
    """The variance along *axis* with *ddof* (or the Array API's *correction*)."""
    return asarray(x).var(axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                          correction=correction)


def std(x: Any, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
        ddof: float = 0, keepdims: bool = False, *, where: Any = True, mean: Any = NO_VALUE,
        correction: float | None = None) -> Any:
    """The standard deviation along *axis* with *ddof* (or the Array API's *correction*)."""
    return asarray(x).std(axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                          correction=correction)


def argmax(x: Any, axis: int | None = None, out: Any = None, *,
           keepdims: bool = False) -> Any:
    """Indices of the largest values along *axis* (NumPy's argmax; the first one on ties)."""
    return asarray(x).argmax(axis, out, keepdims=keepdims)


def argmin(x: Any, axis: int | None = None, out: Any = None, *,
           keepdims: bool = False) -> Any:
    """Indices of the smallest values along *axis* (NumPy's argmin; the first one on ties)."""
    return asarray(x).argmin(axis, out, keepdims=keepdims)


def cumsum(x: Any, axis: int | None = None, dtype: Any = None, out: Any = None
           ) -> Any:
    """Running sums along *axis* (NumPy's cumsum)."""
    return asarray(x).cumsum(axis, dtype, out)


def cumprod(x: Any, axis: int | None = None, dtype: Any = None, out: Any = None
            ) -> Any:
    """Running products along *axis* (NumPy's cumprod)."""
    return asarray(x).cumprod(axis, dtype, out)


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> LazyArray:
    """Running sums along *axis* (the Array API's cumulative_sum: *axis* may be
    left out only for 0-d and 1-d arrays; *include_initial* starts with 0)."""
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ShapeError("cumulative_sum: axis is required for arrays of more than "
                             "one dimension")
        axis = 0
    if x.ndim == 0:
        x = x.reshape(1)
    result = x.cumsum(axis, dtype)
    if include_initial:
        axis = axis % x.ndim
        shape = x.shape[:axis] + (1,) + x.shape[axis + 1:]
        result = concatenate([zeros(shape, dtype=result.dtype), result], axis=axis)
    return result


def count_nonzero(x: Any, axis: int | tuple[int, ...] | None = None, *, keepdims: bool = False
                  ) -> LazyArray:
    """The number of non-zero elements (NumPy's count_nonzero)."""
    return LazyArray(_count(asarray(x).node, axis, keepdims))


__all__ = ["sum", "all", "any", "max", "min", "amax", "amin", "mean", "prod", "var", "std",
           "argmax", "argmin", "cumsum", "cumprod", "cumulative_sum", "count_nonzero"]
