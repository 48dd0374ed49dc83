"""Evaluation: stored nodes computed kernel by kernel on the default device.

Threads may evaluate at the same time: the kernel of a structure is planned
once (threads that need it meanwhile wait; other kernels are planned
concurrently), and two threads computing one shared node both get a right
value.

Public names: evaluate, plan, run_step, Step, default_queue, adopt, STATS, TRACING,
tracing, refuse_while_tracing, synchronize, kernel_scalar.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import kernelcore as lp
from kernelcore.runtime.once import KeyedLocks, made_once
from lazyarray import lower_reduction
from lazyarray.cache import load_recipe, recipe_key, store_recipe
from lazyarray.graph import (
    Const, Input, Node, Param, Reduce, Reshape, Scan, View, computed, walk)
from lazyarray.values import holder, keep_on_device, on_device
from lazyarray.launch import BoundLaunch, kernel_arguments, new_array
from lazyarray.lower import build_kernel, stored_nodes
from lazyarray.tune import candidates, tune, tuning_enabled

logger = logging.getLogger(__name__)
_KERNELS: dict = {}
_PLANNING = KeyedLocks()

#: the result of reducing nothing (max and min refuse empty input earlier)
_EMPTY_REDUCTION = {"sum": 0, "product": 1, "any": False, "all": True}

#: kernels launched by this process, and kernel structures planned (lowered,
#: or loaded from a disk recipe): tests read them to check fusion and reuse
#: (approximate when several threads launch at once)
STATS = {"launches": 0, "planned": 0}


class _Tracing(threading.local):
    """What ``la.jit`` is tracing in the current thread."""

    def __init__(self) -> None:
        #: names of the jitted functions being traced (innermost last)
        self.names: list[str] = []


#: the jitted functions each thread is tracing
TRACING = _Tracing()


@contextmanager
def tracing(name: str) -> Iterator[None]:
    """Mark the jitted function *name* as traced by this thread for the block."""
    TRACING.names.append(name)
    try:
        yield
    finally:
        TRACING.names.pop()


def refuse_while_tracing(what: str) -> None:
    """Raise if this thread is tracing a function for ``la.jit``: *what*
    depends on array values, which a trace must not bake in."""
    if TRACING.names:
        from lazyarray.errors import LazyArrayError
        raise LazyArrayError(
            f"{what} depends on the values of arrays, so it cannot be used inside "
            f"la.jit (tracing {TRACING.names[-1]}); call it outside the jitted function")


def default_queue() -> cl.CommandQueue:
    """The queue lazyarray computes on: kernelcore's default queue."""
    return lp.default_queue()


def adopt(data: cla.Array) -> cla.Array:
    """*data*, once the work queued on its own queue (if not lazyarray's) is
    done; strided views are refused (kernels read whole, C-ordered buffers)."""
    if not data.flags.c_contiguous:
        from lazyarray.errors import LazyArrayError
        raise LazyArrayError(
            f"lazyarray reads pyopencl arrays in C order; this one has strides "
            f"{data.strides} for shape {data.shape}: pass a contiguous array (or a "
            f"NumPy array, or slice the lazy array instead: la.asarray(x)[::2])")
    if data.queue is not None and data.queue is not default_queue():
        data.queue.finish()
    return data


def _structure_key(node: Node, inputs: dict) -> tuple:
    """Kernels are reused for nodes of the same structure (inputs and scalar
    arguments by position, not value): one entry per node, children referred
    to by their entries' numbers."""
    position = {nid: k for k, nid in enumerate(inputs)}
    number: dict[int, int] = {}
    entries: list[tuple] = []
    for n in walk(node, lambda n: id(n) in position):
        entry: tuple
        if id(n) in position:
            kind = "scalar" if kernel_scalar(n) else "in"
            entry = (kind, position[id(n)], n.dtype.str, n.shape)
        elif isinstance(n, Const):
            entry = n._key
        else:
            entry = (type(n).__name__, getattr(n, "op", None), n.shape, n.dtype.str,
                     getattr(n, "axes", None), getattr(n, "keepdims", None),
                     getattr(n, "axis_map", None), getattr(n, "axis", None),
                     tuple(number[id(c)] for c in n.children()))
        number[id(n)] = len(entries)
        entries.append(entry)
    return tuple(entries)


