"""LazyArray: NumPy-style arrays that record operations and compute on demand.

A LazyArray is a handle on a value: in-place operators and ``x[key] = v``
give the handle a new value (its aliases see it), and views (basic indexing,
transposes, contiguous reshapes, ``.real``) read and write their base's
current value, as NumPy's views do.

Public names: LazyArray, asarray, copy, VIEW_FUNCTIONS.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.lib.stride_tricks import as_strided

import lazyarray.run as _run
from lazyarray.deferred import deferred, is_cl_array
from lazyarray.errors import (
    LONG_DOUBLES,
    ConcretizationError,
    DeviceMemoryError,
    DTypeError,
    NoDeviceVersion,
    device_memory_error,
    long_double_error,
)
from lazyarray.graph import Input, Node
from lazyarray.mapper import is_kind
from lazyarray.methods import NumPyMethods, check_casting
from lazyarray.ops import keys, linalg, manipulate
from lazyarray.ops import shape as shape_ops
from lazyarray.ops.construct import full
from lazyarray.ops.elementwise import (
    cast,
    elementwise,
    round_half_even,
)
from lazyarray.ops.inputs import ArrayHandle, input_node
from lazyarray.ops.inputs import node_of as _node
from lazyarray.ops.regions import computed_for_windows, element_value
from lazyarray.orders import in_bounds, raveled, reshaped
from lazyarray.reduction_methods import ReductionMethods
from lazyarray.target import Device
from lazyarray.tracing import TRACING, concretization_message
from lazyarray.values import hold, keep_on_host, on_device, on_host

if TYPE_CHECKING:
    from collections.abc import Callable

    import pyopencl as cl
    import pyopencl.array as cla

    _Binary = Callable[["LazyArray", Any], "LazyArray"]
    _Unary = Callable[["LazyArray"], "LazyArray"]
else:
    cl = deferred("pyopencl")       # (read only when a device error is raised)

#: an array whose graph of uncomputed operations gets deeper than this is
#: computed when it is made (a Python loop of eager steps stays bounded)
DEPTH_LIMIT = 100
#: the most elements of a value ``np.asarray`` copies from the one remembered on the host
HANDED_OVER = 1 << 16


def _device_or_numpy(build, func, args: tuple):
    """``build()``, the lazy array that computes on the device, or NumPy's
    *func* on *args* where lazyarray has no device version of it for these
    dtypes (:class:`~lazyarray.errors.NoDeviceVersion`): NumPy's protocols
    hand it to the host fallback (:mod:`lazyarray.fallback`)."""
    try:
        return build()
    except NoDeviceVersion:
        return func(*args)


class LazyArray(ArrayHandle, NumPyMethods, ReductionMethods):
    """A lazily evaluated array: operations build a graph; ``get()``,
    ``np.asarray`` and scalar conversions compute it. NumPy's protocols
    (``__array_ufunc__``, ``__array_function__``) and the namespace
    (``__array_namespace__``) are installed by :func:`lazyarray.protocols.install`
    once the lazyarray module is complete."""

    __array_priority__ = 100
    #: NumPy's protocols (set by :func:`lazyarray.protocols.install`, with the
    #: namespace that ``__array_namespace__`` and ``x.clip()`` answer with)
    __array_ufunc__: ClassVar[Callable[..., Any]]
    __array_function__: ClassVar[Callable[..., Any]]

    #: a view's base array (None: the array owns its value)
    _base: LazyArray | None = None
    #: a view's maps: ``forward(base value) -> value`` and ``write_back(base
    #: value, new value) -> new base value``; ``layout(base stand-in) -> stand-in``
    _forward = _write_back = _layout_step = None
    #: the base value a view's node was read from
    _seen: Node | None = None
    #: whether writes raise, as into NumPy's read-only views (``broadcast_to``,
    #: ``diagonal``, ``sliding_window_view``); views of such an array are too
    _readonly = False
    _stand_in: np.ndarray | None = None

    def __init__(self, node: Node):
        if node.dtype in LONG_DOUBLES and node.kind != "input":
            raise long_double_error(node.dtype)
        self.node = node
        if node.depth > DEPTH_LIMIT and not TRACING.names:
            # a bounded graph: long loops of eager steps compute every so often
            self._settle()

    @staticmethod
    def _of_node(node: Node) -> LazyArray:
        """A new lazy array whose value is *node*."""
        return LazyArray(node)

    @classmethod
    def _holding(cls, value: cla.Array) -> LazyArray:
        """A new array whose value is *value*, a device array lazyarray
        computed (nobody else writes its buffer): a jitted call's result,
        made without the checks of a new operation's handle."""
        handle = object.__new__(cls)
        handle._node = Input(value, True)
        return handle

    def _settle(self) -> cla.Array:
        """Compute this array's value and hold it as a leaf (the graph that
        computed it can be freed); the value on the device."""
        node = self.node
        if is_kind(node, "input") and node.data is not None:
            return node.data                # (computed already: a jitted call's result)
        try:
            with _run.DEVICE_LOCK:
                value = _run.evaluate(node)
        except DeviceMemoryError as error:
            raise error.with_traceback(None) from None      # (no trace of lazyarray's steps)
        except cl.Error as error:       # (an allocation of kernelcore's or pyopencl's)
            raise device_memory_error(error, None, _run.default_queue().device) from None
        if not is_kind(node, "input") and on_device(node) is value \
                and self._node is node:     # (not made a leaf by the evaluation)
            leaf = Input(value, owned=True)
            host = on_host(node)
            if host is not None:
                keep_on_host(leaf, host)
            self.node = leaf
        return value

    # {{{ values, views and writes

    @property
    def node(self) -> Node:
        """The graph node of the current value (a view's is read from its
        base's current value)."""
        base = self._base
        if base is not None:
            base_node = base.node
            if base_node is not self._seen:
                self._node = self._forward(base_node)  # type: ignore[misc]
                self._seen = base_node
        return self._node

    @node.setter
    def node(self, node: Node) -> None:
        self._node = node
        if node.kind != "input":
            # (a value computed for other work is then held as a leaf: see
            # lazyarray.run.evaluation; a leaf is computed already)
            hold(node, self)

    def _assign(self, node: Node) -> None:
        """Give this array the value *node* (same shape and dtype), as NumPy's
        in-place writes do: a view writes through to its base. A graph that
        gets too deep is computed (long loops of updates stay bounded)."""
        if self._readonly:
            raise ValueError("assignment destination is read-only")
        base = self._base
        if base is None:
            self.node = node
            if node.depth > DEPTH_LIMIT and not TRACING.names:
                self._settle()
            return
        base._assign(self._write_back(base.node, node))  # type: ignore[misc]

    def _view(self, forward, write_back, layout_step) -> LazyArray:
        """A view of this array: its value is ``forward(this value)``; writing
        it gives this array ``write_back(this value, new value)``."""
        node = self.node
        view = LazyArray(forward(node))
        view._base, view._seen = self, node
        view._forward, view._write_back, view._layout_step = forward, write_back, layout_step
        view._readonly = self._readonly
        return view

    def _read_only(self) -> LazyArray:
        """This array, made read-only (NumPy's read-only views)."""
        self._readonly = True
        return self

    def _layout(self) -> np.ndarray:
        """A NumPy array of this array's shape, dtype and strides (as NumPy
        lays out views) over no memory: NumPy decides which reshapes are views."""
        if self._base is None:
            strides: list[int]
            strides, step = [], self.dtype.itemsize
            for n in reversed(self.shape):
                strides.insert(0, step)
                step *= max(n, 1)
            return as_strided(np.zeros(1, self.dtype), self.shape, strides, writeable=False)
        if self._stand_in is None:
            self._stand_in = self._layout_step(self._base._layout())  # type: ignore[misc]
        return self._stand_in

    def _permuted(self, axes) -> LazyArray:
        """The view with axes permuted: axis k of the view is axis ``axes[k]``."""
        axes = tuple(axes)
        inverse = tuple(np.argsort(axes))
        return self._view(lambda b: shape_ops.transpose(b, axes),
                          lambda b, v: shape_ops.transpose(v, inverse),
                          lambda s: s.transpose(axes))

    def _reshaped(self, shape: tuple) -> LazyArray:
        """The view in *shape* (same size)."""
        return self._view(lambda b: shape_ops.reshape(b, shape),
                          lambda b, v: shape_ops.reshape(v, b.shape),
                          lambda s: np.reshape(s, shape, copy=False))

    def copy(self) -> LazyArray:
        """A new array with this one's value (later writes to either do not
        reach the other)."""
        return LazyArray(self.node)

    def _in_place(self, name: str, result: Node, casting: str = "same_kind") -> LazyArray:
        """``self op= other`` (or ``out=self``) given ``result = self op other``:
        NumPy's checks (the result broadcasts to the shape and casts back
        by the *casting* rule)."""
        node = self.node
        if result.shape != node.shape:
            try:
                result = manipulate.broadcast_to(result, node.shape)
            except ValueError:
                raise ValueError(f"non-broadcastable output operand with shape "
                                 f"{node.shape} doesn't match the broadcast shape "
                                 f"{result.shape}") from None
        if result.dtype != node.dtype:
            if not np.can_cast(result.dtype, node.dtype, casting):  # type: ignore[arg-type]
                ufunc, probe = getattr(np, name, None), np.zeros((1, 1), result.dtype)
                if isinstance(ufunc, np.ufunc) and ufunc.nout == 1:
                    with np.errstate(all="ignore"):     # NumPy's own casting error
                        ufunc(*[probe] * ufunc.nin, out=np.zeros((1, 1), node.dtype),
                              casting=casting)
                raise DTypeError(f"cannot cast {name}'s result from {result.dtype} to "
                                 f"{node.dtype} with casting rule '{casting}'")
            result = cast(result, node.dtype)
        self._assign(result)
        return self

    def __imatmul__(self, other) -> LazyArray:
        return self._in_place("matmul", linalg.matmul(self.node, _node(other)))

    def _refuse_value(self, what: str) -> None:
        """Raise ConcretizationError while ``la.jit`` traces: *what* needs
        this array's value."""
        if TRACING.names:
            raise ConcretizationError(concretization_message(self, what))

    # }}}

    # {{{ attributes

    @property
    def shape(self) -> tuple:
        """The lengths of the axes (assignable: ``x.shape = (3, -1)`` reshapes *x*)."""
        return self.node.shape

    @shape.setter
    def shape(self, shape: Any) -> None:
        self._set_shape(shape)

    @property
    def dtype(self) -> np.dtype:
        """The element type (a NumPy dtype)."""
        return self.node.dtype

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return self.node.ndim

    @property
    def size(self) -> int:
        """The number of elements."""
        return math.prod(self.shape)

    @property
    def device(self) -> Device:
        """The OpenCL device the array lives on."""
        return Device(_run.default_queue().device)

    def to_device(self, device: Any, /, *, stream: Any = None) -> LazyArray:
        """The array on *device* (lazyarray uses one device: it must be that one)."""
        if device != self.device:
            raise DTypeError(f"lazyarray uses one device, {self.device}; cannot move to "
                             f"{device!r}")
        return self

    def conj(self) -> LazyArray:
        """The complex conjugate."""
        return LazyArray(elementwise("conjugate", self.node))

    conjugate = conj

    def clip(self, min: Any = None, max: Any = None) -> LazyArray:
        """Values limited to [*min*, *max*]."""
        return self._namespace.clip(self, min, max)

    def round(self, decimals: int = 0) -> LazyArray:
        """Values rounded to *decimals* decimals (NumPy's rounding: half to even)."""
        return _device_or_numpy(lambda: LazyArray(round_half_even(self.node, decimals)),
                                np.round, (self, decimals))

    # }}}

    # {{{ evaluation

    def compute(self) -> LazyArray:
        """Compute now; the result stays on the device. (Inside a function
        ``la.jit`` traces, nothing: the trace computes what it returns.)"""
        if not TRACING.names:
            self._settle()
        return self

    def block_until_ready(self) -> LazyArray:
        """Compute now and wait until the device has finished (for timing);
        nothing inside a function ``la.jit`` traces."""
        if not TRACING.names:
            self._settle()
            with _run.DEVICE_LOCK:
                _run.default_queue().finish()
        return self

    def get(self) -> np.ndarray:
        """The value as a NumPy array."""
        self._refuse_value(".get()")
        return self._fetched() if self._handed_over() else self._host().copy()

    def _host(self) -> np.ndarray:
        """The value on the host, fetched once for a computed value (an array
        handed in is read anew: its device buffer may have changed); not to
        be modified."""
        host = on_host(self.node)
        if host is not None:
            return host
        element = element_value(self.node)
        if element is not None:
            return element
        with _run.DEVICE_LOCK:
            value = self._settle()
            host = value.get(queue=_run.queue_of(value))
        node = self.node
        if not is_kind(node, "input") or node.owned:
            keep_on_host(node, host)
        return host

    def _handed_over(self) -> bool:
        """Whether ``np.asarray``/``.get()`` hand over a large value as fetched
        now (one copy, not two: 19 -> 13 ms for 2^23 float64 on PoCL)."""
        return math.prod(self.shape) > HANDED_OVER and on_host(self.node) is None \
            and element_value(self.node) is None

    def _fetched(self) -> np.ndarray:
        """The value fetched from the device now (not remembered)."""
        with _run.DEVICE_LOCK:
            value = self._settle()
            return value.get(queue=_run.queue_of(value))

    def _host_copy(self) -> np.ndarray:
        return self._fetched() if self._handed_over() else self._host().copy()

    to_numpy = get

    def __array__(self, dtype=None, copy=None):
        self._refuse_value("np.asarray() (NumPy's conversion of the array)")
        result = self._fetched() if self._handed_over() else self._host().copy()
        return result if dtype is None else result.astype(dtype, copy=False)

    # }}}

    # {{{ the operators installed after the class, as type checkers see them

    __add__: ClassVar[_Binary]
    __radd__: ClassVar[_Binary]
    __sub__: ClassVar[_Binary]
    __rsub__: ClassVar[_Binary]
    __mul__: ClassVar[_Binary]
    __rmul__: ClassVar[_Binary]
    __truediv__: ClassVar[_Binary]
    __rtruediv__: ClassVar[_Binary]
    __floordiv__: ClassVar[_Binary]
    __rfloordiv__: ClassVar[_Binary]
    __mod__: ClassVar[_Binary]
    __rmod__: ClassVar[_Binary]
    __pow__: ClassVar[_Binary]
    __rpow__: ClassVar[_Binary]
    __and__: ClassVar[_Binary]
    __rand__: ClassVar[_Binary]
    __or__: ClassVar[_Binary]
    __ror__: ClassVar[_Binary]
    __xor__: ClassVar[_Binary]
    __rxor__: ClassVar[_Binary]
    __lshift__: ClassVar[_Binary]
    __rlshift__: ClassVar[_Binary]
    __rshift__: ClassVar[_Binary]
    __rrshift__: ClassVar[_Binary]
    __lt__: ClassVar[_Binary]
    __le__: ClassVar[_Binary]
    __gt__: ClassVar[_Binary]
    __ge__: ClassVar[_Binary]
    __eq__: ClassVar[_Binary]  # type: ignore[assignment]  # elementwise, as NumPy's
    __ne__: ClassVar[_Binary]  # type: ignore[assignment]  # elementwise, as NumPy's
    __neg__: ClassVar[_Unary]
    __pos__: ClassVar[_Unary]
    __invert__: ClassVar[_Unary]
    __abs__: ClassVar[_Unary]

    # }}}

    def __matmul__(self, other) -> LazyArray:
        return LazyArray(linalg.matmul(self.node, _node(other)))

    def __rmatmul__(self, other) -> LazyArray:
        return LazyArray(linalg.matmul(_node(other), self.node))

    def dot(self, other: Any) -> LazyArray:
        """The dot product with *other* (NumPy's dot)."""
        return LazyArray(linalg.dot(self.node, _node(other)))

    def __getitem__(self, key) -> LazyArray:
        """NumPy indexing: integers, slices, ``None`` and ``...`` give a view
        (a single element, a copy, as NumPy's scalar); array keys a copy."""
        plan = keys.basic_plan(self.shape, key)
        if plan is not None:
            if plan[3]:
                return LazyArray(shape_ops.getitem(self.node, key))
            if plan[1] and 0 not in plan[1]:
                # (a loop over windows of an uncomputed value computes it once)
                computed_for_windows(self.node, plan[2])
        elif not keys.is_basic_key(key) or keys.is_element_key(key, self.ndim):
            return LazyArray(shape_ops.getitem(self.node, key))
        return self._view(lambda b: shape_ops.getitem(b, key),
                          lambda b, v: shape_ops.setitem(b, key, v),
                          lambda s: s[key])

    def __setitem__(self, key, value) -> None:
        """``x[key] = value``: *x* (its aliases, and for a view the array it
        views) gets the region replaced; copies made earlier keep the old values."""
        node = self.node
        if isinstance(value, LazyArray) and value._base is self and keys.is_basic_key(key) \
                and value.node is shape_ops.getitem(node, key):
            return          # (``x[k] += 1`` wrote through the view x[k] already)
        self._assign(shape_ops.setitem(node, key, value))

    def take(self, indices: Any, axis: int | None = None, out: None = None, mode: str = "raise"):
        """Elements at *indices* along *axis* (*mode*: NumPy's)."""
        return LazyArray(shape_ops.take(self.node, in_bounds(self, indices, axis, out, mode), axis))

    def transpose(self, *axes: Any) -> LazyArray:
        """The axes permuted (reversed by default): a view."""
        axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) \
            else (axes or None)  # type: ignore[assignment]
        return self._permuted(shape_ops.permutation_of(shape_ops.transpose(self.node, axes)))

    @property
    def T(self) -> LazyArray:
        """The transpose (axes reversed): a view."""
        return self.transpose()

    def reshape(self, *shape: Any, order: str = "C", copy: bool | None = None) -> LazyArray:
        """The elements in *order* (NumPy's) in *shape*: a view where NumPy's
        reshape is one (no copy needed), else a copy (*copy*: NumPy's meaning)."""
        return reshaped(self, shape, order, copy)

    def _reshape_c(self, shape: Any, copy: bool | None) -> LazyArray:
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        node = shape_ops.reshape(self.node, shape)
        if copy:
            return LazyArray(node)
        if self._base is not None:
            try:
                np.reshape(self._layout(), node.shape, copy=False)
            except ValueError:
                if copy is False:
                    raise
                return LazyArray(node)
        return self._reshaped(node.shape)

    def ravel(self, order: str = "C") -> LazyArray:
        """The elements in *order* (NumPy's) on one axis: a view where NumPy's is one."""
        return raveled(self, order, copy=False)

    def flatten(self, order: str = "C") -> LazyArray:
        """The elements in *order* (NumPy's) on one axis (a copy)."""
        return raveled(self, order, copy=True)

    def squeeze(self, axis: int | tuple[int, ...] | None = None) -> LazyArray:
        """Unit axes removed (a view)."""
        return self._reshaped(manipulate.squeeze(self.node, axis).shape)

    def swapaxes(self, axis1: Any, axis2: Any) -> LazyArray:
        """Two axes exchanged (a view)."""
        swapped = manipulate.swapaxes(self.node, axis1, axis2)
        return self._permuted(shape_ops.permutation_of(swapped))

    def repeat(self, repeats: Any, axis: int | tuple[int, ...] | None = None) -> LazyArray:
        """Each element repeated *repeats* times along *axis*."""
        return LazyArray(manipulate.repeat(self.node, repeats, axis))

    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
               copy: bool = True) -> LazyArray:
        """The values converted to *dtype* as NumPy converts them (*casting*
        NumPy's rule: a conversion it forbids raises): a new array (this one
        itself for the same dtype and ``copy=False``)."""
        dtype = np.dtype(dtype)
        if casting != "unsafe":
            check_casting(self.dtype, dtype, casting)
        if not copy and dtype == self.dtype:
            return self
        return LazyArray(cast(self.node, dtype))


