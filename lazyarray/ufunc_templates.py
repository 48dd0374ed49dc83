"""The elementwise operations lazyarray computes: each NumPy ufunc name
(and internal variant, a name starting with ``_``) with its spelling in
kernelcore's instruction language, for building graphs
(:mod:`lazyarray.ops.elementwise`), planning and lowering them.

Public names: ELEMENTWISE, UFUNCS, COMPLEX_UFUNCS.
"""

from __future__ import annotations


def _complex_sign() -> str:
    """NumPy's sign of a complex {0}: z / |z| with each part divided as a
    real (a complex division overflows for subnormal |z|), below 2**-100 of
    z scaled by 2**100 first (exact; |z| of subnormal parts is a few ulp
    off); where |z| overflows, the infinite part's sign (NaN when both parts
    are infinite)."""
    scale = "if(abs({0}) < 7.888609052210118e-31, 1.2676506002282294e30, 1.0)"
    modulus = f"abs({{0}} * {scale})"
    return ("if(abs({0}) == 0, 0, "
            "if(isinf(abs({0})) and not (isinf(real({0})) and isinf(imag({0}))), "
            "if(isinf(real({0})), if(real({0}) > 0, 1, -1), if(imag({0}) > 0, 1j, -1j)), "
            f"(real({{0}}) * {scale}) / {modulus} + 1j * ((imag({{0}}) * {scale}) / {modulus})))")


#: ufunc name -> instruction-language template over operands {0}, {1}, ...
ELEMENTWISE: dict[str, str] = {
    "add": "({0} + {1})", "subtract": "({0} - {1})", "multiply": "({0} * {1})",
    "true_divide": "({0} / {1})", "divide": "({0} / {1})",
    "floor_divide": "({0} // {1})", "remainder": "({0} % {1})", "mod": "({0} % {1})",
    "power": "({0} ** {1})", "negative": "(-{0})", "positive": "({0})",
    "absolute": "abs({0})", "sqrt": "sqrt({0})", "exp": "exp({0})", "log": "log({0})",
    "log2": "log2({0})", "log10": "log10({0})", "expm1": "expm1({0})",
    "log1p": "log1p({0})", "sin": "sin({0})", "cos": "cos({0})", "tan": "tan({0})",
    "arcsin": "asin({0})", "arccos": "acos({0})", "arctan": "atan({0})",
    "sinh": "sinh({0})", "cosh": "cosh({0})", "tanh": "tanh({0})",
    "arcsinh": "asinh({0})", "arccosh": "acosh({0})", "arctanh": "atanh({0})",
    "arctan2": "atan2({0}, {1})", "hypot": "hypot({0}, {1})", "cbrt": "cbrt({0})",
    "exp2": "exp2({0})", "fabs": "fabs({0})", "copysign": "copysign({0}, {1})",
    "floor": "floor({0})", "ceil": "ceil({0})", "trunc": "trunc({0})", "rint": "rint({0})",
    "maximum": "max({0}, {1})", "minimum": "min({0}, {1})",
    "fmax": "fmax({0}, {1})", "fmin": "fmin({0}, {1})",
    "less": "({0} < {1})", "less_equal": "({0} <= {1})", "greater": "({0} > {1})",
    "greater_equal": "({0} >= {1})", "equal": "({0} == {1})",
    "not_equal": "({0} != {1})", "logical_and": "({0} and {1})",
    "logical_or": "({0} or {1})", "logical_not": "(not {0})",
    "logical_xor": "(({0} != 0) != ({1} != 0))",
    "isnan": "isnan({0})", "isinf": "isinf({0})", "isfinite": "isfinite({0})",
    "signbit": "signbit({0})",
    "bitwise_and": "({0} & {1})", "bitwise_or": "({0} | {1})", "bitwise_xor": "({0} ^ {1})",
    "invert": "(~{0})",
    "square": "({0} * {0})", "reciprocal": "(1 / {0})",
    "conjugate": "conj({0})",
    "deg2rad": "({0} * 0.017453292519943295)", "radians": "({0} * 0.017453292519943295)",
    "rad2deg": "({0} * 57.29577951308232)", "degrees": "({0} * 57.29577951308232)",
    "float_power": "({0} ** {1})",
    "fmod": "fmod({0}, {1})",
    # NumPy's: NaN stays NaN, -0.0 and 0.0 give 0.0
    "sign": "if({0} > 0, 1, if({0} < 0, -1, if({0} == 0, 0, {0})))",
    "heaviside": "if({0} < 0, 0, if({0} > 0, 1, if({0} == 0, {1}, {0})))",
    # x + log(1 + exp(y - x)) for x >= y; equal values (infinities) first
    "logaddexp": ("if({0} == {1}, {0} + 0.6931471805599453, "
                  "if({0} > {1}, {0} + log1p(exp({1} - {0})), "
                  "if({0} < {1}, {1} + log1p(exp({0} - {1})), {0} - {1})))"),
    "logaddexp2": ("if({0} == {1}, {0} + 1, "
                   "if({0} > {1}, {0} + log1p(exp2({1} - {0})) * 1.4426950408889634, "
                   "if({0} < {1}, {1} + log1p(exp2({0} - {1})) * 1.4426950408889634, "
                   "{0} - {1})))"),
    "where": "if({0}, {1}, {2})",
    # {{{ internal variants (chosen by _variant)
    "_maximum_f": "if({0} > {1} or isnan({0}), {0}, {1})",
    "_minimum_f": "if({0} < {1} or isnan({0}), {0}, {1})",
    "_fmax_f": "if({0} >= {1} or isnan({1}), {0}, {1})",
    "_fmin_f": "if({0} <= {1} or isnan({1}), {0}, {1})",
    # integers: a comparison (OpenCL's max(uchar, literal) is ambiguous)
    "_maximum_i": "if({0} < {1}, {1}, {0})",
    "_minimum_i": "if({1} < {0}, {1}, {0})",
    "_identity": "({0})",
    # (identities the storage plan stores: lazyarray.ops.linalg.matmul's operands)
    "_stored": "({0})",
    "_packed": "({0})",
    # a float32 rounded to TF32 (a product's operand, see lazyarray.precision)
    "_round_tf32": "round_tf32({0})",
    "_false": "({0} != {0})",
    "_true": "({0} == {0})",
    "_nonzero": "({0} != 0)",
    "_real": "real({0})",
    "_imag": "imag({0})",
    "_or": "({0} or {1})",
    "_and": "({0} and {1})",
    "_sign_i": "if({0} > 0, 1, if({0} < 0, -1, 0))",
    "_sign_u": "if({0} > 0, 1, 0)",
    "_sign_c": _complex_sign(),
    "_isnan_c": "(isnan(real({0})) or isnan(imag({0})))",
    "_isinf_c": "(isinf(real({0})) or isinf(imag({0})))",
    "_isfinite_c": "(isfinite(real({0})) and isfinite(imag({0})))",
    "_logical_and_c": "(({0} != 0) and ({1} != 0))",
    "_logical_or_c": "(({0} != 0) or ({1} != 0))",
    "_logical_not_c": "({0} == 0)",
    # integer division and remainders: NumPy gives 0 for a zero divisor and
    # wraps MIN // -1 (C would trap on both)
    "_floor_divide_i": "if({1} == 0, 0, if({1} == -1, -{0}, {0} // {1}))",
    "_floor_divide_u": "if({1} == 0, 0, {0} // {1})",
    "_remainder_i": "if({1} == 0 or {1} == -1, 0, {0} % {1})",
    "_remainder_u": "if({1} == 0, 0, {0} % {1})",
    # C's remainder (sign of the dividend) from the floored one
    "_fmod_i": ("if({1} == 0 or {1} == -1, 0, if({0} % {1} != 0 and "
                "(({0} % {1} < 0) != ({0} < 0)), {0} % {1} - {1}, {0} % {1}))"),
    "_fmod_u": "if({1} == 0, 0, {0} % {1})",
    # 1/x truncated; 1/0 converted to an integer as NumPy does on this platform
    "_reciprocal_i": "if({0} == 1 or {0} == -1, {0}, 0)",
    "_reciprocal_u": "if({0} == 1, {0}, 0)",
    # }}}
}

