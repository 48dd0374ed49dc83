"""HostArray: a lazy array of the host tier, whose value is a NumPy buffer
that NumPy computes on at once.

Operations whose arrays are all host arrays run NumPy on their buffers, so
their answers (values, dtypes, warnings, errors) are NumPy's; views are
NumPy views of the same buffer and in-place writes change it, as in NumPy.
Anything else reads the array's :attr:`node`: a device copy of the buffer
(made when first needed, and again after a host write), so every lazyarray
function and ``la.jit`` accept host arrays.

Public names: HostArray.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from sys import getrefcount
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

import lazyarray.host.elision as elision
import lazyarray.run as _run
from lazyarray.errors import DTypeError
from lazyarray.graph import Input, Node
from lazyarray.handle import LazyArray
from lazyarray.host.dispatch import (
    _NO,
    _PLAIN,
    _SCALARS,
    _WRITERS,
    BROADCAST_OPERATIONS,
    CLASSES,
    MUTATION,
    NUMPY_SCALARS,
    OWN_ANSWERS,
    SMALL,
    WIDE,
    _numbers,
    _unwrap,
    broadcasts_large,
    dressed,
    holding,
    host_call,
    host_ready,
    mutated,
    quick_call,
    widened,
    wrap,
)
from lazyarray.host.elision import ELIDE_BYTES
from lazyarray.host.fusion import (
    DEFER_ELEMENTS,
    PENDING,
    Expr,
    expression,
    flush,
    scalar_expression,
    write_into,
)
from lazyarray.host.lean import BY_FUNCTION as LEAN_BY_FUNCTION
from lazyarray.host.lean import METHODS as LEAN_METHODS
from lazyarray.host.policy import _MODES, host_enabled
from lazyarray.tracing import ACTIVE_TRACES


class HostArray(LazyArray):
    """A lazy array whose value lives on the host (``_hv``: a NumPy array, or
    for a 0-d value NumPy gave as a scalar, that NumPy scalar)."""

    __slots__ = ("_hv", "_copy")
    _hv: Any
    #: the device copy of the buffer and the write count it was made at
    _copy: tuple[Node, int] | None

    @classmethod
    def _of(cls, value: np.ndarray) -> HostArray:
        """A host array holding *value* (not copied: the caller gives it up)."""
        handle = object.__new__(cls)
        handle._hv = value
        handle._copy = None
        return handle

    # {{{ the device's view of the value

    @property
    def node(self) -> Node:
        """A graph input holding a device copy of the current value."""
        copy = self._copy
        if copy is not None and copy[1] == MUTATION[0]:
            return copy[0]
        value = self._hv
        if value.dtype.kind not in "biufc" or value.dtype == np.float16:
            raise DTypeError(f"an array of dtype {value.dtype} is computed on the host with "
                             "NumPy only; this operation needs the device, which has no "
                             f"{value.dtype} kernels (convert with .astype first)")
        node = Input(_run.to_device(value), owned=True)
        self._copy = (node, MUTATION[0])
        return node

    @node.setter
    def node(self, node: Node) -> None:
        self._assign(node)

    def _assign(self, node: Node) -> None:
        value = LazyArray(node)._host()
        if PENDING:
            flush()
        self._buffer()[...] = value
        mutated()

    def _buffer(self) -> np.ndarray:
        """The value as a NumPy array that writes change (a 0-d scalar value
        becomes a 0-d array first)."""
        value = self._hv
        if type(value) is not _ndarray:
            value = self._hv = np.array(value)
        return value

    def _settle(self):
        return _run.evaluate(self.node)

    def _layout(self) -> np.ndarray:
        # (the buffer's own strides: a NumPy view's, where lazy views of this
        # array decide what is a view and what memory order is)
        value = self._host()
        return as_strided(np.zeros(1, value.dtype), value.shape, value.strides,
                          writeable=False)

    # }}}

    # {{{ attributes and conversions

    @property
    def shape(self) -> tuple:
        return self._hv.shape

    @shape.setter
    def shape(self, shape: tuple[int, ...]) -> None:
        self._buffer().shape = shape

    # (NumPyMethods declares the attributes it reads as plain attributes)
    @property
    def dtype(self) -> np.dtype:  # type: ignore[override]
        return self._hv.dtype

    @property
    def ndim(self) -> int:  # type: ignore[override]
        return self._hv.ndim

    @property
    def size(self) -> int:  # type: ignore[override]
        return self._hv.size

    @property
    def strides(self) -> tuple:
        return self._hv.strides

    @property  # type: ignore[override]
    def _readonly(self) -> bool:
        """Whether the buffer is read-only (NumPy's read-only views)."""
        value = self._hv
        return type(value) is _ndarray and not value.flags.writeable

    @_readonly.setter
    def _readonly(self, readonly: bool) -> None:
        if readonly:
            self._hv = view = self._buffer().view()
            view.flags.writeable = False

    def __len__(self) -> int:
        return len(self._hv)

    def __iter__(self):
        value = self._hv
        if not value.ndim:
            raise TypeError("iteration over a 0-d array")
        # (elements are NumPy's scalars, as x[i] gives them; rows host arrays)
        if value.ndim == 1:
            return iter(value)
        return map(holding if value.size <= SMALL else wrap, value)

    def _host(self) -> np.ndarray:
        value = self._hv
        return value if type(value) is _ndarray else np.asarray(value)

    def _handed_over(self) -> bool:
        return False                    # (the value is the host's: copied)

    def get(self) -> np.ndarray:
        """The value as a NumPy array (a copy)."""
        self._refuse_value(".get()")
        return np.array(self._hv)

    to_numpy = get

    def compute(self) -> HostArray:
        """Nothing to do: the value is computed."""
        return self

    def block_until_ready(self) -> HostArray:
        """Nothing to wait for: the value is computed."""
        return self

    def __float__(self) -> float:
        return float(self._hv)

    def __int__(self) -> int:
        return int(self._hv)

    def __bool__(self) -> bool:
        return bool(self._hv)

    def __complex__(self) -> complex:
        return complex(self._hv)

    def __index__(self) -> int:
        return self._hv.__index__()

    def item(self, *index: int) -> Any:
        """An element as a Python scalar."""
        return self._hv.item(*index)

    def tolist(self) -> Any:
        """The value as nested Python lists of Python scalars."""
        return self._hv.tolist()

    # }}}

    # {{{ NumPy on the buffer

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if host_ready(inputs, kwargs, method == "at") and not (
                WIDE and method == "__call__" and ufunc.__name__ in BROADCAST_OPERATIONS
                and len(inputs) > 1 and not kwargs and _broadcasts_large(inputs)):
            return host_call(ufunc if method == "__call__" else getattr(ufunc, method),
                             inputs, kwargs)
        return LazyArray.__array_ufunc__(self, ufunc, method, *inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if host_ready(args, kwargs, func.__name__ in _WRITERS):
            return host_call(OWN_ANSWERS.get(func) or LEAN_BY_FUNCTION.get(func, func),
                             args, kwargs)
        return LazyArray.__array_function__(self, func, types, args, kwargs)

    def __getitem__(self, key) -> LazyArray:
        if (_MODES[-1] != "device" and not ACTIVE_TRACES[0]) or host_enabled():
            kind = type(key)
            wide = key is None
            if kind is slice or kind is int:
                plain = key
            elif kind is tuple:
                # (_host_key's test, inline: a tuple of slices is the commonest key)
                plain = key
                for k in key:
                    if k is None:
                        wide = True
                    elif type(k) not in _PLAIN:
                        plain = _host_key(key)
                        break
            else:
                plain = _host_key(key)
            if plain is not _NO:
                value = self._hv[plain]
                if wide and getattr(value, "ndim", 0) > self._hv.ndim:
                    widened(value)      # (new axes: see WIDE)
                kind = type(value)
                if kind in NUMPY_SCALARS:
                    return value    # (an element: NumPy's scalar, as NumPy gives it)
                if kind is _ndarray and value.size <= SMALL:
                    # (holding(value), without the call: slicing is the hottest path)
                    handle = _new(HostArray)
                    handle._hv = value
                    handle._copy = None
                    return handle
                return wrap(value)
        return LazyArray.__getitem__(self, key)

    def __setitem__(self, key, value) -> None:
        if (_MODES[-1] != "device" and not ACTIVE_TRACES[0]) or host_enabled():
            plain = key if type(key) is slice or type(key) is int else _host_key(key)
            kind = type(value)
            if kind is PendingArray:
                # (a temporary expression is computed straight into the part
                # assigned, after the other pending ones: see host.fusion)
                raw = _HV.__get__(value, HostArray)
                if plain is not _NO and type(raw) is Expr \
                        and getrefcount(value) <= elision.ASSIGNED_TEMPORARY:
                    buffer = self._buffer()
                    flush(value)
                    part = buffer[plain]
                    if type(part) is _ndarray and write_into(part, raw):
                        MUTATION[0] += 1
                        return
                value = value._hv
                kind = type(value)
            if kind is HostArray:
                value = value._hv
            elif kind not in _PLAIN:
                if isinstance(value, LazyArray):
                    value = value._host()
                elif not host_ready((value,)):
                    plain = _NO
                else:
                    value = _unwrap(value, [])
            if plain is not _NO:
                buffer = self._hv
                if type(buffer) is not _ndarray:
                    buffer = self._buffer()
                if PENDING:
                    flush()
                buffer[plain] = value
                MUTATION[0] += 1
                return
        LazyArray.__setitem__(self, key, value)

    # }}}


_ndarray = np.ndarray
_new = object.__new__
#: Python's operators deferred on large host arrays, and their operation
_DEFERRED = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
             "pow": "power"}
#: the pending host array's class and maker (set by lazyarray.host.pending)
PendingArray: Any = None
pending_array: Any = None


def _broadcasts_large(inputs: tuple) -> bool:
    """Whether a ufunc's *inputs*, one of them a new-axes view, broadcast to a
    large result (see :func:`broadcasts_large`)."""
    values = tuple(v._hv if type(v) is HostArray else v for v in inputs)
    return any(id(v) in WIDE for v in values) and broadcasts_large(values)


def _host_key(key):
    """*key* with host arrays as their buffers, or _NO if it holds device data."""
    kind = type(key)
    if kind is tuple:
        for k in key:
            if type(k) not in _PLAIN:
                break
        else:
            return key
        return tuple(_unwrap(k, []) for k in key) if host_ready(key) else _NO
    if kind in _PLAIN:
        return key
    if kind is HostArray:
        return key._hv
    return _unwrap(key, []) if host_ready((key,)) else _NO


def _numpy_method(name: str) -> Callable:
    """A function calling the method *name* of a NumPy array or scalar."""
    def call(value, *args, **kwargs):
        return getattr(value, name)(*args, **kwargs)
    call.__name__ = name
    return call


def _method(name: str):
    device = getattr(LazyArray, name)
    numpy_method = _numpy_method(name) if hasattr(np.ndarray, name) else getattr(np, name)
    direct = hasattr(np.ndarray, name) and hasattr(np.generic, name)
    unbound = LEAN_METHODS.get(name) or getattr(np.ndarray, name, None)

    def method(self, *args, **kwargs):
        if (_MODES[-1] != "device" and not ACTIVE_TRACES[0]) or host_enabled():
            if direct and (not args or _numbers(args)) and (
                    not kwargs or _numbers(kwargs.values())):
                # the common call (``u.copy()``, ``x.sum(axis=1, keepdims=True)``,
                # ``x.astype(int)``): the buffer's method
                value = self._hv
                result = (unbound(value, *args, **kwargs) if type(value) is _ndarray
                          else getattr(value, name)(*args, **kwargs))
                if result is value:
                    return self
                kind = type(result)
                if kind in NUMPY_SCALARS or (kind is _ndarray and result.size <= SMALL):
                    # (holding(result), without the call)
                    handle = _new(HostArray)
                    handle._hv = result
                    handle._copy = None
                    return handle
                return wrap(result)
            result = quick_call(numpy_method, (self, *args), kwargs)
            if result is not _NO:
                return result
        if host_ready(args, kwargs):
            return host_call(numpy_method, (self, *args), kwargs)
        return device(self, *args, **kwargs)
    return dressed(method, name, device)


def _writing_method(name: str):
    method = _method(name)

    def writing(self, *args, **kwargs):
        self._buffer()
        if PENDING:
            flush()
        result = method(self, *args, **kwargs)
        mutated()
        return result
    writing.__name__ = writing.__qualname__ = name
    writing.__doc__ = getattr(np.ndarray, name).__doc__
    return writing


def _unary(dunder: str):
    device = getattr(LazyArray, dunder)
    function = getattr(operator, dunder)
    # (the deferred operation of this operator, see host.fusion)
    deferred = {"__neg__": "negative", "__abs__": "absolute"}.get(dunder)

    def unary(self):
        if host_enabled():
            mine = self._hv
            if deferred is not None and type(mine) is _ndarray \
                    and mine.size >= DEFER_ELEMENTS:
                expr = expression(deferred, (mine,))
                if expr is not None:
                    return pending_array(expr)
            return wrap(function(mine))
        return device(self)
    unary.__name__ = unary.__qualname__ = dunder
    return unary


def _binary(dunder: str):
    device = getattr(LazyArray, dunder)
    name = dunder.strip("_")
    reflected = name.startswith("r") and name not in ("rshift",)
    function = getattr(operator, f"__{name[1:] if reflected else name}__")
    # (whether a large broadcast of this operator may go to the device: see
    # BROADCAST_OPERATIONS)
    routed = function.__name__.strip("_") in BROADCAST_OPERATIONS

    def binary(self, other):
        kind = type(other)
        result = None
        if kind is HostArray:
            value = other._hv
            if routed and WIDE and (id(value) in WIDE or id(self._hv) in WIDE) \
                    and broadcasts_large((self._hv, value)):
                return device(self, other)
            if deferred is not None and deferred != "power" and type(value) is _ndarray \
                    and value.size >= DEFER_ELEMENTS:
                mine = self._hv
                expr = expression(deferred, (value, mine) if reflected else (mine, value))
                if expr is not None:
                    return pending_array(expr)
            if commutes and type(value) is _ndarray and value.nbytes >= ELIDE_BYTES \
                    and getrefcount(other) <= elision.OTHER_TEMPORARY \
                    and getrefcount(value) == elision.OWNED and value.base is None \
                    and elision.into_own_buffer(ufunc, value, self._hv, False):
                result = value      # (the other operand is a temporary: see below)
            other = value
        elif kind in _SCALARS and ((_MODES[-1] != "device" and not ACTIVE_TRACES[0])
                                   or host_enabled()):
            if (kind is float or kind is int) and deferred is not None:
                mine = self._hv
                if type(mine) is _ndarray and mine.size >= DEFER_ELEMENTS:
                    expr = scalar_expression(deferred, mine, other, reflected)
                    if expr is not None:
                        return pending_array(expr)
        elif kind is PendingArray:
            raw = _HV.__get__(other, HostArray)
            mine = self._hv
            if deferred is not None and deferred != "power" and type(raw) is Expr:
                expr = expression(deferred, (raw, mine) if reflected else (mine, raw))
                if expr is not None:
                    return pending_array(expr)
            other = other._hv
        elif kind not in _PLAIN and getattr(kind, "__array_ufunc__", False) is None:
            # NumPy's rule: an operand that opts out of ufuncs (arraycontext's
            # containers) gets its own reflected operator, with this array
            return NotImplemented
        elif kind not in _PLAIN and not host_ready((other,)) or not host_enabled():
            return device(self, other)
        elif kind is not _ndarray and kind not in _SCALARS:
            other = _unwrap(other, [])
        elif kind is _ndarray and routed and WIDE \
                and (id(other) in WIDE or id(self._hv) in WIDE) \
                and broadcasts_large((self._hv, other)):
            return device(self, other)
        if result is None:
            mine = self._hv
            if ufunc is not None and type(mine) is _ndarray and mine.nbytes >= ELIDE_BYTES \
                    and getrefcount(self) <= elision.TEMPORARY \
                    and getrefcount(mine) == elision.OWNED and mine.base is None \
                    and elision.into_own_buffer(ufunc, mine, other, reflected):
                # (self is a temporary of the expression: its buffer takes the result)
                result = mine
            else:
                result = function(other, mine) if reflected else function(mine, other)
        kind = type(result)
        if (kind is _ndarray and result.size <= SMALL) or kind in NUMPY_SCALARS:
            handle = _new(HostArray)
            handle._hv = result
            handle._copy = None
            return handle
        return wrap(result)
    ufunc = elision.ELEMENTWISE.get(name[1:] if reflected else name)
    commutes = ufunc in elision.COMMUTING
    # (the deferred operation of this operator, see host.fusion)
    deferred = _DEFERRED.get(name[1:] if reflected else name)
    binary.__name__ = binary.__qualname__ = dunder
    return binary


def _in_place_operator(dunder: str):
    device = getattr(LazyArray, dunder)
    numpy_operator = getattr(np.ndarray, dunder)

    def in_place(self, other):
        if host_enabled():
            if isinstance(other, LazyArray) and not isinstance(other, HostArray):
                other = other._host()
            if host_ready((other,)):
                if PENDING:
                    flush()
                numpy_operator(self._buffer(),
                               other._hv if isinstance(other, HostArray) else other)
                mutated()
                return self
        return device(self, other)
    in_place.__name__ = in_place.__qualname__ = dunder
    return in_place


#: methods that read the array (and return new arrays or values)
_READING = ["all", "any", "argmax", "argmin", "argsort", "astype", "choose", "clip",
            "compress", "conj", "conjugate", "cumprod", "cumsum", "diagonal", "dot",
            "flatten", "max", "mean", "min", "nonzero", "prod", "ptp", "repeat", "round",
            "searchsorted", "std", "sum", "take", "trace", "var"]
#: NumPy's binary operators (the reflected and in-place ones follow the names)
_BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
           "lshift", "rshift", "matmul"]

