"""A jitted function's traced program and how a call runs it: the steps
planned from the trace with each input's source (an array argument, a
scalar argument, an earlier step, a constant), the arrays the function
assigned into, and the runs: the common call of array arguments by its
bound launches directly, any other by named arguments.

Public names: Program, run_simple, run_program, fast_data,
device_data, changed_arguments, is_array, traced_scalar, SINGLE.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

import lazyarray.run as _run
from lazyarray.deferred import is_cl_array
from lazyarray.graph import Input
from lazyarray.handle import LazyArray, asarray
from lazyarray.mapper import is_kind
from lazyarray.pytree import flatten, unflatten
from lazyarray.values import on_device

if TYPE_CHECKING:
    import pyopencl.array as cla

_modules = sys.modules

#: the structure of a result that is a single array
SINGLE = flatten(0)[1]


@dataclass(frozen=True)
class Program:
    """Planned kernels: each step's inputs and each output are a source,
    ``("arg", k)`` (array argument k), ``("param", k)`` (scalar argument k),
    ``("step", j)``, ``("const", array)`` or ``("value", scalar)``."""

    steps: tuple          # of (Step, ((argument name, source), ...))
    outputs: tuple        # of sources
    structure: tuple      # of the result
    params: tuple         # the Param of each scalar argument
    #: ``(k, source)``: array argument k's new value (the function assigned into it)
    written: tuple = ()
    #: the number of array arguments
    arrays: int = 0
    #: what gives the values of the parameters after the scalar arguments,
    #: run at every call (see :func:`lazyarray.tracing.per_call_arguments`)
    supplies: tuple = ()
    #: by queue (``int_ptr``): the launches of :attr:`simple` with their
    #: arguments by position (see :func:`run_simple`), ``()`` where some
    #: step has none
    direct: dict = field(default_factory=dict, compare=False, repr=False)
    #: the function's name and when its trace began (see lazyarray.run.progress)
    name: str = field(default="", compare=False, repr=False)
    started: float = field(default=0.0, compare=False, repr=False)

    def label(self) -> str:
        """The work the program does, in the progress line of its first run."""
        return f"{self.name}() (la.jit)"

    @functools.cached_property
    def simple(self) -> tuple | None:
        """Where every step reads only array arguments and earlier steps, every
        result is a step's value, and any array argument the function assigned
        into gets a step's value (the common call: a time step ``u[1:-1] = ...;
        return u``, a training step returning new weights and a loss): the
        steps, each with its sources as positions in the list of the array
        arguments followed by the steps' values, a constant scalar as
        ``("value", v)``. Else None."""
        if not (self.steps and not self.supplies
                and all(kind == "step" for _, (kind, _) in self.written)
                and all(kind == "step" for kind, _ in self.outputs)
                and all(kind in ("arg", "step", "value") for _, sources in self.steps
                        for _, (kind, _) in sources)):
            return None
        return tuple((step, tuple((name, what if kind == "arg" else ("value", what)
                                   if kind == "value" else self.arrays + what)
                                  for name, (kind, what) in sources))
                     for step, sources in self.steps)


def is_array(x) -> bool:
    """Whether *x* is an array argument (a lazy, NumPy or pyopencl array)."""
    return isinstance(x, (LazyArray, np.ndarray)) or is_cl_array(x)


def traced_scalar(leaf) -> bool:
    """Whether *leaf* is a Python number that a trace takes as a value (bools,
    NumPy scalars and integers beyond int64 are part of the signature)."""
    return isinstance(leaf, (int, float, complex)) and not isinstance(leaf, (bool, np.generic)) \
        and not (isinstance(leaf, int) and not -_INT64_END <= leaf < _INT64_END)


#: integers from -_INT64_END up to it (excluded) are traced as int64 values
_INT64_END = 1 << 63


def changed_arguments(handles: list, placeholders: list) -> list:
    """``(k, node)`` for each array argument k that the traced function
    assigned into (``u[1:-1] = ...``, ``u += 1``) through its handle: its new
    value, which every call writes back into the caller's array, as NumPy
    would have changed it."""
    return [(k, h.node) for k, (h, p) in enumerate(zip(handles, placeholders))
            if h.node is not p]


def _write_back(array, value: cla.Array) -> None:
    """Give the caller's argument *array* its new *value* (as NumPy's in-place
    writes would have changed it)."""
    if isinstance(array, LazyArray):
        array._assign(Input(value, owned=True))
    elif is_cl_array(array):
        array.set(value.get(queue=_run.default_queue()), queue=_run.default_queue())
    else:
        array[...] = value.get(queue=_run.default_queue())


def fast_data(x) -> cla.Array | None:
    """The device data of a computed lazy array (a host array's device copy)
    or a pyopencl array, else None."""
    if type(x) is LazyArray or isinstance(x, LazyArray):
        node = x.node
        if is_kind(node, "input"):
            return node.data
        return on_device(node)
    arrays = _modules.get("pyopencl.array")       # (None: no pyopencl array exists)
    return _run.adopt(x) if arrays is not None and type(x) is arrays.Array else None


def device_data(x) -> cla.Array:
    """The device array of an array argument (computed, adopted or uploaded)."""
    if isinstance(x, LazyArray):
        return _run.evaluate(x.node)
    if is_cl_array(x):
        return _run.adopt(x)
    node = asarray(x).node
    assert is_kind(node, "input")
    return node.data


def _param_values(program: Program, scalars: list) -> list:
    """The kernel arguments of a call's scalar arguments, converted to their
    parameters' dtypes; NumPy's OverflowError for an int that a conversion of
    the trace cannot hold."""
    values = []
    for param, value in zip(program.params, scalars):
        for dtype in (param.dtype, *param.converted_to):
            if dtype.kind in "iu" and not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
                raise OverflowError(
                    f"Python integer {value} out of bounds for {dtype} (a scalar argument "
                    "the jitted function converts to it); pass it as a static argument "
                    "(static_argnames) to have it compared as NumPy does")
        values.append(param.dtype.type(value))
    return values


def run_simple(program: Program, data: list, arrays: list) -> Any:
    """:func:`run_program` of a program with :attr:`Program.simple` steps (its
    array arguments on the device *data*, as passed *arrays*): once every
    step ran on this queue, their bound launches directly (no arguments by
    name, no per-step checks: the inputs start at their buffers' beginning
    and kernels are not timed)."""
    queue = _run.default_queue()
    direct = program.direct.get(queue.int_ptr)
    values = data[:]
    if direct and not _run.steps.timing_kernels():
        for d in data:
            if d.offset:
                break
        else:
            for bound, slots in direct:
                values.append(bound.run_at(queue, values, slots))
            _run.STATS["launches"] += len(direct)
            return _simple_result(program, values, arrays)
    steps = program.simple
    assert steps is not None
    with _run.progress.watch([step for step, _ in steps], program.started, program.label):
        for step, sources in steps:
            values.append(_run.run_step(step, queue, {
                name: values[k] if k.__class__ is int else k[1] for name, k in sources}))
    if direct is None:
        program.direct[queue.int_ptr] = _direct_launches(steps, queue)
    return _simple_result(program, values, arrays)


def _simple_result(program: Program, values: list, arrays: list) -> Any:
    """The result of a simple call whose values (the array arguments', then
    the steps') are *values*, after the arguments the function assigned into
    got theirs."""
    start = program.arrays
    for k, (_, what) in program.written:
        _write_back(arrays[k], values[start + what])
    if program.structure == SINGLE:
        return LazyArray._holding(values[start + program.outputs[0][1]])
    return unflatten(program.structure, [LazyArray._holding(values[start + what])
                                         for _, what in program.outputs])


def _direct_launches(steps: tuple, queue) -> tuple:
    """Each of *steps*' bound launch on *queue* with its arguments' positions
    (``()`` when a step has no bound launch or takes a scalar)."""
    launches = []
    for step, sources in steps:
        bound = step.compiled.bound_on(queue, step.node) if step.compiled is not None else None
        slots = bound.at_positions(dict(sources)) if bound is not None else None
        if slots is None:
            return ()
        launches.append((bound, slots))
    return tuple(launches)


def run_program(program: Program, data: list, scalars: list, arrays: list) -> Any:
    queue = _run.default_queue()
    params = _param_values(program, [*scalars, *(value for supply in program.supplies
                                                 for value in supply())])
    values: list = []
    with _run.progress.watch([step for step, _ in program.steps], program.started,
                             program.label):
        for step, sources in program.steps:
            args = {name: data[what] if kind == "arg" else values[what] if kind == "step"
                    else params[what] if kind == "param" else what
                    for name, (kind, what) in sources}
            values.append(_run.run_step(step, queue, args))
    outputs = [LazyArray._holding(values[what]) if kind == "step"
               else asarray(params[what]) if kind == "param"
               else asarray(what) if kind == "value"
               else LazyArray(Input(data[what] if kind == "arg" else what))
               for kind, what in program.outputs]
    for k, (kind, what) in program.written:
        _write_back(arrays[k], values[what] if kind == "step" else
                    data[what] if kind == "arg" else _run.evaluate(asarray(what).node))
    if program.structure == SINGLE:
        return outputs[0]
    return unflatten(program.structure, outputs)
