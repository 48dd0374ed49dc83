"""Launching planned kernels cheaply: result arrays from shape templates,
and kernels whose grids, global temporaries and argument slots are worked out
once (on a first run, or from a disk recipe).

lazyarray's arrays keep no events: all their work goes to one in-order
queue, which orders it. Their event list is an empty one that ignores what
pyopencl adds (see :data:`NO_EVENTS`), so threads sharing an array never
share a list of events, and the host copies of ``.get()`` (which pyopencl's
transfer events hold) are not kept alive by the array.

Several threads may run one :class:`BoundLaunch` at once: setting its
kernels' arguments and enqueueing them (with its global temporaries) is
done under its lock.

Public names: BoundLaunch, new_array, template_of, with_data, kernel_arguments, NO_EVENTS.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

# (pyopencl imports its invoker module, with pytools' persistent dict and
# platformdirs, when the first cl.Kernel is made: imported with lazyarray,
# so that a program's first call does not wait for these imports)
import pyopencl.invoker

import kernelcore as lp
from kernelcore import (
    KeyedLocks,
    compile_program,
    made_once,
    memory_pool,
    set_kernel_argument,
)
from lazyarray.errors import device_memory_error
from lazyarray.graph import Node
from lazyarray.run.cache import Recipe
from lazyarray.run.together import member_kernels, recipe_name

if TYPE_CHECKING:
    import numpy.typing as npt


class _NoEvents(list):
    """An event list that stays empty (see the module documentation)."""

    def append(self, event) -> None:
        pass

    def extend(self, events) -> None:
        pass


#: the event list of every array lazyarray makes
NO_EVENTS = _NoEvents()
_TEMPLATES: dict[tuple, cla.Array] = {}
_TEMPLATE_LOCKS = KeyedLocks()
#: the most array templates kept (one per queue, shape and dtype met)
TEMPLATES_KEPT = 4096


def kernel_arguments(args: dict, out: cla.Array | np.ndarray) -> dict:
    """The arguments of a kernel call: *args* by name and ``out``, 0-d arrays
    as one-element arrays (kernels index them ``[0]``), scalars as they are."""
    flat = {name: a if not isinstance(a, cla.Array) or a.shape else a.reshape(1)
            for name, a in args.items()}
    flat["out"] = out if out.shape else out.reshape(1)
    return flat


def template_of(queue: cl.CommandQueue, shape: tuple, dtype: npt.DTypeLike) -> cla.Array:
    """The array that arrays of *shape* and *dtype* on *queue* are made from
    (copying one is ten times cheaper than constructing an array)."""
    def make() -> cla.Array:
        # (with the pool as allocator: pyopencl's own operations on these
        # arrays, an eager array context's, allocate from it too)
        pool = memory_pool(queue)
        template = cla.Array(queue, shape, dtype, data=pool(1), allocator=pool)
        template.events = NO_EVENTS
        _ = template.flags  # (computed once, shared by the arrays made from it)
        return template

    return made_once(_TEMPLATES, (queue.int_ptr, shape, np.dtype(dtype)), make,
                     _TEMPLATE_LOCKS, TEMPLATES_KEPT)


def new_array(queue: cl.CommandQueue, shape: tuple, dtype: npt.DTypeLike) -> cla.Array:
    """An uninitialized C-order array from *queue*'s memory pool (without
    events)."""
    template = template_of(queue, shape, dtype)
    try:
        data = memory_pool(queue)(template.nbytes or 1)
    except cl.Error as error:
        raise device_memory_error(error, template.nbytes, queue.device) from None
    return with_data(template, data)


def with_data(template: cla.Array, data: cl.MemoryObjectHolder) -> cla.Array:
    """A copy of the array *template* on the buffer *data* (a third of the
    cost of ``template._new_with_changes(data, 0)``, which checks and
    recomputes what the template knows: shape, strides, size, flags)."""
    fields = template.__dict__.copy()
    fields["base_data"] = data
    array = object.__new__(type(template))
    array.__dict__ = fields
    return array


class BoundLaunch:
    """A planned kernel's device kernels with their grids, global temporaries
    and argument slots worked out once (on a first run, or from a disk
    recipe), so that a run only allocates the result, sets the input and
    result buffers and enqueues."""

    def __init__(self, recipe: Recipe, kernels: list, queue, out_template: cla.Array):
        self.recipe = recipe
        self.template = out_template
        self.pool = memory_pool(queue)
        self._lock = threading.Lock()
        #: global temporaries (the kernels refer to them)
        self.kept: dict[int, cla.Array] = {}
        self.launches = []
        for kernel, (_, gsize, lsize, arguments) in zip(kernels, recipe.launches):
            slots = []
            for k, spec in enumerate(arguments):
                if spec[0] in ("array", "scalar"):
                    slots.append((k, spec[1], spec[0] == "scalar"))
                elif spec[0] == "temporary":
                    temp = self.kept.get(spec[1])
                    if temp is None:
                        try:
                            temp = cla.empty(queue, (max(spec[2], 1),), np.uint8)
                        except cl.Error as error:
                            raise device_memory_error(error, spec[2], queue.device) from None
                        self.kept[spec[1]] = temp
                    kernel.set_arg(k, temp.base_data)
                else:
                    kernel.set_arg(k, spec[1])
            self.launches.append((kernel, gsize, lsize, tuple(slots)))

    @classmethod
    def from_run(cls, knl: lp.LoopKernel | lp.TranslationUnit, queue: cl.CommandQueue,
                 args: dict, out: cla.Array) -> BoundLaunch:
        """Bound from what kernelcore says a run of *knl* on these arrays
        launches (:func:`kernelcore.compile_launches`)."""
        compiled = lp.compile_launches(knl, queue, kernel_arguments(args, out))
        # (a kernel's program may be several built as one: its name there)
        recipe = Recipe(compiled.source, tuple(
            (recipe_name(launch.function_name), launch.global_size, launch.local_size,
             launch.slots) for launch in compiled.launches))
        return cls(recipe, [cl.Kernel(launch.program, launch.function_name)
                            for launch in compiled.launches],
                   queue, _result_template(queue, out.shape, out.dtype))

    @classmethod
    def from_recipe(cls, recipe: Recipe, queue: cl.CommandQueue, node: Node) -> BoundLaunch:
        """Bound from a stored recipe: its source built (a binary cache
        lookup after the first process), or the program it was built in with
        others (:mod:`lazyarray.run.together`)."""
        names = [name for name, *_ in recipe.launches]
        kernels = member_kernels(queue.context, recipe.source, names)
        if kernels is None:
            program = compile_program(queue.context, recipe.source)
            kernels = [cl.Kernel(program, name) for name in names]
        return cls(recipe, kernels, queue, _result_template(queue, node.shape, node.dtype))

    def at_positions(self, positions: dict[str, int | tuple]) -> tuple | None:
        """The argument slots of each launch with the inputs named in
        *positions* given by position (for :meth:`run_at`): an array input
        by its index in the run's list of values (``-1`` for the result), a
        scalar by ``("param", j)`` (the run's *j*-th parameter) or
        ``("value", v)`` (always *v*); None when a slot's input is not in
        *positions* or is not of its kind."""
        launches = []
        for _, _, _, slots in self.launches:
            placed: list[tuple[int, int | tuple]] = []
            for k, name, scalar in slots:
                if name == "out":
                    placed.append((k, -1))
                    continue
                where = positions.get(name)
                if where is None or scalar != isinstance(where, tuple):
                    return None
                placed.append((k, where))
            launches.append(tuple(placed))
        return tuple(launches)

    def run_at(self, queue: cl.CommandQueue, values: list, slots: tuple,
               params: list | tuple = ()) -> cla.Array:
        """The result of a run whose array inputs are *values* and scalar
        parameters *params*, placed by *slots* (from :meth:`at_positions`):
        what ``__call__`` does, without names."""
        try:
            data = self.pool(self.template.nbytes or 1)
        except cl.Error as error:
            raise device_memory_error(error, self.template.nbytes, queue.device) from None
        with self._lock:
            for (kernel, gsize, lsize, _), placed in zip(self.launches, slots):
                for k, where in placed:
                    if where.__class__ is int:
                        kernel.set_arg(k, data if where < 0 else values[where].base_data)
                    else:
                        set_kernel_argument(kernel, k, params[where[1]]
                                            if where[0] == "param" else where[1])
                cl.enqueue_nd_range_kernel(queue, kernel, gsize, lsize)
        return with_data(self.template, data)

    def __call__(self, queue, args: dict, events: list | None = None) -> cla.Array:
        """The result of a run on *args* (by name); the launches' events are
        added to *events* if given."""
        # the result's array is made after the launches: the device starts sooner
        try:
            data = self.pool(self.template.nbytes or 1)
        except cl.Error as error:
            raise device_memory_error(error, self.template.nbytes, queue.device) from None
        with self._lock:
            for kernel, gsize, lsize, slots in self.launches:
                for k, name, scalar in slots:
                    if scalar:
                        set_kernel_argument(kernel, k, args[name])
                    else:
                        kernel.set_arg(k, data if name == "out" else args[name].base_data)
                event = cl.enqueue_nd_range_kernel(queue, kernel, gsize, lsize)
                if events is not None:
                    events.append(event)
        return with_data(self.template, data)


def _result_template(queue, shape: tuple, dtype) -> cla.Array:
    """The template of results of *shape* (0-d results are one element)."""
    template = template_of(queue, shape or (1,), dtype)
    return template if shape else template.reshape(())
