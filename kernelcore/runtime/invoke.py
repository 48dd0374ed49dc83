"""Calling a kernel: types from the arguments, cached code, a generated invoker.

For each combination of argument dtypes a kernel is called with, kernelcore
generates device code once (cached in memory and on disk) and a small Python
function (the *invoker*, shown by the ``write_wrapper`` option) that finds
parameters from array shapes, checks and transfers arguments, allocates
outputs, and enqueues the kernel.

Several threads may call one kernel at once: code is generated and built
once, and each call sets the shared device kernels' arguments and enqueues
them under the program's lock.

Public names: invoke, get_executor, Executor, memory_pool, returned_arrays, native_array,
strides_mismatch, check_work_group_sizes, check_shape.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Iterable, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import islpy as isl
import numpy as np
import pymbolic.primitives as prim
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.tools as cl_tools
from pymbolic import evaluate

from kernelcore.codegen.kernel import CodeGenerationResult, generate_code_v2
from kernelcore.diagnostic import InvocationError
from kernelcore.index_width import emit_index_checks
from kernelcore.ir.data import ArrayArg, ValueArg, auto, c_order_strides, strides_for_order
from kernelcore.ir.domain import set_to_cond_expr
from kernelcore.ir.expr import get_dependencies
from kernelcore.ir.stages import provide
from kernelcore.runtime.build import BuiltProgram, built_program
from kernelcore.runtime.cache import code_for, kernel_key
from kernelcore.runtime.device import default_queue
from kernelcore.runtime.once import KeyedLocks, made_once
from kernelcore.translation_unit import TranslationUnit, as_kernel
from kernelcore.types import add_dtypes, infer_types

if TYPE_CHECKING:
    import numpy.typing as npt
    from pymbolic.typing import Expression

    from kernelcore.ir.kernel import LoopKernel

#: an executor (of OpenCL or of C code) :func:`find_executor` makes
_Executor = TypeVar("_Executor")

logger = logging.getLogger(__name__)

_EXECUTORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: guards the creation of registry entries (one per kernel)
_REGISTRY_LOCK = threading.Lock()


# {{{ helpers the generated invoker calls

def _missing(name: str, what: str = "argument"):
    raise InvocationError(f"missing {what} '{name}': pass it, or an array whose shape "
                          "determines it")


def check_shape(name: str, shape: tuple) -> None:
    """Raise if an output's *shape*, from the parameters, is negative."""
    if any(n < 0 for n in shape):
        raise InvocationError(f"output '{name}' would have the negative shape {shape}: "
                              "check the parameters passed (or the kernel's assumptions)")


def _assumption_failed(assumptions: str, params: dict):
    raise InvocationError(f"parameter values {params} violate the kernel's assumptions "
                          f"{assumptions}")


def native_array(ary: npt.ArrayLike) -> np.ndarray:
    """*ary* as a NumPy array in the machine's byte order, its layout kept (a
    copy where the byte order differs; a 0-d array stays 0-d). As loopy, a
    kernel takes arrays in the layout it was made for: the argument checks
    refuse others rather than copy them."""
    ary = np.asarray(ary)
    return np.asarray(ary, dtype=ary.dtype.newbyteorder("="), order="K")


def strides_mismatch(name: str, axis: int, stride: int, want: int) -> str:
    """The message for an argument *name* whose stride along *axis* (in
    elements) is not the kernel's."""
    return (f"argument '{name}': strides mismatch along axis {axis}: the array has "
            f"stride {stride} (elements), the kernel expects {want}; pass an array in "
            "the layout the kernel declares (np.ascontiguousarray or np.asfortranarray, "
            "or a copy of a view), or declare the argument's order")


def _to_device(queue, name: str, ary: np.ndarray, order: str):
    host = native_array(ary)
    if not (host.flags.c_contiguous or host.flags.f_contiguous):
        raise InvocationError(
            f"argument '{name}' is a NumPy view that is not contiguous (strides "
            f"{host.strides}); pass a copy in the kernel's order "
            f"(np.{'asfortranarray' if order == 'F' else 'ascontiguousarray'})")
    return cla.to_device(queue, host)


