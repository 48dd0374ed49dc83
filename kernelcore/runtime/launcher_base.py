"""The launcher interface and what every launcher shares: timing statistics,
the base classes (:class:`LauncherI`, :class:`HostLauncherI`,
:class:`OpenClKernelLauncherI`), kernel-argument checks, and hysop's
profiling and tracing hooks.

Public names: KernelStatistics, LauncherI, HostLauncherI, OpenClKernelLauncherI,
profile_kernel, should_profile_kernel, trace_kernel, should_trace_kernel,
set_kernel_argument.
"""

from __future__ import annotations

import abc
import logging
import numbers
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

from kernelcore.diagnostic import InvocationError

logger = logging.getLogger("kernelcore.launchers")

_COMPLETE = cl.command_execution_status.COMPLETE
_PROFILING = cl.command_queue_properties.PROFILING_ENABLE
_OUT_OF_ORDER = cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE

#: pending profiling events per launcher before finished ones are folded in
#: automatically (bounds memory in long loops that never read statistics)
_MAX_PENDING = 1024


# {{{ statistics

@dataclass(frozen=True)
class KernelStatistics:
    """Execution times (seconds, from profiling events) of the launches of one name."""

    name: str
    count: int
    total: float
    min: float
    max: float

    @property
    def mean(self) -> float:
        """Average execution time in seconds."""
        return self.total / self.count

    def merged(self, other: KernelStatistics) -> KernelStatistics:
        """The statistics of both sets of launches together."""
        return KernelStatistics(self.name, self.count + other.count,
                                self.total + other.total, min(self.min, other.min),
                                max(self.max, other.max))

    def __str__(self) -> str:
        return (f"{self.name}: {self.count} launch(es), total {self.total:.3e} s, "
                f"mean {self.mean:.3e} s, min {self.min:.3e} s, max {self.max:.3e} s")


def _merge_statistics(parts: Iterable[Mapping[str, KernelStatistics]]
                      ) -> dict[str, KernelStatistics]:
    out: dict[str, KernelStatistics] = {}
    for part in parts:
        for name, st in part.items():
            out[name] = out[name].merged(st) if name in out else st
    return out

# }}}


# {{{ base

