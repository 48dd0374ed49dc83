"""Tools at loopy's module path (``loopy.tools``).

Public names: t_unit_to_python, and (from :mod:`kernelcore.persistence`)
LoopyKeyBuilder, LazilyUnpicklingDict, LazilyUnpicklingList,
LazilyUnpicklingListWithEqAndPersistentHashing, Optional, memoize_on_disk.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
from typing import Any

import islpy as isl
import numpy as np

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import auto
from kernelcore.ir.instruction import Assignment
from kernelcore.ir.optional import Optional
from kernelcore.persistence import (
    LazilyUnpicklingDict,
    LazilyUnpicklingList,
    LazilyUnpicklingListWithEqAndPersistentHashing,
    LoopyKeyBuilder,
    memoize_on_disk,
)
from kernelcore.translation_unit import TranslationUnit


class _Writer:
    """Python source building a value, and the modules that source uses."""

    def __init__(self) -> None:
        self.modules: set[str] = set()

    def cls(self, cls: type) -> str:
        if "<locals>" in cls.__qualname__:
            raise KernelcoreError(f"t_unit_to_python: {cls.__qualname__} is defined inside "
                                  "a function; Python code cannot name it")
        self.modules.add(cls.__module__)
        return f"{cls.__module__}.{cls.__qualname__}"

    def __call__(self, value: Any) -> str:
        if value is None or isinstance(value, (bool, str)):
            return repr(value)
        if value is auto:
            self.modules.add("kernelcore.ir.data")
            return "kernelcore.ir.data.auto"
        if isinstance(value, enum.Enum):
            return f"{self.cls(type(value))}.{value.name}"
        if isinstance(value, (int, float, complex)) and type(value) in (int, float, complex):
            return repr(value)
        if isinstance(value, np.generic):
            return f"np.{type(value).__name__}({value.item()!r})"
        if isinstance(value, np.dtype):
            return f"np.dtype({value.descr if value.fields else value.name!r})"
        if isinstance(value, (isl.BasicSet, isl.Set)):
            return f"isl.{type(value).__name__}({str(value)!r})"
        if isinstance(value, tuple):
            return "(" + "".join(f"{self(v)}, " for v in value) + ")"
        if isinstance(value, list):
            return "[" + ", ".join(self(v) for v in value) + "]"
        if isinstance(value, frozenset):
            items = sorted(self(v) for v in value)
            return "frozenset({" + ", ".join(items) + "})" if items else "frozenset()"
        if isinstance(value, dict) or hasattr(value, "items") and hasattr(value, "keys"):
            return "{" + ", ".join(f"{self(k)}: {self(v)}" for k, v in value.items()) + "}"
        if dataclasses.is_dataclass(value):
            fields = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)
                      if f.init]
            if isinstance(value, Assignment):     # its declared type, as loopy writes it
                fields = [(n, _as_optional(v) if n == "temp_var_type" else v)
                          for n, v in fields]
        else:
            params = inspect.signature(type(value)).parameters
            fields = [(n, getattr(value, n)) for n, p in params.items()
                      if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and hasattr(value, n)]
        return f"{self.cls(type(value))}(" + ", ".join(
            f"{n}={self(v)}" for n, v in fields) + ")"


def _as_optional(declared: Any) -> Optional:
    """An instruction's *temp_var_type* (None, :data:`auto` or a dtype) as loopy's
    :class:`Optional`."""
    if declared is None:
        return Optional()
    return Optional(None if declared is auto else declared)


def _same(a: Any, b: Any) -> bool:
    """Whether *a* and *b* hold equal values, field by field (kernels and
    callables compare by identity)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return all(_same(getattr(a, f.name), getattr(b, f.name))
                   for f in dataclasses.fields(a))
    names = ("entrypoints", "callables_table", "target") if isinstance(a, TranslationUnit) \
        else getattr(type(a), "init_arg_names", None)
    if names is not None:
        return all(_same(getattr(a, n), getattr(b, n)) for n in names)
    return bool(a == b)


def t_unit_to_python(t_unit: Any, var_name: str = "t_unit",
                     return_code_obj: bool = False) -> Any:
    """Python source that builds *t_unit* (a translation unit or a kernel) again
    and binds it to *var_name*; checked by running it and comparing the result
    with *t_unit*. With *return_code_obj*, the compiled code object instead."""
    write = _Writer()
    body = write(t_unit)
    lines = ["import islpy as isl", "import numpy as np"]
    lines += [f"import {m}" for m in sorted(write.modules)]
    source = "\n".join(lines) + f"\n\n{var_name} = {body}\n"
    code = compile(source, f"<t_unit_to_python {var_name}>", "exec")
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    rebuilt = namespace[var_name]
    if not _same(rebuilt, t_unit):
        what = "translation unit" if isinstance(t_unit, TranslationUnit) else "kernel"
        raise KernelcoreError(f"t_unit_to_python: the code does not rebuild the {what} "
                              "exactly (an object without a constructor taking its fields?)")
    return code if return_code_obj else source


__all__ = ["t_unit_to_python", "LoopyKeyBuilder", "LazilyUnpicklingDict",
           "LazilyUnpicklingList", "LazilyUnpicklingListWithEqAndPersistentHashing",
           "Optional", "memoize_on_disk"]
