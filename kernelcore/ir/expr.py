"""Kernel-specific expression nodes and the mappers every pass builds on.

Public names: Reduction, TypeCast, ResolvedFunction, SubArrayRef, TaggedVariable,
IdentityMapper,
CombineMapper, WalkMapper, StringifyMapper, VariableCollector, KnownVariables, AccessCollector,
collect_accesses, SubstitutionMapper, substitute, get_dependencies, called_names,
find_reductions, REDUCTION_OPS, USER_REDUCTIONS, is_reduction_name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pymbolic.primitives as prim
from pymbolic.mapper import (
    CombineMapper as _CombineMapper,
)
from pymbolic.mapper import (
    IdentityMapper as _IdentityMapper,
)
from pymbolic.mapper import (
    WalkMapper as _WalkMapper,
)
from pymbolic.mapper.stringifier import PREC_NONE
from pymbolic.mapper.stringifier import StringifyMapper as _StringifyMapper

from kernelcore.diagnostic import KernelcoreError

#: names of the built-in reductions, usable as ``op(iname, expr)``
REDUCTION_OPS = ("sum", "product", "max", "min", "argmax", "argmin", "any", "all")

#: user-registered reductions: name -> (identity(dtype), combine(acc, value))
USER_REDUCTIONS: dict[str, tuple] = {}


def is_reduction_name(name: str) -> bool:
    return name in REDUCTION_OPS or name in USER_REDUCTIONS


@prim.expr_dataclass()
class Reduction(prim.ExpressionNode):
    """``operation(inames, expr)``: reduce *expr* over the points of *inames*
    (a tuple of names or variables, one variable, or one string of
    comma-separated names).
    *allow_simultaneous* is loopy's permission for several reductions over the
    same inames in one kernel, which kernelcore always gives."""

    operation: str
    inames: tuple[str, ...]
    expr: Any
    allow_simultaneous: bool = False

    def __post_init__(self):
        if isinstance(self.inames, str):
            object.__setattr__(self, "inames", tuple(
                n.strip() for n in self.inames.split(",") if n.strip()))
        elif isinstance(self.inames, prim.Variable):     # (loopy's form: a variable)
            object.__setattr__(self, "inames", (self.inames.name,))
        else:
            object.__setattr__(self, "inames", tuple(
                n.name if isinstance(n, prim.Variable) else n for n in self.inames))

    def make_stringifier(self, originating_stringifier: Any = None) -> StringifyMapper:
        return StringifyMapper()


@prim.expr_dataclass()
class TypeCast(prim.ExpressionNode):
    """Convert *child* to the numpy dtype *dtype* (a numeric or bool scalar type)."""

    dtype: np.dtype
    child: Any

    def __post_init__(self):
        dtype = np.dtype(getattr(self.dtype, "numpy_dtype", self.dtype))
        if dtype.kind not in "biufc":
            raise KernelcoreError(f"TypeCast to {dtype}: only numeric and bool scalar "
                                  "types can be cast to; convert the fields one by one")
        object.__setattr__(self, "dtype", dtype)

    def make_stringifier(self, originating_stringifier: Any = None) -> StringifyMapper:
        return StringifyMapper()


@prim.expr_dataclass()
class ResolvedFunction(prim.ExpressionNode):
    """The function of a call that names an entry of a translation unit's
    callables table (*function* is a :class:`pymbolic.primitives.Variable`)."""

    function: Any

    @property
    def name(self) -> str:
        """The name under which the callable is registered."""
        fn = self.function
        return fn if isinstance(fn, str) else fn.name

    def make_stringifier(self, originating_stringifier: Any = None) -> StringifyMapper:
        return StringifyMapper()


@prim.expr_dataclass()
class SubArrayRef(prim.ExpressionNode):
    """``[i, j]: a[i, j]``: the sub-array of *subscript* swept by the inames
    *swept_inames* (a tuple of Variables); the array-valued argument of a
    call to a kernel."""

    swept_inames: tuple
    subscript: Any

    def make_stringifier(self, originating_stringifier: Any = None) -> StringifyMapper:
        return StringifyMapper()


@prim.expr_dataclass()
class TaggedVariable(prim.Variable):
    """A variable carrying tags (loopy's ``name$tag``); every mapper treats it
    as the variable it names."""

    tags: frozenset = frozenset()


TaggedVariable.mapper_method = "map_variable"


class IdentityMapper(_IdentityMapper):
    def map_resolved_function(self, expr: ResolvedFunction, *args: Any, **kwargs: Any) -> Any:
        return expr

    def map_sub_array_ref(self, expr: SubArrayRef, *args: Any, **kwargs: Any) -> Any:
        new = self.rec(expr.subscript, *args, **kwargs)
        return expr if new is expr.subscript else SubArrayRef(expr.swept_inames, new)

    def map_reduction(self, expr: Reduction, *args: Any, **kwargs: Any) -> Any:
        new = self.rec(expr.expr, *args, **kwargs)
        return expr if new is expr.expr else Reduction(expr.operation, expr.inames, new)

    def map_type_cast(self, expr: TypeCast, *args: Any, **kwargs: Any) -> Any:
        child = self.rec(expr.child, *args, **kwargs)
        return expr if child is expr.child else TypeCast(expr.dtype, child)


class CombineMapper(_CombineMapper):
    def map_sub_array_ref(self, expr: SubArrayRef, *args: Any, **kwargs: Any) -> Any:
        return self.rec(expr.subscript, *args, **kwargs)

    def map_reduction(self, expr: Reduction, *args: Any, **kwargs: Any) -> Any:
        return self.rec(expr.expr, *args, **kwargs)

    def map_type_cast(self, expr: TypeCast, *args: Any, **kwargs: Any) -> Any:
        return self.rec(expr.child, *args, **kwargs)


class WalkMapper(_WalkMapper):
    def map_resolved_function(self, expr: ResolvedFunction, *args: Any, **kwargs: Any) -> None:
        self.visit(expr, *args, **kwargs)

    def map_sub_array_ref(self, expr: SubArrayRef, *args: Any, **kwargs: Any) -> None:
        if not self.visit(expr, *args, **kwargs):
            return
        self.rec(expr.subscript, *args, **kwargs)
        self.post_visit(expr, *args, **kwargs)

    def map_reduction(self, expr: Reduction, *args: Any, **kwargs: Any) -> None:
        if not self.visit(expr, *args, **kwargs):
            return
        self.rec(expr.expr, *args, **kwargs)
        self.post_visit(expr, *args, **kwargs)

    def map_type_cast(self, expr: TypeCast, *args: Any, **kwargs: Any) -> None:
        if not self.visit(expr, *args, **kwargs):
            return
        self.rec(expr.child, *args, **kwargs)
        self.post_visit(expr, *args, **kwargs)


class StringifyMapper(_StringifyMapper):
    def map_resolved_function(self, expr: ResolvedFunction, enclosing_prec: int,
                              *args: Any, **kwargs: Any) -> str:
        return expr.name

    def map_sub_array_ref(self, expr: SubArrayRef, enclosing_prec: int,
                          *args: Any, **kwargs: Any) -> str:
        inames = ", ".join(str(i) for i in expr.swept_inames)
        return f"[{inames}]: {self.rec(expr.subscript, PREC_NONE)}"

    def map_reduction(self, expr: Reduction, enclosing_prec: int,
                      *args: Any, **kwargs: Any) -> str:
        inames = expr.inames[0] if len(expr.inames) == 1 else \
            "(" + ", ".join(expr.inames) + ")"
        return f"{expr.operation}({inames}, {self.rec(expr.expr, PREC_NONE)})"

    def map_type_cast(self, expr: TypeCast, enclosing_prec: int,
                      *args: Any, **kwargs: Any) -> str:
        return f"cast({expr.dtype}, {self.rec(expr.child, PREC_NONE)})"

    def map_constant(self, expr: Any, enclosing_prec: int,
                     *args: Any, **kwargs: Any) -> str:
        if isinstance(expr, np.generic):
            return repr(expr.item())
        return super().map_constant(expr, enclosing_prec, *args, **kwargs)


class VariableCollector(CombineMapper):
    """Names of the variables an expression reads (function names excluded,
    inames bound by reductions excluded)."""

    def combine(self, values: Any) -> frozenset[str]:
        result: set[str] = set()
        for v in values:
            result |= v
        return frozenset(result)

    def map_constant(self, expr: Any) -> frozenset[str]:
        return frozenset()

    def map_variable(self, expr: prim.Variable) -> frozenset[str]:
        return frozenset([expr.name])

    def map_call(self, expr: prim.Call) -> frozenset[str]:
        return self.combine(self.rec(p) for p in expr.parameters)

    def map_reduction(self, expr: Reduction) -> frozenset[str]:
        return self.rec(expr.expr) - frozenset(expr.inames)

    def map_sub_array_ref(self, expr: SubArrayRef) -> frozenset[str]:
        return self.rec(expr.subscript) - frozenset(i.name for i in expr.swept_inames)

    def map_slice(self, expr: prim.Slice) -> frozenset[str]:
        return self.combine(self.rec(c) for c in expr.children if c is not None)

    map_nan = map_constant


class MemoizedByNode:
    """A mapper mixin that computes each expression node's result once,
    however often it is asked (for every node of an expression and again for
    each of its children), remembered by the node's identity (the node is kept
    alive with its result, so its id is not reused). Only for mappers whose
    answer for a node does not change during their life."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._known: dict[int, tuple[Any, Any]] = {}

    def __call__(self, expr: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(expr, prim.ExpressionNode):
            return super().__call__(expr, *args, **kwargs)  # type: ignore[misc]
        known = self._known.get(id(expr))
        if known is not None:
            return known[1]
        result = super().__call__(expr, *args, **kwargs)  # type: ignore[misc]
        self._known[id(expr)] = (expr, result)
        return result

    rec = __call__


class KnownVariables(MemoizedByNode, VariableCollector):
    """:class:`VariableCollector` that finds the variables of each expression
    node once (:class:`MemoizedByNode`)."""


class AccessCollector(WalkMapper):
    """One walk over expressions collecting every subscript as (array name,
    index tuple, reduction inames bound there) in :attr:`accesses`, the
    names used without a subscript in :attr:`bare` and the names of called
    functions in :attr:`functions`."""

    def __init__(self):
        self.accesses: list[tuple[str, tuple, frozenset[str]]] = []
        self.bound: frozenset[str] = frozenset()
        self.bare: set[str] = set()
        self.functions: set[str] = set()

    def map_subscript(self, expr: prim.Subscript) -> None:
        if isinstance(expr.aggregate, prim.Variable):
            idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
            self.accesses.append((expr.aggregate.name, idx, self.bound))
            for i in idx:
                self.rec(i)
        else:
            super().map_subscript(expr)

    def map_variable(self, expr: prim.Variable) -> None:
        self.bare.add(expr.name)

    def map_call(self, expr: prim.Call) -> None:
        if isinstance(expr.function, (prim.Variable, ResolvedFunction)):
            self.functions.add(expr.function.name)
        for p in expr.parameters:
            self.rec(p)

    def map_reduction(self, expr: Reduction) -> None:
        outer = self.bound
        self.bound = outer | frozenset(expr.inames)
        self.rec(expr.expr)
        self.bound = outer

    def map_constant(self, expr: Any) -> None:
        pass

    map_nan = map_constant


def collect_accesses(insns: Any) -> AccessCollector:
    """An :class:`AccessCollector` that walked every expression of *insns*."""
    collector = AccessCollector()
    for insn in insns:
        for expr in insn.expressions():
            collector(expr)
    return collector


def called_names(expr: Any) -> set[str]:
    """The names of the functions (and substitution rules) *expr* calls."""
    collector = AccessCollector()
    collector(expr)
    return collector.functions


#: the variables of recently asked expression nodes: id -> (the node, kept
#: alive so that its id is not reused; its names); emptied when full
_RECENT: dict[int, tuple[Any, frozenset[str]]] = {}
_RECENT_SIZE = 2048


def get_dependencies(expr: Any) -> frozenset[str]:
    """All variable names *expr* reads (remembered for the expressions asked
    about last: passes ask again and again about the same instructions)."""
    if not isinstance(expr, prim.ExpressionNode):
        return VariableCollector()(expr)
    known = _RECENT.get(id(expr))
    if known is not None:
        return known[1]
    names = KnownVariables()(expr)
    if len(_RECENT) >= _RECENT_SIZE:
        _RECENT.clear()
    _RECENT[id(expr)] = (expr, names)
    return names


class _ReductionFinder(WalkMapper):
    def __init__(self):
        self.found: list[Reduction] = []

    def visit(self, expr, *args, **kwargs):
        if isinstance(expr, Reduction):
            self.found.append(expr)
        return True

    def map_constant(self, expr, *args, **kwargs):
        pass

    map_nan = map_constant


def find_reductions(expr: Any) -> list[Reduction]:
    """Every reduction node inside *expr* (outermost first)."""
    finder = _ReductionFinder()
    finder(expr)
    return finder.found


class SubstitutionMapper(IdentityMapper):
    """Replace variables by name; names bound by a reduction are left alone."""

    def __init__(self, subst: Callable[[str], Any | None]):
        self.subst = subst

    def map_variable(self, expr: prim.Variable) -> Any:
        result = self.subst(expr.name)
        return expr if result is None else result

    def map_reduction(self, expr: Reduction) -> Any:
        outer = self.subst
        self.subst = lambda name: None if name in expr.inames else outer(name)
        try:
            return super().map_reduction(expr)
        finally:
            self.subst = outer


def substitute(expr: Any, mapping: Mapping[str, Any]) -> Any:
    """*expr* with the variables named in *mapping* replaced."""
    return SubstitutionMapper(mapping.get)(expr)
