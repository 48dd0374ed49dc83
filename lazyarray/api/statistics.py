"""Order statistics, weighted means, NaN-ignoring reductions, spreads and
covariances (NumPy's median, quantile, average, nansum, cov, ...).

Everything is computed on the device with lazyarray's operations: order
statistics sort with ``la.sort`` (on the device, :mod:`lazyarray.ops.sort`),
then pick and interpolate the values. Checks that NumPy makes on
values (weights summing to zero, all-NaN slices of nanargmax) compute the
values they test, outside ``la.jit``.
"""

from __future__ import annotations

import builtins as _builtins
import warnings as _warnings
from typing import Any

import numpy as _np

from lazyarray.api._device import gather, gather_along, reduction_layout, tracing
from lazyarray.api.creation import full
from lazyarray.api.manipulation import broadcast_to, concatenate
from lazyarray.api.sorting import sort as _sort
from lazyarray.api.ufuncs import isnan, sqrt
from lazyarray.api.ufuncs import where as _where
from lazyarray.errors import DTypeError, ShapeError
from lazyarray.fallback import host_call
from lazyarray.handle import LazyArray, asarray
from lazyarray.ops.reductions import normalize_axes as _normalize_axes
from lazyarray.reduction_keywords import NO_VALUE, given, into

_INT64 = _np.dtype(_np.int64)

# {{{ quantiles


#: continuous methods of Hyndman and Fan: (alpha, beta) of the virtual index
#: ``n*q + alpha + q*(1 - alpha - beta) - 1`` ("linear" is ``(n - 1)*q``)
_PLOTTING_POSITIONS = {"interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5),
                       "weibull": (0, 0), "median_unbiased": (1 / 3.0, 1 / 3.0),
                       "normal_unbiased": (3 / 8.0, 3 / 8.0)}
_DISCRETE = ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")
_METHODS = ("linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf",
            "averaged_inverted_cdf", "closest_observation", *_PLOTTING_POSITIONS)


def _boundary(index, lower_if):
    """The integer position the discrete methods pick for the fractional
    *index*: its floor where ``lower_if(fraction, index)``, else the next
    position (never below 0)."""
    below = _np.floor(index)
    chosen = _np.where(lower_if(index - below, index), below, below + 1)
    return _np.maximum(chosen.astype(_INT64), 0)


def _virtual_index(method: str, n, q):
    """The (fractional or integer) position of quantile *q* among *n* sorted
    values for *method*: host values, or lazy ones where *n* is lazy."""
    if method == "linear":
        return (n - 1) * q
    if method in _PLOTTING_POSITIONS:
        alpha, beta = _PLOTTING_POSITIONS[method]
        return n * q + (alpha + q * (1 - alpha - beta)) - 1
    if method == "lower":
        return _np.floor((n - 1) * q).astype(_INT64)
    if method == "higher":
        return _np.ceil((n - 1) * q).astype(_INT64)
    if method == "nearest":
        return _np.rint((n - 1) * q).astype(_INT64)
    if method == "midpoint":
        return 0.5 * (_np.floor((n - 1) * q) + _np.ceil((n - 1) * q))
    if method == "averaged_inverted_cdf":
        return n * q - 1
    if method == "inverted_cdf":
        return _boundary(n * q - 1, lambda g, _: g == 0)
    return _boundary(n * q - 1 - 0.5, lambda g, i: (g == 0) & (_np.floor(i) % 2 == 1))


def _weights_of(gamma, index, method: str):
    """The interpolation weights of the methods that adjust them."""
    if method == "midpoint":
        return _np.where(index % 1 == 0, 0.0, 0.5)
    if method == "averaged_inverted_cdf":
        return _np.where(gamma == 0, 0.5, 1.0)
    return gamma


def _lerp(lo, hi, t, t_high, one_minus_t):
    """``lo + (hi - lo) * t``, from the upper end where *t_high* (t >= 0.5)."""
    diff = hi - lo
    return _where(t_high, hi - diff * one_minus_t, lo + diff * t)


