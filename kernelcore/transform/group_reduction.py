"""Reductions across work-groups in two stages.

A reduction over an iname tagged ``g.N`` cannot finish inside one device
kernel: the first stage leaves one partial result per work-group in a global
temporary, a global barrier ends the device kernel, and a second stage of one
work-group reduces the partial results (:func:`split_group_reductions`).

Public names: split_group_reductions, STAGE2_GROUP_SIZE.
"""

from __future__ import annotations

import islpy as isl
import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import AddressSpace, TemporaryVariable
from kernelcore.ir.domain import expr_to_pw_aff, pw_aff_to_expr
from kernelcore.ir.expr import USER_REDUCTIONS, IdentityMapper, Reduction
from kernelcore.ir.grid import iname_range
from kernelcore.ir.instruction import Assignment, BarrierInstruction
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import GroupIndexTag, is_hw_parallel
from kernelcore.transform.iname import split_iname
from kernelcore.types import TypeInferenceMapper, kernel_type_context

#: work-group size of the second stage of a reduction across work-groups
STAGE2_GROUP_SIZE = 256

_STAGE2_OP = {"sum": "sum", "product": "product", "max": "max", "min": "min",
              "any": "any", "all": "all"}


def _stage2_op(op: str) -> str | None:
    """The reduction that combines partial results of *op*."""
    if op not in USER_REDUCTIONS:
        return _STAGE2_OP.get(op)
    identity, _, merge = USER_REDUCTIONS[op]
    if merge is None:
        return None
    partials = f"{op}__partials"
    USER_REDUCTIONS.setdefault(partials, (identity, merge, merge))
    return partials


class _GroupReductionFinder(IdentityMapper):
    def __init__(self, knl):
        self.knl = knl
        self.found: list[tuple[Reduction, str]] = []

    def map_reduction(self, expr):
        groups = [n for n in expr.inames
                  if isinstance(self.knl.iname_tags.get(n), GroupIndexTag)]
        if groups:
            if len(groups) > 1:
                raise KernelcoreError(f"reduction {expr}: at most one reduction iname may "
                                      "be tagged g.N")
            self.found.append((expr, groups[0]))
            return expr
        return super().map_reduction(expr)

    def map_constant(self, expr):
        return expr


def split_group_reductions(knl: LoopKernel) -> LoopKernel:
    """Reductions over a ``g.N`` iname become two device kernels: each work-group
    reduces its share into a global array of partial results, then (after a
    global barrier) one work-group reduces the partial results."""

    dtypes, weak = kernel_type_context(knl)
    types = TypeInferenceMapper(dtypes, weak, knl.callables, knl.index_dtype)
    names = UniqueNameGenerator(set(dtypes) | {i.id for i in knl.instructions}
                                | set(knl.all_inames()))
    ranges = {n: iname_range(knl, n) for n in knl.all_inames()
              if is_hw_parallel(knl.iname_tags.get(n))}
    insns: list = []
    temps = dict(knl.temporary_variables)
    domains = list(knl.domains)
    tags = dict(knl.iname_tags)
    changed = False
    stage2_inames = []
    for insn in knl.instructions:
        finder = _GroupReductionFinder(knl)
        if isinstance(insn, Assignment):
            finder(insn.expression)
        if not isinstance(insn, Assignment) or not finder.found:
            insns.append(insn)
            continue
        changed = True
        sequential = [n for n in insn.within_inames if not is_hw_parallel(knl.iname_tags.get(n))]
        if sequential:
            raise KernelcoreError(
                f"instruction '{insn.id}' reduces across work-groups inside sequential "
                f"loop(s) {', '.join(sorted(sequential))}; such a reduction must not be "
                "nested in sequential loops")
        outer = sorted(insn.within_inames, key=knl.all_inames().index)

        def rel(n):
            r = ranges[n]
            return prim.Variable(n) if r.lower == 0 else prim.Sum(
                (prim.Variable(n), prim.Product((-1, r.lower))))

        replacements = {}
        barrier_ids = set()
        for red, g in finder.found:
            stage2_op = _stage2_op(red.operation)
            if stage2_op is None:
                raise KernelcoreError(f"{red.operation} across work-groups is not supported "
                                      "(user reductions need merge=)")
            dtype = types(red).dtype
            partial = names(f"{insn.id}_partial")
            shape = tuple(pw_aff_to_expr(ranges[n].size) for n in outer + [g])
            temps[partial] = TemporaryVariable(partial, dtype, shape,
                                               address_space=AddressSpace.GLOBAL)
            rest = tuple(n for n in red.inames if n != g)
            stage1_id = names(f"{insn.id}_stage1")
            insns.append(Assignment(
                id=stage1_id,
                assignee=prim.Subscript(prim.Variable(partial),
                                        tuple(rel(n) for n in outer + [g])),
                expression=Reduction(red.operation, rest, red.expr) if rest else red.expr,
                within_inames=insn.within_inames | {g}, depends_on=insn.depends_on,
                predicates=insn.predicates))
            barrier_id = names(f"{insn.id}_gbarrier")
            insns.append(BarrierInstruction(id=barrier_id, synchronization_kind="global",
                                            within_inames=insn.within_inames,
                                            depends_on=frozenset({stage1_id})))
            barrier_ids.add(barrier_id)
            g2 = names(f"{g}_stage2")
            stage2_inames.append(g2)
            domains.append(_range_domain(g2, ranges[g], knl.ordered_params()))
            tags[g2] = None
            g2_index = prim.Variable(g2) if ranges[g].lower == 0 else prim.Sum(
                (prim.Variable(g2), prim.Product((-1, ranges[g].lower))))
            replacements[red] = Reduction(
                stage2_op, (g2,),
                prim.Subscript(prim.Variable(partial),
                               tuple(rel(n) for n in outer) + (g2_index,)))

        class _Replace(IdentityMapper):
            def map_reduction(self, expr):
                return replacements.get(expr, expr)  # noqa: B023 (used in this pass)

            def map_constant(self, expr):
                return expr

        insns.append(insn.copy(expression=_Replace()(insn.expression),
                               depends_on=insn.depends_on | barrier_ids))
    if not changed:
        return knl
    knl = knl.copy(instructions=tuple(insns), temporary_variables=temps,
                   domains=tuple(domains), iname_tags=tags)
    # the second stage reduces the partial results in one work-group
    for g2 in stage2_inames:
        knl = split_iname(knl, g2, STAGE2_GROUP_SIZE, inner_tag="l.0")
    return knl


def _range_domain(name: str, rng, params) -> isl.BasicSet | isl.Set:
    """``{[name]: lower <= name < lower + size}`` for a parallel iname's range."""
    space = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=[name], params=list(params))
    v = prim.Variable(name)
    lo = expr_to_pw_aff(rng.lower, space)
    hi = expr_to_pw_aff(prim.Sum((rng.lower, pw_aff_to_expr(rng.size))), space)
    dom = (expr_to_pw_aff(v, space).ge_set(lo) & expr_to_pw_aff(v, space).lt_set(hi)).coalesce()
    bsets = dom.get_basic_sets()
    return bsets[0] if len(bsets) == 1 else dom
