"""Whether two accesses of an array by different work-items can meet.

Public names: accesses_may_meet, accesses_may_meet_across, may_touch_across_work_items.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import reduce
from typing import Any

import islpy as isl
import pymbolic.primitives as prim

from kernelcore.check_bounds import affine_condition, affine_pw_aff, conjuncts, kernel_params
from kernelcore.ir.data import ValueArg
from kernelcore.ir.domain import NotAffineError, expr_to_pw_aff, project_to
from kernelcore.ir.expr import get_dependencies, substitute
from kernelcore.ir.instruction import InstructionBase
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import GroupIndexTag, LocalIndexTag

dim_type = isl.dim_type

_OTHER = "__kc_other_"


def _instances(knl: LoopKernel, insn: InstructionBase) -> tuple[frozenset[str], isl.Set]:
    """The inames *insn* runs in, and the points where it runs: its domain,
    narrowed by its predicates that are affine in inames and parameters."""
    inames = frozenset(insn.within_inames | insn.reduction_inames())
    dom = project_to(knl.get_inames_domain(inames), inames)
    # (values passed by value are constants of a launch too)
    params = set(kernel_params(knl)) | {a.name for a in knl.args if isinstance(a, ValueArg)}
    for pred in conjuncts(insn.predicates):
        used = get_dependencies(pred)
        if not used <= inames | params:
            continue
        space = dom.space
        known = {space.get_dim_name(dim_type.param, k)
                 for k in range(space.dim(dim_type.param))}
        for p in sorted(used - inames - known):
            space = space.insert_dims(dim_type.param, 0, 1).set_dim_name(
                dim_type.param, 0, p)

        def pw_aff(e: Any, s: isl.Space = space) -> isl.PwAff:
            return affine_pw_aff(e, s)
        try:
            where = affine_condition(pred, pw_aff)
        except NotAffineError:
            continue
        dom = dom.align_params(where.space) & where
    return inames, dom


def _meeting(knl: LoopKernel, first: InstructionBase, first_index: tuple,
             second: InstructionBase, second_index: tuple
             ) -> tuple[isl.Set, isl.Space, dict[str, prim.Variable]]:
    """The pairs of instances of *first* and *second* (the second's inames
    renamed) whose accesses at *first_index* and *second_index* touch one
    element (raises NotAffineError, ValueError or isl.Error where indices
    are not affine)."""
    inames_a, dom_a = _instances(knl, first)
    inames_b, dom_b = _instances(knl, second)
    for k in range(dom_b.dim(dim_type.set)):
        dom_b = dom_b.set_dim_name(dim_type.set, k,
                                   f"{_OTHER}{dom_b.get_dim_name(dim_type.set, k)}")
    dom_a = dom_a.align_params(dom_b.space)
    dom_b = dom_b.align_params(dom_a.space)
    both = dom_a.flat_product(dom_b)
    space = both.space
    other = {n: prim.Variable(_OTHER + n) for n in inames_b}
    for ia, ib in zip(first_index, second_index, strict=True):
        both = both & expr_to_pw_aff(ia, space).eq_set(
            expr_to_pw_aff(substitute(ib, other), space))
    return both, space, other


def accesses_may_meet(knl: LoopKernel, first: InstructionBase, first_index: tuple,
                      second: InstructionBase, second_index: tuple) -> bool:
    """Whether some instance of *first* accessing its array at *first_index*
    and some instance of *second* accessing it at *second_index* touch the
    same element (True unless ISL shows otherwise: that their indices never
    meet, that the two never run in one launch, as under predicates
    ``phase == 0`` and ``phase == 1``, or that where they meet one runs
    under a condition and the other under its negation, as the branches of
    an ``if`` on data)."""
    try:
        both, space, other = _meeting(knl, first, first_index, second, second_index)
    except (NotAffineError, ValueError, isl.Error):
        both, space, other = _meeting(knl, first, (), second, ())
    return not both.is_empty() and not _exclusive(knl, first, second, both, space, other)


def _exclusive(knl: LoopKernel, first: InstructionBase, second: InstructionBase,
               both: isl.Set, space: isl.Space, other: dict[str, prim.Variable]) -> bool:
    """Whether *first* and *second* run under a condition and its negation
    that take one value at all the pairs of instances in *both* (conditions
    on inames that agree there, and on data no instruction writes)."""
    written = set(knl.writer_map)
    conds_a, conds_b = conjuncts(first.predicates), conjuncts(second.predicates)
    for cond in conds_a + conds_b:
        negation = prim.LogicalNot(cond)
        if not ((cond in conds_a and negation in conds_b)
                or (cond in conds_b and negation in conds_a)):
            continue
        used = get_dependencies(cond)
        if used & written:
            continue
        differ = None
        try:
            for n in sorted(used & set(other)):
                ne = expr_to_pw_aff(prim.Variable(n), space).ne_set(
                    expr_to_pw_aff(other[n], space))
                differ = ne if differ is None else differ | ne
        except (NotAffineError, ValueError, isl.Error):
            continue
        if differ is None or (both & differ).is_empty():
            return True
    return False


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
    inames_a, _ = _instances(knl, first)
    inames_b, _ = _instances(knl, second)
    if not parallel or any(p not in inames_a or p not in inames_b for p in parallel):
        return True
    try:
        both, space, other = _meeting(knl, first, first_index, second, second_index)
        for n in same:
            both = both & expr_to_pw_aff(prim.Variable(n), space).eq_set(
                expr_to_pw_aff(other[n], space))
        differ = reduce(isl.Set.union, [
            expr_to_pw_aff(prim.Variable(p), space).ne_set(expr_to_pw_aff(other[p], space))
            for p in parallel])
    except (NotAffineError, ValueError, isl.Error):
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
