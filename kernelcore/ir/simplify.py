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


def _int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool) and x > 0


def _canonical(x: Any) -> Any:
    """*x* with nested floor divisions by positive constants merged
    (``(x // a) // b`` is ``x // (a*b)``)."""
    if isinstance(x, prim.FloorDiv) and _int(x.denominator):
        inner = _canonical(x.numerator)
        if isinstance(inner, prim.FloorDiv) and _int(inner.denominator):
            return prim.FloorDiv(inner.numerator, int(inner.denominator) * int(x.denominator))
        return prim.FloorDiv(inner, int(x.denominator))
    return x


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
    wholes = {k: _canonical(t) for k, (_, t) in enumerate(scaled)
              if isinstance(t, prim.FloorDiv)}
    for k, (c, t) in enumerate(scaled):
        if not (isinstance(t, prim.Remainder) and _int(t.denominator)):
            continue
        d = int(t.denominator)
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
