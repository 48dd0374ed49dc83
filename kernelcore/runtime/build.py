"""Compiling device code with pyopencl, with readable build errors.

Public names: build_kernels, compile_program, build_options, format_build_error.
"""

from __future__ import annotations

import logging
import re
import time

import pyopencl as cl

from kernelcore.diagnostic import OpenCLBuildError
from kernelcore.runtime.cache import STATS

logger = logging.getLogger(__name__)
_PROGRAMS: dict[tuple, cl.Kernel] = {}
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


def build_kernels(ctx: cl.Context, source: str, names: list[str], key: str
                  ) -> list[cl.Kernel]:
    """The compiled kernels *names* of *source* for *ctx* (cached in memory)."""
    cache_key = (ctx.int_ptr, key)
    kernels = _PROGRAMS.get(cache_key)
    if kernels is not None:
        return kernels
    start = time.perf_counter()
    try:
        prg = compile_program(ctx, source)
    except (cl.RuntimeError, cl.LogicError) as e:
        raise OpenCLBuildError(format_build_error(
            source, str(e), f"OpenCL compilation of kernel '{names[0]}'")) from None
    STATS["builds"] += 1
    kernels = [getattr(prg, name) for name in names]
    _PROGRAMS[cache_key] = kernels
    logger.info("built %s in %.1f ms", ", ".join(names), 1e3 * (time.perf_counter() - start))
    return kernels
