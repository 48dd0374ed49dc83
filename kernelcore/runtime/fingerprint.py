"""Stable descriptions of what a kernel holds, for cache keys.

:func:`describe` gives the same text in every process for objects of equal
content, and a different text when the content differs: dataclasses and
other objects by their fields, containers by their items (sets and mappings
sorted), NumPy arrays by a digest of their bytes, functions by their code,
defaults, closure and the globals the code reads, classes by their name and
the code of their methods (kernelcore's own classes by name only: its
sources are part of every key; so are those of Python and of installed
packages, which change with their versions). A callable registered on a kernel is thus
keyed by what it is, not by the name calls use.

An object with none of these forms is described by its ``repr``; if that
shows only an address (``<... at 0x...>``), equal objects of two processes
are cache misses, never mixed up.

Public names: describe.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import os
import sys
import types
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

_ATOMS = (type(None), bool, int, float, complex, str, bytes)
#: class attributes that say nothing about what instances do
_CLASS_NOISE = frozenset({"__dict__", "__weakref__", "__doc__", "__module__", "__qualname__",
                          "__annotations__", "__dataclass_fields__", "__dataclass_params__",
                          "__match_args__", "__firstlineno__", "__static_attributes__",
                          "_abc_impl"})


def describe(obj: Any) -> str:
    """A text that is equal for objects of equal content (see the module
    documentation)."""
    return _Describer().describe(obj)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:24]


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


@cache
def _named_only(module: str | None) -> bool:
    """Whether objects of *module* are described by name alone: kernelcore's
    modules (their sources are in every key), Python's and installed
    packages' (they change with versions, not while one works on them):
    those under a ``site-packages`` or ``dist-packages`` folder, or in the
    folder of an installed distribution (``pip install --target``; not an
    editable install, whose sources lie elsewhere)."""
    if module is None:
        return True
    top = module.partition(".")[0]
    if top == "kernelcore" or top in sys.stdlib_module_names:
        return True
    path = getattr(sys.modules.get(top), "__file__", None) or ""
    if "site-packages" in path or "dist-packages" in path:
        return True
    return bool(path) and any(path.startswith(folder)
                              for folder in _installed_folders().get(top, ()))


@cache
def _installed_folders() -> dict[str, tuple[str, ...]]:
    """By top-level module, the folders it was installed into by pip: where
    a distribution's ``RECORD`` lists its files (an editable install and a
    source tree's ``egg-info`` list none of their sources)."""
    from importlib.metadata import distributions

    folders: dict[str, set[str]] = {}
    for dist in distributions():
        try:
            record = dist.read_text("RECORD") or ""
            base = os.path.join(str(dist.locate_file("")), "")
        except Exception:           # (a broken distribution: described by code)
            continue
        for line in record.splitlines():
            name = line.partition(",")[0]
            if not name.endswith(".py"):
                continue
            top, sep, _ = name.partition("/")
            top = top if sep else top[:-3]             # (a package, or one module)
            if not top.endswith((".dist-info", ".data")) and top.isidentifier():
                folders.setdefault(top, set()).add(base)
    return {top: tuple(found) for top, found in folders.items()}


