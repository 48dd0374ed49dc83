"""Counting, binning and sampled data: NumPy's bincount, histogram,
histogram_bin_edges, digitize, interp, gradient and trapezoid, on the device.

Bins are found without sorting the data: by comparing each value with every
bin edge when there are at most :data:`~lazyarray.api._device.COMPARE_LIMIT`
edges, else by a bisection of gathers (``log2(edges)`` steps); counts are
reductions over "value in bucket k" (or, for many buckets and values, a sort
of the bucket indices on the device and two bisections per bucket). Output
lengths that depend on the data (bincount's, an automatic histogram range)
are computed first, which evaluates part of the graph; inside ``la.jit``
that raises ConcretizationError.
"""

from __future__ import annotations

import builtins as _builtins
import operator as _operator
from typing import Any

import numpy as _np

from lazyarray.api._device import gather, ndim_of, searchsorted_device, shape_of, tracing
from lazyarray.api.creation import arange, zeros
from lazyarray.api.elementwise import diff
from lazyarray.api.manipulation import concatenate, stack
from lazyarray.api.searching import host_function as _host_function
from lazyarray.api.sorting import argsort as _argsort
from lazyarray.api.ufuncs import isnan, where
from lazyarray.errors import DTypeError, ShapeError
from lazyarray.handle import LazyArray, asarray
from lazyarray.ops.reductions import normalize_axes as _normalize_axes

_INT64 = _np.dtype(_np.int64)
#: above this many (value, bucket) pairs, buckets are counted by sorting
#: inside ``la.jit`` (on a 2-core CPU the comparisons cost as much as the
#: sort at about 10**6 values and 500 buckets)
_PAIRS_LIMIT = 1 << 29
#: ... and outside it, by NumPy's bincount of the bucket indices on the host
#: (kernels have no scatter-add: the comparisons of 10**5 values with 1,000
#: buckets took 0.3 s on a 2-core CPU, the sort 19 ms, the host 2 ms)
_HOST_PAIRS = 1 << 22


def _host(x) -> _np.ndarray:
    return x.get() if isinstance(x, LazyArray) else _np.asarray(x)


# {{{ counting

def _bucket_sums(index: LazyArray, buckets: int, weights: LazyArray | None,
                 dtype) -> LazyArray:
    """For k in ``range(buckets)``: how many elements of the int64 *index*
    are k, or the sum of their *weights*, of *dtype* (indices outside the
    range are not counted)."""
    if buckets == 0 or index.size == 0:
        return zeros(buckets, dtype)
    pairs, traced = index.size * buckets, tracing()
    if pairs <= _PAIRS_LIMIT and (traced or pairs <= _HOST_PAIRS):
        match = index[:, None] == arange(buckets, dtype=_INT64)
        if weights is None:
            return match.sum(0, dtype=dtype)
        return where(match, weights[:, None], zeros((), weights.dtype)).sum(0, dtype=dtype)
    if not traced and pairs > _HOST_PAIRS:
        # NumPy's counts and sums, on the host (for sums also because
        # differences of one running sum, below, lose buckets of small weights
        # after large ones, and a float32 sum of many weights its last digits)
        host = index.get()
        inside = (host >= 0) & (host < buckets)
        sums = _np.bincount(host[inside], None if weights is None else weights.get()[inside],
                            minlength=buckets)
        return asarray(sums[:buckets].astype(dtype, copy=False))
    order = _argsort(index, kind="stable")
    ordered = gather(index, order)
    keys = arange(buckets, dtype=_INT64)
    first = searchsorted_device(ordered, keys, "left")
    last = searchsorted_device(ordered, keys, "right")
    if weights is None:
        return (last - first).astype(dtype)
    running = concatenate([zeros(1, dtype), gather(weights, order).cumsum(dtype=dtype)])
    return gather(running, last) - gather(running, first)


