"""Compiling device code with pyopencl, with readable build errors.

Public names: build_kernels, format_build_error.
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


def build_kernels(ctx: cl.Context, source: str, names: list[str], key: str
                  ) -> list[cl.Kernel]:
    """The compiled kernels *names* of *source* for *ctx* (cached in memory)."""
    cache_key = (ctx.int_ptr, key)
    kernels = _PROGRAMS.get(cache_key)
    if kernels is not None:
        return kernels
    start = time.perf_counter()
    try:
        prg = cl.Program(ctx, source).build()
    except (cl.RuntimeError, cl.LogicError) as e:
        raise OpenCLBuildError(format_build_error(
            source, str(e), f"OpenCL compilation of kernel '{names[0]}'")) from None
    STATS["builds"] += 1
    kernels = [getattr(prg, name) for name in names]
    _PROGRAMS[cache_key] = kernels
    logger.info("built %s in %.1f ms", ", ".join(names), 1e3 * (time.perf_counter() - start))
    return kernels