def _quantile(a, q, axis, method: str, keepdims: bool, weak_q: bool, skip_nan: bool,
              name: str) -> LazyArray:
    """Quantiles *q* (in [0, 1]) of *a* over *axis*, sorted on the device;
    *skip_nan* leaves NaNs out of each slice."""
    a = asarray(a)
    if a.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    if method not in _METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {_METHODS}")
    q = _np.asarray(q.get() if isinstance(q, LazyArray) else q)
    if q.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    if q.size and not (q.min() >= 0 and q.max() <= 1):
        raise ValueError("Percentiles must be in the range [0, 100]"
                         if name.endswith("percentile") else
                         "Quantiles must be in the range [0, 1]")
    x, rest, kept = reduction_layout(a, axis)
    n = x.shape[-1]
    out_rest = kept if keepdims else rest
    skip_nan = skip_nan and a.dtype.kind == "f"
    if n == 0:
        if not skip_nan:
            raise IndexError("index -1 is out of bounds for axis 0 with size 0")
        return full(q.shape + out_rest, _np.nan, a.dtype)
    ordered = _sort(x, axis=-1)
    ordered = ordered.transpose((ordered.ndim - 1,) + tuple(range(ordered.ndim - 1)))
    grid = q.shape + (1,) * len(rest)
    if skip_nan:
        count = (~isnan(x)).sum(-1, dtype=_INT64).reshape((1,) * q.ndim + rest)
        size = count.astype(q.dtype) if q.dtype.kind in "fiu" else count
        qq = q.reshape(grid)
    else:
        size, qq = n, q
    v = _virtual_index(method, size, qq)
    values = ordered.reshape((1,) * q.ndim + ordered.shape) if skip_nan else ordered

    def pick(index) -> LazyArray:
        if not skip_nan:
            return gather(ordered, asarray(_np.asarray(index, _INT64)), 0)
        index = broadcast_to(index, q.shape + rest).reshape(q.shape + (1,) + rest)
        return gather_along(values, index, q.ndim).reshape(q.shape + rest)

    if method in _DISCRETE or (method == "linear" and v.dtype.kind in "iu"):
        result = pick(v)
    else:
        last = size - 1
        floor_v = _np.floor(v)
        above, below = v >= last, v < 0
        prev = _np.where(above, last, _np.where(below, 0, floor_v))
        nxt = _np.where(above, last, _np.where(below, 0, floor_v + 1))
        gamma = _weights_of(v - _np.where(above, -1, _np.where(below, 0, floor_v)), v, method)
        lo, hi = pick(prev.astype(_INT64)), pick(nxt.astype(_INT64))
        if not skip_nan:
            # (a Python float for a Python q: NumPy's weak promotion)
            gamma = _np.asarray(gamma, dtype=v.dtype)
            t = float(gamma) if weak_q else gamma.reshape(grid)
            result = _lerp(lo, hi, t, t >= 0.5, 1 - t)
        else:
            gamma = asarray(gamma).astype(v.dtype)
            if weak_q:       # (NumPy: each slice's weight a Python float)
                kind = _np.result_type(a.dtype, 1.0)
                result = _lerp(lo, hi, gamma.astype(kind), gamma >= 0.5,
                               (1 - gamma).astype(kind))
            else:
                result = _lerp(lo, hi, gamma, gamma >= 0.5, 1 - gamma)
    if not skip_nan and a.dtype.kind == "f":
        top = ordered[-1]
        result = _where(isnan(top), top.astype(result.dtype), result)
    return result.reshape(q.shape + out_rest)


