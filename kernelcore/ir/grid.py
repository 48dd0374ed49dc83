"""Work-group sizes and group counts of kernels with parallel (l.N / g.N) inames.

Public names: grid_sizes, hw_iname_ranges, iname_range, callee_hw_sizes, HwRange.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Any

import islpy as isl

from kernelcore.diagnostic import CodeGenerationError, KernelcoreError, StaticValueFindingError
from kernelcore.ir.domain import aff_to_expr, project_to, static_max_of_pw_aff, static_range
from kernelcore.ir.tags import GroupIndexTag, LocalIndexTag, is_hw_parallel

if TYPE_CHECKING:
    from pymbolic.typing import ArithmeticExpression

dim_type = isl.dim_type


@dataclass(frozen=True)
class HwRange:
    """A parallel iname runs over ``lower + (0 .. size-1)``."""

    iname: str
    tag: LocalIndexTag | GroupIndexTag
    lower: ArithmeticExpression  # pymbolic expression in the parameters
    size: isl.PwAff      # the extent (a single static bound where one exists)


def _pw_over_params(s: isl.Set, which: str):
    idx = s.get_var_dict()[which][1]
    return s.dim_min(idx), s.dim_max(idx)


def hw_iname_ranges(knl: Any, insn_ids: Collection[str] | None = None) -> list[HwRange]:
    """Ranges of the kernel's parallel inames that the instructions *insn_ids*
    (default: all) use."""
    result = []
    for iname in knl.all_inames():
        if not is_hw_parallel(knl.iname_tags.get(iname)):
            continue
        users = [i for i in knl.instructions if iname in i.within_inames
                 and (insn_ids is None or i.id in insn_ids)]
        if users:
            dom = reduce(isl.Set.union, [knl.get_insn_domain(i) for i in users])
            result.append(iname_range(knl, iname, dom))
    return result


def iname_range(knl: Any, iname: str, dom: isl.Set | None = None) -> HwRange:
    """Lower bound and extent of a parallel *iname* over *dom* (default: its
    whole domain)."""
    tag = knl.iname_tags.get(iname)
    ctx = knl.assumptions_set.params()
    if dom is None:
        dom = knl.get_inames_domain([iname])
    dom = project_to(dom, [iname]).coalesce()
    lo, hi = _pw_over_params(dom, iname)
    try:
        # the launch may start below where some parameter values start: guards
        # keep the extra work-items idle
        lo_aff = static_max_of_pw_aff(lo.neg(), ctx).neg()
    except StaticValueFindingError:
        lo_aff = None
    if lo_aff is None:
        raise KernelcoreError(f"parallel iname '{iname}' ({tag}) has no single lower "
                              f"bound ({lo}); split or shift it so it starts at a "
                              "fixed expression")
    size = hi.sub(isl.PwAff.from_aff(lo_aff)).add_constant_val(1)
    return HwRange(iname, tag, aff_to_expr(lo_aff), _simplest(size, ctx))


def _simplest(size: isl.PwAff, ctx) -> isl.PwAff:
    """*size* as one affine piece valid everywhere if there is one."""
    try:
        return isl.PwAff.from_aff(static_max_of_pw_aff(size, ctx))
    except StaticValueFindingError:
        return size


def grid_sizes(knl: Any, insn_ids: Collection[str] | None = None,
               constant_local: bool = True
               ) -> tuple[tuple[isl.PwAff, ...], tuple[isl.PwAff, ...]]:
    """(group counts, local sizes) per axis, as isl PwAffs of the parameters
    (missing axes are 1), of the device kernel running *insn_ids* (default: all).
    Local sizes are constants (the largest the assumptions allow) unless
    *constant_local* is False."""
    groups: dict[int, isl.PwAff] = {}
    local: dict[int, isl.PwAff] = {}
    ctx = knl.assumptions_set.params()
    for r in hw_iname_ranges(knl, insn_ids):
        target = local if isinstance(r.tag, LocalIndexTag) else groups
        prev = target.get(r.tag.axis)
        target[r.tag.axis] = r.size if prev is None else _simplest(prev.union_max(r.size), ctx)
    for is_local, axis, size in callee_hw_sizes(knl, insn_ids):
        target = local if is_local else groups
        const = _constant(ctx.get_space(), size)
        prev = target.get(axis)
        target[axis] = const if prev is None else _simplest(prev.union_max(
            _constant(prev.get_domain_space(), size)), ctx)
    for axis, pw in list(local.items()) if constant_local else ():
        pieces = pw.get_pieces()
        if len(pieces) != 1 or not pieces[0][1].is_cst():
            local[axis] = _constant_local_size(knl, axis, insn_ids, pw)

    def as_tuple(d: dict[int, isl.PwAff]) -> tuple:
        if not d:
            return ()
        some = next(iter(d.values()))
        return tuple(d.get(k, _one_like(some)) for k in range(max(d) + 1))

    return as_tuple(groups), as_tuple(local)


def _constant_local_size(knl, axis: int, insn_ids, pw: isl.PwAff) -> isl.PwAff:
    """A constant work-group size along l.*axis*: the largest extent the
    assumptions allow (an error if there is none)."""
    size = 0
    for r in hw_iname_ranges(knl, insn_ids):
        if isinstance(r.tag, LocalIndexTag) and r.tag.axis == axis:
            try:
                lo, hi = static_range(knl, r.iname)
            except KernelcoreError:
                raise KernelcoreError(
                    f"work-group size along l.{axis} must be a constant, got {pw}; split "
                    "the iname with a fixed length before tagging it l.N, or bound it "
                    "in the assumptions") from None
            size = max(size, hi - lo + 1)
    return isl.PwAff.from_aff(isl.Aff.zero_on_domain(
        isl.LocalSpace.from_space(pw.get_domain_space())) + size)


def _constant(space: isl.Space, value: int) -> isl.PwAff:
    """The constant *value* as a PwAff over the parameters of *space*."""
    return isl.PwAff.from_aff(isl.Aff.zero_on_domain(
        isl.LocalSpace.from_space(space.params())) + value)


def _one_like(pw: isl.PwAff) -> isl.PwAff:
    return isl.PwAff.from_aff(isl.Aff.zero_on_domain(
        isl.LocalSpace.from_space(pw.get_domain_space())) + 1)


def callee_hw_sizes(knl: Any, insn_ids: Collection[str] | None) -> list[tuple[bool, int, int]]:
    """``(is_local, axis, size)`` of the hardware axes used by the callee
    kernels that the instructions *insn_ids* (default: all) call; the sizes
    must be constants."""
    result = []
    for insn in knl.instructions:
        if insn_ids is not None and insn.id not in insn_ids:
            continue
        fn = getattr(getattr(insn, "expression", None), "function", None)
        clbl = knl.callables.get(getattr(fn, "name", None))
        sub = getattr(clbl, "subkernel", None)
        if sub is None:         # not a kernel called as a function
            continue
        around = {(isinstance(t, LocalIndexTag), t.axis) for t in (
            knl.iname_tags.get(n) for n in insn.within_inames)
            if isinstance(t, (GroupIndexTag, LocalIndexTag))}
        # the callee's grid for the scalars this call passes
        groups, local = clbl.get_hw_axes_sizes(
            dict(enumerate(insn.expression.parameters)), knl.space, {})
        used_groups, used_local = clbl.get_used_hw_axes({})
        clash = sorted(around & ({(False, a) for a in used_groups}
                                 | {(True, a) for a in used_local}))
        if clash:
            kind, axis = clash[0]
            raise CodeGenerationError(
                f"call '{insn.id}' runs inside a {'local' if kind else 'group'} axis "
                f"{axis} that kernel '{sub.name}' uses too: tag the callee's inames with "
                "other axes")
        for is_local, sizes in ((False, groups), (True, local)):
            for axis, size in sizes.items():
                try:
                    value = static_max_of_pw_aff(size.project_domain_on_params(),
                                                 knl.assumptions_set.params())
                    result.append((is_local, axis, int(value.get_constant_val()
                                                       .get_num_si())))
                except Exception:
                    raise CodeGenerationError(
                        f"kernel '{sub.name}' called by '{insn.id}' runs over a "
                        f"{'local' if is_local else 'group'} axis of extent {size}: "
                        "the extents of a callee's hardware axes must be constants"
                    ) from None
    return result
