"""Kernel launchers: compiled OpenCL kernels with their arguments bound once,
enqueued again and again at the cost of little more than the enqueue itself.

A launcher is called with an optional queue and ``wait_for`` events and returns
the event of what it enqueued. When the queue has profiling enabled, the events
are kept until :attr:`LauncherI.statistics` folds the finished ones into
per-name timings. With the ``kernelcore.launchers`` logger at debug level, every
launch is logged on one line.

:func:`make_launcher` is the bridge from a kernelcore kernel: it types the kernel
from device arrays, binds every argument (global temporaries included) and
returns a list launcher that replays the kernel's device kernels in order.

Public names: LauncherI, KernelStatistics, OpenClKernelLauncher,
OpenClCopyLauncher, OpenClKernelListLauncher, OpenClParametrizedKernelLauncher,
OpenClIterativeKernelLauncher, OpenClKernelParameterGenerator,
OpenClKernelParameterYielder, make_launcher.
"""

from __future__ import annotations

import abc
import itertools
import logging
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pymbolic import evaluate

from kernelcore.diagnostic import InvocationError

logger = logging.getLogger("kernelcore.launchers")

_DEBUG = logging.DEBUG
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

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise InvocationError(f"a launcher needs a non-empty name, got {name!r}")
        self._name = name
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


def _resolve_queue(launcher: LauncherI, queue, default):
    if queue is None:
        queue = default
        if queue is None:
            raise InvocationError(f"launcher '{launcher.name}' has no default queue: "
                                  "pass queue=")
    return queue

# }}}


# {{{ kernel arguments

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


# {{{ one kernel

class OpenClKernelLauncher(LauncherI):
    """One OpenCL kernel with all its arguments fixed, enqueued with default or
    per-call queue and work sizes.

    *kernel* is a ``cl.Kernel`` or a ``cl.Program`` (holding one kernel, or one
    named *name*); the launcher uses its own instance of it. *args_list* gives the
    arguments in order, or as ``(index, value)`` pairs; pyopencl arrays, buffers,
    ``cl.LocalMemory``, numpy scalars and None are accepted (Python numbers are
    not: their C type is unknown). The launcher keeps the arrays alive.
    """

    def __init__(self, name: str, kernel, args_list: Iterable,
                 default_global_work_size: tuple[int, ...] | None = None,
                 default_local_work_size: tuple[int, ...] | None = None,
                 default_queue: cl.CommandQueue | None = None):
        super().__init__(name)
        self._kernel = _own_kernel(kernel, name)
        self._gws = None if default_global_work_size is None \
            else tuple(int(g) for g in default_global_work_size)
        self._lws = None if default_local_work_size is None \
            else tuple(int(g) for g in default_local_work_size)
        self._default_queue = default_queue
        self._args = _indexed(args_list)
        nargs = self._kernel.get_info(cl.kernel_info.NUM_ARGS)
        free = self._free_indices()
        given = set(self._args)
        bad = sorted(i for i in given | free if not 0 <= i < nargs)
        if bad:
            raise InvocationError(f"kernel '{self._kernel.function_name}' has {nargs} "
                                  f"argument(s); index(es) {bad} are out of range")
        if given & free:
            raise InvocationError(f"argument index(es) {sorted(given & free)} are both "
                                  "fixed and parameters")
        missing = sorted(set(range(nargs)) - given - free)
        if missing:
            raise InvocationError(f"kernel '{self._kernel.function_name}' misses "
                                  f"argument(s) {missing} (0-based) of {nargs}")
        self.set_args(self._args)

    def _free_indices(self) -> set[int]:
        return set()

    def set_args(self, args: Mapping[int, Any]) -> None:
        """Bind kernel arguments ``{index: value}`` (normally done once, at creation)."""
        for index, value in args.items():
            self._set_arg(index, value, f"argument {index}")
            self._args[index] = value

    def _set_arg(self, index: int, value, what: str) -> None:
        try:
            self._kernel.set_arg(index, _kernel_arg(value, what))
        except cl.Error as e:
            raise InvocationError(f"kernel '{self._kernel.function_name}': cannot set "
                                  f"{what} (index {index}): {e}") from None

    @property
    def kernel(self) -> cl.Kernel:
        """The kernel instance this launcher enqueues."""
        return self._kernel

    @property
    def args_list(self) -> tuple:
        """The fixed arguments as ``(index, value)`` pairs, in index order."""
        return tuple(sorted(self._args.items(), key=lambda kv: kv[0]))

    @property
    def default_queue(self) -> cl.CommandQueue | None:
        """The queue used when a call passes none."""
        return self._default_queue

    @property
    def default_global_work_size(self) -> tuple[int, ...] | None:
        """The global work size used when a call passes none."""
        return self._gws

    @property
    def default_local_work_size(self) -> tuple[int, ...] | None:
        """The local work size used when a call passes none (None: the driver's)."""
        return self._lws

    def global_size_configured(self) -> bool:
        return self._gws is not None

    def queue_configured(self) -> bool:
        """Whether a call needs no explicit queue."""
        return self._default_queue is not None

    def as_list_launcher(self, name: str) -> OpenClKernelListLauncher:
        """A list launcher holding only this launcher."""
        return OpenClKernelListLauncher(name, self, default_queue=self._default_queue)

    def __call__(self, queue: cl.CommandQueue | None = None, wait_for=None,
                 global_work_size: tuple[int, ...] | None = None,
                 local_work_size: tuple[int, ...] | None = None, **kwds) -> cl.Event:
        """Enqueue the kernel after *wait_for*; returns its event."""
        if kwds:
            raise InvocationError(f"launcher '{self._name}' takes no parameters, got "
                                  + ", ".join(sorted(kwds)))
        return self._enqueue(queue, wait_for, global_work_size, local_work_size)

    def _enqueue(self, queue, wait_for, gws, lws) -> cl.Event:
        if queue is None:
            queue = self._default_queue
            if queue is None:
                raise InvocationError(f"launcher '{self._name}' has no default queue: "
                                      "pass queue=")
        if gws is None:
            gws = self._gws
            if gws is None:
                raise InvocationError(f"launcher '{self._name}' has no default global "
                                      "work size: pass global_work_size=")
        if lws is None:
            lws = self._lws
        if queue is not self._queue:
            self._use_queue(queue)
        if logger.isEnabledFor(_DEBUG):
            logger.debug("launch %s: kernel %s, global %s, local %s", self._name,
                         self._kernel.function_name, gws, lws)
        if 0 in gws:
            return cl.enqueue_marker(queue, wait_for=wait_for)
        evt = cl.enqueue_nd_range_kernel(queue, self._kernel, gws, lws,
                                         wait_for=wait_for)
        if self._profiling:
            self._record(evt)
        return evt


