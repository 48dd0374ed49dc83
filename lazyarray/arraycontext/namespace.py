"""The NumPy work-alike namespace of the array context (``actx.np``): the
functions of :mod:`lazyarray`, mapped over array containers.

:class:`LazyNumpyFunctions` holds the logic. It needs a container walker
(:mod:`lazyarray.arraycontext.traversal`) and a queue; it does not need
arraycontext. The context's namespace combines it with arraycontext's
``BaseFakeNumpyNamespace``; :class:`StandaloneNamespace` is the same
functions over tuples, lists, dicts and object arrays (tests, scripts).

Rules, as arraycontext's own namespaces keep them:

- elementwise functions map leaf by leaf over containers of one structure
  (scalars and arrays broadcast against containers); all-scalar calls give
  NumPy's result;
- reductions (``sum``, ``max``, ``min``, ``any``, ``all``) reduce over every
  leaf of a container, to one 0-d array;
- ``where`` takes conditions of any dtype (nonzero is true);
- ``reshape``/``ravel`` take ``order="F"``; zero-size arrays launch nothing.

Public names: LazyNumpyFunctions, StandaloneNamespace, StandaloneLinalg,
ELEMENTWISE.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyopencl as cl

import lazyarray as la
from lazyarray.arraycontext.freeze import store_broadcast_operands
from lazyarray.arraycontext.traversal import PlainWalker, Walker
from lazyarray.handle import LazyArray
from lazyarray.run import using_queue

#: functions of ``la`` that ``actx.np`` maps leaf by leaf
ELEMENTWISE = frozenset({
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "degrees", "radians",
    "deg2rad", "rad2deg", "exp", "expm1", "exp2", "log", "log10", "log2", "log1p",
    "logaddexp", "logaddexp2", "sqrt", "cbrt", "square", "absolute", "abs", "fabs",
    "sign", "floor", "ceil", "trunc", "rint", "fix", "around", "round",
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power",
    "float_power", "mod", "fmod", "remainder", "negative", "positive", "reciprocal",
    "maximum", "minimum", "fmax", "fmin", "copysign", "signbit", "isnan", "isinf",
    "isfinite", "real", "imag", "angle", "conj", "conjugate", "heaviside", "nextafter",
    "ldexp", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift", "clip",
    "nan_to_num", "i0", "sinc", "gcd", "lcm", "atan2", "asin", "acos", "atan",
})

#: NumPy's names of the C ones that arraycontext's namespaces refuse
_C_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2"}


def _is_scalar(x: Any) -> bool:
    if isinstance(x, LazyArray):
        return False        # (a compiled function's traced numbers are arrays here)
    return isinstance(x, (numbers.Number, np.generic, bool)) or (
        isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype != object)


class LazyNumpyFunctions:
    """NumPy's functions on lazy arrays and containers of them. Subclasses
    set :attr:`_walker` (the container traversal) and :attr:`_queue` (where
    arrays made from nothing are placed)."""

    _walker: Walker
    _queue: cl.CommandQueue | None

    # {{{ helpers

    def _on_queue(self):
        return using_queue(self._queue)

    def _leaf_function(self, name: str) -> Callable[..., Any]:
        numpy_name = _C_NAMES.get(name, name)
        la_function: Any = getattr(la, numpy_name, None)
        np_function: Any = getattr(np, numpy_name, None)
        if la_function is None and np_function is None:
            raise AttributeError(f"'{type(self).__name__}' has no attribute '{name}'")

        def leaf(*args: Any, **kwargs: Any) -> Any:
            if all(_is_scalar(a) for a in args):
                return np_function(*args, **kwargs)
            with self._on_queue():
                return la_function(*args, **kwargs)

        return leaf

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_") or name not in ELEMENTWISE:
            raise AttributeError(f"'{type(self).__name__}' has no attribute '{name}'")
        leaf = self._leaf_function(name)

        @functools.wraps(leaf)
        def mapped(*args: Any, **kwargs: Any) -> Any:
            return self._walker.multimap(lambda *xs: leaf(*xs, **kwargs), *args)

        mapped.__name__ = name
        return mapped

    # }}}

    # {{{ making arrays

    def zeros(self, shape: int | tuple[int, ...], dtype: Any = np.float64) -> LazyArray:
        """An array of zeros."""
        with self._on_queue():
            return la.zeros(shape, dtype)

    def ones(self, shape: int | tuple[int, ...], dtype: Any = np.float64) -> LazyArray:
        """An array of ones."""
        with self._on_queue():
            return la.ones(shape, dtype)

    def full(self, shape: int | tuple[int, ...], fill_value: Any, dtype: Any = None
             ) -> LazyArray:
        """An array of *fill_value*."""
        with self._on_queue():
            return la.full(shape, fill_value, dtype)

    def _full_like_array(self, ary: LazyArray, fill_value: Any) -> LazyArray:
        with self._on_queue():
            return la.full(ary.shape, fill_value, ary.dtype)

    def full_like(self, ary: Any, fill_value: Any) -> Any:
        """Leaf by leaf, an array like the leaf filled with *fill_value*
        (scalar leaves become *fill_value*)."""
        return self._walker.map(
            lambda a: fill_value if _is_scalar(a) else self._full_like_array(a, fill_value),
            ary)

    def zeros_like(self, ary: Any) -> Any:
        """:meth:`full_like` with 0."""
        return self.full_like(ary, 0)

    def ones_like(self, ary: Any) -> Any:
        """:meth:`full_like` with 1."""
        return self.full_like(ary, 1)

    def empty_like(self, ary: Any) -> Any:
        """:meth:`zeros_like` (lazy arrays hold no uninitialized memory)."""
        return self.zeros_like(ary)

    def arange(self, *args: Any, **kwargs: Any) -> LazyArray:
        """NumPy's arange, on the device."""
        with self._on_queue():
            return la.arange(*args, **kwargs)

    def copy(self, ary: Any) -> Any:
        """Leaf by leaf, a copy (lazy arrays are values: the same handle)."""
        return self._walker.map(lambda a: a if _is_scalar(a) else la.asarray(a), ary)

    # }}}

    # {{{ shapes

    def reshape(self, a: Any, /, shape: int | tuple[int, ...] | None = None,
                order: str = "C", *, newshape: Any = None) -> Any:
        """Leaf by leaf, NumPy's reshape (``order`` "C" or "F")."""
        if shape is None:
            shape = newshape
        return self._walker.map(lambda x: reshape(x, shape, order), a)

    def ravel(self, a: Any, /, order: str = "C") -> Any:
        """Leaf by leaf, the elements in one axis (``order`` "C", "F", "A", "K")."""
        if order not in ("C", "F", "A", "K"):
            raise ValueError(f"order must be one of 'C', 'F', 'A', 'K' (got {order!r})")

        def leaf(x: Any) -> Any:
            if _is_scalar(x):
                raise ValueError("cannot ravel a scalar")
            return reshape(x, (-1,), "F" if order == "F" else "C")

        return self._walker.map(leaf, a)

    def transpose(self, a: Any, /, axes: Sequence[int] | None = None) -> Any:
        """Leaf by leaf, the axes permuted (reversed by default)."""
        return self._walker.map(lambda x: x if _is_scalar(x) else la.transpose(x, axes),
                                a)

    def broadcast_to(self, array: Any, /, shape: tuple[int, ...]) -> Any:
        """Leaf by leaf, broadcast to *shape* (scalars stay scalars)."""
        return self._walker.map(lambda x: x if _is_scalar(x) else la.broadcast_to(x, shape),
                                array)

    def squeeze(self, a: Any, /, axis: Any = None) -> Any:
        """Leaf by leaf, NumPy's squeeze."""
        return self._walker.map(lambda x: la.squeeze(x, axis), a)

    def concatenate(self, arrays: Sequence[Any], /, axis: int = 0) -> Any:
        """Leaf by leaf over containers of one structure, NumPy's concatenate."""
        return self._walker.multimap(lambda *xs: la.concatenate(xs, axis=axis), *arrays)

    def stack(self, arrays: Sequence[Any], /, axis: int = 0) -> Any:
        """Leaf by leaf over containers of one structure, NumPy's stack."""
        with self._on_queue():
            return self._walker.multimap(lambda *xs: la.stack(xs, axis=axis), *arrays)

    def size(self, x: Any) -> int:
        """The number of elements of an array (NumPy's ``np.size``)."""
        return int(np.prod(x.shape, dtype=np.int64)) if hasattr(x, "shape") else 1

    def shape(self, x: Any) -> tuple[int, ...]:
        """The shape of an array (NumPy's ``np.shape``)."""
        return tuple(x.shape) if hasattr(x, "shape") else ()

    def ndim(self, x: Any) -> int:
        """The number of axes of an array."""
        return len(self.shape(x))

    # }}}

    # {{{ selection, products

    def where(self, condition: Any, x: Any, y: Any, /) -> Any:
        """Leaf by leaf, NumPy's where; a condition of any dtype is true where
        nonzero."""
        def leaf(c: Any, a: Any, b: Any) -> Any:
            if all(_is_scalar(v) for v in (c, a, b)):
                return np.where(c, a, b)
            if isinstance(c, LazyArray) and c.dtype != np.bool_:
                c = c != 0
            with self._on_queue():
                return la.where(c, a, b)

        return self._walker.multimap(leaf, condition, x, y)

    def vdot(self, a: Any, b: Any, /) -> Any:
        """Leaf by leaf, NumPy's vdot (the first argument conjugated)."""
        return self._walker.multimap(lambda x, y: la.vdot(x, y), a, b)

    def outer(self, a: Any, b: Any, /) -> Any:
        """Leaf by leaf, NumPy's outer product."""
        return self._walker.multimap(la.outer, a, b)

    def einsum(self, spec: str, *operands: Any) -> LazyArray:
        """NumPy's einsum (size-1 labels broadcast); operands the product
        reads many times are stored first (:func:`store_broadcast_operands`)."""
        with self._on_queue():
            store_broadcast_operands(spec, operands)
            return la.einsum(spec, *operands)

    # }}}

    # {{{ reductions

    def _reduce(self, leaf_reduce: Callable[[Any], Any], combine: Callable[[Any, Any], Any],
                a: Any) -> Any:
        def reduce(values: list[Any]) -> Any:
            if not values:
                raise ValueError("reduction over an empty container")
            return functools.reduce(combine, values)

        with self._on_queue():
            return self._walker.map_reduce(reduce, leaf_reduce, a)

    def sum(self, a: Any, /, axis: Any = None, dtype: Any = None) -> Any:
        """The sum of every leaf's elements (*axis* only for a single array)."""
        if self._walker.split(a) is not None and axis is not None:
            raise NotImplementedError("sum over an axis of a container")
        return self._reduce(lambda x: np.sum(x, axis=axis, dtype=dtype) if _is_scalar(x)
                            else la.sum(x, axis=axis, dtype=dtype),
                            lambda u, v: u + v, a)

    def max(self, a: Any, /, axis: Any = None) -> Any:
        """The largest element of every leaf."""
        return self._reduce(lambda x: np.max(x, axis=axis) if _is_scalar(x)
                            else la.max(x, axis=axis), la.maximum, a)

    def min(self, a: Any, /, axis: Any = None) -> Any:
        """The smallest element of every leaf."""
        return self._reduce(lambda x: np.min(x, axis=axis) if _is_scalar(x)
                            else la.min(x, axis=axis), la.minimum, a)

    amax = max
    amin = min

    def any(self, a: Any, /) -> Any:
        """Whether an element of any leaf is true."""
        return self._reduce(lambda x: np.any(x) if _is_scalar(x) else la.any(x),
                            la.logical_or, a)

    def all(self, a: Any, /) -> Any:
        """Whether every element of every leaf is true."""
        return self._reduce(lambda x: np.all(x) if _is_scalar(x) else la.all(x),
                            la.logical_and, a)

    def array_equal(self, a: Any, b: Any, /) -> Any:
        """Whether *a* and *b* have one structure, shapes and values (a 0-d
        bool array)."""
        with self._on_queue():
            return self._equal(a, b, la.asarray(np.False_), la.asarray(np.True_))

    def _equal(self, x: Any, y: Any, false: Any, true: Any) -> Any:
        """:meth:`array_equal` of *x* and *y* (*false*, *true*: its answers)."""
        if type(x) is not type(y):
            return false
        xs, ys = self._walker.split(x), self._walker.split(y)
        if xs is None or ys is None:
            if xs is not None or ys is not None:
                return false
            if np.shape(x) != np.shape(y) if _is_scalar(x) else x.shape != y.shape:
                return false
            return la.all(la.equal(x, y))
        if [k for k, _ in xs] != [k for k, _ in ys]:
            return false
        return functools.reduce(
            la.logical_and, [self._equal(u, v, false, true) for (_, u), (_, v) in zip(xs, ys)],
            true)

    # }}}


