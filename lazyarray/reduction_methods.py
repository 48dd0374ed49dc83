"""The reduction methods of lazy arrays (``x.sum()``, ``x.mean()``,
``x.argmax()``, ...), with NumPy's arguments.

Public names: ReductionMethods, ddof_of.
"""

from __future__ import annotations

import numpy as np

from lazyarray.ops import reductions
from lazyarray.ops.elementwise import elementwise


def ddof_of(ddof, correction):
    """The degrees-of-freedom correction from NumPy's *ddof* or the Array
    API's *correction* (at most one of them given)."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction cannot both be given")
    return correction


class ReductionMethods:
    """Reductions and scans along an axis, as ndarray's methods."""

    def sum(self, axis=None, keepdims=False, dtype=None):
        """The sum along *axis*."""
        return type(self)(reductions.reduce("sum", self.node, axis, keepdims, dtype))

    def prod(self, axis=None, keepdims=False, dtype=None):
        """The product along *axis*."""
        return type(self)(reductions.reduce("product", self.node, axis, keepdims, dtype))

    def max(self, axis=None, keepdims=False):
        """The largest values along *axis*."""
        return type(self)(reductions.reduce("max", self.node, axis, keepdims))

    def min(self, axis=None, keepdims=False):
        """The smallest values along *axis*."""
        return type(self)(reductions.reduce("min", self.node, axis, keepdims))

    def any(self, axis=None, keepdims=False):
        """Whether any element along *axis* is true."""
        return self._logical_reduction("any", axis, keepdims)

    def all(self, axis=None, keepdims=False):
        """Whether all elements along *axis* are true."""
        return self._logical_reduction("all", axis, keepdims)

    def _logical_reduction(self, op, axis, keepdims):
        node = reductions.reduce(op, self.node, axis, keepdims)
        if self.size == 0:
            # nothing to reduce: the identity, as a constant
            from lazyarray.ops.construct import full
            return type(self)(full(node.shape, op == "all", np.bool_))
        return type(self)(node)

    def mean(self, axis=None, keepdims=False, dtype=None):
        """The mean along *axis*."""
        return type(self)(reductions.mean(self.node, axis, keepdims, dtype))

    def var(self, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
        """Variance; *correction* is the Array API's (and NumPy 2's) name of *ddof*."""
        return type(self)(reductions.var(self.node, axis, keepdims, dtype,
                                         ddof_of(ddof, correction)))

    def std(self, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
        """Standard deviation (see :meth:`var`)."""
        return type(self)(elementwise("sqrt", reductions.var(
            self.node, axis, keepdims, dtype, ddof_of(ddof, correction))))

    def cumsum(self, axis=None, dtype=None):
        """Running sums along *axis* (the flattened array by default)."""
        return type(self)(reductions.scan("sum", self.node, axis, dtype))

    def cumprod(self, axis=None, dtype=None):
        """Running products along *axis* (the flattened array by default)."""
        return type(self)(reductions.scan("product", self.node, axis, dtype))

    def argmax(self, axis=None, keepdims=False):
        """Indices of the largest values along *axis*."""
        return type(self)(reductions.argreduce("argmax", self.node, axis, keepdims))

    def argmin(self, axis=None, keepdims=False):
        """Indices of the smallest values along *axis*."""
        return type(self)(reductions.argreduce("argmin", self.node, axis, keepdims))