class OpenClParametrizedKernelLauncher(OpenClKernelLauncher):
    """A kernel launcher whose arguments named in *parameters_map*
    (``{name: (index, type)}``) are given as keyword arguments on every call; the
    others are fixed by *args_list* (``(index, value)`` pairs). *type* is a numpy
    scalar type (values are converted to it) or a class values must be instances
    of (``cl.Buffer`` and ``pyopencl.array.Array`` accept both kinds of arrays).
    Other keywords are those of :class:`OpenClKernelLauncher`.
    """

    def __init__(self, parameters_map: Mapping[str, tuple[int, Any]], args_list: Iterable,
                 **kwds):
        self._parameters_map = {}
        self._params: dict[str, tuple[int, Callable]] = {}
        for pname, spec in dict(parameters_map).items():
            try:
                index, ptype = spec
            except (TypeError, ValueError):
                raise InvocationError(f"parameter '{pname}': expected (index, type), got "
                                      f"{spec!r}") from None
            self._parameters_map[pname] = (int(index), ptype)
            self._params[pname] = (int(index), _converter(ptype))
        indices = [i for i, _ in self._params.values()]
        if len(set(indices)) != len(indices):
            raise InvocationError(f"two parameters share a kernel argument index: "
                                  f"{self._parameters_map}")
        self._values: dict[str, Any] = {}
        super().__init__(args_list=args_list, **kwds)

    def _free_indices(self) -> set[int]:
        return {i for i, _ in self._params.values()}

    @property
    def parameters_map(self) -> dict[str, tuple[int, Any]]:
        """``{name: (argument index, type)}`` of the per-call parameters."""
        return dict(self._parameters_map)

    @property
    def parameters(self) -> dict[str, Any]:
        """``{name: type}`` of the per-call parameters."""
        return {n: t for n, (_, t) in self._parameters_map.items()}

    def _set_parameters(self, values: Mapping[str, Any], expected) -> None:
        if len(values) != len(expected) or not all(n in expected for n in values):
            missing = sorted(set(expected) - set(values))
            unknown = sorted(set(values) - set(expected))
            parts = []
            if missing:
                parts.append("missing parameter(s) " + ", ".join(missing))
            if unknown:
                parts.append("unknown parameter(s) " + ", ".join(unknown))
            raise InvocationError(f"launcher '{self._name}': {'; '.join(parts)}; it "
                                  "takes " + (", ".join(sorted(expected)) or "none"))
        params = self._params
        for pname, value in values.items():
            index, convert = params[pname]
            self._set_arg(index, convert(pname, value), f"parameter '{pname}'")
            self._values[pname] = value  # keeps the bound array alive

    def __call__(self, queue: cl.CommandQueue | None = None, wait_for=None,
                 global_work_size: tuple[int, ...] | None = None,
                 local_work_size: tuple[int, ...] | None = None, **kwds) -> cl.Event:
        """Bind the parameters given as keywords, then enqueue; returns the event."""
        self._set_parameters(kwds, self._params)
        return self._enqueue(queue, wait_for, global_work_size, local_work_size)

