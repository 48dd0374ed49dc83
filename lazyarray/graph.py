"""The dataflow graph: immutable, interned nodes with shapes and dtypes.

Constructing a node with the same content as an existing one returns that
node, so equal subexpressions are one object and ``==`` is identity (also
when several threads construct nodes at once).

Public names: Node, Input, Const, Map, Reduce, Scan, View, Reshape, Concat, Iota, Gather,
walk, computed, pending_depth, Param, is_weak.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from lazyarray.mapper import is_kind, node_base
from lazyarray.values import on_device

_INTERNED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_INTERNING = threading.RLock()
#: the weak references of _INTERNED by key, and the callback that removes one
#: (every operator looks a node up, and a new one is stored, without
#: WeakValueDictionary's Python frames)
_INTERNED_REFS = _INTERNED.data  # type: ignore[attr-defined]
_INTERNED_REMOVE = _INTERNED._remove  # type: ignore[attr-defined]
_new_ref = weakref.ref.__new__

#: NumPy's string of each dtype (or type) nodes are made with: ``np.dtype(d).str``
#: costs as much as the rest of an interning key
_DTYPE_STRS: dict = {}


def _dtype_str(dtype) -> str:
    """``np.dtype(dtype).str``, remembered."""
    text = _DTYPE_STRS.get(dtype)
    if text is None:
        text = np.dtype(dtype).str
        if len(_DTYPE_STRS) < 256:
            _DTYPE_STRS[dtype] = text
    return text


@node_base
class Node:
    """A value of the graph: its *shape* and *dtype* are known when it is made."""

    __slots__ = ("shape", "dtype", "_key", "depth", "_holder", "__weakref__")
    #: the method of a :class:`~lazyarray.mapper.NodeMapper` that handles this kind
    mapper_method: str
    #: the name of this kind (the mapper method without ``map_``)
    kind: str
    shape: tuple[int, ...]
    dtype: np.dtype
    _key: tuple
    #: the depth of the graph behind the node not computed when it was made
    depth: int

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "mapper_method" in cls.__dict__:
            cls.kind = cls.mapper_method[len("map_"):]

    def __new__(cls, *args):
        key = (cls, *cls._content(*args))
        ref = _INTERNED_REFS.get(key)
        node = ref() if ref is not None else None
        if node is None:
            with _INTERNING:
                ref = _INTERNED_REFS.get(key)
                node = ref() if ref is not None else None
                if node is None:
                    node = object.__new__(cls)
                    node._key = key
                    node._init(*args)
                    node.depth = pending_depth(node.children())
                    # (``_INTERNED[key] = node`` without KeyedRef's two Python frames)
                    ref = _new_ref(weakref.KeyedRef, node, _INTERNED_REMOVE)
                    ref.key = key
                    _INTERNED_REFS[key] = ref
        return node

    # (not an abc.ABC: isinstance checks on nodes, frequent while graphs are
    # built and planned, cost a Python-level ABCMeta.__instancecheck__ each)
    @staticmethod
    def _content(*args) -> tuple:
        """The constructor arguments as a hashable tuple (the interning key)."""
        raise NotImplementedError

    def _init(self, *args) -> None:
        """Set the node's fields from the constructor arguments."""
        raise NotImplementedError

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def children(self) -> tuple[Node, ...]:
        return ()

    def __reduce__(self):
        raise TypeError("graph nodes are not picklable")


class Input(Node):
    """Data already on the device (a pyopencl array), identified by its buffer.
    *owned*: lazyarray made the buffer (a jitted call's result), so nobody
    else changes its contents.

    Not interned: every array handed in is a value of its own (and a jitted
    call's results skip the interning table's cost)."""

    mapper_method = "map_input"

    __slots__ = ("data", "owned")
    data: Any
    owned: bool

    def __new__(cls, data, owned: bool = False):
        # (made directly, not interned through _content and _init: every eager
        # call and jitted call makes inputs)
        node = object.__new__(cls)
        node.shape = shape = tuple(data.shape)
        node.dtype = dtype = data.dtype     # (a pyopencl array's is a NumPy dtype)
        node._key = (cls, id(data), shape, dtype, owned)
        node.depth = 0
        node.data = data
        node.owned = owned
        return node


#: Python scalar types whose values a dtype holds exactly, with the dtype's string
_EXACT_PYTHON = {(float, np.dtype(np.float64)): "<f8", (int, np.dtype(np.int64)): "<i8",
                 (bool, np.dtype(np.bool_)): "|b1", (complex, np.dtype(np.complex128)): "<c16"}


