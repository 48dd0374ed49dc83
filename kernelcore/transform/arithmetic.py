"""Arithmetic rewrites of accumulations (loopy's
``collect_common_factors_on_increment``).

Public names: collect_common_factors_on_increment.
"""

from __future__ import annotations

from typing import Any

import pymbolic.primitives as prim
from pymbolic.primitives import flattened_product, flattened_sum, is_zero

from kernelcore.diagnostic import KernelcoreError, UnknownNameError
from kernelcore.ir.expr import IdentityMapper, get_dependencies
from kernelcore.ir.instruction import Assignment
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.subst import expand_kernel_rules
from kernelcore.translation_unit import for_each_kernel


def _parts(expr: Any, cls: Any) -> tuple:
    return expr.children if isinstance(expr, cls) else (expr,)


def _index_key(expr: Any, axes: tuple[int, ...]) -> tuple:
    if isinstance(expr, prim.Subscript):
        index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        return tuple(index[a] for a in axes)
    return ()


class _ScaleUses(IdentityMapper):
    """Reads of the variable times the factors collected for their index."""

    def __init__(self, name: str, axes: tuple[int, ...], factors: dict[tuple, set]):
        self.name, self.axes, self.factors = name, axes, factors

    def _scaled(self, expr: Any) -> Any:
        found = self.factors.get(_index_key(expr, self.axes))
        return flattened_product([*sorted(found, key=str), expr]) if found else expr

    def map_variable(self, expr: prim.Variable) -> Any:
        return self._scaled(expr) if expr.name == self.name else expr

    def map_subscript(self, expr: prim.Subscript) -> Any:
        if isinstance(expr.aggregate, prim.Variable) and expr.aggregate.name == self.name:
            return self._scaled(expr)
        return super().map_subscript(expr)

    def map_constant(self, expr: Any) -> Any:
        return expr


@for_each_kernel
def collect_common_factors_on_increment(knl: LoopKernel, var_name: str,
                                        vary_by_axes: Any = ()) -> LoopKernel:
    """Take the factors common to every term added to *var_name* (by
    instructions ``v = v + a*b + ...``; assignments of zero start it) out of
    the sums, and multiply the reads of *var_name* by them instead. Updates
    are grouped by the indices along *vary_by_axes* (names or numbers of
    axes): each group has its own factors. Factors that vary within the loops
    of the updates but not around the reads stay where they are."""
    if knl.substitutions:
        knl = expand_kernel_rules(knl)
    var: Any
    if var_name in knl.temporary_variables:
        var = knl.temporary_variables[var_name]
    elif var_name in knl.arg_dict:
        var = knl.arg_dict[var_name]
    else:
        raise UnknownNameError(f"collect_common_factors_on_increment: no array called "
                               f"'{var_name}'")
    if isinstance(vary_by_axes, str):
        vary_by_axes = [a.strip() for a in vary_by_axes.split(",") if a.strip()]
    names = list(getattr(var, "dim_names", None) or ())
    axes = tuple(names.index(a) if isinstance(a, str) and a in names else a
                 for a in vary_by_axes)
    if any(not isinstance(a, int) for a in axes):
        raise KernelcoreError(f"collect_common_factors_on_increment: axes {vary_by_axes} "
                              "not understood")

    writers = [i for i in knl.instructions if var_name in i.assignee_names()]
    readers = [i for i in knl.instructions if var_name not in i.assignee_names()
               and any(var_name in get_dependencies(e) for e in i.expressions())]
    around_reads = frozenset.intersection(*(r.within_inames for r in readers)) \
        if readers else frozenset()
    factors: dict[tuple, set] = {}
    updates: list[Assignment] = []
    for insn in writers:
        if not isinstance(insn, Assignment):
            raise KernelcoreError(f"collect_common_factors_on_increment: '{var_name}' is "
                                  f"written by '{insn.id}', not an assignment")
        if is_zero(insn.expression):
            continue
        updates.append(insn)
        key = _index_key(insn.assignee, axes)
        loop_only = insn.within_inames - around_reads
        for term in _parts(insn.expression, prim.Sum):
            if term == insn.assignee:
                continue
            parts = set(_parts(term, prim.Product))
            if any(var_name in get_dependencies(p) for p in parts):
                raise KernelcoreError(f"collect_common_factors_on_increment: '{var_name}' "
                                      f"is read inside a term of '{insn.id}'")
            parts = {p for p in parts if not get_dependencies(p) & loop_only}
            factors[key] = parts if key not in factors else factors[key] & parts
    factors = {k: v for k, v in factors.items() if v}
    if not factors:
        raise KernelcoreError(f"collect_common_factors_on_increment: the updates of "
                              f"'{var_name}' have no factor in common")
    new_insns = []
    scale = _ScaleUses(var_name, axes, factors)
    for insn in knl.instructions:
        if isinstance(insn, Assignment) and any(insn is u for u in updates):
            found = factors.get(_index_key(insn.assignee, axes), set())
            terms = [t if t == insn.assignee else flattened_product(
                [p for p in _parts(t, prim.Product) if p not in found])
                for t in _parts(insn.expression, prim.Sum)]
            insn = insn.copy(expression=flattened_sum(terms))
        elif var_name not in insn.assignee_names():
            insn = insn.with_transformed_expressions(scale)
        new_insns.append(insn)
    return knl.copy(instructions=tuple(new_insns))
