"""Building the new kernels of planned steps before they first run, all as
one OpenCL program (:func:`~lazyarray.run.together.build_together`): the
first runs then find their programs built, instead of building one program
per kernel (see :mod:`lazyarray.run.together` for what that saves on PoCL).

A compiled function's steps with the invariant work hoisted out of its
trace (``actx.compile``: one program for all) and the steps of values
computed together (``freeze``) are built this way.

Public names: build_new_kernels, example_arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

import numpy as np
import pyopencl as cl

from kernelcore import get_executor, provide_program
from lazyarray.graph import Const, Node
from lazyarray.mapper import is_kind
from lazyarray.run.launch import kernel_arguments
from lazyarray.run.steps import Step, _Compiled
from lazyarray.run.together import build_together
from lazyarray.run.tune import tuning_enabled

#: (context, code key) of the programs built here (a later call skips them)
_PROVIDED: set[tuple[int, str]] = set()


def example_arguments(step: Step) -> dict[str, Any]:
    """*step*'s arguments as :func:`build_new_kernels` wants them: a scalar
    constant's value, a zero of a scalar parameter's dtype, an empty array
    of an array argument's dtype."""
    return {name: _example(name, node) for name, node in step.args}


def _example(name: str, node: Node) -> Any:
    if is_kind(node, "param"):
        return node.dtype.type(0)
    if is_kind(node, "const") and name[0] == "s":
        return cast(Const, node).value
    return np.empty(0, node.dtype)


def build_new_kernels(queue: cl.CommandQueue,
                      planned: Iterable[tuple[Step, Mapping[str, Any]]]) -> int:
    """Build the programs of the kernels of *planned* (each step with its
    arguments: a scalar's value, an array argument as any array of its
    dtype) that have not run on *queue* yet, as one program. How many
    programs were built (0: none new, tuning on, or they did not merge:
    each is built alone when it first runs)."""
    if tuning_enabled():
        return 0
    ctx = queue.context
    found: dict[str, Any] = {}
    for step, args in planned:
        compiled = step.compiled
        if type(compiled) is not _Compiled or getattr(step.node, "external", False) \
                or compiled.bound_on(queue, step.node) is not None:
            continue
        # (the arguments' dtypes are what the executor is chosen by)
        knl = step.kernel
        assert knl is not None              # (a planned kernel: compiled is a _Compiled)
        executor = get_executor(knl, kernel_arguments(dict(args), np.empty(0, step.node.dtype)))
        if (ctx.int_ptr, executor.key) not in _PROVIDED:
            found.setdefault(executor.key, executor)
    programs = [(e.code.device_code(), [k.name for k in e.code.kernels])
                for e in found.values()]
    kernels = build_together(ctx, programs) if programs else None
    if kernels is None:
        return 0
    for key, mine in zip(found, kernels):
        provide_program(ctx, key, mine)
        _PROVIDED.add((ctx.int_ptr, key))
    return len(kernels)


__all__ = ["build_new_kernels", "example_arguments"]
