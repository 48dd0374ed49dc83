"""Type inference: NumPy dtypes for every expression, argument and temporary.

Python scalars and loop indices are *weak* (as in NumPy 2): they take the type
of the array data they meet (``2*a[i]`` stays float32, ``a[i] + i`` too).
Loop indices and integer domain parameters have the kernel's index dtype
(int32 unless the kernel was made with ``index_dtype=np.int64``).

Public names: ExprType, TypeInferenceMapper, FixedTypeMapper, infer_types, add_dtypes,
add_and_infer_dtypes, INDEX_DTYPE, and loopy's type names: LoopyType, NumpyType,
AtomicType, AtomicNumpyType, OpaqueType, to_loopy_type.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import pymbolic.primitives as prim
from pymbolic.mapper import Mapper

from kernelcore.callable_kernel import callee_kernels, kernel_called_names
from kernelcore.callables import not_ready_error, result_dtype, specialize_call
from kernelcore.diagnostic import KernelcoreError, TypeInferenceFailure, UnknownNameError
from kernelcore.functions import function_result_dtype
from kernelcore.ir.data import ValueArg, auto, to_dtype
from kernelcore.ir.expr import MemoizedByNode, get_dependencies
from kernelcore.ir.instruction import Assignment, assignee_var_name
from kernelcore.ir.stages import provide
from kernelcore.ir.subst import expand_kernel_rules
from kernelcore.transform.inline import inline_calls
from kernelcore.translation_unit import TranslationUnit, for_each_kernel

INDEX_DTYPE = np.dtype(np.int32)
_KIND_ORDER = "biufc"
_WEAK_VALUE = {"b": True, "i": 0, "u": 0, "f": 0.0, "c": 0j}


@dataclass(frozen=True)
class ExprType:
    """A dtype, *weak* when it comes from a Python scalar or a loop index."""

    dtype: np.dtype
    weak: bool = False


class _Unknown(Exception):
    """The type of a variable is not known yet."""


def promote(types: list[ExprType], index_dtype: np.dtype = INDEX_DTYPE) -> ExprType:
    """NumPy 2 promotion of strong dtypes with weak scalars (weak integers
    alone: *index_dtype*, the kernel's)."""
    strong = [t.dtype for t in types if not t.weak]
    weak = [t for t in types if t.weak]
    if not strong:
        kind = max((t.dtype.kind for t in weak), key=_KIND_ORDER.index)
        if kind in "iu":
            return ExprType(index_dtype, weak=True)
        return ExprType(np.result_type(_WEAK_VALUE[kind]) if kind != "b"
                        else np.dtype(np.bool_), weak=True)
    return ExprType(np.result_type(*strong, *[_WEAK_VALUE[t.dtype.kind] for t in weak]))


class TypeInferenceMapper(Mapper):
    """Expression -> :class:`ExprType`, given the dtypes of the variables and
    the kernel's *index_dtype*."""

    def __init__(self, var_dtypes: dict[str, np.dtype | None], weak_names: set[str],
                 callables: Mapping | None = None, index_dtype: np.dtype = INDEX_DTYPE):
        self.var_dtypes = var_dtypes
        self.weak_names = weak_names
        self.callables = callables or {}
        self.index_dtype = np.dtype(index_dtype)
        #: whether sums and products take the types of their known terms only
        #: (loopy's last resort: ``y = 2*y`` makes y an integer)
        self.lenient = False

    def map_constant(self, expr: Any) -> ExprType:
        if isinstance(expr, np.generic):
            return ExprType(expr.dtype)
        if isinstance(expr, bool):
            return ExprType(np.dtype(np.bool_), weak=True)
        if isinstance(expr, int):
            return ExprType(self.index_dtype if -2**31 <= expr < 2**31
                            else np.dtype(np.int64), weak=True)
        if isinstance(expr, float):
            return ExprType(np.dtype(np.float64), weak=True)
        if isinstance(expr, complex):
            return ExprType(np.dtype(np.complex128), weak=True)
        raise TypeInferenceFailure(f"constant {expr!r} of unsupported type")

    def map_nan(self, expr: prim.NaN) -> ExprType:
        """pymbolic's NaN: of its data type, else a (weak) double."""
        if expr.data_type is None:
            return ExprType(np.dtype(np.float64), weak=True)
        return ExprType(np.dtype(expr.data_type))  # type: ignore[call-overload]

    def _var(self, name: str) -> ExprType:
        if name not in self.var_dtypes:
            raise UnknownNameError(f"unknown variable '{name}'")
        dt = self.var_dtypes[name]
        if dt is None:
            raise _Unknown(name)
        return ExprType(dt, weak=name in self.weak_names)

    def map_variable(self, expr: Any) -> ExprType:
        return self._var(expr.name)

    def map_subscript(self, expr: Any) -> ExprType:
        if not isinstance(expr.aggregate, prim.Variable):
            raise TypeInferenceFailure(f"cannot subscript {expr.aggregate}")
        t = self._var(expr.aggregate.name)
        return ExprType(t.dtype)

    def promote(self, types: list[ExprType]) -> ExprType:
        """:func:`promote` with this kernel's index dtype."""
        return promote(types, self.index_dtype)

    def map_sum(self, expr: Any) -> ExprType:
        if not self.lenient:
            return self.promote([self.rec(c) for c in expr.children])
        known = []
        for c in expr.children:
            with contextlib.suppress(_Unknown):
                known.append(self.rec(c))
        if not known:
            raise _Unknown(str(expr))
        return self.promote(known)

    map_product = map_sum

    def map_quotient(self, expr: Any) -> ExprType:
        t = self.promote([self.rec(expr.numerator), self.rec(expr.denominator)])
        if t.dtype.kind in "biu":
            return ExprType(np.dtype(np.float64), weak=t.weak)
        return t

    def map_floor_div(self, expr: Any) -> ExprType:
        return self.promote([self.rec(expr.numerator), self.rec(expr.denominator)])

    map_remainder = map_floor_div

    def map_power(self, expr: Any) -> ExprType:
        return self.promote([self.rec(expr.base), self.rec(expr.exponent)])

    def map_comparison(self, expr: Any) -> ExprType:
        self.rec(expr.left)
        self.rec(expr.right)
        return ExprType(np.dtype(np.bool_))

    def map_logical_and(self, expr: Any) -> ExprType:
        for c in expr.children:
            self.rec(c)
        return ExprType(np.dtype(np.bool_))

    map_logical_or = map_logical_and

    def map_logical_not(self, expr: Any) -> ExprType:
        self.rec(expr.child)
        return ExprType(np.dtype(np.bool_))

    def _bitwise(self, children):
        t = self.promote([self.rec(c) for c in children])
        if t.dtype.kind not in "biu":
            raise TypeInferenceFailure(f"bitwise operation on non-integer type {t.dtype}")
        return t

    def map_bitwise_and(self, expr: Any) -> ExprType:
        return self._bitwise(expr.children)

    map_bitwise_or = map_bitwise_xor = map_bitwise_and

    def map_bitwise_not(self, expr: Any) -> ExprType:
        return self._bitwise([expr.child])

    def map_left_shift(self, expr: Any) -> ExprType:
        return self._bitwise([expr.shiftee, expr.shift])

    map_right_shift = map_left_shift

    def map_if(self, expr: Any) -> ExprType:
        self.rec(expr.condition)
        return self.promote([self.rec(expr.then), self.rec(expr.else_)])

    def map_min(self, expr: Any) -> ExprType:
        return self.promote([self.rec(c) for c in expr.children])

    map_max = map_min

    def map_call_with_kwargs(self, expr: Any) -> ExprType:
        raise KernelcoreError(
            f"call {expr}: keyword arguments are not supported in calls (kernelcore, "
            "like loopy, passes a callable's arguments by position): write "
            f"{expr.function}(...) with positional arguments")

    def map_call(self, expr: Any) -> ExprType:
        name = expr.function.name
        if name in ("indexof", "indexof_vec") and name not in self.callables:
            return ExprType(self.index_dtype)   # (loopy's: an element's linear offset)
        arg_types = [self.rec(p) for p in expr.parameters]
        if name in self.callables:
            return self._registered_call(name, arg_types)
        # weak scalars take the type of the other arguments, as in arithmetic
        common = self.promote(arg_types)
        concrete = [common.dtype if t.weak else t.dtype for t in arg_types]
        result = function_result_dtype(name, concrete)
        return ExprType(result, weak=common.weak and all(t.weak for t in arg_types))

    def _registered_call(self, name: str, arg_types: list[ExprType]) -> ExprType:
        common = self.promote(arg_types)
        concrete = {i: (common.dtype if t.weak else t.dtype)
                    for i, t in enumerate(arg_types)}
        result = result_dtype(specialize_call(self.callables[name], concrete,
                                              self.callables)[0])
        if result is None:
            raise not_ready_error(name)
        return ExprType(result)

    def map_reduction(self, expr: Any) -> ExprType:
        if expr.operation.startswith(("segmented(", "segmented_flag(")):
            return self.rec(expr.expr[expr.operation.startswith("segmented_flag(")])
        if expr.operation in ("argmax", "argmin") and isinstance(expr.expr, tuple):
            self.rec(expr.expr[0])
            return self.rec(expr.expr[1])       # (value, index): the index's type
        t = self.rec(expr.expr)
        if not expr.inames:         # over no inames: the value itself
            return t
        if expr.operation in ("argmax", "argmin"):
            return ExprType(self.index_dtype, weak=True)
        if expr.operation in ("any", "all"):
            return ExprType(np.dtype(np.bool_))
        return t

    def map_type_cast(self, expr: Any) -> ExprType:
        self.rec(expr.child)
        return ExprType(expr.dtype)


class FixedTypeMapper(MemoizedByNode, TypeInferenceMapper):
    """A :class:`TypeInferenceMapper` whose variable dtypes no longer change
    once it is first called (code generation's): the type of each expression
    node is found once (:class:`~kernelcore.ir.expr.MemoizedByNode`; the C
    printer asks at every node for the node and again, inside, for its
    children)."""


def _storage_dtype(t: ExprType) -> np.dtype:
    """The dtype a variable gets from values of type *t* (weak: NumPy's default)."""
    if t.weak and t.dtype.kind in "iu":
        return np.dtype(np.int64)
    return t.dtype


def kernel_type_context(knl: LoopKernel) -> tuple[dict[str, np.dtype | None], set[str]]:
    """Variable dtypes (None: unknown) and the names that count as weak."""
    dtypes: dict[str, np.dtype | None] = {}
    for a in knl.args:
        dtypes[a.name] = a.dtype
    for name, tv in knl.temporary_variables.items():
        dtypes[name] = tv.dtype
    for iname in knl.all_inames():
        dtypes[iname] = knl.index_dtype
    for axis in range(3):
        dtypes[f"lid({axis})"] = dtypes[f"gid({axis})"] = knl.index_dtype
    # loop indices and scalar arguments do not widen array data (NumPy 2's rule for
    # Python scalars)
    weak = set(knl.all_inames()) | {a.name for a in knl.args if isinstance(a, ValueArg)} \
        | {f"{h}({axis})" for h in ("lid", "gid") for axis in range(3)}
    return dtypes, weak


@overload
def infer_types(knl: LoopKernel, *, require_all: bool = ...) -> LoopKernel: ...
@overload
def infer_types(knl: TranslationUnit, *, require_all: bool = ...) -> TranslationUnit: ...
def infer_types(knl: LoopKernel | TranslationUnit, *, require_all: bool = True
                ) -> LoopKernel | TranslationUnit:
    """A copy of *knl* with the dtypes of unknown outputs, temporaries and domain
    parameters filled in from the instructions that write them (as if the
    substitution rules were expanded; the copy keeps them). In a translation
    unit, a kernel calling others is typed as if they were inlined (a callee's
    outputs type the caller's arrays); a callee's unknown types stay unknown
    unless its own instructions decide them."""
    if not isinstance(knl, TranslationUnit):
        callees = callee_kernels(knl)
        if not callees:
            return _infer_kernel_types(knl, require_all=require_all)
        # a kernel calling kernels (as device functions) is typed as if they
        # were inlined
        whole = _infer_kernel_types(inline_calls(knl, callees), require_all=require_all)
        return _with_dtypes(knl, {
            **{a.name: a.dtype for a in whole.args},
            **{t: v.dtype for t, v in whole.temporary_variables.items()
               if t in knl.temporary_variables}})
    kernels = {n: knl[n] for n in knl.kernel_names()}
    typed = {}
    for name, k in kernels.items():
        if kernel_called_names(k) & (set(kernels) - {name}):
            whole = _infer_kernel_types(inline_calls(k, kernels), require_all=require_all)
            typed[name] = _with_dtypes(k, {
                **{a.name: a.dtype for a in whole.args},
                **{t: v.dtype for t, v in whole.temporary_variables.items()
                   if t in k.temporary_variables}})
        else:
            typed[name] = _infer_kernel_types(
                k, require_all=require_all and name in knl.entrypoints)
    result = knl
    for k in typed.values():
        result = result.with_kernel(k)
    return result


def _infer_kernel_types(original, *, require_all: bool = True):
    knl = expand_kernel_rules(original)
    dtypes, weak = kernel_type_context(knl)
    shape_names = {n for a in knl.args if isinstance(getattr(a, "shape", None), tuple)
                   for e in a.shape for n in get_dependencies(e)}
    for p in set(knl.all_params()) | shape_names:
        if dtypes.get(p, knl.index_dtype) is None:
            dtypes[p] = knl.index_dtype
    mapper = TypeInferenceMapper(dtypes, set(weak), knl.callables, knl.index_dtype)
    assignments = [i for i in knl.instructions
                   if isinstance(i, Assignment) and i.assignee is not None]
    writers: dict[str, list] = {}
    for insn in assignments:
        writers.setdefault(assignee_var_name(insn.assignee), []).append(insn)
    def settle(require_all_writers: bool) -> bool:
        progress = False
        for target, insns in writers.items():
            if dtypes.get(target) is not None:
                continue
            found = []
            for insn in insns:
                with contextlib.suppress(_Unknown):
                    found.append(mapper(insn.expression))
            # the target holds every written value: NumPy promotion of their types
            if found and (len(found) == len(insns) or not require_all_writers):
                value_type = mapper.promote(found)
                dtypes[target] = _storage_dtype(value_type)
                if value_type.weak:
                    weak_targets.add(target)
                    mapper.weak_names.add(target)
                progress = True
        return progress

    declared = {n for n, dt in dtypes.items() if dt is not None}
    weak_targets: set[str] = set()
    while True:
        while settle(True) or settle(False):
            pass
        # the last resort, as loopy: a sum or product typed by its known terms
        mapper.lenient = True
        progress = settle(False)
        mapper.lenient = False
        if not progress:
            break
    # widen inferred types until every written value fits (e.g. ``acc = 0`` then
    # ``acc = acc + x[i]`` with float x makes acc float)
    changed = True
    while changed:
        changed = False
        for target, insns in writers.items():
            if target in declared or dtypes.get(target) is None:
                continue
            try:
                found = [mapper(insn.expression) for insn in insns]
            except _Unknown:
                continue
            value_type = mapper.promote(
                [ExprType(dtypes[target], target in weak_targets)] + found)  # type: ignore[arg-type]
            if not value_type.weak and target in weak_targets:
                weak_targets.discard(target)
                mapper.weak_names.discard(target)
            widened = _storage_dtype(value_type)
            if widened != dtypes[target]:
                dtypes[target] = widened
                changed = True
    missing = sorted(n for n, dt in dtypes.items() if dt is None)
    if missing and require_all:
        details = []
        for n in missing:
            kind = "temporary" if n in knl.temporary_variables else "argument"
            details.append(f"'{n}' ({kind})")
        raise TypeInferenceFailure(
            "could not determine the type of " + ", ".join(details)
            + ": pass the argument when calling the kernel, or declare its type "
            "(add_dtypes, or a <dtype> annotation on the temporary)")
    for insn in assignments:
        target = assignee_var_name(insn.assignee)
        try:
            t = mapper(insn.expression)
        except _Unknown:
            continue
        tdt = dtypes[target]
        if tdt is not None and t.dtype.kind == "c" and tdt.kind != "c":
            raise TypeInferenceFailure(
                f"instruction '{insn.id}' assigns a complex value ({t.dtype}) to "
                f"'{target}' of real type {tdt}")
    return _with_dtypes(original, dtypes)


def _with_dtypes(knl, dtypes):
    args = tuple(a.copy(dtype=dtypes.get(a.name)) if a.dtype is None else a
                 for a in knl.args)
    temps = {n: (tv.copy(dtype=dtypes.get(n)) if tv.dtype is None else tv)
             for n, tv in knl.temporary_variables.items()}
    return knl.copy(args=args, temporary_variables=temps)


@for_each_kernel
def add_dtypes(knl: LoopKernel, dtype_dict: dict[str, Any]) -> LoopKernel:
    """A copy of *knl* with the given argument/temporary dtypes set (a key
    may name several variables, separated by commas: ``{"a,b": np.float32}``)."""
    dtype_dict = {name.strip(): to_dtype(v) for k, v in dtype_dict.items()
                  for name in k.split(",") if name.strip()}
    known = {a.name for a in knl.args} | set(knl.temporary_variables)
    unknown = sorted(set(dtype_dict) - known)
    if unknown:
        raise UnknownNameError(f"add_dtypes: kernel '{knl.name}' has no variable(s) "
                               f"{', '.join(unknown)}")

    def update(var):
        new = dtype_dict.get(var.name)
        if new is None:
            return var
        if var.dtype is not None and var.dtype != new:
            raise TypeInferenceFailure(
                f"add_dtypes: '{var.name}' already has type {var.dtype}, cannot set {new}")
        return var.copy(dtype=new)

    return knl.copy(args=tuple(update(a) for a in knl.args),
                    temporary_variables={n: update(t)
                                         for n, t in knl.temporary_variables.items()})


def add_and_infer_dtypes(knl: LoopKernel | TranslationUnit, dtype_dict: dict[str, Any]
                         ) -> LoopKernel | TranslationUnit:
    """:func:`add_dtypes`, then infer what follows from them (a kernel or a
    translation unit)."""
    return infer_types(add_dtypes(knl, dtype_dict), require_all=False)


# {{{ loopy's type objects

from kernelcore.callables import NumpyType  # noqa: E402

if TYPE_CHECKING:
    from kernelcore.ir.kernel import LoopKernel
    from kernelcore.translation_unit import TranslationUnit

#: loopy's base class of types; kernelcore's only kind is :class:`NumpyType`
LoopyType = NumpyType


class AtomicNumpyType(NumpyType):
    """A NumPy type of an array declared for atomic updates."""


AtomicType = AtomicNumpyType


@dataclass(frozen=True)
class OpaqueType:
    """A type known only by its name in the target language."""

    name: str


def to_loopy_type(dtype: Any, allow_auto: bool = False, allow_none: bool = False,
                  for_atomic: bool = False, target: Any = None) -> Any:
    """*dtype* (a NumPy dtype or anything :func:`numpy.dtype` accepts, or a
    :class:`NumpyType`) as a :class:`NumpyType`; :data:`~kernelcore.auto` and
    None pass through where allowed."""
    if dtype is None:
        if allow_none:
            return None
        raise TypeInferenceFailure("dtype must not be None")
    if dtype is auto:
        if allow_auto:
            return auto
        raise TypeInferenceFailure("dtype must not be auto")
    if isinstance(dtype, OpaqueType):
        return dtype
    numpy_dtype = to_dtype(dtype)
    return (AtomicNumpyType if for_atomic else NumpyType)(numpy_dtype)  # type: ignore[arg-type]

# }}}

provide("infer_types", infer_types)
