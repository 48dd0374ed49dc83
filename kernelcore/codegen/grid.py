"""Work-group sizes and group counts of kernels with parallel (l.N / g.N) inames.

Public names: grid_sizes, hw_iname_ranges, HwRange.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

import islpy as isl

from kernelcore.diagnostic import KernelcoreError, StaticValueFindingError
from kernelcore.ir.domain import aff_to_expr, project_to, static_max_of_pw_aff
from kernelcore.ir.tags import GroupIndexTag, LocalIndexTag, is_hw_parallel

dim_type = isl.dim_type


@dataclass(frozen=True)
class HwRange:
    """A parallel iname runs over ``lower + (0 .. size-1)``."""

    iname: str
    tag: LocalIndexTag | GroupIndexTag
    lower: object        # pymbolic expression in the parameters
    size: isl.Aff        # static upper bound of the extent


def _pw_over_params(s: isl.Set, which: str):
    idx = s.get_var_dict()[which][1]
    return s.dim_min(idx), s.dim_max(idx)


def hw_iname_ranges(knl) -> list[HwRange]:
    """Ranges of the kernel's parallel inames (only those some instruction uses)."""
    result = []
    ctx = knl.assumptions_set.params()
    for iname in knl.all_inames():
        tag = knl.iname_tags.get(iname)
        if not is_hw_parallel(tag):
            continue
        users = [i for i in knl.instructions if iname in i.within_inames]
        if not users:
            continue
        dom = reduce(isl.Set.union, [knl.get_insn_domain(i) for i in users])
        dom = project_to(dom, [iname]).coalesce()
        lo, hi = _pw_over_params(dom, iname)
        try:
            lo_aff = static_max_of_pw_aff(lo, ctx) if len(lo.get_pieces()) == 1 else None
        except StaticValueFindingError:
            lo_aff = None
        if lo_aff is None:
            raise KernelcoreError(f"parallel iname '{iname}' ({tag}) has no single lower "
                                  f"bound ({lo}); split or shift it so it starts at a "
                                  "fixed expression")
        size = hi.sub(isl.PwAff.from_aff(lo_aff)).add_constant_val(1)
        try:
            size_aff = static_max_of_pw_aff(size, ctx)
        except StaticValueFindingError as e:
            raise StaticValueFindingError(
                f"while finding the size of parallel iname '{iname}' ({tag}): {e}") from None
        result.append(HwRange(iname, tag, aff_to_expr(lo_aff), size_aff))
    return result


def grid_sizes(knl) -> tuple[tuple[isl.Aff, ...], tuple[isl.Aff, ...]]:
    """(group counts, local sizes) per axis, as isl Affs (missing axes are 1)."""
    groups: dict[int, isl.Aff] = {}
    local: dict[int, isl.Aff] = {}
    for r in hw_iname_ranges(knl):
        target = local if isinstance(r.tag, LocalIndexTag) else groups
        prev = target.get(r.tag.axis)
        if prev is None:
            target[r.tag.axis] = r.size
        else:
            both = isl.PwAff.from_aff(prev).union_max(isl.PwAff.from_aff(r.size))
            target[r.tag.axis] = static_max_of_pw_aff(both, knl.assumptions_set.params())
    for axis, aff in local.items():
        if not aff.is_cst():
            raise KernelcoreError(
                f"work-group size along l.{axis} must be a constant, got {aff}; split the "
                "iname with a fixed length before tagging it l.N")

    def as_tuple(d: dict[int, isl.Aff], params_space) -> tuple:
        if not d:
            return ()
        one = isl.Aff.zero_on_domain(isl.LocalSpace.from_space(params_space)) + 1
        return tuple(d.get(k, one) for k in range(max(d) + 1))

    space = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=[],
                                        params=list(knl.all_params())).params()
    return as_tuple(groups, space), as_tuple(local, space)
