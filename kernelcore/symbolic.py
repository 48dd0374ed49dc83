"""Expression nodes and mappers under loopy's module path (``loopy.symbolic``).

Public names: Reduction, TypeCast, Literal, ArrayLiteral, FunctionIdentifier,
ResolvedFunction, TaggedVariable, LinearSubscript, TypeAnnotation, SubArrayRef,
IdentityMapper, WalkMapper, CombineMapper, StringifyMapper, SubstitutionMapper,
DependencyMapper, UncachedWalkMapper, RuleAwareIdentityMapper,
RuleAwareSubstitutionMapper, SubstitutionRuleMappingContext, SubstitutionRule,
get_dependencies, parse, substitute, aff_to_expr, pw_aff_to_expr,
aff_from_expr, pwaff_from_expr, get_reduction_inames, is_expression_equal,
simplify_via_aff, qpolynomial_to_expr, simplify_using_aff.

The kernel-specific nodes that kernelcore's passes understand are
:class:`Reduction` and :class:`TypeCast`; :class:`ResolvedFunction` marks a
call that :func:`~kernelcore.kernel.function_interface.resolve_callables`
tied to an entry of a translation unit's ``callables_table``. The other nodes
exist so that programs building expressions with loopy's names can do so (the code
generator does not lower them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import islpy as isl
import pymbolic.primitives as prim
from pymbolic.mapper.distributor import distribute

from kernelcore.diagnostic import ExpressionToAffineConversionError
from kernelcore.ir.domain import aff_to_expr, expr_to_pw_aff, set_to_cond_expr
from kernelcore.ir.expr import (
    CombineMapper,
    IdentityMapper,
    Reduction,
    ResolvedFunction,
    StringifyMapper,
    SubArrayRef,
    SubstitutionMapper,
    TaggedVariable,
    TypeCast,
    WalkMapper,
    called_names,
    find_reductions,
    get_dependencies,
    substitute,
)
from kernelcore.ir.subst import SubstitutionRule
from kernelcore.isl_helpers import qpolynomial_to_expr
from kernelcore.parse import parse_expression
from kernelcore.transform.indices import simplify_using_aff

# {{{ nodes

class FunctionIdentifier(prim.ExpressionNode):
    """Base class of objects naming a function in a call."""


@prim.expr_dataclass()
class Literal(prim.ExpressionNode):
    """Code inserted verbatim into the generated source."""

    s: str


@prim.expr_dataclass()
class ArrayLiteral(prim.ExpressionNode):
    """An array written out element by element."""

    children: tuple


@prim.expr_dataclass()
class LinearSubscript(prim.ExpressionNode):
    """``aggregate[[index]]``: one flat index into an array of any rank."""

    aggregate: Any
    index: Any


@prim.expr_dataclass()
class TypeAnnotation(prim.ExpressionNode):
    """*child* known to have type *type*."""

    type: Any
    child: Any


# }}}


def get_reduction_inames(expr: Any) -> frozenset[str]:
    """The inames reduced over anywhere in *expr*."""
    return frozenset(n for r in find_reductions(expr) for n in r.inames)


class _ExplicitReductions(IdentityMapper):
    """``reduce(op, inames, e)`` and ``simul_reduce(...)`` -> :class:`Reduction`;
    with several values (``reduce(argmax, j, v, j)``) the reduced expression is
    their tuple."""

    def map_call(self, expr: prim.Call) -> Any:
        fn, params = expr.function, expr.parameters
        if not (isinstance(fn, prim.Variable) and fn.name in ("reduce", "simul_reduce")
                and len(params) >= 3):
            return super().map_call(expr)
        op, over = params[0], params[1] if isinstance(params[1], tuple) else (params[1],)
        names = [v.name for v in over if isinstance(v, prim.Variable)]
        if not isinstance(op, prim.Variable) or len(names) != len(over):
            return super().map_call(expr)
        values = tuple(self.rec(p) for p in params[2:])
        return Reduction(op.name, tuple(names),
                         values[0] if len(values) == 1 else values,
                         allow_simultaneous=fn.name == "simul_reduce")

    def map_constant(self, expr: Any) -> Any:
        return expr


def is_expression_equal(a: Any, b: Any) -> bool:
    """Whether *a* and *b* are equal, or are arithmetic expressions whose
    difference multiplies out to zero (``(x+2)**2`` and ``x**2 + 4*x + 4``)."""
    if a == b:
        return True
    if not isinstance(a, prim.ExpressionNode) and not isinstance(b, prim.ExpressionNode):
        return False
    if a is None or b is None:
        return False
    return bool(distribute(a - b) == 0)


def parse(text: str) -> Any:
    """Parse *text* in the instruction language into an expression (explicit
    reductions, ``reduce(op, inames, expr)``, become :class:`Reduction` nodes)."""
    return _ExplicitReductions()(parse_expression(text))


class UncachedWalkMapper(WalkMapper):
    """A :class:`WalkMapper` (no caching in kernelcore's mappers)."""


class DependencyMapper(CombineMapper):
    """The variables an expression reads, as a set of
    :class:`pymbolic.primitives.Variable` (inames bound by reductions left
    out); ``DependencyMapper(include_calls=False)`` by default skips the
    function names of calls."""

    def __init__(self, include_subscripts: bool = True, include_lookups: bool = True,
                 include_calls: bool = False, include_cses: bool = False,
                 composite_leaves: Any = None):
        self.include_calls = include_calls

    def __call__(self, expr: Any, *args: Any, **kwargs: Any) -> frozenset:
        names = get_dependencies(expr)
        if self.include_calls:
            names = names | frozenset(called_names(expr))
        return frozenset(prim.Variable(n) for n in names)


def aff_from_expr(space: isl.Space, expr: Any) -> isl.Aff:
    """The isl affine function of *expr* over *space* (one piece only)."""
    pieces = expr_to_pw_aff(expr, space).get_pieces()
    if len(pieces) != 1:
        raise ExpressionToAffineConversionError(f"'{expr}' is not one affine piece")
    return pieces[0][1]


def pw_aff_to_expr(pw_aff: isl.PwAff | isl.Aff | int, int_ok: bool = False) -> Any:
    """*pw_aff* as an expression in loopy's form: its pieces as nested
    conditionals (``a if cond else b``), the last piece the fallback."""
    if isinstance(pw_aff, int):
        return pw_aff
    if isinstance(pw_aff, isl.Aff):
        return aff_to_expr(pw_aff)
    pieces = pw_aff.get_pieces()
    expr = aff_to_expr(pieces[-1][1])
    for where, aff in reversed(pieces[:-1]):
        expr = prim.If(set_to_cond_expr(where), aff_to_expr(aff), expr)
    return expr


def simplify_via_aff(expr: Any) -> Any:
    """*expr* rewritten through isl's affine form when it is affine (else as is)."""
    names = sorted(get_dependencies(expr))
    space = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=names)
    try:
        return aff_to_expr(aff_from_expr(space, expr))
    except (ExpressionToAffineConversionError, ValueError, isl.Error):
        return expr


