"""Caches of generated code: in memory, and on disk across processes.

The code of a typed kernel is cached under :func:`kernel_key`, a digest of
everything that decides the code and the checks made around it: the kernel's
text and every field of the kernel (registered callables by what they are,
see :mod:`kernelcore.runtime.fingerprint`; options; silenced warnings; the
target with its settings) and kernelcore's sources. The device does not take
part: code is generated for a target, and programs are built per context
(:mod:`kernelcore.runtime.build`).

The on-disk cache (:class:`~kernelcore.runtime.store.DiskStore`, whose
entries are checked by a digest) lives in ``KERNELCORE_CACHE_DIR`` if set,
else the user cache directory. Code for one key is generated once even when
several threads ask for it at the same time. Warnings issued while the code
was generated (write races, ...) are issued again whenever it is taken from a cache.

Public names: kernel_key, code_for, code_cache_get, code_cache_put,
set_caching_enabled, cache_stats, STATS.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import threading
from collections.abc import Callable
from typing import Any

from kernelcore.codegen.kernel import CODEGEN_STATS, CodeGenerationResult
from kernelcore.diagnostic import reissue_warnings
from kernelcore.ir.kernel import LoopKernel
from kernelcore.runtime.fingerprint import describe
from kernelcore.runtime.once import KeyedLocks, kept, made_once
from kernelcore.runtime.store import DiskStore, default_cache_dir
from kernelcore.translation_unit import TranslationUnit
from kernelcore.version import source_fingerprint

logger = logging.getLogger(__name__)

#: counters of this process (approximate when several threads count at once)
STATS = {"memory_hits": 0, "disk_hits": 0, "builds": 0}
_CACHING = {"disk": True}
_MEMORY: dict[str, Any] = {}
#: the most generated codes kept in memory (the disk keeps them all)
CODES_KEPT = 512
_DISK: dict[str, DiskStore] = {}
_DISK_LOCK = threading.Lock()
_GENERATING = KeyedLocks()
#: kernel fields that the kernel's text shows in full
_IN_TEXT = frozenset({"name", "domains"})


def set_caching_enabled(flag: bool) -> None:
    """Turn the on-disk cache of generated code on or off for this process."""
    _CACHING["disk"] = bool(flag)


def caching_enabled() -> bool:
    """Whether the on-disk cache of generated code is on."""
    return _CACHING["disk"]


def cache_stats() -> dict[str, int]:
    """Counters: code generations, builds, memory and disk cache hits."""
    return {**CODEGEN_STATS, **STATS}


def kernel_key(knl: LoopKernel | TranslationUnit, extra: str = "") -> str:
    """A hex digest of everything that decides the code a typed kernel
    generates and the checks made when it is called (see the module
    documentation); a translation unit's is its entry point's, with the
    kernels it calls inlined."""
    if isinstance(knl, TranslationUnit):
        knl = knl.executable_kernel()
    parts = [source_fingerprint(), extra, knl.stringify(with_dependencies=True)]
    parts += [f"{f.name}: {describe(getattr(knl, f.name))}"
              for f in dataclasses.fields(knl) if f.name not in _IN_TEXT]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _disk() -> DiskStore:
    with _DISK_LOCK:
        if "store" not in _DISK:
            _DISK["store"] = DiskStore("kernelcore-code-v2", default_cache_dir())
        return _DISK["store"]


def _is_code(value: Any) -> bool:
    return isinstance(value, CodeGenerationResult)


def code_cache_get(key: str) -> Any:
    """The cached code for *key* (from memory, else from disk), or None."""
    code = _MEMORY.get(key)
    if code is not None:
        STATS["memory_hits"] += 1
        return code
    if not _CACHING["disk"]:
        return None
    code = _disk().get(key, _is_code)
    if code is not None:
        STATS["disk_hits"] += 1
        kept(_MEMORY, key, code, CODES_KEPT)
    return code


def code_cache_put(key: str, value: Any) -> None:
    """Keep *value* as the code for *key* in memory and on disk."""
    kept(_MEMORY, key, value, CODES_KEPT)
    if _CACHING["disk"]:
        _disk().put(key, value)


def code_for(key: str, generate: Callable[[], Any]) -> Any:
    """The code for *key*: cached, else made by *generate* and cached (once,
    when several threads ask at the same time)."""
    code = code_cache_get(key)
    if code is not None:
        reissue_warnings(getattr(code, "warnings", ()))
        return code

    def make() -> Any:
        code = code_cache_get(key)
        if code is None:
            code = generate()
            code_cache_put(key, code)
        else:
            reissue_warnings(getattr(code, "warnings", ()))
        return code

    return made_once(_MEMORY, key, make, _GENERATING, CODES_KEPT)


class CacheMode:
    """``with CacheMode(False): ...``: the on-disk code cache on or off for
    the block (loopy's name), restored afterwards."""

    def __init__(self, new_flag: bool) -> None:
        self.new_flag = new_flag
        self.previous = caching_enabled()

    def __enter__(self) -> None:
        self.previous = caching_enabled()
        set_caching_enabled(self.new_flag)

    def __exit__(self, *exc: object) -> None:
        set_caching_enabled(self.previous)
