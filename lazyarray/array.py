"""LazyArray: NumPy-style arrays that record operations and compute on demand.

Public names: LazyArray, asarray.
"""

from __future__ import annotations

import numbers

import numpy as np
import pyopencl.array as cla

from lazyarray.errors import DTypeError
from lazyarray.graph import Const, Input, Node
from lazyarray.ops.elementwise import (
    UFUNCS, HugeInt, cast, elementwise, imag_part, real_part, round_half_even)
from lazyarray.ops import linalg, manipulate, reductions, shape as shape_ops
from lazyarray.ops.host import HOST_FUNCTIONS
from lazyarray.values import keep_on_host, on_device, on_host
from lazyarray.runtime import DEVICE_LOCK, TRACING, adopt, default_queue, evaluate

#: an array whose graph of uncomputed operations gets deeper than this is
#: computed when it is made (a Python loop of eager steps stays bounded)
DEPTH_LIMIT = 100


def _node(x) -> Node:
    if isinstance(x, LazyArray):
        return x.node
    if isinstance(x, int) and not isinstance(x, bool) and not -2**63 <= x < 2**64:
        return HugeInt(x)
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
        if node.depth > DEPTH_LIMIT and not TRACING.names:
            # a bounded graph: long loops of eager steps compute every so often
            self._settle()

    def _settle(self) -> cla.Array:
        """Compute this array's value and hold it as a leaf (the graph that
        computed it can be freed); the value on the device."""
        node = self.node
        with DEVICE_LOCK:
            value = evaluate(node)
        if not isinstance(node, Input) and on_device(node) is value:
            leaf = Input(value, owned=True)
            host = on_host(node)
            if host is not None:
                keep_on_host(leaf, host)
            self.node = leaf
        return value

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
        if api_version not in (None, "2021.12", "2022.12", "2023.12"):
            raise ValueError(f"lazyarray implements the array API 2023.12, "
                             f"not {api_version!r}")
        return lazyarray

    @property
    def device(self) -> Device:
        """The OpenCL device the array lives on."""
        return Device(default_queue().device)

    def to_device(self, device, /, *, stream=None) -> LazyArray:
        """The array on *device* (lazyarray uses one device: it must be that one)."""
        if device != self.device:
            raise DTypeError(f"lazyarray uses one device, {self.device}; cannot move to "
                             f"{device!r}")
        return self

    @property
    def mT(self) -> LazyArray:
        """The transpose of the last two axes (a view)."""
        if self.ndim < 2:
            raise ValueError("mT needs an array of at least 2 dimensions")
        return LazyArray(manipulate.swapaxes(self.node, -1, -2))

    @property
    def real(self) -> LazyArray:
        return LazyArray(real_part(self.node))

    @property
    def imag(self) -> LazyArray:
        return LazyArray(imag_part(self.node))

    def conj(self) -> LazyArray:
        return LazyArray(elementwise("conjugate", self.node))

    conjugate = conj

    def clip(self, min=None, max=None) -> LazyArray:   # noqa: A002 - NumPy's names
        import lazyarray
        return lazyarray.clip(self, min, max)

    def round(self, decimals=0) -> LazyArray:
        return LazyArray(round_half_even(self.node, decimals))

    # }}}

    # {{{ evaluation

    def compute(self) -> LazyArray:
        """Compute now; the result stays on the device."""
        self._settle()
        return self

    def block_until_ready(self) -> LazyArray:
        """Compute now and wait until the device has finished (for timing)."""
        self._settle()
        with DEVICE_LOCK:
            default_queue().finish()
        return self

    def get(self) -> np.ndarray:
        """The value as a NumPy array."""
        return self._host().copy()

    def _host(self) -> np.ndarray:
        """The value on the host, fetched once for a computed value (an array
        handed in is read anew: its device buffer may have changed); not to
        be modified."""
        host = on_host(self.node)
        if host is not None:
            return host
        with DEVICE_LOCK:
            host = self._settle().get(queue=default_queue())
        node = self.node
        if not isinstance(node, Input) or node.owned:
            keep_on_host(node, host)
        return host

    to_numpy = get

    def __array__(self, dtype=None, copy=None):
        result = self.get()
        return result if dtype is None else result.astype(dtype)

    def item(self):
        return self._host().item()

    def __float__(self):
        return float(self._host())

    def __int__(self):
        return int(self._host())

    def __bool__(self):
        return bool(self._host())

    def __complex__(self):
        return complex(self._host())

    def __index__(self):
        if self.dtype.kind not in "iu" or self.ndim:
            raise TypeError("only integer scalar arrays can be converted to an index")
        return int(self.get())

    def __dlpack__(self, **kwargs):
        """DLPack export of the computed value (a host copy)."""
        return self.get().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.get().__dlpack_device__()

    def __repr__(self) -> str:
        return f"lazyarray({np.array2string(self.get(), separator=', ')}, dtype={self.dtype})"

    # }}}

    # {{{ NumPy protocols

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if kwargs.get("out", None) is None and kwargs.get("where", True) is True \
                and kwargs.get("casting", "same_kind") == "same_kind":
            kwargs = {k: v for k, v in kwargs.items()
                      if k not in ("out", "where", "casting")}
        if method != "__call__" or kwargs:
            return NotImplemented
        if ufunc is np.matmul:
            return LazyArray(linalg.matmul(*(_node(x) for x in inputs)))
        if ufunc.__name__ in ("vecdot", "divmod", "modf"):
            import lazyarray
            return getattr(lazyarray, ufunc.__name__)(*inputs)
        if ufunc.__name__ not in UFUNCS:
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

    def __setitem__(self, key, value) -> None:
        """``x[key] = value``: *x* becomes a new lazy value with the region
        replaced (arrays computed from *x* earlier keep the old values)."""
        self.node = shape_ops.setitem(self.node, key, value)

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

    def astype(self, dtype, copy=True) -> LazyArray:
        """The values converted to *dtype* as NumPy converts them (lazy arrays
        are immutable, so *copy* makes no difference)."""
        dtype = np.dtype(dtype)
        # (a new array, even of the same dtype: assigning to its elements
        # must not change this one)
        return LazyArray(cast(self.node, dtype))

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
        return self._logical_reduction("any", axis, keepdims)

    def all(self, axis=None, keepdims=False):
        return self._logical_reduction("all", axis, keepdims)

    def _logical_reduction(self, op, axis, keepdims):
        node = reductions.reduce(op, self.node, axis, keepdims)
        if self.size == 0:
            # nothing to reduce: the identity, as a constant
            from lazyarray.ops.construct import full
            return LazyArray(full(node.shape, op == "all", np.bool_))
        return LazyArray(node)

    def mean(self, axis=None, keepdims=False, dtype=None):
        return LazyArray(reductions.mean(self.node, axis, keepdims, dtype))

    def var(self, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
        """Variance; *correction* is the Array API's (and NumPy 2's) name of *ddof*."""
        return LazyArray(reductions.var(self.node, axis, keepdims, dtype,
                                        _ddof(ddof, correction)))

    def std(self, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
        """Standard deviation (see :meth:`var`)."""
        return LazyArray(elementwise("sqrt", reductions.var(
            self.node, axis, keepdims, dtype, _ddof(ddof, correction))))

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
    "all", "any", "clip", "round", "around", "real", "imag", "isclose", "allclose",
    "tril", "triu", "meshgrid", "diff", "nan_to_num", "angle", "astype", "concat",
    "unstack", "matrix_transpose", "cumulative_sum", "permute_dims", "vecdot",
    *HOST_FUNCTIONS])


