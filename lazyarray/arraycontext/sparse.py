"""Sparse (CSR) matrix times array on the device, as lazy operations.

Row ``r`` of the product sums ``values[k] * x[cols[k]]`` over the entries
``k`` of the row (``starts[r] <= k < starts[r + 1]``). The rows are laid out
to the longest row's length ``w``: entry ``j`` of row ``r`` is
``starts[r] + j`` where that is before the row's end, else a masked zero; the
product is then a gather, a ``where`` and a sum over ``j`` (one fused
reduction; exact, no prefix-sum cancellation). ``w`` is read from the device
once per matrix (row starts) and kept.

Public names: csr_matmul, longest_row.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any

import numpy as np

import lazyarray as la
from lazyarray.handle import LazyArray

_ROW_LENGTH: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def longest_row(row_starts: Any) -> int:
    """The most entries in one row, from the row starts (computed once per
    row-starts array, kept while it lives)."""
    try:
        cached = _ROW_LENGTH.get(row_starts)
    except TypeError:           # (unhashable or not weak-referenceable)
        cached = None
    if cached is not None:
        return cached
    starts: Any = la.asarray(row_starts)
    n = int(la.max(starts[1:] - starts[:-1]).get()) if starts.shape[0] > 1 else 0
    with contextlib.suppress(TypeError):
        _ROW_LENGTH[row_starts] = n
    return n


def csr_matmul(shape: tuple[int, int], values: Any, cols: Any, row_starts: Any,
               x: Any) -> LazyArray:
    """``A @ x`` for the CSR matrix ``A`` of *shape* (*values*, column indices
    *cols*, *row_starts* of length rows + 1); *x* has ``shape[1]`` rows and
    any trailing axes."""
    nrows = shape[0]
    x = la.asarray(x)
    starts: Any
    values, cols, starts = la.asarray(values), la.asarray(cols), la.asarray(row_starts)
    trailing = tuple(x.shape[1:])
    dtype = np.result_type(values.dtype, x.dtype)
    width = longest_row(row_starts)
    if nrows == 0 or width == 0 or values.shape[0] == 0:
        return la.zeros((nrows, *trailing), dtype)
    first: Any = starts[:-1].astype(np.int64)
    end = starts[1:].astype(np.int64)
    entry = first[:, None] + la.arange(width, dtype=np.int64)[None, :]     # (rows, w)
    inside = entry < end[:, None]
    safe = la.where(inside, entry, 0)
    coefficient = la.where(inside, values[safe], 0)                        # (rows, w)
    column = cols.astype(np.int64)[safe]                                   # (rows, w)
    gathered = x[column]                                                   # (rows, w, ...)
    expand = (slice(None), slice(None)) + (None,) * len(trailing)
    return la.sum(coefficient[expand] * gathered, axis=1).astype(dtype)


__all__ = ["csr_matmul", "longest_row"]
