"""Whether two accesses of one local array may touch the same element from
different work-items (then a local barrier must separate them).

Public names: may_touch_across_work_items.
"""

from __future__ import annotations

from typing import Any

import islpy as isl
import pymbolic.primitives as prim

from kernelcore.ir.domain import NotAffineError, align_to, expr_to_pw_aff, project_to
from kernelcore.ir.expr import get_dependencies, substitute
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import GroupIndexTag, LocalIndexTag

_OTHER = "__kc_other"       # suffix of the second access's inames


def _meet(s: isl.Set, t: isl.Set) -> isl.Set:
    """``s & t`` with their parameters aligned."""
    return s.align_params(t.get_space()) & t.align_params(s.get_space())


def _hw_inames(knl: LoopKernel, insn: Any,
               kind: type[LocalIndexTag] | type[GroupIndexTag]) -> dict[int, str]:
    """Axis -> iname of the *kind* (local or group) inames *insn* runs in."""
    result = {}
    for n in insn.within_inames:
        tag = knl.iname_tags.get(n)
        if isinstance(tag, kind):
            result[tag.axis] = n
    return result


def may_touch_across_work_items(knl: LoopKernel, insn_a: Any, idx_a: tuple,
                                insn_b: Any, idx_b: tuple) -> bool:
    """Whether a work-item running *insn_a* at index *idx_a* and another one of
    the same work-group running *insn_b* at *idx_b* may reach one element
    (True whenever that cannot be decided: indices that are not affine,
    instructions on different local axes). Sequential loops are left free: the
    two accesses may come from any of their iterations."""
    local_a, local_b = _hw_inames(knl, insn_a, LocalIndexTag), \
        _hw_inames(knl, insn_b, LocalIndexTag)
    if len(idx_a) != len(idx_b) or not local_a or local_a != local_b:
        return True
    inames = set(knl.all_inames())

    def used(insn, idx) -> set[str]:
        return (set(insn.within_inames) | set().union(*map(get_dependencies, idx))) & inames

    names_a, names_b = used(insn_a, idx_a), used(insn_b, idx_b)
    other = {n: f"{n}{_OTHER}" for n in names_b}
    space = isl.Space.create_from_names(
        isl.DEFAULT_CONTEXT, set=sorted(names_a) + sorted(other.values()),
        params=list(knl.ordered_params()))
    universe = isl.Set.universe(space)
    dom_b = project_to(knl.get_inames_domain(names_b), names_b)
    for k in range(dom_b.dim(isl.dim_type.set)):
        name = dom_b.get_dim_name(isl.dim_type.set, k)
        if name in other:
            dom_b = dom_b.set_dim_name(isl.dim_type.set, k, other[name])
    dom_a = project_to(knl.get_inames_domain(names_a), names_a)
    pairs = _meet(_meet(align_to(dom_a, universe), align_to(dom_b, universe)),
                  align_to(knl.assumptions_set.params(), universe))
    renamed = {n: prim.Variable(v) for n, v in other.items()}
    try:
        for a, b in zip(idx_a, idx_b):
            pairs = _meet(pairs, expr_to_pw_aff(a, space).eq_set(
                expr_to_pw_aff(substitute(b, renamed), space)))
    except NotAffineError:
        return True
    # the same work-group, another work-item
    for axis, name in _hw_inames(knl, insn_a, GroupIndexTag).items():
        if _hw_inames(knl, insn_b, GroupIndexTag).get(axis) == name:
            pairs = _meet(pairs, expr_to_pw_aff(prim.Variable(name), space).eq_set(
                expr_to_pw_aff(prim.Variable(other[name]), space)))
    differ = None
    for name in local_a.values():
        mine = expr_to_pw_aff(prim.Variable(name), space)
        theirs = expr_to_pw_aff(prim.Variable(other[name]), space)
        apart = mine.lt_set(theirs) | mine.gt_set(theirs)
        differ = apart if differ is None else differ | apart
    assert differ is not None
    return not _meet(pairs, differ).is_empty()
