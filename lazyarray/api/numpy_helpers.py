"""NumPy's helper classes and index tricks that scripts use, so that
``import lazyarray as np`` runs them: ``errstate``, ``ndindex`` and
``poly1d`` are NumPy's own (they take lazy arrays as NumPy arrays);
``vectorize``, ``ndenumerate``, ``r_`` and ``c_`` run NumPy on the host
values of lazy arrays (a host fallback, warned once), results as lazy
arrays; ``ndarray`` is the class that NumPy's arrays and lazy arrays are both
instances of (``isinstance(x, np.ndarray)``). ``la.ma`` is NumPy's ``ma``.

Public names: errstate, ndindex, poly1d, vectorize, ndenumerate, r_, c_, ndarray.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from lazyarray.api.creation import empty
from lazyarray.fallback import host_version
from lazyarray.handle import LazyArray

errstate = np.errstate
ndindex = np.ndindex
poly1d = np.poly1d


class vectorize(np.vectorize):
    """NumPy's vectorize: the function runs on each element's value on the
    host (as NumPy's does); array results come back as lazy arrays."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return host_version(super().__call__, "np.vectorize")(*args, **kwargs)


def ndenumerate(arr: Any) -> Iterator[tuple[tuple[int, ...], Any]]:
    """``(index, value)`` of each element of *arr* (its host values, NumPy's
    scalars), as NumPy's ndenumerate."""
    return iter(host_version(np.ndenumerate, "np.ndenumerate")(arr))


class _Joined:
    """``r_[...]`` or ``c_[...]`` (NumPy's index tricks) as a lazy array."""

    def __init__(self, numpy_trick: Any, name: str) -> None:
        self._trick, self._name = numpy_trick, name

    def __getitem__(self, key: Any) -> Any:
        return host_version(self._trick.__getitem__, self._name)(key)

    def __len__(self) -> int:
        return 0


r_ = _Joined(np.r_, "np.r_")
c_ = _Joined(np.c_, "np.c_")


class _ArrayClass(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, (np.ndarray, LazyArray))

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, (np.ndarray, LazyArray))


class ndarray(metaclass=_ArrayClass):
    """The class of arrays for ``isinstance``: NumPy's arrays and lazy
    arrays are instances. ``ndarray(shape, dtype)`` is an uninitialized
    lazy array (``la.empty``)."""

    def __new__(cls, shape: Any, dtype: Any = float, buffer: Any = None, offset: int = 0,
                strides: Any = None, order: Any = None) -> Any:
        if buffer is not None or strides is not None or offset:
            raise TypeError("ndarray(shape, dtype) with buffer, offset or strides is not "
                            "supported on lazy arrays: use np.ndarray and la.asarray")
        return empty(shape, dtype)


__all__ = ["errstate", "ndindex", "poly1d", "vectorize", "ndenumerate", "r_", "c_", "ndarray"]
