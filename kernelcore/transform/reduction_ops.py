"""The operations of reductions: their neutral elements, one step of folding
a value in, the joining of partial results, and user-registered reductions.

Public names: register_reduction, reduction_identity, combine_value,
merge_partials, arg_better, lane_index.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.expr import REDUCTION_OPS, USER_REDUCTIONS, substitute
from kernelcore.parse import parse_expression


def register_reduction(name: str, identity: Callable[..., Any] | complex | np.generic,
                       combine: str | Callable[[Any, Any], Any],
                       merge: str | Callable[[Any, Any], Any] | None = None) -> None:
    """Make ``name(iname, expr)`` a reduction in the instruction language.

    *identity* is the neutral value, or a function of the dtype returning it;
    *combine* folds the next value ``b`` into the accumulated ``a``; *merge*
    joins two partial results (needed when the reduction runs over ``l.N`` or
    ``g.N`` inames; e.g. ``combine="a + b*b"``, ``merge="a + b"``). Both are
    expression strings in ``a`` and ``b``, or functions of two expressions."""
    if name in REDUCTION_OPS:
        raise KernelcoreError(f"'{name}' is a built-in reduction")
    identity_fn = identity if callable(identity) else (lambda dtype, v=identity: v)
    USER_REDUCTIONS[name] = (identity_fn, _binary(combine),
                             None if merge is None else _binary(merge))


def _binary(spec):
    if not isinstance(spec, str):
        return spec
    template = parse_expression(spec)
    return lambda a, b: substitute(template, {"a": a, "b": b})


def merge_partials(op: str, left: Any, right: Any) -> Any:
    """Join two partial results of reduction *op*."""
    if op in USER_REDUCTIONS:
        merge = USER_REDUCTIONS[op][2]
        if merge is None:
            raise KernelcoreError(f"reduction '{op}' runs in parallel here but was "
                                  "registered without merge=")
        return merge(left, right)
    return combine_value(op, left, right)


def reduction_identity(op: str, dtype: np.dtype) -> np.integer | np.inexact | np.bool_:
    """The neutral element of *op* for *dtype* (max: -inf or the smallest integer)."""
    if op in USER_REDUCTIONS:
        return dtype.type(USER_REDUCTIONS[op][0](dtype))
    if op in ("any", "all"):
        return np.bool_(op == "all")
    if op == "sum":
        return dtype.type(0)
    if op == "product":
        return dtype.type(1)
    if op in ("max", "min"):
        if dtype.kind == "f":
            return dtype.type(-np.inf if op == "max" else np.inf)
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return dtype.type(info.min if op == "max" else info.max)
        if dtype.kind == "b":
            return dtype.type(op != "max")
    raise TypeError(f"no identity for reduction '{op}' over {dtype}")


def combine_value(op: str, acc: Any, value: Any) -> Any:
    """*acc* with *value* folded in by reduction *op*."""
    if op == "sum":
        return prim.Sum((acc, value))
    if op in USER_REDUCTIONS:
        return USER_REDUCTIONS[op][1](acc, value)
    if op == "product":
        return prim.Product((acc, value))
    if op == "any":
        return prim.LogicalOr((acc, value))
    if op == "all":
        return prim.LogicalAnd((acc, value))
    return prim.Call(prim.Variable(op), (acc, value))


def arg_better(op: str, dtype: np.dtype, value: Any, best: Any, best_index: Any) -> Any:
    """Whether *value* beats *best* (at *best_index*, -1 for none yet) in an
    arg-reduction by *op*; NaN beats any number (NumPy's first NaN wins)."""
    better = prim.LogicalOr((prim.Comparison(value, ">" if op == "max" else "<", best),
                             prim.Comparison(best_index, "==", -1)))
    if dtype.kind == "f":
        better = prim.LogicalOr((better, prim.LogicalAnd((
            prim.Call(prim.Variable("isnan"), (value,)),
            prim.LogicalNot(prim.Call(prim.Variable("isnan"), (best,)))))))
    return better


def lane_index(axis: int) -> prim.Variable:
    """The work-item index along local *axis*, as generated code names it."""
    return prim.Variable(f"lid({axis})")


__all__ = ["register_reduction", "reduction_identity", "combine_value", "merge_partials",
           "arg_better", "lane_index"]
