"""Whether two accesses of an array by different work-items can meet.

Public names: accesses_may_meet_across.
"""

from __future__ import annotations

from collections.abc import Iterable

import islpy as isl
import pymbolic.primitives as prim

from kernelcore.ir.domain import NotAffineError, expr_to_pw_aff, project_to
from kernelcore.ir.expr import substitute
from kernelcore.ir.instruction import InstructionBase
from kernelcore.ir.kernel import LoopKernel

dim_type = isl.dim_type

_OTHER = "__kc_other_"


def _instances(knl: LoopKernel, insn: InstructionBase) -> tuple[frozenset[str], isl.Set]:
    inames = frozenset(insn.within_inames | insn.reduction_inames())
    return inames, project_to(knl.get_inames_domain(inames), inames)


def accesses_may_meet_across(knl: LoopKernel, first: InstructionBase, first_index: tuple,
                             second: InstructionBase, second_index: tuple,
                             parallel: Iterable[str]) -> bool:
    """Whether an instance of *first* accessing its array at *first_index*
    and an instance of *second* accessing it at *second_index* can touch the
    same element while differing in one of the *parallel* inames (run by
    different work-items). True unless ISL shows otherwise: for indices that
    are not affine, and for a parallel iname one of them does not run in."""
    parallel = list(parallel)
    inames_a, dom_a = _instances(knl, first)
    inames_b, dom_b = _instances(knl, second)
    if any(p not in inames_a or p not in inames_b for p in parallel):
        return True
    for k in range(dom_b.dim(dim_type.set)):
        dom_b = dom_b.set_dim_name(dim_type.set, k,
                                   f"{_OTHER}{dom_b.get_dim_name(dim_type.set, k)}")
    dom_a = dom_a.align_params(dom_b.space)
    dom_b = dom_b.align_params(dom_a.space)
    both = dom_a.flat_product(dom_b)
    space = both.space
    other = {n: prim.Variable(_OTHER + n) for n in inames_b}
    try:
        for ia, ib in zip(first_index, second_index, strict=True):
            both = both & expr_to_pw_aff(ia, space).eq_set(
                expr_to_pw_aff(substitute(ib, other), space))
        differ = None
        for p in parallel:
            ne = expr_to_pw_aff(prim.Variable(p), space).ne_set(
                expr_to_pw_aff(other[p], space))
            differ = ne if differ is None else differ | ne
    except (NotAffineError, ValueError, isl.Error):
        return True
    if differ is None:
        return True
    return not (both & differ).is_empty()
