"""Elementwise functions that are not NumPy ufuncs (clip, isclose, round, ...)."""

from __future__ import annotations

import builtins as _builtins
import operator as _operator
from typing import Any

import numpy as _np

from lazyarray.api._device import dtype_probe
from lazyarray.api.manipulation import broadcast_to, concatenate
from lazyarray.api.ufuncs import (
    arctan2,
    copysign,
    floor_divide,
    isinf,
    isnan,
    not_equal,
    remainder,
    trunc,
    where,
)
from lazyarray.errors import DTypeError, ShapeError
from lazyarray.fallback import device_or_host, host_call
from lazyarray.handle import LazyArray, asarray
from lazyarray.ops import elementwise as _elementwise
from lazyarray.ops.elementwise import round_half_even
from lazyarray.ops.inputs import node_of as _node
from lazyarray.reduction_keywords import into

# {{{ ufunc-like functions that are not NumPy ufuncs

def real(x: Any) -> LazyArray:
    """The real part (the array itself for real dtypes)."""
    return asarray(x).real


def imag(x: Any) -> LazyArray:
    """The imaginary part (zeros for real dtypes)."""
    return asarray(x).imag


def round(x: Any, decimals: int = 0, out: Any = None) -> LazyArray:
    """NumPy's round: half to even, at *decimals* digits."""
    if out is not None:
        raise TypeError("lazyarray.round does not take out=")
    x = asarray(x)
    decimals = _operator.index(decimals)
    return device_or_host(lambda: LazyArray(round_half_even(x.node, decimals)),
                          _np.round, (x, decimals))


around = round


def clip(x: Any, /, min: Any = None, max: Any = None, out: Any = None, *, a_min: Any = None,
         a_max: Any = None) -> LazyArray:
    """*x* limited to ``[min, max]`` (NumPy's clip, also with its names
    *a_min*, *a_max*; NaN stays NaN; either bound may be None), or written
    into *out*. Python integers outside *x*'s integer type are clipped to it."""
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    x = asarray(x)

    def probe(v):
        return v if v is None else dtype_probe(v)

    # (NumPy resolves the three operands together: clip(bool, 3, uint8(200)) is uint8)
    with _np.errstate(all="ignore"):
        dtype = _np.clip(probe(x), probe(lo), probe(hi)).dtype
    result = x.astype(dtype) if dtype != x.dtype else x
    scalars = lo is not None and hi is not None and all(
        (v.ndim if hasattr(v, "ndim") else _np.ndim(v)) == 0 for v in (lo, hi))
    for bound, name in ((lo, "maximum"), (hi, "minimum")):
        if bound is None:
            continue
        if isinstance(bound, int) and not isinstance(bound, _builtins.bool) \
                and dtype.kind in "iu":
            info = _np.iinfo(dtype)
            bound = _builtins.min(_builtins.max(bound, int(info.min)), int(info.max))
        # (NumPy's clip between two scalar bounds keeps x on a tie, a signed
        # zero: the bound first; with an array bound, or one bound only
        # (maximum(x, lo), minimum(x, hi)), the bound wins a tie; a NaN bound
        # gives NaN either way)
        operands = (_node(bound), result.node) if scalars else (result.node, _node(bound))
        result = LazyArray(_elementwise.elementwise(name, *operands))
    if out is not None:
        target = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if not _np.can_cast(result.dtype, getattr(target, "dtype", result.dtype), "same_kind"):
            raise DTypeError(f"Cannot cast ufunc 'clip' output from {result.dtype!r} to "
                             f"{target.dtype!r} with casting rule 'same_kind'")
        return into(result, target)
    return result


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
            ) -> LazyArray:
    """NumPy's isclose, lazily."""
    return LazyArray(_elementwise.isclose(_node(a), _node(b), rtol, atol, equal_nan))


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
             ) -> _builtins.bool:
    """Whether every element of *a* is close to *b* (computes now)."""
    return _builtins.bool(isclose(a, b, rtol, atol, equal_nan).all())


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None, neginf: Any = None
               ) -> LazyArray:
    """NaN replaced by *nan*, infinities by *posinf*/*neginf* (by default the
    largest finite values of the dtype), as NumPy's nan_to_num."""
    x = asarray(x)
    for value in (nan, posinf, neginf):
        if value is not None and not isinstance(value, (int, float, _np.number)):
            raise TypeError(f"Cannot cast scalar from {_np.asarray(value).dtype!r} to "
                            f"{x.dtype!r} according to the rule 'same_kind'")
    if x.dtype.kind in "biu":
        return x
    if x.dtype.kind == "c":
        # each part on its own, as NumPy's (both finite then: re + 1j * im is exact)
        if not all(v is None or _np.isfinite(v) for v in (nan, posinf, neginf)):
            return host_call(_np.nan_to_num, (x, copy, nan, posinf, neginf), {})
        parts = [nan_to_num(part, copy, nan, posinf, neginf) for part in (x.real, x.imag)]
        # (finite values are x itself: rebuilt, a -0.0 imaginary part would be +0.0)
        return where(isnan(x) | isinf(x), (parts[0] + 1j * parts[1]).astype(x.dtype), x)
    info = _np.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    result = where(isnan(x), x.dtype.type(nan), x)
    result = where(isinf(x) & (x > 0), x.dtype.type(big), result)
    return where(isinf(x) & (x < 0), x.dtype.type(small), result)


