"""Running kernels of ExecutableCTarget: the system C compiler, a disk cache of
shared libraries, ctypes calls with NumPy arrays.

As on the OpenCL path, each combination of argument dtypes gets its generated
code (from the same code cache) and a small generated Python *invoker* that
finds parameters from array shapes, checks the assumptions, shapes, dtypes
and strides, allocates outputs, and calls the compiled functions in order.
The queue is ignored; the returned event is None.

The compiled library is stored under ``KERNELCORE_CACHE_DIR`` (else the user
cache directory) in ``c-libraries/``, named by a hash of the source and the
compiler command, so a second process reuses it without compiling.

Public names: invoke, build_library, c_function, library_cache_dir, CCompilationError,
STATS.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import time
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from kernelcore.diagnostic import InvocationError, KernelcoreError
from kernelcore.ir.data import ArrayArg, ValueArg
from kernelcore.ir.stages import provide
from kernelcore.runtime.build import format_build_error
from kernelcore.runtime.invoke import (
    _assumption_failed,
    _missing,
    _py,
    cached_code,
    check_argument_names,
    check_shape,
    compile_invoker,
    emit_parameter_code,
    find_executor,
    native_array,
    returned_arrays,
    strides_mismatch,
    tuple_code,
)
from kernelcore.runtime.store import default_cache_dir

if TYPE_CHECKING:
    import pyopencl as cl

    from kernelcore.ir.kernel import LoopKernel

logger = logging.getLogger(__name__)

#: compiler runs and library loads of this process (read by tests)
STATS = {"compiles": 0, "disk_hits": 0, "memory_hits": 0}

_EXECUTORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LIBRARIES: dict[str, ctypes.CDLL] = {}


class CCompilationError(KernelcoreError):
    """The system C compiler rejected generated code (or could not be run)."""


# {{{ compiling and loading

def library_cache_dir() -> str:
    """Where compiled libraries are kept."""
    return os.path.join(default_cache_dir(), "c-libraries")


def build_library(source: str, command: list[str], name: str = "kernel",
                  link_flags: tuple[str, ...] = ()) -> ctypes.CDLL:
    """The shared library compiled from *source* by *command* (the compiler and
    its options) and linked with *link_flags*, from memory, the disk cache, or a
    compiler run."""
    key = hashlib.sha256(("\0".join([*command, "--", *link_flags]) + "\0\0"
                          + source).encode()).hexdigest()
    lib = _LIBRARIES.get(key)
    if lib is not None:
        STATS["memory_hits"] += 1
        logger.debug("Kernel %s retrieved from cache", name)   # (loopy's words)
        return lib
    directory = library_cache_dir()
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{key[:40]}.so")
    if os.path.exists(path):
        STATS["disk_hits"] += 1
        logger.debug("Kernel %s retrieved from cache", name)
    else:
        if shutil.which(command[0]) is None:
            raise CCompilationError(f"C compiler '{command[0]}' not found; pass "
                                    "ExecutableCTarget(compiler=...)")
        start = time.perf_counter()
        work = tempfile.mkdtemp(prefix="build-", dir=directory)
        try:
            src = os.path.join(work, f"{name}.c")
            out = os.path.join(work, f"{name}.so")
            with open(src, "w") as f:
                f.write(source)
            full = [*command, src, "-o", out, *link_flags, "-lm"]
            STATS["compiles"] += 1
            proc = subprocess.run(full, capture_output=True, text=True)
            if proc.returncode != 0:
                raise CCompilationError(format_build_error(
                    source, proc.stderr + proc.stdout,
                    f"C compilation of kernel '{name}' ({' '.join(full)})"))
            os.replace(out, path)          # atomic: concurrent builders agree
        finally:
            shutil.rmtree(work, ignore_errors=True)
        logger.info("compiled %s in %.1f ms", name, 1e3 * (time.perf_counter() - start))
    lib = ctypes.CDLL(path)
    _LIBRARIES[key] = lib
    return lib


def _scalar_ctype(dtype: np.dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        real = ctypes.c_float if dtype == np.complex64 else ctypes.c_double
        return type(f"complex_{dtype.name}", (ctypes.Structure,),
                    {"_fields_": [("real", real), ("imag", real)]})
    if dtype.kind == "b":
        return ctypes.c_ubyte
    return np.ctypeslib.as_ctypes_type(dtype)

# }}}


# {{{ helpers the generated invoker calls

def _host_array(name: str, ary, order: str):
    """*ary* as a NumPy array in native byte order (a copy where it is not
    already; its layout is checked against the kernel's after)."""
    if not isinstance(ary, np.ndarray) and hasattr(ary, "get") and hasattr(ary, "queue"):
        raise InvocationError(f"argument '{name}': ExecutableCTarget takes NumPy "
                              "arrays, got a device array (use .get())")
    return native_array(ary)


def _check(name: str, ary: np.ndarray, shape: tuple, dtype: np.dtype, strides: tuple):
    if ary.dtype != dtype:
        raise InvocationError(f"argument '{name}' has dtype {ary.dtype}, the kernel "
                              f"expects {dtype}")
    if tuple(ary.shape) != shape:
        raise InvocationError(f"argument '{name}' has shape {tuple(ary.shape)}, the kernel "
                              f"expects {shape}")
    if ary.size == 0:
        return
    for axis, (extent, stride, want) in enumerate(zip(shape, ary.strides, strides)):
        if extent > 1 and stride != want * dtype.itemsize:
            raise InvocationError(strides_mismatch(name, axis, stride // dtype.itemsize,
                                                   want))


def _unalias(ary, *others):
    """*ary* (written by the kernel), copied if it may overlap another argument:
    the generated code declares its pointers ``restrict``, and the OpenCL path
    copies every host array to a buffer of its own."""
    if any(o is not None and np.may_share_memory(ary, o) for o in others):
        return ary.copy(order="A")
    return ary


def _copy_back(host, ary):
    if host is None or host is ary:
        return ary
    host[...] = ary
    return host


class _Runtime:
    missing = staticmethod(_missing)
    check_shape = staticmethod(check_shape)
    assumption_failed = staticmethod(_assumption_failed)
    host_array = staticmethod(_host_array)
    check = staticmethod(_check)
    copy_back = staticmethod(_copy_back)
    unalias = staticmethod(_unalias)
    np = np

    def __init__(self, executor: CExecutor):
        self.executor = executor
        self.scalar_types = executor.scalar_types

    def functions(self):
        return self.executor.functions()

    def scalar(self, k: int, value):
        """Value argument number *k* converted to its ctypes type."""
        ct, dtype = self.scalar_types[k]
        v = dtype.type(value)
        if dtype.kind == "c":
            return ct(float(v.real), float(v.imag))
        return ct(v.item())

# }}}


class CExecutor:
    """A kernel specialized to argument dtypes: C code, compiled functions, invoker."""

    def __init__(self, knl):
        self.knl = knl
        self.key, self.code = cached_code(knl)
        self.device_args = knl.device_arguments()
        self.scalar_types = {k: (_scalar_ctype(a.dtype), np.dtype(a.dtype))
                             for k, a in enumerate(self.device_args)
                             if isinstance(a, ValueArg)}
        self._functions = None
        self.wrapper_source = self._wrapper_source()
        self.invoker = compile_invoker(self.wrapper_source,
                                       f"kernelcore C invoker {knl.name}")
        self.runtime = _Runtime(self)

    @property
    def built(self) -> bool:
        """Whether the compiled functions are at hand (from an earlier call)."""
        return self._functions is not None

    def functions(self) -> list:
        if self._functions is None:
            if self.knl.options.write_code:
                print(self.code.device_code())
            lib = build_library(self.code.device_code(),
                                [*self.knl.target.compile_command(),
                                 *self.knl.options.build_options],
                                self.knl.name, self.knl.target.link_flags())
            argtypes = [self.scalar_types[k][0] if k in self.scalar_types else ctypes.c_void_p
                        for k in range(len(self.device_args))]
            index_type = np.ctypeslib.as_ctypes_type(self.knl.index_dtype)
            fns = []
            for dk in self.code.kernels:
                fn = getattr(lib, dk.name)
                fn.restype = None
                fn.argtypes = argtypes + [index_type] * len(dk.extra_inames)
                fns.append(fn)
            self._functions = fns
        return self._functions

    def _wrapper_source(self) -> str:
        knl = self.knl
        written = returned_arrays(knl)
        arrays = [a for a in knl.args if isinstance(a, ArrayArg)]
        names = [a.name for a in knl.args]
        out: list[str] = []
        w = out.append
        w(f"def invoke(_rt, {', '.join(f'{n}=None' for n in names)}):")
        w("    _np = _rt.np")
        for a in arrays:
            w(f"    _{a.name}_host = {a.name}")
            w(f"    if {a.name} is not None:")
            w(f"        {a.name} = _rt.host_array({a.name!r}, {a.name}, {a.order!r})")

        emit_parameter_code(w, knl)

        for a in arrays:
            shape, strides = tuple_code(a.shape), tuple_code(a.element_strides())
            w(f"    if {a.name} is None:")
            if a.name in written:
                w(f"        _rt.check_shape({a.name!r}, {shape})")
                w(f"        {a.name} = _np.empty({shape}, _np.dtype({str(a.dtype)!r}), "
                  f"order={a.order!r})")
            else:
                w(f"        _rt.missing({a.name!r})")
            if not knl.options.skip_arg_checks:
                w(f"    _rt.check({a.name!r}, {a.name}, {shape}, _np.dtype("
                  f"{str(a.dtype)!r}), {strides})")

        for a in arrays:
            others = [b.name for b in arrays if b is not a]
            if a.name in written and others:
                w(f"    {a.name} = _rt.unalias({a.name}, {', '.join(others)})")

        for name, dtype, shape in self.code.global_temporaries:
            shape_code = "(" + "".join(f"max(0, {_py(x)}), " for x in shape) + ")"
            w(f"    {name} = _np.empty({shape_code}, _np.dtype({dtype!r}))")
        call_args = []
        for k, arg in enumerate(self.device_args):
            if isinstance(arg, ValueArg):
                call_args.append(f"_rt.scalar({k}, {arg.name})")
            else:
                call_args.append(f"{arg.name}.ctypes.data")
        w("    _fns = _rt.functions()")
        for k, values in self.code.launch_list():
            w(f"    _fns[{k}]({', '.join(call_args + [str(v) for v in values])})")
        outputs = [a.name for a in arrays if a.name in written]
        for o in outputs:
            w(f"    {o} = _rt.copy_back(_{o}_host, {o})")
        if knl.options.return_dict:
            w("    return None, {" + ", ".join(f"{o!r}: {o}" for o in outputs) + "}")
        else:
            w("    return None, (" + "".join(f"{o}, " for o in outputs) + ")")
        return "\n".join(out) + "\n"

    def __call__(self, kwargs: dict):
        for name in ("wait_for", "allocator", "out_host"):     # outputs are numpy arrays
            kwargs.pop(name, None)
        if self.knl.options.write_wrapper and not getattr(self, "_wrapper_printed", False):
            print(self.wrapper_source)
            self._wrapper_printed = True
        return self.invoker(self.runtime, **kwargs)


def get_executor(knl: LoopKernel, kwargs: dict) -> CExecutor:
    """The executor of *knl* for the dtypes of the arguments in *kwargs*."""
    return find_executor(knl, kwargs, _EXECUTORS, CExecutor, _as_typed)


def _as_typed(value):
    """Lists and tuples passed for arrays get NumPy's dtype for them."""
    return np.asarray(value) if isinstance(value, (list, tuple)) else value


def invoke(knl: LoopKernel, queue: cl.CommandQueue | None, kwargs: dict
           ) -> tuple[None, dict[str, np.ndarray] | tuple[np.ndarray, ...]]:
    """Run *knl* (of ExecutableCTarget) on NumPy arrays; *queue* is ignored.

    Returns ``(None, outputs)``: the written arrays, as NumPy arrays.
    """
    check_argument_names(knl, kwargs)
    executor = get_executor(knl, kwargs)
    if executor.built:
        logger.debug("Kernel %s retrieved from cache", knl.name)
    return executor(dict(kwargs))

def c_function(knl: Any, extra_source: str = "", name: str | None = None) -> Any:
    """The compiled C function of the kernel *knl* (of ExecutableCTarget, all
    types known): its generated code, followed by *extra_source* (C functions
    of the caller's, calling it), built by the target's compiler command
    (cached in memory and on disk); a ctypes function taking its arguments in
    the kernel's order (arrays as addresses), or the function *name* of
    *extra_source*. Argument and result types are left to the caller to
    declare (``argtypes``, ``restype``)."""
    from kernelcore.codegen.kernel import generate_code_v2

    target = knl.target
    source = generate_code_v2(knl).device_code() + extra_source
    library = build_library(source, target.compile_command(), knl.name, target.link_flags())
    return getattr(library, name or knl.name)


provide("invoke_c", invoke)