def _check(name: str, ary, shape: tuple, dtype: np.dtype, strides: tuple):
    if not isinstance(ary, cla.Array):
        raise InvocationError(f"argument '{name}' must be a numpy or pyopencl array, "
                              f"got {type(ary).__name__}")
    if ary.dtype != dtype:
        raise InvocationError(f"argument '{name}' has dtype {ary.dtype}, the kernel "
                              f"expects {dtype}")
    if tuple(ary.shape) != shape:
        raise InvocationError(f"argument '{name}' has shape {tuple(ary.shape)}, the kernel "
                              f"expects {shape}")
    itemsize = dtype.itemsize
    if ary.size == 0:
        return
    for axis, (extent, stride, want) in enumerate(zip(shape, ary.strides, strides)):
        if extent > 1 and stride != want * itemsize:
            raise InvocationError(strides_mismatch(name, axis, stride // itemsize, want))
    if ary.offset:
        raise InvocationError(f"argument '{name}' is a view with a nonzero offset; pass a "
                              "copy")


def _buffer(ary):
    return ary.base_data if ary.size else None


def _to_host(ary, host):
    if host is None:
        return ary.get()
    host[...] = ary.get()
    return host


_POOLS: dict[int, object] = {}
_POOL_LOCKS = KeyedLocks()


def memory_pool(queue: cl.CommandQueue) -> cl_tools.MemoryPool:
    """The memory pool (pyopencl.tools.MemoryPool) of *queue*, shared by
    kernelcore's scratch arrays and lazyarray's results. One pool per queue: a
    buffer freed while work on it is still queued is only reused by later
    work of the same in-order queue. (pyopencl's pool changes its state
    holding the GIL, so threads may share it.)"""
    def make():
        return cl_tools.MemoryPool(cl_tools.ImmediateAllocator(queue))

    return made_once(_POOLS, queue.int_ptr, make, _POOL_LOCKS)


class _Runtime:
    """What a generated invoker needs besides its arguments."""

    missing = staticmethod(_missing)
    check_shape = staticmethod(check_shape)
    assumption_failed = staticmethod(_assumption_failed)
    to_device = staticmethod(_to_device)
    check = staticmethod(_check)
    buffer = staticmethod(_buffer)
    to_host = staticmethod(_to_host)
    np = np
    cl = cl
    cla = cla

    def __init__(self, executor: Executor):
        self.executor = executor

    def program(self, queue) -> BuiltProgram:
        """The built program of *queue*'s context: kernels and their lock."""
        return self.executor.program(queue.context)

    @staticmethod
    def pool(queue):
        """A memory pool for scratch arrays (global temporaries) of *queue*'s context."""
        return memory_pool(queue)

# }}}


def _py(expr) -> str:
    """Python source for a shape/stride expression."""
    return str(expr)


def _solve_for(param: str, expr, shape_value_code: str) -> str | None:
    """Python code computing *param* from an array extent equal to *expr*, if *expr*
    is a linear function of *param* alone."""
    if get_dependencies(expr) != {param}:
        return None
    d = evaluate(expr, {param: 0})
    c = evaluate(expr, {param: 1}) - d
    if evaluate(expr, {param: 2}) != d + 2 * c or c == 0:
        return None
    if c == 1 and d == 0:
        return shape_value_code
    return f"({shape_value_code} - ({d})) // ({c})"


def tuple_code(exprs: Iterable[Expression]) -> str:
    """Python source of a tuple of shape/stride expressions."""
    return "(" + "".join(f"{_py(x)}, " for x in exprs) + ")"


def emit_parameter_code(w: Callable[[str], None], knl: LoopKernel) -> None:
    """Write (through *w*) invoker lines that find missing parameters from array
    shapes (or strides) and check the kernel's assumptions about them (and that its
    indices reach the sizes they give)."""
    arrays = [a for a in knl.args if isinstance(a, ArrayArg)]
    for v in (a for a in knl.args if isinstance(a, ValueArg)):
        candidates = []
        for a in arrays:
            for axis, extent in enumerate(a.shape if isinstance(a.shape, tuple) else ()):
                code = _solve_for(v.name, extent, f"{a.name}.shape[{axis}]")
                if code is not None:
                    candidates.append((a.name, code))
        fallback = None
        for a in arrays:        # a stride of a parameter: the passed array's, in elements
            for axis, stride in enumerate(a.strides if isinstance(a.strides, tuple) else ()):
                code = _solve_for(v.name, stride,
                                  f"({a.name}.strides[{axis}] // {a.name}.dtype.itemsize)")
                if code is not None:
                    candidates.append((a.name, code))
                    if fallback is None and stride == prim.Variable(v.name) \
                            and isinstance(a.shape, tuple):
                        # an array allocated here is C-ordered
                        fallback = _py(c_order_strides(a.shape)[axis])
        w(f"    if {v.name} is None:")
        for k, (aname, code) in enumerate(candidates):
            w(f"        {'if' if k == 0 else 'elif'} {aname} is not None:")
            w(f"            {v.name} = {code}")
        if candidates:
            w("        else:")
        w(f"        {'    ' if candidates else ''}" + (
            f"{v.name} = {fallback}" if fallback is not None
            else f"_rt.missing({v.name!r}, 'parameter')"))
    if knl.assumptions is not None and not knl.options.skip_arg_checks:
        # what is assumed of the arguments (loopy lets assumptions name other variables)
        assumed = knl.assumptions
        values = {a.name for a in knl.args if isinstance(a, ValueArg)}
        for k in reversed(range(assumed.dim(isl.dim_type.param))):
            if assumed.get_dim_name(isl.dim_type.param, k) not in values:
                assumed = assumed.project_out(isl.dim_type.param, k, 1)
        cond = set_to_cond_expr(assumed)
        if cond is not True:
            w(f"    if not ({cond}):")
            w(f"        _rt.assumption_failed({str(assumed)!r}, "
              "{" + ", ".join(f"{p!r}: {p}" for p in knl.ordered_params()) + "})")
    emit_index_checks(w, knl)


def _permuted_strides(a: ArrayArg) -> tuple[int, ...] | None:
    """The byte strides of *a* when they are fixed, neither C's nor
    Fortran's, and fill its elements without gaps (a permutation of the axes'
    nesting); else None."""
    strides = a.element_strides()
    if a.strides is None or not all(isinstance(x, int) for x in (*a.shape, *strides)):
        return None
    shape = tuple(int(x) for x in a.shape)
    itemsize = np.dtype(a.dtype).itemsize
    order = sorted(range(len(shape)), key=lambda k: strides[k])
    expected, step = [0] * len(shape), 1
    for k in order:
        expected[k] = step
        step *= shape[k]
    if tuple(expected) != tuple(strides) or 0 in shape:
        return None
    if tuple(strides) in (strides_for_order(shape, "C"), strides_for_order(shape, "F")):
        return None
    return tuple(s * itemsize for s in strides)


def returned_arrays(knl: LoopKernel) -> frozenset[str]:
    """The arguments a call allocates when not passed and returns: those the
    kernel writes and those declared outputs (``is_output=True``, as in
    loopy, also when nothing writes them)."""
    return knl.get_written_variables() | {a.name for a in knl.args
                                          if getattr(a, "is_output", None) is True}


def cached_code(knl: LoopKernel) -> tuple[str, CodeGenerationResult]:
    """``(cache key, generated code)`` of *knl*, from the code cache if there."""
    key = kernel_key(knl)
    return key, code_for(key, lambda: generate_code_v2(knl))


def check_work_group_sizes(name: str, kernels: Sequence[Any], device: cl.Device) -> None:
    """Raise :class:`~kernelcore.diagnostic.InvocationError` if a device
    kernel's work-group (its ``local_size``) is larger than *device* allows.
    (The limit a built kernel reports is not asked: the generated code requires
    its work-group size, which the device's compiler then fits or refuses;
    NVIDIA's driver reports 256 for kernels it built for and runs at 1024.)"""
    for dk in kernels:
        size = tuple(dk.local_size)
        total = int(np.prod(size))
        limits = tuple(device.max_work_item_sizes)
        limit = device.max_work_group_size
        over = [ax for ax, (n, most) in enumerate(zip(size, limits)) if n > most]
        if total <= limit and not over:
            continue
        what = (f"along axis {over[0]} ({size[over[0]]} work-items, at most "
                f"{limits[over[0]]})" if over else f"of {total} work-items (at most {limit})")
        raise InvocationError(
            f"kernel '{name}': device kernel '{dk.name}' has a work-group of size {size}, "
            f"too large for {device.name.strip()} {what}: split the local "
            "inames with a smaller inner length (lp.split_iname(knl, iname, 128, "
            "inner_tag='l.0', outer_tag='g.0'))")


def compile_invoker(source: str, label: str) -> Callable:
    """The ``invoke`` function defined by generated Python *source*."""
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<{label}>", "exec"), namespace)
    return namespace["invoke"]


class Executor:
    """A kernel specialized to argument dtypes: code, compiled kernels, invoker."""

    def __init__(self, knl):
        self.knl = knl
        self.key, self.code = cached_code(knl)
        self.wrapper_source = self._wrapper_source()
        self.invoker = compile_invoker(self.wrapper_source, f"kernelcore invoker {knl.name}")
        self.runtime = _Runtime(self)
        self._printed = False
        self._sizes_checked: set[int] = set()

    def program(self, ctx: cl.Context) -> BuiltProgram:
        """The program built for *ctx*: its kernels are shared, set their
        arguments and enqueue them under its lock."""
        if self.knl.options.write_code and not self._printed:
            print(self.code.device_code())
            self._printed = True
        if ctx.int_ptr not in self._sizes_checked:
            check_work_group_sizes(self.knl.name, self.code.kernels, ctx.devices[0])
            self._sizes_checked.add(ctx.int_ptr)
        return built_program(ctx, self.code.device_code(),
                             [k.name for k in self.code.kernels], self.key)

    def cl_kernels(self, ctx: cl.Context) -> list[cl.Kernel]:
        """The kernels of :meth:`program` (shared: see there)."""
        return self.program(ctx).kernels

    def _wrapper_source(self) -> str:
        knl = self.knl
        written = returned_arrays(knl)
        arrays = [a for a in knl.args if isinstance(a, ArrayArg)]
        names = [a.name for a in knl.args]
        out: list[str] = []
        w = out.append
        w(f"def invoke(_rt, queue, wait_for, _want_host, _allocator, "
          f"{', '.join(f'{n}=None' for n in names)}):")
        w("    _np = _rt.np")
        w("    _any_host = False")
        w("    _any_dev = False")

        emit_parameter_code(w, knl)

        # {{{ arrays
        for a in arrays:
            if a.shape is None:     # declared without a shape: passed as it is
                w(f"    _{a.name}_host = None")
                w(f"    if {a.name} is None:")
                w(f"        _rt.missing({a.name!r})")
                if not knl.options.no_numpy:
                    w(f"    elif not isinstance({a.name}, _rt.cla.Array):")
                    w("        _any_host = True")
                    if a.name in written:
                        w(f"        _{a.name}_host = {a.name}")
                    w(f"        {a.name} = _rt.to_device(queue, {a.name!r}, {a.name}, "
                      f"{a.order!r})")
                    w("    else:")
                    w("        _any_dev = True")
                continue
            shape, strides = tuple_code(a.shape), tuple_code(a.element_strides())
            is_out = a.name in written
            w(f"    _{a.name}_host = None")
            w(f"    if {a.name} is None:")
            if is_out:
                w(f"        _rt.check_shape({a.name!r}, {shape})")
            if is_out and _permuted_strides(a) is not None:
                # (a layout of its own that fills its elements: a vector axis first)
                w(f"        {a.name} = _rt.cla.Array(queue, {shape}, _np.dtype("
                  f"{str(a.dtype)!r}), strides={_permuted_strides(a)!r}, "
                  "allocator=_allocator)")
            elif is_out:
                w(f"        {a.name} = _rt.cla.empty(queue, {shape}, _np.dtype("
                  f"{str(a.dtype)!r}), order={a.order!r}, allocator=_allocator)")
            else:
                w(f"        _rt.missing({a.name!r})")
            if not knl.options.no_numpy:
                w(f"    elif not isinstance({a.name}, _rt.cla.Array):")
                w("        _any_host = True")
                if is_out:
                    w(f"        _{a.name}_host = {a.name}")
                w(f"        {a.name} = _rt.to_device(queue, {a.name!r}, {a.name}, "
                  f"{a.order!r})")
            if not is_out and a.offset is auto:
                # (loopy's any offset: a view starting inside its buffer, only
                # read, is passed as a copy)
                w(f"    elif {a.name}.offset:")
                w("        _any_dev = True")
                w(f"        {a.name} = {a.name}.copy(queue=queue)")
            if not knl.options.no_numpy:
                w("    else:")
                w("        _any_dev = True")
            if not knl.options.skip_arg_checks:
                w(f"    _rt.check({a.name!r}, {a.name}, {shape}, _np.dtype("
                  f"{str(a.dtype)!r}), {strides})")
        # }}}

        for name, dtype, shape in self.code.global_temporaries:
            shape_code = "(" + "".join(f"max(0, {_py(x)}), " for x in shape) + ")"
            w(f"    {name} = _rt.cla.empty(queue, {shape_code}, _np.dtype({dtype!r}), "
              "allocator=_allocator or _rt.pool(queue))")
        call_args = []
        for arg in knl.args:
            if isinstance(arg, ValueArg):
                call_args.append(f"_np.{arg.dtype.name}({arg.name})")  # type: ignore[union-attr]
            else:
                call_args.append(f"_rt.buffer({arg.name})")
        call_args += [f"_rt.buffer({name})" for name, _, _ in self.code.global_temporaries]
        w("    _program = _rt.program(queue)")
        w("    _knls = _program.kernels")
        w("    _evt = None")
        w("    with _program.lock:")
        index_type = f"_np.{np.dtype(knl.index_dtype).name}"
        for k, values in self.code.launch_list():
            dk = self.code.kernels[k]
            gsize = ", ".join(f"max(0, {_py(g)}) * {size}"
                              for g, size in zip(dk.num_groups, dk.local_size))
            extra = [f"{index_type}({v})" for v in values]   # the host loops' indices
            w(f"        _knls[{k}].set_args({', '.join(call_args + extra)})")
            w(f"        _gsize = ({gsize},)")
            w("        if 0 not in _gsize:")
            w(f"            _evt = _rt.cl.enqueue_nd_range_kernel(queue, _knls[{k}], _gsize, "
              f"{tuple(dk.local_size)!r}, wait_for=wait_for)")
            w("            wait_for = None")
        w("    if _evt is None:")
        w("        _evt = _rt.cl.enqueue_marker(queue, wait_for=wait_for)")
        outputs = [a.name for a in arrays if a.name in written]
        if outputs and not knl.options.no_numpy:
            # (as loopy: numpy results when arrays were passed only as numpy
            # arrays; a numpy output passed gets its result in any case)
            w("    _want_host = (_any_host and not _any_dev) if _want_host is None "
              "else _want_host")
            for o in outputs:
                w(f"    if _want_host or _{o}_host is not None:")
                w(f"        {o} = _rt.to_host({o}, _{o}_host)")
        if knl.options.return_dict:
            w("    return _evt, {" + ", ".join(f"{o!r}: {o}" for o in outputs) + "}")
        else:
            w("    return _evt, (" + "".join(f"{o}, " for o in outputs) + ")")
        return "\n".join(out) + "\n"

    def __call__(self, queue, kwargs: dict):
        wait_for = kwargs.pop("wait_for", None)
        out_host = kwargs.pop("out_host", None)
        allocator = kwargs.pop("allocator", None)
        if self.knl.options.write_wrapper and not getattr(self, "_wrapper_printed", False):
            print(self.wrapper_source)
            self._wrapper_printed = True
        try:
            return self.invoker(self.runtime, queue, wait_for, out_host, allocator, **kwargs)
        except TypeError as e:
            if "unexpected keyword argument" in str(e):
                raise InvocationError(f"kernel '{self.knl.name}': {e}; its arguments are "
                                      + ", ".join(a.name for a in self.knl.args)) from None
            raise


def _arg_dtype(knl, name: str, value) -> np.dtype | None:
    if value is None:
        return None
    dt = getattr(value, "dtype", None)
    if dt is not None:      # (a big-endian array's values are passed in native order)
        return np.dtype(dt).newbyteorder("=")
    if isinstance(knl.arg_dict[name], ValueArg):
        return np.asarray(value).dtype
    raise InvocationError(f"argument '{name}' must be an array, got {type(value).__name__}")


def get_executor(knl: LoopKernel | TranslationUnit, kwargs: dict) -> Executor:
    """The executor of *knl* (a kernel or a translation unit's entry point)
    for the dtypes of the arrays in *kwargs*."""
    return find_executor(as_kernel(knl), kwargs, _EXECUTORS, Executor)


def find_executor(knl: LoopKernel, kwargs: dict, registry: MutableMapping[LoopKernel, tuple],
                  make: Callable[[LoopKernel], _Executor],
                  as_typed: Callable[[Any], Any] = lambda v: v) -> _Executor:
    """The executor (made by *make* from the typed kernel, kept in *registry*)
    of *knl* for the dtypes of the arguments in *kwargs* (after *as_typed*);
    made once, also when several threads ask at the same time."""
    entry = registry.get(knl)
    if entry is None:
        params = set(knl.all_params())
        untyped = [a.name for a in knl.args if a.dtype is None and a.name not in params]
        written = returned_arrays(knl)
        required = [n for n in untyped
                    if n not in written and isinstance(knl.arg_dict[n], ArrayArg)]
        with _REGISTRY_LOCK:
            entry = registry.get(knl)
            if entry is None:
                entry = registry[knl] = (untyped, required, {}, KeyedLocks())
    untyped, required, per_kernel, making = entry
    for name in required:
        if kwargs.get(name) is None:
            _missing(name)
    type_key = tuple(_arg_dtype(knl, n, as_typed(kwargs.get(n))) for n in untyped)
    ex = per_kernel.get(type_key)
    if ex is None:
        given = {n: dt for n, dt in zip(untyped, type_key) if dt is not None}
        ex = made_once(per_kernel, type_key,
                       lambda: make(infer_types(add_dtypes(knl, given))), making)
    return ex


def check_argument_names(knl: LoopKernel, kwargs: dict) -> None:
    """Raise for keyword arguments that are not arguments of *knl*."""
    unknown = set(kwargs) - set(knl.arg_dict) - {"wait_for", "allocator", "out_host"}
    if unknown:
        raise InvocationError(f"kernel '{knl.name}' has no argument(s) "
                              f"{', '.join(sorted(unknown))}; its arguments are "
                              + ", ".join(a.name for a in knl.args))


def invoke(knl: LoopKernel, queue: cl.CommandQueue | None, kwargs: dict
           ) -> tuple[cl.Event, dict[str, Any] | tuple]:
    """Run *knl* on *queue* (None: the default queue) with keyword arguments.

    Returns ``(event, outputs)``: outputs are the written arrays, as numpy arrays
    if the arrays passed were numpy arrays (none a pyopencl array), else as
    pyopencl arrays; ``out_host=True`` (or False) asks for numpy (or pyopencl)
    arrays whatever the arguments were. An output passed as a numpy array
    receives its result in any case (as in loopy).
    """
    check_argument_names(knl, kwargs)
    if queue is None:
        queue = default_queue()
    return get_executor(knl, kwargs)(queue, dict(kwargs))

provide("invoke", invoke)
