"""The arrays a function reads from outside its arguments (its closure
cells and its module's globals), so that ``la.jit`` sees when one was
written or rebound after a trace that holds its value.

Public names: closed_over, changed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazyarray.handle import LazyArray


def closed_over(fn: Any) -> tuple:
    """The arrays *fn* reads from its closure cells and its module's globals
    by name: ``(holder, key, array, node)`` (a cell or the globals dict, the
    name there, the array, a lazy array's current node)."""
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
            found.append((holder, key, value, value.node if isinstance(value, LazyArray)
                          else None))
    return tuple(found)


def changed(closure: tuple) -> bool:
    """Whether an array of :func:`closed_over` was rebound or written (a
    lazy array's; a NumPy array's writes are not seen)."""
    for holder, key, value, node in closure:
        try:
            now = holder.cell_contents if key is None else holder.get(key)
        except ValueError:
            return True
        if now is not value or (node is not None and value.node is not node):
            return True
    return False


__all__ = ["closed_over", "changed"]
