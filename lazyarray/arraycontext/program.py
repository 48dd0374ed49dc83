"""A traced function's planned work, run call after call: its steps, the
runs of them that form one kernel each (:mod:`lazyarray.run.sequence`), and
where each argument and result lives in the call's list of values.

Public names: Program.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

from lazyarray.arraycontext.traversal import Structure
from lazyarray.graph import Input
from lazyarray.handle import LazyArray, asarray
from lazyarray.run import STATS, progress, run_step
from lazyarray.run.prebuild import build_new_kernels, example_arguments
from lazyarray.run.sequence import OneKernel, SequenceLaunch
from lazyarray.run.steps import _Compiled, timing_kernels


class Program:
    """A traced function's planned kernels: *steps* (each a planned
    :class:`~lazyarray.run.Step` with its argument sources: ``(name, k)``,
    position *k* in the list of the call's arrays, then *consts*, then the
    steps' results; ``(name, ("param", slot))`` a scalar parameter;
    ``(name, ("value", v))`` a constant kernel argument), *outputs* (sources
    of the result's leaves) and the result's *structure*. A call's scalar
    parameters are its traced numbers followed by the values of *supplies*.
    After the first run on a queue, calls launch each step's bound launch
    directly (:meth:`run`). *sequences*: by the index of its first step, a
    run of steps computed by one kernel
    (:func:`~lazyarray.run.sequence.one_kernels`), one launch for them all."""

    def __init__(self, steps: tuple, outputs: tuple, structure: Structure,
                 params: tuple, supplies: tuple, consts: tuple, arrays: int,
                 name: str = "compiled", hoisted: int = 0,
                 sequences: dict[int, OneKernel] | None = None):
        self.steps = steps
        self.outputs = outputs
        self.structure = structure
        self.params = params
        self.supplies = supplies
        self.consts = consts
        self.arrays = arrays
        self.name = name
        #: the OpenCL contexts (``int_ptr``) the kernels were built for
        #: (:func:`plan_program` builds them for its queue's)
        self.built_for: set[int] = set()
        #: invariant values computed once when tracing (see :func:`plan_program`)
        self.hoisted = hoisted
        #: by queue (``int_ptr``): per step, its bound launch and argument slots
        self._direct: dict[int, tuple] = {}
        self.sequences = dict(sequences or {})
        #: by (queue ``int_ptr``, first step): the launch of a run of steps
        self._launches: dict[tuple[int, int], SequenceLaunch] = {}
        #: by first step of a run: its results read after it (see _read_after)
        self._read_after_runs: dict[int, frozenset[int]] = {}

    def label(self) -> str:
        """What the program computes, in the progress line of its builds."""
        return _label(self.name)

    @property
    def launches(self) -> int:
        """The kernel launches of one call (steps with a kernel, a run of
        steps forming one kernel counting once)."""
        count, j = 0, 0
        while j < len(self.steps):
            one = self.sequences.get(j)
            if one is not None:
                count, j = count + 1, j + len(one.steps)
                continue
            count += self.steps[j][0].compiled is not None
            j += 1
        return count

    def param_values(self, numbers_: list[Any]) -> list[Any]:
        """The kernel arguments of a call's traced numbers (and supplies),
        in their parameters' dtypes; NumPy's OverflowError for an integer a
        conversion of the trace cannot hold."""
        values = [*numbers_, *(v for supply in self.supplies for v in supply())]
        converted = []
        for param, value in zip(self.params, values):
            for dtype in (param.dtype, *param.converted_to):
                if dtype.kind in "iu" and isinstance(value, (int, np.integer)) and not (
                        np.iinfo(dtype).min <= value <= np.iinfo(dtype).max):
                    raise OverflowError(f"integer {value} out of bounds for {dtype} (a "
                                        "number the compiled function converts to it)")
            converted.append(param.dtype.type(value))
        return converted

    def run(self, queue: cl.CommandQueue, data: list[cla.Array], numbers_: list[Any]
            ) -> list[Any]:
        """The result's leaves for the call's arrays *data* (C order, at the
        start of their buffers) and traced numbers."""
        params = self.param_values(numbers_) if self.params else []
        values: list[Any] = [*data, *self.consts]
        timing = timing_kernels()
        direct = None if timing else self._direct.get(queue.int_ptr)
        if direct is None and queue.context.int_ptr not in self.built_for:
            with progress.watch([step for step, _ in self.steps], time.perf_counter(),
                                self.label):
                build_new_kernels(queue, [(step, example_arguments(step))
                                          for step, _ in self._own_steps()])
            self.built_for.add(queue.context.int_ptr)
        launched, j = 0, 0
        while j < len(self.steps):
            one = None if timing else self._sequence_launch(queue, j, values, params)
            if one is not None:
                one.run(queue, values, params,
                        self._read_after(j, len(one.results), len(data) + len(self.consts)))
                launched += 1
                j += len(one.results)
                continue
            step, sources = self.steps[j]
            bound, slots = direct[j] if direct is not None else (None, None)
            if bound is not None and slots is not None:
                values.append(bound.run_at(queue, values, slots, params))
                launched += 1
            elif bound is not None:
                values.append(bound(queue, _arguments(sources, values, params)))
                launched += 1
            else:
                values.append(run_step(step, queue, _arguments(sources, values, params)))
            j += 1
        STATS["launches"] += launched
        if direct is None and not timing:
            self._direct[queue.int_ptr] = self._bind(queue)
        return [self._output(kind, what, values, params) for kind, what in self.outputs]

    def _own_steps(self) -> list[tuple[Any, tuple]]:
        """The steps that run on their own (in no run of steps as one kernel)."""
        inside = {j for first, one in self.sequences.items()
                  for j in range(first, first + len(one.steps))}
        return [st for j, st in enumerate(self.steps) if j not in inside]

    def _sequence_launch(self, queue: cl.CommandQueue, j: int, values: list, params: list
                         ) -> SequenceLaunch | None:
        """The launch of the run of steps starting at step *j* on *queue*
        (built now the first time); None where none starts there, or where it
        cannot be built (its steps then run on their own from now on)."""
        launch = self._launches.get((queue.int_ptr, j))
        if launch is not None:
            return launch
        one = self.sequences.get(j)
        if one is None:
            return None
        results = [step.node for step, _ in one.steps]
        with progress.watch([], time.perf_counter(), self.label):
            launch = SequenceLaunch.build(one, queue, values, params, results)
        if launch is None:
            del self.sequences[j]
            return None
        self._launches[(queue.int_ptr, j)] = launch
        return launch

    def _read_after(self, j: int, count: int, first: int) -> frozenset[int]:
        """The positions among the results of the *count* steps from step *j*
        (the first step's result is value *first* + *j*) that the call
        returns or that steps outside them read."""
        found = self._read_after_runs.get(j)
        if found is None:
            read = {what for kind, what in self.outputs if kind not in ("param", "value")}
            for i, (_, sources) in enumerate(self.steps):
                if not j <= i < j + count:
                    read |= {k for _, k in sources if isinstance(k, int)}
            start = first + j
            found = self._read_after_runs[j] = frozenset(
                v - start for v in read if start <= v < start + count)
        return found

    def _bind(self, queue: cl.CommandQueue) -> tuple:
        """Per step: its bound launch on *queue* and its arguments' slots by
        position (arrays, parameters and constants; None: called by name);
        ``(None, None)`` for steps run through ``run_step`` (fills, external
        calls, kernels not bound, steps of a run computed as one kernel)."""
        table: list[tuple[Any, Any]] = []
        for step, sources in self.steps:
            compiled = step.compiled
            bound = None
            if type(compiled) is _Compiled and not getattr(step.node, "external", False):
                bound = compiled.bound_on(queue, step.node)
            if bound is None:
                table.append((None, None))
                continue
            table.append((bound, bound.at_positions(dict(sources))))
        return tuple(table)

    def _output(self, kind: str, what: Any, values: list, params: list) -> Any:
        if kind == "step":
            return LazyArray._holding(values[what])
        if kind == "param":
            return asarray(params[what])
        if kind == "value":
            return asarray(what)
        return LazyArray(Input(values[what]))          # an argument or a constant


def _label(name: str) -> str:
    return f"{name}() (actx.compile)"


def _arguments(sources: tuple, values: list, params: list) -> dict[str, Any]:
    return {name: values[k] if isinstance(k, int) else params[k[1]] if k[0] == "param"
            else k[1] for name, k in sources}


__all__ = ["Program"]
