"""Counting memory accesses and their strides (:func:`get_mem_access_map`).

Public names: get_mem_access_map.
"""


from __future__ import annotations

from typing import TYPE_CHECKING, Any

import islpy as isl
import numpy as np
import pymbolic.primitives as prim
from pymbolic.mapper import Mapper

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import AddressSpace, ArrayArg, TemporaryVariable
from kernelcore.ir.expr import get_dependencies
from kernelcore.ir.instruction import Assignment
from kernelcore.ir.simplify import simplify
from kernelcore.ir.tags import GroupIndexTag, LocalIndexTag
from kernelcore.match import parse_match
from kernelcore.statistics.common import _Grid, _InsnCounter, _prepare, _process_subgroup_size
from kernelcore.statistics.countmap import ToCountMap
from kernelcore.statistics.counts import CountGranularity
from kernelcore.statistics.keys import MemAccess

if TYPE_CHECKING:
    from kernelcore.ir.kernel import LoopKernel
    from kernelcore.translation_unit import TranslationUnit

dim_type = isl.dim_type


# {{{ memory accesses

def _variable_tags(var) -> frozenset | None:
    return getattr(var, "tags", None) or None


class _AccessFinder(Mapper):
    """Collect (variable name, index tuple or None) for the reads of an
    expression, nested subscripts included."""

    def __init__(self, names):
        self.names = names
        self.found: list[tuple[str, tuple | None]] = []
        #: the tags of each found access's variable (``a$tag``), or None
        self.tags: list[frozenset | None] = []

    def map_constant(self, expr):
        pass

    map_nan = map_constant

    def map_variable(self, expr):
        if expr.name in self.names:
            self.found.append((expr.name, None))
            self.tags.append(_variable_tags(expr))

    def map_subscript(self, expr):
        idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        name = getattr(expr.aggregate, "name", None)
        if name in self.names:
            self.found.append((name, tuple(idx)))
            self.tags.append(_variable_tags(expr.aggregate))
        else:
            self.rec(expr.aggregate)
        for i in idx:
            self.rec(i)

    def _children(self, children):
        for c in children:
            self.rec(c)

    def map_sum(self, expr):
        self._children(expr.children)

    map_product = map_bitwise_or = map_bitwise_and = map_bitwise_xor = map_sum
    map_logical_or = map_logical_and = map_min = map_max = map_sum

    def map_quotient(self, expr):
        self._children((expr.numerator, expr.denominator))

    map_floor_div = map_remainder = map_quotient

    def map_power(self, expr):
        self._children((expr.base, expr.exponent))

    def map_left_shift(self, expr):
        self._children((expr.shiftee, expr.shift))

    map_right_shift = map_left_shift

    def map_bitwise_not(self, expr):
        self.rec(expr.child)

    map_logical_not = map_type_cast = map_common_subexpression = map_bitwise_not

    def map_comparison(self, expr):
        self._children((expr.left, expr.right))

    def map_if(self, expr):
        self._children((expr.condition, expr.then, expr.else_))

    def map_call(self, expr):
        self._children(expr.parameters)

    def map_reduction(self, expr):
        self.rec(expr.expr)


class _NotAffine(Exception):
    pass


def _coefficient(expr, iname: str):
    """The coefficient of *iname* in *expr* if *expr* is affine in it."""
    if isinstance(expr, prim.Variable):
        return 1 if expr.name == iname else 0
    if isinstance(expr, (int, float, np.number)) or iname not in get_dependencies(expr):
        return 0
    if isinstance(expr, prim.Sum):
        return _add_exprs([_coefficient(c, iname) for c in expr.children])
    if isinstance(expr, prim.Product):
        dep = [c for c in expr.children if not isinstance(c, (int, float, np.number))
               and iname in get_dependencies(c)]
        if len(dep) != 1:
            raise _NotAffine()
        coeff = _coefficient(dep[0], iname)
        for c in expr.children:
            if c is not dep[0]:
                coeff = _mul_exprs(coeff, c)
        return coeff
    raise _NotAffine()


def _add_exprs(items):
    nums = sum(i for i in items if isinstance(i, (int, np.integer)))
    rest = [i for i in items if not isinstance(i, (int, np.integer))]
    if not rest:
        return int(nums)
    parts = rest + ([int(nums)] if nums else [])
    return parts[0] if len(parts) == 1 else prim.Sum(tuple(parts))


def _mul_exprs(a, b):
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        return int(a) * int(b)
    if isinstance(a, (int, np.integer)) and a == 0 or \
            isinstance(b, (int, np.integer)) and b == 0:
        return 0
    if isinstance(a, (int, np.integer)) and a == 1:
        return b
    if isinstance(b, (int, np.integer)) and b == 1:
        return a
    return prim.Product((a, b))