for _bits in (8, 16, 32, 64):
    # NumPy: shifting by a negative count or by the width or more gives 0
    # (right shifts of negative values: -1)
    ELEMENTWISE[f"_left_shift{_bits}"] = f"if({{1}} < 0 or {{1}} >= {_bits}, 0, {{0}} << {{1}})"
    ELEMENTWISE[f"_right_shift_i{_bits}"] = (
        f"if({{1}} < 0 or {{1}} >= {_bits}, if({{0}} < 0, -1, 0), {{0}} >> {{1}})")
    ELEMENTWISE[f"_right_shift_u{_bits}"] = f"if({{1}} >= {_bits}, 0, {{0}} >> {{1}})"
    ELEMENTWISE[f"_reciprocal_zero{_bits}"] = (
        f"if({{0}} == 1 or {{0}} == -1, {{0}}, if({{0}} == 0, ({1 - 2**(_bits - 1)} - 1), 0))")
del _bits

#: the NumPy ufuncs lazyarray computes (NumPy's names; ``la`` also has the
#: Array API spellings)
UFUNCS = frozenset(n for n in ELEMENTWISE if not n.startswith("_") and n != "where") | {
    "left_shift", "right_shift"}

#: ufuncs that take complex operands (OpenCL code that agrees with NumPy)
COMPLEX_UFUNCS = frozenset([
    "add", "subtract", "multiply", "true_divide", "divide", "negative", "positive",
    "exp", "expm1", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "equal",
    "not_equal", "absolute", "square", "conjugate", "reciprocal", "sign", "isnan",
    "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "logical_xor"])