def angle(z: Any, deg: bool = False) -> LazyArray:
    """The argument of complex *z* (radians, or degrees with *deg*)."""
    z = asarray(z)
    if z.dtype.kind == "c":
        result = arctan2(z.imag, z.real)
    elif z.dtype in (_np.int8, _np.uint8):
        raise DTypeError(f"angle of {z.dtype} computes in float16 in NumPy, which lazyarray "
                         "does not support; cast the array to float32 first")
    else:
        result = arctan2(0, z)      # (NumPy's types: float32 for int16, float64 for int32)
    return result * (180 / _np.pi) if deg else result


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None
         ) -> LazyArray:
    """The *n*-th differences along *axis* (NumPy's diff)."""
    a = asarray(a)
    if a.ndim == 0:
        raise ShapeError("diff requires input that is at least one dimensional")
    axis = _np.lib.array_utils.normalize_axis_index(_operator.index(axis), a.ndim)
    parts = []
    for extra in (prepend, append):
        if extra is not None:
            extra = asarray(extra)
            if extra.ndim == 0:
                shape = a.shape[:axis] + (1,) + a.shape[axis + 1:]
                extra = broadcast_to(extra, shape)
        parts.append(extra)
    if parts[0] is not None or parts[1] is not None:
        a = concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis=axis)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    head = (slice(None),) * axis
    for _ in range(n):
        later, earlier = a[head + (slice(1, None),)], a[head + (slice(None, -1),)]
        a = not_equal(later, earlier) if a.dtype == _np.bool_ else later - earlier
    return a


def divmod(x: Any, y: Any) -> tuple[LazyArray, LazyArray]:
    """NumPy's divmod: ``(x // y, x % y)``."""
    return floor_divide(x, y), remainder(x, y)


def modf(x: Any) -> tuple[LazyArray, LazyArray]:
    """NumPy's modf: the fractional and integral parts, with the sign of *x*."""
    x = asarray(x)
    if x.dtype.kind not in "f":
        x = x.astype(_np.modf(_np.zeros(0, x.dtype))[0].dtype)
    whole = trunc(x)
    frac = copysign(where(isinf(x), 0.0, x - whole), x)
    return frac, whole

# }}}


__all__ = ["real", "imag", "round", "around", "clip", "isclose", "allclose",
           "nan_to_num", "angle", "diff", "divmod", "modf"]
