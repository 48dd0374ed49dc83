"""Light algebraic tidying of expressions before they are printed.

Public names: simplify, recomposed_terms.
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


def _positive(x: Any) -> int | None:
    """*x* as an int where it is a positive integer constant, else None."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool) and x > 0:
        return int(x)
    return None


def _canonical(x: Any) -> Any:
    """*x* with nested floor divisions by positive constants merged
    (``(x // a) // b`` is ``x // (a*b)``)."""
    d = _positive(x.denominator) if isinstance(x, prim.FloorDiv) else None
    if d is None:
        return x
    inner = _canonical(x.numerator)
    e = _positive(inner.denominator) if isinstance(inner, prim.FloorDiv) else None
    if e is not None:
        return prim.FloorDiv(inner.numerator, e * d)
    return prim.FloorDiv(inner, d)


def _scaled(term: Any) -> tuple[int, Any]:
    """``(c, t)`` of a term ``c*t`` (``c`` an integer constant), else ``(1, term)``."""
    if isinstance(term, prim.Product) and len(term.children) == 2:
        a, b = term.children
        if isinstance(b, (int, np.integer)) and not isinstance(b, bool):
            a, b = b, a
        if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
            return int(a), b
    return 1, term


def _recompose_once(terms: list[Any]) -> list[Any] | None:
    """*terms* with one pair ``c*d*(x // d)``, ``c*(x % d)`` replaced by
    ``c*x``, or None where there is none."""
    scaled = [_scaled(t) for t in terms]
    remainders = [(k, c, t, d) for k, (c, t) in enumerate(scaled)
                  if isinstance(t, prim.Remainder) and (d := _positive(t.denominator))]
    if not remainders:
        return None
    wholes = {k: _canonical(t) for k, (_, t) in enumerate(scaled)
              if isinstance(t, prim.FloorDiv)}
    for k, c, t, d in remainders:
        whole = _canonical(prim.FloorDiv(t.numerator, d))
        for j, w in wholes.items():
            if scaled[j][0] == c * d and w == whole:
                x = t.numerator
                rest = [u for i, u in enumerate(terms) if i not in (j, k)]
                return [*rest, x if c == 1 else prim.Product((c, x))]
    return None


def recomposed_terms(terms: list[Any]) -> list[Any]:
    """The terms of an integer sum with each pair ``c*d*(x // d)`` and
    ``c*(x % d)`` (``d > 0`` a constant; floor division and its remainder)
    replaced by ``c*x`` until none is left: the index of a loop joined from
    several (``4*(f // 4) + f % 4``) is the joined loop's own (``f``)."""
    while True:
        fewer = _recompose_once(terms)
        if fewer is None:
            return terms
        terms = fewer
