"""Storage of temporaries in generated code: sizes and initial values.

Public names: storage_size, variable_storage_size, initial_values, check_definitions.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import numpy as np
import pymbolic.primitives as prim
from pymbolic.mapper.stringifier import PREC_NONE

from kernelcore.diagnostic import CodeGenerationError, MissingDefinitionError
from kernelcore.ir.data import AddressSpace, TemporaryVariable
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.simplify import simplify


def variable_storage_size(tv: TemporaryVariable) -> Any:
    """The elements a private temporary of parametric shape spans, as an
    expression of the parameters (for a C99 variable-length array, as loopy
    declares it; OpenCL C has none, so such a kernel builds on the C target
    only); None when its shape and strides are constants."""
    shape, strides = tuple(tv.shape), tuple(tv.element_strides())
    if all(isinstance(s, (int, np.integer)) for s in (*shape, *strides)):
        return None
    if tv.strides is None:          # the default dense layout: the product
        return simplify(prim.Product(shape))
    return simplify(prim.Sum((1, *(prim.Product((prim.Sum((n, -1)), st))
                                   for n, st in zip(shape, strides)))))


def storage_size(name: str, tv: TemporaryVariable) -> int:
    """Elements a temporary spans: its shape times its strides (padded
    strides, such as a tile with one spare column, span more than the shape)."""
    extents = []
    for s in (*tv.shape, *tv.element_strides()):
        if not isinstance(s, (int, np.integer)):
            raise CodeGenerationError(
                f"{tv.address_space} temporary '{name}' needs a constant shape and "
                f"strides, got shape {tv.shape}")
        extents.append(int(s))
    shape, strides = extents[:len(tv.shape)], extents[len(tv.shape):]
    if 0 in shape:
        return 0
    return 1 + sum((n - 1) * abs(st) for n, st in zip(shape, strides))


def initial_values(tv: TemporaryVariable, size: int, emit: Callable[..., str]) -> str:
    """The C initializer list of *tv*'s storage (its initializer's values placed
    by its strides; *emit(value, context, prec, dtype)* writes one value)."""
    values = np.asarray(tv.initializer, dtype=tv.dtype)
    if values.shape != tuple(tv.shape):
        raise CodeGenerationError(f"temporary '{tv.name}': its initializer has shape "
                                  f"{values.shape}, the temporary {tuple(tv.shape)}")
    flat = np.zeros(size, dtype=tv.dtype)
    index = np.indices(values.shape).reshape(values.ndim, -1)
    flat[np.array([int(s) for s in tv.element_strides()], dtype=np.int64) @ index] = \
        values.reshape(-1)
    return ", ".join(emit(v, None, PREC_NONE, tv.dtype) for v in flat)


def check_definitions(knl: LoopKernel, kernel_name: str, insn_ids: Collection[str]) -> None:
    """Private and local temporaries do not survive between device kernels:
    each one read by the instructions *insn_ids* of device kernel
    *kernel_name* must be written there, by an instruction the reader
    depends on if it depends on a writer at all (a reduction's update
    reads the value its initialization wrote)."""
    insns = [knl.id_to_insn[i] for i in insn_ids]
    here = set(insn_ids)
    written = set().union(*(i.assignee_names() for i in insns)) if insns else set()
    for insn in insns:
        for name in sorted(insn.read_dependency_names()):
            tv = knl.temporary_variables.get(name)
            if tv is None or tv.address_space == AddressSpace.GLOBAL \
                    or tv.initializer is not None:
                continue
            writers = {d for d in insn.depends_on
                       if name in knl.id_to_insn[d].assignee_names()}
            if name not in written or (writers and not writers & here):
                raise MissingDefinitionError(
                    f"temporary variable '{name}' gets used in subkernel "
                    f"'{kernel_name}' without a definition (maybe you forgot to call "
                    "save_and_reload_temporaries?)")


__all__ = ["storage_size", "variable_storage_size", "initial_values", "check_definitions"]
