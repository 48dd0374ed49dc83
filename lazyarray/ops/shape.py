"""Views: indexing, transposes and reshapes (index maps, no copies), and
functional updates of indexed regions (``x[key] = value``).

Public names: getitem, setitem, transpose, reshape, take, permutation_of,
part_write_back, check_host_indices (keys are read by :mod:`lazyarray.ops.keys`).
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

import lazyarray.run as _run
from lazyarray.errors import AxisError, IndexingError, ShapeError, ViewWriteError
from lazyarray.graph import Concat, Const, Gather, Iota, Map, Node, Reshape, View, computed
from lazyarray.mapper import is_node
from lazyarray.ops import regions
from lazyarray.ops.elementwise import cast, constant
from lazyarray.ops.inputs import ArrayHandle, input_node
from lazyarray.ops.keys import basic_plan, expand, is_array, is_int, is_mask, plan_key, scalar_bool
from lazyarray.tracing import refuse_while_tracing, traced_argument_data, traced_value


def _identity_map(node: Node):
    return [("axis", k, 0, 1) for k in range(node.ndim)]


# {{{ reading: getitem

def _with_scalar_booleans(node: Node, key: tuple) -> Node:
    """``x[..., True, ...]``: a new axis of length 1 (0 for False) where each
    boolean scalar stands, as NumPy indexes (the other entries basic)."""
    entries = list(key)
    truths = [bool(np.asarray(k)) if isinstance(k, (bool, np.bool_, np.ndarray)) else bool(k)
              for k in entries if scalar_bool(k)]
    result = getitem(node, tuple(None if scalar_bool(k) else k for k in entries))
    if all(truths):
        return result
    # the new axes are where the booleans stand among the entries that keep an axis
    position, cut = 0, []
    for k in entries:
        if scalar_bool(k):
            cut.append(position)
        if k is Ellipsis:
            position += node.ndim - sum(1 for e in entries if not (
                e is None or e is Ellipsis or scalar_bool(e)))
        elif not is_int(k):
            position += 1
    return getitem(result, tuple(slice(0, 0) if a in cut and not truths[cut.index(a)]
                                 else slice(None) for a in range(result.ndim)))


def getitem(node: Node, key: Any) -> Node:
    """NumPy indexing: integers, slices (any step), ``None``, ``...``, and
    integer or boolean arrays (NumPy's rules for mixing them with the rest)."""
    plan = basic_plan(node.shape, key)
    if plan is not None:
        return _basic_getitem(node, *plan[:3])
    entries = key if isinstance(key, tuple) else (key,)
    if any(scalar_bool(k) for k in entries) and all(
            scalar_bool(k) or k is None or k is Ellipsis or isinstance(k, slice) or is_int(k)
            for k in entries):
        return _with_scalar_booleans(node, entries)
    key = expand(key, node.ndim)
    if any(is_array(k) for k in key):
        return _advanced_getitem(node, key)
    return _basic_getitem(node, *plan_key(node.shape, key))


def _basic_getitem(node: Node, axis_map, shape: tuple, ranges: list) -> Node:
    """The View of *node* by a basic key's plan (an element of a computed
    array as an input of its own; a region of one whose offsets keep
    changing read with offsets as kernel arguments)."""
    if not shape and 0 not in node.shape:
        element = regions.element_read(node, axis_map, ranges)
        if element is not None:
            return element
    if 0 not in shape and regions.computed_outside_trace(node):
        if regions.one_run(node.shape, ranges):
            if regions.REGION_OFFSETS.vary(node, ranges, "window"):
                return regions.window_read(node, ranges, shape)
        elif regions.REGION_OFFSETS.vary(node, ranges, "read"):
            return regions.dynamic_read(node, ranges, shape)
    return View(node, axis_map, shape)


#: the smallest and largest value of each index array node checked by
#: :func:`_checked_indices` (nodes are values: checked once per node)
_INDEX_BOUNDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _checked_indices(index, extent: int, axis: int) -> Node:
    """The node of an integer index array whose values are checked against
    *extent*: against bounds that hold all its values where those follow
    from computed arrays it re-indexes (:func:`_value_bounds`: a pick of an
    index table by checked indices builds and runs no kernel), else on its
    own values (a lazy array is computed first). Bounds are read back once
    per node, then remembered."""
    node = index.node if isinstance(index, ArrayHandle) else input_node(index)
    if node.dtype.kind not in "iu":
        raise IndexingError(f"arrays used as indices must be of integer type (or boolean), "
                            f"got {node.dtype}")
    if 0 in node.shape:
        return node
    if traced_value(node):
        # (values each jitted call computes anew are not checked: out of
        # bounds, they wrap around the extent; an index argument is checked
        # in the call that traces, with its values)
        data = traced_argument_data(node)
        if data is not None:
            check_host_indices(data.get(), extent, axis)
        return node
    bounds = _value_bounds(node)
    if bounds is None or bounds[0] < -extent or bounds[1] >= extent:
        # (the node's own values: bounds that hold the values of what it
        # picks from may be wider than its own)
        host = _run.evaluate(node).get()
        bounds = _INDEX_BOUNDS[node] = (int(host.min()), int(host.max()))
        if isinstance(index, ArrayHandle) and index.node is not node:
            _INDEX_BOUNDS[index.node] = bounds      # (its handle now holds it as a leaf)
        check_host_indices(host, extent, axis)
    return node


def check_host_indices(host: np.ndarray, extent: int, axis: int) -> None:
    """IndexError naming the first of the indices *host* outside the axis."""
    outside = (host < -extent) | (host >= extent)
    if outside.any():
        raise IndexingError(f"index {host[outside].flat[0]} is out of bounds for axis {axis} "
                            f"with size {extent}")


def _value_bounds(node: Node) -> tuple[int, int] | None:
    """The smallest and largest value of the computed integer array that
    *node* takes all its values from (itself, or one that views, reshapes,
    picks from with a gather or widens to int64 read from), read back once
    per computed node; None when *node* computes new values (the caller
    computes it)."""
    while True:
        bounds = _INDEX_BOUNDS.get(node)
        if bounds is not None:
            return bounds
        if computed(node):
            host = _run.evaluate(node).get()
            if not host.size:
                return None
            bounds = _INDEX_BOUNDS[node] = (int(host.min()), int(host.max()))
            return bounds
        if isinstance(node, (View, Reshape, Gather)):
            node = node.arg
        elif isinstance(node, Map) and node.op == "astype" and node.dtype == np.int64 \
                and _widens_to_int64(node.args[0].dtype):
            node = node.args[0]
        else:
            return None


def _widens_to_int64(dtype: np.dtype) -> bool:
    """Whether every value of integer *dtype* is an int64 value."""
    return dtype.kind == "i" or (dtype.kind == "u" and dtype.itemsize < 8)


def _wrapped(index: Node, extent: int) -> Node:
    """int64 *index* with negative entries counted from the end (checked
    indices; a later jitted call may pass other values, hence not on the host)."""
    unsigned = index.dtype.kind == "u"
    if index.dtype != np.int64:
        index = Map("astype", (index,), index.shape, np.int64)
    if unsigned:
        return index
    negative = Map("less", (index, Const(0, np.int64, False)), index.shape, np.bool_)
    shifted = Map("add", (index, Const(extent, np.int64, False)), index.shape, np.int64)
    return Map("where", (negative, shifted, index), index.shape, np.int64)


def _mask_positions(mask, shape: tuple, axis: int):
    """The C-order positions of the true entries of boolean *mask*, which
    covers the axes of *shape* (computed now: the count sets the shape)."""
    if mask.ndim == 0:
        raise IndexingError("0-d boolean indices are not supported")
    if len(mask.shape) != len(shape) or not all(
            m in (n, 0) for m, n in zip(mask.shape, shape)):
        raise IndexingError(f"boolean index of shape {tuple(mask.shape)} does not match "
                            f"the indexed array's shape {tuple(shape)} at axis {axis}")
    if 0 in mask.shape:
        # an empty mask selects nothing (the Array API allows a length-0 mask
        # axis against any length)
        return input_node(np.zeros(0, np.int64))
    refuse_while_tracing("indexing with a boolean mask (its count sets the shape)")
    host = _run.evaluate(mask.node).get() if isinstance(mask, ArrayHandle) else mask
    return input_node(np.flatnonzero(host).astype(np.int64))


def _advanced_getitem(node: Node, key: list) -> Node:
    # new axes first become unit axes of the array, indexed by ':'
    if any(k is None for k in key):
        it = iter(node.shape)
        shape = []
        for k in key:
            shape.extend([1] if k is None else [next(it) for _ in range(
                k.ndim if is_mask(k) else 1)])
        node = reshape(node, tuple(shape))
        key = [slice(None) if k is None else k for k in key]
    # the slices are a view; the integer and array entries index what is left
    basic, groups = [], []          # groups: (first axis, axes, flat index, shape)
    axis = 0
    for position, k in enumerate(key):
        if isinstance(k, slice):
            basic.append(k)
            axis += 1
            continue
        if is_int(k):
            span, extent = 1, node.shape[axis]
            if not -extent <= int(k) < extent:
                if not -(1 << 63) <= int(k) < 1 << 63:
                    raise OverflowError("Python int too large to convert to C long")
                raise IndexingError(f"index {int(k)} is out of bounds for axis {axis} "
                                    f"with size {extent}")
            index: Node = Const(int(k) % extent, np.int64, False)
        elif is_mask(k):
            span = k.ndim
            index = _mask_positions(k, node.shape[axis:axis + span], axis)
        else:
            span = 1
            index = _checked_indices(k, node.shape[axis], axis)
            if any(is_array(j) or is_int(j) for j in key if j is not k):
                index = _wrapped(index, node.shape[axis])
        groups.append((position, axis, span, index))
        basic.extend([slice(None)] * span)
        axis += span
    axis_map, view_shape, _ = plan_key(node.shape, basic)
    node = View(node, axis_map, view_shape)
    try:
        index_shape = tuple(np.broadcast_shapes(*(g[3].shape for g in groups)))
    except ValueError:
        raise IndexingError("shape mismatch: indexing arrays could not be broadcast "
                            "together with shapes "
                            + " ".join(str(g[3].shape) for g in groups)) from None
    positions = [g[0] for g in groups]
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    axes = [a for g in groups for a in range(g[1], g[1] + g[2])]
    if not adjacent:
        # NumPy: separated advanced indices put their axes first
        rest = [a for a in range(node.ndim) if a not in axes]
        node = transpose(node, axes + rest)
        axes = list(range(len(axes)))
    first = axes[0]
    if len(groups) == 1 and groups[0][2] == 1:
        return Gather(node, groups[0][3], first)
    # the indexed axes become one axis, indexed by a flat position
    extents = [node.shape[a] for a in axes]
    merged = int(np.prod(extents, dtype=np.int64))
    node = reshape(node, node.shape[:first] + (merged,) + node.shape[first + len(axes):])
    flat: Node | None = None
    for j, (_, _, _, index) in enumerate(groups):
        later = sum(g[2] for g in groups[j + 1:])
        stride = int(np.prod(extents[len(extents) - later:], dtype=np.int64)) if later else 1
        term = index if stride == 1 else Map(
            "multiply", (index, Const(stride, np.int64, False)), index.shape, np.int64)
        flat = term if flat is None else Map(
            "add", (flat, term), tuple(np.broadcast_shapes(flat.shape, term.shape)), np.int64)
    assert flat is not None
    if flat.shape != index_shape:
        flat = regions.broadcast_view(flat, index_shape)
    return Gather(node, flat, first)


# }}}


# {{{ writing: setitem

def setitem(node: Node, key: Any, value: Any) -> Node:
    """The value of *node* with the region *key* selects replaced by *value*
    (broadcast to the region's shape, converted to *node*'s dtype as NumPy's
    assignment converts it). A new node: *node* itself does not change.

    Keys of integers, slices, ``None`` and ``...`` give a lazy update that
    fuses into its readers; so does a boolean mask with a value that does
    not depend on the mask's count. Other array keys decide on the host which
    value element lands where (later writes win, as in NumPy), so their index
    arrays are computed first."""
    plan = basic_plan(node.shape, key)
    if plan is not None:
        return _basic_setitem(node, plan[1], plan[2], _value_node(value, node.dtype))
    key = expand(key, node.ndim)
    value = _value_node(value, node.dtype, any(is_array(k) for k in key))
    if not any(is_array(k) for k in key):
        _, target, ranges = plan_key(node.shape, key)
        return _basic_setitem(node, target, ranges, value)
    masked = _masked_setitem(node, key, value)
    if masked is not None:
        return masked
    return _scattered_setitem(node, key, value)


#: Python scalar types and the dtype kind that holds their values exactly (at 8 bytes)
_EXACT_SCALARS = {float: "f", int: "i", complex: "c"}


def _value_node(value, dtype: np.dtype, array_key: bool = False) -> Node:
    """*value* as a node of *dtype* (converted as NumPy's assignment does:
    through an array key, a NumPy scalar is cast as an array, wrapping
    around, where an integer or slice key refuses values out of range)."""
    if is_node(value):
        return cast(value, dtype)
    if isinstance(value, ArrayHandle):
        return cast(value.node, dtype)
    kind = _EXACT_SCALARS.get(type(value))
    if kind is not None and dtype.itemsize == 8 and (
            kind == dtype.kind or (kind == "i" and dtype.kind == "f")) \
            and (kind != "i" or -2**53 <= value <= 2**53):
        return Const(value, dtype, False)       # (a Python scalar the dtype holds exactly)
    host = np.asarray(value)
    if host.ndim == 0 and array_key and isinstance(value, np.generic):
        with np.errstate(all="ignore"):
            return constant(host.astype(dtype)[()], dtype)
    if host.ndim == 0:
        one = np.empty((), dtype)
        one[()] = value                 # NumPy's own conversion (and its errors)
        return constant(one[()], dtype)
    return input_node(host.astype(dtype, copy=False))


def _fit_value(value: Node, target: tuple) -> Node:
    """*value* as it broadcasts to *target* (leading unit axes beyond
    *target*'s may be dropped, as in NumPy)."""
    shape = value.shape
    if shape == target:
        return value
    if not shape:
        return regions.broadcast_view(value, target)
    while len(shape) > len(target) and shape[0] == 1:
        shape = shape[1:]
    try:
        fits = len(shape) <= len(target) and tuple(np.broadcast_shapes(shape, target)) == target
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"could not broadcast input array from shape {value.shape} into "
                         f"shape {tuple(target)}")
    value = regions.unit_reshape(value, shape)
    return value if value.shape == target else regions.broadcast_view(value, target)


