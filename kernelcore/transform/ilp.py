"""Instruction-level parallelism: private temporaries get one copy per iteration
of an ``ilp`` iname, so the iterations no longer share (and serialize on) them.

Public names: expand_ilp_temporaries, privatize_temporaries_with_inames.
"""

from __future__ import annotations

from collections.abc import Iterable

import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import AddressSpace, auto
from kernelcore.ir.domain import static_range
from kernelcore.ir.expr import IdentityMapper, get_dependencies
from kernelcore.ir.instruction import assignee_subscript
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.tags import VectorizeTag, is_lane_tag
from kernelcore.translation_unit import for_each_kernel


class _Expand(IdentityMapper):
    def __init__(self, name: str, index):
        self.name = name
        self.index = index

    def map_variable(self, expr):
        if expr.name == self.name:
            return prim.Subscript(expr, (self.index,))
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
        lo, hi = static_range(knl, iname)
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
            index = prim.Variable(iname) if lo == 0 else prim.Sum((prim.Variable(iname), -lo))
            mapper = _Expand(name, index)
            insns = [i.with_transformed_expressions(mapper) if i in users else i
                     for i in insns]
            temps[name] = tv.copy(shape=(hi - lo + 1,) + tuple(tv.shape))
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
