"""NumPy's ufuncs (and their Array API spellings) and where, on lazy arrays."""

from __future__ import annotations

import builtins as _builtins

import numpy as _np

from lazyarray.handle import LazyArray, asarray
from lazyarray.ops.elementwise import UFUNCS as _UFUNCS


def _ufunc_function(name, public_name=None):
    ufunc = getattr(_np, name)

    def f(*args):
        if len(args) != ufunc.nin:
            raise TypeError(f"{public_name or name}() takes {ufunc.nin} positional "
                            f"argument(s) but {len(args)} were given")
        if not _builtins.any(isinstance(a, LazyArray) for a in args):
            args = (asarray(args[0]),) + args[1:]
        return ufunc(*args)
    f.__name__ = public_name or name
    f.__doc__ = f"NumPy's {name}, lazily."
    return f


for _name in sorted(_UFUNCS):
    if hasattr(_np, _name):
        globals()[_name] = _ufunc_function(_name)

#: Array API (and NumPy alias) spellings of the ufuncs
_UFUNC_ALIASES = {
    "abs": "absolute", "acos": "arccos", "acosh": "arccosh", "asin": "arcsin",
    "asinh": "arcsinh", "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh",
    "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
    "bitwise_invert": "invert", "bitwise_not": "invert", "conj": "conjugate",
    "pow": "power"}
for _alias, _name in _UFUNC_ALIASES.items():
    globals()[_alias] = _ufunc_function(_name, _alias)


def where(condition, x, y) -> LazyArray:
    """Elements of *x* where *condition* holds, else of *y* (NumPy's where)."""
    from lazyarray.handle import _node
    from lazyarray.ops.elementwise import elementwise
    return LazyArray(elementwise("where", _node(condition), _node(x), _node(y)))


__all__ = ["where", *(n for n in sorted(_UFUNCS) if hasattr(_np, n)), *_UFUNC_ALIASES]
