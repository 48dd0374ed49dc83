"""The later stages as the IR's convenience methods reach them.

Public names: provide, stage.

Calling a kernel or a translation unit, typing a called kernel, printing a
kernel's linearization: methods of the IR that need a stage built on top of
it (type inference, inlining, code generation, the runtime). Each of those
stages registers its entry point here under a name when it is imported
(``import kernelcore`` imports them all), so that the IR imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kernelcore.diagnostic import KernelcoreError

_ENTRIES: dict[str, Callable[..., Any]] = {}


def provide(name: str, entry: Callable[..., Any]) -> None:
    """Register *entry* as the stage called *name*."""
    _ENTRIES[name] = entry


def stage(name: str) -> Callable[..., Any]:
    """The entry point registered as *name*."""
    try:
        return _ENTRIES[name]
    except KeyError:
        raise KernelcoreError(f"kernelcore's stage '{name}' is not loaded: "
                              "import kernelcore") from None
