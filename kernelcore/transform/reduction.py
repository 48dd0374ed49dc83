"""Reductions become explicit accumulator code.

``out[i] = sum(k, e)`` turns into ``acc = 0`` (within i), ``acc = acc + e``
(within i, k) and ``out[i] = acc``, ordered by dependencies. When a reduction
iname is tagged ``l.N``, each work-item first reduces its own share privately,
then the partial results meet in a local array and are combined in a tree of
log2(group size) steps (barriers are inserted by the scheduler); work-item 0
stores the result. A reduction iname tagged ``g.N`` makes a two-stage
reduction (:mod:`kernelcore.transform.group_reduction`).

Public names: realize_reduction (the operations: :mod:`kernelcore.transform.reduction_ops`).
"""

from __future__ import annotations

from typing import Any

import islpy as isl
import numpy as np
import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import AddressSpace, TemporaryVariable
from kernelcore.ir.domain import (
    align_to,
    move_names_to_params,
    project_to,
    static_range,
)
from kernelcore.ir.expr import (
    IdentityMapper,
    Reduction,
    get_dependencies,
    substitute,
)
from kernelcore.ir.instruction import Assignment, BarrierInstruction, assignee_var_name
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import LocalIndexTag
from kernelcore.transform.reduction_ops import (
    arg_better,
    combine_value,
    lane_index,
    merge_partials,
    reduction_identity,
)
from kernelcore.types import TypeInferenceMapper, kernel_type_context

dim_type = isl.dim_type


def _is_shift_of(aff: isl.Aff, name: str) -> bool:
    """Whether *aff* is ``name + constant`` (over parameters)."""
    for k in range(aff.dim(dim_type.param)):
        coeff = aff.get_coefficient_val(dim_type.param, k).get_num_si()
        if coeff != (1 if aff.get_dim_name(dim_type.param, k) == name else 0):
            return False
    return aff.dim(dim_type.div) == 0 and all(
        aff.get_coefficient_val(dim_type.in_, k).is_zero()
        for k in range(aff.dim(dim_type.in_)))


def _is_global_barrier(insn: Any) -> bool:
    return isinstance(insn, BarrierInstruction) and insn.synchronization_kind == "global"