class Const(Node):
    """A scalar constant (broadcast to any shape); *weak* when it came from a
    Python scalar, which takes the type of the arrays it meets (NumPy 2)."""

    mapper_method = "map_const"

    __slots__ = ("value", "weak")

    @staticmethod
    def _content(value, dtype, weak):
        exact = _EXACT_PYTHON.get((type(value), dtype))
        if exact is not None and (exact != "<i8" or -2**63 <= value < 2**63):
            # (a Python scalar of the dtype's own kind: its repr is NumPy's item's)
            return (exact, repr(value), bool(weak))
        return (np.dtype(dtype).str, repr(np.dtype(dtype).type(value).item()), bool(weak))

    def _init(self, value, dtype, weak):
        self.dtype = np.dtype(dtype)
        self.value = self.dtype.type(value)
        self.weak = bool(weak)
        self.shape = ()


class Param(Node):
    """A Python scalar argument of a function ``la.jit`` traces: a weak scalar
    of *dtype*'s kind (float64, int64 or complex128) whose value each call
    passes to the kernels as an argument. Not interned (one per argument).

    *converted_to* collects the dtypes the trace converts it to (a call checks
    that its value fits them, as NumPy's conversion of a Python int does)."""

    mapper_method = "map_param"

    __slots__ = ("slot", "converted_to")

    def __new__(cls, slot: int, dtype):
        node = object.__new__(cls)
        node._key = (cls, id(node))
        node.depth = 0
        node._init(slot, dtype)
        return node

    @staticmethod
    def _content(slot, dtype):
        raise AssertionError("parameters are not interned")

    def _init(self, slot, dtype):
        self.slot = int(slot)
        self.dtype = np.dtype(dtype)
        self.shape = ()
        self.converted_to: set = set()


def is_weak(node: Node) -> bool:
    """Whether *node* is a Python scalar for NumPy's typing (NEP 50): a weak
    constant, a jit's scalar parameter, or a 0-d operation on such only."""
    if is_kind(node, "const"):
        return node.weak
    return is_kind(node, "param") or (is_kind(node, "map") and node.weak)


class Map(Node):
    """An elementwise operation on operands broadcast to *shape*; *weak* when
    all its operands are Python scalars (its result types as one, NEP 50)."""

    mapper_method = "map_map"

    __slots__ = ("op", "args", "weak")

    @staticmethod
    def _content(op, args, shape, dtype, weak=False):
        return (op, tuple(args), tuple(shape), _dtype_str(dtype), bool(weak))

    def _init(self, op, args, shape, dtype, weak=False):
        self.op = op
        self.args = tuple(args)
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak = bool(weak)

    def children(self) -> tuple[Node, ...]:
        return self.args


class Reduce(Node):
    """A reduction of *arg* over *axes* (kept as length-1 axes when *keepdims*)."""

    mapper_method = "map_reduce"

    __slots__ = ("op", "axes", "arg", "keepdims")

    @staticmethod
    def _content(op, axes, arg, dtype, keepdims):
        return (op, tuple(axes), arg, _dtype_str(dtype), bool(keepdims))

    def _init(self, op, axes, arg, dtype, keepdims):
        self.op = op
        self.axes = tuple(sorted(axes))
        self.arg = arg
        self.dtype = np.dtype(dtype)
        self.keepdims = bool(keepdims)
        self.shape = tuple(1 if k in self.axes else s for k, s in enumerate(arg.shape)
                           if keepdims or k not in self.axes)

    def children(self) -> tuple[Node, ...]:
        return (self.arg,)


def pending_depth(children: Iterable[Node]) -> int:
    """The depth of the uncomputed graph of a node with *children*: 0 for a
    leaf, else one more than its deepest child not computed yet."""
    depth = -1
    for c in children:
        # (asked only of children that would deepen it; an input is no
        # computed value, see computed)
        if c.depth > depth and (c.kind == "input" or on_device(c) is None):
            depth = c.depth
    return depth + 1


