"""Set functions: NumPy's ``unique`` and the Array API's ``unique_values``,
``unique_counts``, ``unique_inverse`` and ``unique_all``, computed by NumPy
on the host (their sizes depend on the values).

The unique values come sorted, as NumPy returns them from ``unique`` and as
every other Array API library does (NumPy 2.3+'s ``unique_values`` and
friends may return them in any order; scikit-learn's label encoding needs
them sorted). Counts, first indices and inverse indices are consistent with
that order. The Array API functions treat NaNs as distinct (each NaN is its
own value, NumPy 2's ``equal_nan=False``); ``unique`` merges them
(``equal_nan=True`` by default).

Public names: unique, unique_values, unique_counts, unique_inverse,
unique_all, UniqueAllResult, UniqueCountsResult, UniqueInverseResult.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from lazyarray.fallback import _note
from lazyarray.handle import LazyArray, asarray
from lazyarray.tracing import refuse_while_tracing
from lazyarray.values import made_on_host


class UniqueAllResult(NamedTuple):
    """``unique_all``'s result."""
    values: LazyArray
    indices: LazyArray
    inverse_indices: LazyArray
    counts: LazyArray


class UniqueCountsResult(NamedTuple):
    """``unique_counts``'s result."""
    values: LazyArray
    counts: LazyArray


class UniqueInverseResult(NamedTuple):
    """``unique_inverse``'s result."""
    values: LazyArray
    inverse_indices: LazyArray


def _host_value(x: Any, name: str) -> np.ndarray:
    """*x* computed and on the host (refused inside ``la.jit``; noted as a
    host computation)."""
    refuse_while_tracing(f"la.{name}")
    _note(f"la.{name}")
    return np.asarray(x.get() if isinstance(x, LazyArray) else x)


def _lazy(value: np.ndarray, name: str) -> LazyArray:
    """*value* (NumPy's result) as a lazy array recorded as made on the host."""
    result = asarray(value)
    made_on_host(result.node, f"la.{name}")
    return result


def _sorted_unique(x: Any, name: str) -> tuple[np.ndarray, ...]:
    """Sorted unique values of *x* (NaNs distinct), first indices, inverse
    indices in *x*'s shape and counts."""
    host = _host_value(x, name)
    values, first, inverse, counts = np.unique(
        host, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    return values, first, inverse.reshape(host.shape), counts


def unique_values(x: Any, /) -> LazyArray:
    """The distinct elements of *x*, sorted (NaNs distinct, last)."""
    values = _sorted_unique(x, "unique_values")[0]
    return _lazy(values, "unique_values")


def unique_counts(x: Any, /) -> UniqueCountsResult:
    """The sorted distinct elements of *x* and how often each occurs."""
    values, _, _, counts = _sorted_unique(x, "unique_counts")
    return UniqueCountsResult(_lazy(values, "unique_counts"), _lazy(counts, "unique_counts"))


def unique_inverse(x: Any, /) -> UniqueInverseResult:
    """The sorted distinct elements of *x* and, in *x*'s shape, the position
    of each element of *x* among them."""
    values, _, inverse, _ = _sorted_unique(x, "unique_inverse")
    return UniqueInverseResult(_lazy(values, "unique_inverse"),
                               _lazy(inverse, "unique_inverse"))


def unique_all(x: Any, /) -> UniqueAllResult:
    """The sorted distinct elements of *x*, the index of each one's first
    occurrence in flattened *x*, the inverse indices (in *x*'s shape) and
    the counts."""
    return UniqueAllResult(*(_lazy(v, "unique_all") for v in _sorted_unique(x, "unique_all")))


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           sorted: bool = True) -> LazyArray | tuple[LazyArray, ...]:
    """NumPy's unique: the sorted distinct elements (or sub-arrays along
    *axis*) and, as asked, first indices, inverse indices and counts."""
    host = _host_value(ar, "unique")
    result = np.unique(host, return_index, return_inverse,  # type: ignore[call-overload]
                       return_counts, axis,
                       equal_nan=equal_nan, sorted=sorted)
    if isinstance(result, tuple):
        return tuple(_lazy(r, "unique") for r in result)
    return _lazy(result, "unique")


__all__ = ["unique", "unique_values", "unique_counts", "unique_inverse", "unique_all"]