# }}}


# {{{ iterated parameters

class OpenClKernelParameterGenerator(abc.ABC):
    """Source of the values of one iterated kernel parameter."""

    @abc.abstractmethod
    def new_generator(self) -> Iterator:
        """A fresh iterator over the values (one per launch round)."""


class OpenClKernelParameterYielder(OpenClKernelParameterGenerator):
    """Parameter values from *fn*, a no-argument callable returning an iterable
    (e.g. ``lambda: range(10)``)."""

    def __init__(self, fn: Callable[[], Iterable]):
        if not callable(fn):
            raise InvocationError(f"expected a callable returning an iterator, got "
                                  f"{type(fn).__name__}")
        self._fn = fn

    def new_generator(self) -> Iterator:
        return iter(self._fn())


class OpenClIterativeKernelLauncher(OpenClParametrizedKernelLauncher):
    """A parametrized launcher that enqueues its kernel once per combination of
    the values of its iterated parameters.

    *iterated_parameters* maps parameter names (which must also be in
    *parameters_map*) to :class:`OpenClKernelParameterGenerator` objects or to
    no-argument callables returning iterables. Combinations run as nested loops
    in the mapping's order, the last name varying fastest. The remaining
    parameters are keyword arguments of each call, as for
    :class:`OpenClParametrizedKernelLauncher`.
    """

    def __init__(self, parameters_map: Mapping[str, tuple[int, Any]], args_list: Iterable,
                 iterated_parameters: Mapping[str, Any], **kwds):
        super().__init__(parameters_map, args_list, **kwds)
        self._iterated: dict[str, OpenClKernelParameterGenerator] = {}
        for pname, gen in dict(iterated_parameters).items():
            if pname not in self._params:
                raise InvocationError(f"iterated parameter '{pname}' is not in "
                                      "parameters_map")
            if not isinstance(gen, OpenClKernelParameterGenerator):
                gen = OpenClKernelParameterYielder(gen)
            self._iterated[pname] = gen
        self._fixed = {n: p for n, p in self._params.items() if n not in self._iterated}

    @property
    def iterated_parameters(self) -> dict[str, OpenClKernelParameterGenerator]:
        """``{name: generator}`` of the iterated parameters."""
        return dict(self._iterated)

    def iter_parameters(self) -> Iterator[dict[str, Any]]:
        """The iterated parameter values of each launch of one call."""
        names = list(self._iterated)
        for combo in itertools.product(*(g.new_generator()
                                         for g in self._iterated.values())):
            yield dict(zip(names, combo))

    def __call__(self, queue: cl.CommandQueue | None = None, wait_for=None,
                 enqueue_barrier: bool = True,
                 global_work_size: tuple[int, ...] | None = None,
                 local_work_size: tuple[int, ...] | None = None, **kwds):
        """Enqueue one launch per iterated value combination, each after *wait_for*.

        Returns an event completing after all of them (on an out-of-order queue a
        barrier), or None when *enqueue_barrier* is false.
        """
        queue = _resolve_queue(self, queue, self._default_queue)
        self._set_parameters(kwds, self._fixed)
        params = self._params
        last = None
        for values in self.iter_parameters():
            for pname, value in values.items():
                index, convert = params[pname]
                self._set_arg(index, convert(pname, value), f"parameter '{pname}'")
                self._values[pname] = value
            last = self._enqueue(queue, wait_for, global_work_size, local_work_size)
        if not enqueue_barrier:
            return None
        if last is None:
            return cl.enqueue_marker(queue, wait_for=wait_for)
        if queue.properties & _OUT_OF_ORDER:
            return cl.enqueue_barrier(queue)
        return last

