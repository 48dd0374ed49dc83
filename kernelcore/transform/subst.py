"""Transformations of substitution rules.

Public names: expand_subst, assignment_to_subst, extract_subst.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.diagnostic import KernelcoreError, UnknownNameError
from kernelcore.ir.expr import IdentityMapper
from kernelcore.ir.instruction import Assignment, assignee_subscript
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.subst import RuleExpander, SubstitutionRule, expand_kernel_rules
from kernelcore.match import parse_match
from kernelcore.parse import parse_expression
from kernelcore.translation_unit import for_each_kernel


@for_each_kernel
def expand_subst(knl: LoopKernel, within: Any = None) -> LoopKernel:
    """Replace uses of substitution rules by their expressions (in the matching
    instructions); rules no longer used are dropped."""
    return expand_kernel_rules(knl, parse_match(within))

@for_each_kernel
def assignment_to_subst(knl: LoopKernel, lhs_name: str) -> LoopKernel:
    """Turn the single assignment to temporary *lhs_name* into a substitution
    rule (``<lhs_name>_subst``), so its value is recomputed where it is used."""
    writers = [i for i in knl.instructions if lhs_name in i.assignee_names()]
    if lhs_name not in knl.temporary_variables:
        raise UnknownNameError(f"assignment_to_subst: no temporary called '{lhs_name}'")
    if len(writers) != 1 or not isinstance(writers[0], Assignment):
        raise KernelcoreError(f"assignment_to_subst: '{lhs_name}' must be assigned by "
                              f"exactly one instruction (found {len(writers)})")
    (writer,) = writers
    assert isinstance(writer, Assignment)
    sub = assignee_subscript(writer.assignee)
    if not all(isinstance(s, prim.Variable) for s in sub):
        raise KernelcoreError(f"assignment_to_subst: '{lhs_name}' must be indexed by "
                              "plain inames on the left-hand side")
    args = tuple(s.name for s in sub)
    rule_name = UniqueNameGenerator(set(knl.substitutions) | set(knl.arg_dict)
                                    | set(knl.temporary_variables)
                                    | set(knl.all_inames()))(f"{lhs_name}_subst")
    rule = SubstitutionRule(rule_name, args, writer.expression)

    class _Uses(RuleExpander):
        def map_variable(self, e):
            if e.name == lhs_name:
                return prim.Call(prim.Variable(rule_name), ())
            return e

        def map_subscript(self, e):
            if isinstance(e.aggregate, prim.Variable) and e.aggregate.name == lhs_name:
                idx = e.index if isinstance(e.index, tuple) else (e.index,)
                return prim.Call(prim.Variable(rule_name), tuple(self.rec(i) for i in idx))
            return super().map_subscript(e)

        def map_call(self, e):
            return prim.Call(e.function, tuple(self.rec(p) for p in e.parameters))

    uses = _Uses({})
    insns = []
    for insn in knl.instructions:
        if insn.id == writer.id:
            continue
        new = insn.with_transformed_expressions(uses)
        if writer.id in new.depends_on:
            new = new.copy(depends_on=(new.depends_on - {writer.id})
                           | (writer.depends_on - {new.id}))
        insns.append(new)
    temps = {n: t for n, t in knl.temporary_variables.items() if n != lhs_name}
    return knl.copy(instructions=tuple(insns), temporary_variables=temps,
                    substitutions={**knl.substitutions, rule_name: rule})


def _match(template, expr, params: set[str], bindings: dict) -> bool:
    """Whether *expr* has the shape of *template* (parameters match anything,
    consistently); fills *bindings*."""
    if isinstance(template, prim.Variable) and template.name in params:
        if template.name in bindings:
            return bindings[template.name] == expr
        bindings[template.name] = expr
        return True
    if type(template) is not type(expr):
        return False
    if isinstance(template, prim.ExpressionNode):
        names = [f.name for f in dataclasses.fields(template)]  # type: ignore[arg-type]
        return all(_match(getattr(template, n), getattr(expr, n), params, bindings)
                   for n in names)
    if isinstance(template, tuple):
        return len(template) == len(expr) and all(
            _match(t, e, params, bindings) for t, e in zip(template, expr))
    return template == expr


@for_each_kernel
def extract_subst(knl: LoopKernel, subst_name: str, template: Any, parameters: Iterable[str] = ()
                  ) -> LoopKernel:
    """Name the subexpressions shaped like *template* as substitution rule
    *subst_name* with arguments *parameters* (names in *template* that match
    anything); operands are matched in the order written."""
    if subst_name in knl.substitutions:
        raise KernelcoreError(f"extract_subst: rule '{subst_name}' exists already")
    params = tuple(s.strip() for s in parameters.split(",")) if isinstance(parameters, str) \
        else tuple(parameters)
    template = parse_expression(template) if isinstance(template, str) else template
    found = []

    class _Extract(IdentityMapper):
        def __call__(self, expr, *args, **kwargs):     # (a whole expression may match)
            return self.rec(expr, *args, **kwargs)

        def rec(self, expr, *args, **kwargs):
            bindings: dict = {}
            if isinstance(expr, prim.ExpressionNode) and _match(template, expr, set(params),
                                                                 bindings):
                found.append(expr)
                return prim.Call(prim.Variable(subst_name),
                                 tuple(self.rec(bindings[p]) for p in params))
            return super().rec(expr, *args, **kwargs)

        def map_constant(self, expr):
            return expr

    mapper = _Extract()
    insns = tuple(i.with_transformed_expressions(mapper) if isinstance(i, Assignment) else i
                  for i in knl.instructions)
    if not found:
        raise KernelcoreError(f"extract_subst: nothing in the kernel matches {template}")
    rule = SubstitutionRule(subst_name, params, template)
    return knl.copy(instructions=insns, substitutions={**knl.substitutions, subst_name: rule})
