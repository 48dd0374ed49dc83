"""Shape manipulation built from views, reshapes and concatenation (no copies
until a kernel reads them).

Public names: broadcast_to, expand_dims, squeeze, moveaxis, swapaxes, flip,
roll, tile, repeat, pad.
"""

from __future__ import annotations

import numbers
import operator
from typing import Any

import numpy as np

from lazyarray.errors import ShapeError
from lazyarray.graph import Gather, Node, View
from lazyarray.ops.construct import checked_size, concatenate, full
from lazyarray.ops.elementwise import broadcast_shapes
from lazyarray.ops.inputs import input_node
from lazyarray.ops.reductions import normalize_axes
from lazyarray.ops.shape import getitem, reshape, transpose


def _one_axis(axis, ndim: int) -> int:
    (axis,) = normalize_axes(axis, ndim)
    return axis


def broadcast_to(node: Node, shape: Any) -> Node:
    """*node* seen with *shape* under NumPy's broadcasting rules."""
    shape = checked_size(tuple(int(s) for s in ((shape,) if isinstance(shape, numbers.Integral)
                                                else shape)), node.dtype)
    try:
        result = broadcast_shapes(node.shape, shape)
    except ShapeError:
        result = None
    if result != shape:
        raise ShapeError(f"cannot broadcast an array of shape {node.shape} to {shape}")
    offset = len(shape) - node.ndim
    axis_map = [("const", 0) if extent == 1 and shape[k + offset] != 1
                else ("axis", k + offset, 0, 1) for k, extent in enumerate(node.shape)]
    return View(node, axis_map, shape)


def expand_dims(node: Node, axis: Any) -> Node:
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    ndim = node.ndim + len(axes)
    new = normalize_axes(axes, ndim)
    shape = iter(node.shape)
    return reshape(node, tuple(1 if k in new else next(shape) for k in range(ndim)))


def squeeze(node: Node, axis: int | tuple[int, ...] | None = None) -> Node:
    axes = [k for k, s in enumerate(node.shape) if s == 1] if axis is None \
        else normalize_axes(axis, node.ndim)
    for a in axes:
        if node.shape[a] != 1:
            raise ShapeError(f"cannot select an axis to squeeze out which has size not "
                             f"equal to one (axis {a} has size {node.shape[a]})")
    return reshape(node, tuple(s for k, s in enumerate(node.shape) if k not in axes))


