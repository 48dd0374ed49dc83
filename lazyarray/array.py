"""LazyArray: NumPy-style arrays that record operations and compute on demand.

Public names: LazyArray, asarray.
"""

from __future__ import annotations

import numbers

import numpy as np
import pyopencl.array as cla

from lazyarray.errors import DTypeError
from lazyarray.graph import Const, Input, Map, Node
from lazyarray.ops.elementwise import ELEMENTWISE, elementwise
from lazyarray.ops import linalg, manipulate, reductions, shape as shape_ops
from lazyarray.ops.host import HOST_FUNCTIONS
from lazyarray.runtime import default_queue, evaluate


def _node(x) -> Node:
    if isinstance(x, LazyArray):
        return x.node
    if isinstance(x, (bool, numbers.Number)) and not isinstance(x, np.generic):
        return Const(x, np.result_type(x), True)
    if isinstance(x, np.generic):
        return Const(x, x.dtype, False)
    return asarray(x).node


class LazyArray:
    """A lazily evaluated array: operations build a graph; ``get()``,
    ``np.asarray`` and scalar conversions compute it."""

    __array_priority__ = 100

    def __init__(self, node: Node):
        self.node = node

    # {{{ attributes

    @property
    def shape(self) -> tuple:
        return self.node.shape

    @property
    def dtype(self) -> np.dtype:
        return self.node.dtype

    @property
    def ndim(self) -> int:
        return self.node.ndim

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[k] for k in range(self.shape[0]))

    def __array_namespace__(self, api_version=None):
        """The lazyarray module, as a Python Array API namespace."""
        import lazyarray
        return lazyarray

    # }}}

    # {{{ evaluation

    def compute(self) -> LazyArray:
        """Compute now; the result stays on the device."""
        evaluate(self.node)
        return self

    def get(self) -> np.ndarray:
        """The value as a NumPy array."""
        return evaluate(self.node).get(queue=default_queue())

    to_numpy = get

    def __array__(self, dtype=None, copy=None):
        result = self.get()
        return result if dtype is None else result.astype(dtype)

    def item(self):
        return self.get().item()

    def __float__(self):
        return float(self.get())

    def __int__(self):
        return int(self.get())

    def __bool__(self):
        return bool(self.get())

    def __repr__(self) -> str:
        return f"lazyarray({np.array2string(self.get(), separator=', ')}, dtype={self.dtype})"

    # }}}

    # {{{ NumPy protocols

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs and ufunc is np.matmul:
                return LazyArray(linalg.matmul(*(_node(x) for x in inputs)))
        if method != "__call__" or kwargs or ufunc.__name__ not in ELEMENTWISE:
            return NotImplemented
        return LazyArray(elementwise(ufunc.__name__, *(_node(x) for x in inputs)))

    def __array_function__(self, func, types, args, kwargs):
        import lazyarray
        impl = getattr(lazyarray, func.__name__, None)
        if impl is None or func.__name__ not in _ARRAY_FUNCTIONS:
            return NotImplemented
        return impl(*args, **kwargs)

    # }}}

    def __matmul__(self, other) -> LazyArray:
        return LazyArray(linalg.matmul(self.node, _node(other)))

    def __rmatmul__(self, other) -> LazyArray:
        return LazyArray(linalg.matmul(_node(other), self.node))

    def dot(self, other) -> LazyArray:
        return LazyArray(linalg.dot(self.node, _node(other)))

    def __getitem__(self, key) -> LazyArray:
        return LazyArray(shape_ops.getitem(self.node, key))

    def take(self, indices, axis=None) -> LazyArray:
        return LazyArray(shape_ops.take(self.node, indices, axis))

    def transpose(self, *axes) -> LazyArray:
        axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else (axes or None)
        return LazyArray(shape_ops.transpose(self.node, axes))

    @property
    def T(self) -> LazyArray:
        return self.transpose()

    def reshape(self, *shape) -> LazyArray:
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return LazyArray(shape_ops.reshape(self.node, shape))

    def ravel(self) -> LazyArray:
        return self.reshape(-1)

    flatten = ravel

    def squeeze(self, axis=None) -> LazyArray:
        return LazyArray(manipulate.squeeze(self.node, axis))

    def swapaxes(self, axis1, axis2) -> LazyArray:
        return LazyArray(manipulate.swapaxes(self.node, axis1, axis2))

    def repeat(self, repeats, axis=None) -> LazyArray:
        return LazyArray(manipulate.repeat(self.node, repeats, axis))

    def astype(self, dtype) -> LazyArray:
        dtype = np.dtype(dtype)
        if dtype == self.dtype:
            return self
        return LazyArray(Map("astype", (self.node,), self.shape, dtype))

    # {{{ reductions

    def sum(self, axis=None, keepdims=False, dtype=None):
        return LazyArray(reductions.reduce("sum", self.node, axis, keepdims, dtype))

    def prod(self, axis=None, keepdims=False, dtype=None):
        return LazyArray(reductions.reduce("product", self.node, axis, keepdims, dtype))

    def max(self, axis=None, keepdims=False):
        return LazyArray(reductions.reduce("max", self.node, axis, keepdims))

    def min(self, axis=None, keepdims=False):
        return LazyArray(reductions.reduce("min", self.node, axis, keepdims))

    def any(self, axis=None, keepdims=False):
        return LazyArray(reductions.reduce("any", self.node, axis, keepdims))

    def all(self, axis=None, keepdims=False):
        return LazyArray(reductions.reduce("all", self.node, axis, keepdims))

    def mean(self, axis=None, keepdims=False, dtype=None):
        return LazyArray(reductions.mean(self.node, axis, keepdims, dtype))

    def var(self, axis=None, dtype=None, ddof=0, keepdims=False):
        return LazyArray(reductions.var(self.node, axis, keepdims, dtype, ddof))

    def std(self, axis=None, dtype=None, ddof=0, keepdims=False):
        return LazyArray(elementwise("sqrt", reductions.var(self.node, axis, keepdims,
                                                            dtype, ddof)))

    def cumsum(self, axis=None, dtype=None):
        return LazyArray(reductions.scan("sum", self.node, axis, dtype))

    def cumprod(self, axis=None, dtype=None):
        return LazyArray(reductions.scan("product", self.node, axis, dtype))

    def argmax(self, axis=None, keepdims=False):
        return LazyArray(reductions.argreduce("argmax", self.node, axis, keepdims))

    def argmin(self, axis=None, keepdims=False):
        return LazyArray(reductions.argreduce("argmin", self.node, axis, keepdims))

    # }}}


