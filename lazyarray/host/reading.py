"""LazyArray's reading methods and operators on a small value already on the
device: computed by NumPy on a host copy (:func:`~lazyarray.host.dispatch.readable`)
instead of a kernel.

Public names: none (importing it installs the methods).
"""

from __future__ import annotations

import numpy as np

from lazyarray.handle import LazyArray
from lazyarray.host.array import _BINARY, _READING
from lazyarray.host.dispatch import dressed, host_call, host_ready, readable
from lazyarray.host.policy import host_enabled


def _read_method(name: str):
    """LazyArray.*name* computed by NumPy on a host copy when the array is a
    small value already on the device (:func:`readable`)."""
    device = getattr(LazyArray, name)
    numpy_method = getattr(np.ndarray, name, None) or getattr(np, name)

    def method(self, *args, **kwargs):
        if host_enabled() and readable(self) and host_ready(args, kwargs):
            return host_call(numpy_method, (self, *args), kwargs)
        return device(self, *args, **kwargs)
    return dressed(method, name, device)


for _name in [*_READING, "__abs__", "__neg__", "__pos__", "__invert__",
              *(f"__{op}__" for op in _BINARY), *(f"__r{op}__" for op in _BINARY),
              "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"]:
    setattr(LazyArray, _name, _read_method(_name))

__all__: list[str] = []
