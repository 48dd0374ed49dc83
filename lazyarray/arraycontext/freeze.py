"""Freezing several lazy arrays together: work that their graphs share is
computed once, and then each array is computed reading it.

Computing the leaves of a container one by one would inline a shared
subexpression (say the flux of a DG operator read by every component of the
right-hand side) into each leaf's kernel, computing it once per leaf.
:func:`shared_roots` finds, across all the leaves' graphs, the topmost
uncomputed nodes that two or more leaves read (and that cost something to
compute); :func:`compute_together` computes those first (they are then
stored values the leaves' kernels read), then the leaves, the new kernels of
all built first as one OpenCL program (:func:`evaluate_all`).

Work that is read many times over where it is not stored is asked to be
stored first with :func:`store_first`: an einsum operand broadcast over
the product's other labels (meshmode's face mass ``"ifj,fej->ei"`` reads
each face flux once per volume node ``i``; fused into the product, the
flux's whole expression is recomputed for each). :func:`stage_roots` is
what computing several arrays together (here and in ``actx.compile``)
stores first: the shared roots and the nodes asked for.

Small graphs met for the first times are computed by NumPy instead
(:func:`numpy_values`, :func:`computed_on_host`).

Public names: computed_on_host, numpy_values, HOST_REPEATS, shared_roots,
stage_roots, store_first, store_broadcast_operands,
compute_together, evaluate_all, plan_ahead, stand_in, walk_all, SHARED_MIN_OPERATIONS, FREE_KINDS.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

from kernelcore import memory_pool
from lazyarray.graph import Node, computed, walk
from lazyarray.host.policy import get_tier
from lazyarray.mapper import is_kind, is_node
from lazyarray.run import DEVICE_LOCK, contiguous_part, default_queue, evaluate, using_queue
from lazyarray.run.evaluation import BEFORE_EVALUATE
from lazyarray.run.host_graph import host_values
from lazyarray.run.prebuild import build_new_kernels, example_arguments
from lazyarray.run.steps import Step, graph_structure, plan_graph
from lazyarray.target import Target
from lazyarray.values import _DEVICE, keep_on_device, on_device

#: a node shared by several leaves is stored when its uncomputed graph holds
#: at least this many operations (cheaper ones are recomputed in each leaf's
#: kernel: a kernel launch and a round trip through memory cost more); shared
#: reductions, scans and gathers are always stored
SHARED_MIN_OPERATIONS = 3

#: the kinds of re-indexings and leaves: no work of their own
FREE_KINDS = ("view", "reshape", "const", "input", "param", "iota")


def _operations(root: Node, limit: int) -> int:
    """The operations (maps, concatenations) of *root*'s uncomputed graph,
    counted up to *limit*."""
    count = 0
    for n in walk(root, computed):
        if not computed(n) and is_kind(n, "map", "concat"):
            count += 1
            if count >= limit:
                break
    return count


def _worth_storing(node: Node) -> bool:
    if is_kind(node, "reduce", "scan", "gather"):
        return True
    return _operations(node, SHARED_MIN_OPERATIONS) >= SHARED_MIN_OPERATIONS


def shared_roots(roots: Sequence[Node]) -> list[Node]:
    """The nodes to compute before *roots* so that work their graphs share is
    done once: uncomputed nodes reached from two or more roots whose readers
    are reached from fewer (or that are roots themselves), past re-indexings
    (a shared view's argument is stored instead), worth a stored value
    (:data:`SHARED_MIN_OPERATIONS`). Children come before parents."""
    reached: dict[Node, set[int]] = {}
    parents: dict[Node, set[Node]] = {}
    root_set = set(roots)
    for k, root in enumerate(roots):
        for n in walk(root, computed):
            if computed(n):
                continue
            reached.setdefault(n, set()).add(k)
            for c in n.children():
                parents.setdefault(c, set()).add(n)
    chosen: dict[Node, None] = {}

    def choose(n: Node) -> None:
        if computed(n) or n in chosen:
            return
        if is_kind(n, *FREE_KINDS):
            for c in n.children():
                if len(reached.get(c, ())) >= 2:
                    choose(c)
            return
        if _worth_storing(n):
            chosen[n] = None

    for node, mine in reached.items():
        if len(mine) < 2:
            continue
        if node in root_set or any(len(reached[p]) < len(mine) for p in parents.get(node, ())):
            choose(node)
    order = {n: k for k, n in enumerate(walk_all(roots))}
    return sorted(chosen, key=order.__getitem__)


#: the nodes asked to be stored before what reads them (see store_first)
_STORE_FIRST: weakref.WeakSet = weakref.WeakSet()


def store_first(node: Node) -> Node | None:
    """Ask for *node* (past re-indexings: the value they read) to be stored
    before the work that reads it, when it is computed together with other
    work (:func:`compute_together`, ``actx.compile``) and worth a stored
    value; the node asked for, or None."""
    while is_kind(node, "view", "reshape") and not computed(node):
        [node] = node.children()
    if computed(node) or is_kind(node, *FREE_KINDS) or not _worth_storing(node):
        return None
    _STORE_FIRST.add(node)
    return node


def store_broadcast_operands(spec: str, operands: Sequence) -> list[Node]:
    """:func:`store_first` for each lazy operand of the einsum *spec* that its
    product reads more than once per element: the labels it lacks (or has
    with size 1) span more than one index. The nodes asked for."""
    if "->" not in spec or "." in spec:
        return []
    inputs = spec.replace(" ", "").split("->")[0].split(",")
    if len(inputs) < 2 or len(inputs) != len(operands):
        return []
    sizes: dict[str, int] = {}
    for labels, x in zip(inputs, operands):
        for label, n in zip(labels, getattr(x, "shape", ())):
            sizes[label] = max(sizes.get(label, 1), int(n))
    asked = []
    for labels, x in zip(inputs, operands):
        node = getattr(x, "node", None)
        if not is_node(node):
            continue
        own = dict(zip(labels, x.shape))
        reads = 1
        for label, n in sizes.items():
            if own.get(label, 1) == 1:
                reads *= n
        if reads > 1:
            stored = store_first(node)
            if stored is not None:
                asked.append(stored)
    return asked


def stage_roots(roots: Sequence[Node]) -> list[Node]:
    """The nodes to compute before *roots*: :func:`shared_roots` (with two
    roots or more) and the uncomputed nodes of their graphs that
    :func:`store_first` asked for, children before parents."""
    chosen = shared_roots(roots) if len(roots) > 1 else []
    if not _STORE_FIRST:
        return chosen
    picked = set(chosen)
    result = []
    for n in walk_all(roots):
        if n in picked or n in _STORE_FIRST:
            result.append(n)
    return result


def walk_all(roots: Sequence[Node]) -> list[Node]:
    """The uncomputed nodes of all *roots*' graphs, children before parents."""
    seen: set[Node] = set()
    result: list[Node] = []
    for root in roots:
        for n in walk(root, computed):
            if n not in seen:
                seen.add(n)
                result.append(n)
    return result


def stand_in(node: Node) -> cla.Array:
    """An array of *node*'s shape and dtype on a one-byte buffer: what a
    planned value stands for while the work after it is planned (never
    read)."""
    queue = default_queue()
    return cla.Array(queue, node.shape, node.dtype, data=memory_pool(queue)(1))


def plan_ahead(roots: Sequence[Node], marked: list[Node]) -> list[Step]:
    """The steps that evaluating *roots* in order will run (each reading the
    values of those before it): each root planned as
    :func:`~lazyarray.run.evaluate` plans it, a stand-in
    (:func:`stand_in`) holding the value of each node planned before it.
    The nodes given stand-ins are added to *marked*: the caller removes
    their stand-ins (``values._DEVICE.pop``) once done planning."""
    steps = []
    for root in roots:
        if computed(root) or is_kind(root, "param", "const"):
            continue
        # (a contiguous part of a computed array is a view of it: no kernel)
        planned = [] if contiguous_part(root) is not None else plan_graph(root)
        steps += planned
        for node in [*(step.node for step in planned), root]:
            if on_device(node) is None and not is_kind(node, "const"):
                keep_on_device(node, stand_in(node))
                marked.append(node)
    return steps


def evaluate_all(roots: Sequence[Node]) -> list[cla.Array]:
    """The values of *roots*, evaluated in order, the new kernels of all
    (:func:`plan_ahead`) built first as one program."""
    marked: list[Node] = []
    try:
        steps = plan_ahead(roots, marked)
    finally:
        for node in marked:
            _DEVICE.pop(node, None)
    build_new_kernels(default_queue(), [(step, example_arguments(step)) for step in steps])
    return [evaluate(root) for root in roots]


def compute_together(roots: Sequence[Node], queue: cl.CommandQueue | None = None
                     ) -> list[cla.Array]:
    """The values of *roots* on the device (on *queue*; None: lazyarray's),
    computed together: shared work (:func:`shared_roots`) runs once, new
    kernels are built as one program (:func:`evaluate_all`)."""
    if all(computed(r) for r in roots):
        # (a compiled function's results: nothing to plan)
        with using_queue(queue):
            return [evaluate(r) for r in roots]
    with using_queue(queue), DEVICE_LOCK:
        staged = stage_roots(roots) if len(roots) > 1 or _STORE_FIRST else []
        return evaluate_all([*staged, *roots])[len(staged):]


def computed_on_host(roots: Sequence[Node], queue: cl.CommandQueue
                     ) -> list[cla.Array] | None:
    """The values of *roots* computed by NumPy (:func:`numpy_values`), put
    on the device of *queue* and recorded as the nodes' values; or None."""
    values = numpy_values(roots, queue)
    if values is None:
        return None
    allocator = memory_pool(queue)
    result = []
    for root, value in zip(roots, values):
        array = on_device(root)
        if array is None:
            array = cla.to_device(queue, value, allocator=allocator)
            if not is_kind(root, "const"):
                keep_on_device(root, array)
        result.append(array)
    return result


def numpy_values(roots: Sequence[Node], queue: cl.CommandQueue) -> list[np.ndarray] | None:
    """The values of *roots* computed by NumPy on the host
    (:func:`~lazyarray.run.host_graph.host_values`), as NumPy arrays of
    their own: only where the tier is not forced to the device, every value
    of their graphs is within the host tier's size, and their structure is
    not a hot one (:data:`HOST_REPEATS`: work that repeats, an eager loop's
    step, is compiled, its launches read nothing back); else None (nothing
    done). New kernels cost a build and, on PoCL, a compile at their first
    launch (tens to hundreds of milliseconds each on a CPU or a GPU), NumPy's
    operations on these sizes microseconds, reading the values they read
    from a GPU some tens of microseconds each. The caller makes sure no
    value of the graphs is a trace's placeholder."""
    if all(computed(r) for r in roots) or get_tier() == "device":
        return None
    target = Target.of_queue(queue)
    if any(math.prod(r.shape) > target.host_tier_elements for r in roots):
        return None             # (large work: no structure to count)
    with using_queue(queue), DEVICE_LOCK:
        if not _still_cold(roots, target):
            return None
        for hook in list(BEFORE_EVALUATE):
            for root in roots:
                hook(root)
        values = host_values(roots, target.host_tier_elements, _read)
    # (C-ordered arrays that nothing else holds: views of other values and
    # broadcast results are copied)
    return None if values is None else [np.array(v, order="C") for v in values]


#: how many times graphs of one structure are computed on the host before
#: that structure runs compiled (its kernels built then): a discretization's
#: geometry repeats a structure a few times (per face, per connection), an
#: eager loop's step repeats it every step
HOST_REPEATS = 16
#: the graph structures computed on the host, and how many times (see
#: numpy_values)
_MET: dict[tuple, int] = {}
#: the most structures remembered (then the table starts afresh)
_MET_KEPT = 4096


def _still_cold(roots: Sequence[Node], target: Target) -> bool:
    """Whether graphs of the structure of *roots*' graphs were computed on
    the host fewer than :data:`HOST_REPEATS` times (counting this one)."""
    key = (target, *(graph_structure(r)[1] for r in roots))
    count = _MET.get(key, 0)
    if count >= HOST_REPEATS:
        return False
    if len(_MET) >= _MET_KEPT:
        _MET.clear()
    _MET[key] = count + 1
    return True


def _read(array: cla.Array) -> np.ndarray:
    """The device array *array* on the host (its own queue's read); one in
    neither C nor Fortran order is left to the device (a ValueError, which
    :func:`~lazyarray.run.host_graph.host_values` takes as a refusal)."""
    if not array.flags.forc:
        raise ValueError("a computed value in neither C nor Fortran order")
    return array.get()


__all__ = ["FREE_KINDS", "HOST_REPEATS", "SHARED_MIN_OPERATIONS", "compute_together",
           "computed_on_host", "evaluate_all", "numpy_values", "plan_ahead", "shared_roots",
           "stage_roots", "stand_in", "store_broadcast_operands", "store_first", "walk_all"]
