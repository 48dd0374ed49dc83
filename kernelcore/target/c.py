"""Plain C99 targets: source generation (CTarget) and execution through the
system C compiler (ExecutableCTarget).

The generated code is one C function per device kernel.  Parallel inames
(``l.N``/``g.N``) run as ordinary sequential loops around the body of a
work-item; that is only correct when the work-items of a group never wait for
each other, so a kernel needing a local barrier between work-items is
rejected.  Atomic updates become ordinary updates (nothing runs concurrently).

Complex numbers are a struct of two reals (the memory layout NumPy uses) whose
arithmetic goes through C99 ``<complex.h>``.

Public names: CTarget, ExecutableCTarget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kernelcore.diagnostic import CodeGenerationError, InvocationError
from kernelcore.ir.data import AddressSpace
from kernelcore.ir.stages import stage
from kernelcore.target.opencl import OpenCLTarget

if TYPE_CHECKING:
    import pyopencl as cl

    from kernelcore.ir.kernel import LoopKernel

_C_TYPES = {
    "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t",
    "int32": "int", "uint32": "unsigned int", "int64": "int64_t", "uint64": "uint64_t",
    "float32": "float", "float64": "double", "complex64": "kc_cfloat_t",
    "complex128": "kc_cdouble_t", "bool": "unsigned char",
}



def _is_long_double(dtype: Any) -> bool:
    """Whether *dtype* is NumPy's ``longdouble`` wider than ``double`` (C's
    ``long double`` of the same compiler ABI: x87 extended or IEEE quad)."""
    dtype = np.dtype(dtype)
    return dtype == np.longdouble and dtype.itemsize > 8


#: <math.h> names of instruction-language functions spelled differently
_RENAMED = {"abs": "fabs", "min": "fmin", "max": "fmax"}
#: classification macros of <math.h>: generic in the argument type already
_GENERIC = {"isnan", "isinf", "isfinite", "signbit"}
#: functions C99 lacks, as helpers: name -> body in terms of the argument x
_MISSING = {"exp10": "return {pow}(({t}) 10, x);", "rsqrt": "return ({t}) 1 / {sqrt}(x);"}
#: complex functions of <complex.h> (name -> C99 name without the f suffix)
_COMPLEX_MATH = {name: "c" + name for name in (
    "sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "log", "sqrt")}


#: sources of the helper functions function_name has named (name -> source)
_HELPERS: dict[str, str] = {}


def _helper(name: str, source: str) -> str:
    _HELPERS.setdefault(name, source)
    return name


def _complex_support(prefix: str, real: str, suffix: str) -> list[str]:
    """Type and basic operations of one complex type (``suffix``: "f" or "")."""
    t = f"{prefix}_t"
    z = f"{real} _Complex"
    s = "static inline"
    return [
        f"typedef struct {{ {real} real, imag; }} {t};",
        f"typedef union {{ {t} s; {z} z; }} {prefix}_u;",
        f"{s} {t} {prefix}_new({real} re, {real} im) "
        f"{{ {t} r; r.real = re; r.imag = im; return r; }}",
        f"{s} {t} {prefix}_fromreal({real} re) {{ return {prefix}_new(re, 0); }}",
        f"{s} {z} {prefix}_c99({t} a) {{ {prefix}_u u; u.s = a; return u.z; }}",
        f"{s} {t} {prefix}_s({z} a) {{ {prefix}_u u; u.z = a; return u.s; }}",
        f"{s} {t} {prefix}_add({t} a, {t} b) "
        f"{{ return {prefix}_new(a.real + b.real, a.imag + b.imag); }}",
        f"{s} {t} {prefix}_mul({t} a, {t} b) "
        f"{{ return {prefix}_s({prefix}_c99(a) * {prefix}_c99(b)); }}",
        f"{s} {t} {prefix}_divide({t} a, {t} b) "
        f"{{ return {prefix}_s({prefix}_c99(a) / {prefix}_c99(b)); }}",
        f"{s} {t} {prefix}_pow({t} a, {t} b) "
        f"{{ return {prefix}_s(cpow{suffix}({prefix}_c99(a), {prefix}_c99(b))); }}",
    ]


class CTarget(OpenCLTarget):
    """Generates plain C99: one ``void`` function per device kernel, with
    parallel inames run as sequential loops."""

    name = "c"
    #: whether work-items run one after another (the code generator then
    #: wraps each device kernel's body in loops over the groups and work-items)
    sequential = True
    #: whether OpenCL vector types (``float8``, ``vload8``) exist
    vector_types = False
    helper_linkage = "static inline"

    # {{{ types and literals

    def dtype_to_ctype(self, dtype: np.dtype) -> str:
        if _is_long_double(dtype):
            return "long double"
        try:
            return _C_TYPES[np.dtype(dtype).name]
        except KeyError:
            raise CodeGenerationError(f"type {dtype} is not supported by the C target") \
                from None

    def complex_prefix(self, dtype: np.dtype) -> str:
        return "kc_cfloat" if np.dtype(dtype) == np.complex64 else "kc_cdouble"

    def complex_divide(self, dtype: np.dtype) -> str:
        """C99's complex division (through ``<complex.h>``)."""
        return f"{self.complex_prefix(dtype)}_divide"

    def literal(self, value: Any, dtype: np.dtype) -> str:
        if _is_long_double(dtype):
            v = np.longdouble(value)
            if not np.isfinite(v):
                return ("((long double) NAN)" if np.isnan(v) else
                        f"({'' if v > 0 else '-'}(long double) INFINITY)")
            return np.format_float_scientific(v, unique=True) + "L"
        text = super().literal(value, dtype)
        dtype = np.dtype(dtype)
        if dtype.kind in "iu" and dtype.itemsize == 8 and text.endswith("l"):
            # 'long' is 32 bits on some platforms: spell 64-bit literals portably
            text = text[:-1] + "LL"
        return text

    # }}}

    # {{{ declarations and control

    def address_space_qualifier(self, aspace: AddressSpace) -> str:
        return ""

    def constant_array_qualifier(self) -> str:
        return "static const"

    def kernel_prefix(self, local_size: tuple[int, ...]) -> str:
        return "void"

    def hw_index_name(self, is_local: bool, axis: int) -> str:
        return f"_kc_{'lid' if is_local else 'gid'}{axis}"

    def barrier(self, fence: str) -> str | None:
        # only kernels whose barriers synchronize nothing get this far
        return None

    def array_arg_decl(self, ctype: str, name: str, is_const: bool,
                       restrict: bool = True) -> str:
        const = " const" if is_const else ""
        return f"{ctype}{const} *{'restrict ' if restrict else ''}{name}"

    # }}}

    # {{{ functions

    def function_name(self, name: str, arg_dtypes: list[np.dtype],
                      result_dtype: np.dtype) -> str:
        s = "static inline"
        if any(dt.kind == "c" for dt in arg_dtypes):
            dt = result_dtype if result_dtype.kind == "c" else next(
                dt for dt in arg_dtypes if dt.kind == "c")
            return self._complex_function(name, dt)
        if all(dt.kind in "iub" for dt in arg_dtypes) and name in ("abs", "min", "max"):
            ctype = self.dtype_to_ctype(arg_dtypes[0])
            fname = f"kc_{name}_{ctype.replace(' ', '_')}"
            if name == "abs":
                # (wrapping: abs of the most negative value is itself, as NumPy's;
                # -a would let the compiler assume a result >= 0)
                return _helper(fname, f"{s} {ctype} {fname}({ctype} a) "
                                      f"{{ return a < 0 ? ({ctype}) (0ull - "
                                      "(unsigned long long) a) : a; }")
            op = "<" if name == "min" else ">"
            return _helper(fname, f"{s} {ctype} {fname}({ctype} a, {ctype} b) "
                                  f"{{ return a {op} b ? a : b; }}")
        if name == "clamp":
            ctype = self.dtype_to_ctype(result_dtype)
            fname = f"kc_clamp_{ctype.replace(' ', '_')}"
            return _helper(fname, f"{s} {ctype} {fname}({ctype} x, {ctype} lo, {ctype} hi) "
                                  "{ return x < lo ? lo : (x > hi ? hi : x); }")
        if name in _GENERIC:
            return name
        fdt = result_dtype if result_dtype.kind == "f" else arg_dtypes[0]
        ctype = self.dtype_to_ctype(fdt)
        suffix = "f" if fdt == np.float32 else "l" if _is_long_double(fdt) else ""
        if name == "pown":
            fname = f"kc_pown_{ctype}"
            return _helper(fname, f"{s} {ctype} {fname}({ctype} x, int n) "
                                  f"{{ return pow{suffix}(x, ({ctype}) n); }}")
        if name == "round_tf32":
            return _helper("kc_round_tf32", (
                f"{s} float kc_round_tf32(float x) {{ if (isnan(x)) return x; "
                "uint32_t b; memcpy(&b, &x, 4); b = (b + 0x1000u) & 0xffffe000u; "
                "memcpy(&x, &b, 4); return x; }"))
        if name in _MISSING:
            fname = f"kc_{name}_{ctype}"
            body = _MISSING[name].format(t=ctype, pow="pow" + suffix, sqrt="sqrt" + suffix)
            return _helper(fname, f"{s} {ctype} {fname}({ctype} x) {{ {body} }}")
        return _RENAMED.get(name, name) + suffix

    def _complex_function(self, name: str, dtype: np.dtype) -> str:
        prefix = self.complex_prefix(dtype)
        fname = f"{prefix}_{name}"
        t = f"{prefix}_t"
        real = "float" if dtype == np.complex64 else "double"
        suffix = "f" if real == "float" else ""
        s = "static inline"
        if name in ("pow",):
            return fname                    # in the preamble
        if name in _COMPLEX_MATH:
            return _helper(fname, f"{s} {t} {fname}({t} a) {{ return {prefix}_s("
                                  f"{_COMPLEX_MATH[name]}{suffix}({prefix}_c99(a))); }}")
        if name == "abs":
            return _helper(fname, f"{s} {real} {fname}({t} a) "
                                  f"{{ return cabs{suffix}({prefix}_c99(a)); }}")
        if name in ("real", "imag"):
            return _helper(fname, f"{s} {real} {fname}({t} a) {{ return a.{name}; }}")
        if name == "conj":
            return _helper(fname, f"{s} {t} {fname}({t} a) "
                                  f"{{ return {prefix}_new(a.real, -a.imag); }}")
        raise CodeGenerationError(f"function '{name}' of complex values is not "
                                  "available on the C target")

    def helper_function_source(self, name: str) -> str | None:
        return _HELPERS.get(name)

    def vector_helper(self, name: str, width: int) -> tuple[str, str] | None:
        return None

    def vector_builtin(self, name: str, dtype: np.dtype, width: int) -> bool:
        return True

    def preamble(self, uses_complex: bool, uses_double: bool,
                 index_ctype: str = "int") -> list[str]:
        lines = ["#include <math.h>", "#include <stdint.h>", "#include <string.h>"]
        if uses_complex:
            lines.append("#include <complex.h>")
            lines += _complex_support("kc_cfloat", "float", "f")
            lines += _complex_support("kc_cdouble", "double", "")
        return lines

    # }}}

    def invoke(self, knl: LoopKernel, queue: cl.CommandQueue | None, kwargs: dict
               ) -> tuple[None, dict[str, np.ndarray] | tuple[np.ndarray, ...]]:
        raise InvocationError(
            f"kernel '{knl.name}' has target CTarget, which only generates C source; "
            "use ExecutableCTarget() to run it")

    def __eq__(self, other) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


