"""The runs of a jitted function's steps that one kernel computes (as
``actx.compile``'s programs do, :mod:`lazyarray.run.sequence`): on a GPU a
small step of several kernels is one launch per call, one work-group
sharing each step's elements. (Not on a CPU device, where that kernel is
one work-item: jitted steps are mostly parallel element-wise work, which it
would serialize; Gray-Scott at 256x256 ran 2x slower so.)

A traced program's steps name their inputs as sources (``("arg", k)``,
``("step", j)``, ``("const", array)``, ``("param", k)``, ``("value", v)``);
here they are placed in one list of values, the call's arrays, then the
constants, then the steps' results, which is the form the one-kernel runs
take their arguments in.

Public names: JitRuns, plan_runs, run_steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyopencl as cl
import pyopencl.array as cla

from lazyarray.run.sequence import (
    OneKernel,
    SequenceLaunch,
    constant_ranges,
    one_kernels,
    sequence_runs,
)
from lazyarray.run.steps import STATS, run_step
from lazyarray.target import Target


@dataclass
class JitRuns:
    """A jitted program's steps with their sources placed (``k``: value
    *k*; ``("param", k)``; ``("value", v)``), its constants, the place of
    the first step's result, and by first step the runs computed as one
    kernel each."""

    steps: tuple
    consts: tuple
    first: int
    sequences: dict[int, OneKernel]
    #: by (queue ``int_ptr``, first step): the built launch of a run
    launches: dict[tuple[int, int], SequenceLaunch] = field(default_factory=dict)
    #: by first step: the results of its run read after it (the program's
    #: outputs, written arguments and other steps)
    read_after: dict[int, frozenset[int]] = field(default_factory=dict)


def plan_runs(planned: tuple, sources_read: Sequence[tuple], arrays: int, target: Target,
              device: cl.Device) -> JitRuns | None:
    """The runs of *planned* (a traced program's ``(step, sources)``) that
    one kernel computes, or None where there are none; *sources_read*: the
    sources the call reads after its steps (its outputs and the arguments
    it writes), *arrays*: the number of array arguments."""
    runs = sequence_runs([step for step, _ in planned], None, target.kind)
    if not runs:
        return None
    consts: list[cla.Array] = []
    const_place: dict[int, int] = {}
    for _, sources in planned:
        for _, (kind, what) in sources:
            if kind == "const" and id(what) not in const_place:
                const_place[id(what)] = arrays + len(consts)
                consts.append(what)
    first = arrays + len(consts)

    def placed(kind: str, what: Any) -> Any:
        if kind == "arg":
            return what
        if kind == "const":
            return const_place[id(what)]
        if kind == "step":
            return first + what
        return (kind, what)

    steps = tuple((step, tuple((name, placed(*src)) for name, src in sources))
                  for step, sources in planned)
    sequences = one_kernels(steps, runs, first, target, device,
                            constant_ranges(consts, arrays))
    found = JitRuns(steps, tuple(consts), first, sequences)
    read = {first + what for kind, what in sources_read if kind == "step"}
    for start, stop in runs:
        outside = set(read)
        for j, (_, sources) in enumerate(steps):
            if not start <= j < stop:
                outside |= {p for _, p in sources if isinstance(p, int)}
        found.read_after[start] = frozenset(
            v - first - start for v in outside if first + start <= v < first + stop)
    return found


def run_steps(runs: JitRuns, queue: cl.CommandQueue, data: list, params: list) -> list:
    """The values of a call (its arrays *data*, the constants, then every
    step's result), each run of :attr:`JitRuns.sequences` one launch."""
    values: list[Any] = [*data, *runs.consts]
    steps = runs.steps
    j = 0
    while j < len(steps):
        launch = _launch(runs, queue, j, values, params)
        if launch is not None:
            launch.run(queue, values, params, runs.read_after[j])
            STATS["launches"] += 1
            j += len(launch.results)
            continue
        step, sources = steps[j]
        values.append(run_step(step, queue, {
            name: values[p] if isinstance(p, int) else params[p[1]] if p[0] == "param"
            else p[1] for name, p in sources}))
        j += 1
    return values


def _launch(runs: JitRuns, queue: cl.CommandQueue, j: int, values: list, params: list
            ) -> SequenceLaunch | None:
    """The launch of the run starting at step *j* (built the first time), or
    None where none starts there or it could not be built (the run's steps
    then run on their own from now on)."""
    launch = runs.launches.get((queue.int_ptr, j))
    if launch is not None:
        return launch
    one = runs.sequences.get(j)
    if one is None:
        return None
    launch = SequenceLaunch.build(one, queue, values, params,
                                  [step.node for step, _ in one.steps])
    if launch is None:
        del runs.sequences[j]
        return None
    runs.launches[(queue.int_ptr, j)] = launch
    return launch


__all__ = ["JitRuns", "plan_runs", "run_steps"]
