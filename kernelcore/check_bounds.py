"""Static proof that every array access of a kernel stays inside its array.

For each subscript of an array whose shape is known, every index is turned
into an ISL piecewise quasi-affine function of the inames and parameters. The
points where it leaves ``0 <= index < extent`` are intersected with the points
the access runs for: the domain of the instruction's inames (and of the
reductions around the access), the kernel's assumptions, the instruction's
predicates and the conditions of the ``if(...)`` expressions (and ``and``/``or``
operands) guarding it. If that set is not empty, some parameter values the
kernel accepts make the access leave the array.

What cannot be decided is skipped: an index that is not quasi-affine in the
inames and domain parameters (``a[idx[i]]``, casts, products of parameters), a
guard that is not an affine condition, and the upper bound of an extent that
is not affine.

The kernel option ``enforce_array_accesses_within_bounds`` chooses what a
violation does: ``True`` (default) raises
:class:`~kernelcore.diagnostic.AccessOutOfBoundsError`, ``False`` warns, and
``"no_check"`` skips the check.

Public names: check_bounds, reads_unguarded_in_bounds, affine_pw_aff, affine_condition,
kernel_params, conjuncts.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import reduce
from typing import TYPE_CHECKING

import islpy as isl
import numpy as np
import pymbolic.primitives as prim

from kernelcore.diagnostic import AccessOutOfBoundsError, KernelcoreWarning
from kernelcore.ir.data_params import data_dependent_inames
from kernelcore.ir.domain import NotAffineError, align_to, expr_to_pw_aff
from kernelcore.ir.expr import IdentityMapper, WalkMapper, get_dependencies
from kernelcore.ir.instruction import Assignment
from kernelcore.ir.kernel import LoopKernel

if TYPE_CHECKING:
    from pymbolic.typing import Expression

dim_type = isl.dim_type

_COMPARE = {">=": "ge_set", ">": "gt_set", "<=": "le_set", "<": "lt_set",
            "==": "eq_set", "!=": "ne_set"}


class _MinMaxCalls(IdentityMapper):
    """``min(a, b)``/``max(a, b)`` calls as pymbolic Min/Max nodes (which the
    affine conversion understands)."""

    def map_call(self, expr):
        params = tuple(self.rec(p) for p in expr.parameters)
        name = getattr(expr.function, "name", None)
        if name in ("min", "max") and len(params) >= 2:
            return (prim.Min if name == "min" else prim.Max)(params)
        return prim.Call(expr.function, params)


_MIN_MAX = _MinMaxCalls()


def affine_pw_aff(expr: Expression, space: isl.Space) -> isl.PwAff:
    """*expr* as a PwAff over *space* (``min``/``max`` calls included); raises
    :class:`~kernelcore.ir.domain.NotAffineError` if it is not quasi-affine."""
    try:
        return expr_to_pw_aff(_MIN_MAX(expr), space)
    except isl.Error as e:
        raise NotAffineError(f"{expr}: {e}") from None


def affine_condition(cond: Expression, pw_aff: Callable[[Expression], isl.PwAff]) -> isl.Set:
    """The points where the condition *cond* (comparisons of quasi-affine
    expressions, which *pw_aff* converts, joined by and/or/not) holds; raises
    :class:`~kernelcore.ir.domain.NotAffineError` for other conditions."""
    if isinstance(cond, prim.Comparison) and cond.operator in _COMPARE:
        return getattr(pw_aff(cond.left), _COMPARE[cond.operator])(pw_aff(cond.right))
    if isinstance(cond, (prim.LogicalAnd, prim.LogicalOr)):
        parts = [affine_condition(c, pw_aff) for c in cond.children]
        return reduce(isl.Set.intersect if isinstance(cond, prim.LogicalAnd)
                      else isl.Set.union, parts)
    if isinstance(cond, prim.LogicalNot):
        return affine_condition(cond.child, pw_aff).complement()
    if isinstance(cond, (int, np.integer, bool, np.bool_)):
        zero = pw_aff(0)
        return zero.eq_set(zero) if cond else zero.ne_set(zero)
    if isinstance(cond, (prim.Variable, prim.Sum, prim.Product, prim.FloorDiv,
                         prim.Remainder)):
        # a number as a condition, as in C: true where it is not zero
        return pw_aff(cond).ne_set(pw_aff(0))
    raise NotAffineError(f"{cond} is not an affine condition")


def conjuncts(conditions) -> list:
    """The *conditions*, with those joined by ``and`` taken apart."""
    result, todo = [], list(conditions)
    while todo:
        cond = todo.pop()
        if isinstance(cond, prim.LogicalAnd):
            todo.extend(cond.children)
        else:
            result.append(cond)
    return result


def kernel_params(knl: LoopKernel) -> list[str]:
    """The parameters of *knl*'s domains and assumptions."""
    params = list(knl.ordered_params())
    if knl.assumptions is not None:
        params += [p for p in knl.assumptions.get_var_names(dim_type.param)
                   if p is not None and p not in params and p not in knl.all_inames()]
    return params


