"""Simplifying index expressions over the loop domain (loopy's
``simplify_using_aff`` and ``simplify_indices``).

Public names: simplify_using_aff, simplify_indices.
"""

from __future__ import annotations

from typing import Any

import islpy as isl
import pymbolic.primitives as prim
from pymbolic import flatten

from kernelcore.ir.domain import NotAffineError, aff_to_expr, expr_to_pw_aff, project_to
from kernelcore.ir.expr import IdentityMapper, get_dependencies
from kernelcore.ir.kernel import LoopKernel
from kernelcore.translation_unit import for_each_kernel

dim_type = isl.dim_type


def simplify_using_aff(knl: LoopKernel, expr: Any) -> Any:
    """*expr* simplified by isl on the domain of the inames it uses (other
    names are free variables); a non-affine *expr* is only flattened."""
    deps = get_dependencies(expr)
    inames = sorted(deps & set(knl.all_inames()))
    domain = project_to(knl.get_inames_domain(inames), inames) if inames \
        else isl.Set.universe(knl.assumptions_set.space)
    known = set(domain.get_var_dict())
    others = sorted(n for n in deps - known if n.isidentifier())
    n = domain.dim(dim_type.set)
    domain = domain.insert_dims(dim_type.set, n, len(others))
    for k, name in enumerate(others):
        domain = domain.set_dim_name(dim_type.set, n + k, name)
    try:
        pieces = expr_to_pw_aff(expr, domain.space).get_pieces()
    except (NotAffineError, isl.Error, TypeError):
        return flatten(expr)
    if len(pieces) != 1:
        return flatten(expr)
    return aff_to_expr(pieces[0][1].gist(domain))


class _IndexSimplifier(IdentityMapper):
    def __init__(self, knl: LoopKernel) -> None:
        self.knl = knl

    def map_subscript(self, expr: prim.Subscript) -> Any:
        index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        new = tuple(simplify_using_aff(self.knl, self.rec(i)) for i in index)
        return prim.Subscript(self.rec(expr.aggregate), new[0] if len(new) == 1 else new)

    def map_constant(self, expr: Any) -> Any:
        return expr


@for_each_kernel
def simplify_indices(knl: LoopKernel) -> LoopKernel:
    """Simplify the array indices of every instruction with
    :func:`simplify_using_aff`."""
    mapper = _IndexSimplifier(knl)
    return knl.copy(instructions=tuple(i.with_transformed_expressions(mapper)
                                       for i in knl.instructions))
