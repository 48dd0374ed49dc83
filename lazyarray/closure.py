"""The arrays a function reads from outside its arguments (its closure
cells and its module's globals), so that ``la.jit`` sees when one was
written or rebound after a trace that holds its value; and the values it
reads there as a key, where they are all constants (numbers, strings,
modules, functions reading only such), so that functions made anew from the
same code with equal values may share a trace's host replay.

Public names: closed_over, changed, outside_values, restore, constants_key.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from lazyarray.graph import is_kind
from lazyarray.handle import LazyArray
from lazyarray.host.array import HostArray
from lazyarray.host.dispatch import MUTATION
from lazyarray.values import on_device


def closed_over(fn: Any) -> tuple:
    """The arrays *fn* reads from its closure cells and its module's globals
    by name: ``(holder, key, array, state)`` (a cell or the globals dict, the
    name there, the array, and what :func:`changed` compares: a lazy array's
    current node, a host array's bytes with the host write count)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ()
    places: list = [(cell, None) for cell in (fn.__closure__ or ())]
    places += [(fn.__globals__, name) for name in code.co_names if name in fn.__globals__]
    found = []
    for holder, key in places:
        try:
            value = holder.cell_contents if key is None else holder[key]
        except ValueError:              # (an empty cell)
            continue
        if isinstance(value, (LazyArray, np.ndarray)):
            found.append((holder, key, value, _state(value)))
    return tuple(found)


def _state(value: Any) -> Any:
    if isinstance(value, HostArray):
        # (host writes are counted for all host arrays together: the bytes
        # tell whether this one changed)
        host = value._host()
        return [MUTATION[0], host.shape, host.tobytes()]
    return value.node if isinstance(value, LazyArray) else None


def changed(closure: tuple) -> bool:
    """Whether an array of :func:`closed_over` was rebound or written (a
    lazy or host array's; a NumPy array's writes are not seen)."""
    for holder, key, value, state in closure:
        try:
            now = holder.cell_contents if key is None else holder.get(key)
        except ValueError:
            return True
        if now is not value:
            return True
        if type(state) is list:
            if state[0] != MUTATION[0]:
                host = value._host()
                if host.shape != state[1] or host.tobytes() != state[2]:
                    return True
                state[0] = MUTATION[0]
        elif state is not None and value.node is not state:
            return True
    return False


def outside_values(fn: Any) -> list:
    """``(array, node)`` of the lazy arrays (not views, not host arrays) *fn*
    reads from its closure and globals: what :func:`restore` puts back."""
    return [(v, state) for _, _, v, state in closed_over(fn)
            if type(v) is LazyArray and v._base is None]


def restore(values: list) -> bool:
    """Give the arrays of :func:`outside_values` their nodes back; whether
    one had been written (a trace's write would hold its placeholders), not
    only computed."""
    written = False
    for array, node in values:
        now = array.node
        if now is not node and not (is_kind(now, "input") and on_device(node) is now.data):
            written = True
        array.node = node
    return written


#: the values a key holds by their type and repr (a float's sign of zero counts)
_NUMBERS = (int, float, complex, bool, str, bytes, type(None), np.generic)
#: objects a key holds by identity (they do not change what a trace records)
_BY_IDENTITY = (types.BuiltinFunctionType, np.ufunc, type, np.dtype)
#: the packages whose callables a key holds by identity (NumPy's and
#: lazyarray's functions and ufunc objects)
_LIBRARIES = ("numpy", "lazyarray")
#: how deep functions called from a jitted one (and modules' attributes) are looked into
_DEPTH = 4
_ABSENT = object()


def constants_key(fn: Any) -> tuple | None:
    """What *fn* reads from its closure and module globals (also through
    the functions it reads there), as a hashable key, when all of it is
    constants; else None (it reads arrays, lists, objects...)."""
    return _function_key(fn, 0)


def _function_key(fn: Any, depth: int) -> tuple | None:
    code = getattr(fn, "__code__", None)
    if code is None or depth > _DEPTH or not isinstance(fn, types.FunctionType):
        return None
    names = _names(code)
    items: list = []
    for cell in fn.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:              # (an empty cell)
            items.append(("empty",))
            continue
        key = _value_key(value, depth, names)
        if key is None:
            return None
        items.append(key)
    found = fn.__globals__
    for name in sorted(names):
        if name in found:
            key = _value_key(found[name], depth, names)
            if key is None:
                return None
            items.append((name, key))
    defaults = _value_key((fn.__defaults__ or (), tuple((fn.__kwdefaults__ or {}).items())),
                          depth, names)
    return None if defaults is None else (code, defaults, tuple(items))


def _names(code: types.CodeType) -> set[str]:
    """The global and attribute names *code* and the code objects inside it may read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _value_key(value: Any, depth: int, names: set[str]) -> Any:
    """*value*'s part of a key, or None where it is not a constant; a
    module's part holds the values of its attributes among *names* (the
    names the function reads: ``params.dt``)."""
    if isinstance(value, _NUMBERS):
        return (type(value), repr(value))
    if isinstance(value, _BY_IDENTITY):
        return ("object", value)
    if isinstance(value, types.FunctionType):
        if (getattr(value, "__module__", None) or "").split(".")[0] in _LIBRARIES:
            return ("object", value)
        key = _function_key(value, depth + 1)
        return None if key is None else ("function", key)
    if isinstance(value, types.ModuleType):
        if value.__name__.split(".")[0] in _LIBRARIES:
            return ("object", value)
        if depth > _DEPTH:
            return None
        attributes = vars(value)
        read = []
        for name in sorted(names):
            attribute = attributes.get(name, _ABSENT)
            if attribute is not _ABSENT:
                key = _value_key(attribute, depth + 1, names)
                if key is None:
                    return None
                read.append((name, key))
        return ("module", value, tuple(read))
    if hasattr(value, "tier_trials") and isinstance(getattr(value, "fn", None),
                                                    types.FunctionType):
        key = _function_key(value.fn, depth + 1)        # (a jitted helper: its function)
        return None if key is None else ("jitted", key)
    if callable(value) and type(value).__module__.split(".")[0] in _LIBRARIES:
        return ("object", value)            # (lazyarray's ufunc objects, NumPy's)
    if type(value) is tuple:
        keys = tuple(_value_key(v, depth, names) for v in value)
        return None if any(k is None for k in keys) else ("tuple", keys)
    return None


__all__ = ["changed", "closed_over", "constants_key", "outside_values", "restore"]
