"""NumPy's reduction keywords on lazy arrays: ``where=`` (the elements that
take part), ``initial=`` (a value every reduction starts from) and ``out=``
(an array the result is written into), with NumPy's semantics, also
combined. They work on the arrays' graph nodes (this module is part of
lazy arrays' methods, below :mod:`lazyarray.handle`) and call NumPy's ufuncs
where the arrays' protocols decide.

Public names: NO_VALUE, given, mask_of, filled, extreme, with_initial, masked_mean,
masked_var, into.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lazyarray.ops import reductions
from lazyarray.ops.construct import full
from lazyarray.ops.elementwise import cast, elementwise
from lazyarray.ops.inputs import ArrayHandle, node_of
from lazyarray.ops.manipulate import broadcast_to

#: NumPy's marker of a keyword left out
NO_VALUE: Any = np._NoValue


def given(value: Any) -> bool:
    """Whether the keyword *value* was given (not left out, not None)."""
    return value is not NO_VALUE and value is not None


def mask_of(x: Any, where: Any) -> ArrayHandle | None:
    """The ``where=`` mask broadcast to *x*'s shape (a lazy bool array), or
    None where every element takes part."""
    if where is True or where is NO_VALUE:
        return None
    return x._of_node(broadcast_to(cast(node_of(where), np.bool_), x.shape))


def filled(x: Any, mask: ArrayHandle, value: Any) -> Any:
    """*x* where *mask* is true, *value* (as *x*'s dtype) elsewhere."""
    fill = node_of(np.asarray(value).astype(x.dtype)[()])
    return x._of_node(elementwise("where", mask.node, x.node, fill))


def _scalar(value: Any, dtype: np.dtype) -> np.generic:
    """*value* cast to *dtype* as NumPy casts ``initial=`` (one value)."""
    value = np.asarray(value.get() if hasattr(value, "get") else value)
    if value.ndim:
        raise ValueError("setting an array element with a sequence.")
    return value.astype(dtype)[()]


def with_initial(result: Any, op: str, initial: Any) -> Any:
    """*result* combined with ``initial=`` by reduction *op* (sum, product,
    max or min)."""
    if not given(initial):
        return result
    start = _scalar(initial, result.dtype)
    if op == "sum":
        return result + start
    if op == "product":
        return result * start
    return (np.maximum if op == "max" else np.minimum)(result, start)


def extreme(x: Any, op: str, axis: Any, keepdims: bool, initial: Any, where: Any) -> Any:
    """The max or min (*op*) of *x* along *axis* with ``initial=`` and
    ``where=``: masked elements and empty slices take *initial*."""
    mask = mask_of(x, where)
    if mask is not None:
        if not given(initial):
            raise ValueError(f"reduction operation '{op}imum' does not have an identity, so "
                             "to use a where mask one has to specify 'initial'")
        x = filled(x, mask, initial)
    axes = reductions.normalize_axes(axis, x.ndim)
    if given(initial) and math.prod(x.shape[a] for a in axes) == 0:
        shape = np.sum(np.empty(x.shape, np.bool_), axis=axes, keepdims=keepdims).shape
        return x._of_node(full(shape, _scalar(initial, x.dtype), x.dtype))
    return with_initial(x._of_node(reductions.reduce(op, x.node, axis, keepdims)), op, initial)


def _count(mask, axis: Any, keepdims: bool):
    """How many elements of each slice *mask* selects."""
    return mask.sum(axis=axis, keepdims=keepdims, dtype=np.int64)


def masked_mean(x: Any, mask: ArrayHandle, axis: Any, keepdims: bool, dtype: Any) -> Any:
    """The mean of the elements of *x* that *mask* selects (NaN for slices
    with none)."""
    kind = np.mean(np.ones(1, x.dtype), dtype=dtype).dtype
    total = filled(x, mask, 0).sum(axis=axis, dtype=kind, keepdims=keepdims)
    return (total / _count(mask, axis, keepdims)).astype(kind)


def masked_var(x: Any, mask: ArrayHandle, axis: Any, keepdims: bool, dtype: Any,
               ddof: float) -> Any:
    """The variance of the elements of *x* that *mask* selects, with *ddof*
    degrees of freedom less (NumPy's: no fewer than zero)."""
    kind = np.var(np.ones(1, x.dtype), dtype=dtype).dtype
    centered = filled(x - masked_mean(x, mask, axis, True, dtype), mask, 0)
    if centered.dtype.kind == "c":
        squares = centered.real * centered.real + centered.imag * centered.imag
    else:
        squares = centered * centered
    total = squares.sum(axis=axis, dtype=kind, keepdims=keepdims)
    return (total / np.maximum(_count(mask, axis, keepdims) - ddof, 0)).astype(kind)


def into(result: Any, out: Any) -> Any:
    """*result*, or written into *out* (a lazy or NumPy array of the
    result's shape; values cast as NumPy's ``out=`` casts them) and *out*."""
    if out is None:
        return result
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError("a reduction has one output: out= takes one array")
        out = out[0]
    if not isinstance(out, (ArrayHandle, np.ndarray)):
        raise TypeError(f"out= must be an array, not {type(out).__name__}")
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError(f"output parameter has shape {tuple(out.shape)}, but the result has "
                         f"shape {tuple(result.shape)}")
    if isinstance(out, ArrayHandle):
        out[...] = result.astype(out.dtype)
    else:
        out[...] = result.get()
    return out