def _basic_setitem(node: Node, target: tuple, ranges, value: Node) -> Node:
    """*node* with the region of a basic key (its result's shape *target*
    and *ranges*, see ``plan_key``) replaced by *value*."""
    value = _fit_value(value, target)
    if 0 in target:
        return node
    # the value with one axis per axis of node (length 1 where an integer indexes)
    region = tuple(1 if n is None else n for _, _, n in ranges)
    value = regions.unit_reshape(value, region)
    ranges = [(start, step, 1 if n is None else n) for start, step, n in ranges]
    if regions.computed_outside_trace(node) and regions.REGION_OFFSETS.vary(node, ranges):
        return regions.dynamic_update(node, value, ranges)
    for axis, (_start, step, n) in enumerate(ranges):
        if step == 1 or n == 1:
            continue
        value, ranges[axis] = _spread(node, value, ranges, axis)
    return _embed(node, value, [(start, start + n) for start, _, n in ranges])


def _spread(node: Node, value: Node, ranges: list, axis: int):
    """A strided region along *axis* made contiguous: the value's elements
    spaced out by the step, *node*'s own elements between them."""
    start, step, n = ranges[axis]
    if step < 0:
        start, step = start + step * (n - 1), -step
        flip = _identity_map(value)
        flip[axis] = ("axis", axis, n - 1, -1)
        value = View(value, flip, value.shape)
    m = (n - 1) * step + 1
    block = [(s, st, k) for s, st, k in ranges]
    block[axis] = (start, 1, m)
    own = View(node, [("axis", a, s, st) for a, (s, st, _) in enumerate(block)],
               tuple(k for _, _, k in block))
    position = Iota((m,), 0)
    stride = Const(step, np.int64, False)
    spaced = Gather(value, Map("floor_divide", (position, stride), (m,), np.int64), axis)
    on_grid: Node = Map("equal", (Map("remainder", (position, stride), (m,), np.int64),
                            Const(0, np.int64, False)), (m,), np.bool_)
    on_grid = regions.unit_reshape(on_grid,
                                   tuple(m if a == axis else 1 for a in range(node.ndim)))
    merged = Map("where", (on_grid, spaced, own), own.shape, node.dtype)
    return merged, (start, 1, m)


