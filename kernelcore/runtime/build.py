"""Compiling device code with pyopencl, with readable build errors.

A program is built once per context and code key, also when several threads
ask for it at the same time (different programs build concurrently). Its
kernels come with a lock: a kernel's arguments are set and it is enqueued
under that lock, so threads sharing the kernels do not launch each other's
arguments.

Programs are built from a binary kept on disk when the OpenCL platform is one
that pyopencl leaves to cache its own source builds (PoCL, NVIDIA): PoCL's
cached source build still preprocesses the source (about 70 ms a program on
a CPU), a build from its binary takes one or two milliseconds. The binaries
live in a :class:`~kernelcore.runtime.store.DiskStore` next to the generated
code (keyed by the device, driver, build options, pyopencl's version and the
source; off with the code cache, see
:func:`~kernelcore.runtime.cache.set_caching_enabled`, or with
``KERNELCORE_BINARY_CACHE=0``); a binary the driver refuses is rebuilt from
source and replaced.

The compiler's output for generated code (its warnings: PoCL's "N warnings
generated", pyopencl's ``CompilerWarning`` about a non-empty build log) is
not the user's business: programs are built with ``-w`` and their build log
goes to this module's logger at debug level; with debug logging on
(``KERNELCORE_LOG=debug`` or ``LAZYARRAY_LOG=debug``) warnings are compiled
in and logged.

Public names: BuiltProgram, built_program, provide_program, compile_program,
build_options, format_build_error, BINARY_STATS.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pyopencl as cl
from pyopencl.characterize import has_src_build_cache

from kernelcore.diagnostic import OpenCLBuildError
from kernelcore.runtime.cache import STATS, caching_enabled
from kernelcore.runtime.once import KeyedLocks, made_once
from kernelcore.runtime.store import DiskStore, default_cache_dir

logger = logging.getLogger(__name__)
_PROGRAMS: dict[tuple, BuiltProgram] = {}
#: the most built programs kept in memory (a compiled program holds about
#: a megabyte of the OpenCL driver's memory; the disk caches serve the rest)
PROGRAMS_KEPT = 512
_BUILDING = KeyedLocks()
_LOCATION = re.compile(r":(\d+):(\d+)\b")


def format_build_error(source: str, log: str, what: str) -> str:
    """``<what> failed``, then the compiler's error lines (at most five), each
    with the source lines around it, then the whole compiler log."""
    lines = source.splitlines()
    quoted = []
    for log_line in log.splitlines():
        m = _LOCATION.search(log_line)
        if m is None or "error" not in log_line:
            continue
        lineno = int(m.group(1))
        lo, hi = max(1, lineno - 2), min(len(lines), lineno + 1)
        block = [f"{'>' if k == lineno else ' '} {k:4d} | {lines[k - 1]}"
                 for k in range(lo, hi + 1)]
        quoted.append(f"{log_line.strip()}\n" + "\n".join(block))
    msg = f"{what} failed"
    if quoted:
        msg += "\n" + "\n".join(quoted[:5])
    return msg + "\n--- compiler log ---\n" + log.strip()


def build_options(device: cl.Device) -> list[str]:
    """The options every program is built with: single-precision division and
    square roots correctly rounded where the device can (as NumPy's are;
    NVIDIA's OpenCL otherwise rounds ``x / 3.0f`` within 2.5 ulp)."""
    if device.single_fp_config & cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT:
        return ["-cl-fp32-correctly-rounded-divide-sqrt"]
    return []


def compile_program(ctx: cl.Context, source: str, keep_binary: bool = True) -> cl.Program:
    """*source* built for *ctx* with :func:`build_options` (from its binary on
    disk where the platform keeps no binaries of its own, see the module
    documentation; without *keep_binary*, always from source and nothing kept:
    asking PoCL for a binary compiles every kernel a second time, which a
    program built once per process, from the platform's source cache, does
    not pay)."""
    devices = ctx.devices
    options = build_options(devices[0])
    if not logger.isEnabledFor(logging.DEBUG):
        options = [*options, "-w"]          # (the compiler's warnings: see the module doc)
    if not keep_binary or len(devices) != 1 or not _binary_cache_on(devices[0]):
        return _build(cl.Program(ctx, source), options)
    key = _binary_key(devices[0], options, source)
    store = _binary_store()
    binary = store.get(key, lambda value: isinstance(value, bytes) and bool(value))
    if binary is not None:
        try:
            program = _build(cl.Program(ctx, devices, [binary]), options)
            BINARY_STATS["hits"] += 1
            return program
        except cl.Error as e:
            logger.warning("rebuilding a program from source: its stored binary "
                           "failed to build (%s)", e)
    program = _build(cl.Program(ctx, source), options)
    try:
        binaries = program.binaries
    except cl.Error:
        return program
    if binaries and binaries[0] and store.put(key, bytes(binaries[0])):
        BINARY_STATS["stores"] += 1
    return program


def _build(program: cl.Program, options: list[str]) -> cl.Program:
    """*program* built with *options*, pyopencl's ``CompilerWarning`` held
    back and the build log logged at debug level instead."""
    with _compiler_output_held():
        program.build(options=options)
    if logger.isEnabledFor(logging.DEBUG):
        for device in program.get_info(cl.program_info.DEVICES):  # type: ignore[attr-defined]
            log = program.get_build_info(device, cl.program_build_info.LOG)
            if log and log.strip():
                logger.debug("compiler output for %s:\n%s", device.name, log.strip())
    return program


#: builds under way that hold pyopencl's CompilerWarning back, and the lock
#: of the count (the warnings filter is the process's: installed while one
#: or more builds run, removed after the last)
_HOLDING = [0]
_HOLDING_LOCK = threading.Lock()


@contextmanager
def _compiler_output_held() -> Iterator[None]:
    with _HOLDING_LOCK:
        if not _HOLDING[0]:
            warnings.filterwarnings("ignore", category=cl.CompilerWarning)
        _HOLDING[0] += 1
    try:
        yield
    finally:
        with _HOLDING_LOCK:
            _HOLDING[0] -= 1
            if not _HOLDING[0]:
                entry = ("ignore", None, cl.CompilerWarning, None, 0)
                if entry in warnings.filters:
                    warnings.filters.remove(entry)  # type: ignore[attr-defined]
                    warnings._filters_mutated()      # type: ignore[attr-defined]


#: programs built from a stored binary, and binaries stored, by this process
BINARY_STATS = {"hits": 0, "stores": 0}
_BINARIES: dict[str, DiskStore] = {}
_BINARIES_LOCK = threading.Lock()
#: per device: whether its programs' binaries are kept (see the module documentation)
_ICD_CACHES: dict[int, bool] = {}


def _binary_cache_on(device: cl.Device) -> bool:
    if not caching_enabled() or os.environ.get("KERNELCORE_BINARY_CACHE", "1").lower() \
            in ("0", "false", "no"):
        return False
    on = _ICD_CACHES.get(device.int_ptr)
    if on is None:
        on = _ICD_CACHES[device.int_ptr] = bool(has_src_build_cache(device))
    return on


def _binary_key(device: cl.Device, options: list[str], source: str) -> str:
    identity = (device.platform.name, device.platform.version, device.name,
                device.driver_version, tuple(options), cl.VERSION,
                os.environ.get("PYOPENCL_BUILD_OPTIONS", ""))
    return hashlib.sha256(repr(identity).encode() + b"\0" + source.encode()).hexdigest()


def _binary_store() -> DiskStore:
    with _BINARIES_LOCK:
        if "store" not in _BINARIES:
            _BINARIES["store"] = DiskStore("kernelcore-binaries-v1", default_cache_dir())
        return _BINARIES["store"]


@dataclass(frozen=True)
class BuiltProgram:
    """A program's *kernels*, shared by its callers, and the *lock* under
    which a caller sets their arguments and enqueues them."""

    kernels: list[cl.Kernel]
    lock: threading.Lock = field(default_factory=threading.Lock)


def built_program(ctx: cl.Context, source: str, names: list[str], key: str) -> BuiltProgram:
    """The kernels *names* of *source* (whose code key is *key*) compiled for
    *ctx*: built once, then from memory."""

    def build() -> BuiltProgram:
        start = time.perf_counter()
        try:
            prg = compile_program(ctx, source)
        except (cl.RuntimeError, cl.LogicError) as e:
            raise OpenCLBuildError(format_build_error(
                source, str(e), f"OpenCL compilation of kernel '{names[0]}'")) from None
        STATS["builds"] += 1
        logger.info("built %s in %.1f ms", ", ".join(names),
                    1e3 * (time.perf_counter() - start))
        return BuiltProgram([getattr(prg, name) for name in names])

    return made_once(_PROGRAMS, (ctx.int_ptr, key), build, _BUILDING, PROGRAMS_KEPT)



def provide_program(ctx: cl.Context, key: str, kernels: list[cl.Kernel]) -> None:
    """Take *kernels* as the built program of code key *key* for *ctx* (built
    by the caller, say together with other programs as one), unless that
    program is built already."""
    made_once(_PROGRAMS, (ctx.int_ptr, key), lambda: BuiltProgram(kernels), _BUILDING,
              PROGRAMS_KEPT)
