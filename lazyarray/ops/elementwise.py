"""Elementwise operations: the table of supported ufuncs and graph building.

Each entry maps a NumPy ufunc name to its spelling in kernelcore's
instruction language; result dtypes are NumPy's own (computed by applying the
ufunc to empty arrays), and Python scalars stay weak as in NumPy 2.

Public names: ELEMENTWISE, elementwise, broadcast_shapes.
"""

from __future__ import annotations

import numpy as np

from lazyarray.errors import DTypeError, ShapeError
from lazyarray.graph import Const, Map, Node

#: ufunc name -> instruction-language template over operands {0}, {1}, ...
ELEMENTWISE: dict[str, str] = {
    "add": "({0} + {1})", "subtract": "({0} - {1})", "multiply": "({0} * {1})",
    "true_divide": "({0} / {1})", "divide": "({0} / {1})",
    "floor_divide": "({0} // {1})", "remainder": "({0} % {1})", "mod": "({0} % {1})",
    "power": "({0} ** {1})", "negative": "(-{0})", "positive": "({0})",
    "absolute": "abs({0})", "sqrt": "sqrt({0})", "exp": "exp({0})", "log": "log({0})",
    "log2": "log2({0})", "log10": "log10({0})", "expm1": "expm1({0})",
    "log1p": "log1p({0})", "sin": "sin({0})", "cos": "cos({0})", "tan": "tan({0})",
    "arcsin": "asin({0})", "arccos": "acos({0})", "arctan": "atan({0})",
    "sinh": "sinh({0})", "cosh": "cosh({0})", "tanh": "tanh({0})",
    "arctan2": "atan2({0}, {1})", "hypot": "hypot({0}, {1})", "cbrt": "cbrt({0})",
    "floor": "floor({0})", "ceil": "ceil({0})", "trunc": "trunc({0})", "rint": "rint({0})",
    "maximum": "max({0}, {1})", "minimum": "min({0}, {1})",
    "fmax": "fmax({0}, {1})", "fmin": "fmin({0}, {1})",
    "less": "({0} < {1})", "less_equal": "({0} <= {1})", "greater": "({0} > {1})",
    "greater_equal": "({0} >= {1})", "equal": "({0} == {1})",
    "not_equal": "({0} != {1})", "logical_and": "({0} and {1})",
    "logical_or": "({0} or {1})", "logical_not": "(not {0})",
    "isnan": "isnan({0})", "isinf": "isinf({0})", "isfinite": "isfinite({0})",
    "where": "if({0}, {1}, {2})",
}


def broadcast_shapes(*shapes: tuple) -> tuple:
    """NumPy's broadcast of *shapes* (a ShapeError naming them if impossible)."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ShapeError("operands could not be broadcast together with shapes "
                         + " ".join(str(tuple(s)) for s in shapes)) from None


def _probe(x):
    """A stand-in with NumPy's typing behaviour: empty arrays, or Python scalars."""
    if isinstance(x, Const):
        return x.value.item() if x.weak else x.value
    return np.empty(0, x.dtype)


def elementwise(name: str, *args: Node) -> Node:
    """The graph node of ufunc *name* applied to *args* (nodes)."""
    if name not in ELEMENTWISE:
        raise DTypeError(f"ufunc '{name}' is not supported by lazyarray")
    shape = broadcast_shapes(*(a.shape for a in args))
    if name == "where":
        dtype = np.result_type(*(_probe(a) for a in args[1:]))
    else:
        try:
            with np.errstate(all="ignore"):
                dtype = getattr(np, name)(*(_probe(a) for a in args)).dtype
        except TypeError as e:
            raise DTypeError(f"{name} is not defined for dtypes "
                             f"{', '.join(str(a.dtype) for a in args)}: {e}") from None
    if dtype.kind == "c" and name not in ("add", "subtract", "multiply", "true_divide",
                                         "divide", "negative", "positive", "exp", "log",
                                         "sqrt", "sin", "cos", "equal", "not_equal"):
        raise DTypeError(f"{name} on complex values is not supported yet")
    return Map(name, args, shape, dtype)