def reshape(x: Any, shape: Any, order: str = "C") -> LazyArray:
    """*x* reshaped in C or Fortran (*order* "F") element order."""
    if _is_scalar(x):
        raise ValueError("reshape is not meaningful for scalars")
    if order in ("C", "A", "K"):
        return la.reshape(x, shape)
    if order != "F":
        raise ValueError(f"order must be 'C' or 'F' (got {order!r})")
    # Fortran order: C order of the reversed axes
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        size = int(np.prod(x.shape, dtype=np.int64))
        shape = tuple((size // known if known else 0) if s == -1 else s for s in shape)
    return la.transpose(la.reshape(la.transpose(x), shape[::-1]))


class StandaloneLinalg:
    """``linalg`` of :class:`StandaloneNamespace`: norms of arrays and
    containers (2, inf, -inf or p over every leaf)."""

    def __init__(self, namespace: StandaloneNamespace):
        self._np = namespace

    def norm(self, ary: Any, ord: Any = None) -> Any:
        """The norm of all of *ary*'s elements, as one vector."""
        walker = self._np._walker
        leaves, _ = walker.flatten(ary)
        flat = [la.ravel(x) if not _is_scalar(x) else la.asarray(x).reshape(1)
                for x in leaves]
        with self._np._on_queue():
            joined: Any = la.concatenate(flat) if len(flat) > 1 else flat[0]
            v: Any = abs(joined)
            if ord is None or ord == 2:
                return la.sqrt(la.sum(v * v))
            if ord == np.inf:
                return la.max(v)
            if ord == -np.inf:
                return la.min(v)
            return la.sum(v ** ord) ** (1 / ord)


class StandaloneNamespace(LazyNumpyFunctions):
    """The namespace over tuples, lists, dicts and object arrays (no
    arraycontext needed), computing on *queue* (None: lazyarray's)."""

    def __init__(self, queue: cl.CommandQueue | None = None, walker: Walker | None = None):
        self._queue = queue
        self._walker = walker or PlainWalker()
        self.linalg = StandaloneLinalg(self)


__all__ = ["LazyNumpyFunctions", "StandaloneNamespace", "StandaloneLinalg", "ELEMENTWISE",
           "reshape"]
