"""Small graphs computed by NumPy on the host, their values then handed to
the device: an array context's one-time work (a mesh's connection tables,
geometric factors, what a compiled operator hoists out of its calls), where
each new kernel costs a build (and on PoCL a compile at its first launch),
tens to hundreds of milliseconds, and NumPy's operation microseconds.

:func:`host_values` computes a graph's values when every node is of a kind
and operation this module knows and every value (computed or read) has at
most a given number of elements; else it does nothing and the caller plans
kernels as before. NumPy computes each operation as NumPy computes it (its
answers are the ones lazyarray's kernels are tested against); an operation
whose NumPy result would differ in dtype from the node's, or which NumPy
refuses (an integer to a negative power), leaves the whole graph to the
device.

Public names: host_values, view_index, HOST_OPERATIONS, REDUCTIONS, ARG_REDUCTIONS.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazyarray.graph import (
    Concat,
    Const,
    Gather,
    Iota,
    Map,
    Node,
    Reduce,
    Reshape,
    Scan,
    View,
    computed,
    walk,
)
from lazyarray.mapper import NodeMapper, is_kind
from lazyarray.values import on_device

logger = logging.getLogger(__name__)


def _nonzero(x: Any) -> Any:
    return np.not_equal(x, 0)


#: elementwise operations (a node's ``op``) and the NumPy function computing each
HOST_OPERATIONS: dict[str, Callable[..., Any]] = {
    name: getattr(np, name) for name in (
        "add", "subtract", "multiply", "true_divide", "divide", "floor_divide", "remainder",
        "mod", "power", "negative", "positive", "absolute", "sqrt", "exp", "log", "log2",
        "log10", "expm1", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
        "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "arctan2", "hypot", "cbrt", "exp2",
        "fabs", "copysign", "floor", "ceil", "trunc", "rint", "maximum", "minimum", "fmax",
        "fmin", "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
        "logical_and", "logical_or", "logical_not", "logical_xor", "isnan", "isinf",
        "isfinite", "signbit", "bitwise_and", "bitwise_or", "bitwise_xor", "invert",
        "square", "conjugate", "deg2rad", "radians", "rad2deg", "degrees", "float_power",
        "fmod", "sign", "heaviside", "logaddexp", "logaddexp2", "where")}
HOST_OPERATIONS.update({
    "_maximum_f": np.maximum, "_maximum_i": np.maximum, "_minimum_f": np.minimum,
    "_minimum_i": np.minimum, "_fmax_f": np.fmax, "_fmin_f": np.fmin,
    "_identity": np.asarray, "_stored": np.asarray,
    "_packed": np.asarray, "_nonzero": _nonzero, "_real": np.real, "_imag": np.imag,
    "_or": np.logical_or, "_and": np.logical_and,
    "_false": lambda x: np.not_equal(x, x), "_true": lambda x: np.equal(x, x),
    "_sign_i": np.sign, "_sign_u": np.sign, "_sign_c": np.sign,
    "_isnan_c": np.isnan, "_isinf_c": np.isinf, "_isfinite_c": np.isfinite,
    "_logical_and_c": np.logical_and, "_logical_or_c": np.logical_or,
    "_logical_not_c": np.logical_not,
    "_floor_divide_i": np.floor_divide, "_floor_divide_u": np.floor_divide,
    "_remainder_i": np.remainder, "_remainder_u": np.remainder,
    "_fmod_i": np.fmod, "_fmod_u": np.fmod,
})
for _bits in (8, 16, 32, 64):
    HOST_OPERATIONS[f"_left_shift{_bits}"] = np.left_shift
    HOST_OPERATIONS[f"_right_shift_i{_bits}"] = np.right_shift
    HOST_OPERATIONS[f"_right_shift_u{_bits}"] = np.right_shift
del _bits

#: reductions (a node's ``op``) and the NumPy function computing each
REDUCTIONS: dict[str, Callable[..., Any]] = {
    "sum": np.sum, "product": np.prod, "max": np.max, "min": np.min, "any": np.any,
    "all": np.all}
ARG_REDUCTIONS: dict[str, Callable[..., Any]] = {"argmax": np.argmax, "argmin": np.argmin}
_SCANS: dict[str, Callable[..., Any]] = {"sum": np.cumsum, "product": np.cumprod}
#: node kinds this module computes (others: external calls, jit parameters)
_KINDS = frozenset(["map", "reduce", "view", "reshape", "concat", "iota", "scan", "gather",
                    "const"])


class _NotHere(Exception):
    """A node this module leaves to the device."""


def host_values(roots: Sequence[Node], limit: int,
                read: Callable[[Any], np.ndarray]) -> list[np.ndarray] | None:
    """The values of *roots* computed with NumPy, or None (nothing done)
    when a node of their graphs is not one :data:`HOST_OPERATIONS` and the
    kinds here compute, or a value of them (computed or not) has more than
    *limit* elements. *read* gives a computed value's device array as a
    NumPy array."""
    order: list[Node] = []
    seen: set[Node] = set()
    for root in roots:
        for node in walk(root, computed):
            if node in seen:
                continue
            seen.add(node)
            if math.prod(node.shape) > limit:
                return None
            if not computed(node) and not _known(node):
                return None
            order.append(node)
    evaluator = _HostEvaluator(read)
    try:
        with np.errstate(all="ignore"):
            for node in order:
                evaluator.values[node] = evaluator.value(node)
    except _NotHere as why:
        logger.debug("small graph left to the device: %s", why)
        return None
    except (ValueError, TypeError, ArithmeticError, IndexError) as error:
        # (NumPy refuses it: the device's kernels compute their own answer)
        logger.debug("small graph left to the device: NumPy says %s", error)
        return None
    return [evaluator.values[r] for r in roots]


def _known(node: Node) -> bool:
    if is_kind(node, "map"):
        return node.op in HOST_OPERATIONS or node.op == "astype"
    if is_kind(node, "reduce"):
        return node.op in REDUCTIONS or node.op in ARG_REDUCTIONS
    if is_kind(node, "scan"):
        return node.op in _SCANS
    return node.kind in _KINDS


class _HostEvaluator(NodeMapper[np.ndarray]):
    """Each node's value from its children's (in *values*, computed before
    it); a computed one's value is read with *read*."""

    def __init__(self, read: Callable[[Any], np.ndarray]):
        self.read = read
        self.values: dict[Node, np.ndarray] = {}

    def value(self, node: Node) -> np.ndarray:
        if not computed(node):
            return self(node)
        value = self.read(node.data if is_kind(node, "input") else on_device(node))
        if value.shape != node.shape or value.dtype != node.dtype:
            raise _NotHere(f"a computed value of {value.shape} {value.dtype} for a node of "
                           f"{node.shape} {node.dtype}")
        return value

    def _operand(self, node: Node) -> Any:
        """*node*'s value as an operand: a weak constant as a Python scalar
        (which takes the type of the arrays it meets, as in NumPy)."""
        if is_kind(node, "const") and node.weak:
            return node.value.item()
        return self.values[node]

    def map_const(self, node: Const) -> np.ndarray:
        return np.asarray(node.value)

    def map_map(self, node: Map) -> np.ndarray:
        operands = [self._operand(a) for a in node.args]
        if node.op == "astype":
            return np.asarray(operands[0]).astype(node.dtype)
        result = np.asarray(HOST_OPERATIONS[node.op](*operands))
        if result.shape != node.shape:
            result = np.broadcast_to(result, node.shape)
        return _checked(node, result)

    def map_reduce(self, node: Reduce) -> np.ndarray:
        arg = self.values[node.arg]
        if node.op in ARG_REDUCTIONS:
            (axis,) = node.axes
            result = ARG_REDUCTIONS[node.op](arg, axis=axis, keepdims=node.keepdims)
        else:
            typed = {"dtype": node.dtype} if node.op in ("sum", "product") else {}
            result = REDUCTIONS[node.op](arg, axis=node.axes, keepdims=node.keepdims, **typed)
        return _checked(node, np.asarray(result))

    def map_view(self, node: View) -> np.ndarray:
        return np.broadcast_to(np.asarray(self.values[node.arg][view_index(node)]), node.shape)

    def map_reshape(self, node: Reshape) -> np.ndarray:
        return self.values[node.arg].reshape(node.shape)

    def map_concat(self, node: Concat) -> np.ndarray:
        return np.concatenate([self.values[a].astype(node.dtype, copy=False)
                               for a in node.args], axis=node.axis)

    def map_iota(self, node: Iota) -> np.ndarray:
        shape = [1] * len(node.shape)
        shape[node.axis] = node.shape[node.axis]
        positions = np.arange(node.shape[node.axis], dtype=np.int64).reshape(shape)
        return np.broadcast_to(positions, node.shape)

    def map_scan(self, node: Scan) -> np.ndarray:
        scan = _SCANS[node.op]
        return _checked(node, scan(self.values[node.arg], axis=node.axis, dtype=node.dtype))

    def map_gather(self, node: Gather) -> np.ndarray:
        # (positions read modulo the axis's extent, as the kernels read them:
        # a write into a computed array picks its old values so)
        return _checked(node, np.take(self.values[node.arg], self.values[node.indices],
                                      axis=node.axis, mode="wrap"))


