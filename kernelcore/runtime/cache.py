"""Caches of generated code: in memory, and on disk across processes.

The on-disk cache (pytools.persistent_dict) maps a structural key of a typed
kernel to its generated device code. Its directory is ``KERNELCORE_CACHE_DIR``
if set, else the user cache directory.

Public names: kernel_key, code_cache_get, code_cache_put, set_caching_enabled,
cache_stats, STATS.
"""

from __future__ import annotations

import hashlib
import logging
import os

from kernelcore.codegen.kernel import CODEGEN_STATS
from kernelcore.version import source_fingerprint

logger = logging.getLogger(__name__)

STATS = {"memory_hits": 0, "disk_hits": 0, "builds": 0}
_CACHING = {"disk": True}
_MEMORY: dict[str, object] = {}
_DISK: dict[str, object] = {}


def set_caching_enabled(flag: bool) -> None:
    """Turn the on-disk cache of generated code on or off for this process."""
    _CACHING["disk"] = bool(flag)


def cache_stats() -> dict[str, int]:
    """Counters: code generations, builds, memory and disk cache hits."""
    return {**CODEGEN_STATS, **STATS}


def kernel_key(knl, extra: str = "") -> str:
    """A hex digest identifying the code a typed kernel generates."""
    parts = [source_fingerprint(), knl.stringify(with_dependencies=True), repr(knl.loop_priority), repr(sorted(knl.iname_slabs.items())),
             str(knl.assumptions), type(knl.target).__name__ if knl.target else "default",
             repr([(a.name, str(a.dtype)) for a in knl.args]), extra]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _disk():
    if "dict" not in _DISK:
        from pytools.persistent_dict import WriteOncePersistentDict
        directory = os.environ.get("KERNELCORE_CACHE_DIR")
        _DISK["dict"] = WriteOncePersistentDict(
            "kernelcore-code-v1", container_dir=directory,
            safe_sync=False)
    return _DISK["dict"]


def code_cache_get(key: str):
    """The cached code for *key*, or None."""
    if key in _MEMORY:
        STATS["memory_hits"] += 1
        return _MEMORY[key]
    if not _CACHING["disk"]:
        return None
    try:
        result = _disk().fetch(key)
    except KeyError:
        return None
    except Exception as e:  # a corrupt entry: regenerate
        logger.warning("ignoring unreadable disk cache entry %s: %s", key[:12], e)
        return None
    STATS["disk_hits"] += 1
    _MEMORY[key] = result
    return result


def code_cache_put(key: str, value) -> None:
    _MEMORY[key] = value
    if not _CACHING["disk"]:
        return
    from pytools.persistent_dict import ReadOnlyEntryError
    try:
        _disk().store_if_not_present(key, value)
    except ReadOnlyEntryError:
        pass
    except Exception as e:
        logger.warning("could not write disk cache entry %s: %s", key[:12], e)
