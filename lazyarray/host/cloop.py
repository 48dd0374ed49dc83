"""What the host tier's native loops share: the arithmetic they compute as C
(the operations IEEE rounds exactly once, so the answers are NumPy's), the
flag-checking entry point of their libraries, array addresses, the setting
and the builds running in the background.

Public names: OPERATIONS, FUNCTIONS, FLOATS, ERRORS, c_expression, native_mode, c_target,
checked_function, start_build, wait_for_native, address_reader, errors_now, plain_errors.
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

#: the operations a native loop computes, by ufunc name: the C expression of
#: the operand expressions
OPERATIONS: dict[str, Callable[..., Any]] = {
    "add": lambda a, b: a + b, "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b, "true_divide": lambda a, b: a / b,
    "divide": lambda a, b: a / b, "negative": lambda a: -a, "positive": lambda a: a,
    "square": lambda a: a * a, "reciprocal": lambda a: 1 / a,
}
#: those computed by a C math function (``fabs`` for absolute values)
FUNCTIONS = frozenset(["sqrt", "absolute"])
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def c_expression(op: str, operands: list) -> Any:
    """The C expression (pymbolic) of the operation *op* (a key of
    :data:`OPERATIONS` or a member of :data:`FUNCTIONS`) of *operands*."""
    if op in FUNCTIONS:
        from pymbolic import var
        from pymbolic.primitives import Call

        # (kernelcore's C names are type-generic: fabsf and sqrtf for float32)
        return Call(var("fabs" if op == "absolute" else op), tuple(operands))
    return OPERATIONS[op](*operands)


#: the C type and ctypes type name of a scalar argument of each dtype
_SCALARS = {np.dtype(np.float32): ("float", "c_float"),
            np.dtype(np.float64): ("double", "c_double"),
            np.dtype(np.int64): ("int64_t", "c_int64")}
#: builds running in the background
_BUILDS: list[threading.Thread] = []
#: NumPy's error settings (a context variable of NumPy 2; None where absent)
ERRORS = getattr(getattr(getattr(np, "_core", None), "_ufunc_config", None),
                 "_extobj_contextvar", None)
#: NumPy's default settings, the ones native loops reproduce (the others,
#: ``np.errstate(divide="raise")``, ``under="warn"``, leave the work to NumPy)
_DEFAULT_ERRORS = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}
_PLAIN: dict = {}


def errors_now() -> Any:
    """NumPy's error settings in force (None where NumPy keeps them elsewhere)."""
    return None if ERRORS is None else ERRORS.get()


def plain_errors(state: Any) -> bool:
    """Whether NumPy's error settings *state* (from :func:`errors_now`) are
    its defaults: warnings for division by zero, overflow and invalid values
    (native loops report those), underflow ignored (they do not report it)."""
    if state is None or ERRORS is None:
        return bool(np.geterr() == _DEFAULT_ERRORS)
    known = _PLAIN.get(state)
    if known is None:
        token = ERRORS.set(state)
        try:
            known = np.geterr() == _DEFAULT_ERRORS
        finally:
            ERRORS.reset(token)
        if len(_PLAIN) >= 64:
            _PLAIN.clear()
        _PLAIN[state] = known
    return bool(known)


def native_mode() -> str:
    """``LAZYARRAY_NATIVE``: ``"off"`` (also 0, no, false), ``"sync"``
    (builds in the calling thread, for tests) or ``"auto"``; ``"off"`` where
    no C compiler is found."""
    value = os.environ.get("LAZYARRAY_NATIVE", "auto").strip().lower()
    if value in ("0", "off", "no", "false"):
        return "off"
    return value if shutil.which(os.environ.get("CC", "cc")) else "off"


def c_target() -> Any:
    """kernelcore's C target of the native loops: ``CC`` from the environment,
    else ``cc``, for this processor's vector instructions (its identity in
    the command, so a cache shared by other machines keeps their libraries
    apart); C99 mode, so no contraction into fused multiply-adds."""
    import kernelcore as lp
    return lp.ExecutableCTarget(compiler=os.environ.get("CC", "cc"), cflags=(
        "-O3", "-march=native", f"-DLAZYARRAY_CPU={_cpu_identity()}", "-std=c99",
        "-fno-math-errno", "-shared", "-fPIC"))


@functools.cache
def _cpu_identity() -> str:
    """A short hash of this processor's model and instruction sets."""
    import hashlib
    import platform

    text = platform.machine() + platform.processor()
    try:
        with open("/proc/cpuinfo") as info:
            text += "".join(sorted({line for line in info
                                    if line.startswith(("model name", "flags"))}))
    except OSError:
        pass
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def checked_function(knl: Any, pointers: int, scalars: list) -> Callable:
    """The compiled kernel *knl* (arguments: *pointers* array addresses, then
    numbers of the dtypes *scalars*) called with the floating point
    exceptions NumPy reports cleared before and read after: nonzero when one
    happened (the caller then computes with NumPy, which warns or raises as
    its error settings say)."""
    import ctypes

    import kernelcore as lp

    names = ["void *"] * pointers + [_SCALARS[np.dtype(d)][0] + " " for d in scalars]
    types = [ctypes.c_void_p] * pointers + [getattr(ctypes, _SCALARS[np.dtype(d)][1])
                                            for d in scalars]
    parameters = ", ".join(f"{name}x{k}" for k, name in enumerate(names))
    arguments = ", ".join(f"x{k}" for k in range(len(types)))
    flags = "FE_DIVBYZERO | FE_INVALID | FE_OVERFLOW"
    wrapper = (f"\n#include <fenv.h>\nint {knl.name}_checked({parameters})\n{{\n"
               f"  feclearexcept({flags});\n  {knl.name}({arguments});\n"
               f"  return fetestexcept({flags});\n}}\n")
    function = lp.c_function(knl, wrapper, f"{knl.name}_checked")
    function.restype = ctypes.c_int
    function.argtypes = types
    return function


def start_build(build: Callable[[], None]) -> None:
    """Run *build* in a background thread (in this one under
    ``LAZYARRAY_NATIVE=sync``)."""
    if native_mode() == "sync":
        build()
        return
    thread = threading.Thread(target=build, daemon=True, name="lazyarray-native-build")
    _BUILDS.append(thread)
    thread.start()


def wait_for_native() -> None:
    """Wait until the native loops being built are built (tests, benchmarks)."""
    while _BUILDS:
        _BUILDS.pop().join()


@functools.cache
def address_reader() -> Callable[[np.ndarray], int]:
    """The fastest reader of an array's data address that agrees with
    NumPy's own (its C struct's data field, right after the object header,
    where this NumPy has it there; else ``ndarray.ctypes.data``)."""
    import ctypes

    probe = np.zeros(3)[1:]
    offset = object.__basicsize__
    read = ctypes.c_void_p.from_address
    if read(id(probe) + offset).value == probe.ctypes.data:
        return lambda array: read(id(array) + offset).value or 0
    return lambda array: array.ctypes.data


__all__ = ["ERRORS", "FLOATS", "FUNCTIONS", "OPERATIONS", "address_reader", "c_expression",
           "c_target",
           "errors_now", "plain_errors",
           "checked_function", "native_mode", "start_build", "wait_for_native"]