class _Realizer(IdentityMapper):
    def __init__(self, knl, insn, types: TypeInferenceMapper, names: UniqueNameGenerator):
        self.knl = knl
        self.insn = insn
        self.types = types
        self.names = names
        self.new_insns: list[Assignment] = []
        self.new_temps: dict[str, TemporaryVariable] = {}
        self.outer_inames = insn.within_inames
        self.final_deps: set[str] = set()
        self.lane_axes: set[int] = set()

    def map_constant(self, expr):
        return expr

    def map_reduction(self, expr: Reduction):
        if not expr.inames:         # over no inames: the value itself, as in loopy
            return self.rec(expr.expr)
        swept = set(expr.inames) & set(self.outer_inames)
        if swept:
            raise KernelcoreError(
                f"instruction '{self.insn.id}' reduces over iname(s) "
                f"{', '.join(sorted(swept))} that it also runs in")
        if expr.operation in ("argmax", "argmin"):
            return self._arg_reduction(expr)
        if expr.operation.startswith(("segmented(", "segmented_flag(")):
            return self._segmented(expr)
        sweep = self._scan_sweep(expr)
        if sweep is not None:
            if isinstance(self.knl.iname_tags.get(sweep[0]), LocalIndexTag):
                return self._parallel_scan(expr, *sweep)
            return self._scan(expr, *sweep)
        dtype = self.types(expr.expr).dtype
        if dtype.kind == "b" and expr.operation in ("sum", "product"):
            dtype = np.dtype(np.int64)
        if expr.operation in ("any", "all"):
            dtype = np.dtype(np.bool_)
        acc = self.names(f"acc_{'_'.join(expr.inames)}")
        self.new_temps[acc] = TemporaryVariable(acc, dtype, (),
                                                address_space=AddressSpace.PRIVATE)
        within = self.outer_inames
        # loopy's ids: <instruction>_<inames>_init and ..._update
        init_id = self.names(f"{self.insn.id}_{'_'.join(expr.inames)}_init")
        update_id = self.names(f"{self.insn.id}_{'_'.join(expr.inames)}_update")
        # as loopy's, the identity needs none of the instruction's dependencies
        # (only its global barriers: a private accumulator lives in one device
        # kernel) nor its predicates (they may read what is not yet written; an
        # unused accumulator is harmless)
        init = Assignment(id=init_id, assignee=prim.Variable(acc),
                          expression=reduction_identity(expr.operation, dtype),
                          within_inames=within, depends_on=frozenset(
                              d for d in self.insn.depends_on
                              if _is_global_barrier(self.knl.id_to_insn[d])))
        saved_outer, saved_deps = self.outer_inames, self.final_deps
        self.outer_inames = within | frozenset(expr.inames)
        self.final_deps = set()
        inner = self.rec(expr.expr)
        inner_deps = self.final_deps
        self.outer_inames, self.final_deps = saved_outer, saved_deps
        update = Assignment(id=update_id, assignee=prim.Variable(acc),
                            expression=combine_value(expr.operation, prim.Variable(acc), inner),
                            within_inames=within | frozenset(expr.inames),
                            depends_on=self.insn.depends_on | {init_id} | inner_deps,
                            predicates=self.insn.predicates)
        self.new_insns += [init, update]
        lanes = [n for n in expr.inames if isinstance(self.knl.iname_tags.get(n), LocalIndexTag)]
        if not lanes:
            self.final_deps.add(update_id)
            return prim.Variable(acc)
        if len(lanes) > 1:
            raise KernelcoreError(f"reduction over {', '.join(lanes)}: at most one "
                                  "reduction iname may be tagged l.N")
        return self._tree(expr.operation, dtype, acc, update_id, lanes[0])

    def _scan_sweep(self, expr: Reduction):
        """(i, c, i0) when the reduction is a prefix scan: its single iname j runs
        over ``L <= j <= i + c`` for a sequential (or ``l.N``) iname i of the
        instruction starting at ``i0 = L - c`` (constants), so each i adds one term."""
        if len(expr.inames) != 1 or expr.operation not in ("sum", "product", "max", "min") \
                or self.outer_inames != self.insn.within_inames:
            return None
        (j,) = expr.inames
        if self.knl.iname_tags.get(j) is not None:
            return None
        reads = get_dependencies(expr.expr)
        for i in sorted(self.outer_inames):
            # the terms must not change with i, or the running value would not be
            # a prefix of the next one
            tag = self.knl.iname_tags.get(i)
            if (tag is not None and not isinstance(tag, LocalIndexTag)) or i in reads:
                continue
            dom = self.knl.get_inames_domain([i, j])
            lo: Any
            hi: Any
            i0: Any
            j_of_i = project_to(move_names_to_params(dom, [i]), [j])
            lo, hi = j_of_i.dim_min(0).get_pieces(), j_of_i.dim_max(0).get_pieces()
            # where the instruction itself runs along i
            i_range = project_to(self.knl.get_inames_domain([i]), [i])
            i0 = i_range.dim_min(i_range.get_var_dict()[i][1]).get_pieces()
            if len(lo) != 1 or len(hi) != 1 or len(i0) != 1:
                continue
            lo, hi, i0 = lo[0][1], hi[0][1], i0[0][1]
            if not (lo.is_cst() and i0.is_cst() and _is_shift_of(hi, i)):
                continue
            low, c = lo.get_constant_val().get_num_si(), hi.get_constant_val().get_num_si()
            if i0.get_constant_val().get_num_si() + c != low:
                continue
            # the domain must be exactly {i in range, low <= j <= i + c}
            v = isl.affs_from_space(dom.space)
            candidate = (align_to(i_range, dom) & v[j].ge_set(v[0] + low)
                         & v[j].le_set(v[i] + c))
            if candidate.is_equal(dom):
                return i, c, low - c
        return None

    def _scan(self, expr: Reduction, sweep: str, shift: int, first: int):
        """A prefix scan along sweep loop *sweep*: one accumulator carried over
        its iterations, one new term per iteration. The first iteration (*sweep*
        = *first*) takes its term as it is: the identity combined with a term
        is not always the term (``0.0 + -0.0``; ``(1+0j) * (inf+0j)`` is
        ``inf+nanj``)."""
        (j,) = expr.inames
        dtype = self.types(expr.expr).dtype
        if dtype.kind == "b" and expr.operation in ("sum", "product"):
            dtype = np.dtype(np.int64)
        acc = self.names(f"scan_{j}")
        self.new_temps[acc] = TemporaryVariable(acc, dtype, (),
                                                address_space=AddressSpace.PRIVATE)
        init_id = self.names(f"{self.insn.id}_{acc}_init")
        update_id = self.names(f"{self.insn.id}_{acc}_update")
        reduced_reads = get_dependencies(expr.expr)
        init_deps = frozenset(d for d in self.insn.depends_on
                              if not self.knl.id_to_insn[d].assignee_names() & reduced_reads)
        term = substitute(self.rec(expr.expr), {j: prim.Sum((prim.Variable(sweep), shift))
                                                if shift else prim.Variable(sweep)})
        term_var = self.names(f"scan_{j}_term")
        self.new_temps[term_var] = TemporaryVariable(term_var, dtype, (),
                                                     address_space=AddressSpace.PRIVATE)
        term_id = self.names(f"{self.insn.id}_{acc}_term")
        is_first = prim.Comparison(prim.Variable(sweep), "==", first)
        self.new_insns += [
            Assignment(id=init_id, assignee=prim.Variable(acc),
                       expression=reduction_identity(expr.operation, dtype),
                       within_inames=self.outer_inames - {sweep}, depends_on=init_deps,
                       predicates=self.insn.predicates),
            Assignment(id=term_id, assignee=prim.Variable(term_var), expression=term,
                       within_inames=self.outer_inames, depends_on=self.insn.depends_on,
                       predicates=self.insn.predicates),
            Assignment(id=update_id, assignee=prim.Variable(acc),
                       expression=prim.If(is_first, prim.Variable(term_var), combine_value(
                           expr.operation, prim.Variable(acc), prim.Variable(term_var))),
                       within_inames=self.outer_inames,
                       depends_on=self.insn.depends_on | {init_id, term_id},
                       predicates=self.insn.predicates)]
        self.final_deps.add(update_id)
        return prim.Variable(acc)

    def _parallel_scan(self, expr: Reduction, sweep: str, shift: int, first: int):
        """A prefix scan across the work-items of a work-group (sweep iname tagged
        ``l.N``, from *first*): terms in local memory, log2(group size) doubling
        steps; a work-item with fewer than *step* terms before it keeps its value
        (the identity is never combined in, as in :meth:`_scan`)."""
        (j,) = expr.inames
        dtype = self.types(expr.expr).dtype
        if dtype.kind == "b" and expr.operation in ("sum", "product"):
            dtype = np.dtype(np.int64)
        axis = self.knl.iname_tags[sweep].axis
        outer = self.outer_inames - {sweep}
        buf, at, lo, size = self._local_buffer(f"scan_{j}_buf", dtype, sweep, outer)
        lane = lane_index(axis)
        mine = prim.Variable(sweep) if lo == 0 else prim.Sum((prim.Variable(sweep), -lo))
        identity = reduction_identity(expr.operation, dtype)
        term = substitute(self.rec(expr.expr), {j: prim.Sum((prim.Variable(sweep), shift))
                                                if shift else prim.Variable(sweep)})
        base = f"{self.insn.id}_{buf}"
        ids = [self.names(f"{base}_clear"), self.names(f"{base}_load")]
        insns = [
            Assignment(id=ids[0], assignee=at(lane), expression=identity,
                       within_inames=outer, depends_on=frozenset(),
                       predicates=self.insn.predicates),
            Assignment(id=ids[1], assignee=at(mine), expression=term,
                       within_inames=self.outer_inames,
                       depends_on=self.insn.depends_on | {ids[0]},
                       predicates=self.insn.predicates)]
        prev = ids[1]
        step = 1
        while step < size:
            tmp = self.names(f"{buf}_{step}")
            self.new_temps[tmp] = TemporaryVariable(tmp, dtype, (),
                                                    address_space=AddressSpace.PRIVATE)
            read_id, write_id = self.names(f"{base}_read_{step}"), self.names(
                f"{base}_add_{step}")
            insns += [
                Assignment(id=read_id, assignee=prim.Variable(tmp),
                           expression=prim.If(prim.Comparison(lane, ">=", step),
                                              at(prim.Sum((lane, -step))), identity),
                           within_inames=outer, depends_on=frozenset({prev}),
                           predicates=self.insn.predicates),
                Assignment(id=write_id, assignee=at(lane),
                           expression=prim.If(prim.Comparison(lane, ">=", step), merge_partials(
                               expr.operation, at(lane), prim.Variable(tmp)), at(lane)),
                           within_inames=outer, depends_on=frozenset({read_id}),
                           predicates=self.insn.predicates)]
            prev = write_id
            step *= 2
        self.new_insns += insns
        self.final_deps.add(prev)
        return at(mine)

    def _arg_reduction(self, expr: Reduction):
        """The first index where the value is largest (smallest); NaN counts as
        largest, as in NumPy. With a ``(value, index)`` pair, the index
        expression's value at that iteration instead of the iname."""
        if len(expr.inames) != 1:
            raise KernelcoreError(f"{expr.operation} reduces over exactly one iname, got "
                                  f"{', '.join(expr.inames)} (was its iname split?)")
        (iname,) = expr.inames
        value_expr, index_expr = expr.expr if isinstance(expr.expr, tuple) else (
            expr.expr, None)
        if index_expr is not None and isinstance(self.knl.iname_tags.get(iname), LocalIndexTag):
            raise KernelcoreError(f"{expr.operation} of an index expression over parallel "
                                  f"iname '{iname}' is not supported; keep it sequential")
        dtype = self.types(value_expr).dtype
        op = "max" if expr.operation == "argmax" else "min"
        val = self.names(f"acc_{iname}_val")
        idx = self.names(f"acc_{iname}_idx")
        self.new_temps[val] = TemporaryVariable(val, dtype, (), address_space=AddressSpace.PRIVATE)
        self.new_temps[idx] = TemporaryVariable(idx, self.knl.index_dtype, (),
                                                address_space=AddressSpace.PRIVATE)
        within = self.outer_inames
        base = f"{self.insn.id}_{val}"
        inner = self.rec(value_expr)
        ids = [self.names(f"{base}_{s}") for s in ("init", "init_idx", "idx", "update")]
        v, i = prim.Variable(val), prim.Variable(idx)
        better = arg_better(op, dtype, inner, v, i)
        self.new_insns += [
            Assignment(id=ids[0], assignee=v, expression=reduction_identity(op, dtype),
                       within_inames=within, depends_on=frozenset(),
                       predicates=self.insn.predicates),
            Assignment(id=ids[1], assignee=i, expression=-1, within_inames=within,
                       depends_on=frozenset(), predicates=self.insn.predicates),
            Assignment(id=ids[2], assignee=i, expression=prim.If(better, prim.Variable(iname), i),
                       within_inames=within | {iname},
                       depends_on=self.insn.depends_on | {ids[0], ids[1]},
                       predicates=self.insn.predicates),
            Assignment(id=ids[3], assignee=v, expression=prim.If(better, inner, v),
                       within_inames=within | {iname},
                       depends_on=self.insn.depends_on | {ids[2]},
                       predicates=self.insn.predicates)]
        if isinstance(self.knl.iname_tags.get(iname), LocalIndexTag):
            return self._arg_tree(op, dtype, val, idx, ids[3], iname)
        if index_expr is None:
            self.final_deps.add(ids[3])
            return i
        # the index expression at the chosen iteration, kept next to it
        at = self.names(f"acc_{iname}_at")
        self.new_temps[at] = TemporaryVariable(at, self.types(index_expr).dtype, (),
                                               address_space=AddressSpace.PRIVATE)
        keep = self.names(f"{base}_at")
        self.new_insns[-2:-2] = [Assignment(
            id=keep, assignee=prim.Variable(at),
            expression=prim.If(better, self.rec(index_expr), prim.Variable(at)),
            within_inames=within | {iname}, depends_on=self.insn.depends_on | {ids[0], ids[1]},
            predicates=self.insn.predicates)]
        # (decided before the index and the value move on)
        self.new_insns[-2] = self.new_insns[-2].copy(
            depends_on=self.new_insns[-2].depends_on | {keep})
        self.final_deps.update({ids[3], keep})
        return prim.Variable(at)

    def _arg_tree(self, op, dtype, val, idx, update_id, lane_iname):
        """Combine the work-items' (value, index) pairs through local memory:
        the better value wins, the lower index among equal ones."""
        axis = self.knl.iname_tags[lane_iname].axis
        within = self.outer_inames
        vbuf, vat, _, size = self._local_buffer(f"{val}_buf", dtype, lane_iname, within)
        _, iat, _, _ = self._local_buffer(f"{idx}_buf", self.knl.index_dtype, lane_iname,
                                          within)
        lane = lane_index(axis)
        base = f"{self.insn.id}_{vbuf}"
        store = [self.names(f"{base}_store"), self.names(f"{base}_store_idx")]
        insns = [Assignment(id=store[0], assignee=vat(lane), expression=prim.Variable(val),
                            within_inames=within, depends_on=frozenset({update_id}),
                            predicates=self.insn.predicates),
                 Assignment(id=store[1], assignee=iat(lane), expression=prim.Variable(idx),
                            within_inames=within, depends_on=frozenset({update_id}),
                            predicates=self.insn.predicates)]
        prev = set(store)
        stride = _tree_start(size)
        while stride >= 1:
            take = self.names(f"{idx}_take_{stride}")
            self.new_temps[take] = TemporaryVariable(take, np.dtype(np.int8), (),
                                                     address_space=AddressSpace.PRIVATE)
            other = prim.Sum((lane, stride))
            mine_v, mine_i, their_v, their_i = vat(lane), iat(lane), vat(other), iat(other)
            # (ties, NaNs among them, go to the lower index: the halves of a
            # tree step are interleaved)
            same = prim.Comparison(their_v, "==", mine_v)
            if dtype.kind == "f":
                same = prim.LogicalOr((same, prim.LogicalAnd((
                    prim.Call(prim.Variable("isnan"), (their_v,)),
                    prim.Call(prim.Variable("isnan"), (mine_v,))))))
            better = prim.LogicalAnd((prim.Comparison(their_i, "!=", -1), prim.LogicalOr((
                arg_better(op, dtype, their_v, mine_v, mine_i),
                prim.LogicalAnd((same, prim.Comparison(their_i, "<", mine_i)))))))
            preds = self.insn.predicates | {prim.Comparison(lane, "<", stride)} | (
                {prim.Comparison(other, "<", size)} if size & (size - 1) else set())
            ids = [self.names(f"{base}_take_{stride}"), self.names(f"{base}_val_{stride}"),
                   self.names(f"{base}_idx_{stride}")]
            insns += [
                Assignment(id=ids[0], assignee=prim.Variable(take), expression=better,
                           within_inames=within, depends_on=frozenset(prev),
                           predicates=preds),
                Assignment(id=ids[1], assignee=mine_v,
                           expression=prim.If(prim.Variable(take), their_v, mine_v),
                           within_inames=within, depends_on=frozenset({ids[0]}),
                           predicates=preds),
                Assignment(id=ids[2], assignee=mine_i,
                           expression=prim.If(prim.Variable(take), their_i, mine_i),
                           within_inames=within, depends_on=frozenset({ids[0]}),
                           predicates=preds)]
            prev = {ids[1], ids[2]}
            stride //= 2
        self.new_insns += insns
        self.final_deps.update(prev)
        self.lane_axes.add(axis)
        return iat(0)

    def _segmented(self, expr: Reduction):
        """A segmented reduction ``reduce(segmented(op), j, value, flag)``, run
        sequentially: a nonzero flag starts a new segment (the running value
        restarts at its value); ``segmented_flag(op)`` gives whether any flag
        was set."""
        op = expr.operation[expr.operation.index("(") + 1:-1]
        want_flag = expr.operation.startswith("segmented_flag(")
        for iname in expr.inames:
            if self.knl.iname_tags.get(iname) is not None:
                raise KernelcoreError(f"segmented {op} over tagged iname '{iname}' is not "
                                      "supported; keep it sequential")
        value, flag = (self.rec(e) for e in expr.expr)
        dtype = self.types(expr.expr[1] if want_flag else expr.expr[0]).dtype
        acc = self.names(f"acc_{'_'.join(expr.inames)}_{'flag' if want_flag else 'seg'}")
        self.new_temps[acc] = TemporaryVariable(acc, dtype, (),
                                                address_space=AddressSpace.PRIVATE)
        a = prim.Variable(acc)
        init_id = self.names(f"{self.insn.id}_{acc}_init")
        update_id = self.names(f"{self.insn.id}_{acc}_update")
        update = (prim.BitwiseOr((a, flag)) if want_flag else
                  prim.If(prim.Comparison(flag, "!=", 0), value, combine_value(op, a, value)))
        self.new_insns += [
            Assignment(id=init_id, assignee=a,
                       expression=dtype.type(0) if want_flag else reduction_identity(op, dtype),
                       within_inames=self.outer_inames, depends_on=frozenset(),
                       predicates=self.insn.predicates),
            Assignment(id=update_id, assignee=a, expression=update,
                       within_inames=self.outer_inames | frozenset(expr.inames),
                       depends_on=self.insn.depends_on | {init_id},
                       predicates=self.insn.predicates)]
        self.final_deps.add(update_id)
        return a

    def _local_buffer(self, name: str, dtype, lane_iname: str, outer: frozenset):
        """A local-memory buffer with one element per work-item of the group:
        its name, ``at(index)`` (the element of this work-item's position
        along *lane_iname*'s axis given by *index*), and the lowest value and
        extent of *lane_iname*."""
        lo, hi = static_range(self.knl, lane_iname)
        others = [n for n in sorted(outer, key=self.knl.all_inames().index)
                  if isinstance(self.knl.iname_tags.get(n), LocalIndexTag)]
        ranges = [static_range(self.knl, n) for n in others]
        # (one element per work-item along the axis: other inames of the axis
        # may make the group longer than this one, and every lane writes)
        group = self._group_length(self.knl.iname_tags[lane_iname].axis)
        buf = self.names(name)
        self.new_temps[buf] = TemporaryVariable(
            buf, dtype, tuple(h - low + 1 for low, h in ranges) + (max(hi - lo + 1, group),),
            address_space=AddressSpace.LOCAL)
        prefix = tuple(prim.Sum((prim.Variable(n), -low)) if low else prim.Variable(n)
                       for n, (low, _) in zip(others, ranges))

        def at(index):
            return prim.Subscript(prim.Variable(buf), prefix + (index,))

        return buf, at, lo, hi - lo + 1

    def _group_length(self, axis: int) -> int:
        """The longest constant range of the inames along the work-group's
        *axis* (those of parametric length do not count)."""
        lengths = [1]
        for n, tag in self.knl.iname_tags.items():
            if isinstance(tag, LocalIndexTag) and tag.axis == axis:
                try:
                    low, high = static_range(self.knl, n)
                except KernelcoreError:
                    continue
                lengths.append(high - low + 1)
        return max(lengths)

    def _tree(self, op, dtype, acc, update_id, lane_iname):
        """Combine the work-items' partial results through local memory."""
        axis = self.knl.iname_tags[lane_iname].axis
        within = self.outer_inames
        buf, at, _, size = self._local_buffer(f"{acc}_buf", dtype, lane_iname, within)
        lane = lane_index(axis)
        store_id = self.names(f"{self.insn.id}_{acc}_store")
        insns = [Assignment(id=store_id, assignee=at(lane), expression=prim.Variable(acc),
                            within_inames=within, depends_on=frozenset({update_id}),
                            predicates=self.insn.predicates)]
        prev = store_id
        stride = _tree_start(size)
        while stride >= 1:
            step_id = self.names(f"{self.insn.id}_{acc}_tree_{stride}")
            insns.append(Assignment(
                id=step_id, assignee=at(lane),
                expression=merge_partials(op, at(lane), at(prim.Sum((lane, stride)))),
                within_inames=within, depends_on=frozenset({prev}),
                predicates=self.insn.predicates | {prim.Comparison(lane, "<", stride)}
                | ({prim.Comparison(prim.Sum((lane, stride)), "<", size)}
                   if size & (size - 1) else set())))
            prev = step_id
            stride //= 2
        self.new_insns += insns
        self.final_deps.add(prev)
        self.lane_axes.add(axis)
        return at(0)


