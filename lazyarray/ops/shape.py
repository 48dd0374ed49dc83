"""Views: basic indexing, transposes and reshapes (index maps, no copies).

Public names: getitem, transpose, reshape, take.
"""

from __future__ import annotations

import numpy as np

from lazyarray.errors import IndexingError, ShapeError
from lazyarray.graph import Node, Reshape, View


def _identity_map(node: Node):
    return [("axis", k, 0, 1) for k in range(node.ndim)]


def getitem(node: Node, key) -> Node:
    """NumPy basic indexing: integers, slices (any step), ``None`` and ``...``."""
    key = key if isinstance(key, tuple) else (key,)
    if key and _is_index_array(key[0]) and all(
            isinstance(k, slice) and k == slice(None) for k in key[1:]):
        return _array_index(node, key[0])
    if any(not (isinstance(k, (int, np.integer, slice)) or k is None or k is Ellipsis)
           for k in key):
        raise IndexingError("only integers, slices, None, ... and one integer or "
                            "boolean array as the first index are supported")
    if sum(k is Ellipsis for k in key) > 1:
        raise ShapeError("an index can only have a single ellipsis ('...')")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > node.ndim:
        raise IndexingError(f"too many indices for array: array is {node.ndim}-dimensional, "
                         f"but {n_real} were indexed")
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key = key[:at] + (slice(None),) * (node.ndim - n_real) + key[at + 1:]
    else:
        key = key + (slice(None),) * (node.ndim - n_real)
    axis_map = []
    shape = []
    axis = 0
    for k in key:
        if k is None:
            shape.append(1)
            continue
        extent = node.shape[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(extent)
            length = len(range(start, stop, step))
            axis_map.append(("axis", len(shape), start if length else 0, step))
            shape.append(length)
        else:
            i = int(k)
            if not -extent <= i < extent:
                raise IndexingError(f"index {i} is out of bounds for axis {axis} with size "
                                 f"{extent}")
            axis_map.append(("const", i % extent))
        axis += 1
    return View(node, axis_map, shape)


def _is_index_array(k) -> bool:
    from lazyarray.array import LazyArray
    return isinstance(k, (list, np.ndarray, LazyArray))


def _array_index(node: Node, key) -> Node:
    """``x[indices]`` (integers, along axis 0) or ``x[mask]`` (booleans over the
    leading axes; the mask is computed first, as its count sets the shape)."""
    from lazyarray.array import LazyArray, asarray
    from lazyarray.runtime import evaluate, refuse_while_tracing
    mask = key if isinstance(key, LazyArray) else asarray(np.asarray(key))
    if mask.dtype != np.bool_:
        return take(node, mask, 0)
    if mask.shape != node.shape[:mask.ndim]:
        raise IndexingError(f"boolean index of shape {mask.shape} does not match the "
                            f"array's leading shape {node.shape[:mask.ndim]}")
    refuse_while_tracing("indexing with a boolean mask (its count sets the shape)")
    positions = np.flatnonzero(evaluate(mask.node).get())
    rows = reshape(node, (int(np.prod(mask.shape, dtype=np.int64)),) + node.shape[mask.ndim:])
    return take(rows, positions.astype(np.int64), 0)


def transpose(node: Node, axes=None) -> Node:
    """The axes of *node* permuted (reversed by default)."""
    axes = tuple(reversed(range(node.ndim))) if axes is None else tuple(
        int(a) % node.ndim for a in axes)
    if sorted(axes) != list(range(node.ndim)):
        raise ShapeError(f"axes {axes} don't match array of dimension {node.ndim}")
    axis_map = [None] * node.ndim
    for out_axis, in_axis in enumerate(axes):
        axis_map[in_axis] = ("axis", out_axis, 0, 1)
    return View(node, axis_map, [node.shape[a] for a in axes])


def reshape(node: Node, shape) -> Node:
    """*node*'s elements in C order, in *shape* (one entry may be -1)."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    size = int(np.prod(node.shape, dtype=np.int64))
    if shape.count(-1) > 1:
        raise ShapeError("can only specify one unknown dimension")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ShapeError(f"cannot reshape array of size {size} into shape {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != size:
        raise ShapeError(f"cannot reshape array of size {size} into shape {shape}")
    if shape == node.shape:
        return node
    return Reshape(node, shape)


def take(node: Node, indices, axis: int | None = 0) -> Node:
    """Elements of *node* at integer *indices* along *axis* (NumPy's take;
    ``None``: of the flattened array). Indices are checked against the extent
    when the call is made, computing lazy index arrays first."""
    from lazyarray.array import LazyArray, asarray
    from lazyarray.runtime import evaluate
    if axis is None:
        node, axis = reshape(node, -1), 0
    if node.ndim == 0:
        raise IndexingError("cannot index a 0-d array with an integer array")
    if not -node.ndim <= axis < node.ndim:
        raise ShapeError(f"axis {axis} is out of bounds for array of dimension {node.ndim}")
    axis %= node.ndim
    index_array = indices if isinstance(indices, LazyArray) else asarray(np.asarray(indices))
    if index_array.dtype.kind not in "iu":
        raise IndexingError(f"arrays used as indices must be of integer type, got "
                            f"{index_array.dtype}")
    host = evaluate(index_array.node).get() if index_array.size else np.zeros(0, np.int64)
    extent = node.shape[axis]
    if host.size and (host.min() < -extent or host.max() >= extent):
        bad = host[(host < -extent) | (host >= extent)].flat[0]
        raise IndexingError(f"index {bad} is out of bounds for axis {axis} with size "
                            f"{extent}")
    from lazyarray.graph import Gather
    return Gather(node, index_array.node, axis)
