"""Expressions -> C code, with NumPy's types made explicit.

Every operand is converted to the type its operation computes in (so C's
promotion rules never disagree with NumPy's); literals are written in that type
(``2.0f``); Python-semantics ``//`` and ``%`` use helper functions unless the
operands are provably non-negative.

Public names: CExpressionMapper (and HelperRegistry, from :mod:`kernelcore.codegen.helpers`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pymbolic.primitives as prim
from pymbolic.mapper import Mapper

from kernelcore.codegen.calls import RegisteredCallEmitter
from kernelcore.codegen.helpers import HelperRegistry
from kernelcore.diagnostic import CodeGenerationError
from kernelcore.functions import MATH_FUNCTIONS, unknown_function_error
from kernelcore.ir.data import AddressSpace, ArrayArg, TemporaryVariable
from kernelcore.ir.expr import ResolvedFunction, TypeCast, WalkMapper
from kernelcore.ir.simplify import recomposed_terms, simplify
from kernelcore.types import ExprType, TypeInferenceMapper

PREC_NONE = 0
PREC_TERNARY = 3
PREC_LOR = 4
PREC_LAND = 5
PREC_BOR = 6
PREC_BXOR = 7
PREC_BAND = 8
PREC_EQ = 9
PREC_REL = 10
PREC_SHIFT = 11
PREC_SUM = 12
PREC_PRODUCT = 13
PREC_UNARY = 14
PREC_CALL = 15


class _LargeConstantFinder(WalkMapper):
    def __init__(self):
        self.found = False

    def map_constant(self, expr):
        if isinstance(expr, (int, np.integer)) and not isinstance(expr, bool) \
                and abs(int(expr)) >= _LARGE:
            self.found = True


_LARGE = 2**16


def _has_large_constant(expr) -> bool:
    finder = _LargeConstantFinder()
    finder(expr)
    return finder.found


_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}

#: operations whose overflow on signed ``int``/``long`` C leaves undefined
_SIGNED_OVERFLOW = (prim.Sum, prim.Product, prim.LeftShift)

#: operations whose C result on ``char``/``short`` operands is an ``int``
_C_PROMOTED = (prim.Sum, prim.Product, prim.FloorDiv, prim.Remainder, prim.BitwiseNot,
               prim.LeftShift, prim.RightShift, prim.BitwiseAnd, prim.BitwiseOr,
               prim.BitwiseXor, prim.If)


def _is_minus_one(expr) -> bool:
    """Whether *expr* is the real literal -1."""
    return isinstance(expr, (int, float, np.integer, np.floating)) \
        and not isinstance(expr, bool) and expr == -1


def _is_two(expr) -> bool:
    """Whether *expr* is the literal 2 (a power that is a square, as in NumPy)."""
    return isinstance(expr, (int, float, np.integer, np.floating)) \
        and not isinstance(expr, bool) and expr == 2


def _is_int(dt: np.dtype) -> bool:
    return dt.kind in "iub"


class CExpressionMapper(Mapper):
    """pymbolic expression -> C source string."""

    def __init__(self, knl, target, types: TypeInferenceMapper, helpers: HelperRegistry,
                 is_nonnegative: Callable[[object], bool] | None = None,
                 vector_temps: dict[str, int] | None = None):
        self.knl = knl
        self.target = target
        self.types = types
        self.helpers = helpers
        self.is_nonnegative = is_nonnegative or (lambda e: False)
        #: private temporaries held in vector variables (name -> width)
        self.vector_temps = vector_temps or {}

    # {{{ entry points

    def __call__(self, expr: Any, prec: int = PREC_NONE, want: np.dtype | None = None) -> str:
        return self.code(expr, prec, want)

    def code(self, expr: Any, prec: int = PREC_NONE, want: np.dtype | None = None) -> str:
        """C code for *expr*, converted to *want* if given."""
        t = self.types(expr)
        if not t.weak:      # (a weak literal is written in the type it meets)
            self.helpers.dtypes.add(t.dtype)
        if want is not None:
            self.helpers.dtypes.add(np.dtype(want))
        if t.weak and t.dtype == np.int32 and _has_large_constant(expr):
            # index arithmetic with large coefficients (from ISL bounds) could
            # overflow 32 bits: compute it in 64
            t = ExprType(np.dtype(np.int64), weak=True)
            if want is None:
                return self.rec(expr, prec, t.dtype)
        if want is not None and isinstance(expr, (int, float, complex, np.generic)) \
                and not isinstance(expr, bool) and (t.weak or np.dtype(want) != t.dtype):
            if not (np.dtype(want).kind != "c" and isinstance(expr, complex)):
                return self.literal(expr, np.dtype(want))
        if want is None or np.dtype(want) == t.dtype:
            return self.wrapped(expr, prec, t)
        return self.convert(expr, t, np.dtype(want), prec)

    def wrapped(self, expr: Any, prec: int, t: ExprType) -> str:
        """C code for *expr* of type *t*, wrapping around on overflow as NumPy
        does where C would not: sums, products and left shifts of signed data
        and of narrow unsigned data (which C computes in ``int``), whose
        overflow C leaves undefined, are computed unsigned (``uint8(200) +
        uint8(200)`` is 144); other arithmetic on integers narrower than
        ``int`` is cast back to their type."""
        dtype = t.dtype
        if self.overflows_in_c(expr, t):
            unsigned = self.unsigned_twin(expr, dtype)
            return self.reinterpret(expr, self.rec(expr, PREC_NONE, unsigned), dtype, prec)
        if not self.promotes_in_c(expr, dtype):
            return self.rec(expr, prec, dtype)
        return self._paren(self.wrap_to(self.rec(expr, PREC_NONE, dtype), dtype),
                           PREC_UNARY, prec)

    def wrap_to(self, code: str, dtype: np.dtype) -> str:
        """*code*, an integer value, as the integer *dtype*, wrapping around.
        OpenCL converts to a signed type through its unsigned twin and
        ``as_*`` (a conversion out of a signed type's range is the
        implementation's choice in C)."""
        ctype = self.target.dtype_to_ctype(dtype)
        if dtype.kind != "i" or not self.target.vector_types:
            return f"({ctype}) ({code})"
        if dtype.itemsize < 4:
            # sign-extended in int arithmetic first: NVIDIA's OpenCL widened a
            # short made by a cast, by as_short or by int arithmetic from its
            # low bits unextended ((long) (short) -32768 came out as 32768)
            shift = 32 - 8 * dtype.itemsize
            return f"({ctype}) (((int) ((unsigned int) ({code}) << {shift})) >> {shift})"
        unsigned = self.target.dtype_to_ctype(np.dtype(f"u{dtype.itemsize}"))
        return f"as_{ctype}(({unsigned}) ({code}))"

    def overflows_in_c(self, expr: Any, t: ExprType) -> bool:
        """Whether *expr* is a sum, product or left shift of signed or narrow
        unsigned data (not index arithmetic, whose values are weakly typed)."""
        dtype = t.dtype
        return (not t.weak and isinstance(expr, _SIGNED_OVERFLOW)
                and (dtype.kind == "i" or dtype.kind == "u" and dtype.itemsize < 4))

    def unsigned_twin(self, expr: Any, dtype: np.dtype) -> np.dtype:
        """The unsigned type *expr* of integer *dtype* is computed in: of its
        size, at least ``unsigned int`` (C computes narrower ones in ``int``)."""
        return np.dtype(f"u{max(dtype.itemsize, 4)}")

    def reinterpret(self, expr: Any, code: str, dtype: np.dtype, prec: int) -> str:
        """*code*, the value of *expr* computed in an unsigned type, as *dtype*."""
        return self._paren(self.wrap_to(code, dtype), PREC_UNARY, prec)

    def promotes_in_c(self, expr: Any, dtype: np.dtype) -> bool:
        """Whether C computes *expr*, of the narrow integer *dtype*, in a wider type."""
        return dtype.kind in "iu" and dtype.itemsize < 4 and isinstance(expr, _C_PROMOTED)

    def literal(self, value: Any, dtype: np.dtype) -> str:
        """*value* written as a constant of *dtype*."""
        return self.target.literal(value, dtype)

    def convert(self, expr: Any, t: ExprType, want: np.dtype, prec: int) -> str:
        if want.kind == "c":
            prefix = self.target.complex_prefix(want)
            if t.dtype.kind == "c":
                inner = self.rec(expr, PREC_CALL, t.dtype)
                real_t = "float" if want == np.complex64 else "double"
                return (f"{prefix}_new(({real_t}) ({inner}).real, "
                        f"({real_t}) ({inner}).imag)")
            real_dt = np.dtype(np.float32 if want == np.complex64 else np.float64)
            return f"{prefix}_fromreal({self.code(expr, PREC_NONE, real_dt)})"
        if t.dtype.kind == "c":
            raise CodeGenerationError(f"cannot convert complex value {expr} to {want}")
        while isinstance(expr, TypeCast) and self.types(expr.child) == t:
            expr = expr.child                     # (a cast to its own type)
        if self.overflows_in_c(expr, t) and want == self.unsigned_twin(expr, t.dtype) \
                and want.itemsize == t.dtype.itemsize:
            return self.rec(expr, prec, want)     # (computed unsigned anyway)
        ctype = self.target.dtype_to_ctype(want)
        if t.dtype.kind in "iu" and want.kind == "i" and not t.weak and (
                want.itemsize < t.dtype.itemsize
                or want.itemsize == t.dtype.itemsize and t.dtype.kind == "u"):
            # (a value that may lie outside the signed type: NumPy wraps it)
            return self._paren(self.wrap_to(self.wrapped(expr, PREC_NONE, t), want),
                               PREC_UNARY, prec)
        inner = self.wrapped(expr, PREC_UNARY, t)
        return self._paren(f"({ctype}) {inner}", PREC_UNARY, prec)

    # }}}

    @staticmethod
    def _paren(s: str, own: int, enclosing: int) -> str:
        return f"({s})" if own < enclosing else s

    def _complex(self, dt: np.dtype) -> str:
        return self.target.complex_prefix(dt)

    def map_constant(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if isinstance(expr, bool):
            return "1" if expr else "0"
        s = self.literal(expr, dtype)
        return self._paren(s, PREC_UNARY, prec) if s.startswith("-") and prec > PREC_SUM else s

    def map_nan(self, expr: prim.NaN, prec: int, dtype: np.dtype) -> str:
        return self.literal(np.nan, dtype)

    def map_variable(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        name = expr.name
        var = self.knl.arg_dict.get(name) or self.knl.temporary_variables.get(name)
        if isinstance(var, (ArrayArg, TemporaryVariable)) and var.shape == () and (
                isinstance(var, ArrayArg) or var.address_space != AddressSpace.PRIVATE):
            return f"{name}[0]"
        return name

    def flat_index(self, var: Any, index: tuple) -> Any:
        """The linear element offset of *index* into *var*, as an expression."""
        offset = getattr(var, "offset", 0)
        offset = offset if isinstance(offset, int) else 0     # (loopy's, in elements)
        if var.shape is None and len(index) == 1:
            # an array without a shape: a plain pointer
            return prim.Sum((index[0], offset)) if offset else index[0]
        if var.shape is None or len(index) != len(var.shape):
            raise CodeGenerationError(
                f"'{var.name}' has {len(var.shape or ())} dimension(s) but is indexed with "
                f"{len(index)} subscript(s)")
        terms = []
        for ix, stride in zip(index, var.element_strides()):
            if ix == 0:
                continue
            if stride == 1:
                terms.append(ix)
            else:
                terms.append(prim.Product((stride, ix)))
        if offset:
            terms.append(offset)
        if not terms:
            return 0
        flat: list = []
        for t in terms:
            flat.extend(t.children if isinstance(t, prim.Sum) else [t])
        if len(flat) > 1:
            flat = recomposed_terms(flat)
        if not flat:
            return 0
        return flat[0] if len(flat) == 1 else prim.Sum(tuple(flat))

    def map_subscript(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        name = expr.aggregate.name
        var = self.knl.get_var(name)
        index = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        if name in self.vector_temps:
            lane = index[-1]
            if not isinstance(lane, (int, np.integer)):
                raise CodeGenerationError(f"vector temporary '{name}' indexed by {index}")
            return f"{self.vector_element(expr)}.s{int(lane):x}"
        for ix in index:
            if self.types(ix).dtype.kind not in "biu":
                raise CodeGenerationError(f"'{name}' is indexed by {ix}, of type "
                                          f"{self.types(ix).dtype}: indices must be integers")
        flat = self.flat_index(var, index)
        idx_code = self.code(flat, PREC_NONE)
        return f"{name}[{idx_code}]"

    def vector_element(self, expr: prim.Subscript) -> str:
        """The vector of temporary ``expr.aggregate`` (one of
        :attr:`vector_temps`) that holds element *expr*."""
        name = expr.aggregate.name  # type: ignore[union-attr]
        var = self.knl.get_var(name)
        if len(var.shape) == 1:
            return name
        lead = self.flat_index(var.copy(shape=var.shape[:-1], strides=None),
                               tuple(expr.index[:-1]))  # type: ignore[index, call-overload]
        return f"{name}[{self.code(simplify(lead), PREC_NONE)}]"

    def map_sum(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if dtype.kind == "c":
            result = self.code(expr.children[0], PREC_NONE, dtype)
            for ch in expr.children[1:]:
                result = f"{self._complex(dtype)}_add({result}, {self.code(ch, PREC_NONE, dtype)})"
            return result
        # later floating terms that are sums keep their parentheses: a + (b + c)
        # rounds otherwise than a + b + c (integers wrap the same either way)
        later = PREC_SUM + (dtype.kind == "f")
        parts = [self.code(ch, PREC_SUM if k == 0 else later, dtype)
                 for k, ch in enumerate(expr.children)]
        return self._paren(" + ".join(parts), PREC_SUM, prec)

    def map_product(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if dtype.kind == "c":
            # a factor -1 negates (as a complex product, 0 * inf in its cross
            # terms would make -(inf + 0.5j) NaN)
            negated = [ch for ch in expr.children if _is_minus_one(ch)]
            factors = [ch for ch in expr.children if not _is_minus_one(ch)] or [1]
            result = self.code(factors[0], PREC_NONE, dtype)
            for ch in factors[1:]:
                result = f"{self._complex(dtype)}_mul({result}, {self.code(ch, PREC_NONE, dtype)})"
            return f"{self._complex(dtype)}_neg({result})" if len(negated) % 2 else result
        children = expr.children
        if dtype.kind == "f" and len(children) > 1 and _is_minus_one(children[0]):
            # -x negates (a product with -1.0 would keep a NaN's sign); -1 * a * b
            # is (-a) * b, the same rounding
            operand = self.code(children[1], PREC_UNARY, dtype)
            first = f"-({operand})" if operand.startswith("-") else "-" + operand
            rest = [self.code(ch, PREC_PRODUCT + 1, dtype) for ch in children[2:]]
            return self._paren(" * ".join([first, *rest]), PREC_PRODUCT if rest
                               else PREC_UNARY, prec)
        # later factors get parentheses if they divide: a * (b / c) != a * b / c
        parts = [self.code(ch, PREC_PRODUCT + (k > 0), dtype)
                 for k, ch in enumerate(children)]
        return self._paren(" * ".join(parts), PREC_PRODUCT, prec)

    def map_quotient(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if dtype.kind == "c":
            return (f"{self.target.complex_divide(dtype)}("
                    f"{self.code(expr.numerator, PREC_NONE, dtype)}, "
                    f"{self.code(expr.denominator, PREC_NONE, dtype)})")
        num = self.code(expr.numerator, PREC_PRODUCT, dtype)
        den = self.code(expr.denominator, PREC_PRODUCT + 1, dtype)
        if _is_int(dtype):
            raise CodeGenerationError(f"true division {expr} with integer result type")
        return self._paren(f"{num} / {den}", PREC_PRODUCT, prec)

    def _nonneg_pos_const(self, expr) -> bool:
        return (isinstance(expr.denominator, int) and expr.denominator > 0
                and self.is_nonnegative(expr.numerator))

    def map_floor_div(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if dtype.kind == "c":
            raise CodeGenerationError(f"floor division of complex numbers: {expr}")
        ctype = self.target.dtype_to_ctype(dtype)
        if dtype.kind == "u" or (dtype.kind in "ib" and self._nonneg_pos_const(expr)):
            num = self.code(expr.numerator, PREC_PRODUCT, dtype)
            den = self.code(expr.denominator, PREC_PRODUCT + 1, dtype)
            return self._paren(f"{num} / {den}", PREC_PRODUCT, prec)
        fn = self.helpers.floordiv(ctype, dtype.kind == "f")
        return (f"{fn}({self.code(expr.numerator, PREC_NONE, dtype)}, "
                f"{self.code(expr.denominator, PREC_NONE, dtype)})")

    def map_remainder(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if dtype.kind == "c":
            raise CodeGenerationError(f"remainder of complex numbers: {expr}")
        if dtype.kind == "u" or (dtype.kind in "ib" and self._nonneg_pos_const(expr)):
            num = self.code(expr.numerator, PREC_PRODUCT, dtype)
            den = self.code(expr.denominator, PREC_PRODUCT + 1, dtype)
            return self._paren(f"{num} % {den}", PREC_PRODUCT, prec)
        fn = self.helpers.mod(self.target.dtype_to_ctype(dtype), dtype.kind == "f")
        return (f"{fn}({self.code(expr.numerator, PREC_NONE, dtype)}, "
                f"{self.code(expr.denominator, PREC_NONE, dtype)})")

    def map_power(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if dtype.kind == "c":
            return (f"{self._complex(dtype)}_pow({self.code(expr.base, PREC_NONE, dtype)}, "
                    f"{self.code(expr.exponent, PREC_NONE, dtype)})")
        if _is_int(dtype):
            fn = self.helpers.ipow(self.target.dtype_to_ctype(dtype))
            return (f"{fn}({self.code(expr.base, PREC_NONE, dtype)}, "
                    f"{self.code(expr.exponent, PREC_NONE, dtype)})")
        if _is_two(expr.exponent):
            base = self.code(expr.base, PREC_PRODUCT + 1, dtype)
            return self._paren(f"{base} * {base}", PREC_PRODUCT, prec)
        # (not pown: PoCL's double16 pown is wrong)
        pow_name = self._function('pow', [dtype, dtype], dtype)
        return (f"{pow_name}({self.code(expr.base, PREC_NONE, dtype)}, "
                f"{self.code(expr.exponent, PREC_NONE, dtype)})")

    def _common(self, exprs) -> np.dtype:
        return self.types.promote([self.types(e) for e in exprs]).dtype

    def map_comparison(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        common = self._common([expr.left, expr.right])
        if common.kind == "c" and expr.operator not in ("==", "!="):
            raise CodeGenerationError(f"ordering comparison of complex values: {expr}")
        own = PREC_EQ if expr.operator in ("==", "!=") else PREC_REL
        if common.kind == "c":
            left = self.code(expr.left, PREC_NONE, common)
            right = self.code(expr.right, PREC_NONE, common)
            eq = f"({left}).real == ({right}).real && ({left}).imag == ({right}).imag"
            return f"({eq})" if expr.operator == "==" else f"!({eq})"
        settled = self.settled_comparison(expr)
        if settled is not None:
            return "1" if settled else "0"
        left = self.code(expr.left, own, common)
        right = self.code(expr.right, own + 1, common)
        return self._paren(f"{left} {expr.operator} {right}", own, prec)

    def settled_comparison(self, expr: prim.Comparison) -> bool | None:
        """The value of integer comparison *expr* when one side is a Python
        integer outside the range of the other side's type (``uint8 > -1`` is
        true, as in NumPy, where C would convert -1 to 255); else None."""
        common = self._common([expr.left, expr.right])
        if common.kind not in "iu":
            return None
        info = np.iinfo(common)
        for literal, flipped in ((expr.right, False), (expr.left, True)):
            if isinstance(literal, (int, np.integer)) and not isinstance(literal, bool) \
                    and not info.min <= int(literal) <= info.max:
                above = int(literal) > info.max     # the literal is the larger side
                op = _FLIPPED[expr.operator] if flipped else expr.operator
                return {"<": above, "<=": above, ">": not above, ">=": not above,
                        "==": False, "!=": True}[op]
        return None

    def _cond(self, expr: Any, prec):
        t = self.types(expr)
        if t.dtype.kind == "c":
            raise CodeGenerationError(f"complex value {expr} used as a condition")
        if t.dtype.kind == "f":     # (OpenCL takes no floating-point ?: condition)
            return self._paren(f"{self.code(expr, PREC_EQ)} != 0", PREC_EQ, prec)
        return self.code(expr, prec)

    def map_logical_and(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self._paren(" && ".join(self._cond(c, PREC_LAND) for c in expr.children),
                           PREC_LAND, prec)

    def map_logical_or(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self._paren(" || ".join(self._cond(c, PREC_LOR) for c in expr.children),
                           PREC_LOR, prec)

    def map_logical_not(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self._paren("!" + self._cond(expr.child, PREC_UNARY), PREC_UNARY, prec)

    def _binary_int(self, op, children, own, prec, dtype):
        return self._paren(f" {op} ".join(self.code(c, own + 1, dtype) for c in children),
                           own, prec)

    def map_bitwise_and(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self._binary_int("&", expr.children, PREC_BAND, prec, dtype)

    def map_bitwise_or(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self._binary_int("|", expr.children, PREC_BOR, prec, dtype)

    def map_bitwise_xor(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self._binary_int("^", expr.children, PREC_BXOR, prec, dtype)

    def map_bitwise_not(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self._paren("~" + self.code(expr.child, PREC_UNARY, dtype), PREC_UNARY, prec)

    def map_left_shift(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self._binary_int("<<", (expr.shiftee, expr.shift), PREC_SHIFT, prec, dtype)

    def map_right_shift(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self._binary_int(">>", (expr.shiftee, expr.shift), PREC_SHIFT, prec, dtype)

    def map_if(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        cond = self._cond(expr.condition, PREC_TERNARY + 1)
        then = self.code(expr.then, PREC_TERNARY + 1, dtype)
        else_ = self.code(expr.else_, PREC_TERNARY, dtype)
        return self._paren(f"{cond} ? {then} : {else_}", PREC_TERNARY, prec)

    def _nested(self, name, children, dtype):
        if len(children) <= 2:
            return self._call(name, children, dtype)
        return self._call(name, (children[0], getattr(prim, name.capitalize())(
            tuple(children[1:]))), dtype)

    def map_min(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self._nested("min", expr.children, dtype)

    def map_max(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self._nested("max", expr.children, dtype)

    def map_call(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        if not isinstance(expr.function, (prim.Variable, ResolvedFunction)):
            raise CodeGenerationError(f"cannot call {expr.function}")
        return self._call(expr.function.name, expr.parameters, dtype)

    def _call(self, name, params, dtype):
        if name in ("indexof", "indexof_vec") and name not in self.knl.callables:
            return self.index_of(params, dtype)
        if name in self.knl.callables:
            emitter = RegisteredCallEmitter(
                self.knl, self.target, self.types, self.helpers,
                lambda e, want: self.code(e, PREC_NONE, want))
            return emitter.call_expression(prim.Call(prim.Variable(name), tuple(params)))
        rule, common = self.call_types(name, params, dtype)
        # (the argument's own code stands for a call: it must bind as tightly)
        if rule == "real" and common.kind != "c":
            arg = self.code(params[0], PREC_CALL, common)
            return arg if name == "real" else self.target.literal(0, dtype)
        if rule == "same" and common.kind != "c":
            return self.code(params[0], PREC_CALL, common)
        fname = self._function(name, [common] * len(params), dtype)
        args = ", ".join(self._argument(p, common, overloaded=rule == "promote")
                         for p in params)
        code = f"{fname}({args})"
        if name == "abs" and common.kind == "i":
            code = f"({self.target.dtype_to_ctype(common)}) {code}"
        return code

    def index_of(self, params: Any, dtype: np.dtype) -> str:
        """loopy's ``indexof(a[i, j])``: the linear offset of the element in
        its array, in elements (also ``indexof_vec``'s: the lanes of a vector
        axis are elements of their own)."""
        (ref,) = params if len(params) == 1 else (None,)
        if not (isinstance(ref, prim.Subscript) and isinstance(ref.aggregate, prim.Variable)):
            raise CodeGenerationError(f"indexof takes one array element, got {params}")
        var = self.knl.get_var(ref.aggregate.name)
        index = ref.index if isinstance(ref.index, tuple) else (ref.index,)
        return self.code(simplify(self.flat_index(var, index)), PREC_NONE, dtype)

    def call_types(self, name: str, params: Any, dtype: np.dtype) -> tuple[str, np.dtype]:
        """The typing rule of math function *name* and the type its arguments
        are converted to, when its result is wanted as *dtype*."""
        if name not in MATH_FUNCTIONS:
            raise unknown_function_error(name)
        rule = MATH_FUNCTIONS[name][0]
        common = self.types.promote([self.types(p) for p in params]).dtype
        if rule in ("float", "promote_float") and common.kind in "iub":
            common = np.dtype(np.float64) if dtype.kind in "iub" else (
                dtype if dtype.kind == "f" else np.dtype(np.float64))
        return rule, common

    def _argument(self, param, dtype: np.dtype, overloaded: bool) -> str:
        """An argument of *dtype*; one passed to an overloaded builtin on
        integers other than ``int``/``uint`` is cast unless it is a variable or
        an array element (whose C type is *dtype*): ``max(x, 0)`` with long or
        short x, or ``min(x, c ? 1 : 2)``, would be ambiguous (literals and
        ``?:`` are ints in C)."""
        code = self.code(param, PREC_NONE, dtype)
        if overloaded and dtype.kind in "iu" and dtype.itemsize != 4 \
                and not isinstance(param, (prim.Variable, prim.Subscript)) \
                and not code.startswith(f"({self.target.dtype_to_ctype(dtype)}) "):
            return f"({self.target.dtype_to_ctype(dtype)}) ({code})"
        return code

    def _function(self, name, arg_dtypes, result_dtype) -> str:
        """The target's spelling of function *name*; helpers it needs are
        added to the preamble."""
        fname = self.target.function_name(name, arg_dtypes, result_dtype)
        if fname not in self.helpers.helpers:
            source = self.target.helper_function_source(fname)
            if source is not None:
                self.helpers.helpers[fname] = source
        return fname

    def map_type_cast(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        return self.code(expr.child, prec, expr.dtype)

    def map_reduction(self, expr: Any, prec: int, dtype: np.dtype) -> str:
        raise CodeGenerationError(f"reduction {expr} was not realized before code generation")