def bincount(x: Any, /, weights: Any = None, minlength: int = 0) -> LazyArray:
    """How often each value 0, 1, ... occurs in the non-negative integers
    *x* (or the sums of their *weights*, as float64), NumPy's bincount. The
    length depends on ``max(x)``, which is computed first."""
    x = asarray(x)
    if x.ndim != 1:
        raise ShapeError("object too deep for desired array" if x.ndim > 1 else
                         "object of too small depth for desired array")
    if x.dtype.kind not in "biu":
        raise DTypeError(f"Cannot cast array data from {x.dtype!r} to dtype('int64') "
                         "according to the rule 'safe'")
    minlength = _operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if x.size == 0:
        return zeros(minlength, _INT64)         # (NumPy's, with weights too)
    low, high = (int(v) for v in stack([x.min(), x.max()]).astype(_INT64).get())
    if low < 0:
        raise ValueError("'list' argument must have no negative elements")
    length = max(high + 1, minlength)
    if weights is None:
        return _bucket_sums(x.astype(_INT64), length, None, _INT64)
    weights = asarray(weights)
    if not _np.can_cast(weights.dtype, _np.float64):
        raise DTypeError(f"Cannot cast array data from {weights.dtype!r} to "
                         "dtype('float64') according to the rule 'safe'")
    weights = weights.astype(_np.float64)
    if weights.shape != x.shape:
        raise ValueError("The weights and list don't have the same length.")
    return _bucket_sums(x.astype(_INT64), length, weights, _np.float64)

# }}}


# {{{ histograms

