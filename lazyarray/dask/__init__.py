"""lazyarray programs as Dask tasks.

- :func:`map_blocks` and :func:`map_overlap`: run a function, compiled once
  per worker process with ``la.jit``, on each NumPy block of a
  ``dask.array`` (any scheduler, a ``distributed`` cluster included). The
  blocks go to the process's device and back; ``meta`` is given, so Dask
  never calls the function on empty arrays.
- :class:`WorkerSetup` (``client.register_plugin(WorkerSetup())``): a PoCL
  kernel cache of its own for each worker process (PoCL's is not safe when
  several processes build at once) and one PoCL thread per worker.
- Device chunks (:mod:`lazyarray.dask.backend`, loaded by importing this
  package or through the ``dask.array.backends`` entry point named
  ``lazyarray``): ``LazyArray`` is a Dask chunk type, so ``dask.array``
  graphs whose chunks are lazy arrays keep them lazy, on the device, from
  task to task (threaded or synchronous scheduler: one process, one device).

See docs/scale-out.md.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

import lazyarray as la
from lazyarray.dask import backend
from lazyarray.distributed import use_rank_caches

if TYPE_CHECKING:
    from dask.array import Array as DaskArray
    from distributed import Worker

__all__ = ["WorkerSetup", "map_blocks", "map_overlap", "to_lazyarray", "backend"]

#: the jitted versions of block functions in this process, by token (a
#: task's function is unpickled anew for each task: the token keeps one trace)
_JITTED: dict[str, Any] = {}
_LOCK = threading.Lock()


class BlockTask:
    """A picklable task running ``la.jit(fn)`` on NumPy blocks and returning
    a NumPy block (*keep_lazy*: the lazy result, for device chunks)."""

    def __init__(self, fn: Callable, static: dict | None = None, keep_lazy: bool = False):
        self.fn = fn
        self.static = dict(static or {})
        self.keep_lazy = keep_lazy
        self.token = uuid.uuid4().hex
        functools_name = getattr(fn, "__name__", "block")
        self.__name__ = f"la-{functools_name}"

    def jitted(self) -> Callable[..., Any]:
        jitted = _JITTED.get(self.token)
        if jitted is None:
            with _LOCK:
                jitted = _JITTED.get(self.token)
                if jitted is None:
                    jitted = _JITTED[self.token] = la.jit(
                        self.fn, static_argnames=tuple(self.static))
        return jitted

    def __call__(self, *blocks, **kwargs):
        result = self.jitted()(*blocks, **self.static, **kwargs)
        if self.keep_lazy:
            return result
        return result.get() if isinstance(result, la.LazyArray) else result


def _meta(dtype, ndim: int) -> np.ndarray:
    return np.empty((0,) * ndim, dtype=dtype)


def map_blocks(fn: Callable, *arrays: Any, dtype: Any = None, static: dict | None = None,
               **kwargs: Any) -> DaskArray:
    """``dask.array.map_blocks`` of ``la.jit(fn)`` over NumPy-backed *arrays*
    (the result's *dtype* defaults to the first array's; other keywords go
    to Dask: ``chunks``, ``drop_axis``, ``new_axis``, ...). *static*:
    keyword arguments passed to *fn* as static (``la.jit``'s
    ``static_argnames``)."""
    import dask.array as da  # (Dask is optional)

    first = next(a for a in arrays if isinstance(a, da.Array))
    dtype = np.dtype(dtype if dtype is not None else first.dtype)
    ndim = kwargs.pop("ndim", first.ndim + len(_axes(kwargs.get("new_axis")))
                      - len(_axes(kwargs.get("drop_axis"))))
    kwargs.setdefault("meta", _meta(dtype, ndim))
    return da.map_blocks(BlockTask(fn, static), *arrays, dtype=dtype, **kwargs)


def _axes(axes) -> tuple:
    if axes is None:
        return ()
    return tuple(axes) if isinstance(axes, (list, tuple)) else (axes,)


def map_overlap(fn: Callable, *arrays: Any, depth: Any, boundary: Any = None, dtype: Any = None,
                trim: bool = True, static: dict | None = None, **kwargs: Any) -> DaskArray:
    """``dask.array.map_overlap`` of ``la.jit(fn)``: *fn* gets each NumPy
    block of the *arrays* with *depth* cells of its neighbours (or of
    *boundary*: ``"periodic"``, ``"reflect"``, ``"nearest"``, ``"none"`` or
    a constant) on each side, as lazy arrays, and returns the block's new
    values: at the padded shape, trimmed by Dask (*trim*), or at the block's
    shape with ``trim=False, chunks=x.chunks``."""
    import dask.array as da  # (Dask is optional)

    first = next(a for a in arrays if isinstance(a, da.Array))
    dtype = np.dtype(dtype if dtype is not None else first.dtype)
    kwargs.setdefault("meta", _meta(dtype, first.ndim))
    return da.map_overlap(BlockTask(fn, static), *arrays, depth=depth, boundary=boundary,
                          trim=trim, dtype=dtype, **kwargs)


def to_lazyarray(x: DaskArray) -> DaskArray:
    """The dask array *x* with lazy-array chunks (on this process's device):
    ``x.to_backend("lazyarray")``."""
    return x.to_backend("lazyarray")


try:
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:                               # (only Dask's local schedulers)
    _WorkerPlugin = object                        # type: ignore[assignment,misc]


class WorkerSetup(_WorkerPlugin):
    """A ``distributed`` worker plugin giving each worker process its own
    PoCL kernel cache (below *base*, default ``$POCL_CACHE_DIR`` or the
    temporary directory) and *threads* PoCL threads. Register it right after
    the client is made, before tasks use the device:
    ``client.register_plugin(WorkerSetup())``."""

    name = "lazyarray-worker-setup"

    def __init__(self, base: str | None = None, threads: int | None = 1):
        self.base = base or os.environ.get("POCL_CACHE_DIR")
        self.threads = threads

    def setup(self, worker: Worker) -> None:
        use_rank_caches(f"-dask-{os.getpid()}", self.base, self.threads)

    def teardown(self, worker: Worker) -> None:
        pass