def _quantiles(name: str, a, q, axis, out, method: str, keepdims: bool, weights,
               interpolation, skip_nan: bool, percent: bool) -> LazyArray:
    """The quantile function *name* (NumPy's old *interpolation* name wins
    over *method*); with *weights*, NumPy's on the host."""
    method = interpolation if interpolation is not None else method
    if weights is not None:
        return into(host_call(getattr(_np, name), (a, q), dict(
            axis=axis, method=method, keepdims=keepdims, weights=weights), f"np.{name}"), out)
    fractions = _np.true_divide(q.get() if isinstance(q, LazyArray) else q, 100) \
        if percent else q
    return into(_quantile(a, fractions, axis, method, keepdims, type(q) in (int, float),
                          skip_nan, name), out)


def quantile(a: Any, q: Any, axis: int | tuple[int, ...] | None = None, out: Any = None,
             overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
             weights: Any = None, interpolation: Any = None) -> LazyArray:
    """The *q*-th quantiles of *a* along *axis* (NumPy's quantile, all its
    methods). *a* is sorted on the device (``la.sort``); the quantiles are
    picked and interpolated on the device. With *weights* (NumPy's
    ``method="inverted_cdf"``), NumPy computes it on the host."""
    return _quantiles("quantile", a, q, axis, out, method, keepdims, weights, interpolation,
                      False, False)


def percentile(a: Any, q: Any, axis: int | tuple[int, ...] | None = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
               weights: Any = None, interpolation: Any = None) -> LazyArray:
    """The *q*-th percentiles (0..100) of *a* along *axis* (see :func:`quantile`)."""
    return _quantiles("percentile", a, q, axis, out, method, keepdims, weights, interpolation,
                      False, True)


def nanquantile(a: Any, q: Any, axis: int | tuple[int, ...] | None = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
                weights: Any = None, interpolation: Any = None) -> LazyArray:
    """The *q*-th quantiles of the non-NaN values of *a* along *axis* (NaN
    for slices of NaNs only; see :func:`quantile`)."""
    return _quantiles("nanquantile", a, q, axis, out, method, keepdims, weights,
                      interpolation, True, False)


def nanpercentile(a: Any, q: Any, axis: int | tuple[int, ...] | None = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
                  weights: Any = None, interpolation: Any = None) -> LazyArray:
    """The *q*-th percentiles of the non-NaN values of *a* along *axis*."""
    return _quantiles("nanpercentile", a, q, axis, out, method, keepdims, weights,
                      interpolation, True, True)


