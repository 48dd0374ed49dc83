"""Evaluation: the value of a node on the device, its stored nodes computed
step by step (each once, also when several threads evaluate).

Public names: evaluate, inputs_queue, contiguous_part, BEFORE_EVALUATE.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Callable, Sequence

import pyopencl as cl
import pyopencl.array as cla

from lazyarray.errors import LazyArrayError, user_place
from lazyarray.graph import Input, Map, Node, computed, walk
from lazyarray.mapper import is_kind
from lazyarray.plan.inputs import kernel_scalar
from lazyarray.run.device import DEVICE_LOCK, default_queue, queue_chosen, queue_of, using_queue
from lazyarray.run.progress import watch
from lazyarray.run.steps import graph_structure, plan_graph, plan_map, run_step
from lazyarray.target import Target
from lazyarray.tracing import TRACING
from lazyarray.values import holder, keep_on_device, on_device

#: called with the root of each evaluation, first, while not empty (values
#: whose computing was put off register here: see
#: ``lazyarray.arraycontext.pending``)
BEFORE_EVALUATE: list[Callable[[Node], None]] = []


def evaluate(root: Node) -> cla.Array:
    """The value of *root* on the device (stored nodes are computed once).
    Outside a :func:`~lazyarray.run.device.using_queue` block, a graph whose
    inputs live in another OpenCL context than lazyarray's default queue is
    computed on their queue (arrays of an array context computed outside
    it)."""
    if BEFORE_EVALUATE:
        for hook in list(BEFORE_EVALUATE):
            hook(root)
    value = on_device(root)
    if value is not None:
        return value
    with DEVICE_LOCK:
        if is_kind(root, "map"):
            value = _evaluate_map(root)
            if value is not None:
                _settle_held((root,))
                return value
        graph = graph_structure(root)
        foreign = None if queue_chosen() else _foreign_queue(graph[0])
        if foreign is None:
            return _evaluate(root, graph)
        with using_queue(foreign):
            return _evaluate(root, graph)


def _evaluate_map(root: Map) -> cla.Array | None:
    """The value of *root* (under the device lock) when it is an elementwise
    operation on computed arrays of the current queue (the eager ``a + b``),
    computed by the step :func:`~lazyarray.run.steps.plan_map` remembers
    for its operation, shapes and dtypes; else None (nothing was done)."""
    queue = default_queue()
    values = []
    for node in root.args:
        kind = node.kind
        if kind == "input":
            value = node.data
            # (an input of another queue may be of another context: see evaluate)
            if value is None or value.queue is not queue:
                return None
        elif kind == "const" or kind == "param":
            return None
        else:
            value = on_device(node)
            if value is None:
                return None
        values.append(value)
    started = time.perf_counter()
    planned = plan_map(root, Target.of_queue(queue))
    if planned is None:
        return None
    step, positions = planned
    args = {name: values[k] if isinstance(k, int) else k.value
            for (name, _), k in zip(step.args, positions)}
    if step.compiled is not None and step.compiled.bound is None:   # (built by its first run)
        with watch((step,), started, user_place):
            value = run_step(step, queue, args)
    else:
        value = run_step(step, queue, args)
    keep_on_device(root, value)
    return value


def inputs_queue(root: Node) -> cl.CommandQueue | None:
    """The queue of an input of *root*'s uncomputed graph whose OpenCL context
    is not the default queue's (None if every input is in that context)."""
    return _foreign_queue(walk(root, computed))


def _foreign_queue(nodes: list[Node]) -> cl.CommandQueue | None:
    """The queue of an input among *nodes* whose OpenCL context is not the
    default queue's, or None."""
    default = default_queue()
    for node in nodes:
        if is_kind(node, "input"):
            queue = getattr(node.data, "queue", None)
            if queue is not None and queue is not default \
                    and queue.context != default.context:
                return queue
    return None


