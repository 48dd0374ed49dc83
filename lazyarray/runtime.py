"""Evaluation: stored nodes computed kernel by kernel on the default device.

Public names: evaluate, plan, run_step, new_array, Step, default_queue, adopt, STATS, TRACING,
refuse_while_tracing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pyopencl as cl
import pyopencl.array as cla

import kernelcore as lp
from kernelcore.runtime.invoke import memory_pool
from lazyarray.graph import Const, Input, Node, Reduce
from lazyarray.lower import build_kernel, stored_nodes

logger = logging.getLogger(__name__)
_KERNELS: dict = {}

#: the result of reducing nothing (max and min refuse empty input earlier)
_EMPTY_REDUCTION = {"sum": 0, "product": 1, "any": False, "all": True}

#: kernels launched by this process (tests read it to check fusion)
STATS = {"launches": 0}

#: names of the jitted functions being traced (innermost last)
TRACING: list[str] = []


def refuse_while_tracing(what: str) -> None:
    """Raise if a function is being traced by ``la.jit``: *what* depends on
    array values, which a trace must not bake in."""
    if TRACING:
        from lazyarray.errors import LazyArrayError
        raise LazyArrayError(
            f"{what} depends on the values of arrays, so it cannot be used inside "
            f"la.jit (tracing {TRACING[-1]}); call it outside the jitted function")


def default_queue() -> cl.CommandQueue:
    """The queue lazyarray computes on: kernelcore's default queue."""
    return lp.default_queue()


def adopt(data: cla.Array) -> cla.Array:
    """*data*, once the work queued on its own queue (if not lazyarray's) is done."""
    if data.queue is not None and data.queue is not default_queue():
        data.queue.finish()
    return data


def _structure_key(node: Node, inputs: dict) -> tuple:
    """Kernels are reused for nodes of the same structure (inputs by position):
    one entry per node, children referred to by their entries' numbers."""
    position = {nid: k for k, nid in enumerate(inputs)}
    number: dict[int, int] = {}
    entries: list[tuple] = []

    def visit(n: Node) -> int:
        if id(n) not in number:
            if id(n) in position:
                entry = ("in", position[id(n)], n.dtype.str, n.shape)
            elif isinstance(n, Const):
                entry = n._key
            else:
                entry = (type(n).__name__, getattr(n, "op", None), n.shape, n.dtype.str,
                         getattr(n, "axes", None), getattr(n, "keepdims", None),
                         getattr(n, "axis_map", None), getattr(n, "axis", None),
                         tuple(visit(c) for c in n.children()))
            number[id(n)] = len(entries)
            entries.append(entry)
        return number[id(n)]

    visit(node)
    return tuple(entries)


@dataclass(frozen=True)
class Step:
    """Computing one stored *node*: a *kernel* with its inputs (argument name,
    node) in *args*, or a *fill* value for empty reductions (neither: a node
    with no elements). *bound* holds the kernel's :class:`_Bound` once it ran
    (shared by every step of that kernel)."""

    node: Node
    kernel: Any = None
    fill: Any = None
    args: tuple = ()
    bound: list = field(default_factory=list)


class _Bound:
    """A step's device kernels with their grids and argument slots worked out
    on a first run, so that a later run only allocates the result, sets the
    changed buffers and enqueues."""

    def __init__(self, step: Step, queue, args: dict, out: cla.Array):
        flat = {name: a if a.shape else a.reshape(1) for name, a in args.items()}
        flat["out"] = out if out.shape else out.reshape(1)
        launcher = lp.make_launcher(step.kernel, queue, **flat)
        self.template = out
        self.pool = memory_pool(queue)
        self.launches = []
        #: arguments bound once (global temporaries): the kernels refer to them
        self.kept = []
        for sub in launcher.launchers:
            slots = tuple((k, name) for k, value in sub.args_list
                          for name, a in flat.items() if value is a)
            rebound = {k for k, _ in slots}
            self.kept += [value for k, value in sub.args_list if k not in rebound]
            self.launches.append((sub.kernel, sub.default_global_work_size,
                                  sub.default_local_work_size, slots))

    def __call__(self, queue, args: dict) -> cla.Array:
        out = self.template._new_with_changes(self.pool(self.template.nbytes or 1), 0)
        buffers = {name: a.base_data for name, a in args.items()}
        buffers["out"] = out.base_data
        for kernel, gsize, lsize, slots in self.launches:
            for k, name in slots:
                kernel.set_arg(k, buffers[name])
            cl.enqueue_nd_range_kernel(queue, kernel, gsize, lsize)
        return out


