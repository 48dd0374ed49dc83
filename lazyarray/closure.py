"""The arrays a function reads from outside its arguments (its closure
cells and its module's globals), so that ``la.jit`` sees when one was
written or rebound after a trace that holds its value.

Public names: closed_over, changed, outside_values, restore.
"""

from __future__ import annotations

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
    if type(value) is HostArray:
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


__all__ = ["closed_over", "changed", "outside_values", "restore"]
