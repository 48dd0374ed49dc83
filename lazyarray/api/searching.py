"""Searching computed by NumPy on the host (the set functions are
:mod:`lazyarray.api.sets`). They compute their inputs first and upload the
result, so they are correct but not fused, and they cannot be used inside
``la.jit``. (Sorting runs on the device, :mod:`lazyarray.ops.sort`.)

Public names: nonzero, searchsorted, flatnonzero, HOST_FUNCTIONS, host_function.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from lazyarray.fallback import _note
from lazyarray.handle import LazyArray, asarray
from lazyarray.tracing import refuse_while_tracing

#: NumPy functions lazyarray computes on the host
HOST_FUNCTIONS = ("nonzero", "searchsorted", "flatnonzero")


def host_function(name: str) -> Callable:
    """``la.<name>``: NumPy's function applied to the computed arguments."""
    numpy_fn = getattr(np, name)

    def f(*args, **kwargs):
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


nonzero, searchsorted, flatnonzero = (host_function(name) for name in HOST_FUNCTIONS)

__all__ = list(HOST_FUNCTIONS)
