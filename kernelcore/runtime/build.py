"""Compiling device code with pyopencl, with readable build errors.

A program is built once per context and code key, also when several threads
ask for it at the same time (different programs build concurrently). Its
kernels come with a lock: a kernel's arguments are set and it is enqueued
under that lock, so threads sharing the kernels do not launch each other's
arguments.

Public names: BuiltProgram, built_program, compile_program, build_options,
format_build_error.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, field

import pyopencl as cl

from kernelcore.diagnostic import OpenCLBuildError
from kernelcore.runtime.cache import STATS
from kernelcore.runtime.once import KeyedLocks, made_once

logger = logging.getLogger(__name__)
_PROGRAMS: dict[tuple, BuiltProgram] = {}
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


def compile_program(ctx: cl.Context, source: str) -> cl.Program:
    """*source* built for *ctx* with :func:`build_options`."""
    return cl.Program(ctx, source).build(options=build_options(ctx.devices[0]))


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

    return made_once(_PROGRAMS, (ctx.int_ptr, key), build, _BUILDING)

