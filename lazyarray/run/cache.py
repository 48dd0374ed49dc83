"""The on-disk cache of planned kernels.

A kernel that lazyarray planned, lowered and compiled once is stored as a
*recipe*: its OpenCL source and, per device kernel, the grid and what each
argument is (an input or the result by name, a global temporary by size, or a
scalar). A new process that needs a kernel of the same structure on the same
kind of device builds the recipe's source (pyopencl's binary cache makes that
a lookup) and launches it, without lowering, scheduling or generating code.

The cache lives in ``LAZYARRAY_CACHE_DIR`` if set, else ``KERNELCORE_CACHE_DIR``,
else the user cache directory; ``LAZYARRAY_DISK_CACHE=0`` turns it off. It is
a :class:`~kernelcore.runtime.store.DiskStore`: safe under concurrent
processes, and each entry is checked by a digest of its content when read,
so a damaged entry is logged and its kernel rebuilt (and stored again),
never run. A key covers the kernel's structure, whether tuning is on, the
device, the options programs are built with and the source of lazyarray and
kernelcore, not layout constants changed at run time (as experiments do):
run those with the cache off.

Public names: Recipe, recipe_key, load_recipe, store_recipe, STATS.
"""

from __future__ import annotations

import hashlib
import logging
import numbers
import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kernelcore import (
    DiskStore,
    build_options,
    default_cache_dir,
    source_fingerprint,
    tree_fingerprint,
)

if TYPE_CHECKING:
    import pyopencl as cl

logger = logging.getLogger(__name__)

#: recipes loaded from disk and stored to it by this process (approximate when
#: several threads count at once)
STATS = {"disk_hits": 0, "disk_stores": 0}
_DISK: dict = {}
_DISK_LOCK = threading.Lock()


@dataclass(frozen=True)
class Recipe:
    """How to run one planned kernel: its *source*, and per device kernel
    ``(name, global size, local size, arguments)``; an argument is
    ``("array", name)``, ``("scalar", name)`` (a value each run passes),
    ``("temporary", index, nbytes)`` (temporaries with one index are one
    buffer) or ``("value", scalar)``."""

    source: str
    launches: tuple

    def well_formed(self) -> bool:
        """Whether the fields have the types and forms documented above."""
        return isinstance(self.source, str) and isinstance(self.launches, tuple) \
            and bool(self.launches) and all(_launch_well_formed(x) for x in self.launches)


def _sizes(value) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, int) and v >= 0 for v in value)


def _launch_well_formed(launch) -> bool:
    if not (isinstance(launch, tuple) and len(launch) == 4):
        return False
    name, gsize, lsize, arguments = launch
    return (isinstance(name, str) and _sizes(gsize) and (lsize is None or _sizes(lsize))
            and isinstance(arguments, tuple) and all(
                isinstance(a, tuple) and a and (
                    (a[0] in ("array", "scalar") and len(a) == 2 and isinstance(a[1], str))
                    or (a[0] == "temporary" and len(a) == 3 and _sizes(a[1:]))
                    or (a[0] == "value" and len(a) == 2
                        and (a[1] is None or isinstance(a[1], (numbers.Number, np.generic)))))
                for a in arguments))


def _enabled() -> bool:
    return os.environ.get("LAZYARRAY_DISK_CACHE", "1").lower() not in ("0", "false", "no")


#: the folder of lazyarray's sources (all of them are in the recipe key)
PACKAGE_ROOT = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=1)
def _fingerprint() -> str:
    """A digest of lazyarray's and kernelcore's sources: a changed lowering
    never reuses a stale recipe."""
    return tree_fingerprint(PACKAGE_ROOT, source_fingerprint())


def recipe_key(structure: tuple, device: cl.Device, profile: tuple) -> str:
    """The key of a kernel of *structure* (``plan.structure.kernel_structure`` and
    whether tuning is on) on *device* (a pyopencl device) made for *profile*
    (the fields of lazyarray's :class:`~lazyarray.target.Target`)."""
    identity = (device.platform.name, device.platform.version, device.name,
                device.driver_version, tuple(build_options(device)))
    text = repr((_fingerprint(), identity, profile, structure))
    return hashlib.sha256(text.encode()).hexdigest()


def _disk() -> DiskStore:
    with _DISK_LOCK:
        if "store" not in _DISK:
            directory = os.environ.get("LAZYARRAY_CACHE_DIR") or default_cache_dir()
            _DISK["store"] = DiskStore("lazyarray-recipes-v2", directory)
        return _DISK["store"]


def _is_recipe(value) -> bool:
    return isinstance(value, Recipe) and value.well_formed()


def load_recipe(key: str) -> Recipe | None:
    """The recipe stored under *key*, or None (also for a damaged entry)."""
    if not _enabled():
        return None
    recipe = _disk().get(key, _is_recipe)
    if recipe is not None:
        STATS["disk_hits"] += 1
    return recipe


def store_recipe(key: str, recipe: Recipe) -> None:
    """Store *recipe* under *key* (replacing a damaged entry)."""
    if _enabled() and _disk().put(key, recipe):
        STATS["disk_stores"] += 1
