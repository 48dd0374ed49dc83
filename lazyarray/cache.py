"""The on-disk cache of planned kernels.

A kernel that lazyarray planned, lowered and compiled once is stored as a
*recipe*: its OpenCL source and, per device kernel, the grid and what each
argument is (an input or the result by name, a global temporary by size, or a
scalar). A new process that needs a kernel of the same structure on the same
kind of device builds the recipe's source (pyopencl's binary cache makes that
a lookup) and launches it, without lowering, scheduling or generating code.

The cache lives in ``LAZYARRAY_CACHE_DIR`` if set, else ``KERNELCORE_CACHE_DIR``,
else pytools' default (the user cache directory); ``LAZYARRAY_DISK_CACHE=0``
turns it off. Entries are written once (pytools.persistent_dict, safe under
concurrent processes); an entry that cannot be read is ignored and the kernel
rebuilt. A key covers the kernel's structure, whether tuning is on, the
device and the source of lazyarray and kernelcore, not layout constants
changed at run time (as experiments do): run those with the cache off.

Public names: Recipe, recipe_key, load_recipe, store_recipe, STATS.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from kernelcore.version import source_fingerprint, tree_fingerprint

logger = logging.getLogger(__name__)

#: recipes loaded from disk and stored to it by this process
STATS = {"disk_hits": 0, "disk_stores": 0}
_DISK: dict = {}


@dataclass(frozen=True)
class Recipe:
    """How to run one planned kernel: its *source*, and per device kernel
    ``(name, global size, local size, arguments)``; an argument is
    ``("array", name)``, ``("temporary", index, nbytes)`` (temporaries with one
    index are one buffer) or ``("value", scalar)``."""

    source: str
    launches: tuple


def _enabled() -> bool:
    return os.environ.get("LAZYARRAY_DISK_CACHE", "1").lower() not in ("0", "false", "no")


@lru_cache(maxsize=1)
def _fingerprint() -> str:
    """A digest of lazyarray's and kernelcore's sources: a changed lowering
    never reuses a stale recipe."""
    return tree_fingerprint(Path(__file__).parent, source_fingerprint())


def recipe_key(structure: tuple, device, profile: tuple) -> str:
    """The key of a kernel of *structure* (``runtime._structure_key`` and
    whether tuning is on) on *device* (a pyopencl device) laid out for *profile*."""
    identity = (device.platform.name, device.platform.version, device.name,
                device.driver_version)
    text = repr((_fingerprint(), identity, profile, structure))
    return hashlib.sha256(text.encode()).hexdigest()


def _disk():
    if "dict" not in _DISK:
        from pytools.persistent_dict import WriteOncePersistentDict
        directory = (os.environ.get("LAZYARRAY_CACHE_DIR")
                     or os.environ.get("KERNELCORE_CACHE_DIR"))
        _DISK["dict"] = WriteOncePersistentDict("lazyarray-recipes-v1",
                                                container_dir=directory, safe_sync=False)
    return _DISK["dict"]


def load_recipe(key: str) -> Recipe | None:
    """The recipe stored under *key*, or None."""
    if not _enabled():
        return None
    try:
        recipe = _disk().fetch(key)
    except KeyError:
        return None
    except Exception as e:  # noqa: BLE001 - an unreadable entry: rebuild the kernel
        logger.warning("ignoring unreadable kernel recipe %s: %s", key[:12], e)
        return None
    if not isinstance(recipe, Recipe):
        logger.warning("ignoring kernel recipe %s of unexpected type", key[:12])
        return None
    STATS["disk_hits"] += 1
    return recipe


def store_recipe(key: str, recipe: Recipe) -> None:
    """Store *recipe* under *key* (kept if another process stored it first)."""
    if not _enabled():
        return
    from pytools.persistent_dict import ReadOnlyEntryError
    try:
        _disk().store_if_not_present(key, recipe)
        STATS["disk_stores"] += 1
    except ReadOnlyEntryError:
        pass
    except Exception as e:  # noqa: BLE001 - caching is an optimization
        logger.warning("could not store kernel recipe %s: %s", key[:12], e)
