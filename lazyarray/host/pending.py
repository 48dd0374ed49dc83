"""PendingArray: a host array whose value is deferred arithmetic
(:mod:`lazyarray.host.fusion`), computed when it is first read.

Its operators with large host arrays, other pending arrays and Python
numbers make larger expressions; anything else reads its value (computing
it once, after which it is an ordinary :class:`HostArray`). Its shape,
dtype, size and dimensions are known without computing it.

Public names: PendingArray, pending_array, deferred_call.
"""

from __future__ import annotations

import math
from typing import Any

import lazyarray.host.array as _array
import lazyarray.host.dispatch as _dispatch
from lazyarray.host.array import HostArray
from lazyarray.host.fusion import UFUNCS, Expr, expression, materialize, note_pending

_SLOT = HostArray.__dict__["_hv"]
_get, _set = _SLOT.__get__, _SLOT.__set__


class PendingArray(HostArray):
    """A host array whose ``_hv`` slot holds an :class:`Expr` until it is read."""

    __slots__ = ()

    @property  # type: ignore[override]
    def _hv(self) -> Any:
        raw = _get(self, HostArray)
        if type(raw) is Expr:
            raw = materialize(raw)
            _set(self, raw)
            self.__class__ = HostArray  # type: ignore[assignment]
        return raw

    @_hv.setter
    def _hv(self, value: Any) -> None:
        _set(self, value)

    @property
    def shape(self) -> tuple:
        return _get(self, HostArray).shape

    @shape.setter
    def shape(self, shape: tuple[int, ...]) -> None:
        HostArray.shape.fset(self, shape)  # type: ignore[attr-defined]

    @property
    def dtype(self) -> Any:
        return _get(self, HostArray).dtype

    @property
    def ndim(self) -> int:
        return len(_get(self, HostArray).shape)

    @property
    def size(self) -> int:
        return math.prod(_get(self, HostArray).shape)

    def __len__(self) -> int:
        shape = _get(self, HostArray).shape
        if not shape:
            raise TypeError("len() of unsized object")
        return shape[0]


def pending_array(expr: Expr) -> PendingArray:
    """A pending host array of *expr*."""
    handle = object.__new__(PendingArray)
    _set(handle, expr)
    handle._copy = None
    note_pending(handle)
    return handle


#: Python's operators of two operands deferred, and the operation of each
#: (``**`` is deferred as a square only: see _power)
_OPERATORS = {name: op for name, op in _array._DEFERRED.items() if name != "pow"}


def _operand(other: Any) -> Any:
    """What an expression reads of *other*: a host array's buffer or
    expression, a Python number; None for anything else."""
    kind = type(other)
    if kind is HostArray or kind is PendingArray:
        return _get(other, HostArray)
    return other if kind is float or kind is int else None


def _binary(dunder: str):
    host = getattr(HostArray, dunder)
    name = dunder.strip("_")
    reflected = name not in _OPERATORS
    op = _OPERATORS[name[1:] if reflected else name]

    def binary(self, other):
        mine = _get(self, HostArray)
        value = _operand(other)
        if value is not None and type(mine) is Expr:
            expr = expression(op, (value, mine) if reflected else (mine, value))
            if expr is not None:
                return pending_array(expr)
        return host(self, other)
    binary.__name__ = binary.__qualname__ = dunder
    return binary


def _power(self, other):
    mine = _get(self, HostArray)
    if type(other) in (int, float) and other == 2 and type(mine) is Expr:
        expr = expression("square", (mine,))
        if expr is not None:
            return pending_array(expr)
    return HostArray.__pow__(self, other)


def _unary(dunder: str, op: str):
    host = getattr(HostArray, dunder)

    def unary(self):
        mine = _get(self, HostArray)
        expr = expression(op, (mine,)) if type(mine) is Expr else None
        return host(self) if expr is None else pending_array(expr)
    unary.__name__ = unary.__qualname__ = dunder
    return unary


#: NumPy's ufuncs deferred where called on large host arrays, and their operations
_UFUNC_OPERATIONS = {ufunc: name for name, ufunc in UFUNCS.items()}


def deferred_call(ufunc: Any, args: tuple) -> PendingArray | None:
    """``ufunc(*args)`` (positional arguments only) deferred, where *ufunc*
    is one of :data:`~lazyarray.host.fusion.UFUNCS` and its operands are
    large host arrays, pending arrays and Python numbers of one shape and
    float dtype; else None."""
    op = _UFUNC_OPERATIONS.get(ufunc)
    if op is None or len(args) != ufunc.nin:
        return None
    operands = []
    for a in args:
        value = _operand(a)
        if value is None:
            return None
        operands.append(value)
    expr = expression(op, tuple(operands))
    return None if expr is None else pending_array(expr)


for _name in _OPERATORS:
    for _dunder in (f"__{_name}__", f"__r{_name}__"):
        setattr(PendingArray, _dunder, _binary(_dunder))
PendingArray.__pow__ = _power  # type: ignore[method-assign,assignment]
PendingArray.__neg__ = _unary("__neg__", "negative")  # type: ignore[method-assign]
PendingArray.__abs__ = _unary("__abs__", "absolute")  # type: ignore[method-assign]
_dispatch.DEFERRED_CALL.append(deferred_call)
_array.PendingArray = PendingArray
_array.pending_array = pending_array

__all__ = ["PendingArray", "deferred_call", "pending_array"]
