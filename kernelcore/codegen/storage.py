"""Storage of temporaries in generated code: sizes and initial values.

Public names: storage_size, initial_values.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from pymbolic.mapper.stringifier import PREC_NONE

from kernelcore.diagnostic import CodeGenerationError


def storage_size(name: str, tv) -> int:
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


def initial_values(tv, size: int, emit: Callable) -> str:
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


__all__ = ["storage_size", "initial_values"]