class _Describer:
    """One description: remembers the objects being described (cycles)."""

    def __init__(self) -> None:
        self._active: set[int] = set()
        self._classes: dict[type, str] = {}

    def describe(self, obj: Any) -> str:
        if isinstance(obj, _ATOMS):
            return repr(obj)
        if isinstance(obj, enum.Enum):
            return f"{_qualified(type(obj))}.{obj.name}"
        if isinstance(obj, np.dtype):
            return repr(obj)
        if isinstance(obj, np.generic):
            return f"{obj.dtype.str}:{obj.item()!r}"
        if isinstance(obj, np.ndarray):
            return (f"ndarray({obj.dtype!r}, {obj.shape}, "
                    f"{_digest(np.ascontiguousarray(obj).tobytes())})")
        if id(obj) in self._active:
            return "<cycle>"
        self._active.add(id(obj))
        try:
            return self._compound(obj)
        finally:
            self._active.discard(id(obj))

    def _many(self, items) -> str:
        return ", ".join(self.describe(x) for x in items)

    def _compound(self, obj: Any) -> str:
        if isinstance(obj, (tuple, list)):
            return f"{type(obj).__name__}({self._many(obj)})"
        if isinstance(obj, (set, frozenset)):
            return f"{type(obj).__name__}({', '.join(sorted(map(self.describe, obj)))})"
        if isinstance(obj, Mapping):
            items = sorted(f"{self.describe(k)}: {self.describe(v)}" for k, v in obj.items())
            return f"{type(obj).__name__}{{{', '.join(items)}}}"
        if isinstance(obj, type):
            return self._class(obj)
        if isinstance(obj, (staticmethod, classmethod)):
            return f"{type(obj).__name__}({self.describe(obj.__func__)})"
        if isinstance(obj, property):
            return f"property({self._many((obj.fget, obj.fset, obj.fdel))})"
        if isinstance(obj, types.MethodType):
            return f"method({self.describe(obj.__func__)}, {self.describe(obj.__self__)})"
        if isinstance(obj, types.FunctionType):
            return self._function(obj)
        if isinstance(obj, types.ModuleType):
            return f"module {obj.__name__}"
        if type(obj).__module__.startswith("islpy"):
            return f"{type(obj).__name__}({obj})"
        state = _state(obj)
        if state is None:
            return repr(obj)
        fields = ", ".join(f"{name}={self.describe(value)}" for name, value in state)
        return f"{self._class(type(obj))}({fields})"

    def _class(self, cls: type) -> str:
        """The class's name and, for classes not of kernelcore or Python, the
        code and attributes of its own and inherited methods."""
        if _named_only(cls.__module__):
            return _qualified(cls)
        known = self._classes.get(cls)
        if known is not None:
            return known
        parts = []
        for klass in cls.__mro__:
            if _named_only(klass.__module__):
                continue
            attributes = sorted((name, value) for name, value in vars(klass).items()
                                if name not in _CLASS_NOISE)
            parts.append(f"{_qualified(klass)}: " + ", ".join(
                f"{name}={self.describe(value)}" for name, value in attributes))
        text = self._classes[cls] = f"{_qualified(cls)}<{_digest('; '.join(parts).encode())}>"
        return text

    def _function(self, fn: types.FunctionType) -> str:
        """The function's code, defaults, closure and the globals it reads."""
        if _named_only(fn.__module__):
            return f"{fn.__module__}.{fn.__qualname__}"
        code = fn.__code__
        cells = []
        for cell in fn.__closure__ or ():
            try:
                cells.append(self.describe(cell.cell_contents))
            except ValueError:          # a cell not filled yet
                cells.append("<empty>")
        reads = sorted(name for name in _global_names(code) if name in fn.__globals__)
        used = ", ".join(f"{name}={self.describe(fn.__globals__[name])}" for name in reads)
        return (f"function {fn.__module__}.{fn.__qualname__}({self._code(code)}; "
                f"defaults {self.describe(fn.__defaults__)} "
                f"{self.describe(fn.__kwdefaults__)}; closure {', '.join(cells)}; "
                f"globals {used})")

    def _code(self, code: types.CodeType) -> str:
        consts = ", ".join(self._code(c) if isinstance(c, types.CodeType) else self.describe(c)
                           for c in code.co_consts)
        return f"code({_digest(code.co_code)}, [{consts}], {code.co_names})"


def _global_names(code: types.CodeType) -> set[str]:
    """Names *code* (and the functions defined in it) may read as globals."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _state(obj: Any) -> list[tuple[str, Any]] | None:
    """``(name, value)`` of what makes *obj* what it is: a dataclass's fields,
    a pymbolic-style object's ``init_arg_names``, else its attributes (slots
    included); None for objects without any."""
    if dataclasses.is_dataclass(obj):
        return [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    names = getattr(type(obj), "init_arg_names", None)
    if isinstance(names, tuple) and all(isinstance(n, str) for n in names):
        state = {n: getattr(obj, n, None) for n in names}
    else:
        state = {}
    state.update(getattr(obj, "__dict__", {}))
    for klass in type(obj).__mro__:
        slots = getattr(klass, "__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                state.setdefault(name, getattr(obj, name))
    if not state and not hasattr(obj, "__dict__"):
        return None
    return sorted(state.items())
