"""isl helpers at loopy's module path (``loopy.isl_helpers``): quasi-polynomials
as expressions and back, and substituting expressions of new parameters for
the parameters of piecewise functions.

Public names: qpolynomial_to_expr, qpolynomial_from_expr, subst_into_pwaff,
subst_into_pwqpolynomial.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from fractions import Fraction
from functools import reduce
from math import lcm
from typing import Any

import islpy as isl
import pymbolic.primitives as prim
from pymbolic import flatten

from kernelcore.diagnostic import ExpressionToAffineConversionError
from kernelcore.ir.domain import aff_to_expr, expr_to_pw_aff
from kernelcore.ir.expr import substitute

dim_type = isl.dim_type


def _fraction(v: isl.Val) -> Fraction:
    return Fraction(int(v.get_num_si()), int(v.get_den_val().to_python()))


def qpolynomial_to_expr(qpoly: isl.QPolynomial) -> Any:
    """*qpoly* as a pymbolic expression: a polynomial with integer
    coefficients, floor-divided by their common denominator when there is one."""
    space = qpoly.space
    monomials, coeffs = [], []
    for term in qpoly.get_terms():
        monomial: Any = 1
        for dt in (dim_type.param, dim_type.in_):
            for i in range(term.dim(dt)):
                exp = term.get_exp(dt, i)
                if exp:
                    monomial = monomial * prim.Variable(str(space.get_dim_name(dt, i))) ** exp
        for i in range(term.dim(dim_type.div)):
            exp = term.get_exp(dim_type.div, i)
            if exp:
                monomial = monomial * aff_to_expr(term.get_div(i)) ** exp
        monomials.append(monomial)
        coeffs.append(_fraction(term.get_coefficient_val()))
    if not monomials:
        return 0
    denominator = reduce(lcm, (c.denominator for c in coeffs), 1)
    total = sum(int(c * denominator) * m for c, m in zip(coeffs, monomials))
    return flatten(total if denominator == 1 else prim.FloorDiv(total, denominator))


def qpolynomial_from_expr(space: isl.Space, expr: Any) -> isl.QPolynomial:
    """The quasi-polynomial of the polynomial expression *expr* over *space*
    (a floor division by an integer is taken as exact)."""
    def rec(e: Any) -> isl.QPolynomial:
        if isinstance(e, (int, Fraction)):
            f = Fraction(e)
            val = isl.Val.int_from_si(space.get_ctx(), f.numerator).div(
                isl.Val.int_from_si(space.get_ctx(), f.denominator))
            return isl.QPolynomial.val_on_domain(space, val)
        if isinstance(e, prim.Variable):
            dt, idx = space.get_var_dict()[e.name]
            return isl.QPolynomial.var_on_domain(space, dt, idx)
        if isinstance(e, prim.Sum):
            return reduce(operator.add, (rec(c) for c in e.children))
        if isinstance(e, prim.Product):
            return reduce(operator.mul, (rec(c) for c in e.children))
        if isinstance(e, prim.Power) and isinstance(e.exponent, int) and e.exponent >= 0:
            return rec(e.base).pow(e.exponent)
        if isinstance(e, prim.FloorDiv) and isinstance(e.denominator, int):
            return rec(e.numerator) * rec(Fraction(1, e.denominator))
        raise ExpressionToAffineConversionError(f"'{e}' is not a polynomial")
    return rec(expr)


def _substitution_domain(new_space: isl.Space, obj: Any,
                         subst_dict: Mapping[str, Any]) -> tuple[Any, isl.Set]:
    """*obj* with *new_space*'s parameters added, and the set of the
    parameters (old and new) where each old one equals its expression."""
    new_params = [new_space.get_dim_name(dim_type.param, i)
                  for i in range(new_space.dim(dim_type.param))]
    old_params = [obj.get_space().get_dim_name(dim_type.param, i)
                  for i in range(obj.dim(dim_type.param))]
    added = [n for n in new_params if n not in old_params]
    if isinstance(obj, isl.PwAff):
        obj = obj.align_params(isl.Space.create_from_names(
            obj.get_ctx(), set=[], params=old_params + added))
    else:       # (PwQPolynomial has no align_params)
        obj = obj.add_dims(dim_type.param, len(added))
        for k, name in enumerate(added):
            obj = obj.set_dim_name(dim_type.param, len(old_params) + k, name)
    domain_space = obj.get_domain_space()
    universe = isl.Set.universe(domain_space.params())
    for name, value in subst_dict.items():
        if name not in domain_space.get_var_dict() or name in new_params:
            continue
        old = expr_to_pw_aff(prim.Variable(name), universe.space)
        universe = universe & old.eq_set(expr_to_pw_aff(value, universe.space))
    return obj, universe


def _old_params_out(s: isl.Set, n_old: int) -> isl.Set:
    return s.project_out(dim_type.param, 0, n_old)


def _substituted_pieces(new_space: isl.Space, function: Any, subst_dict: Mapping[str, Any],
                        to_expr: Any) -> list[tuple[isl.Set, Any]]:
    """``(domain, expression)`` of each nonempty piece of the piecewise
    *function* with its parameters replaced by *subst_dict*'s expressions in
    those of *new_space* (*to_expr*: a piece's expression as pymbolic)."""
    n_old = function.get_space().dim(dim_type.param)
    extended, where = _substitution_domain(new_space, function, subst_dict)
    found = []
    for valid, piece in extended.get_pieces():
        valid = valid & where.align_params(valid.space)
        if not valid.plain_is_empty():
            found.append((_old_params_out(valid, n_old),
                          substitute(to_expr(piece), dict(subst_dict))))
    return found


def subst_into_pwaff(new_space: isl.Space, pwaff: isl.PwAff,
                     subst_dict: Mapping[str, Any]) -> isl.PwAff:
    """*pwaff* with its parameters replaced by the affine expressions of
    *subst_dict* in the parameters of *new_space*."""
    pieces = [expr_to_pw_aff(expr, valid.space).intersect_domain(valid)
              for valid, expr in _substituted_pieces(new_space, pwaff, subst_dict, aff_to_expr)]
    if not pieces:
        raise ValueError("no piece of the PwAff is left after the substitution")
    return reduce(lambda a, b: a.union_add(b), pieces).coalesce()


def subst_into_pwqpolynomial(new_space: isl.Space, poly: isl.PwQPolynomial,
                             subst_dict: Mapping[str, Any]) -> isl.PwQPolynomial:
    """*poly* with its parameters replaced by the affine expressions of
    *subst_dict* in the parameters of *new_space*."""
    if not poly.get_pieces():
        return isl.PwQPolynomial.zero(new_space.insert_dims(dim_type.out, 0, 1))
    result = None
    for valid, expr in _substituted_pieces(new_space, poly, subst_dict, qpolynomial_to_expr):
        piece = isl.PwQPolynomial.alloc(valid, qpolynomial_from_expr(valid.space, expr))
        result = piece if result is None else result.add_disjoint(piece)
    if result is None:
        raise ValueError("no piece of the PwQPolynomial is left after the substitution")
    return result
