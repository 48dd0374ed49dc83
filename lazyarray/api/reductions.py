"""Reductions and scans as functions (NumPy's sum, mean, cumsum, ...)."""

from __future__ import annotations

from lazyarray.api.creation import zeros
from lazyarray.api.manipulation import concatenate
from lazyarray.errors import ShapeError
from lazyarray.handle import LazyArray, asarray
from lazyarray.ops.reductions import count_nonzero as _count
from lazyarray.reduction_keywords import NO_VALUE


def sum(x, axis=None, dtype=None, out=None, keepdims=False, initial=NO_VALUE,
        where=True):
    """The sum along *axis* (NumPy's accumulator dtype unless *dtype*), from
    *initial*, of the elements *where* selects; written into *out* if given."""
    return asarray(x).sum(axis, dtype, out, keepdims, initial, where)


def all(x, axis=None, out=None, keepdims=False, *, where=True):
    """Whether every element (along *axis*, that *where* selects) is nonzero."""
    return asarray(x).all(axis, out, keepdims, where=where)


def any(x, axis=None, out=None, keepdims=False, *, where=True):
    """Whether some element (along *axis*, that *where* selects) is nonzero."""
    return asarray(x).any(axis, out, keepdims, where=where)


def max(x, axis=None, out=None, keepdims=False, initial=NO_VALUE, where=True):
    """The largest values along *axis* (NaN if any is NaN, as NumPy's max;
    no smaller than *initial*; *where* needs *initial*)."""
    return asarray(x).max(axis, out, keepdims, initial, where)


def min(x, axis=None, out=None, keepdims=False, initial=NO_VALUE, where=True):
    """The smallest values along *axis* (NaN if any is NaN, as NumPy's min;
    no larger than *initial*; *where* needs *initial*)."""
    return asarray(x).min(axis, out, keepdims, initial, where)


amax, amin = max, min


def mean(x, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """The mean along *axis* of the elements *where* selects (NumPy's result
    dtype: float64 for integers)."""
    return asarray(x).mean(axis, dtype, out, keepdims, where=where)


def prod(x, axis=None, dtype=None, out=None, keepdims=False, initial=NO_VALUE, where=True):
    """The product along *axis* (NumPy's accumulator dtype unless *dtype*),
    from *initial*, of the elements *where* selects."""
    return asarray(x).prod(axis, dtype, out, keepdims, initial, where)


def var(x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=NO_VALUE, correction=None):
    """The variance along *axis* with *ddof* (or the Array API's *correction*)."""
    return asarray(x).var(axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                          correction=correction)


def std(x, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=NO_VALUE, correction=None):
    """The standard deviation along *axis* with *ddof* (or the Array API's *correction*)."""
    return asarray(x).std(axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                          correction=correction)


def argmax(x, axis=None, out=None, *, keepdims=False):
    """Indices of the largest values along *axis* (NumPy's argmax; the first one on ties)."""
    return asarray(x).argmax(axis, out, keepdims=keepdims)


def argmin(x, axis=None, out=None, *, keepdims=False):
    """Indices of the smallest values along *axis* (NumPy's argmin; the first one on ties)."""
    return asarray(x).argmin(axis, out, keepdims=keepdims)


def cumsum(x, axis=None, dtype=None, out=None):
    """Running sums along *axis* (NumPy's cumsum)."""
    return asarray(x).cumsum(axis, dtype, out)


def cumprod(x, axis=None, dtype=None, out=None):
    """Running products along *axis* (NumPy's cumprod)."""
    return asarray(x).cumprod(axis, dtype, out)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
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


def count_nonzero(x, axis=None, *, keepdims=False):
    """The number of non-zero elements (NumPy's count_nonzero)."""
    return LazyArray(_count(asarray(x).node, axis, keepdims))


__all__ = ["sum", "all", "any", "max", "min", "amax", "amin", "mean", "prod", "var", "std",
           "argmax", "argmin", "cumsum", "cumprod", "cumulative_sum", "count_nonzero"]
