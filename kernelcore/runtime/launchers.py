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

The base classes and hooks live in :mod:`kernelcore.runtime.launcher_base`
(re-exported here), :func:`make_launcher` in
:mod:`kernelcore.runtime.make_launcher` (``kernelcore.make_launcher``).

Public names: LauncherI, HostLauncherI, OpenClKernelLauncherI, KernelStatistics,
profile_kernel, should_profile_kernel, trace_kernel, should_trace_kernel,
OpenClKernelLauncher,
OpenClCopyLauncher, OpenClKernelListLauncher, OpenClParametrizedKernelLauncher,
OpenClIterativeKernelLauncher, OpenClKernelParameterGenerator,
OpenClKernelParameterYielder.
"""

from __future__ import annotations

import abc
import itertools
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pyopencl as cl

from kernelcore.diagnostic import InvocationError

if TYPE_CHECKING:
    import pyopencl.array as cla
from kernelcore.runtime.copy_launcher import OpenClCopyLauncher
from kernelcore.runtime.launcher_base import (
    HostLauncherI,
    KernelStatistics,
    LauncherI,
    OpenClKernelLauncherI,
    _converter,
    _indexed,
    _kernel_arg,
    _merge_statistics,
    _own_kernel,
    _resolve_queue,
    profile_kernel,
    set_kernel_argument,
    should_profile_kernel,
    should_trace_kernel,
    trace_kernel,
)

logger = logging.getLogger("kernelcore.launchers")

_DEBUG = logging.DEBUG
_OUT_OF_ORDER = cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE


# {{{ one kernel

class OpenClKernelLauncher(OpenClKernelLauncherI):
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
                 default_queue: cl.CommandQueue | None = None, **kwds: Any):
        super().__init__(name, **kwds)
        self._kernel = _own_kernel(kernel, name)
        self._gws = None if default_global_work_size is None \
            else tuple(int(g) for g in default_global_work_size)
        self._lws = None if default_local_work_size is None \
            else tuple(int(g) for g in default_local_work_size)
        self._default_queue = default_queue
        self._args = _indexed(args_list)
        nargs: int = self._kernel.get_info(cl.kernel_info.NUM_ARGS)  # type: ignore[assignment]
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
            set_kernel_argument(self._kernel, index, _kernel_arg(value, what))
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
        self._after_enqueue(evt)
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

    def __call__(self, queue: cl.CommandQueue | None = None,  # type: ignore[override]
                 wait_for=None, enqueue_barrier: bool = True,
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


# {{{ lists

class OpenClKernelListLauncher(LauncherI):
    """Launchers (kernels and copies) run in order on one queue.

    Every kernel launcher in the list must have a default global work size; the
    queue of a call (or *default_queue*) is used for all of them, not theirs.
    Adding a list launcher adds its launchers (the list is flattened).
    """

    def __init__(self, name: str, *launchers: LauncherI | None,
                 default_queue: cl.CommandQueue | None = None, profiler: Any = None,
                 **kwds: Any):
        super().__init__(name, profiler=profiler, **kwds)
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

    def push_copy_host_to_device(self, name: str, src: np.ndarray,
                                 dst: cla.Array | cl.MemoryObjectHolder,
                                 dst_device_offset: int | None = None,
                                 blocking: bool = False) -> OpenClKernelListLauncher:
        """Append a copy of host array *src* into device array or buffer *dst*."""
        return self._push_copy("host_to_device", name, src, dst,
                               dst_device_offset=dst_device_offset, blocking=blocking)

    def push_copy_device_to_host(self, name: str, src: cla.Array | cl.MemoryObjectHolder,
                                 dst: np.ndarray,
                                 src_device_offset: int | None = None,
                                 blocking: bool = False) -> OpenClKernelListLauncher:
        """Append a copy of device array or buffer *src* into host array *dst*."""
        return self._push_copy("device_to_host", name, src, dst,
                               src_device_offset=src_device_offset, blocking=blocking)

    def push_copy_host_device(self, varname: str,
                              src: np.ndarray | cla.Array | cl.MemoryObjectHolder,
                              dst: np.ndarray | cla.Array | cl.MemoryObjectHolder,
                              src_device_offset: int | None = None,
                              dst_device_offset: int | None = None,
                              byte_count: int | None = None) -> OpenClKernelListLauncher:
        """Append a copy in whichever direction the types of *src* and *dst*
        say (numpy arrays are host data, pyopencl arrays and buffers device
        data)."""
        kw: dict[str, Any] = {}
        if src_device_offset is not None:
            kw["src_device_offset"] = src_device_offset
        if dst_device_offset is not None:
            kw["dst_device_offset"] = dst_device_offset
        if byte_count is not None:
            kw["byte_count"] = byte_count
        return self.push_kernels(OpenClCopyLauncher(varname, src, dst, **kw))

    def push_copy_device_to_device(self, name: str, src: cla.Array | cl.MemoryObjectHolder,
                                   dst: cla.Array | cl.MemoryObjectHolder,
                                   src_device_offset: int | None = None,
                                   dst_device_offset: int | None = None,
                                   byte_count: int | None = None
                                   ) -> OpenClKernelListLauncher:
        """Append a copy between device arrays or buffers."""
        return self._push_copy("device_to_device", name, src, dst,
                               src_device_offset=src_device_offset,
                               dst_device_offset=dst_device_offset, byte_count=byte_count)

    @property
    def parameters(self) -> dict[str, tuple[Any, frozenset[str]]]:
        """``{name: (type, names of the launchers taking it)}`` of the
        parameters of the parametrized launchers (the specification's
        "parameter names, types and operator names")."""
        out: dict[str, tuple[Any, frozenset[str]]] = {}
        for launcher in self._launchers:
            for name, ptype in getattr(launcher, "parameters", {}).items():
                users = out[name][1] if name in out else frozenset()
                out[name] = (ptype, users | {launcher.name})
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
                 **kwds) -> cl.Event | None:
        """Enqueue all launchers in order, the first after *wait_for*; returns the
        last event (an empty list waits for *wait_for* itself and returns None).
        Keywords are parameters of the parametrized launchers, each getting those
        it takes."""
        if not self._launchers:
            if wait_for:
                cl.wait_for_events(list(wait_for))
            return None
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


__all__ = ["LauncherI", "HostLauncherI", "OpenClKernelLauncherI", "KernelStatistics",
           "OpenClKernelLauncher", "OpenClCopyLauncher", "OpenClKernelListLauncher",
           "OpenClParametrizedKernelLauncher", "OpenClIterativeKernelLauncher",
           "OpenClKernelParameterGenerator", "OpenClKernelParameterYielder",
           "profile_kernel", "should_profile_kernel", "trace_kernel",
           "should_trace_kernel"]
