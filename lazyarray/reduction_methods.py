"""The reduction methods of lazy arrays (``x.sum()``, ``x.mean()``,
``x.argmax()``, ...), with NumPy's arguments (``out=``, ``initial=`` and
``where=`` too: :mod:`lazyarray.reduction_keywords`).

Public names: ReductionMethods, ddof_of.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lazyarray.ops import reductions
from lazyarray.ops.construct import full
from lazyarray.ops.elementwise import elementwise
from lazyarray.reduction_keywords import (
    NO_VALUE,
    extreme,
    filled,
    given,
    into,
    mask_of,
    masked_mean,
    masked_var,
    with_initial,
)

if TYPE_CHECKING:
    from lazyarray.graph import Node


def ddof_of(ddof: Any, correction: Any) -> Any:
    """The degrees-of-freedom correction from NumPy's *ddof* or the Array
    API's *correction* (at most one of them given)."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction cannot both be given")
    return correction


class ReductionMethods:
    """Reductions and scans along an axis, as ndarray's methods."""

    if TYPE_CHECKING:
        # what LazyArray, the class built on these methods, provides them
        node: Node

        def __init__(self, node: Node) -> None: ...

    def _summed(self, op, axis, dtype, out, keepdims, initial, where):
        """The sum or product (*op*) with NumPy's keywords."""
        mask = mask_of(self, where)
        x = self if mask is None else filled(self, mask, 0 if op == "sum" else 1)
        result = type(self)(reductions.reduce(op, x.node, axis, keepdims, dtype))
        return into(with_initial(result, op, initial), out)

    def sum(self, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, initial: Any = NO_VALUE, where: Any = True) -> Any:
        """The sum along *axis*, from *initial*, of the elements *where* selects."""
        return self._summed("sum", axis, dtype, out, keepdims, initial, where)

    def prod(self, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
             keepdims: bool = False, initial: Any = NO_VALUE, where: Any = True) -> Any:
        """The product along *axis*, from *initial*, of the elements *where* selects."""
        return self._summed("product", axis, dtype, out, keepdims, initial, where)

    def max(self, axis: int | tuple[int, ...] | None = None, out: Any = None,
            keepdims: bool = False, initial: Any = NO_VALUE, where: Any = True) -> Any:
        """The largest values along *axis* (no smaller than *initial*; *where*
        needs *initial*)."""
        return into(extreme(self, "max", axis, keepdims, initial, where), out)

    def min(self, axis: int | tuple[int, ...] | None = None, out: Any = None,
            keepdims: bool = False, initial: Any = NO_VALUE, where: Any = True) -> Any:
        """The smallest values along *axis* (no larger than *initial*; *where*
        needs *initial*)."""
        return into(extreme(self, "min", axis, keepdims, initial, where), out)

    def any(self, axis: int | tuple[int, ...] | None = None, out: Any = None,
            keepdims: bool = False, *, where: Any = True) -> Any:
        """Whether any element along *axis* (that *where* selects) is true."""
        return into(self._logical_reduction("any", axis, keepdims, where), out)

    def all(self, axis: int | tuple[int, ...] | None = None, out: Any = None,
            keepdims: bool = False, *, where: Any = True) -> Any:
        """Whether all elements along *axis* (that *where* selects) are true."""
        return into(self._logical_reduction("all", axis, keepdims, where), out)

    def _logical_reduction(self, op, axis, keepdims, where):
        mask = mask_of(self, where)
        x = self if mask is None else filled(self, mask, op == "all")
        node = reductions.reduce(op, x.node, axis, keepdims)
        if self.size == 0:
            # nothing to reduce: the identity, as a constant
            return type(self)(full(node.shape, op == "all", np.bool_))
        return type(self)(node)

    def mean(self, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
             keepdims: bool = False, *, where: Any = True) -> Any:
        """The mean along *axis* of the elements *where* selects."""
        mask = mask_of(self, where)
        if mask is not None:
            return into(masked_mean(self, mask, axis, keepdims, dtype), out)
        return into(type(self)(reductions.mean(self.node, axis, keepdims, dtype)), out)

    def var(self, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
            ddof: float = 0, keepdims: bool = False, *, where: Any = True, mean: Any = NO_VALUE,
            correction: float | None = None) -> Any:
        """Variance of the elements *where* selects; *correction* is the Array
        API's (and NumPy 2's) name of *ddof*."""
        if given(mean):
            raise TypeError("lazyarray's var and std do not take mean=")
        ddof = ddof_of(ddof, correction)
        mask = mask_of(self, where)
        if mask is not None:
            return into(masked_var(self, mask, axis, keepdims, dtype, ddof), out)
        return into(type(self)(reductions.var(self.node, axis, keepdims, dtype, ddof)), out)

    def std(self, axis: int | tuple[int, ...] | None = None, dtype: Any = None, out: Any = None,
            ddof: float = 0, keepdims: bool = False, *, where: Any = True, mean: Any = NO_VALUE,
            correction: float | None = None) -> Any:
        """Standard deviation (see :meth:`var`)."""
        var = self.var(axis, dtype, None, ddof, keepdims, where=where, mean=mean,
                       correction=correction)
        return into(type(self)(elementwise("sqrt", var.node)), out)

    def cumsum(self, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
        """Running sums along *axis* (the flattened array by default)."""
        return into(type(self)(reductions.scan("sum", self.node, axis, dtype)), out)

    def cumprod(self, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
        """Running products along *axis* (the flattened array by default)."""
        return into(type(self)(reductions.scan("product", self.node, axis, dtype)), out)

    def argmax(self, axis: int | None = None, out: Any = None, *, keepdims: bool = False) -> Any:
        """Indices of the largest values along *axis*."""
        return into(type(self)(reductions.argreduce("argmax", self.node, axis, keepdims)), out)

    def argmin(self, axis: int | None = None, out: Any = None, *, keepdims: bool = False) -> Any:
        """Indices of the smallest values along *axis*."""
        return into(type(self)(reductions.argreduce("argmin", self.node, axis, keepdims)), out)
