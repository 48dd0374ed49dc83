"""Instruction-level parallelism: private temporaries get one copy per iteration
of an ``ilp`` iname, so the iterations no longer share (and serialize on) them.

Public names: expand_ilp_temporaries, privatize_temporaries_with_inames,
unprivatize_temporaries_with_inames.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import AddressSpace, auto
from kernelcore.ir.domain import aff_to_expr, project_to, static_range
from kernelcore.ir.expr import IdentityMapper, collect_accesses, get_dependencies
from kernelcore.ir.instruction import assignee_subscript
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.simplify import simplify
from kernelcore.ir.tags import VectorizeTag, is_lane_tag
from kernelcore.translation_unit import for_each_kernel


class _Expand(IdentityMapper):
    def __init__(self, name: str, index):
        self.name = name
        self.index = index

    def map_variable(self, expr):
        if expr.name == self.name:
            return prim.Subscript(expr, self.index)     # (one index: no tuple, as parsed)
        return expr

    def map_subscript(self, expr):
        if isinstance(expr.aggregate, prim.Variable) and expr.aggregate.name == self.name:
            idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
            return prim.Subscript(expr.aggregate, (self.index,) + tuple(self.rec(i) for i in idx))
        return super().map_subscript(expr)

    def map_constant(self, expr):
        return expr


def _indexed_by(writers, iname: str) -> bool:
    """Whether every write of a temporary is subscripted with *iname* (each
    iteration then writes its own elements already)."""
    return all(any(iname in get_dependencies(s) for s in assignee_subscript(w.assignee))
               for w in writers)


def _iname_extent(knl: LoopKernel, iname: str) -> tuple[Any, Any]:
    """(first value, number of values) of *iname*: integers where the
    assumptions bound it, else expressions of the parameters (as loopy: such
    a temporary can then live in global memory only)."""
    try:
        lo, hi = static_range(knl, iname)
        return lo, hi - lo + 1
    except KernelcoreError:
        pass
    dom = project_to(knl.get_inames_domain([iname]), [iname])
    bounds: list[Any] = []
    for pw in (dom.dim_min(0), dom.dim_max(0)):
        pieces = pw.coalesce().get_pieces()
        if len(pieces) != 1:
            raise KernelcoreError(f"privatize_temporaries_with_inames: the bounds of "
                                  f"'{iname}' are not single affine expressions ({pw})")
        bounds.append(aff_to_expr(pieces[0][1]))
    first, last = bounds
    return first, simplify(prim.Sum((last, prim.Product((-1, first)), 1)))


@for_each_kernel
def privatize_temporaries_with_inames(knl: LoopKernel, privatizing_inames: Iterable[str],
                                      only_var_names: Iterable[str] | None = None) -> LoopKernel:
    """A copy of *knl* where private temporaries written inside loops over
    *privatizing_inames* get one copy per iteration (a leading axis indexed by
    the iname), so iterations no longer share them. Temporaries that every
    write already subscripts with the iname are left alone."""
    names = [s.strip() for s in privatizing_inames.split(",")] \
        if isinstance(privatizing_inames, str) else list(privatizing_inames)
    knl.check_inames(names, "privatize_temporaries_with_inames")
    only = None if only_var_names is None else (
        {s.strip() for s in only_var_names.split(",")} if isinstance(only_var_names, str)
        else set(only_var_names))
    insns = list(knl.instructions)
    temps = dict(knl.temporary_variables)
    for iname in names:
        lo, extent = _iname_extent(knl, iname)
        for name, tv in list(temps.items()):
            if tv.address_space not in (AddressSpace.PRIVATE, auto) or (
                    only is not None and name not in only):
                continue
            writers = [i for i in insns if name in i.assignee_names()]
            if not any(iname in w.within_inames for w in writers) or \
                    _indexed_by(writers, iname):
                continue
            users = [i for i in insns
                     if name in i.assignee_names() or name in i.read_dependency_names()]
            outside = [u.id for u in users if iname not in u.within_inames]
            if outside:
                raise KernelcoreError(
                    f"temporary '{name}' is written inside loop '{iname}' but used by "
                    f"instruction(s) {', '.join(outside)} outside it: it cannot get one "
                    "copy per iteration")
            index = prim.Variable(iname) if lo == 0 else prim.Sum(
                (prim.Variable(iname), prim.Product((-1, lo))))
            mapper = _Expand(name, index)
            insns = [i.with_transformed_expressions(mapper) if i in users else i
                     for i in insns]
            temps[name] = tv.copy(shape=(extent,) + tuple(tv.shape))
    return knl.copy(instructions=tuple(insns), temporary_variables=temps)


def expand_ilp_temporaries(knl: LoopKernel) -> LoopKernel:
    """A copy of *knl* where private temporaries written inside ``ilp`` and
    ``vec`` loops have an extra leading axis indexed by that loop's iname."""
    ilp = [n for n in knl.all_inames() if is_lane_tag(knl.iname_tags.get(n))]
    if not ilp:
        return knl
    # vec inames first: each expansion adds a leading axis, so theirs ends up
    # last, where consecutive lanes are neighbours (one vector)
    ilp.sort(key=lambda n: not isinstance(knl.iname_tags.get(n), VectorizeTag))
    return privatize_temporaries_with_inames(knl, ilp)


