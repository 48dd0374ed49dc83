"""NumPy's functions that write into an array argument: ``put``,
``put_along_axis``, ``copyto``, ``place``, ``putmask``, ``fill_diagonal``,
as assignments into the lazy array (its aliases and views see them, as in
NumPy). Index arrays are read on the host (they decide which element gets
which value, later writes winning)."""

from __future__ import annotations

from typing import Any

import numpy as _np

from lazyarray.api.ufuncs import where as _where
from lazyarray.handle import LazyArray, asarray


def _target(a, name: str) -> LazyArray:
    if not isinstance(a, LazyArray):
        raise TypeError(f"{name}: the array written into must be a lazy array, "
                        f"not {type(a).__name__}")
    return a


def _host_index(ind) -> _np.ndarray:
    return _np.asarray(ind.get() if isinstance(ind, LazyArray) else ind)


def _values(a: LazyArray, v: Any, casting: str) -> LazyArray:
    """*v* converted to *a*'s dtype as NumPy's put (*casting* ``"unsafe"``),
    putmask and place (``"safe"``) convert it: numbers and sequences as
    NumPy converts them (a complex number into integers raises), arrays by
    *casting*."""
    if not isinstance(v, (LazyArray, _np.ndarray)):
        return asarray(_np.asarray(v, dtype=a.dtype))
    if not _np.can_cast(v.dtype, a.dtype, casting):  # type: ignore[arg-type]
        what = "scalar" if v.ndim == 0 else "array data"
        raise TypeError(f"Cannot cast {what} from {v.dtype!r} to {a.dtype!r} "
                        f"according to the rule '{casting}'")
    return asarray(v).astype(a.dtype)


def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """NumPy's put: ``a.flat[ind] = v`` (*v* repeated as needed), in place."""
    a = _target(a, "put")
    ind = _host_index(ind).reshape(-1).astype(_np.int64)
    n = a.size
    if mode == "wrap":
        ind = ind % n if n else ind
    elif mode == "clip":
        ind = _np.clip(ind, 0, max(n - 1, 0))
    elif mode != "raise":
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if ind.size == 0:
        return
    if ((ind < -n) | (ind >= n)).any():
        raise IndexError(f"index {int(ind[(ind < -n) | (ind >= n)][0])} is out of bounds "
                         f"for axis 0 with size {n}")
    values = _values(a, v, "unsafe").reshape(-1)
    if values.size == 0:
        return
    values = values[_np.arange(ind.size) % values.size]
    a.flat[ind] = values


def put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> None:
    """NumPy's put_along_axis: ``values`` written at *indices* along *axis*
    (the other axes matched), in place."""
    arr = _target(arr, "put_along_axis")
    index = _host_index(indices).astype(_np.int64)
    if axis is None:
        put(arr, index.reshape(-1), values)
        return
    axis = axis % arr.ndim if -arr.ndim <= axis < arr.ndim else axis
    if index.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    # (the other axes run over the array's own extents: an index of length 1
    # there broadcasts, as NumPy's)
    key: list = list(_np.indices(arr.shape, sparse=True))
    key[axis] = index
    arr[tuple(key)] = values


def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """NumPy's copyto: *src* (broadcast) written into *dst* where *where*."""
    dst = _target(dst, "copyto")
    src = asarray(src)
    if not _np.can_cast(src.dtype, dst.dtype, casting):  # type: ignore[arg-type]
        raise TypeError(f"Cannot cast array data from {src.dtype} to {dst.dtype} according "
                        f"to the rule '{casting}'")
    if where is True:
        dst[...] = src
    else:
        dst[...] = _where(where, src, dst)


def putmask(a: Any, mask: Any, values: Any) -> None:
    """NumPy's putmask: ``a[mask] = values`` with *values* repeated over
    *a*'s flat positions (not over the selected ones)."""
    a = _target(a, "putmask")
    values = _values(a, values, "safe").reshape(-1)
    if values.size == 0:
        return
    spread = values[_np.arange(a.size) % values.size].reshape(a.shape)
    a[...] = _where(mask, spread, a)


def place(arr: Any, mask: Any, vals: Any) -> None:
    """NumPy's place: the selected elements of *arr* get *vals* in order
    (repeated as needed)."""
    arr = _target(arr, "place")
    selected = _np.flatnonzero(_host_index(mask))
    if selected.size:
        values = _values(arr, vals, "safe").reshape(-1)
        if values.size == 0:
            raise ValueError("Cannot insert from an empty array!")
        arr.flat[selected] = values[_np.arange(selected.size) % values.size]


def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """NumPy's fill_diagonal: the main diagonal of *a* set to *val*."""
    a = _target(a, "fill_diagonal")
    positions = _np.arange(a.size).reshape(a.shape)
    shape = _np.zeros(a.shape, bool)
    _np.fill_diagonal(shape, True, wrap=wrap)
    put(a, positions[shape], val)


__all__ = ["put", "put_along_axis", "copyto", "putmask", "place", "fill_diagonal"]