def copy(x: Any) -> LazyArray:
    """A copy of *x* (later writes to *x* do not change it)."""
    return asarray(x).copy()


def _binary(name, reflected=False):
    ufunc = getattr(np, name)

    def op(self, other):
        if getattr(type(other), "__array_ufunc__", False) is None:
            # NumPy's rule: an operand that opts out of ufuncs (arraycontext's
            # containers) gets its own reflected operator
            return NotImplemented
        if other is None and name in ("equal", "not_equal"):
            # NumPy compares each element with None: never equal
            return LazyArray(full(self.shape, name == "not_equal", np.bool_))
        args = (other, self) if reflected else (self, other)
        if name == "power" and not reflected and self.dtype == np.bool_ and (
                type(other) is int and other == 2):
            # NumPy's operator squares for the exponent 2: bool ** 2 is int8
            return LazyArray(elementwise("square", self.node))
        return _device_or_numpy(lambda: LazyArray(elementwise(name, *map(_node, args))),
                                ufunc, args)
    return op


def _in_place(name):
    ufunc = getattr(np, name)

    def op(self, other):
        result = _device_or_numpy(
            lambda: LazyArray(elementwise(name, self.node, _node(other))), ufunc, (self, other))
        return self._in_place(name, result.node)
    return op


for _dunder, _name in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                       ("truediv", "true_divide"), ("floordiv", "floor_divide"),
                       ("mod", "remainder"), ("pow", "power"), ("and", "bitwise_and"),
                       ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                       ("lshift", "left_shift"), ("rshift", "right_shift")]:
    setattr(LazyArray, f"__{_dunder}__", _binary(_name))
    setattr(LazyArray, f"__r{_dunder}__", _binary(_name, reflected=True))
    setattr(LazyArray, f"__i{_dunder}__", _in_place(_name))
