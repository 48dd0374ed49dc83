"""The built-in math functions: how each one types its result.

Public names: MATH_FUNCTIONS, function_result_dtype, is_known_function.

Rules follow NumPy: transcendental functions of integers give float64, of
float32 give float32, of complex give complex; ``abs`` of complex gives its real
type; ``min``/``max``/``fmin``/``fmax``/``pow``/``clamp`` promote their arguments
(``clamp(x, lo, hi)``: *x* limited to [*lo*, *hi*], OpenCL's built-in).
"""

from __future__ import annotations

import numpy as np

from kernelcore.diagnostic import CodeGenerationError

# name -> (rule, accepts complex, number of arguments)
MATH_FUNCTIONS: dict[str, tuple[str, bool, int]] = {
    **{name: ("float", True, 1) for name in (
        "sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "expm1", "log", "sqrt")},
    **{name: ("float", False, 1) for name in (
        "asin", "acos", "atan", "asinh", "acosh", "atanh", "exp2", "exp10", "log2",
        "log10", "log1p", "cbrt", "floor", "ceil", "trunc", "rint", "round",
        "erf", "erfc", "tgamma", "lgamma", "rsqrt")},
    "atan2": ("float", False, 2), "hypot": ("float", False, 2),
    "fmod": ("float", False, 2), "copysign": ("float", False, 2),
    "pow": ("promote_float", True, 2),
    "fmin": ("promote_float", False, 2), "fmax": ("promote_float", False, 2),
    "min": ("promote", False, 2), "max": ("promote", False, 2),
    "clamp": ("promote", False, 3),
    "abs": ("abs", True, 1), "fabs": ("float", False, 1),
    "real": ("real", True, 1), "imag": ("real", True, 1), "conj": ("same", True, 1),
    "isnan": ("bool", False, 1), "isinf": ("bool", False, 1),
    "isfinite": ("bool", False, 1), "signbit": ("bool", False, 1),
    # a float32 rounded to TF32 (10 mantissa bits, ties away from zero, as
    # NVIDIA's cvt.rna.tf32.f32): what tensor cores multiply
    "round_tf32": ("float32", False, 1),
}


def is_known_function(name: str) -> bool:
    return name in MATH_FUNCTIONS


def unknown_function_error(name: str) -> CodeGenerationError:
    return CodeGenerationError(
        f"unknown function '{name}': it is not a built-in math function "
        f"(known: {', '.join(sorted(MATH_FUNCTIONS))}); to call your own function, "
        f"register it with lp.register_callable(knl, '{name}', callable)")


def _float_of(dt: np.dtype) -> np.dtype:
    if dt.kind in "biu":
        return np.dtype(np.float64)
    return dt


def function_result_dtype(name: str, arg_dtypes: list[np.dtype]) -> np.dtype:
    """Result dtype of calling *name* on arguments of *arg_dtypes*."""
    if name not in MATH_FUNCTIONS:
        raise unknown_function_error(name)
    rule, allows_complex, nargs = MATH_FUNCTIONS[name]
    if len(arg_dtypes) != nargs:
        raise CodeGenerationError(f"function '{name}' takes {nargs} argument(s), "
                                  f"got {len(arg_dtypes)}")
    if not allows_complex and any(dt.kind == "c" for dt in arg_dtypes):
        raise CodeGenerationError(f"function '{name}' is not available for complex "
                                  "arguments")
    if rule == "float":
        return _float_of(np.result_type(*arg_dtypes))
    if rule == "promote_float":
        return _float_of(np.result_type(*arg_dtypes))
    if rule == "promote":
        return np.result_type(*arg_dtypes)
    if rule == "abs":
        dt = arg_dtypes[0]
        return np.dtype(dt.char.lower()) if dt.kind == "c" else dt
    if rule == "real":
        dt = arg_dtypes[0]
        return np.empty(0, dt).real.dtype
    if rule == "same":
        return arg_dtypes[0]
    if rule == "bool":
        return np.dtype(np.bool_)
    if rule == "float32":
        if arg_dtypes[0] != np.float32:
            raise CodeGenerationError(f"function '{name}' takes a float32, got {arg_dtypes[0]}")
        return arg_dtypes[0]
    raise AssertionError(rule)