class _GuardedAccesses(WalkMapper):
    """Every subscript of an expression as (array name, index tuple, inames of
    the reductions around it, conditions guarding it) in :attr:`found`."""

    def __init__(self, bound: frozenset[str], guards: tuple):
        self.found: list[tuple[str, tuple, frozenset[str], tuple]] = []
        self.bound = bound
        self.guards = guards

    def _under(self, guards: tuple, expr) -> None:
        outer = self.guards
        self.guards = guards
        self.rec(expr)
        self.guards = outer

    def map_subscript(self, expr):
        idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        if isinstance(expr.aggregate, prim.Variable):
            self.found.append((expr.aggregate.name, idx, self.bound, self.guards))
        else:
            self.rec(expr.aggregate)
        for i in idx:
            self.rec(i)

    def map_if(self, expr):
        self.rec(expr.condition)
        self._under(self.guards + (expr.condition,), expr.then)
        self._under(self.guards + (prim.LogicalNot(expr.condition),), expr.else_)

    def map_logical_and(self, expr):
        # C evaluates an operand only where the ones before it hold
        for k, child in enumerate(expr.children):
            self._under(self.guards + tuple(expr.children[:k]), child)

    def map_logical_or(self, expr):
        for k, child in enumerate(expr.children):
            self._under(self.guards + tuple(prim.LogicalNot(c) for c in expr.children[:k]),
                        child)

    def map_reduction(self, expr):
        outer = self.bound
        self.bound = outer | frozenset(expr.inames)
        self.rec(expr.expr)
        self.bound = outer

    def map_constant(self, expr):
        pass

    map_nan = map_constant


class _BoundsChecker:
    """The ISL objects of one kernel, with caches shared by its accesses."""

    def __init__(self, knl):
        self.knl = knl
        self.space = isl.Space.create_from_names(
            isl.DEFAULT_CONTEXT, set=list(knl.all_inames()), params=kernel_params(knl))
        self.universe = isl.Set.universe(self.space)
        self.assumptions = (self.universe if knl.assumptions is None
                            else align_to(knl.assumptions, self.universe))
        self.zero = isl.PwAff.zero_on_domain(isl.LocalSpace.from_space(self.space))
        self._affs: dict = {}
        self._domains: dict = {}
        self._inside: set = set()
        self._unused: dict = {}

    def pw_aff(self, expr) -> isl.PwAff:
        """*expr* as a PwAff over the kernel's space (raises NotAffineError)."""
        if expr not in self._affs:
            try:
                self._affs[expr] = affine_pw_aff(expr, self.space)
            except NotAffineError:
                self._affs[expr] = None
        result = self._affs[expr]
        if result is None:
            raise NotAffineError(f"{expr} is not quasi-affine")
        return result

    def domain(self, inames: frozenset[str], guards: tuple) -> isl.Set:
        """The points of *inames* allowed by the assumptions where every guard
        that is affine holds (the others may hold anywhere: see
        :meth:`unused_guards`)."""
        key = (inames, guards)
        if key not in self._domains:
            known = frozenset(inames) & frozenset(self.knl.all_inames())
            dom = align_to(self.knl.get_inames_domain(known), self.universe) \
                & self.assumptions
            for guard in conjuncts(guards):     # (each part that can be used)
                try:
                    dom = dom & affine_condition(guard, self.pw_aff)
                except NotAffineError:
                    self._unused.setdefault(key, []).append(guard)
            self._domains[key] = dom
        return self._domains[key]

    def unused_guards(self, inames: frozenset[str], guards: tuple) -> list:
        """The *guards* that :meth:`domain` could not take into account."""
        self.domain(inames, guards)
        return self._unused.get((inames, guards), [])

    def check_access(self, insn_id: str, name: str, idx: tuple, inames: frozenset[str],
                     guards: tuple, writes: bool) -> str | None:
        """A description of how the access leaves the array, or None if it
        provably does not (or cannot be decided)."""
        var = self.knl.arg_dict.get(name) or self.knl.temporary_variables.get(name)
        shape = getattr(var, "shape", None)
        if not isinstance(shape, tuple) or len(shape) != len(idx):
            return None
        used = frozenset().union(*(get_dependencies(i) for i in idx))
        where = (inames | (used & frozenset(self.knl.all_inames())), guards)
        for axis, (ix, extent) in enumerate(zip(idx, shape)):
            # (arrays of one shape are often read at one index: decide it once)
            key = (ix, extent, where)
            if key in self._inside:
                continue
            self._inside.add(key)
            dom = self.domain(*where)
            try:
                index = self.pw_aff(ix)
            except NotAffineError:
                continue
            outside = index.lt_set(self.zero)
            try:
                outside = outside | index.ge_set(self.pw_aff(extent))
            except NotAffineError:
                pass        # (an extent that is not affine: only the lower bound)
            outside = outside & dom
            if not outside.is_empty():
                text = _describe(insn_id, name, idx, shape, axis, index, dom, outside,
                                 writes)
                unused = self.unused_guards(*where)
                if unused:
                    text += (" (the condition(s) " + ", ".join(f"'{g}'" for g in unused)
                             + " guarding it are not affine, so they could not be "
                             "taken into account)")
                return text
        return None