class _Drop(IdentityMapper):
    """Accesses to *name* without axis *axis*."""

    def __init__(self, name: str, axis: int):
        self.name = name
        self.axis = axis

    def map_subscript(self, expr):
        if isinstance(expr.aggregate, prim.Variable) and expr.aggregate.name == self.name:
            idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
            rest = tuple(self.rec(i) for k, i in enumerate(idx) if k != self.axis)
            if not rest:
                return expr.aggregate
            return prim.Subscript(expr.aggregate, rest[0] if len(rest) == 1 else rest)
        return super().map_subscript(expr)

    def map_constant(self, expr):
        return expr


def _privatized_axis(knl: LoopKernel, insns, name: str, iname: str) -> int | None:
    """The axis of temporary *name* that every access indexes with exactly
    *iname* (None: no access uses *iname*); raise if the accesses disagree."""
    indices = [idx for _, idx, _ in collect_accesses(insns).accesses
               if _ == name] + [tuple(assignee_subscript(i.assignee)) for i in insns
                                if name in i.assignee_names()]
    axes = {tuple(k for k, ix in enumerate(idx) if ix == prim.Variable(iname))
            for idx in indices}
    uses = any(iname in get_dependencies(ix) for idx in indices for ix in idx)
    if not uses:
        return None
    if len(axes) != 1 or len(next(iter(axes))) != 1:
        raise KernelcoreError(
            f"unprivatize_temporaries_with_inames: '{name}' is not indexed by '{iname}' "
            "along one and the same axis in every access")
    return next(iter(axes))[0]


@for_each_kernel
def unprivatize_temporaries_with_inames(knl: LoopKernel, unprivatizing_inames: Iterable[str],
                                        only_var_names: Iterable[str] | None = None
                                        ) -> LoopKernel:
    """The inverse of :func:`privatize_temporaries_with_inames`: private
    temporaries with an axis indexed by one of *unprivatizing_inames* (the
    same axis in every access) lose that axis, so all iterations share one
    copy."""
    names = [s.strip() for s in unprivatizing_inames.split(",")] \
        if isinstance(unprivatizing_inames, str) else list(unprivatizing_inames)
    knl.check_inames(names, "unprivatize_temporaries_with_inames")
    only = None if only_var_names is None else (
        {s.strip() for s in only_var_names.split(",")} if isinstance(only_var_names, str)
        else set(only_var_names))
    insns = list(knl.instructions)
    temps = dict(knl.temporary_variables)
    for name, tv in list(temps.items()):
        if tv.address_space not in (AddressSpace.PRIVATE, auto) or (
                only is not None and name not in only):
            continue
        for iname in names:
            axis = _privatized_axis(knl, insns, name, iname)
            if axis is None:
                continue
            mapper = _Drop(name, axis)
            insns = [i.with_transformed_expressions(mapper) for i in insns]
            shape = tv.shape if tv.shape is auto else \
                tuple(s for k, s in enumerate(tv.shape) if k != axis)
            if shape is auto and not any(
                    name == n and idx for n, idx, _ in collect_accesses(insns).accesses):
                shape = ()
            tv = tv.copy(shape=shape)
        temps[name] = tv
    return knl.copy(instructions=tuple(insns), temporary_variables=temps)
