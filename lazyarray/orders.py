"""NumPy's *order* argument of ``reshape``, ``ravel`` and ``flatten`` on lazy
arrays: ``"C"`` (row-major, lazyarray's own order), ``"F"`` (column-major:
the same done on the transposes), ``"A"`` (F where the array is a
Fortran-contiguous view, else C) and ``"K"`` (the order of the elements in
memory, for ``ravel`` and ``flatten``).

Also *mode* of ``take`` (indices out of bounds wrapped or clipped).

Public names: memory_order, reshaped, raveled, in_bounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_NAMES = {"C": "C", "F": "F", "A": "A", "K": "K"}


def memory_order(x: Any, order: Any, keep: bool) -> str:
    """*order* (NumPy's spelling, None for ``"C"``) resolved for the lazy
    array *x*: ``"C"``, ``"F"``, or with *keep* (``ravel``'s ``"K"``)
    ``"K"`` where the elements lie in neither order."""
    name = "C" if order is None else _NAMES.get(str(order).upper())
    if name is None:
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if name == "K" and not keep:
        raise ValueError("order 'K' is not permitted for reshaping")
    if name in "CF":
        return name
    layout = _layout(x)
    if layout is None or layout.flags.c_contiguous:
        return "C"
    if layout.flags.f_contiguous:
        return "F"
    return "C" if name == "A" else "K"


def _layout(x: Any) -> np.ndarray | None:
    """An array laid out as *x* (its shape and strides), or None where *x* is
    an array of its own, in C order: a view's layout, a host array's buffer."""
    host = getattr(x, "_hv", None)
    if host is not None:
        return np.asarray(host)
    return None if x._base is None else x._layout()


def reshaped(x: Any, shape: tuple, order: Any, copy: bool | None) -> Any:
    """``x.reshape(shape, order=order, copy=copy)``."""
    if memory_order(x, order, keep=False) == "C":
        return x._reshape_c(shape, copy)
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = tuple(shape[0])
    # (column-major: the transpose's elements in row-major order)
    return x.T._reshape_c(tuple(reversed(shape)), copy).T


def raveled(x: Any, order: Any, copy: bool) -> Any:
    """``x.ravel(order)`` (a view where NumPy's is one), or with *copy*
    ``x.flatten(order)``."""
    resolved = memory_order(x, order, keep=True)
    if resolved in "CF":
        rows = x if resolved == "C" else x.T
        layout = _layout(rows)
        if copy or not (layout is None or layout.flags.c_contiguous):
            return rows._reshape_c((-1,), True)
        return rows._reshape_c((rows.size,), None)
    # the elements in memory order: NumPy's order of a fresh array laid out
    # as this one's strides, over the row-major positions
    positions = np.empty_like(_layout(x), dtype=np.int64)
    positions[...] = np.arange(x.size).reshape(x.shape)
    return x._reshape_c((-1,), True)[positions.ravel(order="K")]


def _index_array(indices: Any) -> Any:
    """*indices* as an array (lazy or NumPy): sequences and numbers converted
    to NumPy's index type as NumPy converts them (floats truncated)."""
    return indices if hasattr(indices, "dtype") else np.asarray(indices, dtype=np.intp)


def in_bounds(x: Any, indices: Any, axis: int | None, out: None, mode: str) -> Any:
    """*indices* of ``x.take(indices, axis, mode=mode)`` brought inside the
    axis as NumPy's *mode* says (``"raise"``: as they are, checked later)."""
    if out is not None:
        raise TypeError("take(): out= is not supported on lazy arrays (assign the result)")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    indices = _index_array(indices)
    dtype = np.dtype(indices.dtype)
    if dtype.kind not in "iub":
        raise TypeError(f"Cannot cast array data from {dtype!r} to dtype('int64') "
                        "according to the rule 'same_kind' (take's indices)")
    if dtype.kind == "b" or mode != "raise":
        # (NumPy takes booleans as the positions 0 and 1, not as a mask)
        indices = x._namespace.asarray(indices).astype(np.int64, copy=False)
    if mode == "raise":
        return indices
    extent = x.size if axis is None else x.shape[
        np.lib.array_utils.normalize_axis_index(axis, x.ndim)]
    if extent == 0:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    if mode == "wrap":
        return x._namespace.remainder(indices, extent)
    return x._namespace.clip(indices, 0, extent - 1)


__all__ = ["memory_order", "reshaped", "raveled", "in_bounds"]
