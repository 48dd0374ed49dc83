"""Loop bounds and guards from loop domains, through islpy.

Public names: LoopBounds, loop_bounds, guard_condition, nonnegative_checker,
loop_invariant_predicates, nonnegative_checkers, nonnegative_temporaries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Any

import islpy as isl
import numpy as np
import pymbolic.primitives as prim

from kernelcore.ir.domain import (
    NotAffineError,
    align_to,
    expr_to_pw_aff,
    move_names_to_params,
    project_to,
    pw_aff_to_expr_and_total,
    set_to_cond_expr,
)
from kernelcore.ir.expr import TypeCast, get_dependencies
from kernelcore.ir.kernel import LoopKernel

if TYPE_CHECKING:
    from pymbolic.typing import Expression

dim_type = isl.dim_type


@dataclass
class LoopBounds:
    lower: object          # pymbolic expression
    upper: object          # pymbolic expression (inclusive)
    guard: object          # condition not involving the loop index, or True
    inner_context: isl.Set


def _iname_index(s: isl.Set, name: str) -> int:
    return s.get_var_dict()[name][1]


@dataclass(frozen=True)
class _LoopShape:
    """What :func:`loop_bounds` finds before it looks at the context."""
    hull: isl.Set          # the loop's hull, without its divs on the iname
    free: isl.Set          # the hull's constraints not involving the iname
    lower: isl.PwAff       # the iname's bounds, the outer inames as parameters
    upper: isl.PwAff
    domains: tuple[isl.Set, ...]   # kept alive: the memo's key holds their ids


def _loop_shape(knl: LoopKernel, iname: str, outer: list[str], body_domains: list[isl.Set],
                uniform: bool) -> _LoopShape:
    dom = reduce(isl.Set.union, body_domains)
    dom = align_to(project_to(dom, set(outer) | {iname}), knl._universe).coalesce()
    hull = dom if len(dom.get_basic_sets()) == 1 else dom.simple_hull().to_set()
    hull = hull.to_set() if isinstance(hull, isl.BasicSet) else hull
    idx = _iname_index(hull, iname)
    if uniform:
        hull = hull.drop_constraints_not_involving_dims(dim_type.set, idx, 1)
    free = hull.drop_constraints_involving_dims(dim_type.set, idx, 1)
    as_params = project_to(move_names_to_params(hull, outer), [iname])
    # (a stride, such as i mod 2 = 0, is not in the loop bounds: it stays a guard)
    return _LoopShape(hull.remove_divs_involving_dims(dim_type.set, idx, 1), free,
                      as_params.dim_min(0), as_params.dim_max(0), tuple(body_domains))


def loop_bounds(knl: LoopKernel, iname: str, outer: list[str], body_domains: list[isl.Set],
                context: isl.Set, uniform: bool = False,
                memo: dict | None = None) -> LoopBounds:
    """Bounds of *iname* covering every body instruction's domain, given that the
    *outer* loops are entered and *context* holds. With *uniform*, the loop gets
    no guard (conditions not involving *iname* are left to its instructions).
    *memo* (a dict kept for one kernel) keeps what does not depend on *context*,
    for loops generated once per unrolled copy of an enclosing loop."""
    key = (iname, tuple(outer), tuple(id(d) for d in body_domains), uniform)
    shape = memo.get(key) if memo is not None else None
    if shape is None:
        shape = _loop_shape(knl, iname, outer, body_domains, uniform)
        if memo is not None:
            memo[key] = shape
    free = shape.free.gist(context)
    guard = set_to_cond_expr(free)
    inner_context = (context & shape.hull).coalesce()
    ctx_params = move_names_to_params(context & free, outer).params()
    upper_exact = shape.upper
    lower, lower_total = pw_aff_to_expr_and_total(_gist_params(shape.lower, ctx_params))
    upper, upper_total = pw_aff_to_expr_and_total(_gist_params(upper_exact, ctx_params))
    # Where the loop is empty the bounds are undefined; if the simplified bounds
    # would then still admit iterations, guard the loop by its non-emptiness.
    nonempty = upper_exact.domain()
    ctx_aligned = ctx_params.align_params(nonempty.space)
    nonempty = nonempty.align_params(ctx_aligned.space)
    spurious = ctx_aligned & nonempty.complement() & lower_total.le_set(upper_total)
    if not spurious.is_empty():
        cond = set_to_cond_expr(nonempty.coalesce().gist(ctx_aligned).coalesce())
        guard = cond if guard is True else prim.LogicalAnd((guard, cond))
    return LoopBounds(lower, upper, guard, inner_context)


def _gist_params(pw: isl.PwAff, ctx: isl.Set) -> isl.PwAff:
    pw = pw.align_params(ctx.space)
    pieces = pw.get_pieces()
    if len(pieces) == 1 and pieces[0][1].is_cst():
        return pw           # (one constant: the context changes no expression of it)
    return pw.gist(ctx.align_params(pw.get_domain_space()))


def guard_condition(domain: isl.Set, context: isl.Set) -> Expression:
    """The condition (pymbolic; True if none) under which a point of *context* lies
    in *domain*."""
    return set_to_cond_expr(domain.gist(context))


def nonnegative_checker(knl: LoopKernel, context: isl.Set,
                        nonnegative_names: frozenset[str] = frozenset()
                        ) -> Callable[[Any], bool]:
    """A predicate telling whether an integer expression is >= 0 wherever
    *context* holds: affine expressions by their domain, and expressions
    built from remainders by positive constants (floor semantics: never
    negative), floor quotients of such, sums and products of such (and of
    nonnegative affine terms: ``i*(i+1)``), nonnegative constants, 64-bit
    casts of narrower unsigned values and the variables *nonnegative_names*
    (:func:`nonnegative_temporaries`)."""
    def check(expr) -> bool:
        if _structurally_nonnegative(expr, nonnegative_names):
            return True
        try:
            aff = expr_to_pw_aff(expr, knl.space)
        except NotAffineError:
            return isinstance(expr, (prim.Product, prim.Sum)) and all(
                check(c) for c in expr.children)
        neg = aff.lt_set(isl.PwAff.zero_on_domain(isl.LocalSpace.from_space(knl.space)))
        return (neg & context).is_empty()
    return check


def loop_invariant_predicates(insns: list, outer_inames: Any) -> frozenset:
    """The predicates every instruction of *insns* (those of one loop's body)
    has that read neither inames other than *outer_inames* (the enclosing
    loops) nor anything the instructions write: the loop may be guarded by
    them once, as loopy does."""
    if not insns:
        return frozenset()
    common = frozenset.intersection(*(frozenset(i.predicates) for i in insns))
    varying = frozenset().union(*(i.within_inames | i.assignee_names()
                                  for i in insns)) - frozenset(outer_inames)
    return frozenset(p for p in common if not get_dependencies(p) & varying)


def nonnegative_checkers(knl: LoopKernel) -> Callable[[isl.Set], Callable[[Any], bool]]:
    """:func:`nonnegative_checker` for *knl* by context, trusting its
    :func:`nonnegative_temporaries` (found once)."""
    names = nonnegative_temporaries(knl)
    return lambda context: nonnegative_checker(knl, context, names)


def _positive_constant(expr: Any) -> bool:
    return isinstance(expr, (int, np.integer)) and not isinstance(expr, bool) and bool(expr > 0)


def _structurally_nonnegative(expr: Any, names: frozenset[str]) -> bool:
    """Whether integer *expr* is >= 0 by its form alone (see
    :func:`nonnegative_checker`)."""
    if isinstance(expr, (int, np.integer)):
        return bool(expr >= 0)
    if isinstance(expr, prim.Variable):
        return expr.name in names
    if isinstance(expr, prim.Remainder):
        return _positive_constant(expr.denominator)
    if isinstance(expr, prim.FloorDiv):
        return _positive_constant(expr.denominator) and \
            _structurally_nonnegative(expr.numerator, names)
    if isinstance(expr, (prim.Sum, prim.Product)):
        return all(_structurally_nonnegative(c, names) for c in expr.children)
    if isinstance(expr, TypeCast):
        # (a cast to a 64-bit signed integer keeps a nonnegative integer's
        # value, and holds every value of a narrower unsigned one)
        child = expr.child
        return expr.dtype == np.int64 and (
            isinstance(child, TypeCast) and child.dtype.kind == "u" and child.dtype.itemsize < 8
            or _structurally_nonnegative(child, names))
    return False


def nonnegative_temporaries(knl: LoopKernel) -> frozenset[str]:
    """The integer scalar temporaries of *knl* that every assignment sets to
    a value nonnegative by its form (:func:`nonnegative_checker`), such as
    a gathered position wrapped by a remainder."""
    candidates: dict[str, list[Any]] = {}
    for name, temp in knl.temporary_variables.items():
        if temp.dtype is not None and np.dtype(temp.dtype).kind in "iu" and not temp.shape:
            candidates[name] = []
    for insn in knl.instructions:
        for assignee in getattr(insn, "assignees", ()):
            name = str(getattr(assignee, "name", ""))
            if name in candidates:
                expression = getattr(insn, "expression", None)
                if expression is None or not isinstance(assignee, prim.Variable):
                    candidates.pop(name)
                else:
                    candidates[name].append(expression)
    found: frozenset[str] = frozenset()
    while True:
        more = frozenset(name for name, values in candidates.items() if name not in found
                         and all(_structurally_nonnegative(v, found) for v in values))
        if not more:
            return found
        found |= more
