"""Operations computed by NumPy on the host: searching and set functions.
They compute their inputs first and upload the result, so they are correct
but not fused, and they cannot be used inside ``la.jit``. (Sorting runs on
the device, :mod:`lazyarray.ops.sort`; ``host_function("sort")`` and
``host_function("argsort")`` remain NumPy's, with the Array API's
*descending*.)

Public names: HOST_FUNCTIONS, host_function.
"""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

from lazyarray.tracing import refuse_while_tracing

#: NumPy functions lazyarray computes on the host
HOST_FUNCTIONS = ("nonzero", "searchsorted", "unique", "unique_values",
                  "unique_counts", "unique_inverse", "unique_all", "flatnonzero")


def _argsort(x, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """NumPy's argsort, with the Array API's *descending* (ties keep their
    order when *stable*, the default there)."""
    if not descending:
        return np.argsort(x, axis=axis, kind=kind, order=order, stable=stable)
    x = np.asarray(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    backwards = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return x.shape[axis] - 1 - np.flip(backwards, axis)


def _sort(x, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """NumPy's sort, with the Array API's *descending*."""
    if not descending:
        return np.sort(x, axis=axis, kind=kind, order=order, stable=stable)
    x = np.asarray(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    return np.take_along_axis(x, _argsort(x, axis, descending=True), axis)


_WITH_ARRAY_API_ARGUMENTS = {"sort": _sort, "argsort": _argsort}


def host_function(name: str) -> Callable:
    """``la.<name>``: NumPy's function applied to the computed arguments."""
    numpy_fn = _WITH_ARRAY_API_ARGUMENTS.get(name) or getattr(np, name)

    def f(*args, **kwargs):
        from lazyarray.fallback import _note
        from lazyarray.handle import LazyArray, asarray
        refuse_while_tracing(f"la.{name}")
        _note(f"la.{name}")
        host_args = [a.get() if isinstance(a, LazyArray) else a for a in args]
        host_kwargs = {k: v.get() if isinstance(v, LazyArray) else v
                       for k, v in kwargs.items()}
        result = numpy_fn(*host_args, **host_kwargs)
        if isinstance(result, tuple):
            values = [asarray(r) for r in result]
            return type(result)(*values) if hasattr(result, "_fields") else tuple(values)
        return asarray(result)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"NumPy's {name}, computed on the host (inputs are computed first)."
    try:
        f.__signature__ = inspect.signature(numpy_fn)       # type: ignore[attr-defined]
    except (TypeError, ValueError):
        pass
    return f
