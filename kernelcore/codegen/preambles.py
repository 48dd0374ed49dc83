"""Preambles that kernels bring: their own ``preambles`` and the code their
``preamble_generators`` give (loopy's forms), of a kernel and of the kernels it
calls.

Public names: PreambleInfo, kernel_preambles.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from kernelcore.callable_kernel import CallableKernel
from kernelcore.callables import NumpyType
from kernelcore.diagnostic import CodeGenerationError
from kernelcore.ir.kernel import LoopKernel


@dataclass(frozen=True)
class PreambleInfo:
    """What a preamble generator is told (loopy's ``PreambleInfo``): the
    kernel, the types and the names of the functions its code uses.
    kernelcore writes its own atomic operations, so *seen_atomic_dtypes* is
    empty; there is no *codegen_state*."""

    kernel: LoopKernel
    seen_dtypes: frozenset
    seen_functions: frozenset
    seen_atomic_dtypes: frozenset = frozenset()
    codegen_state: Any = None


def _kernels(knl: LoopKernel) -> Iterator[LoopKernel]:
    """*knl* and the kernels it calls, each once."""
    pending, seen = [knl], set()
    while pending:
        k = pending.pop(0)
        if id(k) in seen:
            continue
        seen.add(id(k))
        yield k
        pending += [c.subkernel for c in k.callables.values() if isinstance(c, CallableKernel)]


def kernel_preambles(knl: LoopKernel, dtypes: set[np.dtype],
                     functions: set[str]) -> dict[str, str]:
    """The (key -> C code) preambles of *knl* and of the kernels it calls,
    the first of each key kept; *dtypes* and *functions* are what the code uses."""
    found: dict[str, str] = {}
    seen_dtypes = frozenset(NumpyType(dt) for dt in dtypes)
    for k in _kernels(knl):
        info = PreambleInfo(k, seen_dtypes, frozenset(functions))
        pairs = list(k.preambles)
        for generator in k.preamble_generators:
            for pair in generator(info) or ():
                if not (isinstance(pair, tuple) and len(pair) == 2):
                    raise CodeGenerationError(
                        f"preamble generator {generator!r} of kernel '{k.name}' gave "
                        f"{pair!r}, not a (key, code) pair")
                pairs.append(pair)
        for key, code in pairs:
            found.setdefault(str(key), str(code))
    return found