class _Compiled:
    """The kernel planned for one structure: the kernelcore kernel (None when
    the step came from a disk recipe, until something needs it) and, once it
    ran or was loaded, its :class:`~lazyarray.launch.BoundLaunch`."""

    def __init__(self, kernel, bound: BoundLaunch | None, disk_key: str):
        self.kernel = kernel
        self.bound = bound
        self.disk_key = disk_key


@dataclass(frozen=True)
class Step:
    """Computing one stored *node*: a planned kernel (*compiled*) with its
    inputs (argument name, node) in *args*, or a *fill* value for empty
    reductions (neither: a node with no elements)."""

    node: Node
    compiled: _Compiled | None = None
    fill: Any = None
    args: tuple = ()

    @property
    def kernel(self):
        """The kernelcore kernel (lowered now if the step came from disk)."""
        if self.compiled is None:
            return None
        if self.compiled.kernel is None:
            self.compiled.kernel = build_kernel(
                self.node, {id(n): (n, name) for name, n in self.args})
        return self.compiled.kernel


def plan(roots: list[Node]) -> list[Step]:
    """The steps computing the stored nodes of *roots* not computed yet,
    producers first."""
    steps: list[Step] = []
    seen: set[int] = set()
    for root in roots:
        if computed(root) or isinstance(root, Param):
            continue
        stored = stored_nodes(root)
        stored_ids = {id(n) for n in stored}
        for node in stored:
            if on_device(node) is None and id(node) not in seen:
                seen.add(id(node))
                steps.append(_step_for(node, stored_ids))
    return steps


def _step_for(node: Node, stored_ids: set[int]) -> Step:
    if isinstance(node, Reduce) and 0 in [node.arg.shape[a] for a in node.axes]:
        return Step(node, fill=_EMPTY_REDUCTION[node.op])
    if 0 in node.shape:
        return Step(node)
    if node.dtype.kind != "c" and (isinstance(node, Const) or (
            isinstance(node, View) and isinstance(node.arg, Const))):
        # one value everywhere: a fill (pyopencl fills no complex values)
        return Step(node, fill=(node if isinstance(node, Const) else node.arg).value)
    inputs = _collect_inputs(node, stored_ids)
    # tuned kernels are kept apart: turning tuning on tunes kernels run before
    key = (_structure_key(node, inputs), tuning_enabled())
    compiled = made_once(_KERNELS, key, lambda: _compile(key, node, inputs), _PLANNING)
    return Step(node, compiled=compiled, args=tuple((name, n) for n, name in inputs.values()))


def _compile(key: tuple, node: Node, inputs: dict) -> _Compiled:
    """The kernel of *node*'s structure *key*: from its disk recipe, else lowered."""
    start = time.perf_counter()
    STATS["planned"] += 1
    device = lp.default_queue().device
    disk_key = recipe_key(key, device, lower_reduction.device_profile(device))
    recipe = load_recipe(disk_key)
    bound = None
    if recipe is not None:
        try:
            bound = BoundLaunch.from_recipe(recipe, default_queue(), node)
        except cl.Error as e:
            logger.warning("rebuilding a kernel whose stored recipe failed: %s", e)
    knl = None if bound is not None else build_kernel(node, inputs)
    logger.info("%s %s%s %s in %.1f ms", "lowered" if knl is not None else
                "loaded the recipe of", type(node).__name__, node.shape, node.dtype,
                1e3 * (time.perf_counter() - start))
    return _Compiled(knl, bound, disk_key)


