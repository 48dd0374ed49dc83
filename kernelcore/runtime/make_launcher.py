"""From a kernelcore kernel to a list launcher (:func:`make_launcher`).

Public names: make_launcher.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pymbolic import evaluate

from kernelcore.diagnostic import InvocationError, KernelcoreError
from kernelcore.ir.data import ArrayArg, ValueArg
from kernelcore.ir.domain import set_to_cond_expr
from kernelcore.ir.expr import get_dependencies
from kernelcore.runtime.device import default_queue
from kernelcore.runtime.invoke import _check, get_executor
from kernelcore.runtime.launchers import OpenClKernelLauncher, OpenClKernelListLauncher
from kernelcore.translation_unit import as_kernel

if TYPE_CHECKING:
    from kernelcore.ir.kernel import LoopKernel
    from kernelcore.translation_unit import TranslationUnit

# {{{ kernelcore kernels

def _solve_extent(param: str, expr, extent: int) -> int | None:
    """The value of *param* making *expr* equal *extent*, when *expr* is linear in
    *param* alone."""
    if get_dependencies(expr) != {param}:
        return None
    d = evaluate(expr, {param: 0})
    c = evaluate(expr, {param: 1}) - d
    if c == 0 or evaluate(expr, {param: 2}) != d + 2 * c:
        return None
    return (extent - d) // c


def make_launcher(knl: LoopKernel | TranslationUnit, queue: cl.CommandQueue | None = None,
                  **arrays_and_params: Any) -> OpenClKernelListLauncher:
    """A list launcher replaying *knl* (a kernel or a translation unit's
    entry point) on the given device arrays.

    Every array argument must be passed, as a pyopencl array (numpy arrays are
    refused: a launcher works on device data, and replays see later changes to
    the arrays' contents). Parameters not passed are found from array shapes as
    a kernel call does (an extent that is a linear function of one parameter);
    passed ones are checked against the shapes. The kernel is typed from the
    arrays' dtypes, global temporaries are allocated once, the grid of each device
    kernel is evaluated once, and all arguments are bound: a call of the result
    only enqueues the device kernels, in order, on *queue* (None: the default
    queue) or the queue passed to the call.
    """
    knl = as_kernel(knl)
    if queue is None:
        queue = default_queue()
    unknown = set(arrays_and_params) - set(knl.arg_dict)
    if unknown:
        raise InvocationError(f"kernel '{knl.name}' has no argument(s) "
                              f"{', '.join(sorted(unknown))}; its arguments are "
                              + ", ".join(a.name for a in knl.args))
    for arg in knl.args:
        value = arrays_and_params.get(arg.name)
        if not isinstance(arg, ArrayArg):
            continue
        if value is None:
            raise InvocationError(f"make_launcher: missing array '{arg.name}' (a "
                                  "launcher binds every array; pass a pyopencl array)")
        if isinstance(value, np.ndarray):
            raise InvocationError(f"make_launcher: '{arg.name}' is a numpy array; a "
                                  "launcher works on device data: pass a pyopencl array "
                                  "(pyopencl.array.to_device)")
        if not isinstance(value, cla.Array):
            raise InvocationError(f"make_launcher: '{arg.name}' must be a pyopencl "
                                  f"array, got {type(value).__name__}")

    ex = get_executor(knl, arrays_and_params)
    tknl = ex.knl
    arrays = [a for a in tknl.args if isinstance(a, ArrayArg)]

    # {{{ parameter values

    params: dict[str, Any] = {}
    for v in tknl.args:
        if not isinstance(v, ValueArg):
            continue
        value = arrays_and_params.get(v.name)
        if value is None:
            for a in arrays:
                for axis, extent in enumerate(a.shape or ()):
                    value = _solve_extent(v.name, extent,
                                          arrays_and_params[a.name].shape[axis])
                    if value is not None:
                        break
                if value is not None:
                    break
        if value is None:
            raise InvocationError(f"make_launcher: missing parameter '{v.name}': pass "
                                  "it, or an array whose shape determines it")
        if not (isinstance(value, (numbers.Number, np.generic))
                or (isinstance(value, np.ndarray) and value.ndim == 0)):
            raise InvocationError(f"make_launcher: parameter '{v.name}' must be a "
                                  f"number, got {type(value).__name__}")
        params[v.name] = np.dtype(v.dtype).type(value)  # type: ignore[arg-type]
    env = {k: (int(x) if isinstance(x, np.integer) else x) for k, x in params.items()}

    # }}}

    if not tknl.options.skip_arg_checks:
        if tknl.assumptions is not None:
            cond = set_to_cond_expr(tknl.assumptions)
            if cond is not True and not evaluate(cond, env):
                raise InvocationError(f"parameter values {env} violate the kernel's "
                                      f"assumptions {tknl.assumptions}")
        for a in arrays:
            shape = tuple(int(evaluate(s, env)) for s in a.shape)
            strides = tuple(int(evaluate(s, env)) for s in a.element_strides())
            _check(a.name, arrays_and_params[a.name], shape, np.dtype(a.dtype), strides)

    temporaries = {}
    for name, dtype, shape in ex.code.global_temporaries:
        tshape = tuple(max(0, int(evaluate(s, env))) for s in shape)
        temporaries[name] = cla.empty(queue, tshape, np.dtype(dtype))

    args = [params[a.name] if isinstance(a, ValueArg) else arrays_and_params[a.name]
            for a in tknl.args] + list(temporaries.values())
    cl_kernels = ex.cl_kernels(queue.context)
    if ex.code.launches and any(values for _, values in ex.code.launches):
        raise KernelcoreError(f"kernel '{knl.name}': make_launcher takes kernels without "
                              "host loops (global barriers inside sequential loops)")
    launchers = []
    for dk, clk in zip(ex.code.kernels, cl_kernels):
        gsize = tuple(max(0, int(evaluate(g, env))) * ls
                      for g, ls in zip(dk.num_groups, dk.local_size))
        launchers.append(OpenClKernelLauncher(
            dk.name, clk, args, default_global_work_size=gsize,
            default_local_work_size=tuple(dk.local_size), default_queue=queue))
    return OpenClKernelListLauncher(knl.name, *launchers, default_queue=queue)

# }}}
