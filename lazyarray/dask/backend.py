"""``LazyArray`` as a Dask chunk type, and the ``lazyarray`` array backend.

Importing this module registers ``LazyArray`` with ``dask.array`` (a chunk
type that dask arrays wrap instead of converting, and Dask's dispatch
functions: concatenate, take, tensordot, einsum, empty, numel, percentile,
to-NumPy). The entry point ``lazyarray`` of the group
``dask.array.backends`` (setup.cfg) names :class:`LazyArrayBackendEntrypoint`:
with ``dask.config.set({"array.backend": "lazyarray"})`` Dask's creation
functions (``ones``, ``zeros``, ``full``, ``empty``, ``arange``) make lazy
chunks, and ``x.to_backend("lazyarray")`` moves NumPy chunks to the device.

Chunks stay lazy arrays between tasks; concatenations (``rechunk``,
``overlap``) and the constant boundaries of ``overlap`` are lazy arrays too.
Lazy chunks live on one process's device: use the threaded or synchronous
scheduler with them (a ``distributed`` cluster moves NumPy blocks: see
:func:`lazyarray.dask.map_blocks`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from dask import config
from dask.array.backends import ArrayBackendEntrypoint
from dask.array.chunk_types import register_chunk_type
from dask.array.dispatch import (
    concatenate_lookup,
    einsum_lookup,
    empty_lookup,
    nannumel_lookup,
    numel_lookup,
    percentile_lookup,
    take_lookup,
    tensordot_lookup,
    to_numpy_dispatch,
)
from dask.utils import Dispatch

import lazyarray as la
from lazyarray.handle import LazyArray

if TYPE_CHECKING:
    from dask.array import Array as DaskArray

#: moving a chunk to the device (``x.to_backend("lazyarray")``)
to_lazyarray_dispatch = Dispatch("to_lazyarray_dispatch")


@to_lazyarray_dispatch.register(np.ndarray)
def _numpy_to_lazy(data, **kwargs):
    return la.asarray(data, **kwargs)


@to_lazyarray_dispatch.register(LazyArray)
def _lazy_to_lazy(data, **kwargs):
    return data


@to_numpy_dispatch.register(LazyArray)
def _lazy_to_numpy(data, **kwargs):
    return data.get()


def _numel(x, **kwargs):
    """The number of elements a reduction over *axis* of the chunk *x* sees."""
    axis, keepdims = kwargs.get("axis"), kwargs.get("keepdims", False)
    dtype = np.dtype(kwargs.get("dtype", np.float64))
    shape = tuple(x.shape)
    if axis is None:
        n = math.prod(shape)
        return la.full((1,) * len(shape), n, dtype=dtype) if keepdims else dtype.type(n)
    axes = {a % len(shape) for a in ((axis,) if isinstance(axis, int) else axis)}
    n = math.prod(shape[a] for a in axes)
    out = tuple(1 if k in axes else m for k, m in enumerate(shape)
                if keepdims or k not in axes)
    return la.full(out, n, dtype=dtype)


def _nannumel(x, **kwargs):
    return la.sum(~la.isnan(x), **kwargs)


def _percentile(a, q, method="linear"):
    return la.percentile(a, q, method=method), a.size


def _einsum(*args, **kwargs):
    for unsupported in ("order", "casting", "optimize"):
        kwargs.pop(unsupported, None)
    dtype = kwargs.pop("dtype", None)
    out = la.einsum(*args, **kwargs)
    return out if dtype is None else out.astype(dtype)


def _register() -> None:
    if LazyArray in _registered:
        return
    _registered.append(LazyArray)
    register_chunk_type(LazyArray)
    concatenate_lookup.register(LazyArray, la.concatenate)
    take_lookup.register(LazyArray, la.take)
    tensordot_lookup.register(LazyArray, la.tensordot)
    einsum_lookup.register(LazyArray, _einsum)
    empty_lookup.register(LazyArray, la.empty)
    numel_lookup.register(LazyArray, _numel)
    nannumel_lookup.register(LazyArray, _nannumel)
    percentile_lookup.register(LazyArray, _percentile)


_registered: list = []


def _with_lazy_meta(name: str, *args, meta=None, **kwargs):
    import dask.array as da  # (Dask is optional)
    meta = la.empty((0,)) if meta is None else meta
    with config.set({"array.backend": "numpy"}):
        return getattr(da, name)(*args, meta=meta, **kwargs)


class PCG64(np.random.PCG64):
    """NumPy's PCG64 under lazyarray's name: Dask draws each chunk of
    ``da.random.default_rng()`` on the ``lazyarray`` backend with the
    ``default_rng`` of the library that names its bit generator's type, so
    these chunks are lazy arrays holding NumPy's numbers."""


class LazyArrayBackendEntrypoint(ArrayBackendEntrypoint):
    """Dask's ``lazyarray`` array backend: chunks are lazy arrays."""

    def __init__(self):
        _register()

    @classmethod
    def to_backend_dispatch(cls) -> Dispatch:
        return to_lazyarray_dispatch

    @classmethod
    def to_backend(cls, data: DaskArray, **kwargs: Any) -> DaskArray:
        if isinstance(data._meta, LazyArray):
            return data
        # (dask's stubs type Array.map_blocks as unbound)
        return data.map_blocks(cls.to_backend_dispatch(), **kwargs)  # type: ignore[arg-type]

    @property
    def RandomState(self) -> type[la.random.RandomState]:
        return la.random.RandomState

    @property
    def default_bit_generator(self) -> type[PCG64]:
        return PCG64

    @staticmethod
    def ones(*args: Any, **kwargs: Any) -> DaskArray:
        return _with_lazy_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args: Any, **kwargs: Any) -> DaskArray:
        return _with_lazy_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args: Any, **kwargs: Any) -> DaskArray:
        return _with_lazy_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args: Any, **kwargs: Any) -> DaskArray:
        return _with_lazy_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args: Any, like: Any = None, **kwargs: Any) -> DaskArray:
        import dask.array as da  # (Dask is optional)
        like = la.empty((0,)) if like is None else like
        with config.set({"array.backend": "numpy"}):
            return da.arange(*args, like=like, **kwargs)


_register()
