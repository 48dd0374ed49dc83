"""Expressions of a ``vec`` loop -> OpenCL vector code.

All iterations of a ``vec`` loop run as one statement on vector values: an
array element whose address moves by one per iteration is read with
``vloadN`` and written with ``vstoreN``; values that do not depend on the
iteration stay scalars (OpenCL widens them). What has no vector form here
(complex or boolean values, helper functions, registered callables,
conditions that are not comparisons) raises :class:`NotVectorizable`, and
the loop is unrolled instead.

Public names: NotVectorizable, vector_ctype, lane_offset,
VectorExpressionMapper, check_lanes_independent, check_selects_in_bounds,
vector_temporaries.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pymbolic.primitives as prim

from kernelcore.check_bounds import reads_unguarded_in_bounds
from kernelcore.codegen.expression import (
    PREC_NONE,
    PREC_REL,
    PREC_SHIFT,
    PREC_SUM,
    PREC_TERNARY,
    PREC_UNARY,
    CExpressionMapper,
    _is_two,
)
from kernelcore.diagnostic import KernelcoreError
from kernelcore.ir.data import AddressSpace, ValueArg, c_order_strides
from kernelcore.ir.domain import static_range
from kernelcore.ir.expr import (
    KnownVariables,
    TypeCast,
    WalkMapper,
    collect_accesses,
    get_dependencies,
)
from kernelcore.ir.simplify import simplify
from kernelcore.ir.tags import VECTOR_WIDTHS, VectorizeTag


def multiple_of(expr: Any, width: int) -> bool:
    """Whether integer expression *expr* is a multiple of *width* for all
    values of its variables (a sufficient, syntactic check)."""
    if isinstance(expr, (int, np.integer)):
        return int(expr) % width == 0
    if isinstance(expr, prim.Sum):
        return all(multiple_of(ch, width) for ch in expr.children)
    if isinstance(expr, prim.Product):
        return any(multiple_of(ch, width) for ch in expr.children)
    return False


class NotVectorizable(Exception):
    """A ``vec`` loop whose body has no vector form (the message says why)."""


def vector_ctype(target: Any, dtype: np.dtype, width: int) -> str:
    """The OpenCL vector type of *width* elements of *dtype* (``float8``)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iuf":
        raise NotVectorizable(f"no vector type for {dtype}")
    base = target.dtype_to_ctype(dtype)
    if base.startswith("unsigned "):
        base = "u" + base[len("unsigned "):]
    return f"{base}{width}"


def lane_offset(expr: Any, iname: str) -> tuple[Any, int]:
    """(*rest*, *c*) with *expr* == *rest* + *c* * *iname* and *rest* not
    depending on *iname*; NotVectorizable if *expr* is not of that form."""
    if iname not in get_dependencies(expr):
        return expr, 0
    if isinstance(expr, prim.Variable):
        return 0, 1
    if isinstance(expr, prim.Sum):
        parts = [lane_offset(ch, iname) for ch in expr.children]
        return simplify(prim.Sum(tuple(r for r, _ in parts))), sum(c for _, c in parts)
    if isinstance(expr, prim.Product):
        factors = [ch for ch in expr.children if iname in get_dependencies(ch)]
        scale = [ch for ch in expr.children if iname not in get_dependencies(ch)]
        if len(factors) == 1 and all(isinstance(f, (int, np.integer)) for f in scale):
            rest, c = lane_offset(factors[0], iname)
            k = int(np.prod(scale)) if scale else 1  # type: ignore[arg-type]
            return simplify(prim.Product((k, rest))), k * c
    raise NotVectorizable(f"index {expr} is not affine in '{iname}'")


