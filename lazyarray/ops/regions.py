"""Regions of computed arrays whose offsets keep changing (a loop writing or
reading a new column each step) as kernel arguments instead of constants,
and the unit-axis views these and the other updates build.

Also single elements (``x[i, j]``) read as arrays of their own, so that an
expression of ``x[i]`` compiles once for every ``i``.

Public names: RegionOffsets, REGION_OFFSETS, ELEMENT_OFFSETS, ELEMENT_BASE_LIMIT,
computed_outside_trace, computed_for_windows, PENDING_WINDOW_LIMIT, PENDING_WINDOW_SHAPES,
one_run, window_read,
dynamic_read, dynamic_update, element_read,
element_value, unit_reshape, broadcast_view.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

import lazyarray.run as _run
from lazyarray.graph import Const, Gather, Input, Iota, Map, Node, View, computed
from lazyarray.mapper import is_kind
from lazyarray.tracing import TRACING
from lazyarray.values import computed_count, on_device, on_host


def unit_reshape(node: Node, shape: tuple) -> Node:
    """*node* in *shape*, which differs from *node*'s by unit axes only: a
    view (no index arithmetic in kernels, unlike a general reshape)."""
    shape = tuple(shape)
    if shape == node.shape:
        return node
    targets = iter([k for k, n in enumerate(shape) if n != 1])
    axis_map = [("const", 0) if n == 1 else ("axis", next(targets), 0, 1)
                for n in node.shape]
    return View(node, axis_map, shape)


def broadcast_view(node: Node, shape: tuple) -> Node:
    offset = len(shape) - node.ndim
    return View(node, [("const", 0) if n == 1 and shape[d + offset] != 1
                       else ("axis", d + offset, 0, 1) for d, n in enumerate(node.shape)],
                shape)


def computed_outside_trace(node: Node) -> bool:
    """Whether *node* is a computed array outside a trace: where a region's
    changing offsets would otherwise compile a kernel each (a pending graph
    is compiled with all its offsets at once)."""
    return (node.kind == "input" or on_device(node) is not None) and not TRACING.names


#: per uncomputed array outside a trace: the offsets of the windows read of
#: it, the computation count at the last new one, and how many counts saw one
_PENDING_WINDOWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: an uncomputed array read at new offsets between this many different
#: computations (a loop over its windows, computing each) is computed, once
#: for all its windows; the reads of one expression (a stencil of the value:
#: shifted slices, fused into one kernel) count once
PENDING_WINDOW_LIMIT = 3
#: an uncomputed array read in windows of more shapes than this between two
#: computations is computed, once for all of them
PENDING_WINDOW_SHAPES = 4


def computed_for_windows(node: Node, ranges: Any) -> bool:
    """Whether *node*, an uncomputed array outside a trace, was computed now
    because windows of it were read at new offsets between
    :data:`PENDING_WINDOW_LIMIT` different computations, or windows of more
    than :data:`PENDING_WINDOW_SHAPES` shapes between two (pieces of it, as
    ``np.split`` makes: not a stencil, whose shifted slices share a shape);
    each window would otherwise compute the whole graph again, in a kernel of
    its own per offset and length."""
    if TRACING.names or node.kind in ("input", "const") or on_device(node) is not None \
            or math.prod(node.shape) > ELEMENT_BASE_LIMIT:
        return False
    seen = _PENDING_WINDOWS.get(node)
    if seen is None:
        seen = _PENDING_WINDOWS[node] = [set(), -1, 0, set(), -1]
    offsets, count = seen[0], computed_count()
    if count != seen[4]:
        seen[3], seen[4] = set(), count
    seen[3].add(tuple(n for _, _, n in ranges))
    offset = tuple(start for start, _, _ in ranges)
    if offset in offsets and len(seen[3]) <= PENDING_WINDOW_SHAPES:
        return False
    offsets.add(offset)
    if count != seen[1]:
        seen[1], seen[2] = count, seen[2] + 1
    if seen[2] < PENDING_WINDOW_LIMIT and len(seen[3]) <= PENDING_WINDOW_SHAPES:
        return False
    with _run.DEVICE_LOCK:
        _run.evaluate(node)
    return True


def one_run(shape: tuple, ranges: list) -> bool:
    """Whether the region *ranges* (``plan_key``'s) of a C-ordered array of
    *shape* is one contiguous run of its elements (read without a kernel
    where the array is computed)."""
    axis = 0
    while axis < len(ranges) and ranges[axis][2] is None:
        axis += 1                       # integer indices first
    if axis < len(ranges) and ranges[axis][1] != 1 and (ranges[axis][2] or 0) > 1:
        return False                    # then one slice of step 1
    return all(start == 0 and step == 1 and n == shape[a]
               for a, (start, step, n) in enumerate(ranges) if a > axis)


class RegionOffsets:
    """The offsets at which regions of one shape and step were written or
    read: once *limit* different ones were seen (more than the offsets a
    stencil reads or its boundary conditions write, which recur each step),
    the region's offsets become kernel arguments (:func:`dynamic_update`,
    :func:`dynamic_read`), so a loop writing or reading a new column each
    step (``history[:, n] = u``) compiles a few kernels, not one per column."""

    def __init__(self, limit: int = 12):
        self.limit = limit
        self._seen: dict[tuple, set] = {}
        self._lengths: dict[tuple, set] = {}

    def vary(self, node: Node, ranges: list, use: str = "write") -> bool:
        """Whether regions of this shape of arrays like *node* have been
        written (or read: *use*) at *limit* or more different offsets,
        counting this one. Contiguous windows (*use* ``"window"``) count
        their lengths with their offsets: a loop over windows of varying
        length varies them too, and windows of more than
        :data:`PENDING_WINDOW_SHAPES` lengths vary at once."""
        if use == "window":
            key: tuple = (use, node.shape, node.dtype.str)
            place = tuple((start, n) for start, _, n in ranges)
            # (windows of more lengths than a stencil's shifted slices have:
            # pieces of an array, as np.split makes, vary at once)
            lengths = self._lengths.setdefault(key, set())
            if len(lengths) <= PENDING_WINDOW_SHAPES:
                lengths.add(tuple(n for _, _, n in ranges))
            if len(lengths) > PENDING_WINDOW_SHAPES:
                return True
        else:
            key = (use, node.shape, node.dtype.str, tuple((step, n) for _, step, n in ranges))
            place = tuple(start for start, _, _ in ranges)
        seen = self._seen.setdefault(key, set())
        if len(seen) < self.limit:
            seen.add(place)
        return len(seen) >= self.limit


#: the offsets of region assignments seen in this process
REGION_OFFSETS = RegionOffsets()

#: the offsets at which single elements of uncomputed arrays were read: from
#: the third, the array is computed first (a loop over its elements)
ELEMENT_OFFSETS = RegionOffsets(limit=3)

#: an uncomputed array is computed for reading its elements only when it has
#: at most this many elements
ELEMENT_BASE_LIMIT = 1 << 24


def element_read(node: Node, axis_map: list, ranges: list) -> Node | None:
    """Element *axis_map* (constants only) of *node* outside a trace as an
    input of its own (a part of the computed value's buffer, whatever the
    offset the same argument of a kernel), computing an uncomputed *node*
    first once elements at :data:`ELEMENT_OFFSETS`'s limit of different
    offsets of such arrays were read; None where *node* stays uncomputed."""
    if TRACING.names or not node.ndim:
        return None
    if is_kind(node, "input"):
        value = node.data
    elif computed(node):
        value = on_device(node)
    elif math.prod(node.shape) <= ELEMENT_BASE_LIMIT \
            and ELEMENT_OFFSETS.vary(node, ranges, "read"):
        with _run.DEVICE_LOCK:
            value = _run.evaluate(node)
    else:
        return None
    if value is None:
        return None
    owned = node.owned if is_kind(node, "input") else True
    return Input(value[tuple(entry[1] for entry in axis_map)], owned=owned)


def element_value(node: Node) -> np.ndarray | None:
    """The value of *node* when it is one element of another array
    (``x[i, j]``) as a 0-d NumPy array, read from that array's value (computed
    first, once for all its elements, unless it has more than
    :data:`ELEMENT_BASE_LIMIT`), not by a kernel of its own per index; None
    for other nodes."""
    if not is_kind(node, "view") or node.shape \
            or any(entry[0] != "const" for entry in node.axis_map):
        return None
    index = tuple(entry[1] for entry in node.axis_map)
    arg = node.arg
    host = on_host(arg)
    if host is not None:
        return np.asarray(host[index])
    with _run.DEVICE_LOCK:
        value = arg.data if is_kind(arg, "input") else on_device(arg)
        if value is None:
            if math.prod(arg.shape) > ELEMENT_BASE_LIMIT:
                return None
            value = _run.evaluate(arg)
        return value[index].get(queue=_run.queue_of(value))


def window_read(node: Node, ranges: Any, shape: tuple) -> Node:
    """The contiguous region *ranges* (:func:`one_run`) of the computed array
    *node* as an input of its own: a part of its buffer, whatever the offset
    the same argument of a kernel (a loop over windows compiles once)."""
    value = node.data if is_kind(node, "input") else on_device(node)
    owned = node.owned if is_kind(node, "input") else True
    part = value[tuple(start if n is None else slice(start, start + n)
                       for start, _, n in ranges)]
    return Input(part.reshape(shape), owned=owned)


def dynamic_read(node: Node, ranges: list, shape: tuple) -> Node:
    """The region *ranges* of *node* read with its first indices as kernel
    arguments (a loop reading a new column each step compiles once)."""
    int64 = np.dtype(np.int64)
    for axis in reversed(range(len(ranges))):
        start, step, n = ranges[axis]
        if n is None:
            node = Gather(node, Const(start, int64, False), axis)
        elif not (step == 1 and n == node.shape[axis]):
            position: Node = Iota((n,), 0)
            if step != 1:
                position = Map("multiply", (position, Const(step, int64, False)), (n,), int64)
            node = Gather(node, Map("add", (position, Const(start, int64, False)), (n,),
                                    int64), axis)
    return unit_reshape(node, shape)


def dynamic_update(node: Node, value: Node, ranges: list) -> Node:
    """*node* with the region *ranges* (``(start, step, length)`` per axis)
    replaced by *value* (one axis per axis of *node*), the region's first
    indices being kernel arguments: each element chooses between its own
    value and the value's element it falls on (read modulo the value's
    extent, so the choice not taken reads inside the value too)."""
    int64 = np.dtype(np.int64)
    inside: Node | None = None
    for axis, (start, step, n) in enumerate(ranges):
        extent = node.shape[axis]
        if step == 1 and n == extent:
            continue                    # the whole axis
        stride = abs(step)
        first = start if step > 0 else start + step * (n - 1)
        offset = Map("subtract", (Iota((extent,), 0), Const(first, int64, False)),
                     (extent,), int64)
        here: Node = Map("logical_and", (
            Map("greater_equal", (offset, Const(0, int64, False)), (extent,), np.bool_),
            Map("less", (offset, Const(stride * (n - 1) + 1, int64, False)), (extent,),
                np.bool_)), (extent,), np.bool_)
        position = offset
        if stride != 1:
            step_const = Const(stride, int64, False)
            on_grid = Map("equal", (Map("remainder", (offset, step_const), (extent,), int64),
                                    Const(0, int64, False)), (extent,), np.bool_)
            here = Map("logical_and", (here, on_grid), (extent,), np.bool_)
            position = Map("floor_divide", (offset, step_const), (extent,), int64)
        if step < 0:
            position = Map("subtract", (Const(n - 1, int64, False), position), (extent,), int64)
        value = Gather(value, position, axis)
        here = unit_reshape(here, tuple(extent if a == axis else 1 for a in range(node.ndim)))
        inside = here if inside is None else Map(
            "logical_and", (inside, here), np.broadcast_shapes(inside.shape, here.shape),
            np.bool_)
    if inside is None:
        return value                    # the whole array
    if inside.shape != node.shape:
        inside = broadcast_view(inside, node.shape)
    if value.shape != node.shape:
        value = broadcast_view(value, node.shape)
    return Map("where", (inside, value, node), node.shape, node.dtype)