for _dunder, _name in [("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                       ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")]:
    setattr(LazyArray, f"__{_dunder}__", _binary(_name))
LazyArray.__neg__ = lambda self: LazyArray(elementwise("negative", self.node))
LazyArray.__pos__ = lambda self: LazyArray(elementwise("positive", self.node))
LazyArray.__invert__ = lambda self: LazyArray(elementwise("invert", self.node))
LazyArray.__abs__ = lambda self: LazyArray(elementwise("absolute", self.node))
# (0-d arrays hash by value as NumPy's scalars; others raise)
LazyArray.__hash__ = NumPyMethods._value_hash  # type: ignore[assignment, method-assign]


def asarray(data: Any, dtype: Any = None, *, device: Any = None, copy: bool | None = None
            ) -> LazyArray:
    """A lazy array holding *data* (NumPy array, scalar, pyopencl array or lazy
    array) on the default device (lazy arrays are immutable: *copy* does not
    matter, except that ``copy=False`` refuses a conversion that must copy)."""
    if device is not None and device != Device(_run.default_queue().device):
        raise DTypeError(f"lazyarray uses one device; cannot place an array on {device!r}")
    if copy is False and not isinstance(data, LazyArray) and not is_cl_array(data) and not (
            dtype is None or np.dtype(dtype) == np.asarray(data).dtype):
        raise ValueError("asarray(copy=False): converting the dtype needs a copy")
    if isinstance(data, LazyArray):
        if dtype is None:
            return data.copy() if copy else data
        return data.astype(dtype, copy=bool(copy))
    return LazyArray(input_node(data, dtype))
