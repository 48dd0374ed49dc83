"""Helper C functions generated code calls (Python-semantics ``//`` and ``%``,
integer powers, atomic updates), each emitted once in a kernel's preamble.

Public names: HelperRegistry, trace_printf.
"""

from __future__ import annotations

import numpy as np

#: the NumPy names of C types, which name the helpers of ``//`` and ``%`` as
#: in loopy (``loopy_floor_div_int32``)
_TYPE_SUFFIXES = {
    "char": "int8", "signed char": "int8", "short": "int16", "int": "int32",
    "long": "int64", "long long": "int64", "unsigned char": "uint8",
    "unsigned short": "uint16", "unsigned int": "uint32", "unsigned long": "uint64",
    "float": "float32", "double": "float64", "half": "float16",
}


def _type_suffix(ctype: str) -> str:
    if ctype.endswith("_t"):            # (the C target's int64_t and the like)
        return ctype[:-2]
    return _TYPE_SUFFIXES.get(ctype, ctype.replace(" ", "_"))


class HelperRegistry:
    """Helper C functions a kernel needs, emitted once each in its preamble."""

    def __init__(self, linkage: str = "inline"):
        self.linkage = linkage
        self.helpers: dict[str, str] = {}
        # (sort key, code) from registered callables: includes and the like
        self.preambles: dict[str, str] = {}
        self.extensions: set[str] = set()
        #: the types of all expressions printed (the preamble declares what they need)
        self.dtypes: set[np.dtype] = set()

    def floordiv(self, ctype: str, is_float: bool) -> str:
        name = "loopy_floor_div_" + _type_suffix(ctype)
        if name not in self.helpers:
            if is_float:
                # NumPy's: from the exact remainder, not floor(a / b), whose
                # rounded quotient can be an integer too large (1.0 // 0.001
                # is 999)
                body = (f"if (b == 0 || b != b) return a / b; const {ctype} m = fmod(a, b); "
                        f"{ctype} d = (a - m) / b; "
                        "if (m != 0 && ((b < 0) != (m < 0))) d -= 1; "
                        f"if (d == 0) return copysign(({ctype}) 0, a / b); "
                        f"const {ctype} f = floor(d); return (d - f > 0.5) ? f + 1 : f;")
            else:
                body = (f"const {ctype} q = a / b; "
                        "return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;")
            self.helpers[name] = (f"{self.linkage} {ctype} {name}({ctype} a, {ctype} b) "
                                  f"{{ {body} }}")
        return name

    def mod(self, ctype: str, is_float: bool) -> str:
        name = "loopy_mod_" + _type_suffix(ctype)
        if name not in self.helpers:
            rem = "fmod(a, b)" if is_float else "a % b"
            # (a zero remainder of floats takes the divisor's sign, as in NumPy)
            zero = f"if (r == 0 && b != 0) return copysign(({ctype}) 0, b); " \
                if is_float else ""
            self.helpers[name] = (
                f"{self.linkage} {ctype} {name}({ctype} a, {ctype} b) "
                f"{{ const {ctype} r = {rem}; {zero}"
                "return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }")
        return name

    def ipow(self, ctype: str) -> str:
        name = "kc_ipow_" + ctype.replace(" ", "_")
        if name not in self.helpers:
            # (products in the unsigned type: they wrap around, as in NumPy)
            work = ctype if ctype.startswith("unsigned") else f"unsigned {ctype}"
            self.helpers[name] = (
                f"{self.linkage} {ctype} {name}({ctype} b, {ctype} e) "
                f"{{ if (e < 0) return (b == 1) ? 1 : (b == -1) ? ((e & 1) ? -1 : 1) : 0; "
                f"{work} r = 1, p = ({work}) b; "
                f"while (e > 0) {{ if (e & 1) r *= p; p *= p; e >>= 1; }} return ({ctype}) r; }}")
        return name


    def atomic_add(self, ctype: str, kind: str) -> str:
        """A helper adding to a global element atomically."""
        name = "kc_atomic_add_" + ctype.replace(" ", "_")
        if name in self.helpers:
            return name
        if kind in "iu" and ctype in ("int", "unsigned int"):
            body = "atomic_add(p, v);"
        elif kind in "iu":
            body = "atom_add(p, v);"
            self.extensions.add("cl_khr_int64_base_atomics")
        else:
            bits = "unsigned int" if ctype == "float" else "unsigned long"
            cas = "atomic_cmpxchg" if ctype == "float" else "atom_cmpxchg"
            if ctype != "float":
                self.extensions.add("cl_khr_int64_base_atomics")
            body = (f"union {{ {bits} i; {ctype} f; }} old, new; "
                    f"do {{ old.f = *p; new.f = old.f + v; }} "
                    f"while ({cas}((volatile __global {bits} *) p, old.i, new.i) != old.i);")
        self.helpers[name] = (f"{self.linkage} void {name}(volatile __global {ctype} *p, "
                              f"{ctype} v) {{ {body} }}")
        return name


    def atomic_store(self, ctype: str, kind: str) -> str:
        """A helper storing to a global element atomically (an exchange)."""
        name = "kc_atomic_store_" + ctype.replace(" ", "_")
        if name in self.helpers:
            return name
        if ctype in ("int", "unsigned int", "float"):
            body = "atomic_xchg(p, v);"
        else:
            self.extensions.add("cl_khr_int64_base_atomics")
            bits = "long" if kind == "i" else "unsigned long"
            body = (f"union {{ {bits} i; {ctype} f; }} u; u.f = v; "
                    f"atom_xchg((volatile __global {bits} *) p, u.i);")
        self.helpers[name] = (f"{self.linkage} void {name}(volatile __global {ctype} *p, "
                              f"{ctype} v) {{ {body} }}")
        return name


def trace_printf(name: str, index: list[str], value: str | None, dtype: np.dtype) -> str:
    """A ``printf`` statement reporting a write of array (or scalar) *name* at
    the C index expressions *index*, with the written *value* (C code) when given
    (the options ``trace_assignments`` and ``trace_assignment_values``)."""
    where = f"[{', '.join(['%ld'] * len(index))}]" if index else ""
    args = [f"(long) ({ix})" for ix in index]
    what = ""
    if value is not None and dtype.kind in "biu":
        what, args = " = %ld", args + [f"(long) ({value})"]
    elif value is not None and dtype.kind == "f":
        what, args = " = %g", args + [f"({value})"]
    return f'printf("{name}{where}{what}\\n"{"".join(", " + a for a in args)});'