#: NumPy functions that stay lazy on lazy arrays (``np.concatenate(...)`` etc.)
_ARRAY_FUNCTIONS = frozenset([
    "concatenate", "stack", "hstack", "vstack", "where", "sum", "prod", "max", "min",
    "mean", "full_like", "zeros_like", "ones_like", "empty_like",
    "einsum", "matmul", "dot", "inner", "outer", "vdot", "tensordot",
    "var", "std", "argmax", "argmin", "count_nonzero", "cumsum", "cumprod", "take",
    "broadcast_to", "broadcast_arrays", "expand_dims", "squeeze", "moveaxis", "swapaxes",
    "flip", "roll", "tile", "repeat", "pad", "split", "transpose", "reshape", "ravel",
    *HOST_FUNCTIONS])


def _binary(name, reflected=False):
    def op(self, other):
        args = (other, self) if reflected else (self, other)
        return LazyArray(elementwise(name, *(_node(a) for a in args)))
    return op


for _dunder, _name in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                       ("truediv", "true_divide"), ("floordiv", "floor_divide"),
                       ("mod", "remainder"), ("pow", "power")]:
    setattr(LazyArray, f"__{_dunder}__", _binary(_name))
    setattr(LazyArray, f"__r{_dunder}__", _binary(_name, reflected=True))
for _dunder, _name in [("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                       ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")]:
    setattr(LazyArray, f"__{_dunder}__", _binary(_name))
LazyArray.__neg__ = lambda self: LazyArray(elementwise("negative", self.node))
LazyArray.__pos__ = lambda self: self
LazyArray.__abs__ = lambda self: LazyArray(elementwise("absolute", self.node))
LazyArray.__hash__ = None


def asarray(data, dtype=None) -> LazyArray:
    """A lazy array holding *data* (NumPy array, scalar, pyopencl array or lazy
    array) on the default device."""
    if isinstance(data, LazyArray):
        return data if dtype is None else data.astype(dtype)
    if isinstance(data, cla.Array):
        if dtype is not None and np.dtype(dtype) != data.dtype:
            data = data.astype(dtype)
        # a new array object per call: the caller may change the buffer's
        # contents between calls, so values computed from an earlier call's
        # array must not be reused for this one
        return LazyArray(Input(data.reshape(data.shape)))
    host = np.asarray(data, dtype=dtype)
    if host.dtype.kind not in "biufc":
        raise DTypeError(f"lazyarray does not support dtype {host.dtype}")
    if host.dtype == np.float16:
        raise DTypeError("float16 is not supported")
    return LazyArray(Input(cla.to_device(default_queue(), np.require(host, requirements='C'))))