def walk(root: Node, stop: Callable[[Node], bool] | None = None,
         children: Callable[[Node], tuple[Node, ...]] | None = None) -> list[Node]:
    """Every node reachable from *root*, each once, children before parents;
    a node for which *stop* is true is listed but not entered (its children
    are not reached through it). *children* gives the nodes a node is
    entered through (default: its own children). Iterative: any depth."""
    seen: set[Node] = {root}
    order: list[Node] = []
    stack: list[tuple[Node, Iterator[Node]]] = [(root, iter(_entered(root, stop, children)))]
    while stack:
        node, below = stack[-1]
        for child in below:
            if child not in seen:
                seen.add(child)
                stack.append((child, iter(_entered(child, stop, children))))
                break
        else:
            stack.pop()
            order.append(node)
    return order


def _entered(node: Node, stop: Callable[[Node], bool] | None,
             children: Callable[[Node], tuple[Node, ...]] | None) -> tuple[Node, ...]:
    if stop is not None and stop(node):
        return ()
    return node.children() if children is None else children(node)


def computed(node: Node) -> bool:
    """Whether *node*'s value is on the device already (a leaf for planning)."""
    return is_kind(node, "input") or on_device(node) is not None


class View(Node):
    """A re-indexing of *arg* (no computation): each output index maps to an
    index of *arg* through an affine map per axis.

    *axis_map* has one entry per axis of *arg*: ``("const", c)`` (fixed index),
    or ``("axis", k, start, step)`` (``start + step * out_index[k]``).
    """

    mapper_method = "map_view"

    __slots__ = ("arg", "axis_map")

    @staticmethod
    def _content(arg, axis_map, shape):
        return (arg, tuple(axis_map), tuple(shape))

    def _init(self, arg, axis_map, shape):
        self.arg = arg
        self.axis_map = tuple(axis_map)
        self.shape = tuple(shape)
        self.dtype = arg.dtype

    def children(self) -> tuple[Node, ...]:
        return (self.arg,)


class Reshape(Node):
    """*arg* with its elements in C order read into *shape*."""

    mapper_method = "map_reshape"

    __slots__ = ("arg",)

    @staticmethod
    def _content(arg, shape):
        return (arg, tuple(shape))

    def _init(self, arg, shape):
        self.arg = arg
        self.shape = tuple(shape)
        self.dtype = arg.dtype

    def children(self) -> tuple[Node, ...]:
        return (self.arg,)


class Concat(Node):
    """*args* (same shape except along *axis*) joined along *axis*."""

    mapper_method = "map_concat"

    __slots__ = ("args", "axis")

    @staticmethod
    def _content(args, axis, dtype):
        return (tuple(args), int(axis), _dtype_str(dtype))

    def _init(self, args, axis, dtype):
        self.args = tuple(args)
        self.axis = int(axis)
        shape = list(self.args[0].shape)
        shape[self.axis] = sum(a.shape[self.axis] for a in self.args)
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)

    def children(self) -> tuple[Node, ...]:
        return self.args


class Iota(Node):
    """The index along *axis* of each element of an array of *shape* (int64)."""

    mapper_method = "map_iota"

    __slots__ = ("axis",)

    @staticmethod
    def _content(shape, axis):
        return (tuple(shape), int(axis))

    def _init(self, shape, axis):
        self.shape = tuple(shape)
        self.axis = int(axis)
        self.dtype = np.dtype(np.int64)


class Scan(Node):
    """Running reduction *op* (``sum``: cumsum, ``product``: cumprod) of *arg*
    along *axis*."""

    mapper_method = "map_scan"

    __slots__ = ("op", "axis", "arg")

    @staticmethod
    def _content(op, axis, arg, dtype):
        return (op, int(axis), arg, _dtype_str(dtype))

    def _init(self, op, axis, arg, dtype):
        self.op = op
        self.axis = int(axis)
        self.arg = arg
        self.shape = arg.shape
        self.dtype = np.dtype(dtype)

    def children(self) -> tuple[Node, ...]:
        return (self.arg,)


class Gather(Node):
    """Elements of *arg* picked along *axis* by the integer array *indices*
    (already checked to lie in ``[-n, n)``); the result's axis is replaced by
    the axes of *indices*."""

    mapper_method = "map_gather"

    __slots__ = ("arg", "indices", "axis")

    @staticmethod
    def _content(arg, indices, axis):
        return (arg, indices, int(axis))

    def _init(self, arg, indices, axis):
        self.arg = arg
        self.indices = indices
        self.axis = int(axis)
        self.shape = arg.shape[:axis] + indices.shape + arg.shape[axis + 1:]
        self.dtype = arg.dtype

    def children(self) -> tuple[Node, ...]:
        return (self.arg, self.indices)