# }}}


# {{{ copies

def _device_side(ary, what: str) -> tuple[cl.MemoryObjectHolder, int, int]:
    """(buffer, byte offset, byte size) of a device array or buffer."""
    if isinstance(ary, cla.Array):
        if not ary.flags.forc:
            raise InvocationError(f"{what} is a non-contiguous pyopencl array")
        return ary.base_data, ary.offset, ary.nbytes
    if isinstance(ary, cl.MemoryObjectHolder):
        return ary, 0, ary.size
    raise InvocationError(f"{what} must be a pyopencl array or buffer, got "
                          f"{type(ary).__name__}")


def _host_side(ary, what: str) -> np.ndarray:
    if not isinstance(ary, np.ndarray):
        raise InvocationError(f"{what} must be a numpy array, got {type(ary).__name__}")
    if not (ary.flags.c_contiguous or ary.flags.f_contiguous):
        raise InvocationError(f"{what} is a non-contiguous numpy array")
    return ary


class OpenClCopyLauncher(LauncherI):
    """A copy host->device, device->host or device->device (decided by the types
    of *src* and *dst*: numpy arrays are host data; pyopencl arrays and buffers
    are device data). Offsets are in bytes, added to those of array views. A
    device->device copy moves *byte_count* bytes (default: all of *src*).

    Copies do not block unless *blocking*: host data must not be touched before
    the returned event completes.
    """

    def __init__(self, name: str, src, dst, src_device_offset: int | None = None,
                 dst_device_offset: int | None = None, byte_count: int | None = None,
                 blocking: bool = False, default_queue: cl.CommandQueue | None = None):
        super().__init__(name)
        self._src, self._dst = src, dst
        self._default_queue = default_queue
        src_host, dst_host = isinstance(src, np.ndarray), isinstance(dst, np.ndarray)
        kw: dict[str, Any] = {}
        if src_host and dst_host:
            raise InvocationError(f"copy '{name}': both ends are host arrays")
        if src_host:
            self.direction = "host_to_device"
            host = _host_side(src, f"copy '{name}' source")
            buf, off, size = _device_side(dst, f"copy '{name}' destination")
            off += dst_device_offset or 0
            if host.nbytes > size - (dst_device_offset or 0):
                raise InvocationError(f"copy '{name}': {host.nbytes} bytes do not fit "
                                      "in the destination")
            self._copy_args = (buf, host)
            kw["dst_offset"] = off
            kw["is_blocking"] = blocking
        elif dst_host:
            self.direction = "device_to_host"
            host = _host_side(dst, f"copy '{name}' destination")
            buf, off, size = _device_side(src, f"copy '{name}' source")
            off += src_device_offset or 0
            if host.nbytes > size - (src_device_offset or 0):
                raise InvocationError(f"copy '{name}': the destination wants "
                                      f"{host.nbytes} bytes, the source has fewer")
            self._copy_args = (host, buf)
            kw["src_offset"] = off
            kw["is_blocking"] = blocking
        else:
            self.direction = "device_to_device"
            sbuf, soff, ssize = _device_side(src, f"copy '{name}' source")
            dbuf, doff, dsize = _device_side(dst, f"copy '{name}' destination")
            ssize -= src_device_offset or 0
            dsize -= dst_device_offset or 0
            count = ssize if byte_count is None else int(byte_count)
            if count > ssize or count > dsize:
                raise InvocationError(f"copy '{name}': {count} bytes exceed the source "
                                      f"({ssize}) or destination ({dsize})")
            self._copy_args = (dbuf, sbuf)
            kw.update(src_offset=soff + (src_device_offset or 0),
                      dst_offset=doff + (dst_device_offset or 0), byte_count=count)
        self._copy_kwargs = kw

    def global_size_configured(self) -> bool:
        return True

    def __call__(self, queue: cl.CommandQueue | None = None, wait_for=None,
                 **kwds) -> cl.Event:
        """Enqueue the copy after *wait_for*; returns its event."""
        if kwds:
            raise InvocationError(f"copy '{self._name}' takes no parameters, got "
                                  + ", ".join(sorted(kwds)))
        queue = _resolve_queue(self, queue, self._default_queue)
        if queue is not self._queue:
            self._use_queue(queue)
        if logger.isEnabledFor(_DEBUG):
            logger.debug("copy %s: %s", self._name, self.direction)
        evt = cl.enqueue_copy(queue, *self._copy_args, wait_for=wait_for,
                              **self._copy_kwargs)
        if self._profiling:
            self._record(evt)
        return evt