def _describe(insn_id: str, name: str, idx: tuple, shape: tuple, axis: int,
              index: isl.PwAff, dom: isl.Set, outside: isl.Set, writes: bool) -> str:
    values = isl.Map.from_pw_aff(index).intersect_domain(dom).range() \
        .set_dim_name(dim_type.set, 0, "index")
    point = outside.sample_point()
    shown = sorted(get_dependencies(idx[axis]) | get_dependencies(shape[axis]))
    example = []
    for dt in (dim_type.param, dim_type.set):
        for k in range(outside.dim(dt)):
            dim = outside.get_dim_name(dt, k)
            if dim in shown:
                example.append(f"{dim} = {point.get_coordinate_val(dt, k).to_python()}")
    example.append(f"index = {index.eval(point)}")
    return (f"instruction '{insn_id}' {'writes' if writes else 'reads'} '{name}' at "
            f"[{', '.join(map(str, idx))}] outside its shape "
            f"({', '.join(map(str, shape))}): along axis {axis} the index '{idx[axis]}' "
            f"takes the values {values}, not all within 0 <= index < {shape[axis]} "
            f"(e.g. {', '.join(example)})")


def _accesses(insn) -> list[tuple[str, tuple, frozenset[str], tuple, bool]]:
    """(array, index, reduction inames, guards, is a write) of every subscript
    of *insn*."""
    found = []
    for pred in insn.predicates:
        walker = _GuardedAccesses(frozenset(), ())
        walker(pred)
        found += [(*a, False) for a in walker.found]
    guards = tuple(sorted(insn.predicates, key=str))
    exprs = [insn.expression] if isinstance(insn, Assignment) else []
    if isinstance(insn, Assignment) and isinstance(insn.assignee, prim.Subscript):
        target = insn.assignee
        if isinstance(target.aggregate, prim.Variable):
            idx = target.index if isinstance(target.index, tuple) else (target.index,)
            found.append((target.aggregate.name, idx, frozenset(), guards, True))
            exprs += list(idx)
    for expr in exprs:
        walker = _GuardedAccesses(frozenset(), guards)
        walker(expr)
        found += [(*a, False) for a in walker.found]
    return found


def check_bounds(knl: LoopKernel) -> None:
    """Raise :class:`~kernelcore.diagnostic.AccessOutOfBoundsError` (or warn,
    per the kernel's ``enforce_array_accesses_within_bounds`` option) if an
    access may fall outside its array for parameter values the kernel
    accepts."""
    enforce = knl.options.enforce_array_accesses_within_bounds
    if enforce == "no_check":
        return
    checker = None
    # loops with bounds computed by the kernel: nothing to check statically
    unknown = set(data_dependent_inames(knl))
    for insn in knl.instructions:
        for name, idx, bound, guards, writes in _accesses(insn):
            if unknown & (insn.within_inames | bound):
                continue
            if checker is None:
                checker = _BoundsChecker(knl)
            problem = checker.check_access(insn.id, name, idx, insn.within_inames | bound,
                                           guards, writes)
            if problem is None:
                continue
            message = (f"in kernel {knl.name}: {problem} (if the parameters cannot take "
                       "such values, state it with assumptions=...; "
                       "lp.set_options(knl, enforce_array_accesses_within_bounds=False) "
                       "only warns)")
            if enforce:
                raise AccessOutOfBoundsError(message)
            warnings.warn(message, KernelcoreWarning, stacklevel=2)


def reads_unguarded_in_bounds(knl: LoopKernel, expr: Expression, inames: frozenset[str],
                              predicates: tuple = ()) -> bool:
    """Whether every array element *expr* reads provably lies in its array
    at all points of *inames* where *predicates* hold, even where the
    ``if(...)`` conditions around the read do not (a vectorized ``if`` reads
    both of its branches in every lane)."""
    walker = _GuardedAccesses(frozenset(), ())
    walker(expr)
    checker = _BoundsChecker(knl)
    for name, idx, bound, _ in walker.found:
        used = frozenset().union(*(get_dependencies(i) for i in idx))
        where = (inames | bound | used) & frozenset(knl.all_inames())
        try:
            if checker.unused_guards(where, tuple(predicates)) or any(
                    checker.pw_aff(i) is None for i in idx):
                return False
        except NotAffineError:
            return False
        if checker.check_access("", name, idx, where, tuple(predicates), False) is not None:
            return False
    return True