@dataclass(frozen=True, eq=True)
class ExecutableCTarget(CTarget):
    """C99 code compiled by the system compiler into a shared library (cached
    on disk) and called through ctypes with NumPy arrays.

    *compiler* is the compiler command, *cflags* its options (``-lm`` and the
    output options are added); *libraries* are linked in (``("openblas",)`` for
    kernels calling CBLAS).
    """

    compiler: str = "cc"
    cflags: tuple[str, ...] = ("-O2", "-std=c99", "-shared", "-fPIC")
    libraries: tuple[str, ...] = ()

    def compile_command(self) -> list[str]:
        """The compiler and its options, without input and output files."""
        return [self.compiler, *self.cflags]

    def link_flags(self) -> tuple[str, ...]:
        """Options naming the libraries to link, after the source file."""
        return tuple(f"-l{lib}" for lib in self.libraries)

    def invoke(self, knl: LoopKernel, queue: cl.CommandQueue | None, kwargs: dict
               ) -> tuple[None, dict[str, np.ndarray] | tuple[np.ndarray, ...]]:
        """Run *knl* through :mod:`kernelcore.runtime.c_invoke` (registered as
        the stage ``invoke_c``)."""
        return stage("invoke_c")(knl, queue, kwargs)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.compiler, self.cflags, self.libraries))

    def __repr__(self) -> str:
        return f"ExecutableCTarget(compiler={self.compiler!r})"