def median(a: Any, axis: int | tuple[int, ...] | None = None, out: Any = None,
           overwrite_input: bool = False, keepdims: bool = False) -> LazyArray:
    """The median along *axis* (NumPy's median: the mean of the middle one or
    two values; NaN where a slice has NaN). Sorted on the device."""
    a = asarray(a)
    x, rest, kept = reduction_layout(a, axis)
    n = x.shape[-1]
    ordered = _sort(x, axis=-1) if n else x
    result = ordered[..., (n - 1) // 2:n // 2 + 1].mean(-1)
    if n and a.dtype.kind in "fc":
        top = ordered[..., -1]
        result = _where(isnan(top), top.astype(result.dtype), result)
    return into(result.reshape(kept if keepdims else rest), out)


def nanmedian(a: Any, axis: int | tuple[int, ...] | None = None, out: Any = None,
              overwrite_input: bool = False, keepdims: bool = False) -> LazyArray:
    """The median of the non-NaN values along *axis* (NaN for slices of NaNs
    only). Sorted and picked on the device."""
    a = asarray(a)
    if a.dtype.kind not in "fc":
        return median(a, axis, out, keepdims=keepdims)
    x, rest, kept = reduction_layout(a, axis)
    if x.shape[-1] == 0:
        return into(full(kept if keepdims else rest, _np.nan, a.dtype), out)
    ordered = _sort(x, axis=-1)
    count = (~isnan(x)).sum(-1, dtype=_INT64)[..., None]
    low = gather_along(ordered, (count - 1) // 2, ordered.ndim - 1)
    high = gather_along(ordered, count // 2, ordered.ndim - 1)
    result = _where(count % 2 == 1, low, (low + high) / 2)
    return into(result.reshape(kept if keepdims else rest), out)

# }}}


# {{{ means and NaN-ignoring reductions

def average(a: Any, axis: int | tuple[int, ...] | None = None, weights: Any = None,
            returned: bool = False, *, keepdims: bool = False
            ) -> LazyArray | tuple[LazyArray, LazyArray]:
    """The (weighted) mean along *axis*; with *returned* also the sum of the
    weights (NumPy's average). Weights summing to zero raise
    ZeroDivisionError, which computes their sums first (outside ``la.jit``)."""
    a = asarray(a)
    if weights is None:
        avg = a.mean(axis, keepdims=keepdims)
        scale = a.size / max(avg.size, 1) if avg.size else 0.0
        return (avg, full(avg.shape, scale, avg.dtype)) if returned else avg
    w = asarray(weights)
    if w.shape != a.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        axes = _normalize_axes(axis, a.ndim)
        original = [int(d) % a.ndim for d in
                    (axis if isinstance(axis, (tuple, list)) else (axis,))]
        if w.shape != tuple(a.shape[d] for d in original):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        w = w.transpose([int(k) for k in _np.argsort(original)]) if w.ndim > 1 else w
        w = w.reshape(tuple(s if d in axes else 1 for d, s in enumerate(a.shape)))
    kind = _np.result_type(a.dtype, w.dtype, "f8") if a.dtype.kind in "biu" else \
        _np.result_type(a.dtype, w.dtype)
    scale = w.sum(axis, kind, keepdims=keepdims)
    if not tracing() and _builtins.bool((scale == 0).any()):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = (a.astype(kind) * w.astype(kind)).sum(axis, keepdims=keepdims) / scale
    if returned:
        return avg, broadcast_to(scale, avg.shape) if scale.shape != avg.shape else scale
    return avg


def _filled(a: LazyArray, value) -> LazyArray:
    """*a* with NaNs replaced by *value* (floating and complex arrays)."""
    if a.dtype.kind not in "fc":
        return a
    return _where(isnan(a), a.dtype.type(value), a)


def nansum(a: Any, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, initial: Any = NO_VALUE, where: Any = True) -> LazyArray:
    """The sum along *axis*, NaNs counted as zero (NumPy's nansum)."""
    return _filled(asarray(a), 0).sum(axis, dtype, out, keepdims, initial, where)


def nanprod(a: Any, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, initial: Any = NO_VALUE, where: Any = True) -> LazyArray:
    """The product along *axis*, NaNs counted as one (NumPy's nanprod)."""
    return _filled(asarray(a), 1).prod(axis, dtype, out, keepdims, initial, where)


def nancumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None
              ) -> LazyArray:
    """Running sums, NaNs counted as zero (NumPy's nancumsum)."""
    return _filled(asarray(a), 0).cumsum(axis, dtype, out)


def nancumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None
               ) -> LazyArray:
    """Running products, NaNs counted as one (NumPy's nancumprod)."""
    return _filled(asarray(a), 1).cumprod(axis, dtype, out)


def _counts(a: LazyArray, axis, keepdims: bool) -> LazyArray:
    return (~isnan(a)).sum(axis, _INT64, keepdims=keepdims)


def _not_nan(a: LazyArray, where):
    """The elements of *a* that are no NaN and that *where* selects."""
    mask = ~isnan(a)
    return mask if where is True or where is NO_VALUE else mask & asarray(where)


def nanmean(a: Any, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, *, where: Any = True) -> LazyArray:
    """The mean of the non-NaN values along *axis* (NaN for slices of NaNs
    only; NumPy's nanmean)."""
    a = asarray(a)
    if a.dtype.kind not in "fc":
        return a.mean(axis, dtype, out, keepdims, where=where)
    if where is not True:
        return a.mean(axis, dtype, out, keepdims, where=_not_nan(a, where))
    total = _filled(a, 0).sum(axis, dtype, keepdims=keepdims)
    return into((total / _counts(a, axis, keepdims)).astype(total.dtype), out)


def nanvar(a: Any, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
           ddof: float = 0, keepdims: bool = False, *, where: Any = True, mean: Any = NO_VALUE,
           correction: Any = NO_VALUE) -> LazyArray:
    """The variance of the non-NaN values along *axis* (NumPy's nanvar; NaN
    where fewer than ``ddof + 1`` values)."""
    if given(mean):
        raise TypeError("lazyarray.nanvar does not take mean=")
    if correction is not NO_VALUE:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    a = asarray(a)
    if a.dtype.kind not in "fc":
        return a.var(axis, dtype, out, ddof, keepdims, where=where)
    if where is not True:
        var = a.var(axis, dtype, None, ddof, keepdims, where=_not_nan(a, where))
        dof = _not_nan(a, where).sum(axis, _INT64, keepdims=keepdims) - ddof
        return into(_where(dof <= 0, var.dtype.type(_np.nan), var), out)
    filled = _filled(a, 0)
    count = _counts(a, axis, True)
    total = filled.sum(axis, dtype, keepdims=True)
    avg = (total / count).astype(total.dtype)
    centered = _where(isnan(a), a.dtype.type(0), (filled - avg).astype(a.dtype))
    if a.dtype.kind == "c":
        squares = centered.real * centered.real + centered.imag * centered.imag
    else:
        squares = centered * centered
    var = squares.sum(axis, dtype, keepdims=keepdims)
    dof = (count if keepdims else count.reshape(var.shape)) - ddof
    var = (var / dof).astype(var.dtype)
    return into(_where(dof <= 0, var.dtype.type(_np.nan), var), out)


def nanstd(a: Any, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
           ddof: float = 0, keepdims: bool = False, *, where: Any = True, mean: Any = NO_VALUE,
           correction: Any = NO_VALUE) -> LazyArray:
    """The standard deviation of the non-NaN values (see :func:`nanvar`)."""
    return into(sqrt(nanvar(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean,
                            correction=correction)), out)


def _nan_extreme(a, axis, out, keepdims: bool, initial, where, largest: bool) -> LazyArray:
    a = asarray(a)
    op = a.max if largest else a.min
    if a.dtype.kind != "f":
        return op(axis, out, keepdims, initial, where)
    filled = _filled(a, -_np.inf if largest else _np.inf)
    result = (filled.max if largest else filled.min)(axis, None, keepdims, initial, where)
    if given(initial):
        return into(result, out)        # (NumPy's fmax: NaNs give way to initial)
    return into(_where(isnan(a).all(axis, keepdims=keepdims), a.dtype.type(_np.nan), result),
                out)


def nanmax(a: Any, axis: int | tuple[int, ...] | None = None, out: Any = None,
           keepdims: bool = False, initial: Any = NO_VALUE, where: Any = True) -> LazyArray:
    """The largest non-NaN value along *axis* (NaN for slices of NaNs only,
    unless *initial*)."""
    return _nan_extreme(a, axis, out, keepdims, initial, where, True)


def nanmin(a: Any, axis: int | tuple[int, ...] | None = None, out: Any = None,
           keepdims: bool = False, initial: Any = NO_VALUE, where: Any = True) -> LazyArray:
    """The smallest non-NaN value along *axis* (NaN for slices of NaNs only,
    unless *initial*)."""
    return _nan_extreme(a, axis, out, keepdims, initial, where, False)


def _nan_arg(a, axis, out, keepdims: bool, largest: bool) -> LazyArray:
    a = asarray(a)
    if a.dtype.kind in "fc":
        if not tracing() and a.size and _builtins.bool(isnan(a).all(axis).any()):
            raise ValueError("All-NaN slice encountered")
        a = _filled(a, -_np.inf if largest else _np.inf)
    return (a.argmax if largest else a.argmin)(axis, out, keepdims=keepdims)


def nanargmax(a: Any, axis: int | tuple[int, ...] | None = None, out: Any = None, *,
              keepdims: bool = False) -> LazyArray:
    """The index of the largest non-NaN value along *axis*; a slice of NaNs
    only raises ValueError (checked by computing, outside ``la.jit``)."""
    return _nan_arg(a, axis, out, keepdims, True)


def nanargmin(a: Any, axis: int | tuple[int, ...] | None = None, out: Any = None, *,
              keepdims: bool = False) -> LazyArray:
    """The index of the smallest non-NaN value along *axis* (see :func:`nanargmax`)."""
    return _nan_arg(a, axis, out, keepdims, False)


def ptp(a: Any, axis: int | tuple[int, ...] | None = None, out: Any = None, keepdims: bool = False
        ) -> LazyArray:
    """The range (maximum minus minimum) along *axis* (NumPy's ptp)."""
    a = asarray(a)
    return into(a.max(axis, keepdims=keepdims) - a.min(axis, keepdims=keepdims), out)

# }}}


# {{{ covariance and correlation

def _sample_weights(weights, count: int, integral: bool) -> LazyArray:
    """Frequency (*integral*) or analytic weights as float64, NumPy's checks."""
    name = "fweights" if integral else "aweights"
    w = asarray(weights).astype(_np.float64)
    if w.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if w.shape[0] != count:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if not tracing():
        if integral and not _builtins.bool((w == w.round()).all()):
            raise TypeError("fweights must be integer")
        if _builtins.bool((w < 0).any()):
            raise ValueError(f"{name} cannot be negative")
    return w


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: float | None = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> LazyArray:
    """The covariance matrix of the variables in the rows (or columns) of *m*
    and *y* (NumPy's cov, weights included)."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    m = asarray(m)
    if m.ndim > 2:
        raise ShapeError("m has more than 2 dimensions")
    if y is not None:
        y = asarray(y)
        if y.ndim > 2:
            raise ShapeError("y has more than 2 dimensions")
    if dtype is None:
        dtype = _np.result_type(m.dtype, *(() if y is None else (y.dtype,)), _np.float64)
    x = m.astype(dtype).reshape((1,) * (2 - m.ndim) + m.shape)
    if not rowvar and m.ndim != 1:
        x = x.T
    if x.shape[0] == 0:
        return full((0, 0), 0.0, _np.float64)
    if y is not None:
        y = y.astype(dtype).reshape((1,) * (2 - y.ndim) + y.shape)
        if not rowvar and y.shape[0] != 1:
            y = y.T
        x = concatenate([x, y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    count = x.shape[1]
    w = None
    if fweights is not None:
        w = _sample_weights(fweights, count, True)
    if aweights is not None:
        a_w = _sample_weights(aweights, count, False)
        w = a_w if w is None else w * a_w
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    if w is None:
        fact = count - ddof
        if fact <= 0:
            _warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
            fact = 0.0
        factor = _np.true_divide(1, fact)
    else:
        w_sum = w_sum[0]
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * (w * a_w).sum() / w_sum
        factor = _where(fact <= 0, _np.inf, 1 / fact)
    x = x - avg[:, None]
    x_t = (x * w).T if w is not None else x.T
    c = x @ (x_t.conj() if x_t.dtype.kind == "c" else x_t)
    c = (c * factor).astype(c.dtype)
    return c.squeeze()


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> LazyArray:
    """Pearson correlation coefficients (NumPy's corrcoef), clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.dtype.kind == "c":
        raise DTypeError("corrcoef of complex values is not supported")
    if c.ndim != 2:
        return c / c
    n = c.shape[0]
    d = c.reshape(-1)[::n + 1] if n else c.reshape(-1)
    stddev = sqrt(d.real)
    c = c / stddev[:, None]
    c = c / stddev[None, :]
    return c.clip(-1, 1)

# }}}


__all__ = ["quantile", "percentile", "nanquantile", "nanpercentile", "median", "nanmedian",
           "average", "nansum", "nanprod", "nancumsum", "nancumprod", "nanmean", "nanvar",
           "nanstd", "nanmax", "nanmin", "nanargmax", "nanargmin", "ptp", "cov", "corrcoef"]
