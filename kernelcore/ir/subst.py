"""Substitution rules: named, parametrized expressions (``f(i, j) := a[i]*b[j]``).

A use ``f(x, y)`` in an instruction stands for the rule's expression with its
arguments replaced. Rules are expanded before type inference; :func:`precompute`
can instead store a rule's values in a temporary.

A rule without arguments (``E := a[i]``) is used by its bare name (``E*E``).

Public names: SubstitutionRule, RuleExpander, expand_rules, expand_kernel_rules,
call_bare_rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pymbolic.primitives as prim

from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.expr import IdentityMapper, called_names, substitute


@dataclass(frozen=True)
class SubstitutionRule:
    name: str
    arguments: tuple[str, ...]
    expression: Any

    def __str__(self) -> str:
        return f"{self.name}({', '.join(self.arguments)}) := {self.expression}"


class RuleExpander(IdentityMapper):
    """Replaces uses of the given rules (recursively) by their expressions."""

    def __init__(self, rules: dict[str, SubstitutionRule]):
        self.rules = rules
        self.depth = 0

    def map_call(self, expr: prim.Call) -> Any:
        fn = expr.function
        if isinstance(fn, prim.Variable) and fn.name in self.rules:
            rule = self.rules[fn.name]
            if len(expr.parameters) != len(rule.arguments):
                raise KernelcoreError(
                    f"substitution rule '{rule.name}' takes {len(rule.arguments)} "
                    f"argument(s), used with {len(expr.parameters)}")
            if self.depth > 50:
                raise KernelcoreError(f"substitution rule '{rule.name}' is recursive")
            args = {a: self.rec(p) for a, p in zip(rule.arguments, expr.parameters)}
            self.depth += 1
            try:
                return self.rec(substitute(rule.expression, args))
            finally:
                self.depth -= 1
        return super().map_call(expr)

    def map_constant(self, expr: Any) -> Any:
        return expr


class _BareRuleCaller(IdentityMapper):
    def __init__(self, names: frozenset[str]):
        self.names = names

    def map_variable(self, expr):
        return prim.Call(expr, ()) if expr.name in self.names else expr

    def map_call(self, expr):
        if isinstance(expr.function, prim.Variable) and expr.function.name in self.names:
            return prim.Call(expr.function, tuple(self.rec(p) for p in expr.parameters))
        return super().map_call(expr)

    def map_constant(self, expr):
        return expr


def call_bare_rules(expr: Any, names: frozenset[str]) -> Any:
    """*expr* with each bare use ``E`` of a rule without arguments named in
    *names* written as the call ``E()`` that expansion and precompute match."""
    return _BareRuleCaller(names)(expr) if names and expr is not None else expr


def expand_rules(expr: Any, rules: dict[str, SubstitutionRule]) -> Any:
    """*expr* with every use of *rules* expanded."""
    return RuleExpander(rules)(expr) if rules else expr


def expand_kernel_rules(knl: Any, match: Any = None) -> Any:
    """*knl* with the uses of its rules expanded in its instructions (those
    *match* ``(knl, insn)`` accepts, default all); rules no longer used are
    dropped."""
    if not knl.substitutions:
        return knl
    expander = RuleExpander(dict(knl.substitutions))
    insns = tuple(i.with_transformed_expressions(expander)
                  if match is None or match(knl, i) else i for i in knl.instructions)
    still_used: set[str] = set()
    for insn in insns:
        for e in insn.expressions():
            still_used |= called_names(e) & set(knl.substitutions)
    rules = {n: r for n, r in knl.substitutions.items() if n in still_used}
    return knl.copy(instructions=insns, substitutions=rules)