class LauncherI(abc.ABC):
    """Something that enqueues work on a command queue and returns its event.

    Subclasses implement ``__call__(queue=None, wait_for=None, **kwds)`` and
    :meth:`global_size_configured`.
    """

    def __init__(self, name: str, profiler: Any = None, **kwds: Any):
        if kwds:
            raise TypeError(f"{type(self).__name__}: unexpected argument(s) "
                            f"{', '.join(sorted(kwds))}")
        if not isinstance(name, str) or not name:
            raise InvocationError(f"a launcher needs a non-empty name, got {name!r}")
        self._name = name
        #: where :func:`profile_kernel` records this launcher's timings (a
        #: mapping name -> seconds, or a callable ``(name, seconds)``), or None
        self.profiler = profiler
        self._pending: list[cl.Event] = []
        self._collect_at = _MAX_PENDING
        self._stats: KernelStatistics | None = None
        self._queue: cl.CommandQueue | None = None
        self._profiling = False
        self._in_order = True

    @property
    def name(self) -> str:
        """The name of this launcher (used in logs and statistics)."""
        return self._name

    @property
    def events(self) -> tuple[cl.Event, ...]:
        """Profiling events enqueued since statistics last consumed them."""
        return tuple(self._pending)

    @property
    def statistics(self) -> dict[str, KernelStatistics]:
        """Timings per name of all finished launches so far (profiling queues only);
        the events of finished launches are consumed."""
        self._collect()
        return {} if self._stats is None else {self._name: self._stats}

    @abc.abstractmethod
    def __call__(self, queue: cl.CommandQueue | None = None, wait_for=None, **kwds):
        """Enqueue the work; return its event."""

    @abc.abstractmethod
    def global_size_configured(self) -> bool:
        """Whether a call needs no explicit global work size."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r})"

    # {{{ helpers for subclasses

    def _use_queue(self, queue: cl.CommandQueue) -> None:
        self._queue = queue
        props = queue.properties
        self._profiling = bool(props & _PROFILING)
        self._in_order = not props & _OUT_OF_ORDER

    def _after_enqueue(self, evt: cl.Event) -> None:
        """Trace, profile (with :attr:`profiler`) and record one launch."""
        if should_trace_kernel(self._name):
            trace_kernel(self._name)
        if self.profiler is not None and self._profiling:
            profile_kernel(None, evt, self._name, self.profiler)
        if self._profiling:
            self._record(evt)

    def _record(self, evt: cl.Event) -> None:
        pending = self._pending
        pending.append(evt)
        if len(pending) >= self._collect_at:
            self._collect()
            # unfinished events stay; do not rescan them on every launch
            self._collect_at = len(self._pending) + _MAX_PENDING

    def _collect(self) -> None:
        if not self._pending:
            return
        keep = []
        st = self._stats
        for evt in self._pending:
            status = evt.command_execution_status
            if status == _COMPLETE:
                dt = (evt.profile.end - evt.profile.start) * 1e-9
                if st is None:
                    st = KernelStatistics(self._name, 1, dt, dt, dt)
                else:
                    st = KernelStatistics(self._name, st.count + 1, st.total + dt,
                                          min(st.min, dt), max(st.max, dt))
            elif status > 0:
                keep.append(evt)
            # negative status: the command failed; its event carries no timing
        self._stats = st
        self._pending = keep

    # }}}


class HostLauncherI(LauncherI):
    """A launcher running host code (subclasses implement ``__call__``); it
    needs no work size and takes no parameters."""

    def global_size_configured(self) -> bool:
        return True

    def parameters(self) -> dict[str, Any]:
        """Parameters a call takes: none."""
        return {}


class OpenClKernelLauncherI(LauncherI):
    """A launcher enqueuing one OpenCL kernel; ``__call__`` also takes
    ``global_work_size`` and ``local_work_size``."""

    def check_kernel_arg(self, arg: Any, arg_id: int, arg_name: str, arg_type: Any) -> None:
        """Raise :class:`~kernelcore.diagnostic.InvocationError` unless *arg*
        suits kernel argument *arg_id* (*arg_name*) of type *arg_type* (a numpy
        scalar type or dtype, or a class such as ``cl.MemoryObjectHolder``)."""
        what = f"argument {arg_id} ('{arg_name}') of '{self.name}'"
        if isinstance(arg_type, np.dtype) or (isinstance(arg_type, type)
                                              and issubclass(arg_type, np.generic)):
            want = np.dtype(arg_type)
            if not isinstance(arg, np.generic) or arg.dtype != want:
                raise InvocationError(f"{what} must be a numpy {want.name} scalar, got "
                                      f"{type(arg).__name__}"
                                      + (f" of {arg.dtype}" if hasattr(arg, "dtype") else ""))
            return
        if isinstance(arg_type, (type, tuple)):
            if not isinstance(arg, arg_type):
                raise InvocationError(f"{what} must be a {arg_type}, got "
                                      f"{type(arg).__name__}")
            return
        raise InvocationError(f"{what}: unknown argument type {arg_type!r}")


# {{{ profiling and tracing (hysop's hooks)

def _env_matches(variable: str, kernel_msg: str | None) -> bool:
    value = os.environ.get(variable, "")
    if not value or value.lower() in ("0", "false", "no"):
        return False
    if value.lower() in ("1", "true", "yes", "all"):
        return True
    return kernel_msg is not None and re.search(value, kernel_msg) is not None


def should_profile_kernel(kernel_msg: str | None) -> bool:
    """Whether launches named *kernel_msg* are profiled: ``KERNELCORE_PROFILE``
    is ``1`` (all) or a regular expression matching the name."""
    return _env_matches("KERNELCORE_PROFILE", kernel_msg)


def should_trace_kernel(kernel_msg: str | None) -> bool:
    """Whether launches named *kernel_msg* are traced: ``KERNELCORE_TRACE``
    is ``1`` (all) or a regular expression matching the name."""
    return _env_matches("KERNELCORE_TRACE", kernel_msg)


def trace_kernel(kernel_msg: str) -> None:
    """Log that *kernel_msg* is being enqueued (``kernelcore.launchers``
    logger, level info)."""
    logger.info("enqueue %s", kernel_msg)


def profile_kernel(kernel: Any, evt: cl.Event, kernel_msg: str | None = None,
                   fprofiler: Any = None) -> float | None:
    """Wait for *evt* and return the seconds its command ran, recorded under
    *kernel_msg* (default: *kernel*'s function name) in *fprofiler* (a
    mapping, summed into, or a callable ``(name, seconds)``). Without a
    profiling queue (no timings) nothing is recorded and None is returned."""
    if kernel_msg is None:
        kernel_msg = getattr(kernel, "function_name", None) or str(kernel)
    evt.wait()
    try:
        seconds = (evt.profile.end - evt.profile.start) * 1e-9
    except cl.Error:
        return None
    if should_trace_kernel(kernel_msg):
        logger.info("%s ran %.3g s", kernel_msg, seconds)
    if fprofiler is not None:
        if callable(fprofiler):
            fprofiler(kernel_msg, seconds)
        else:
            fprofiler[kernel_msg] = fprofiler.get(kernel_msg, 0.0) + seconds
    return seconds

# }}}


def _resolve_queue(launcher: LauncherI, queue, default) -> cl.CommandQueue:
    if queue is None:
        queue = default
        if queue is None:
            raise InvocationError(f"launcher '{launcher.name}' has no default queue: "
                                  "pass queue=")
    return queue

# }}}


# {{{ kernel arguments

#: pyopencl's setter of an argument from the bytes of a buffer-protocol
#: object (what its own generated invokers call for scalars); None where a
#: pyopencl lacks it
_SET_BYTES = getattr(cl.Kernel, "_set_arg_buf", None)


def set_kernel_argument(kernel: cl.Kernel, index: int, value: Any) -> None:
    """Set argument *index* of *kernel* to *value* (a buffer, or a NumPy
    scalar of the argument's C type). ``Kernel.set_arg`` takes about 5 us for
    a NumPy scalar (it tries the other kinds of argument first) against
    0.1 us here, and a kernel generic over sizes has dozens of them."""
    if _SET_BYTES is not None and isinstance(value, np.generic):
        _SET_BYTES(kernel, index, value)
    else:
        kernel.set_arg(index, value)


def _kernel_arg(value: Any, what: str) -> Any:
    """*value* as something ``Kernel.set_arg`` takes."""
    if isinstance(value, cla.Array):
        if value.offset:
            raise InvocationError(f"{what} is a pyopencl array view with a nonzero "
                                  "offset; pass a copy")
        return value.base_data if value.size else None
    if value is None or isinstance(value, (cl.MemoryObjectHolder, cl.LocalMemory,
                                           np.generic)):
        return value
    if isinstance(value, np.ndarray):
        raise InvocationError(f"{what} is a numpy array: launchers work on device data, "
                              "pass a pyopencl array (pyopencl.array.to_device)")
    if isinstance(value, numbers.Number):
        raise InvocationError(f"{what} is a Python {type(value).__name__}, which has no "
                              "C type: pass a numpy scalar such as numpy.int32(3)")
    raise InvocationError(f"{what} has type {type(value).__name__}, which cannot be a "
                          "kernel argument")


def _indexed(args_list: Iterable) -> dict[int, Any]:
    """``{index: value}`` from values in order or from ``(index, value)`` pairs."""
    items = tuple(args_list)
    if items and all(isinstance(x, tuple) and len(x) == 2
                     and isinstance(x[0], (int, np.integer)) for x in items):
        out: dict[int, Any] = {}
        for index, value in items:
            if int(index) in out:
                raise InvocationError(f"kernel argument {index} given twice")
            out[int(index)] = value
        return out
    return dict(enumerate(items))


def _own_kernel(kernel, name: str) -> cl.Kernel:
    """A kernel instance private to one launcher (its arguments are its own)."""
    if isinstance(kernel, cl.Kernel):
        return cl.Kernel(kernel.program, kernel.function_name)
    if isinstance(kernel, cl.Program):
        kernels = kernel.all_kernels()
        if len(kernels) == 1:
            return kernels[0]
        names = [k.function_name for k in kernels]
        if name in names:
            return cl.Kernel(kernel, name)
        raise InvocationError(f"program holds kernels {names}: pass the cl.Kernel to "
                              f"launch, or name the launcher after one of them")
    raise InvocationError(f"expected a pyopencl Kernel or Program, got "
                          f"{type(kernel).__name__}")


def _converter(ptype) -> Callable[[str, Any], Any]:
    """A function checking/converting a parameter value of type *ptype*."""
    if isinstance(ptype, np.dtype) or (isinstance(ptype, type)
                                       and issubclass(ptype, np.generic)):
        scalar = np.dtype(ptype).type

        def convert(name, value):
            if not isinstance(value, (numbers.Number, np.generic)):
                raise InvocationError(f"parameter '{name}' must be a number "
                                      f"({np.dtype(scalar).name}), got "
                                      f"{type(value).__name__}")
            return scalar(value)
        return convert
    if isinstance(ptype, type):
        accepts_arrays = issubclass(ptype, (cla.Array, cl.MemoryObjectHolder))

        def convert(name, value):
            if not (isinstance(value, ptype)
                    or (accepts_arrays and isinstance(value, cla.Array))):
                raise InvocationError(f"parameter '{name}' must be a {ptype.__name__}, "
                                      f"got {type(value).__name__}")
            return _kernel_arg(value, f"parameter '{name}'")
        return convert
    raise InvocationError(f"parameter type {ptype!r} is neither a numpy scalar type nor "
                          "a class")

# }}}

