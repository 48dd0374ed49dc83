"""Registers lazyarray's einops backend (:mod:`lazyarray.einops_backend`)
without importing einops: at once if einops is imported already, else when
einops imports its backends module (a finder on ``sys.meta_path`` watches for
that one import).

Public names: register.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

_BACKENDS = "einops._backends"


class _Loader:
    """einops' loader of its backends module, which then defines lazyarray's backend."""

    def __init__(self, loader: Any):
        self.loader = loader

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        sys.modules[module.__name__] = module      # (as the import will leave it)
        _define_backend()


class _Finder:
    """Finds einops' backends module with the other finders and wraps its loader."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname != _BACKENDS:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)  # type: ignore[assignment]
        return spec


def _define_backend() -> None:
    """Import lazyarray's backend module (a warning, not a failed import of
    einops, where this einops has no backends as lazyarray knows them)."""
    try:
        importlib.import_module("lazyarray.einops_backend")
    except ImportError as error:
        warnings.warn(f"lazyarray's einops backend is not available with this einops: {error}",
                      ImportWarning, stacklevel=2)


def register() -> None:
    """Make einops find lazyarray's backend, whether or not einops is
    imported yet (einops itself is not imported)."""
    if _BACKENDS in sys.modules:
        _define_backend()
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
