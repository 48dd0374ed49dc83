"""The OpenCL C target: type names, literals, math-function spellings, preambles.

Public names: OpenCLTarget, PyOpenCLTarget.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelcore.diagnostic import CodeGenerationError
from kernelcore.ir.data import AddressSpace
from kernelcore.target.base import CFamilyTarget
from kernelcore.target.f32math import F32_HELPERS, f32_helper_source, f32_vector_helper
from kernelcore.target.f64math import F64_HELPERS, f64_helper_source

_C_TYPES = {
    "int8": "char", "uint8": "unsigned char", "int16": "short", "uint16": "unsigned short",
    "int32": "int", "uint32": "unsigned int", "int64": "long", "uint64": "unsigned long",
    "float32": "float", "float64": "double", "complex64": "cfloat_t",
    "complex128": "cdouble_t", "bool": "unsigned char",
}

#: built-ins whose versions for 8 or 16 doubles PoCL computes wrongly
_UNRELIABLE_DOUBLE_VECTORS = frozenset(["pow", "powr", "pown", "fmod"])
#: OpenCL spellings of functions whose name differs from the instruction language
_FUNCTION_NAMES = {"abs": "fabs", "min": "fmin", "max": "fmax", "round_tf32": "kc_round_tf32"}
#: sources of the helper functions of _FUNCTION_NAMES
_HELPERS = {"kc_round_tf32": (
    "inline float kc_round_tf32(float x)\n{\n"
    "  return isnan(x) ? x : as_float((as_uint(x) + 0x1000u) & 0xffffe000u);\n}")}
#: abs of signed integers wrapping as NumPy's (abs of the most negative value is
#: itself): OpenCL's built-in may let the compiler assume a result >= 0
#: (char and short: the abs of their int value, narrowed; int and long: negated
#: in the unsigned type and reinterpreted. NVIDIA's compiler gave 32768 for
#: every short form that selects a negation of the short itself)
for _ctype in ("char", "short", "int", "long"):
    _body = (f"({_ctype}) abs((int) a)" if _ctype in ("char", "short") else
             "(int) abs((long) a)" if _ctype == "int" else
             "a < 0 ? as_long((ulong) 0 - as_ulong(a)) : a")
    _HELPERS[f"kc_abs_{_ctype}"] = (
        f"inline {_ctype} kc_abs_{_ctype}({_ctype} a)\n{{\n  return {_body};\n}}")


#: complex abs by kernelcore's hypot of float64 (``math_f64="branch_free"``:
#: CPU compilers vectorize it, where pyopencl's calls the device's scalar
#: hypot: 12-40x NumPy's time on PoCL); complex64's rounds the float64
#: result (within an ulp of NumPy's hypotf)
_COMPLEX_ABS = {"cdouble": "kc_cdouble_abs_hypot", "cfloat": "kc_cfloat_abs_hypot"}
for _prefix, _real in (("cdouble", "double"), ("cfloat", "float")):
    _HELPERS[_COMPLEX_ABS[_prefix]] = (
        f"{f64_helper_source('kc_hypot_f64')}\n"
        f"inline {_real} {_COMPLEX_ABS[_prefix]}({_prefix}_t z)\n{{\n"
        f"  return ({_real}) kc_hypot_f64((double) z.real, (double) z.imag);\n}}")


class OpenCLTarget(CFamilyTarget):
    """Generates OpenCL C 1.2 kernels. *fp_contract* False forbids the
    compiler to fuse ``a*b + c`` into one rounding (an FMA), True allows it,
    None leaves the compiler's default (OpenCL allows it). *math_f32*
    ``"builtin"`` calls OpenCL's trigonometric, hyperbolic and logarithmic
    functions of float32 values, ``"branch_free"`` kernelcore's own
    (:mod:`kernelcore.target.f32math`: correctly rounded, and vectorized by
    CPU compilers whose built-ins are scalar calls, as PoCL's). *math_f64*
    the same for float64 logarithms, ``pow``, ``exp2``, ``expm1``,
    ``sinh``, ``cosh``, ``tanh``, inverse trigonometric functions, ``cbrt``
    and ``hypot`` (:mod:`kernelcore.target.f64math`: within an ulp).
    *limit_arg_size_nbytes* is accepted for loopy compatibility and has no
    effect: kernelcore always passes the arguments one by one (loopy packs
    them into an SVM buffer beyond that size)."""

    name = "opencl"
    #: True for targets that run every work-item one after another (plain C)
    sequential = False
    #: whether OpenCL vector types (``float8``, ``vload8``) exist
    vector_types = True
    #: how helper functions in the preamble are declared
    helper_linkage = "inline"
    fp_contract: bool | None = None
    math_f32: str = "builtin"
    math_f64: str = "builtin"

    def __init__(self, fp_contract: bool | None = None, math_f32: str = "builtin",
                 math_f64: str = "builtin", limit_arg_size_nbytes: int | None = None):
        del limit_arg_size_nbytes       # (see the class documentation)
        for option, value in (("math_f32", math_f32), ("math_f64", math_f64)):
            if value not in ("builtin", "branch_free"):
                raise ValueError(f"{option} must be 'builtin' or 'branch_free', not {value!r}")
        self.fp_contract = fp_contract
        self.math_f32 = math_f32
        self.math_f64 = math_f64

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.fp_contract == other.fp_contract \
            and self.math_f32 == other.math_f32 and self.math_f64 == other.math_f64

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.fp_contract, self.math_f32, self.math_f64))

    def __repr__(self) -> str:
        settings = ([] if self.fp_contract is None else [f"fp_contract={self.fp_contract}"]) \
            + ([] if self.math_f32 == "builtin" else [f"math_f32={self.math_f32!r}"]) \
            + ([] if self.math_f64 == "builtin" else [f"math_f64={self.math_f64!r}"])
        return f"{type(self).__name__}({', '.join(settings)})"

    def contraction_pragma(self) -> list[str]:
        """The pragma line stating :attr:`fp_contract` (none for the default)."""
        if self.fp_contract is None:
            return []
        return [f"#pragma OPENCL FP_CONTRACT {'ON' if self.fp_contract else 'OFF'}"]

    def dtype_to_ctype(self, dtype: np.dtype) -> str:
        try:
            return _C_TYPES[np.dtype(dtype).name]
        except KeyError:
            raise CodeGenerationError(f"type {dtype} is not supported on OpenCL") from None

    def complex_prefix(self, dtype: np.dtype) -> str:
        return "cfloat" if np.dtype(dtype) == np.complex64 else "cdouble"

    def complex_divide(self, dtype: np.dtype) -> str:
        """The function dividing two complex values of *dtype* (kernelcore's
        Smith division, see :data:`_COMPLEX_OWN`)."""
        return f"kc_{self.complex_prefix(dtype)}_divide"

    def address_space_qualifier(self, aspace: AddressSpace) -> str:
        return {AddressSpace.GLOBAL: "__global", AddressSpace.LOCAL: "__local",
                AddressSpace.PRIVATE: ""}[aspace]

    def constant_array_qualifier(self) -> str:
        """How an array of constants of the program is declared."""
        return "__constant"

    def hw_index_name(self, is_local: bool, axis: int) -> str:
        """The C spelling of the local (or group) index along *axis*."""
        return f"{'lid' if is_local else 'gid'}({axis})"

    def barrier(self, fence: str) -> str | None:
        """A barrier statement (without ';') for fence "local"/"global", or None
        when the target needs none."""
        return "barrier(CLK_GLOBAL_MEM_FENCE)" if fence == "global" \
            else "barrier(CLK_LOCAL_MEM_FENCE)"

    def array_arg_decl(self, ctype: str, name: str, is_const: bool,
                       restrict: bool = True) -> str:
        const = " const" if is_const else ""
        return f"__global {ctype}{const} *{'__restrict__ ' if restrict else ''}{name}"

    def helper_function_source(self, name: str) -> str | None:
        """Source of a helper function *name* returned by :meth:`function_name`
        that the preamble must define (None: a built-in)."""
        return _HELPERS.get(name) or f32_helper_source(name) or f64_helper_source(name)

    def vector_helper(self, name: str, width: int) -> tuple[str, str] | None:
        """(name, source) of the version of helper *name* (from
        :meth:`function_name`) for vectors of *width* elements, or None
        where it has none (a ``vec`` loop calling it is then unrolled)."""
        return f32_vector_helper(name, width)

    def vector_builtin(self, name: str, dtype: np.dtype, width: int) -> bool:
        """Whether built-in *name* may be called on vectors of *width*
        elements of *dtype* (else a ``vec`` loop calling it is unrolled).
        Not ``pow``, ``powr``, ``pown`` or ``fmod`` on 8 or 16 doubles: in
        PoCL 3.1 (LLVM 15, AVX-512) some lanes of them are wrong
        (``pow(4.0, 0.1)`` gave ``2**-0.1``: the lane lost its exponent)."""
        return not (name in _UNRELIABLE_DOUBLE_VECTORS and dtype == np.float64 and width >= 8)

    def kernel_prefix(self, local_size: tuple[int, ...]) -> str:
        dims = list(local_size) + [1] * (3 - len(local_size))
        return ("__kernel void __attribute__ ((reqd_work_group_size("
                + ", ".join(str(d) for d in dims) + ")))")

    def literal(self, value: Any, dtype: np.dtype) -> str:
        """*value* written as a C literal of *dtype*."""
        dtype = np.dtype(dtype)
        if dtype.kind == "c":
            prefix = self.complex_prefix(dtype)
            real_dt = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
            v = complex(value)
            return (f"{prefix}_new({self.literal(v.real, real_dt)}, "
                    f"{self.literal(v.imag, real_dt)})")
        if dtype.kind == "f":
            v = float(value)
            # (OpenCL's NAN and INFINITY are floats: fmod(x, INFINITY) of a
            # double x would be ambiguous)
            name = "NAN" if np.isnan(v) else "INFINITY" if v > 0 else "-INFINITY"
            if not np.isfinite(v):
                return name if dtype == np.float32 else f"((double) {name})"
            text = repr(v)
            if "e" not in text and "." not in text:
                text += ".0"
            return text + ("f" if dtype == np.float32 else "")
        if dtype.kind == "b":
            return "1" if value else "0"
        v = int(value)
        if dtype.kind == "u":
            return f"{v}u" + ("l" if dtype.itemsize == 8 else "")
        if dtype.itemsize == 8 and not -2**31 <= v < 2**31:
            return f"{v}l"
        if v == -2**31:
            return "(-2147483647 - 1)"
        return str(v)

    def function_name(self, name: str, arg_dtypes: list[np.dtype],
                      result_dtype: np.dtype) -> str:
        """The C function implementing math function *name* for these types."""
        if any(dt.kind == "c" for dt in arg_dtypes):
            prefix = self.complex_prefix(result_dtype if result_dtype.kind == 'c'
                                         else arg_dtypes[0])
            if name == "abs" and self.math_f64 == "branch_free":
                return _COMPLEX_ABS[prefix]
            return f"kc_{prefix}_{name}" if name in _COMPLEX_OWN else f"{prefix}_{name}"
        if name == "abs" and len(arg_dtypes) == 1 and arg_dtypes[0].kind == "i":
            return f"kc_abs_{_C_TYPES[arg_dtypes[0].name]}"
        if all(dt.kind in "iub" for dt in arg_dtypes) and name in ("abs", "min", "max"):
            return name
        if self.math_f32 == "branch_free" and name in F32_HELPERS \
                and all(dt.name == "float32" for dt in arg_dtypes):
            return F32_HELPERS[name]
        if self.math_f64 == "branch_free" and name in F64_HELPERS \
                and all(dt.name == "float64" for dt in arg_dtypes):
            return F64_HELPERS[name]
        return _FUNCTION_NAMES.get(name, name)

    def preamble(self, uses_complex: bool, uses_double: bool,
                 index_ctype: str = "int") -> list[str]:
        """Lines before the kernels: extensions, helper headers, and the
        ``lid``/``gid`` macros giving hardware indices as *index_ctype*."""
        lines = [*self.contraction_pragma(),
                 f"#define lid(N) (({index_ctype}) get_local_id(N))",
                 f"#define gid(N) (({index_ctype}) get_group_id(N))"]
        if uses_double:
            lines.insert(0, "#if __OPENCL_C_VERSION__ < 120\n"
                            "#pragma OPENCL EXTENSION cl_khr_fp64: enable\n#endif")
        if uses_complex:
            if uses_double:
                lines.append("#define PYOPENCL_DEFINE_CDOUBLE")
            lines.append("#include <pyopencl-complex.h>")
            for prefix, real, big, scales in (("cfloat", "float", 11, _SQRT_SCALES[0]),
                                              ("cdouble", "double", 22, _SQRT_SCALES[1])
                                              )[:2 if uses_double else 1]:
                lines.append(_COMPLEX_OWN_SOURCE.format(p=prefix, r=real, big=big, **scales))
        return lines


#: complex functions kernelcore defines itself (``kc_cfloat_sqrt``, ...)
#: instead of using pyopencl's: division is Smith's, as NumPy's (a zero
#: divisor divides each part by a zero: (1 + 1j) / 0 is inf + infj, where
#: pyopencl's gives NaN); sqrt keeps the sign of a zero imaginary part,
#: as in C99 and NumPy (sqrt(-1 - 0j) is -1j, pyopencl's gives +1j); tanh and
#: tan use Kahan's formulas (pyopencl's divide by 1 + cos(2y), which cancels
#: near the poles: tanh(1.5707j) came out inf in single precision); log
#: computes log|z| from |z|^2 - 1 near |z| = 1 (pyopencl's log(|z|) lost up
#: to half the digits of the real part there); sqrt
#: neither overflows near the largest values nor loses bits on subnormal ones.
#: Values that are not finite (sqrt: NaN) go to pyopencl's functions, except
#: for exp, sinh, cosh and tanh, whose infinite and NaN parts give C99's
#: Annex G values (as NumPy's and the Array API's: exp(inf + 0j) is inf + 0j,
#: where exp(x) * cis(y) would make the imaginary part inf * 0 = NaN).
_COMPLEX_OWN = ("sqrt", "tanh", "tan", "exp", "expm1", "sinh", "cosh", "log")
#: complex sqrt scales its operand by 1/4 above *huge* (where |z| + |x|
#: overflows), and by *up* (2**24, 2**54) below *tiny* (subnormal halves lose
#: bits), its result by 2 or *down*
_SQRT_SCALES = ({"huge": "8.0e37f", "tiny": "1.0e-36f", "up": "16777216.0f",
                 "down": "0.000244140625f", "ovf": "88.0f"},
                {"huge": "4.0e307", "tiny": "1.0e-300", "up": "18014398509481984.0",
                 "down": "7.450580596923828e-09", "ovf": "709.0"})
#: (*ovf*: above it, exp overflows; exp, sinh and cosh then scale by exp(x/2))
_COMPLEX_OWN_SOURCE = """inline {p}_t kc_{p}_sqrt({p}_t a)
{{
  {p}_t r;
  if (isnan(a.real) || isnan(a.imag))
    return {p}_sqrt(a);
  if (isinf(a.imag)) {{
    r.real = INFINITY;
    r.imag = a.imag;
    return r;
  }}
  if (a.imag == 0) {{
    r.real = a.real < 0 ? 0 : sqrt(fabs(a.real));
    r.imag = a.real < 0 ? copysign(sqrt(-a.real), a.imag) : a.imag;
    return r;
  }}
  {r} x = a.real, y = a.imag, scale = 1;
  if (fabs(x) > {huge} || fabs(y) > {huge}) {{
    x *= ({r}) 0.25;
    y *= ({r}) 0.25;
    scale = 2;
  }} else if (fabs(x) < {tiny} && fabs(y) < {tiny}) {{
    x *= {up};
    y *= {up};
    scale = {down};
  }}
  {r} t = sqrt((fabs(x) + hypot(x, y)) * ({r}) 0.5);
  r.real = x >= 0 ? t : fabs(y) / (2 * t);
  r.imag = x >= 0 ? y / (2 * t) : copysign(t, y);
  r.real *= scale;
  r.imag *= scale;
  return r;
}}
inline {p}_t kc_{p}_make({r} re, {r} im)
{{
  {p}_t r;
  r.real = re;
  r.imag = im;
  return r;
}}
inline {p}_t kc_{p}_divide({p}_t a, {p}_t b)
{{
  {r} br = fabs(b.real), bi = fabs(b.imag);
  if (br >= bi) {{
    if (br == 0 && bi == 0)     /* (NumPy's: each part over a zero) */
      return kc_{p}_make(a.real / br, a.imag / bi);
    {r} ratio = b.imag / b.real, scale = 1 / (b.real + b.imag * ratio);
    return kc_{p}_make((a.real + a.imag * ratio) * scale, (a.imag - a.real * ratio) * scale);
  }}
  {r} ratio = b.real / b.imag, scale = 1 / (b.imag + b.real * ratio);
  return kc_{p}_make((a.real * ratio + a.imag) * scale, (a.imag * ratio - a.real) * scale);
}}
inline {p}_t kc_{p}_exp({p}_t a)
{{
  {r} x = a.real, y = a.imag;
  if (y == 0)
    return kc_{p}_make(exp(x), y);
  if (isfinite(y) && !isnan(x)) {{
    if (isinf(x))
      return x < 0 ? kc_{p}_make(0 * cos(y), 0 * sin(y))
                   : kc_{p}_make(x * cos(y), x * sin(y));
    {r} e = exp(x > {ovf} ? x * ({r}) 0.5 : x), f = x > {ovf} ? e : 1;
    return kc_{p}_make(e * (f * cos(y)), e * (f * sin(y)));
  }}
  if (isinf(x))
    return x > 0 ? kc_{p}_make(x, NAN) : kc_{p}_make(0, 0);
  return kc_{p}_make(NAN, NAN);
}}
inline {p}_t kc_{p}_log({p}_t a)
{{
  {r} x = fabs(a.real), y = fabs(a.imag);
  if (!isfinite(x) || !isfinite(y) || (x == 0 && y == 0))
    return {p}_log(a);
  {r} hi = fmax(x, y), lo = fmin(x, y), re;
  if (hi >= ({r}) 0.5 && hi < 2) {{
    /* |z|^2 - 1 = 2d + lo^2 + d^2 with d = hi - 1 (exact), the squares
       split exactly by fma: log|z| = log1p(|z|^2 - 1) / 2 keeps its
       digits near |z| = 1, where log(hypot(x, y)) cancels. Where the
       terms cancel, 2d + lo^2 and then + d^2 are exact (Sterbenz: |d| <=
       1/2 makes d^2 <= |2d| / 4), the squares' low parts come last */
    {r} d = hi - 1, p = d * d, pe = fma(d, d, -p), q = lo * lo, qe = fma(lo, lo, -q);
    re = ({r}) 0.5 * log1p(((2 * d + q) + p) + (pe + qe));
  }} else
    re = log(hypot(x, y));
  return kc_{p}_make(re, atan2(a.imag, a.real));
}}
inline {p}_t kc_{p}_expm1({p}_t a)
{{
  {r} x = a.real, y = a.imag;
  if (!isfinite(x) || !isfinite(y) || x > {ovf}) {{
    {p}_t e = kc_{p}_exp(a);
    return kc_{p}_make(e.real - 1, e.imag);
  }}
  if (y == 0)
    return kc_{p}_make(expm1(x), y);
  {r} h = sin(y * ({r}) 0.5);
  return kc_{p}_make(expm1(x) * cos(y) - 2 * h * h, exp(x) * sin(y));
}}
inline {p}_t kc_{p}_sinh({p}_t a)
{{
  {r} x = a.real, y = a.imag;
  if (isfinite(x) && isfinite(y)) {{
    if (y == 0)
      return kc_{p}_make(sinh(x), y);
    if (fabs(x) <= {ovf})
      return kc_{p}_make(sinh(x) * cos(y), cosh(x) * sin(y));
    {r} e = exp(fabs(x) * ({r}) 0.5);
    return kc_{p}_make(copysign(({r}) 1, x) * e * (e * ({r}) 0.5 * cos(y)),
                       e * (e * ({r}) 0.5 * sin(y)));
  }}
  if (isnan(x))
    return kc_{p}_make(NAN, y == 0 ? y : NAN);
  if (isinf(x)) {{
    if (y == 0)
      return kc_{p}_make(x, y);
    if (isfinite(y))
      return kc_{p}_make(x * cos(y), INFINITY * sin(y));
    return kc_{p}_make(INFINITY, NAN);
  }}
  return kc_{p}_make(x == 0 ? x : NAN, NAN);
}}
inline {p}_t kc_{p}_cosh({p}_t a)
{{
  {r} x = a.real, y = a.imag;
  if (isfinite(x) && isfinite(y)) {{
    if (y == 0)
      return kc_{p}_make(cosh(x), x * y);
    if (fabs(x) <= {ovf})
      return kc_{p}_make(cosh(x) * cos(y), sinh(x) * sin(y));
    {r} e = exp(fabs(x) * ({r}) 0.5);
    return kc_{p}_make(e * (e * ({r}) 0.5 * cos(y)),
                       copysign(({r}) 1, x) * e * (e * ({r}) 0.5 * sin(y)));
  }}
  if (isnan(x))
    return kc_{p}_make(NAN, y == 0 ? y : NAN);
  if (isinf(x)) {{
    if (y == 0)
      return kc_{p}_make(INFINITY, copysign(({r}) 0, x) * y);
    if (isfinite(y))
      return kc_{p}_make(INFINITY * cos(y), x * sin(y));
    return kc_{p}_make(INFINITY, NAN);
  }}
  return kc_{p}_make(NAN, x == 0 ? 0 : NAN);
}}
inline {p}_t kc_{p}_tanh({p}_t a)
{{
  {r} x = a.real, y = a.imag;
  if (isinf(x))
    return kc_{p}_make(copysign(({r}) 1, x),
                       isfinite(y) ? copysign(({r}) 0, sin(2 * y)) : 0);
  if (isnan(x))
    return kc_{p}_make(NAN, y == 0 ? y : NAN);
  if (!isfinite(y))
    return kc_{p}_make(x == 0 ? x : NAN, NAN);
  {p}_t r;
  if (fabs(x) >= {big}) {{
    {r} e = exp(-fabs(x));
    r.real = copysign(({r}) 1, x);
    r.imag = 4 * sin(y) * cos(y) * e * e;
    return r;
  }}
  {r} t = tan(y), beta = 1 + t * t, s = sinh(x), rho = sqrt(1 + s * s);
  {r} d = 1 + beta * s * s;
  r.real = beta * rho * s / d;
  r.imag = t / d;
  return r;
}}
inline {p}_t kc_{p}_tan({p}_t a)
{{
  if (!isfinite(a.real) || !isfinite(a.imag))
    return {p}_tan(a);
  {p}_t w, r;
  w.real = -a.imag;
  w.imag = a.real;
  w = kc_{p}_tanh(w);
  r.real = w.imag;
  r.imag = -w.real;
  return r;
}}"""


class PyOpenCLTarget(OpenCLTarget):
    """OpenCL C kernels run through pyopencl (the default target)."""

    name = "pyopencl"
