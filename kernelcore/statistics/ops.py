"""Counting arithmetic operations (:func:`get_op_map`).

Public names: get_op_map.
"""


from __future__ import annotations

from typing import TYPE_CHECKING, Any

import islpy as isl
import numpy as np
from pymbolic.mapper import Mapper

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.instruction import Assignment
from kernelcore.match import parse_match
from kernelcore.statistics.common import _Grid, _InsnCounter, _prepare, _process_subgroup_size
from kernelcore.statistics.countmap import ToCountMap
from kernelcore.statistics.counts import CountGranularity
from kernelcore.statistics.keys import Op
from kernelcore.types import TypeInferenceMapper, kernel_type_context

if TYPE_CHECKING:
    from kernelcore.ir.kernel import LoopKernel
    from kernelcore.translation_unit import TranslationUnit

dim_type = isl.dim_type


# {{{ operations

class _OpCounter(Mapper):
    """expression -> {(dtype, op name): multiplicity} for one evaluation."""

    def __init__(self, type_of, count_within_subscripts: bool):
        self.type_of = type_of
        self.count_within_subscripts = count_within_subscripts

    @staticmethod
    def _merge(*dicts) -> dict:
        result: dict = {}
        for d in dicts:
            for k, v in d.items():
                result[k] = result.get(k, 0) + v
        return {k: v for k, v in result.items() if v}

    def _op(self, expr, name: str, n: int, children) -> dict:
        own = {(self.type_of(expr), name): n} if n > 0 else {}
        return self._merge(own, *(self.rec(c) for c in children))

    def map_constant(self, expr) -> dict:
        return {}

    map_variable = map_nan = map_constant

    def map_subscript(self, expr) -> dict:
        if not self.count_within_subscripts:
            return {}
        idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        return self._merge(*(self.rec(i) for i in idx))

    def map_sum(self, expr) -> dict:
        return self._op(expr, "add", len(expr.children) - 1, expr.children)

    def map_product(self, expr) -> dict:
        # multiplying by -1 is a negation (it is how subtraction is spelled)
        kept = [c for c in expr.children if not _is_minus_one(c)]
        return self._op(expr, "mul", len(kept) - 1, expr.children)

    def map_quotient(self, expr) -> dict:
        return self._op(expr, "div", 1, (expr.numerator, expr.denominator))

    map_floor_div = map_remainder = map_quotient

    def map_power(self, expr) -> dict:
        return self._op(expr, "pow", 1, (expr.base, expr.exponent))

    def map_left_shift(self, expr) -> dict:
        return self._op(expr, "shift", 1, (expr.shiftee, expr.shift))

    map_right_shift = map_left_shift

    def map_bitwise_not(self, expr) -> dict:
        return self._op(expr, "bw", 1, (expr.child,))

    def map_bitwise_or(self, expr) -> dict:
        return self._op(expr, "bw", len(expr.children) - 1, expr.children)

    map_bitwise_and = map_bitwise_xor = map_bitwise_or

    def map_comparison(self, expr) -> dict:
        return self._merge(self.rec(expr.left), self.rec(expr.right))

    def map_logical_not(self, expr) -> dict:
        return self.rec(expr.child)

    def map_logical_or(self, expr) -> dict:
        return self._merge(*(self.rec(c) for c in expr.children))

    map_logical_and = map_logical_or

    def map_if(self, expr) -> dict:
        # both branches are counted (as loopy does)
        return self._merge(self.rec(expr.condition), self.rec(expr.then),
                           self.rec(expr.else_))

    def map_min(self, expr) -> dict:
        return self._op(expr, "minimum", len(expr.children) - 1, expr.children)

    def map_max(self, expr) -> dict:
        return self._op(expr, "maximum", len(expr.children) - 1, expr.children)

    def map_call(self, expr) -> dict:
        return self._op(expr, f"func:{expr.function.name}", 1, expr.parameters)

    def map_type_cast(self, expr) -> dict:
        return self.rec(expr.child)

    def map_common_subexpression(self, expr) -> dict:
        return self.rec(expr.child)

    def map_reduction(self, expr) -> dict:
        raise KernelcoreError("op counting found an unrealized reduction "
                              f"({expr}); count a preprocessed kernel")


def _is_minus_one(c) -> bool:
    return isinstance(c, (int, float, np.integer, np.floating)) \
        and not isinstance(c, bool) and c == -1


def _type_function(knl):
    dtypes, weak = kernel_type_context(knl)
    for p in knl.all_params():
        if dtypes.get(p) is None:
            dtypes[p] = knl.index_dtype
    mapper = TypeInferenceMapper(dtypes, set(weak), knl.callables, knl.index_dtype)

    def type_of(expr):
        return mapper(expr).dtype
    return type_of


def get_op_map(knl: LoopKernel | TranslationUnit, subgroup_size: Any = None,
               count_redundant_work: bool = False, count_within_subscripts: bool = True,
               within: Any = None, exact_counts: bool | None = None) -> ToCountMap:
    """Count the arithmetic operations of *knl*: a :class:`ToCountMap` from
    :class:`Op` to :class:`Count`.

    *count_redundant_work*: also count work repeated along hardware axes an
    instruction does not use (otherwise such work is counted once).
    *count_within_subscripts*: count the index arithmetic of array subscripts.
    *within*: count only the instructions it matches (see :mod:`kernelcore.match`).

    *exact_counts*: count the points of non-box domains exactly (True) or
    estimate them as loopy does without barvinok (False); None: as loopy
    (see :mod:`kernelcore.statistics.footprint`).
    """
    knl = _prepare(knl)
    grid = _Grid(knl, _process_subgroup_size(subgroup_size))
    times = _InsnCounter(knl, grid, count_redundant_work, exact_counts)
    counter = _OpCounter(_type_function(knl), count_within_subscripts)
    result: dict = {}
    g = CountGranularity.SUBGROUP
    matches = parse_match(within)
    for insn in knl.instructions:
        if not isinstance(insn, Assignment) or not matches(knl, insn):
            continue
        ops = counter._merge(counter(insn.assignee), counter(insn.expression))
        if not ops:
            continue
        n = times(insn, g)
        for (dtype, name), mult in ops.items():
            key = Op(dtype, name, g, kernel_name=knl.name)
            add = n * mult
            result[key] = result[key] + add if key in result else add
    return ToCountMap(result)

# }}}
