"""Loop bounds and guards from loop domains, through islpy.

Public names: LoopBounds, loop_bounds, guard_condition, nonnegative_checker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Any

import islpy as isl
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


def loop_bounds(knl: LoopKernel, iname: str, outer: list[str], body_domains: list[isl.Set],
                context: isl.Set, uniform: bool = False) -> LoopBounds:
    """Bounds of *iname* covering every body instruction's domain, given that the
    *outer* loops are entered and *context* holds. With *uniform*, the loop gets
    no guard (conditions not involving *iname* are left to its instructions)."""
    dom = reduce(isl.Set.union, body_domains)
    dom = align_to(project_to(dom, set(outer) | {iname}), knl._universe).coalesce()
    hull = dom if len(dom.get_basic_sets()) == 1 else dom.simple_hull().to_set()
    hull = hull.to_set() if isinstance(hull, isl.BasicSet) else hull
    idx = _iname_index(hull, iname)

    if uniform:
        hull = hull.drop_constraints_not_involving_dims(dim_type.set, idx, 1)
    free = hull.drop_constraints_involving_dims(dim_type.set, idx, 1).gist(context)
    guard = set_to_cond_expr(free)

    # (a stride, such as i mod 2 = 0, is not in the loop bounds: it stays a guard)
    inner_context = (context & hull.remove_divs_involving_dims(dim_type.set, idx, 1)).coalesce()
    as_params = move_names_to_params(hull, outer)
    as_params = project_to(as_params, [iname])
    ctx_params = move_names_to_params(context & free, outer).params()
    upper_exact = as_params.dim_max(0)
    lower, lower_total = pw_aff_to_expr_and_total(
        _gist_params(as_params.dim_min(0), ctx_params))
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
    return pw.gist(ctx.align_params(pw.get_domain_space()))


def guard_condition(domain: isl.Set, context: isl.Set) -> Expression:
    """The condition (pymbolic; True if none) under which a point of *context* lies
    in *domain*."""
    return set_to_cond_expr(domain.gist(context))


def nonnegative_checker(knl: LoopKernel, context: isl.Set) -> Callable[[Any], bool]:
    """A predicate telling whether an integer expression is >= 0 wherever
    *context* holds."""
    def check(expr) -> bool:
        try:
            aff = expr_to_pw_aff(expr, knl.space)
        except NotAffineError:
            return False
        neg = aff.lt_set(isl.PwAff.zero_on_domain(isl.LocalSpace.from_space(knl.space)))
        return (neg & context).is_empty()
    return check