def moveaxis(node: Node, source: Any, destination: Any) -> Node:
    src = [_one_axis(s, node.ndim) for s in ((source,) if isinstance(
        source, numbers.Integral) else source)]
    dst = [_one_axis(d, node.ndim) for d in ((destination,) if isinstance(
        destination, numbers.Integral) else destination)]
    if len(src) != len(dst):
        raise ShapeError("moveaxis: source and destination must have the same number "
                         "of elements")
    for axes, which in ((src, "source"), (dst, "destination")):
        if len(set(axes)) != len(axes):
            raise ShapeError(f"repeated axis in `{which}` argument")
    order = [k for k in range(node.ndim) if k not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(node, order)


def swapaxes(node: Node, axis1: int, axis2: int) -> Node:
    a, b = _one_axis(axis1, node.ndim), _one_axis(axis2, node.ndim)
    order = list(range(node.ndim))
    order[a], order[b] = order[b], order[a]
    return transpose(node, order)


def flip(node: Node, axis: int | tuple[int, ...] | None = None) -> Node:
    axes = normalize_axes(axis, node.ndim)
    return getitem(node, tuple(slice(None, None, -1) if k in axes else slice(None)
                               for k in range(node.ndim)))


def _take_range(node: Node, axis: int, start: int, stop: int) -> Node:
    return getitem(node, (slice(None),) * axis + (slice(start, stop),))


def roll(node: Node, shift: Any, axis: Any = None) -> Node:
    if axis is None:
        return reshape(roll(reshape(node, -1), shift, 0), node.shape)
    shifts = (shift,) if isinstance(shift, numbers.Integral) else tuple(shift)
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ShapeError("roll: shift and axis must have the same length")
    for s, a in zip(shifts, axes):
        a = _one_axis(a, node.ndim)
        n = node.shape[a]
        if n == 0 or int(s) % n == 0:
            continue
        k = int(s) % n
        node = concatenate([_take_range(node, a, n - k, n), _take_range(node, a, 0, n - k)],
                           a)
    return node


def tile(node: Node, reps: Any) -> Node:
    reps = (operator.index(reps),) if not hasattr(reps, "__len__") \
        else tuple(operator.index(r) for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError("negative dimensions are not allowed")
    ndim = max(node.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    base = reshape(node, (1,) * (ndim - node.ndim) + node.shape)
    # (r0, n0, r1, n1, ...) broadcast, then merged pairwise
    spread = reshape(base, tuple(x for s in base.shape for x in (1, s)))
    target = tuple(x for r, s in zip(reps, base.shape) for x in (r, s))
    return reshape(broadcast_to(spread, target),
                   tuple(r * s for r, s in zip(reps, base.shape)))


def repeat(node: Node, repeats: Any, axis: int | tuple[int, ...] | None = None) -> Node:
    """NumPy's repeat: a number of repeats, or one per element along *axis*
    (an array: its values are read now, as the result's length needs them)."""
    if axis is None:
        node, axis = reshape(node, -1), 0
    axis = _one_axis(axis, node.ndim)
    if not isinstance(repeats, numbers.Integral):
        counts = np.asarray(repeats.get() if hasattr(repeats, "get") else repeats)
        if counts.ndim == 0 or counts.size == 1:
            repeats = int(counts.reshape(-1)[0]) if counts.size else 0
        else:
            index = np.repeat(np.arange(node.shape[axis]), counts)     # (NumPy's checks)
            return Gather(node, input_node(index.astype(np.int64)), axis)
    if int(repeats) < 0:
        raise ValueError("negative dimensions are not allowed")
    shape = node.shape
    expanded = reshape(node, shape[:axis + 1] + (1,) + shape[axis + 1:])
    spread = broadcast_to(expanded, shape[:axis + 1] + (int(repeats),) + shape[axis + 1:])
    return reshape(spread, shape[:axis] + (shape[axis] * int(repeats),) + shape[axis + 1:])


#: pad's modes that re-index the array (the others compute values)
REINDEXING_PADS = ("edge", "wrap", "reflect", "symmetric")

#: a re-indexing of more runs than this gathers by an index array
_MOST_RUNS = 8


def _runs(index: np.ndarray) -> list[tuple[int, int, int]]:
    """*index* as runs ``(first, step, length)`` of steps 1, -1 or 0."""
    runs, i, m = [], 0, len(index)
    while i < m:
        j = i + 1
        step = int(index[j] - index[i]) if j < m else 1
        if step not in (-1, 0, 1):
            step = 1
        else:
            while j < m and index[j] - index[j - 1] == step:
                j += 1
        runs.append((int(index[i]), step, j - i))
        i = j
    return runs


def reindex(node: Node, axis: int, index: np.ndarray) -> Node:
    """*node* with the elements along *axis* at positions *index* (ints in
    ``[0, n)``): slices, flips and broadcasts of it, joined, or a gather."""
    runs = _runs(index)
    if len(runs) > _MOST_RUNS:
        return Gather(node, input_node(index.astype(np.int64)), axis)
    parts = []
    for first, step, length in runs:
        if step == 1:
            parts.append(_take_range(node, axis, first, first + length))
        elif step == -1:
            parts.append(flip(_take_range(node, axis, first - length + 1, first + 1), axis))
        else:
            shape = list(node.shape)
            shape[axis] = length
            parts.append(broadcast_to(_take_range(node, axis, first, first + 1), tuple(shape)))
    return parts[0] if len(parts) == 1 else concatenate(parts, axis)


def pad(node: Node, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Node:
    """NumPy's pad for ``constant`` (*constant_values* per axis and side as
    NumPy takes them) and the re-indexing modes (``edge``, ``wrap``,
    ``reflect`` and ``symmetric`` with even reflections)."""
    if np.asarray(pad_width).dtype.kind not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (node.ndim, 2))
    if (widths < 0).any():
        raise ShapeError("pad: index can't contain negative values")
    if mode != "constant" and mode not in REINDEXING_PADS:
        raise ShapeError(f"pad: mode '{mode}' is not a re-indexing (constant, "
                         f"{', '.join(REINDEXING_PADS)})")
    if mode == "constant":
        # (NumPy's own checks of the values: their shape, Python integers
        # outside the dtype's range)
        np.pad(np.zeros((1,) * node.ndim, node.dtype), 1, constant_values=constant_values)
    values = np.broadcast_to(np.asarray(constant_values), (node.ndim, 2))
    for axis, (before, after) in enumerate(widths.tolist()):
        if before == after == 0:
            continue
        n = node.shape[axis]
        if mode != "constant":
            if n == 0:
                raise ShapeError(f"pad: can't extend empty axis {axis} using mode '{mode}'")
            node = reindex(node, axis, np.pad(np.arange(n), (before, after), mode=mode))  # type: ignore[call-overload]
            continue
        parts = []
        for width, value in ((before, values[axis, 0]), (after, values[axis, 1])):
            shape = list(node.shape)
            shape[axis] = width
            parts.append(full(shape, value, node.dtype) if width else None)
        node = concatenate([p for p in (parts[0], node, parts[1]) if p is not None], axis)
    return node

