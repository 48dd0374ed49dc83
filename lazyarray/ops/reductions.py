"""Reductions (sum, prod, max, min, any, all, mean) over axes.

Public names: reduce, normalize_axes.
"""

from __future__ import annotations

import numpy as np

from lazyarray.errors import ShapeError
from lazyarray.graph import Const, Map, Node, Reduce

_NUMPY = {"sum": np.sum, "product": np.prod, "max": np.max, "min": np.min,
          "any": np.any, "all": np.all}


def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """*axis* (None, an int or a tuple) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    result = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ShapeError(f"axis {a} is out of bounds for an array of dimension {ndim}")
        result.append(a % ndim)
    if len(set(result)) != len(result):
        raise ShapeError(f"repeated axis in {axis}")
    return tuple(sorted(result))


def reduce(op: str, node: Node, axis=None, keepdims: bool = False, dtype=None) -> Node:
    """The node of reduction *op* of *node* over *axis* (NumPy semantics)."""
    axes = normalize_axes(axis, node.ndim)
    size = int(np.prod([node.shape[a] for a in axes], dtype=np.int64))
    if op in ("max", "min") and size == 0:
        raise ShapeError(f"zero-size array to reduction operation {op}imum which has no "
                         "identity")
    if dtype is None:
        dtype = _NUMPY[op](np.zeros(1, node.dtype)).dtype
    arg = node if np.dtype(dtype) == node.dtype or op in ("any", "all") else \
        Map("astype", (node,), node.shape, dtype)
    return Reduce(op, axes, arg, dtype, keepdims)


def mean(node: Node, axis=None, keepdims: bool = False, dtype=None) -> Node:
    """Arithmetic mean over *axis* (NumPy's result dtype)."""
    axes = normalize_axes(axis, node.ndim)
    count = int(np.prod([node.shape[a] for a in axes], dtype=np.int64))
    result_dtype = np.dtype(dtype) if dtype is not None else \
        np.mean(np.zeros(1, node.dtype)).dtype
    total = reduce("sum", node, axes, keepdims, dtype=result_dtype)
    return Map("true_divide", (total, Const(count, np.int64, True)), total.shape, result_dtype)