def run_step(step: Step, queue, args: dict) -> cla.Array:
    """Run *step* with its inputs' values in *args* (by argument name)."""
    node = step.node
    compiled = step.compiled
    if any(getattr(a, "offset", 0) for a in args.values()):
        # views starting inside their buffer (pyopencl slices): kernels take
        # whole buffers, so such an input is read through a copy
        args = {name: a.copy(queue=queue) if getattr(a, "offset", 0) else a
                for name, a in args.items()}
    if compiled is not None and compiled.bound is not None:
        STATS["launches"] += 1
        if not logger.isEnabledFor(logging.INFO):
            return compiled.bound(queue, args)
        events: list = []
        with _kernel_time(node, queue, events):
            return compiled.bound(queue, args, events)
    out = new_array(queue, node.shape or (1,), node.dtype)
    if compiled is not None and tuning_enabled() and not isinstance(node, Scan) and out.size:
        _tune_step(step, queue, args, out)
    if step.fill is not None:
        # (pyopencl has no fill for bools: their bytes are filled as uint8)
        if out.dtype == np.bool_:
            out.view(np.uint8).fill(np.uint8(step.fill))
        else:
            out.fill(step.fill)
    elif compiled is not None:
        with _kernel_time(node, queue, None):
            step.kernel(queue, **kernel_arguments(args, out))
        STATS["launches"] += 1
    result = out if node.shape else out.reshape(())
    # later runs (in this process and, through the disk recipe, in others) skip
    # lowering and the checks of a kernel call; not for kernels with nothing
    # to rebind (empty values)
    if compiled is not None and out.size and all(a.size for a in args.values()
                                                 if isinstance(a, cla.Array)):
        compiled.bound = BoundLaunch.from_run(step.kernel, queue, args, result)
        store_recipe(compiled.disk_key, compiled.bound.recipe)
    return result


@contextmanager
def _kernel_time(node: Node, queue, events: list | None) -> Iterator[None]:
    """Log the device time of the kernel launched in the block (at info
    level only: from profiling *events* on a profiling queue, else by
    waiting for the device, which synchronizes)."""
    if not logger.isEnabledFor(logging.INFO):
        yield
        return
    queue.finish()
    start = time.perf_counter()
    yield
    queue.finish()
    profiling = events is not None and bool(
        queue.properties & cl.command_queue_properties.PROFILING_ENABLE)
    seconds = (sum(e.profile.end - e.profile.start for e in events) * 1e-9
               if events is not None and profiling else time.perf_counter() - start)
    logger.info("ran %s%s %s in %.3f ms (%s)", type(node).__name__, node.shape, node.dtype,
                1e3 * seconds, "profiled" if profiling else "waited for")


def synchronize() -> None:
    """Wait until the device has finished all queued work."""
    with DEVICE_LOCK:
        default_queue().finish()


def _tune_step(step: Step, queue, args: dict, out: cla.Array) -> None:
    """Replace *step*'s kernel by its fastest version on *args*
    (``LAZYARRAY_TUNE=1``, see :mod:`lazyarray.tune`)."""
    node = step.node
    inputs = {id(n): (n, name) for name, n in step.args}
    flat = kernel_arguments(args, out)

    def run(knl) -> None:
        knl(queue, **flat)
        queue.finish()

    choices = candidates(lower_reduction.device_profile(queue.device)[0],
                         isinstance(node, Reduce))
    assert step.compiled is not None
    step.compiled.kernel, _ = tune(step.kernel, lambda choice: build_kernel(node, inputs, choice),
                                   choices, run)


#: held while a thread computes values or moves them between host and device:
#: the evaluations of several threads share stored nodes, and NVIDIA's OpenCL
#: crashed when threads transferred and launched at once (their work runs on
#: one in-order queue anyway)
DEVICE_LOCK = threading.RLock()


def evaluate(root: Node) -> cla.Array:
    """The value of *root* on the device (stored nodes are computed once)."""
    value = on_device(root)
    if value is not None:
        return value
    with DEVICE_LOCK:
        return _evaluate(root)