class VectorExpressionMapper(CExpressionMapper):
    """C code for expressions inside a ``vec`` loop over *iname*, whose
    *width* iterations start at *lower*: values that depend on *iname* are
    vectors of *width* elements."""

    def __init__(self, knl, target, types, helpers, is_nonnegative, vector_temps,
                 iname: str, lower, width: int):
        super().__init__(knl, target, types, helpers, is_nonnegative, vector_temps)
        self.iname = iname
        self.lower = lower
        self.width = width
        self._variables = KnownVariables()
        #: id of an access -> (the access, kept alive; its :meth:`_lanes`)
        self._lane_memo: dict[int, tuple[Any, tuple[str, bool]]] = {}

    def is_vector(self, expr: Any) -> bool:
        return self.iname in self._variables(expr)

    def vtype(self, dtype: np.dtype) -> str:
        return vector_ctype(self.target, dtype, self.width)

    def vector_code(self, expr: Any, dtype: np.dtype) -> str:
        """*expr* as a vector of *dtype* (a scalar is widened)."""
        code = self.code(expr, PREC_NONE, dtype)
        return code if self.is_vector(expr) else f"({self.vtype(dtype)}) ({code})"

    def code(self, expr: Any, prec: int = PREC_NONE, want: np.dtype | None = None) -> str:
        if self.is_vector(expr):
            kinds = {self.types(expr).dtype.kind} | (
                {np.dtype(want).kind} if want is not None else set())
            if kinds & set("cb"):
                raise NotVectorizable(f"{expr} is complex or boolean")
        return super().code(expr, prec, want)

    def promotes_in_c(self, expr: Any, dtype: np.dtype) -> bool:
        # (OpenCL computes vectors of narrow integers in their own type)
        return not self.is_vector(expr) and super().promotes_in_c(expr, dtype)

    def literal(self, value: Any, dtype: np.dtype) -> str:
        text = super().literal(value, dtype)
        if dtype.kind in "iu" and dtype.itemsize < 4:
            # (an int literal meeting a short16 has the greater rank: an error)
            return f"(({self.target.dtype_to_ctype(dtype)}) {text})"
        return text

    def unsigned_twin(self, expr: Any, dtype: np.dtype) -> np.dtype:
        if not self.is_vector(expr):
            return super().unsigned_twin(expr, dtype)
        return np.dtype(f"u{dtype.itemsize}")       # (vectors keep their size)

    def reinterpret(self, expr: Any, code: str, dtype: np.dtype, prec: int) -> str:
        if not self.is_vector(expr):
            return super().reinterpret(expr, code, dtype, prec)
        return f"as_{self.vtype(dtype)}({code})"

    def convert(self, expr: Any, t: Any, want: np.dtype, prec: int) -> str:
        if not self.is_vector(expr):
            return super().convert(expr, t, want, prec)
        if {t.dtype.kind, want.kind} == {"i", "u"} and t.dtype.itemsize == want.itemsize:
            # (the same bits: convert_ of an out-of-range value is undefined)
            return f"as_{self.vtype(want)}({self.wrapped(expr, PREC_NONE, t)})"
        return f"convert_{self.vtype(want)}({self.wrapped(expr, PREC_NONE, t)})"

    def _shift(self, op: str, expr, prec: int, dtype) -> str:
        """A shift whose count is a vector: OpenCL shifts no scalar by a
        vector, so a scalar shiftee is widened first."""
        if not self.is_vector(expr.shift) or self.is_vector(expr.shiftee):
            return self._binary_int(op, (expr.shiftee, expr.shift), PREC_SHIFT, prec, dtype)
        t = self.types(expr.shiftee).dtype
        shiftee = f"({self.vtype(t)}) {self.code(expr.shiftee, PREC_UNARY, dtype)}"
        return self._paren(f"{shiftee} {op} {self.code(expr.shift, PREC_SHIFT + 1, dtype)}",
                           PREC_SHIFT, prec)

    def map_left_shift(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self._shift("<<", expr, prec, dtype)

    def map_right_shift(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self._shift(">>", expr, prec, dtype)

    # {{{ lanes

    def lane_pointer(self, expr: prim.Subscript) -> str:
        """``p + base``: where the lanes of array access *expr* start (its
        address must move by one element per iteration)."""
        return self._lanes(expr)[0]

    def _lanes(self, expr: prim.Subscript) -> tuple[str, bool]:
        """(:meth:`lane_pointer`, whether that pointer is a whole vector's
        address in an array of local or global memory: the array's declared
        alignment is a multiple of the vector's size and *base* a multiple of
        the width); found once per access (:meth:`vector_at` asks, then
        :meth:`lane_pointer` where it is not aligned)."""
        known = self._lane_memo.get(id(expr))
        if known is None:
            known = self._lane_memo[id(expr)] = (expr, self._find_lanes(expr))
        return known[1]

    def _find_lanes(self, expr: prim.Subscript) -> tuple[str, bool]:
        name = expr.aggregate.name  # type: ignore[union-attr]
        var = self.knl.get_var(name)
        if isinstance(var, ValueArg) or var.dtype.kind not in "iuf":
            raise NotVectorizable(f"'{name}' has no vector form")
        index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        rest, step = lane_offset(self.flat_index(var, index), self.iname)
        if step != 1:
            raise NotVectorizable(f"{expr} moves by {step} elements per iteration")
        base = simplify(prim.Sum((rest, self.lower)))  # type: ignore[arg-type]
        alignment = getattr(var, "alignment", None)
        aligned = (getattr(var, "address_space", None) in (AddressSpace.LOCAL,
                                                           AddressSpace.GLOBAL)
                   and alignment is not None
                   and alignment % (self.width * var.dtype.itemsize) == 0
                   and multiple_of(base, self.width))
        return (f"{name} + {self.code(base, PREC_SUM + 1)}" if base != 0 else name), aligned

    def vector_at(self, expr: prim.Subscript) -> str | None:
        """``*(__local float4 *) (p + base)`` where *expr*'s lanes are a
        whole aligned vector of local or global memory (one vector load or
        store), else None (``vloadN``/``vstoreN``, which assume no
        alignment)."""
        pointer, aligned = self._lanes(expr)
        if not aligned:
            return None
        var = self.knl.get_var(expr.aggregate.name)  # type: ignore[union-attr]
        qual = self.target.address_space_qualifier(var.address_space)
        const = " const" if var.name not in self.knl.get_written_variables() else ""
        return f"*({qual} {self.vtype(var.dtype)}{const} *) ({pointer})"

    def map_variable(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if expr.name != self.iname:
            return super().map_variable(expr, prec, dtype)
        lanes = ", ".join(str(k) for k in range(self.width))
        first = self.code(self.lower, PREC_SUM, dtype)
        own = f"({self.vtype(dtype)}) ({lanes})"
        return self._paren(f"{first} + {own}", PREC_SUM, prec) if self.lower != 0 else own

    def map_subscript(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if not self.is_vector(expr):
            return super().map_subscript(expr, prec, dtype)
        if expr.aggregate.name in self.vector_temps:
            return self.whole_vector(expr)
        whole = self.vector_at(expr)
        if whole is not None:
            return self._paren(whole, PREC_UNARY, prec)
        return f"vload{self.width}(0, {self.lane_pointer(expr)})"

    def store(self, assignee: prim.Subscript, value: str) -> str:
        """The statement writing the lanes of *value* to *assignee*."""
        if assignee.aggregate.name in self.vector_temps:  # type: ignore[union-attr]
            return f"{self.whole_vector(assignee)} = {value};"
        whole = self.vector_at(assignee)
        if whole is not None:
            return f"{whole} = {value};"
        return f"vstore{self.width}({value}, 0, {self.lane_pointer(assignee)});"

    def whole_vector(self, expr: prim.Subscript) -> str:
        """The vector temporary's vector that *expr* spans with its lanes."""
        index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        if index[-1] != prim.Variable(self.iname) or any(
                self.is_vector(ix) for ix in index[:-1]):
            raise NotVectorizable(f"{expr} is not one lane of each vector")
        return self.vector_element(expr)

    # }}}

    # {{{ operations with a different vector form

    def map_comparison(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if self.is_vector(expr):
            raise NotVectorizable(f"comparison {expr} outside a condition")
        return super().map_comparison(expr, prec, dtype)

    def _scalar_logic(self, expr) -> None:
        if self.is_vector(expr):
            raise NotVectorizable(f"logical operation {expr}")

    def map_logical_and(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        self._scalar_logic(expr)
        return super().map_logical_and(expr, prec, dtype)

    def map_logical_or(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        self._scalar_logic(expr)
        return super().map_logical_or(expr, prec, dtype)

    def map_logical_not(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        self._scalar_logic(expr)
        return super().map_logical_not(expr, prec, dtype)

    def map_if(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if not self.is_vector(expr):
            return super().map_if(expr, prec, dtype)
        then = self.vector_code(expr.then, dtype)
        else_ = self.vector_code(expr.else_, dtype)
        cond = expr.condition
        while isinstance(cond, TypeCast) and np.dtype(cond.dtype) == np.bool_ \
                and isinstance(cond.child, prim.Comparison):
            cond = cond.child       # (a comparison is a bool already)
        if not self.is_vector(cond):
            code = f"{self._cond(cond, PREC_TERNARY + 1)} ? {then} : {else_}"
            return self._paren(code, PREC_TERNARY, prec)
        if isinstance(cond, prim.Comparison):
            settled = self.settled_comparison(cond)
            if settled is not None:
                return then if settled else else_
        return f"select({else_}, {then}, {self._mask(cond, dtype)})"

    def _mask(self, cond, dtype) -> str:
        """The lane mask (all bits set where true) of the vector condition
        *cond*: comparisons of *dtype*-sized values joined by and, or, not."""
        if isinstance(cond, prim.LogicalNot):
            return f"~({self._mask(cond.child, dtype)})"
        if isinstance(cond, (prim.LogicalAnd, prim.LogicalOr)):
            op = " & " if isinstance(cond, prim.LogicalAnd) else " | "
            return op.join(f"({self._mask(c, dtype)})" for c in cond.children)
        if not isinstance(cond, prim.Comparison) or not self.is_vector(cond):
            raise NotVectorizable(f"condition {cond} is not a comparison of lanes")
        common = self._common([cond.left, cond.right])
        if common.kind not in "iuf" or common.itemsize != dtype.itemsize:
            raise NotVectorizable(f"condition {cond} compares {common}, not "
                                  f"{dtype.itemsize}-byte values")
        return (f"{self.code(cond.left, PREC_REL, common)} {cond.operator} "
                f"{self.code(cond.right, PREC_REL + 1, common)}")

    def _helper_path(self, expr: Any, dtype) -> bool:
        """Whether ``//`` or ``%`` in *expr* needs a helper function."""
        return not (dtype.kind == "u" or (dtype.kind in "ib" and self._nonneg_pos_const(expr)))

    def map_floor_div(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if self.is_vector(expr) and self._helper_path(expr, dtype):
            raise NotVectorizable(f"floor division {expr} needs a helper")
        return super().map_floor_div(expr, prec, dtype)

    def map_remainder(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if self.is_vector(expr) and self._helper_path(expr, dtype):
            raise NotVectorizable(f"remainder {expr} needs a helper")
        return super().map_remainder(expr, prec, dtype)

    def map_power(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if not self.is_vector(expr):
            return super().map_power(expr, prec, dtype)
        if dtype.kind != "f":
            raise NotVectorizable(f"power {expr} of {dtype} values")
        if _is_two(expr.exponent):
            return super().map_power(expr, prec, dtype)
        if not self.target.vector_builtin("pow", dtype, self.width):
            raise NotVectorizable(f"pow of {self.width} {dtype} values is not reliable here")
        return (f"pow({self.vector_code(expr.base, dtype)}, "
                f"{self.vector_code(expr.exponent, dtype)})")

    def _call(self, name, params, dtype):
        if not any(self.is_vector(p) for p in params):
            return super()._call(name, params, dtype)
        if name in self.knl.callables:
            raise NotVectorizable(f"'{name}' is a registered callable")
        if name in ("indexof", "indexof_vec"):
            raise NotVectorizable(f"{name} of a vector of elements")
        rule, common = self.call_types(name, params, dtype)
        if rule in ("real", "same"):
            return super()._call(name, params, dtype)
        result = self.types(prim.Call(prim.Variable(name), tuple(params))).dtype
        if result.kind not in "iuf" or (name == "abs" and common.kind == "i"):
            raise NotVectorizable(f"'{name}' of {common} has no vector form here")
        fname = self.target.function_name(name, [common] * len(params), dtype)
        if self.target.helper_function_source(fname) is not None:
            vector = self.target.vector_helper(fname, self.width)
            if vector is None:
                raise NotVectorizable(f"'{name}' needs a helper function")
            self._function(name, [common] * len(params), dtype)  # (its scalar version first)
            fname, source = vector
            self.helpers.helpers.setdefault(fname, source)
        elif not self.target.vector_builtin(fname, common, self.width):
            raise NotVectorizable(f"'{fname}' of {self.width} {common} values is not "
                                  "reliable here")
        args = ", ".join(self.vector_code(p, common) for p in params)
        return f"{fname}({args})"

    # }}}


class _LaneConditions(WalkMapper):
    """The ``if(...)`` expressions whose condition depends on *iname*."""

    def __init__(self, iname: str):
        self.iname = iname
        self.found: list[prim.If] = []

    def map_if(self, expr):
        if self.iname in get_dependencies(expr.condition):
            self.found.append(expr)
        super().map_if(expr)


def check_selects_in_bounds(knl: Any, insn: Any, iname: str) -> None:
    """NotVectorizable if an ``if(...)`` of *insn* whose condition differs
    between lanes of the ``vec`` loop *iname* has a branch that may read
    outside an array where the condition does not hold: as a ``select``,
    both branches are read in every lane (``if(i < n, a[i], b[i - n])``)."""
    finder = _LaneConditions(iname)
    finder(insn.expression)
    for expr in finder.found:
        for branch in (expr.then, expr.else_):
            if not reads_unguarded_in_bounds(knl, branch, insn.within_inames,
                                             tuple(insn.predicates)):
                raise NotVectorizable(f"as a 'select', {expr} would read {branch} "
                                      "in every lane, also outside its array")


def check_lanes_independent(insns: Any, iname: str) -> None:
    """NotVectorizable unless every array the loop body *insns* writes is only
    accessed there at one index per iteration (so running each instruction
    for all iterations at once keeps the order of every element's accesses)."""
    written = set().union(*(insn.assignee_names() for insn in insns))
    by_name: dict[str, set] = {}
    for name, index, _ in collect_accesses(insns).accesses:
        by_name.setdefault(name, set()).add(index)
    for name in sorted(written & set(by_name)):
        if len(by_name[name]) > 1:
            raise NotVectorizable(f"'{name}' is written and accessed at other "
                                  f"indices in the '{iname}' loop")


def vector_temporaries(knl: Any) -> dict[str, int]:
    """Private temporaries held as vectors (name -> width): those whose last
    axis, of *w* elements, is only ever indexed by a ``vec`` iname running
    over 0..*w*-1 (the per-lane copies of ``vec`` loops' temporaries). One of
    shape (..., *w*) becomes an array of vectors, one per leading index."""
    candidates = {}
    for name, tv in knl.temporary_variables.items():
        shape = tv.shape if isinstance(tv.shape, tuple) else ()
        if tv.address_space == AddressSpace.PRIVATE and shape \
                and shape[-1] in VECTOR_WIDTHS and tv.dtype is not None \
                and np.dtype(tv.dtype).kind in "iuf" \
                and tuple(tv.element_strides()) == c_order_strides(shape):
            candidates[name] = shape[-1]
    lanes = {}
    for iname, tag in knl.iname_tags.items() if candidates else ():
        if isinstance(tag, VectorizeTag):
            try:
                lanes[iname] = static_range(knl, iname)
            except KernelcoreError:
                pass                    # not a lane index of a vector
    walker = collect_accesses(knl.instructions)
    for name, index, _ in walker.accesses:
        if name in candidates and not (
                isinstance(index[-1], prim.Variable)
                and lanes.get(index[-1].name) == (0, candidates[name] - 1)):
            del candidates[name]
    return {name: w for name, w in candidates.items() if name not in walker.bare}