# }}}


# {{{ lists

class OpenClKernelListLauncher(LauncherI):
    """Launchers (kernels and copies) run in order on one queue.

    Every kernel launcher in the list must have a default global work size; the
    queue of a call (or *default_queue*) is used for all of them, not theirs.
    Adding a list launcher adds its launchers (the list is flattened).
    """

    def __init__(self, name: str, *launchers: LauncherI | None,
                 default_queue: cl.CommandQueue | None = None):
        super().__init__(name)
        self._launchers: list[LauncherI] = []
        self._default_queue = default_queue
        self.push_kernels(*launchers)

    @property
    def launchers(self) -> tuple[LauncherI, ...]:
        """The launchers, in the order they run."""
        return tuple(self._launchers)

    @property
    def default_queue(self) -> cl.CommandQueue | None:
        """The queue used when a call passes none."""
        return self._default_queue

    def __len__(self) -> int:
        return len(self._launchers)

    def push_kernels(self, *launchers: LauncherI | None) -> OpenClKernelListLauncher:
        """Append launchers (None is skipped; list launchers are flattened)."""
        for launcher in launchers:
            if launcher is None:
                continue
            if isinstance(launcher, OpenClKernelListLauncher):
                self._launchers.extend(launcher._launchers)
            elif isinstance(launcher, LauncherI):
                if not launcher.global_size_configured():
                    raise InvocationError(f"launcher '{launcher.name}' has no default "
                                          "global work size, which a list launcher "
                                          "needs")
                self._launchers.append(launcher)
            else:
                raise InvocationError(f"cannot add a {type(launcher).__name__} to list "
                                      f"launcher '{self._name}'")
        return self

    def __iadd__(self, launcher: LauncherI) -> OpenClKernelListLauncher:
        return self.push_kernels(launcher)

    def _push_copy(self, direction: str, name: str, src, dst, **kw):
        copy = OpenClCopyLauncher(name, src, dst, **kw)
        if copy.direction != direction:
            raise InvocationError(f"copy '{name}' is {copy.direction.replace('_', ' ')}, "
                                  f"not {direction.replace('_', ' ')}")
        return self.push_kernels(copy)

    def push_copy_host_to_device(self, name: str, src: np.ndarray, dst,
                                 dst_device_offset: int | None = None,
                                 blocking: bool = False) -> OpenClKernelListLauncher:
        """Append a copy of host array *src* into device array or buffer *dst*."""
        return self._push_copy("host_to_device", name, src, dst,
                               dst_device_offset=dst_device_offset, blocking=blocking)

    def push_copy_device_to_host(self, name: str, src, dst: np.ndarray,
                                 src_device_offset: int | None = None,
                                 blocking: bool = False) -> OpenClKernelListLauncher:
        """Append a copy of device array or buffer *src* into host array *dst*."""
        return self._push_copy("device_to_host", name, src, dst,
                               src_device_offset=src_device_offset, blocking=blocking)

    def push_copy_device_to_device(self, name: str, src, dst,
                                   src_device_offset: int | None = None,
                                   dst_device_offset: int | None = None,
                                   byte_count: int | None = None
                                   ) -> OpenClKernelListLauncher:
        """Append a copy between device arrays or buffers."""
        return self._push_copy("device_to_device", name, src, dst,
                               src_device_offset=src_device_offset,
                               dst_device_offset=dst_device_offset, byte_count=byte_count)

    @property
    def parameters(self) -> dict[str, Any]:
        """``{name: type}`` of the parameters of the parametrized launchers."""
        out: dict[str, Any] = {}
        for launcher in self._launchers:
            out.update(getattr(launcher, "parameters", {}))
        return out

    def global_size_configured(self) -> bool:
        return True

    def _unique(self) -> list[LauncherI]:
        seen: dict[int, LauncherI] = {}
        for launcher in self._launchers:
            seen.setdefault(id(launcher), launcher)
        return list(seen.values())

    @property
    def events(self) -> tuple[cl.Event, ...]:
        """Pending profiling events of all launchers."""
        return tuple(e for launcher in self._unique() for e in launcher.events)

    @property
    def statistics(self) -> dict[str, KernelStatistics]:
        """Timings per launcher name (launchers sharing a name are combined)."""
        return _merge_statistics(launcher.statistics for launcher in self._unique())

    def __call__(self, queue: cl.CommandQueue | None = None, wait_for=None,
                 **kwds) -> cl.Event:
        """Enqueue all launchers in order, the first after *wait_for*; returns the
        last event (a marker's when the list is empty). Keywords are parameters of
        the parametrized launchers, each getting those it takes."""
        if queue is None:
            queue = self._default_queue
            if queue is None:
                raise InvocationError(f"list launcher '{self._name}' has no default "
                                      "queue: pass queue=")
        if kwds:
            return self._call_with_parameters(queue, wait_for, kwds)
        if queue is not self._queue:
            self._use_queue(queue)
        evt = None
        if self._in_order:
            for launcher in self._launchers:
                evt = launcher(queue, wait_for)
                wait_for = None
        else:
            for launcher in self._launchers:
                evt = launcher(queue, wait_for)
                wait_for = None if evt is None else [evt]
        if evt is None:
            evt = cl.enqueue_marker(queue, wait_for=wait_for)
        return evt

    def _call_with_parameters(self, queue, wait_for, kwds) -> cl.Event:
        unknown = set(kwds) - set(self.parameters)
        if unknown:
            raise InvocationError(f"list launcher '{self._name}': unknown parameter(s) "
                                  + ", ".join(sorted(unknown)))
        in_order = not queue.properties & _OUT_OF_ORDER
        evt = None
        for launcher in self._launchers:
            names = getattr(launcher, "parameters", {})
            evt = launcher(queue, wait_for, **{n: kwds[n] for n in names if n in kwds})
            wait_for = None if in_order or evt is None else [evt]
        if evt is None:
            evt = cl.enqueue_marker(queue, wait_for=wait_for)
        return evt