def _embed(node: Node, value: Node, bounds: list, axis: int = 0) -> Node:
    """*node* with the box *bounds* (from axis *axis* on; the axes before it
    are already cut to the box) replaced by *value*: the untouched slabs
    before and after the box, joined to the box along each axis."""
    if axis == node.ndim:
        return value
    lo, hi = bounds[axis]
    inner = _embed(node, value, bounds, axis + 1)
    parts = []
    if lo > 0:
        parts.append(_slab(node, bounds, axis, 0, lo))
    parts.append(inner)
    if hi < node.shape[axis]:
        parts.append(_slab(node, bounds, axis, hi, node.shape[axis]))
    # (the parts are of node's dtype and agree on the other axes)
    return parts[0] if len(parts) == 1 else Concat(parts, axis, node.dtype)


def _slab(node: Node, bounds: list, axis: int, lo: int, hi: int) -> Node:
    """The part of *node* inside *bounds* on the axes before *axis*, from
    *lo* to *hi* on *axis*, whole on the axes after it (a View: the
    region's offsets were counted by the assignment's own key)."""
    axis_map = []
    shape = []
    for a, n in enumerate(node.shape):
        start, stop = bounds[a] if a < axis else (lo, hi) if a == axis else (0, n)
        axis_map.append(("axis", a, start, 1))
        shape.append(stop - start)
    return View(node, axis_map, shape)