def realize_reduction(knl: LoopKernel) -> LoopKernel:
    """A copy of the (typed) kernel without Reduction nodes."""
    dtypes, weak = kernel_type_context(knl)
    types = TypeInferenceMapper(dtypes, weak, knl.callables, knl.index_dtype)
    names = UniqueNameGenerator(set(dtypes) | {i.id for i in knl.instructions})
    new_insns = []
    temps = dict(knl.temporary_variables)
    changed = False
    for insn in knl.instructions:
        if not isinstance(insn, Assignment):
            new_insns.append(insn)
            continue
        realizer = _Realizer(knl, insn, types, names)
        expr = realizer(insn.expression)
        if not realizer.new_insns and expr == insn.expression:
            new_insns.append(insn)
            continue
        changed = True
        temps.update(realizer.new_temps)
        new_insns += realizer.new_insns
        final = insn.copy(expression=expr, depends_on=insn.depends_on | realizer.final_deps)
        target = None if insn.assignee is None else knl.temporary_variables.get(
            assignee_var_name(insn.assignee))
        shared = target is None or target.address_space in (AddressSpace.LOCAL,
                                                             AddressSpace.GLOBAL)
        if realizer.lane_axes and shared:
            # every work-item holds the result; one of them stores it
            final = final.copy(predicates=final.predicates | {
                prim.Comparison(lane_index(a), "==", 0) for a in realizer.lane_axes})
        new_insns.append(final)
    if not changed:
        return knl
    return knl.copy(instructions=tuple(new_insns), temporary_variables=temps)


def _tree_start(size: int) -> int:
    """The first stride of a tree combining *size* work-items' values: the
    largest power of two below *size* (0 for one work-item)."""
    stride = 1
    while stride < size:
        stride *= 2
    return stride // 2
