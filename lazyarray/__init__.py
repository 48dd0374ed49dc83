"""lazyarray: lazily evaluated NumPy-style arrays compiled to fused OpenCL kernels.

A first slice of the user API: ``asarray``, elementwise ufuncs (operators,
``np.sin(x)`` through ``__array_ufunc__`` and the functions below) with NumPy's
broadcasting and type promotion, and reductions (``sum``, ``prod``, ``max``,
``min``, ``any``, ``all``, ``mean``). Elementwise chains fuse into the kernel
of their consumer; reductions and results are stored. ``jit`` traces a function
once per argument signature and replays its kernels.
"""

from __future__ import annotations

import numpy as _np

from lazyarray.array import LazyArray, asarray
from lazyarray.errors import DTypeError, LazyArrayError, ShapeError
from lazyarray.jit import jit
from lazyarray.ops.elementwise import ELEMENTWISE as _ELEMENTWISE

__version__ = "0.1.0"

float32, float64, int32, int64, bool_ = (_np.float32, _np.float64, _np.int32, _np.int64,
                                         _np.bool_)
complex64, complex128, uint8, int8, int16, uint32 = (
    _np.complex64, _np.complex128, _np.uint8, _np.int8, _np.int16, _np.uint32)


def _ufunc_function(name):
    def f(*args):
        return getattr(_np, name)(*(asarray(a) if not isinstance(a, (int, float, complex))
                                    else a for a in args))
    f.__name__ = name
    f.__doc__ = f"NumPy's {name}, lazily."
    return f


for _name in _ELEMENTWISE:
    if _name not in ("where",) and hasattr(_np, _name):
        globals()[_name] = _ufunc_function(_name)


def where(condition, x, y) -> LazyArray:
    """Elements of *x* where *condition* holds, else of *y* (NumPy's where)."""
    from lazyarray.array import _node
    from lazyarray.ops.elementwise import elementwise
    return LazyArray(elementwise("where", _node(condition), _node(x), _node(y)))


def sum(x, axis=None, keepdims=False, dtype=None):   # noqa: A001 - NumPy's name
    return asarray(x).sum(axis, keepdims, dtype)


def max(x, axis=None, keepdims=False):                # noqa: A001
    return asarray(x).max(axis, keepdims)


def min(x, axis=None, keepdims=False):                # noqa: A001
    return asarray(x).min(axis, keepdims)


def mean(x, axis=None, keepdims=False, dtype=None):
    return asarray(x).mean(axis, keepdims, dtype)


def prod(x, axis=None, keepdims=False, dtype=None):
    return asarray(x).prod(axis, keepdims, dtype)


__all__ = ["LazyArray", "asarray", "jit", "where", "sum", "max", "min", "mean", "prod",
           "LazyArrayError", "ShapeError", "DTypeError", "__version__",
           "float32", "float64", "int32", "int64", "bool_", "complex64", "complex128",
           "uint8", "int8", "int16", "uint32", *[n for n in _ELEMENTWISE if n in globals()]]
