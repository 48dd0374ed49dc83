"""The namespaces' functions with the host tier in front: ``la.sum(x)`` of
host arrays is ``numpy.sum`` of their buffers, ``la.linalg.solve`` NumPy's
``linalg.solve``, and so on for every function NumPy has under the same name.

Where lazyarray's answer is meant to differ from NumPy's (the Array API's
``unique_*`` return sorted values, as every other library's do, and
``meshgrid`` and ``broadcast_arrays`` lists), the host tier computes
lazyarray's answer with NumPy (``np.unique_*`` of host arrays too).

Public names: install, UniqueAllResult, UniqueCountsResult, UniqueInverseResult.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import NamedTuple

import numpy as np

from lazyarray.host import lean
from lazyarray.host.array import HostArray
from lazyarray.host.dispatch import (
    OWN_ANSWERS,
    SMALL,
    device_dtype,
    dressed,
    forwarding,
    holding,
    host_call,
    host_ready,
)
from lazyarray.host.policy import host_enabled, host_limit


class UniqueAllResult(NamedTuple):
    values: np.ndarray
    indices: np.ndarray
    inverse_indices: np.ndarray
    counts: np.ndarray


class UniqueCountsResult(NamedTuple):
    values: np.ndarray
    counts: np.ndarray


class UniqueInverseResult(NamedTuple):
    values: np.ndarray
    inverse_indices: np.ndarray


def _unique_values(x):
    return np.unique(x, equal_nan=False)


def _unique_counts(x):
    return UniqueCountsResult(*np.unique(x, return_counts=True, equal_nan=False))


def _unique_inverse(x):
    values, inverse = np.unique(x, return_inverse=True, equal_nan=False)
    return UniqueInverseResult(values, inverse.reshape(np.shape(x)))


def _unique_all(x):
    values, index, inverse, counts = np.unique(
        x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    return UniqueAllResult(values, index, inverse.reshape(np.shape(x)), counts)


def _meshgrid(*arrays, **kwargs):
    return list(np.meshgrid(*arrays, **kwargs))


def _broadcast_arrays(*arrays, **kwargs):
    return list(np.broadcast_arrays(*arrays, **kwargs))


#: host versions that are not NumPy's function of the same name
_OWN = {"unique_values": _unique_values, "unique_counts": _unique_counts,
        "unique_inverse": _unique_inverse, "unique_all": _unique_all, "meshgrid": _meshgrid,
        "broadcast_arrays": _broadcast_arrays}
# NumPy's unique_* called on host arrays answer sorted as well (an order NumPy allows)
OWN_ANSWERS.update({getattr(np, name): _OWN[name] for name in _OWN
                    if name.startswith("unique_") and hasattr(np, name)})

#: NumPy's functions whose common calls skip NumPy's Python wrappers, by module
_LEAN = {"numpy": lean.FUNCTIONS}

#: lazyarray functions never forwarded (they make device arrays or need lazyarray's
#: own handling of their arguments)
_KEEP = frozenset(["asarray", "copy", "from_dlpack", "result_type", "can_cast", "finfo",
                   "iinfo", "isdtype", "issubdtype", "dtype", "broadcast_shapes",
                   "get_printoptions", "set_printoptions", "printoptions", "errstate",
                   "seterr", "geterr"])

#: creation functions whose first argument is the shape of the result
_SHAPED = frozenset(["zeros", "ones", "empty", "full"])


def _size(shape) -> int | None:
    """The number of elements of an array of *shape* (an integer or a
    sequence of integers, NumPy's or Python's), or None for anything else."""
    try:
        return operator.index(shape)
    except TypeError:
        pass
    try:
        return math.prod(operator.index(n) for n in shape)
    except TypeError:
        return None


def _shaped(name: str, impl: Callable, numpy_func: Callable) -> Callable:
    """A creation function: the device makes results larger than the host
    tier keeps (no host array made and moved); NumPy answers a shape that is
    none (with its own error)."""
    def dispatch(shape, *args, **kwargs):
        if not args and not kwargs and type(shape) is int and 0 <= shape <= SMALL \
                and host_enabled():
            return holding(numpy_func(shape))   # (the commonest call: np.zeros(n))
        if host_ready(args, kwargs):
            size = _size(shape)
            if size is None or size <= SMALL:
                return host_call(numpy_func, (shape, *args), kwargs)
            limit = host_limit()
            if limit is None or size <= limit:
                return host_call(numpy_func, (shape, *args), kwargs)
        return impl(shape, *args, **kwargs)
    return dressed(dispatch, name, impl)


def _asarray(impl: Callable) -> Callable:
    """``asarray``: NumPy data (not a lazy or pyopencl array) up to the host
    tier's size becomes a host array holding a copy, larger data a device array."""
    def asarray(data, dtype=None, *, device=None, copy=None):
        if host_ready((data,)) and not isinstance(data, HostArray):
            value = np.array(data, dtype=dtype, copy=True)
            if not value.dtype.isnative:
                value = value.astype(value.dtype.newbyteorder("="))
            if value.size <= SMALL or (limit := host_limit()) is None or value.size <= limit \
                    or not device_dtype(value.dtype):
                if copy is False and (dtype is None or np.dtype(dtype) !=
                                      np.asarray(data).dtype):
                    raise ValueError("asarray(copy=False): converting the dtype needs a copy")
                return HostArray._of(value)
        return impl(data, dtype, device=device, copy=copy)
    asarray.__doc__ = impl.__doc__
    asarray.__qualname__ = "asarray"
    asarray.__module__ = "lazyarray"
    asarray._host_tier = True               # type: ignore[attr-defined]
    return asarray


def install(namespace: dict, numpy_module: ModuleType, names: Iterable[str]) -> None:
    """Put the host tier in front of each function *names* of *namespace*
    that *numpy_module* has too (or that has a host version of its own)."""
    for name in names:
        impl = namespace.get(name)
        # (ufunc objects, which have NumPy's ufunc as ``_ufunc``, put the tier in
        # front of their calls and methods themselves)
        if impl is None or name in _KEEP or isinstance(impl, type) \
                or hasattr(impl, "_ufunc") or not callable(impl) \
                or getattr(impl, "_host_tier", False):
            continue
        numpy_func = _OWN.get(name) or _LEAN.get(numpy_module.__name__, {}).get(name) \
            or getattr(numpy_module, name, None)
        if numpy_func is None or not callable(numpy_func) or isinstance(numpy_func, type):
            continue
        namespace[name] = (_shaped if name in _SHAPED else forwarding)(name, impl, numpy_func)
    if "asarray" in names and not getattr(namespace["asarray"], "_host_tier", False):
        namespace["asarray"] = _asarray(namespace["asarray"])