def _masked_setitem(node: Node, key: list, value: Node) -> Node | None:
    """``x[mask] = value`` (trailing ``:`` allowed) as an elementwise choice,
    when the value does not depend on the mask's count; else None."""
    mask = key[0]
    if not (is_mask(mask) and mask.ndim >= 1
            and all(isinstance(k, slice) and k == slice(None) for k in key[1:])):
        return None
    if tuple(mask.shape) != node.shape[:mask.ndim]:
        raise IndexingError(f"boolean index of shape {tuple(mask.shape)} does not match "
                            f"the indexed array's shape {node.shape[:mask.ndim]}")
    rest = node.shape[mask.ndim:]
    shape = value.shape
    while len(shape) > len(rest) and shape[0] == 1:
        shape = shape[1:]
    try:
        if len(shape) > len(rest) or tuple(np.broadcast_shapes(shape, rest)) != rest:
            return None
    except ValueError:
        return None
    value = regions.unit_reshape(value, shape)
    mask_node = mask.node if not isinstance(mask, np.ndarray) else input_node(mask)
    mask_node = regions.unit_reshape(mask_node, mask_node.shape + (1,) * len(rest))
    return Map("where", (mask_node, value, node), node.shape, node.dtype)


def _scattered_setitem(node: Node, key: list, value: Node) -> Node:
    """Array keys in general: NumPy decides, on the host, which element of
    the value each element of *node* receives last; the update reads the
    value through that map."""
    if any(isinstance(k, ArrayHandle) for k in key):
        refuse_while_tracing("assigning through an integer or boolean array index (which "
                             "element goes where)")
    host_key = tuple(_run.evaluate(k.node).get() if isinstance(k, ArrayHandle) else k
                     for k in key)
    source = np.full(node.shape, -1, np.int64)
    try:
        target = source[host_key].shape
    except IndexError as e:
        raise IndexingError(str(e)) from None
    value = _fit_value(value, target)
    size = int(np.prod(target, dtype=np.int64))
    if size == 0:
        return node
    source[host_key] = np.arange(size).reshape(target)
    if size < 2**31:
        source = source.astype(np.int32)
    source_node = input_node(source)
    picked = Gather(reshape(value, (size,)), source_node, 0)
    hit = Map("greater_equal", (source_node, Const(0, source.dtype, False)), node.shape,
              np.bool_)
    return Map("where", (hit, picked, node), node.shape, node.dtype)

