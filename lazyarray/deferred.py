"""Imports deferred to first use: OpenCL (pyopencl), kernelcore and the
compiler stack under it (islpy, pymbolic) load with the first device
operation, so that a program computing only on the host tier (small arrays,
NumPy at once) never imports them.

The seams are few: the packages ``lazyarray.run``, ``lazyarray.ops`` and
``lazyarray.plan`` load their submodules when a name is first read from the
package (``_run.evaluate(node)``, ``_ops.sort``), and ``lazyarray`` its
namespaces ``la.random``, ``la.fft``, ``la.linalg`` and ``la.lib`` (NumPy's
random and fft modules come with them); a module that uses a heavy
module only inside functions holds a :func:`deferred` stand-in for it; and
:func:`is_cl_array` tells pyopencl arrays apart without importing pyopencl.
``tests/lazyarray/run/test_cold_start.py`` checks that ``import lazyarray`` and small work
import none of them.

Public names: deferred, is_cl_array, submodule_getattr.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from typing import Any

_modules = sys.modules


class _Deferred(types.ModuleType):
    """A stand-in for the module of its name: reading an attribute imports
    the module (once) and reads the attribute there."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):          # (introspection: copy, pickle, doctest)
            raise AttributeError(name)
        return getattr(importlib.import_module(self.__name__), name)


def deferred(name: str) -> Any:
    """A stand-in for the module *name*, imported when one of its attributes
    is first read (``lp = deferred("kernelcore")`` ... ``lp.generate_code_v2``).
    For modules used inside functions only, where an attribute read is not
    on a hot path (each read costs a function call)."""
    return _Deferred(name)


def is_cl_array(x: Any) -> bool:
    """Whether *x* is a pyopencl array (no pyopencl array exists before
    ``pyopencl.array`` was imported, so this imports nothing)."""
    cla = _modules.get("pyopencl.array")
    return cla is not None and isinstance(x, cla.Array)


def submodule_getattr(package: str, names: dict[str, str] | None = None,
                      ) -> Callable[[str], Any]:
    """A PEP 562 ``__getattr__`` for *package*: a submodule is imported when
    first read as an attribute (``_ops.sort``), and each of *names* (public
    name -> submodule) is read from its submodule; the value becomes a plain
    attribute of the package (later reads cost nothing)."""
    namespace = _modules[package].__dict__
    homes = names or {}

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is not None:
            value = getattr(importlib.import_module(f"{package}.{home}"), name)
        elif not name.startswith("__"):
            try:
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as e:
                if e.name != f"{package}.{name}":
                    raise
                raise AttributeError(
                    f"module {package!r} has no attribute {name!r}") from None
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value
    return __getattr__