def _evaluate(root: Node, graph: tuple | None = None) -> cla.Array:
    """The value of *root* (under the device lock); *graph*: its
    :func:`~lazyarray.run.steps.graph_structure` if known."""
    value = on_device(root)
    if value is not None:
        return value
    if is_kind(root, "param"):
        raise LazyArrayError(
            "a value computed from a scalar argument of a jitted function is not known "
            "while the function is traced; return it from the jitted function instead")
    if is_kind(root, "input"):
        if root.data is None:
            raise LazyArrayError(
                "this array was made while la.jit traced a function from its arguments' "
                "placeholders, which hold no values after the trace; return it from "
                "the jitted function instead")
        return _in_context(root, default_queue())
    held = _held_base(root)
    if held is not None:
        # a part of an array a variable holds, its work pending (a row read
        # after a column was written into it): the array is computed first,
        # as NumPy computes it, so the next step's work starts from a
        # computed value (one structure a step) instead of a growing graph
        _evaluate(held)
        _settle_held((held,))
        return _evaluate(root)
    part = _contiguous_part(root)
    if part is not None:
        keep_on_device(root, part)
        return part
    queue = default_queue()
    started = time.perf_counter()
    if graph is None:
        graph = graph_structure(root)
    steps = plan_graph(root, graph)
    stored = []
    with watch(steps, started, user_place):
        for step in steps:
            args = {}
            for name, n in step.args:
                kind = n.kind
                # (inputs, the usual arguments, without _evaluate's checks: an
                # input holding data has no other value; a constant is a scalar
                # argument, or an array argument once its value was computed)
                args[name] = _in_context(n, queue) if kind == "input" and n.data is not None \
                    else n.value if kind == "const" and kernel_scalar(n) else _evaluate(n)
            value = run_step(step, queue, args)
            if step.node.kind == "const":
                # (not kept: an interned constant with a device value would
                # read as a computed array in every later graph using it)
                return value
            keep_on_device(step.node, value)
            stored.append(step.node)
    _settle_held(stored)
    return on_device(root)


#: the most elements of a held array computed for reading a part of it (a
#: row of a larger one is computed alone: the whole might not fit the device)
HELD_BASE_LIMIT = 1 << 24


def _held_base(root: Node) -> Node | None:
    """The array *root* is a view (or reshape) of, when its work is pending,
    a live array handle holds it (outside a trace) and it has at most
    :data:`HELD_BASE_LIMIT` elements; else None."""
    if not is_kind(root, "view", "reshape") or TRACING.names:
        return None
    base = root.arg  # type: ignore[attr-defined]
    while is_kind(base, "view", "reshape") and not computed(base):
        base = base.arg
    if computed(base) or is_kind(base, "const", "param", "input") \
            or math.prod(base.shape) > HELD_BASE_LIMIT or holder(base) is None:
        return None
    return base


def _settle_held(computed: Sequence[Node]) -> None:
    """Give the array handles holding *computed* (nodes an evaluation just
    stored: the values of named arrays, the root) their values as leaves:
    later work reads them, not the graphs that computed them, which can be
    freed (a loop reading one element of its state each step keeps no
    chain of the values of earlier steps)."""
    for node in computed:
        handle = holder(node)
        if handle is not None and on_device(node) is not None:
            handle._settle()


#: copies of inputs made for another OpenCL context than their own
_MOVED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _in_context(node: Input, queue: cl.CommandQueue) -> cla.Array:
    """The data of *node* in *queue*'s OpenCL context: its own, or (an array
    of another context read with arrays of this one, as an array of an array
    context combined with ``la.asarray(numpy_array)`` made outside the
    context's :func:`using_queue` block) a copy made through the host, once."""
    data = node.data
    if data.queue is queue or data.context == queue.context:
        return data
    moved = _MOVED.get(node)
    if moved is None or moved.context != queue.context:
        source = data if data.flags.c_contiguous else data.copy()
        moved = cla.to_device(queue, source.get(queue=queue_of(source)))
        _MOVED[node] = moved
    return moved


def contiguous_part(node: Node) -> tuple[Node, tuple | None] | None:
    """Whether *node* is a reshape of a computed array, or a contiguous part
    of one (``x[3]``, ``x[2, 1]``, ``x[1:4]``), which a view of its buffer
    holds (no kernel): ``(the array's node, None for a reshape or the index
    of the part)``; None otherwise."""
    if not is_kind(node, "view", "reshape") or 0 in node.shape:
        return None
    arg = node.arg
    while is_kind(arg, "view", "reshape") and not computed(arg):
        arg = arg.arg
    if not computed(arg):
        return None
    arg = node.arg
    if is_kind(node, "reshape"):
        return arg, None
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
    return arg, (*fixed, *([slice(rest[0][2], rest[0][2] + node.shape[0])] if rest else []))


def _contiguous_part(node: Node) -> cla.Array | None:
    """The value of *node* as a view of a computed buffer (see
    :func:`contiguous_part`), or None."""
    found = contiguous_part(node)
    if found is None:
        return None
    arg, key = found
    if key is None:
        return _evaluate(arg).reshape(node.shape)
    part = _evaluate(arg)[key]
    return part if part.shape == node.shape else None
