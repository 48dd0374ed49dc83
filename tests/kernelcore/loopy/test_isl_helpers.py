"""loopy's isl helpers: piecewise functions as conditional expressions,
quasi-polynomials as expressions, and substitution of parameters."""

from __future__ import annotations

import islpy as isl
import pymbolic.primitives as prim
from pymbolic import evaluate, flatten

from kernelcore.isl_helpers import subst_into_pwaff, subst_into_pwqpolynomial
from kernelcore.symbolic import parse, pw_aff_to_expr, qpolynomial_to_expr, simplify_via_aff


def test_pieces_become_conditionals():
    pw = isl.PwAff("[n] -> { [(2)] : n < 0; [(n)] : n >= 0 }")
    expr = pw_aff_to_expr(pw)
    assert isinstance(expr, prim.If)
    for n in (-3, 0, 5):
        assert evaluate(expr, {"n": n}) == (2 if n < 0 else n)
    assert pw_aff_to_expr(isl.PwAff("[n] -> { [(n + 1)] }")) == parse("1 + n")


def test_simplify_via_aff():
    assert simplify_via_aff(parse("2*j - j + 3")) == parse("3 + j")
    not_affine = parse("i*j")
    assert simplify_via_aff(not_affine) is not_affine


def test_qpolynomial_to_expr_takes_a_common_denominator():
    (_, qpoly), = isl.PwQPolynomial("[a, b] -> { ((1/2)*a + (3/4)*b) : (2a + 3b) mod 4 = 0 }"
                                    ).get_pieces()
    a, b = prim.variables("a b")
    assert flatten(qpolynomial_to_expr(qpoly)) == flatten((2*a + 3*b) // 4)


def test_substitution_of_parameters():
    space = isl.Set("[x, y] -> { []: }").params().space
    pw = isl.PwAff("[m] -> { [(2m)] : m > 0; [(-m)] : m <= 0 }")
    got = subst_into_pwaff(space, pw, {"m": prim.Variable("x") - 1})
    expected_aff = isl.PwAff("[x, y] -> { [(2x - 2)] : x > 1; [(1 - x)] : x <= 1 }")
    assert got.is_equal(expected_aff)
    poly = isl.PwQPolynomial("[m] -> { (m*m + 1) : m >= 0 }")
    got = subst_into_pwqpolynomial(space, poly, {"m": 2*prim.Variable("y")})
    expected = isl.PwQPolynomial("[x, y] -> { (4*y*y + 1) : y >= 0 }")
    assert (got - expected).is_zero()
