"""Copies of substitution rules with some of their free names replaced, and
dropping the rules a transformation left unused (what loopy's rule-aware
mappers do when a transformation renames inames inside rules).

Public names: RuleInstantiator, drop_unused_rules, expand_rules_reading.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pymbolic.primitives as prim
from pytools import UniqueNameGenerator

from kernelcore.ir.expr import IdentityMapper, called_names, get_dependencies
from kernelcore.ir.kernel import LoopKernel
from kernelcore.ir.subst import RuleExpander, SubstitutionRule, expand_rules


class RuleInstantiator(IdentityMapper):
    """Replaces the free names of *mapping* in an expression, also inside
    the rules it calls: a called rule whose body uses one of them is called
    as a copy (:attr:`new_rules`, named after it) with the names replaced."""

    def __init__(self, rules: Mapping[str, SubstitutionRule], mapping: Mapping[str, Any],
                 taken: set[str], _shared: tuple | None = None) -> None:
        self.rules = rules
        self.mapping = dict(mapping)
        if _shared is None:
            _shared = ({}, {}, UniqueNameGenerator(set(taken) | set(rules)))
        #: copies made: original rule name -> copy's name, and copy name -> rule
        self.copies, self.new_rules, self._names = _shared

    def map_variable(self, expr: prim.Variable) -> Any:
        return self.mapping.get(expr.name, expr)

    def map_call(self, expr: prim.Call) -> Any:
        params = tuple(self.rec(p) for p in expr.parameters)
        f = expr.function
        if isinstance(f, prim.Variable) and f.name in self.rules:
            rule = self.rules[f.name]
            inner = {k: v for k, v in self.mapping.items() if k not in rule.arguments}
            body = expand_rules(rule.expression, dict(self.rules))
            if set(inner) & get_dependencies(body):
                return prim.Call(prim.Variable(self._copy(rule, inner)), params)
            return prim.Call(f, params)
        return prim.Call(self.rec(f), params)

    def _copy(self, rule: SubstitutionRule, inner: dict) -> str:
        if rule.name not in self.copies:
            name = self._names(rule.name)
            self.copies[rule.name] = name
            sub = RuleInstantiator(self.rules, inner, set(),
                                   (self.copies, self.new_rules, self._names))
            self.new_rules[name] = SubstitutionRule(name, rule.arguments,
                                                    sub(rule.expression))
        return self.copies[rule.name]

    def map_constant(self, expr: Any) -> Any:
        return expr


class _RenameCalls(IdentityMapper):
    def __init__(self, renames: Mapping[str, str]) -> None:
        self.renames = renames

    def map_call(self, expr: prim.Call) -> Any:
        f = expr.function
        if isinstance(f, prim.Variable) and f.name in self.renames:
            f = prim.Variable(self.renames[f.name])
        return prim.Call(f, tuple(self.rec(p) for p in expr.parameters))

    def map_constant(self, expr: Any) -> Any:
        return expr


def _rules_named(expr: Any, rules: Mapping) -> set[str]:
    return (set(get_dependencies(expr)) | set(called_names(expr))) & set(rules)


def _used_rules(knl: LoopKernel) -> set[str]:
    rules = knl.substitutions
    todo: set[str] = set()
    for insn in knl.instructions:
        for e in insn.expressions():
            todo |= _rules_named(e, rules)
    used: set[str] = set()
    while todo:
        name = todo.pop()
        used.add(name)
        todo |= _rules_named(rules[name].expression, rules) - used
    return used


def drop_unused_rules(knl: LoopKernel, used_before: set[str],
                      copies: Mapping[str, str]) -> LoopKernel:
    """*knl* without the rules of *used_before* it no longer uses; a copy
    (*copies*: original name -> copy's) of a rule so dropped takes its name."""
    used = _used_rules(knl)
    rules = {n: r for n, r in knl.substitutions.items()
             if n in used or n not in used_before}
    renames = {new: old for old, new in copies.items() if old not in rules and new in rules}
    if not renames:
        return knl.copy(substitutions=rules)
    mapper = _RenameCalls(renames)
    rules = {renames.get(n, n): SubstitutionRule(renames.get(n, n), r.arguments,
                                                 mapper(r.expression))
             for n, r in rules.items()}
    return knl.copy(substitutions=rules,
                    instructions=tuple(i.with_transformed_expressions(mapper)
                                       for i in knl.instructions))


def expand_rules_reading(knl: LoopKernel, var_name: str, match: Any) -> LoopKernel:
    """*knl* with the substitution rules that read *var_name* (themselves or
    through rules they use) expanded in the instructions *match* accepts, so
    that their reads of it are found; rules no longer used are dropped."""
    rules = knl.substitutions
    reading: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, rule in rules.items():
            if name not in reading and (
                    var_name in get_dependencies(rule.expression)
                    or called_names(rule.expression) & reading):
                reading.add(name)
                changed = True
    if not reading:
        return knl
    expander = RuleExpander({n: rules[n] for n in reading})
    insns = tuple(i.with_transformed_expressions(expander) if match(knl, i) else i
                  for i in knl.instructions)
    return drop_unused_rules(knl.copy(instructions=insns), reading, {})