def pwaff_from_expr(space: isl.Space, expr: Any) -> isl.PwAff:
    """The isl piecewise affine function of *expr* over *space*."""
    return expr_to_pw_aff(expr, space)


# {{{ rule-aware mapping (a simple form of loopy's)

class SubstitutionRuleMappingContext:
    """Carries a kernel's substitution rules through a
    :class:`RuleAwareIdentityMapper`; :meth:`finish_kernel` returns the kernel
    with the mapped rules."""

    def __init__(self, rule_mapping: Mapping[str, Any],
                 make_unique_var_name: Callable[[str], str] | None = None):
        self.old_subst_rules = dict(rule_mapping)
        self.new_subst_rules: dict[str, Any] = dict(rule_mapping)
        self.make_unique_var_name = make_unique_var_name

    def finish_kernel(self, kernel: Any) -> Any:
        """*kernel* with the substitution rules as mapped."""
        return kernel.copy(substitutions=dict(self.new_subst_rules))


class RuleAwareIdentityMapper(IdentityMapper):
    """An identity mapper that maps a kernel's instructions and substitution
    rules alike (:meth:`map_kernel`); subclasses override ``map_*`` methods,
    which receive ``(expr, expn_state)``."""

    def __init__(self, rule_mapping_context: SubstitutionRuleMappingContext):
        self.rule_mapping_context = rule_mapping_context

    def __call__(self, expr: Any, kernel: Any = None, insn: Any = None,
                 *args: Any, **kwargs: Any) -> Any:
        return self.rec(expr, ExpansionState(kernel, insn))

    def map_kernel(self, kernel: Any, within: Callable[..., bool] | None = None,
                   map_args: bool = True, map_tvs: bool = True) -> Any:
        """*kernel* with every instruction expression (of the instructions
        *within* accepts) and every substitution rule mapped."""
        insns = []
        for insn in kernel.instructions:
            if within is not None and not within(kernel, insn):
                insns.append(insn)
                continue
            state = ExpansionState(kernel, insn)
            insns.append(insn.with_transformed_expressions(
                lambda e, s=state: self.rec(e, s)))
        ctx = self.rule_mapping_context
        for name, rule in kernel.substitutions.items():
            state = ExpansionState(kernel, None)
            ctx.new_subst_rules[name] = SubstitutionRule(
                rule.name, rule.arguments, self.rec(rule.expression, state))
        return kernel.copy(instructions=tuple(insns))

    def map_constant(self, expr: Any, *args: Any, **kwargs: Any) -> Any:
        return expr


class ExpansionState:
    """Where a rule-aware mapper is: the *kernel* and the *instruction*."""

    def __init__(self, kernel: Any, instruction: Any):
        self.kernel = kernel
        self.instruction = instruction

    @property
    def insn_id(self) -> str | None:
        return getattr(self.instruction, "id", None)


class RuleAwareSubstitutionMapper(RuleAwareIdentityMapper):
    """Replaces variables by the expressions *subst_func* gives for them."""

    def __init__(self, rule_mapping_context: SubstitutionRuleMappingContext,
                 subst_func: Callable[[Any], Any], within: Callable[..., bool] | None = None):
        super().__init__(rule_mapping_context)
        self.subst_func = subst_func
        self.within = within

    def map_variable(self, expr: Any, expn_state: Any = None) -> Any:
        result = self.subst_func(expr)
        return expr if result is None else result

# }}}


__all__ = ["Reduction", "TypeCast", "Literal", "ArrayLiteral", "FunctionIdentifier",
           "ResolvedFunction", "TaggedVariable", "LinearSubscript", "TypeAnnotation",
           "SubArrayRef", "IdentityMapper", "WalkMapper", "CombineMapper",
           "StringifyMapper", "SubstitutionMapper", "DependencyMapper",
           "UncachedWalkMapper", "RuleAwareIdentityMapper", "RuleAwareSubstitutionMapper",
           "SubstitutionRuleMappingContext", "ExpansionState", "SubstitutionRule",
           "get_dependencies", "parse", "substitute", "aff_to_expr", "pw_aff_to_expr",
           "aff_from_expr", "pwaff_from_expr", "get_reduction_inames", "is_expression_equal",
           "simplify_via_aff", "qpolynomial_to_expr", "simplify_using_aff"]
