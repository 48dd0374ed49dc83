"""Whether two accesses of an array by different work-items can meet.

Public names: accesses_may_meet_across, may_touch_across_work_items.
"""

from __future__ import annotations

from collections.abc import Iterable

import islpy as isl
import pymbolic.primitives as prim

from kernelcore.ir.domain import NotAffineError, expr_to_pw_aff, project_to
from kernelcore.ir.expr import substitute
from kernelcore.ir.instruction import InstructionBase
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import GroupIndexTag, LocalIndexTag

dim_type = isl.dim_type

_OTHER = "__kc_other_"


def _instances(knl: LoopKernel, insn: InstructionBase) -> tuple[frozenset[str], isl.Set]:
    inames = frozenset(insn.within_inames | insn.reduction_inames())
    return inames, project_to(knl.get_inames_domain(inames), inames)


def accesses_may_meet_across(knl: LoopKernel, first: InstructionBase, first_index: tuple,
                             second: InstructionBase, second_index: tuple,
                             parallel: Iterable[str], same: Iterable[str] = ()) -> bool:
    """Whether an instance of *first* accessing its array at *first_index*
    and an instance of *second* accessing it at *second_index* can touch the
    same element while differing in one of the *parallel* inames (run by
    different work-items) and agreeing in the *same* ones. True unless ISL
    shows otherwise: for indices that are not affine, and for a parallel
    iname one of them does not run in."""
    parallel, same = list(parallel), list(same)
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
        for n in same:
            both = both & expr_to_pw_aff(prim.Variable(n), space).eq_set(
                expr_to_pw_aff(other[n], space))
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


def _hw_inames(knl: LoopKernel, insn: InstructionBase,
               kind: type[LocalIndexTag] | type[GroupIndexTag]) -> dict[int, str]:
    """Axis -> iname of the *kind* (local or group) inames *insn* runs in."""
    return {tag.axis: n for n in insn.within_inames
            if isinstance(tag := knl.iname_tags.get(n), kind)}


def may_touch_across_work_items(knl: LoopKernel, insn_a: InstructionBase, idx_a: tuple,
                                insn_b: InstructionBase, idx_b: tuple) -> bool:
    """Whether a work-item running *insn_a* at index *idx_a* and another one of
    the same work-group running *insn_b* at *idx_b* may reach one element
    (True whenever that cannot be decided: indices that are not affine,
    instructions on different local axes). Sequential loops are left free: the
    two accesses may come from any of their iterations."""
    local_a = _hw_inames(knl, insn_a, LocalIndexTag)
    if len(idx_a) != len(idx_b) or not local_a or local_a != _hw_inames(knl, insn_b,
                                                                       LocalIndexTag):
        return True
    groups_b = _hw_inames(knl, insn_b, GroupIndexTag)
    same = [n for axis, n in _hw_inames(knl, insn_a, GroupIndexTag).items()
            if groups_b.get(axis) == n]
    return accesses_may_meet_across(knl, insn_a, idx_a, insn_b, idx_b, local_a.values(), same)