# }}}


# {{{ kernelcore kernels

def _solve_extent(param: str, expr, extent: int) -> int | None:
    """The value of *param* making *expr* equal *extent*, when *expr* is linear in
    *param* alone."""
    from kernelcore.ir.expr import get_dependencies
    if get_dependencies(expr) != {param}:
        return None
    d = evaluate(expr, {param: 0})
    c = evaluate(expr, {param: 1}) - d
    if c == 0 or evaluate(expr, {param: 2}) != d + 2 * c:
        return None
    return (extent - d) // c


def make_launcher(knl, queue: cl.CommandQueue | None = None,
                  **arrays_and_params: Any) -> OpenClKernelListLauncher:
    """A list launcher replaying *knl* on the given device arrays.

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
    from kernelcore.ir.data import ArrayArg, ValueArg
    from kernelcore.ir.domain import set_to_cond_expr
    from kernelcore.runtime.device import default_queue
    from kernelcore.runtime.invoke import _check, get_executor

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
        params[v.name] = np.dtype(v.dtype).type(value)
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
    launchers = []
    for dk, clk in zip(ex.code.kernels, cl_kernels):
        gsize = tuple(max(0, int(evaluate(g, env))) * ls
                      for g, ls in zip(dk.num_groups, dk.local_size))
        launchers.append(OpenClKernelLauncher(
            dk.name, clk, args, default_global_work_size=gsize,
            default_local_work_size=tuple(dk.local_size), default_queue=queue))
    return OpenClKernelListLauncher(knl.name, *launchers, default_queue=queue)

# }}}