# }}}


def permutation_of(view: Node) -> tuple:
    """The axes of a View made by :func:`transpose`: axis k of *view* is
    axis ``axes[k]`` of its argument."""
    axes = [0] * view.ndim
    for in_axis, (_, out_axis, _, _) in enumerate(view.axis_map):  # type: ignore[attr-defined]
        axes[out_axis] = in_axis
    return tuple(axes)


def part_write_back(part: str) -> Callable[[Node, Node], Node]:
    """The write-back of a view of the real or imaginary *part* of an array:
    a refusal (a complex value cannot be assembled from its parts in kernels;
    the imaginary part of a real array is read-only, as in NumPy)."""
    def refuse(base: Node, value: Node) -> Node:
        if base.dtype.kind != "c":
            raise ViewWriteError(f"the imaginary part of a real array is read-only "
                                 f"(it is zeros, not a view of {base.dtype} values)")
        raise ViewWriteError(
            f"writing to the {part} part of a complex array (x.{part}[...] = v, "
            f"x.{part} += v) is not supported; give the array a new value instead, e.g. "
            f"x[...] = new_real + 1j * x.imag (for finite parts)")
    return refuse


def transpose(node: Node, axes: Any = None) -> Node:
    """The axes of *node* permuted (reversed by default)."""
    if axes is None:
        axes = tuple(reversed(range(node.ndim)))
    else:
        axes = tuple(axes)
        if len(axes) != node.ndim:
            raise ShapeError("axes don't match array")
        axes = tuple(normalize_axis_index(operator.index(a), node.ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ShapeError("repeated axis in transpose")
    axis_map: list = [None] * node.ndim
    for out_axis, in_axis in enumerate(axes):
        axis_map[in_axis] = ("axis", out_axis, 0, 1)
    return View(node, axis_map, [node.shape[a] for a in axes])


def reshape(node: Node, shape: Any) -> Node:
    """*node*'s elements in C order, in *shape* (one entry may be -1)."""
    # (integers only, as NumPy: 4.0 and '2' are refused, not converted)
    shape = (operator.index(shape),) if not isinstance(shape, (tuple, list)) \
        else tuple(operator.index(s) for s in shape)
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


def take(node: Node, indices: Any, axis: int | None = 0) -> Node:
    """Elements of *node* at integer *indices* along *axis* (NumPy's take;
    ``None``: of the flattened array). Indices are checked against the extent
    when the call is made, computing lazy index arrays first."""
    if axis is None:
        node, axis = reshape(node, -1), 0
    if node.ndim == 0:
        raise IndexingError("cannot index a 0-d array with an integer array")
    if not -node.ndim <= axis < node.ndim:
        raise AxisError(f"axis {axis} is out of bounds for array of dimension {node.ndim}")
    axis %= node.ndim
    index = indices.node if isinstance(indices, ArrayHandle) else input_node(np.asarray(indices))
    if index.dtype.kind not in "iu":
        raise IndexingError(f"arrays used as indices must be of integer type, got "
                            f"{index.dtype}")
    if traced_value(index):
        return Gather(node, index, axis)    # (see _checked_indices)
    host = _run.evaluate(index).get() if 0 not in index.shape else np.zeros(0, np.int64)
    extent = node.shape[axis]
    # (NumPy checks nothing where the result has no elements: another axis is empty)
    others = node.shape[:axis] + node.shape[axis + 1:]
    if host.size and 0 not in others and (host.min() < -extent or host.max() >= extent):
        bad = host[(host < -extent) | (host >= extent)].flat[0]
        raise IndexingError(f"index {bad} is out of bounds for axis {axis} with size "
                            f"{extent}")
    return Gather(node, index, axis)