for _name in [*_READING, "copy", "ravel", "reshape", "squeeze", "swapaxes", "tobytes",
              "transpose", "view", "__abs__", "__neg__", "__pos__", "__invert__"]:
    setattr(HostArray, _name, _method(_name) if not _name.startswith("__")
            else _unary(_name))


def _copy_method():
    """``x.copy()`` (the commonest method of a time step, ``un = u.copy()``)
    without the argument packing of the other methods' dispatch."""
    general = _method("copy")

    def copy(self, order="C"):
        if order == "C" and ((_MODES[-1] != "device" and not ACTIVE_TRACES[0])
                             or host_enabled()):
            result = self._hv.copy()
            kind = type(result)
            if (kind is _ndarray and result.size <= SMALL) or kind in NUMPY_SCALARS:
                handle = _new(HostArray)
                handle._hv = result
                handle._copy = None
                return handle
            return wrap(result)
        return general(self) if order == "C" else general(self, order=order)
    return dressed(copy, "copy", LazyArray.copy)


HostArray.copy = _copy_method()  # type: ignore[method-assign]
for _name in ["fill", "sort"]:
    setattr(HostArray, _name, _writing_method(_name))
for _op in _BINARY:
    setattr(HostArray, f"__{_op}__", _binary(f"__{_op}__"))
    setattr(HostArray, f"__r{_op}__", _binary(f"__r{_op}__"))
    setattr(HostArray, f"__i{_op}__", _in_place_operator(f"__i{_op}__"))
for _op in ["lt", "le", "gt", "ge", "eq", "ne"]:
    setattr(HostArray, f"__{_op}__", _binary(f"__{_op}__"))
def _set_part(attribute: str) -> Callable:
    """The setter of ``x.real`` / ``x.imag``: NumPy's, on the buffer."""
    def set_part(self, value) -> None:
        if PENDING:
            flush()
        setattr(self._buffer(), attribute, value._host() if isinstance(value, LazyArray)
                else value)
        mutated()
    return set_part


for _name in ["T", "mT", "real", "imag"]:
    setattr(HostArray, _name, property(
        (lambda attribute: lambda self: wrap(getattr(self._hv, attribute)))(_name),
        _set_part(_name) if _name in ("real", "imag") else None))
HostArray.__hash__ = LazyArray.__hash__  # type: ignore[method-assign]
#: the slot of the host value (PendingArray reads it under a property)
_HV = HostArray.__dict__["_hv"]
CLASSES[:] = [LazyArray, HostArray]
