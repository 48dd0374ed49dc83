"""Access footprints (which elements of each array a kernel reads and writes)
and loopy's point counts of integer sets.

loopy counts the points of a set exactly when islpy has barvinok
(``isl.BasicSet.card``); otherwise it estimates: the set is cut into disjoint
basic sets, and each counts as the product over its dimensions of
``(max - min + stride) / stride``, the size of its bounding box with the
dimension's simple stride. :func:`count` and the counters' ``exact_counts=None``
do the same: exact with barvinok, loopy's estimate without (exact on boxes,
an overestimate on triangles and other non-boxes).

Public names: gather_access_footprints, count, estimated_count, point_count,
EXACT_BY_DEFAULT.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import islpy as isl
import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.domain import NotAffineError, expr_to_pw_aff, project_to
from kernelcore.ir.expr import WalkMapper
from kernelcore.ir.instruction import Assignment, assignee_subscript
from kernelcore.ir.kernel import LoopKernel
from kernelcore.preprocess import preprocess_kernel
from kernelcore.statistics.counts import Count
from kernelcore.translation_unit import TranslationUnit

dim_type = isl.dim_type

#: whether counts are exact unless told otherwise (loopy's rule: when islpy
#: has barvinok)
EXACT_BY_DEFAULT = hasattr(isl.BasicSet, "card")


def estimated_count(s: isl.Set | isl.BasicSet) -> Count:
    """loopy's count of the points of *s* without barvinok: per disjoint basic
    set, the product of each dimension's ``(max - min + stride) / stride``."""
    if isinstance(s, isl.BasicSet):
        s = s.to_set()
    if s.dim(dim_type.set) and s.coalesce().n_basic_set() == 1 and s.is_box():
        return Count.points(s)          # the estimate is exact
    total = Count.zero()
    for bset in s.make_disjoint().get_basic_sets():
        n = bset.dim(dim_type.set)
        if n == 0 or bset.is_empty():
            continue
        as_set = bset.to_set()
        if as_set.is_box():
            total = total + Count.points(as_set)
            continue
        factors = []
        denominator = 1
        for i in range(n):
            stride = as_set.get_stride(i)
            stride_int = int(stride.to_python()) if stride.is_int() else 1
            length = as_set.dim_max(i) - as_set.dim_min(i)
            length = length.add_constant_val(isl.Val.int_from_si(length.get_ctx(), stride_int))
            factors.append(length)
            denominator *= stride_int
        total = total + Count([(Fraction(1, denominator), tuple(factors))])
    return total


def point_count(s: isl.Set | isl.BasicSet, exact: bool | None = None) -> Count:
    """The number of points of *s*: exact, or loopy's estimate (see the module
    doc); *exact* None follows :data:`EXACT_BY_DEFAULT`."""
    if exact is None:
        exact = EXACT_BY_DEFAULT
    return Count.points(s) if exact else estimated_count(s)


def count(kernel: Any, s: isl.Set | isl.BasicSet, space: Any = None) -> Count:
    """loopy's ``count(kernel, set)``: the number of points of *s* (a set over
    the kernel's parameters), exact or estimated as loopy would."""
    del kernel, space       # (loopy aligns the parameters; counts need no alignment)
    return point_count(s)


# {{{ footprints

class _SubscriptFinder(WalkMapper):
    def __init__(self) -> None:
        self.found: list[prim.Subscript] = []

    def map_subscript(self, expr: prim.Subscript) -> None:
        if isinstance(expr.aggregate, prim.Variable):
            self.found.append(expr)
        self.rec(expr.index)


def _access_range(domain: isl.Set, subscript: tuple, what: Any) -> isl.Set:
    """The indices *subscript* takes over the points of *domain*."""
    n = domain.dim(dim_type.set)
    dims = [f"_kc_fp{k}" for k in range(len(subscript))]
    ext = domain.insert_dims(dim_type.set, n, len(dims))
    for k, d in enumerate(dims):
        ext = ext.set_dim_name(dim_type.set, n + k, d)
    for k, idx in enumerate(subscript):
        try:
            value = expr_to_pw_aff(idx, ext.space)
        except (NotAffineError, isl.Error, TypeError) as err:
            raise KernelcoreError(f"failed to gather footprint: {what}") from err
        ext = ext & expr_to_pw_aff(prim.Variable(dims[k]), ext.space).eq_set(value)
    return project_to(ext, dims)


def gather_access_footprints(program: Any, ignore_uncountable: bool = False,
                             entrypoint: str | None = None) -> dict[tuple[str, str], isl.Set]:
    """``(array name, "read" or "write")`` -> the set of indices of that array
    the kernel reads or writes (over the domain parameters)."""
    knl = program
    if isinstance(knl, TranslationUnit):
        knl = knl[entrypoint] if entrypoint is not None else knl.default_entrypoint
    assert isinstance(knl, LoopKernel)
    knl = preprocess_kernel(knl)
    result: dict[tuple[str, str], isl.Set] = {}

    def add(name: str, direction: str, fp: isl.Set) -> None:
        key = (name, direction)
        if key in result:
            fp = fp.align_params(result[key].space)
            result[key] = (result[key].align_params(fp.space) | fp).coalesce()
        else:
            result[key] = fp

    for insn in knl.instructions:
        if not isinstance(insn, Assignment):
            continue
        inames = sorted(insn.within_inames)
        domain = project_to(knl.get_inames_domain(inames), inames)
        accesses: list[tuple[str, prim.Subscript]] = []
        if isinstance(insn.assignee, prim.Subscript):
            accesses.append(("write", insn.assignee))
        finder = _SubscriptFinder()
        finder(insn.expression)
        if isinstance(insn.assignee, prim.Subscript):
            finder(insn.assignee.index)
        accesses += [("read", s) for s in finder.found]
        for direction, sub in accesses:
            index = assignee_subscript(sub)
            try:
                fp = _access_range(domain, index, sub)
            except KernelcoreError:
                if ignore_uncountable:
                    continue
                raise
            add(str(getattr(sub.aggregate, "name", sub.aggregate)), direction, fp)
    return result

# }}}