def _evaluate(root: Node) -> cla.Array:
    value = on_device(root)
    if value is not None:
        return value
    if isinstance(root, Param):
        from lazyarray.errors import LazyArrayError
        raise LazyArrayError(
            "a value computed from a scalar argument of a jitted function is not known "
            "while the function is traced; return it from the jitted function instead")
    if isinstance(root, Input):
        if root.data is None:
            from lazyarray.errors import LazyArrayError
            raise LazyArrayError(
                "this array was made while la.jit traced a function from its arguments' "
                "placeholders, which hold no values after the trace; return it from "
                "the jitted function instead")
        return root.data
    if not TRACING.names:
        _compute_named_values(root)
    part = _contiguous_part(root)
    if part is not None:
        keep_on_device(root, part)
        return part
    queue = default_queue()
    for step in plan([root]):
        args = {name: n.value if isinstance(n, Const) else _evaluate(n)
                for name, n in step.args}
        keep_on_device(step.node, run_step(step, queue, args))
    return on_device(root)


def kernel_scalar(node: Node) -> bool:
    """Whether *node* is a kernel's scalar argument (a new value reuses the
    kernel): a jit's scalar parameter, or a constant other than a bool (OpenCL
    kernels take none) or a Python integer kept as written (compared outside
    its operand's range)."""
    return isinstance(node, Param) or (
        isinstance(node, Const) and not node.weak and node.dtype.kind != "b")


#: a value that an array handle holds, NAMED_DEPTH or more operations deep in
#: work not computed yet, is computed (and stored) when work reading it is:
#: a loop that tests a value each step (``while float(err) > tol``) would
#: otherwise compute the named arrays' growing graphs anew each step
NAMED_DEPTH = 16


def _compute_named_values(root: Node) -> None:
    """Compute the deep values named by live handles that *root* reads (the
    handles then hold the computed values)."""
    for node in walk(root, computed):
        if node is not root and node.depth >= NAMED_DEPTH and not computed(node):
            handle = holder(node)
            if handle is not None:
                handle._settle()


def _contiguous_part(node: Node) -> cla.Array | None:
    """A reshape of a computed array, or a contiguous part of one (``x[3]``,
    ``x[2, 1]``, ``x[1:4]``), as a view of its buffer: no kernel, so reading
    elements one by one compiles nothing. None for other nodes."""
    if not isinstance(node, (View, Reshape)) or 0 in node.shape:
        return None
    arg = node.arg
    while isinstance(arg, (View, Reshape)) and not computed(arg):
        arg = arg.arg
    if not computed(arg):
        return None
    arg = node.arg
    if isinstance(node, Reshape):
        return _evaluate(arg).reshape(node.shape)
    m = next((k for k, a in enumerate(node.axis_map) if a[0] != "const"), arg.ndim)
    fixed = [a[1] for a in node.axis_map[:m]]
    rest = node.axis_map[m:]
    # the other axes of arg are the view's, in order: the first a range, the
    # others whole
    if node.ndim != len(rest) or any(
            a[0] != "axis" or a[1] != j or a[3] != 1
            or (j and (a[2] != 0 or node.shape[j] != arg.shape[m + j]))
            for j, a in enumerate(rest)):
        return None
    key = [*fixed, *([slice(rest[0][2], rest[0][2] + node.shape[0])] if rest else [])]
    part = _evaluate(arg)[tuple(key)]
    return part if part.shape == node.shape else None


def _collect_inputs(root: Node, stored_ids: set[int]) -> dict[int, tuple[Node, str]]:
    """The values *root*'s kernel reads, by node id with their argument names:
    inputs, computed values and stored nodes (``in<k>``), and scalar
    constants (``s<k>``)."""
    inputs: dict[int, tuple[Node, str]] = {}

    def read(node: Node) -> bool:
        return node is not root and (computed(node) or id(node) in stored_ids
                                     or kernel_scalar(node))

    for node in walk(root, read):
        if node is not root and read(node):
            prefix = "s" if kernel_scalar(node) else "in"
            inputs[id(node)] = (node, f"{prefix}{len(inputs)}")
    return inputs
