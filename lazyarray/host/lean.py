"""NumPy's reductions of small host arrays without NumPy's Python-level
wrappers: ``np.sum(x)``, ``np.mean(x)``, ``x.mean()``, ``np.max(x)``,
``np.argmax(x)``, ``np.cumsum(x)`` and the like cost
NumPy two to four microseconds of argument handling around a ufunc
reduction of a microsecond; a loop of window means or convergence norms
pays it every step. Each function here takes the common call (a NumPy
array, at most an integer axis) to the ufunc or method NumPy itself ends in,
with NumPy's dtypes, divisions and roundings, and hands every other call to
NumPy's function: the answers are NumPy's, bit for bit (tests compare them).

Public names: FUNCTIONS, METHODS, BY_FUNCTION.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

_ndarray = np.ndarray
_intp = np.intp
_float64 = np.dtype(np.float64)
_float64_scalar = np.float64
_bool = np.dtype(np.bool_)
_add = np.add.reduce
_multiply = np.multiply.reduce
_maximum = np.maximum.reduce
_minimum = np.minimum.reduce
_or = np.logical_or.reduce
_and = np.logical_and.reduce
_divide = np.true_divide


#: what :func:`_axis` answers for a call that is not the common one
_OTHER = object()


def _axis(a: Any, args: tuple, kwargs: dict) -> Any:
    """The axis of ``f(a, *args, **kwargs)`` when that is the common call (a
    NumPy array and at most an axis, None or an integer), else _OTHER."""
    if type(a) is not _ndarray:
        return _OTHER
    if kwargs:
        if args or len(kwargs) != 1 or "axis" not in kwargs:
            return _OTHER
        axis = kwargs["axis"]
    elif not args:
        return None
    elif len(args) == 1:
        axis = args[0]
    else:
        return _OTHER
    return axis if axis is None or type(axis) is int else _OTHER


def _reduction(numpy_function: Callable, reduce: Callable, dtype: np.dtype | None = None
               ) -> Callable:
    """``numpy_function`` (``np.sum``, ``np.max``, ...), whose common call is
    ``reduce(a, axis[, dtype])`` in NumPy's own code."""
    def lean(a, *args, **kwargs):
        axis = _axis(a, args, kwargs)
        if axis is _OTHER:
            return numpy_function(a, *args, **kwargs)
        return reduce(a, axis) if dtype is None else reduce(a, axis, dtype)
    lean.__name__ = lean.__qualname__ = numpy_function.__name__
    return lean


def _by_method(numpy_function: Callable, name: str) -> Callable:
    """``numpy_function`` (``np.argmax``, ``np.cumsum``), whose common call
    is the array's method *name* in NumPy's own code."""
    method = getattr(_ndarray, name)

    def lean(a, *args, **kwargs):
        axis = _axis(a, args, kwargs)
        if axis is _OTHER:
            return numpy_function(a, *args, **kwargs)
        return method(a, axis)
    lean.__name__ = lean.__qualname__ = numpy_function.__name__
    return lean


def _count(a: np.ndarray, axis: Any) -> int | None:
    """How many elements a reduction of *a* over *axis* takes, or None for
    an axis NumPy's own code should judge."""
    if axis is None:
        return a.size
    if type(axis) is int and -a.ndim <= axis < a.ndim:
        return a.shape[axis]
    return None


def _sum_dtype(a: np.ndarray) -> tuple[bool, np.dtype | None]:
    """Whether *a*'s mean takes the lean path, and the dtype NumPy sums it
    in (float64 for integers and booleans; float16's float32 is left to NumPy)."""
    kind = a.dtype.kind
    if kind in "biu":
        return True, _float64
    return (kind == "c" or (kind == "f" and a.dtype.itemsize >= 4)) and a.dtype.isnative, None


def _mean_of(a: np.ndarray, axis: Any) -> Any:
    """NumPy's ``a.mean(axis)``: the sum divided by the count as NumPy's
    ``_mean`` divides it (by an intp, into the sum's dtype)."""
    lean, dtype = _sum_dtype(a)
    n = _count(a, axis) if lean else None
    if not n:       # (no elements: NumPy's warning and NaN)
        return _ndarray.mean(a, axis)
    total = _add(a, axis, dtype)
    kind = type(total)
    if kind is _ndarray:
        return _divide(total, _intp(n), out=total, casting="unsafe")
    if kind is _float64_scalar:
        return total / n        # (a float64 by a count below 2**53: the same division)
    return total.dtype.type(total / _intp(n))


def mean(a, *args, **kwargs):
    """NumPy's ``np.mean``."""
    axis = _axis(a, args, kwargs)
    if axis is _OTHER:
        return np.mean(a, *args, **kwargs)
    return _mean_of(a, axis)


def mean_method(a, *args, **kwargs):
    """NumPy's ``ndarray.mean``."""
    axis = _axis(a, args, kwargs)
    if axis is _OTHER:
        return _ndarray.mean(a, *args, **kwargs)
    return _mean_of(a, axis)


#: NumPy's functions with a lean version, by name
FUNCTIONS: dict[str, Callable] = {
    "sum": _reduction(np.sum, _add),
    "prod": _reduction(np.prod, _multiply),
    "max": _reduction(np.max, _maximum),
    "amax": _reduction(np.amax, _maximum),
    "min": _reduction(np.min, _minimum),
    "amin": _reduction(np.amin, _minimum),
    "any": _reduction(np.any, _or, _bool),
    "all": _reduction(np.all, _and, _bool),
    "argmax": _by_method(np.argmax, "argmax"),
    "argmin": _by_method(np.argmin, "argmin"),
    "cumsum": _by_method(np.cumsum, "cumsum"),
    "cumprod": _by_method(np.cumprod, "cumprod"),
    "mean": mean,
}
#: NumPy array methods with a lean version, by name
METHODS: dict[str, Callable] = {"mean": mean_method}
#: the lean versions by NumPy's function (what NumPy's protocol hands a host array)
BY_FUNCTION: dict[Callable, Callable] = {getattr(np, name): lean
                                          for name, lean in FUNCTIONS.items()}

__all__ = ["FUNCTIONS", "METHODS", "BY_FUNCTION"]
