"""Operations computed by NumPy on the host: sorting, searching and set
functions. They compute their inputs first and upload the result, so they
are correct but not fused, and they cannot be used inside ``la.jit``.

Public names: HOST_FUNCTIONS, host_function.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from lazyarray.runtime import refuse_while_tracing

#: NumPy functions lazyarray computes on the host
HOST_FUNCTIONS = ("sort", "argsort", "nonzero", "searchsorted", "unique", "unique_values",
                  "unique_counts", "unique_inverse", "unique_all", "flatnonzero")


def host_function(name: str) -> Callable:
    """``la.<name>``: NumPy's function applied to the computed arguments."""
    numpy_fn = getattr(np, name)

    def f(*args, **kwargs):
        from lazyarray.array import LazyArray, asarray
        refuse_while_tracing(f"la.{name}")
        host_args = [a.get() if isinstance(a, LazyArray) else a for a in args]
        result = numpy_fn(*host_args, **kwargs)
        if isinstance(result, tuple):
            values = [asarray(r) for r in result]
            return type(result)(*values) if hasattr(result, "_fields") else tuple(values)
        return asarray(result)

    f.__name__ = name
    f.__doc__ = f"NumPy's {name}, computed on the host (inputs are computed first)."
    return f
