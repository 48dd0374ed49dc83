"""Light algebraic tidying of expressions before they are printed.

Public names: simplify.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pymbolic.primitives as prim
from pymbolic.mapper.constant_folder import ConstantFoldingMapper
from pymbolic.mapper.flattener import FlattenMapper

from kernelcore.ir.expr import KnownVariables, TypeCast


class _Flatten(FlattenMapper):
    def map_type_cast(self, expr):
        return TypeCast(expr.dtype, self.rec(expr.child))


class _Fold(ConstantFoldingMapper):
    def __init__(self) -> None:
        super().__init__()
        self._variables = KnownVariables()

    def is_constant(self, expr):
        return not self._variables(expr)

    def map_type_cast(self, expr):
        return TypeCast(expr.dtype, self.rec(expr.child))


def simplify(expr: Any) -> Any:
    """*expr* with nested sums/products flattened and constants folded."""
    if isinstance(expr, (prim.Variable, int, float, complex, np.generic)):
        return expr         # (a name or a number: nothing to flatten or fold)
    return _Fold()(_Flatten()(expr))