def view_index(node: View) -> tuple:
    """The index picking the elements of the view *node* from its argument
    by its axis map (see :class:`~lazyarray.graph.View`): each axis of the
    argument indexed by a constant or by positions along one axis of the
    view (arrays with the view's number of axes, so the values picked lie
    along the view's axes; those no axis of the argument follows are
    broadcast afterwards)."""
    ndim = len(node.shape)
    index: list[Any] = []
    for entry in node.axis_map:
        if entry[0] == "const":
            index.append(entry[1])
            continue
        _, k, start, step = entry
        shape = [1] * ndim
        shape[k] = node.shape[k]
        index.append((start + step * np.arange(node.shape[k], dtype=np.int64)).reshape(shape))
    return tuple(index)


def _checked(node: Node, value: np.ndarray) -> np.ndarray:
    """*value*, when NumPy computed it in *node*'s dtype and shape."""
    if value.dtype != node.dtype:
        raise _NotHere(f"NumPy gives {value.dtype} for a {node.kind} node of {node.dtype}")
    if value.shape != node.shape:
        raise _NotHere(f"NumPy gives shape {value.shape} for a {node.kind} node of "
                       f"{node.shape}")
    return value


__all__ = ["ARG_REDUCTIONS", "HOST_OPERATIONS", "REDUCTIONS", "host_values", "view_index"]