def _binary(name, reflected=False):
    def op(self, other):
        args = (other, self) if reflected else (self, other)
        return LazyArray(elementwise(name, *(_node(a) for a in args)))
    return op


for _dunder, _name in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                       ("truediv", "true_divide"), ("floordiv", "floor_divide"),
                       ("mod", "remainder"), ("pow", "power"), ("and", "bitwise_and"),
                       ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                       ("lshift", "left_shift"), ("rshift", "right_shift")]:
    setattr(LazyArray, f"__{_dunder}__", _binary(_name))
    setattr(LazyArray, f"__r{_dunder}__", _binary(_name, reflected=True))
for _dunder, _name in [("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                       ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")]:
    setattr(LazyArray, f"__{_dunder}__", _binary(_name))
LazyArray.__neg__ = lambda self: LazyArray(elementwise("negative", self.node))
LazyArray.__pos__ = lambda self: LazyArray(elementwise("positive", self.node))
LazyArray.__invert__ = lambda self: LazyArray(elementwise("invert", self.node))
LazyArray.__abs__ = lambda self: LazyArray(elementwise("absolute", self.node))
LazyArray.__hash__ = None


class Device:
    """An OpenCL device, as the Array API's ``x.device``."""

    def __init__(self, cl_device):
        self.cl_device = cl_device

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.cl_device == self.cl_device

    def __hash__(self) -> int:
        return hash(self.cl_device.int_ptr)

    def __repr__(self) -> str:
        return f"Device({self.cl_device.name.strip()!r})"


def _ddof(ddof, correction):
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction cannot both be given")
    return correction


def asarray(data, dtype=None, *, device=None, copy=None) -> LazyArray:
    """A lazy array holding *data* (NumPy array, scalar, pyopencl array or lazy
    array) on the default device (lazy arrays are immutable: *copy* does not
    matter, except that ``copy=False`` refuses a conversion that must copy)."""
    if device is not None and device != Device(default_queue().device):
        raise DTypeError(f"lazyarray uses one device; cannot place an array on {device!r}")
    if copy is False and not isinstance(data, (LazyArray, cla.Array)) and not (
            dtype is None or np.dtype(dtype) == np.asarray(data).dtype):
        raise ValueError("asarray(copy=False): converting the dtype needs a copy")
    if isinstance(data, LazyArray):
        return data if dtype is None else data.astype(dtype)
    if isinstance(data, cla.Array):
        if dtype is not None and np.dtype(dtype) != data.dtype:
            data = data.astype(dtype)
        # a new graph input per call (inputs are not interned): the caller may
        # change the buffer's contents between calls, so values computed from
        # an earlier call's array are not reused for this one
        return LazyArray(Input(adopt(data)))
    host = np.asarray(data, dtype=dtype)
    if not host.dtype.isnative:         # (kernels read native byte order)
        host = host.astype(host.dtype.newbyteorder("="))
    if host.dtype.kind not in "biufc":
        raise DTypeError(f"lazyarray does not support dtype {host.dtype}")
    if host.dtype == np.float16:
        raise DTypeError("float16 is not supported")
    with DEVICE_LOCK:
        data = cla.to_device(default_queue(), np.require(host, requirements='C'))
    return LazyArray(Input(data, owned=True))
