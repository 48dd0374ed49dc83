"""Light algebraic tidying of expressions before they are printed.

Public names: simplify.
"""

from __future__ import annotations

from typing import Any

from pymbolic.mapper.constant_folder import ConstantFoldingMapper
from pymbolic.mapper.flattener import FlattenMapper

from kernelcore.ir.expr import TypeCast, get_dependencies


class _Flatten(FlattenMapper):
    def map_type_cast(self, expr):
        return TypeCast(expr.dtype, self.rec(expr.child))


class _Fold(ConstantFoldingMapper):
    def is_constant(self, expr):
        return not get_dependencies(expr)

    def map_type_cast(self, expr):
        return TypeCast(expr.dtype, self.rec(expr.child))


def simplify(expr: Any) -> Any:
    """*expr* with nested sums/products flattened and constants folded."""
    return _Fold()(_Flatten()(expr))
