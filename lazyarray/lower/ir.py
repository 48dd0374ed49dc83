"""Building kernelcore's intermediate representation: statements and
integer-set domains, made as objects (nothing is printed and parsed); the
index expressions they use are :mod:`lazyarray.plan.indexing`'s.

Public names: assignment, barrier, domain, bounds, box, linear, below, sum_of.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import islpy as isl
import numpy as np
import pymbolic.primitives as prim

from kernelcore import ParsedInstruction


def assignment(lhs: prim.Expression, rhs: prim.Expression, dtype: np.dtype | None = None,
               inames: Iterable[str] | None = None, **options: Any) -> ParsedInstruction:
    """The kernelcore statement ``lhs = rhs``: with *dtype*, declaring the
    temporary *lhs*; with *inames*, inside those loops (else the loops of
    the indices it uses); *options*: other :class:`ParsedInstruction`
    fields (``id``, ``depends_on``, ``no_sync_with``)."""
    return ParsedInstruction(
        kind="assign", assignee=lhs, expression=rhs, temp_var_type=dtype,
        explicit_inames=None if inames is None else frozenset(inames),
        source=f"{lhs} = ...", **options)


def barrier(**options: Any) -> ParsedInstruction:
    """A global barrier; *options*: other :class:`ParsedInstruction` fields."""
    return ParsedInstruction(kind="gbarrier", source="... gbarrier", **options)


def domain(inames: list[str], *inequalities: dict) -> isl.BasicSet:
    """The points of *inames* where every inequality holds: a dict of
    coefficients (an iname's, a parameter's, or under ``1`` the constant)
    whose sum is at least 0. Other names than *inames* are parameters
    (outer inames)."""
    params = sorted({n for q in inequalities for n in q if n != 1 and n not in inames})
    space = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=list(inames), params=params)
    points = isl.BasicSet.universe(space)
    for inequality in inequalities:
        points = points.add_constraint(isl.Constraint.ineq_from_names(space, inequality))
    return points


def bounds(iname: str, extent: int) -> list[dict]:
    """The inequalities of ``0 <= iname < extent`` (see :func:`domain`)."""
    return [{iname: 1}, {iname: -1, 1: extent - 1}]


def box(iname: str, extent: int) -> isl.BasicSet:
    """``0 <= iname < extent``."""
    return domain([iname], *bounds(iname, extent))


def linear(expr: prim.Expression | int) -> dict:
    """The coefficients (see :func:`domain`) of affine *expr*: integers,
    variables, sums and products of an integer and a variable."""
    if isinstance(expr, int):
        return {1: expr}
    if isinstance(expr, prim.Variable):
        return {expr.name: 1}
    if isinstance(expr, prim.Product) and len(expr.children) == 2:
        factor, var = expr.children
        return {n: factor * c for n, c in linear(var).items()}
    assert isinstance(expr, prim.Sum), expr
    total: dict = {}
    for child in expr.children:
        for n, c in linear(child).items():
            total[n] = total.get(n, 0) + c
    return total


def below(expr: prim.Expression | int, bound: int) -> dict:
    """``expr < bound`` as an inequality of :func:`domain`."""
    coefficients = {n: -c for n, c in linear(expr).items()}
    coefficients[1] = coefficients.get(1, 0) + bound - 1
    return coefficients


def sum_of(*terms: int | str | tuple[int, str]) -> prim.Expression:
    """The sum of *terms*: integers, iname names, and (factor, iname name) pairs."""
    parts = [prim.Variable(t) if isinstance(t, str) else
             prim.Product((t[0], prim.Variable(t[1]))) if isinstance(t, tuple) else t
             for t in terms]
    return parts[0] if len(parts) == 1 else prim.Sum(tuple(parts))