def _outer_edges(a: LazyArray, range):
    """The first and last edge: *range*, or the data's extremes (computed)."""
    if range is not None:
        first, last = range
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (_np.isfinite(first) and _np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = stack([a.min(), a.max()]).get()
        if not (_np.isfinite(first) and _np.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def _edges(a: LazyArray, bins, range, weights):
    """The bin edges (a NumPy array for equal bins, else as given), and for
    equal bins ``(first, last, count)``."""
    if isinstance(bins, str):
        if weights is not None:
            raise TypeError("Automated estimation of the number of bins is not supported "
                            "for weighted data")
        # (NumPy's estimators look at the data: computed on the host)
        return _np.histogram_bin_edges(a.get(), bins, range), None
    if ndim_of(bins) == 0:
        try:
            count = _operator.index(bins)
        except TypeError as e:
            raise TypeError("`bins` must be an integer, a string, or an array") from e
        if count < 1:
            raise ValueError("`bins` must be positive, when an integer")
        first, last = _outer_edges(a, range)
        kind = _np.result_type(first, last, _np.empty(0, a.dtype))
        if kind.kind in "biu":
            kind = _np.result_type(kind, float)
        edges = _np.linspace(first, last, count + 1, endpoint=True, dtype=kind)
        if _np.any(edges[:-1] >= edges[1:]):
            raise ValueError(f"Too many bins for data range. Cannot create {count} "
                             "finite-sized bins.")
        return edges, (first, last, count)
    if ndim_of(bins) != 1:
        raise ValueError("`bins` must be 1d, when an array")
    if isinstance(bins, LazyArray):
        if not tracing() and _builtins.bool((bins[:-1] > bins[1:]).any()):
            raise ValueError("`bins` must increase monotonically, when an array")
        return bins, None
    bins = _np.asarray(bins)
    if _np.any(bins[:-1] > bins[1:]):
        raise ValueError("`bins` must increase monotonically, when an array")
    return bins, None


def _span(first, last) -> float:
    """``last - first`` as NumPy's histogram computes it (integers exactly)."""
    if isinstance(first, (int, _np.integer)) and isinstance(last, (int, _np.integer)):
        return float(int(last) - int(first))
    return last - first


def _equal_bins(a: LazyArray, edges: _np.ndarray, first, last, count: int) -> LazyArray:
    """The bin of each value for *count* equal bins (-1 outside them): the
    position from the value's offset, corrected against the edges."""
    values = a.astype(edges.dtype)
    keep = (a >= first) & (a <= last)
    guess = ((values - first) / _span(first, last)) * count
    guess = where(keep, guess, 0).astype(_INT64).clip(0, count - 1)
    edge = asarray(edges)
    guess = where(values < gather(edge, guess), guess - 1, guess)
    guess = where((values >= gather(edge, guess + 1)) & (guess != count - 1), guess + 1, guess)
    return where(keep, guess, -1)


def _histogram(a, bins, range, density, weights):
    a = asarray(a)
    if weights is not None:
        weights = asarray(weights)
        if weights.shape != a.shape:
            raise ValueError("weights should have the same shape as a.")
        weights = weights.reshape(-1)
    a = a.reshape(-1)
    edges, uniform = _edges(a, bins, range, weights)
    dtype = _INT64 if weights is None else weights.dtype
    if uniform is not None:
        bucket = _equal_bins(a, edges, *uniform)
        buckets = uniform[2]
    else:
        edge = asarray(edges)
        buckets = edge.shape[0] - 1
        if buckets < 1:
            raise ValueError("`bins` must have at least one edge interval") \
                if edge.shape[0] == 0 else ValueError("`bins` must have two edges at least")
        keep = (a >= edge[0]) & (a <= edge[-1])
        bucket = searchsorted_device(edge, a, "right") - 1
        bucket = where(keep, bucket.clip(None, buckets - 1), -1)
    counts = _bucket_sums(bucket, buckets, weights, dtype)
    if density:
        widths = diff(asarray(edges)).astype(_np.float64)
        counts = counts / widths / counts.sum()
    return counts, asarray(edges)


def histogram(a: Any, bins: int = 10, range: Any = None, density: Any = None,
              weights: Any = None) -> tuple[LazyArray, LazyArray]:
    """The counts (or weight sums, or a density) of *a* in *bins*, and the
    bin edges (NumPy's histogram). Equal bins: the edges come from the two
    outer values (the data's extremes are computed first when *range* is
    None); each value's bin is found on the device, and the bins counted
    there (more than 4 * 2**20 values times bins outside ``la.jit``: by
    NumPy's bincount on the host). Explicit edges are searched on the device;
    string estimators (``'auto'``, ...) compute the edges on the host with NumPy."""
    return _histogram(a, bins, range, density, weights)


def histogram_bin_edges(a: Any, bins: int = 10, range: Any = None, weights: Any = None
                        ) -> LazyArray:
    """The edges :func:`histogram` would use (NumPy's histogram_bin_edges)."""
    edges, _ = _edges(asarray(a).reshape(-1), bins, range, weights)
    return asarray(edges)


def _direction(bins) -> int | None:
    """1 for non-decreasing *bins*, -1 for non-increasing, 0 otherwise; None
    for lazy bins while la.jit traces (each call decides)."""
    if isinstance(bins, LazyArray):
        if tracing():
            return None
        bins = bins.get()
    up, down = _np.any(bins[1:] > bins[:-1]), _np.any(bins[1:] < bins[:-1])
    return 0 if up and down else -1 if down else 1


def digitize(x: Any, bins: Any, right: bool = False) -> LazyArray:
    """The index of the bin of each value of *x* (NumPy's digitize), found on
    the device. Increasing and decreasing *bins* are allowed (lazy ones are
    computed for that check)."""
    x = asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("x may not be complex")
    if ndim_of(bins) != 1:
        raise ValueError("bins must be one-dimensional")
    direction = _direction(bins if isinstance(bins, LazyArray) else _np.asarray(bins))
    if direction == 0:
        raise ValueError("bins must be monotonically increasing or decreasing")
    bins = asarray(bins)
    side = "left" if right else "right"
    if direction == 1 or bins.shape[0] < 2:
        return searchsorted_device(bins, x, side)
    falling = bins.shape[0] - searchsorted_device(bins[::-1], x, side)
    if direction == -1:
        return falling
    # (traced bins: the direction of each call's; bins that are neither
    # increasing nor decreasing are not detected inside la.jit)
    return where(bins[-1] < bins[0], falling, searchsorted_device(bins, x, side))

# }}}


# {{{ sampled functions

def _interp_real(x, xp, fp, left, right, by_reciprocal: bool = False) -> LazyArray:
    n = xp.shape[0]
    first, last = fp[0], fp[-1]
    low = first if left is None else left
    high = last if right is None else right
    if n == 1:
        return where(x < xp[0], low, where(x > xp[0], high, first))
    j = (searchsorted_device(xp, x, "right") - 1).clip(0, n - 2)
    x0, x1, y0, y1 = gather(xp, j), gather(xp, j + 1), gather(fp, j), gather(fp, j + 1)
    # (NumPy's slopes of complex values multiply by the reciprocal width)
    slope = (y1 - y0) * (1.0 / (x1 - x0)) if by_reciprocal else (y1 - y0) / (x1 - x0)
    result = slope * (x - x0) + y0
    result = where(isnan(result), slope * (x - x1) + y1, result)
    result = where(isnan(result) & (y0 == y1), y0, result)
    result = where(x == x0, y0, result)
    result = where(x == xp[-1], last, result)
    result = where(x > xp[-1], high, where(x < xp[0], low, result))
    return where(isnan(x), x, result)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
           ) -> LazyArray:
    """Piecewise linear interpolation of the points (*xp*, *fp*) at *x*
    (NumPy's interp, float64 or complex128), on the device: the interval of
    each value is found by comparisons with every *xp* (up to 32 of them) or
    by bisection; with *period*, *xp* is sorted on the host. Complex *fp*
    is interpolated part by part (exact for finite imaginary parts)."""
    x = asarray(x).astype(_np.float64)
    xp = asarray(xp).astype(_np.float64)
    fp = asarray(fp)
    complex_fp = fp.dtype.kind == "c"
    fp = fp.astype(_np.complex128 if complex_fp else _np.float64)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError("object of too small depth for desired array" if xp.ndim == 0
                         else "object too deep for desired array")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xp.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        left = right = None
        x, xp = x % period, xp % period
        order = _host_function("argsort")(xp)
        xp, fp = gather(xp, order), gather(fp, order)
        xp = concatenate([xp[-1:] - period, xp, xp[0:1] + period])
        fp = concatenate([fp[-1:], fp, fp[0:1]])
    if not complex_fp:
        return _interp_real(x, xp, fp, left, right)
    parts = []
    for part in ("real", "imag"):
        bounds = [None if b is None else getattr(_np.complex128(b), part) for b in (left, right)]
        parts.append(_interp_real(x, xp, getattr(fp, part), *bounds, by_reciprocal=True))  # type: ignore[misc, arg-type]
    # (an infinite imaginary part makes the real part NaN here)
    return parts[0] + parts[1] * 1j


def _along(values, axis: int, ndim: int):
    """1-D *values* shaped to broadcast along *axis* of an *ndim*-array."""
    return values.reshape(tuple(-1 if d == axis else 1 for d in range(ndim)))


def _spacing(distances, extent: int):
    """A spacing argument of gradient: a scalar, or the differences of 1-D
    coordinates (one scalar when they are equal)."""
    if ndim_of(distances) == 0:
        return distances
    if ndim_of(distances) != 1:
        raise ValueError("distances must be either scalars or 1d")
    if shape_of(distances)[0] != extent:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    if isinstance(distances, LazyArray):
        if distances.dtype.kind in "biu":
            distances = distances.astype(_np.float64)
        steps = diff(distances)
        if not tracing() and steps.size and _builtins.bool((steps == steps[0]).all()):
            return steps[0]
        return steps
    distances = _np.asarray(distances)
    if distances.dtype.kind in "biu":
        distances = distances.astype(_np.float64)
    steps = _np.diff(distances)
    return steps[0] if steps.size and (steps == steps[0]).all() else steps


def gradient(f: Any, *varargs: Any, axis: Any = None,
             edge_order: int = 1) -> LazyArray | tuple[LazyArray, ...]:
    """Second-order accurate central differences inside, first or second
    order one-sided differences at the ends (NumPy's gradient), with scalar
    or coordinate spacings; one array per axis (a tuple for several)."""
    f = asarray(f)
    ndim = f.ndim
    axes = tuple(range(ndim)) if axis is None else tuple(
        _normalize_axes(a, ndim)[0] for a in ((axis,) if ndim_of(axis) == 0 else axis))
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
    if not varargs:
        spacings: list[Any] = [1.0] * len(axes)
    elif len(varargs) == 1 and ndim_of(varargs[0]) == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = [_spacing(d, f.shape[a]) for d, a in zip(varargs, axes)]
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    otype = f.dtype
    if otype.kind in "biu":
        f, otype = f.astype(_np.float64), _np.dtype(_np.float64)
    results = []
    for ax, h in zip(axes, spacings):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        head = (slice(None),) * ax

        def part(start, stop=None) -> LazyArray:
            return f[head + (slice(start, stop),)]  # noqa: B023 (used in this pass)

        uniform = ndim_of(h) == 0
        if uniform:
            inner = (part(2) - part(None, -2)) / (2.0 * h)
        else:
            h1, h2 = h[:-1], h[1:]
            wa = _along(-h2 / (h1 * (h1 + h2)), ax, ndim)
            wb = _along((h2 - h1) / (h1 * h2), ax, ndim)
            wc = _along(h1 / (h2 * (h1 + h2)), ax, ndim)
            inner = wa * part(None, -2) + wb * part(1, -1) + wc * part(2)
        if edge_order == 1:
            start = (part(1, 2) - part(0, 1)) / (h if uniform else h[0])
            end = (part(-1) - part(-2, -1)) / (h if uniform else h[-1])
        else:
            if uniform:
                ca, cb, cc = -1.5 / h, 2.0 / h, -0.5 / h
                da, db, dc = 0.5 / h, -2.0 / h, 1.5 / h
            else:
                h1, h2 = h[0], h[1]
                ca, cb, cc = (-(2.0 * h1 + h2) / (h1 * (h1 + h2)), (h1 + h2) / (h1 * h2),
                              -h1 / (h2 * (h1 + h2)))
                h1, h2 = h[-2], h[-1]
                da, db, dc = (h2 / (h1 * (h1 + h2)), -(h2 + h1) / (h1 * h2),
                              (2.0 * h2 + h1) / (h2 * (h1 + h2)))
            start = ca * part(0, 1) + cb * part(1, 2) + cc * part(2, 3)
            end = da * part(-3, -2) + db * part(-2, -1) + dc * part(-1)
        kind = _np.result_type(start.dtype, inner.dtype, end.dtype)
        results.append(concatenate([start.astype(kind), inner.astype(kind),
                                    end.astype(kind)], axis=ax).astype(otype))
    return results[0] if len(axes) == 1 else tuple(results)


def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> LazyArray:
    """The integral of *y* along *axis* by the trapezoidal rule, at sample
    points *x* or spacing *dx* (NumPy's trapezoid)."""
    y = asarray(y)
    (axis,) = _normalize_axes(axis, y.ndim)
    if x is None:
        d: Any = dx
    else:
        x = asarray(x)
        d = _along(diff(x), axis, y.ndim) if x.ndim == 1 else diff(x, axis=axis)
    head = (slice(None),) * axis
    upper, lower = y[head + (slice(1, None),)], y[head + (slice(None, -1),)]
    return (d * (upper + lower) / 2.0).sum(axis)

# }}}


__all__ = ["bincount", "histogram", "histogram_bin_edges", "digitize", "interp", "gradient",
           "trapezoid"]