def plan(roots: list[Node]) -> list[Step]:
    """The steps computing the stored nodes of *roots* not computed yet,
    producers first."""
    steps: list[Step] = []
    seen: set[int] = set()
    for root in roots:
        if root.value_on_device is not None or isinstance(root, Input):
            continue
        stored = stored_nodes(root)
        stored_ids = {id(n) for n in stored}
        for node in stored:
            if node.value_on_device is None and id(node) not in seen:
                seen.add(id(node))
                steps.append(_step_for(node, stored_ids))
    return steps


def _step_for(node: Node, stored_ids: set[int]) -> Step:
    if isinstance(node, Reduce) and 0 in [node.arg.shape[a] for a in node.axes]:
        return Step(node, fill=_EMPTY_REDUCTION[node.op])
    if 0 in node.shape:
        return Step(node)
    inputs: dict[int, tuple[Node, str]] = {}
    _collect_inputs(node, node, inputs, stored_ids)
    key = _structure_key(node, inputs)
    compiled = _KERNELS.get(key)
    if compiled is None:
        compiled = _KERNELS[key] = (build_kernel(node, inputs), [])
    knl, bound = compiled
    return Step(node, kernel=knl, args=tuple((name, n) for n, name in inputs.values()),
                bound=bound)


_TEMPLATES: dict[tuple, cla.Array] = {}


def new_array(queue, shape: tuple, dtype) -> cla.Array:
    """An uninitialized C-order array from *queue*'s memory pool. (It is made
    from a template array of that shape, which is ten times cheaper than
    constructing an array.)"""
    key = (queue.int_ptr, shape, dtype)
    template = _TEMPLATES.get(key)
    pool = memory_pool(queue)
    if template is None:
        template = _TEMPLATES[key] = cla.Array(queue, shape, dtype, data=pool(1))
    return template._new_with_changes(pool(template.nbytes or 1), 0)


def run_step(step: Step, queue, args: dict) -> cla.Array:
    """Run *step* with its inputs' values in *args* (by argument name)."""
    node = step.node
    if step.bound and not any(a.offset for a in args.values()):
        STATS["launches"] += 1
        return step.bound[0](queue, args)
    out = new_array(queue, node.shape or (1,), node.dtype)
    if step.fill is not None:
        out.fill(step.fill)
    elif step.kernel is not None:
        # 0-d values travel as one-element arrays
        step.kernel(queue, out=out, **{name: a if a.shape else a.reshape(1)
                                       for name, a in args.items()})
        STATS["launches"] += 1
        logger.info("computed %s%s %s", type(node).__name__, node.shape, node.dtype)
    result = out if node.shape else out.reshape(())
    # later runs of this kernel skip the checks of a kernel call (not for
    # kernels with nothing to rebind: fills, empty values)
    if step.kernel is not None and not step.bound and out.size \
            and all(a.size for a in args.values()):
        step.bound.append(_Bound(step, queue, args, result))
    return result


def evaluate(root: Node) -> cla.Array:
    """The value of *root* on the device (stored nodes are computed once)."""
    if root.value_on_device is not None:
        return root.value_on_device
    if isinstance(root, Input):
        return root.data
    queue = default_queue()
    for step in plan([root]):
        args = {name: evaluate(n) for name, n in step.args}
        step.node.value_on_device = run_step(step, queue, args)
    return root.value_on_device


def _collect_inputs(node: Node, root: Node, inputs: dict, stored_ids: set[int],
                    seen: set[int] | None = None) -> None:
    """The values *root*'s kernel reads: inputs, computed values, stored nodes."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return
    seen.add(id(node))
    if node is not root and (node.value_on_device is not None or isinstance(node, Input)
                             or id(node) in stored_ids):
        if id(node) not in inputs:
            inputs[id(node)] = (node, f"in{len(inputs)}")
        return
    for ch in node.children():
        _collect_inputs(ch, root, inputs, stored_ids, seen)


