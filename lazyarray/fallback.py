"""NumPy on the host for what lazyarray does not compute on the device: the
inputs are computed and copied to the host, NumPy runs, and array results
come back as lazy arrays. Each function warns once
(:class:`LazyArrayHostFallbackWarning`), and ``LAZYARRAY_LOG=info`` logs every
call, so that a script never fails for a missing function and never runs on
the host unknowingly.

Functions that write into their arguments (``np.copyto``, ``np.put``, ...)
have no host fallback: NumPy would write into a host copy, leaving the lazy
array unchanged. They raise unless lazyarray implements them.

Public names: LazyArrayHostFallbackWarning, host_call, host_version, device_or_host, MUTATING.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from lazyarray.errors import LazyArrayError, NoDeviceVersion
from lazyarray.handle import LazyArray, asarray
from lazyarray.host.dispatch import host_call as tier_call
from lazyarray.host.dispatch import host_ready
from lazyarray.values import made_on_host

logger = logging.getLogger("lazyarray.fallback")

#: NumPy functions that write into an argument
MUTATING = frozenset(["copyto", "put", "put_along_axis", "place", "putmask", "fill_diagonal",
                      "at"])


class LazyArrayHostFallbackWarning(UserWarning):
    """A NumPy function ran on the host: its inputs were copied there and its
    result back (lazyarray has no device version of it)."""


_warned: set[str] = set()
_warned_lock = threading.Lock()


def _note(name: str) -> None:
    logger.info("%s runs on the host (NumPy): inputs copied to the host, results back", name)
    with _warned_lock:
        if name in _warned:
            return
        _warned.add(name)
    warnings.warn(f"{name} ran on the host with NumPy (lazyarray has no device version of "
                  "it): its inputs were computed and copied to the host, its result back",
                  LazyArrayHostFallbackWarning, stacklevel=_user_level())


def _user_level() -> int:
    """The stack level of the innermost caller outside lazyarray and NumPy
    (the line of the user's code that a warning names)."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] in (
            "lazyarray", "numpy"):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


def _to_host(value: Any, moved: list | None = None) -> Any:
    """*value* with lazy arrays replaced by their host values (*moved*
    records whether there were any)."""
    if isinstance(value, LazyArray):
        if moved is not None:
            moved[0] = True
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        converted = [_to_host(v, moved) for v in value]
        return type(value)(converted) if isinstance(value, list) or type(value) is tuple \
            else type(value)(*converted)
    if isinstance(value, dict):
        return {k: _to_host(v, moved) for k, v in value.items()}
    return value


def _to_lazy(value: Any, name: str | None = None) -> Any:
    """*value* with NumPy arrays as lazy arrays (recorded as computed by
    *name* on the host, where lazy arrays went there)."""
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biufc" \
            and value.dtype != np.float16 and (name is not None or
                                               isinstance(value, np.ndarray)):
        lazy = asarray(value)                   # (lazy in, lazy out: scalars as 0-d)
        if name is not None:
            made_on_host(lazy.node, name)
        return lazy
    if type(value) in (list, tuple):
        return type(value)(_to_lazy(v, name) for v in value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):       # named tuples
        return type(value)(*(_to_lazy(v, name) for v in value))
    return value


def host_call(func: Callable, args: tuple, kwargs: dict, name: str | None = None) -> Any:
    """*func* (a NumPy function) run on the host values of *args* and
    *kwargs*; NumPy arrays in its result become lazy arrays. Warned and
    logged where lazy arrays were copied to the host."""
    if name is None:
        module = (getattr(func, "__module__", None) or "numpy").replace("numpy", "np", 1)
        name = f"{module if module.startswith('np.') else 'np'}.{getattr(func, '__name__', func)}"
    if getattr(func, "__name__", "") in MUTATING:
        raise LazyArrayError(
            f"{name} writes into its argument, and lazyarray has no version of it: NumPy "
            "would write into a host copy and leave the lazy array unchanged. Compute on "
            "the host explicitly (a = x.get(); ...; x[...] = a) or use assignment "
            "(x[key] = value)")
    moved = [False]
    host_args, host_kwargs = _to_host(args, moved), _to_host(kwargs, moved)
    if moved[0]:
        _note(name)
    return _to_lazy(func(*host_args, **host_kwargs), name if moved[0] else None)


def host_version(func: Callable, name: str) -> Callable:
    """A function running NumPy's *func* through :func:`host_call`, or for
    host arrays (the host tier) on their buffers, quietly, as
    ``np.<func>(host array)`` does."""
    @functools.wraps(func)
    def on_host(*args, **kwargs):
        if host_ready(args, kwargs, getattr(func, "__name__", "") in MUTATING):
            return tier_call(func, args, kwargs)     # (host arrays: the host tier's NumPy)
        return host_call(func, args, kwargs, name)
    on_host.__module__ = "lazyarray.fallback"
    return on_host


def device_or_host(build: Callable[[], Any], func: Callable, args: tuple) -> Any:
    """``build()``, the lazy array that computes on the device, or NumPy's
    *func* on *args* on the host where lazyarray has no device version of
    it for these dtypes (:class:`~lazyarray.errors.NoDeviceVersion`)."""
    try:
        return build()
    except NoDeviceVersion:
        return host_call(func, args, {})