def _tidy_stride(expr):
    if isinstance(expr, (int, np.integer)) or expr is None:
        return expr if expr is None else int(expr)
    return simplify(expr)


def _array_strides(array, nindex: int) -> tuple:
    if isinstance(array.shape, tuple) and len(array.shape) == nindex:
        try:
            return tuple(array.element_strides())
        except Exception:
            pass
    if nindex <= 1:
        return (1,) * nindex
    raise KernelcoreError(f"cannot find the strides of '{array.name}' for a "
                          f"{nindex}-index access")


def _hw_strides(knl, array, index: tuple | None):
    """(lid_strides, gid_strides): the stride of the flat element index along
    each local/group axis whose iname the index uses."""
    if index is None:
        return {}, {}
    deps: set[str] = set()
    for i in index:
        deps |= get_dependencies(i)
    lid: dict[int, Any]
    gid: dict[int, Any]
    lid, gid = {}, {}
    strides = None
    for iname in sorted(deps & set(knl.all_inames())):
        tag = knl.iname_tags.get(iname)
        if not isinstance(tag, (LocalIndexTag, GroupIndexTag)):
            continue
        if strides is None:
            strides = _array_strides(array, len(index))
        try:
            total = 0
            for idx, stride in zip(index, strides):
                total = _add_exprs([total, _mul_exprs(_coefficient(idx, iname), stride)])
            total = _tidy_stride(total)
        except _NotAffine:
            total = None
        (lid if isinstance(tag, LocalIndexTag) else gid)[tag.axis] = total
    return lid, gid


def _memory_variables(knl) -> dict[str, tuple[str, Any]]:
    """name -> (mtype, variable) for the arrays in global or local memory."""
    result: dict[str, tuple[str, Any]] = {}
    for a in knl.args:
        if isinstance(a, ArrayArg):
            result[a.name] = ("global", a)
    for name, tv in knl.temporary_variables.items():
        if isinstance(tv, TemporaryVariable):
            if tv.address_space == AddressSpace.GLOBAL:
                result[name] = ("global", tv)
            elif tv.address_space == AddressSpace.LOCAL:
                result[name] = ("local", tv)
    return result


def get_mem_access_map(knl: LoopKernel | TranslationUnit, subgroup_size: Any = None,
                       count_redundant_work: bool = False, within: Any = None,
                       exact_counts: bool | None = None) -> ToCountMap:
    """Count the global and local memory accesses of *knl*: a
    :class:`ToCountMap` from :class:`MemAccess` to :class:`Count`.

    Every array reference counts once per execution (loads of an element used
    twice in one expression count twice). A global access whose address changes
    with local id 0 is counted per work-item, any other per sub-group; local
    memory accesses are counted per sub-group. *within*: count only the
    instructions it matches (see :mod:`kernelcore.match`).

    *exact_counts*: count the points of non-box domains exactly (True) or
    estimate them as loopy does without barvinok (False); None: as loopy
    (see :mod:`kernelcore.statistics.footprint`).
    """
    knl = _prepare(knl)
    grid = _Grid(knl, _process_subgroup_size(subgroup_size))
    times = _InsnCounter(knl, grid, count_redundant_work, exact_counts)
    variables = _memory_variables(knl)
    result: dict = {}

    def record(insn, name, index, direction, tags=None):
        mtype, var = variables[name]
        lid, gid = _hw_strides(knl, var, index)
        if mtype == "local":
            g = CountGranularity.SUBGROUP
        else:
            g = CountGranularity.WORKITEM if lid.get(0, 0) != 0 \
                else CountGranularity.SUBGROUP
        key = MemAccess(mtype, var.dtype, lid, gid, direction, name, g,
                        variable_tags=tags, kernel_name=knl.name)
        n = times(insn, g)
        result[key] = result[key] + n if key in result else n

    matches = parse_match(within)
    for insn in knl.instructions:
        if not isinstance(insn, Assignment) or not matches(knl, insn):
            continue
        finder = _AccessFinder(variables)
        finder(insn.expression)
        assignee = insn.assignee
        if isinstance(assignee, prim.Subscript):
            idx = assignee.index if isinstance(assignee.index, tuple) \
                else (assignee.index,)
            for i in idx:
                finder(i)
        for (name, index), tags in zip(finder.found, finder.tags):
            record(insn, name, index, "load", tags)
        target = getattr(assignee, "name", None) or getattr(
            getattr(assignee, "aggregate", None), "name", None)
        if target in variables:
            index = None
            if isinstance(assignee, prim.Subscript):
                index = assignee.index if isinstance(assignee.index, tuple) \
                    else (assignee.index,)
            record(insn, target, index, "store", _variable_tags(
                assignee.aggregate if isinstance(assignee, prim.Subscript) else assignee))
    return ToCountMap(result)

# }}}
