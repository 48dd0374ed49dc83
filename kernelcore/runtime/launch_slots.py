"""What running a kernel launches, with each argument's slot: the door
through which a caller that sets kernel arguments itself (lazyarray's bound
launches) learns a kernel's device code, grids and argument order.

Public names: compile_launches, CompiledLaunches, Launch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyopencl as cl
import pyopencl.array as cla

from kernelcore.runtime.invoke import get_executor
from kernelcore.runtime.launchers import OpenClKernelLauncher
from kernelcore.runtime.make_launcher import make_launcher


@dataclass(frozen=True)
class Launch:
    """One device kernel of a run: its *program* and *function_name*, its
    global and local sizes (None: the platform's choice), and per argument
    position its slot: ``("array", name)`` (an array of the run's arguments),
    ``("scalar", name)`` (a scalar argument of the run), ``("temporary",
    index, nbytes)`` (a global temporary of the run, shared by the launches
    that use the same *index*) or ``("value", v)`` (always *v*: sizes and
    offsets the launcher worked out)."""

    program: Any            # (a pyopencl program)
    function_name: str
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    slots: tuple[tuple, ...]


@dataclass(frozen=True)
class CompiledLaunches:
    """The device *source* of a kernel (its whole program) and the
    :class:`Launch` es a run makes, in order."""

    source: str
    launches: tuple[Launch, ...]


def compile_launches(knl: Any, queue: cl.CommandQueue, arguments: dict[str, Any]
                     ) -> CompiledLaunches:
    """Generate and build *knl* (a kernel or a translation unit) for the
    types and shapes of *arguments* (by argument name: arrays and scalars, as
    a call would take them) on *queue*'s device, and say what a run launches."""
    launcher = make_launcher(knl, queue, **arguments)
    executor = get_executor(knl, arguments)
    # (the launcher converts scalars: they are known by position)
    names = [a.name for a in executor.knl.args]
    temporaries: dict[int, int] = {}
    launches = []
    for sub in launcher.launchers:
        if not isinstance(sub, OpenClKernelLauncher):
            continue
        slots: list[tuple] = []
        for k, value in sub.args_list:
            name = next((n for n, a in arguments.items() if a is value), None)
            if name is not None:
                slots.append(("array", name))
            elif k < len(names) and not isinstance(arguments.get(names[k]),
                                                   (cla.Array, type(None))):
                slots.append(("scalar", names[k]))
            elif isinstance(value, cla.Array):
                index = temporaries.setdefault(id(value), len(temporaries))
                slots.append(("temporary", index, value.nbytes))
            else:
                slots.append(("value", value))
        local = sub.default_local_work_size
        launches.append(Launch(sub.kernel.program, sub.kernel.function_name,
                               tuple(sub.default_global_work_size or ()),
                               None if local is None else tuple(local), tuple(slots)))
    return CompiledLaunches(executor.code.device_code(), tuple(launches))
