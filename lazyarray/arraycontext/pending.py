"""Freezes put off while ``actx.compile`` traces a function.

A discretization computes its geometry (normals, area elements, metric
derivatives) the first time an operator asks for it, and keeps it frozen:
grudge freezes each piece as it is first needed, which in a compiled
operator is while tracing. Computed there and then, each ``freeze`` built
its new kernels as an OpenCL program of its own (a dozen programs for a 2-D
advection operator: on PoCL each cold build costs about a tenth of a
second, and each source build in a later process, which PoCL's cache
serves, some 20 ms).

While a trace is under way, a ``freeze`` of work that depends on no call
(:func:`defer`) hands out arrays of the right shape whose values are
computed later (:func:`settle`): when the traced program is planned (its
kernels, the put-off ones and the hoisted work then built as one program,
see ``compile.plan_program``), or before an evaluation that reads a
put-off value or shares work not computed yet with a put-off freeze (a
hook in :data:`lazyarray.run.evaluation.BEFORE_EVALUATE`: other
evaluations, meshmode reading its connections' index arrays, leave them
put off), or when one is read on the host through the context
(``to_numpy``, a thaw through the host). Each freeze's arrays are planned
as that freeze would have planned them, in the same order (shared work
stored once per freeze; work computed meanwhile shares nothing with it),
so the kernels, and the values, are those of freezing at once.

Public names: defer, settle, plan_pending, is_pending.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pyopencl as cl
import pyopencl.array as cla

from lazyarray.arraycontext.freeze import _STORE_FIRST, plan_ahead, stage_roots, walk_all
from lazyarray.graph import Node, computed, walk
from lazyarray.mapper import is_kind
from lazyarray.run import DEVICE_LOCK, evaluate, using_queue
from lazyarray.run.evaluation import BEFORE_EVALUATE
from lazyarray.run.launch import new_array
from lazyarray.run.prebuild import build_new_kernels, example_arguments
from lazyarray.run.steps import Step
from lazyarray.tracing import tracing
from lazyarray.values import _DEVICE, keep_on_device, on_device

#: per put-off freeze (see :class:`_Freeze`)
_PENDING: list[_Freeze] = []
#: the buffers (``int_ptr``) of the arrays handed out and not computed yet
_BUFFERS: set[int | None] = set()
#: the nodes of the put-off freezes' graphs not computed when they were put off
_GRAPHS: set[Node] = set()
_LOCK = threading.RLock()


class _Freeze:
    """A put-off freeze: its *queue*, the *roots* it evaluates (what it
    stores first, then its arrays, see ``freeze.compute_together``), its
    arrays' *nodes* with the *arrays* handed out, and the nodes its plan
    computes (*marked*), each given an array of its own meanwhile, so that
    later work reads them as computed values as it would have."""

    def __init__(self, queue: cl.CommandQueue, roots: list[Node], nodes: Sequence[Node],
                 marked: list[Node]):
        self.queue = queue
        self.roots = roots
        self.marked = marked
        self.held = {node: on_device(node) for node in marked}
        self.entries = [(node, self.held[node]) for node in nodes]


def defer(nodes: Sequence[Node], queue: cl.CommandQueue) -> list[cla.Array]:
    """Arrays on *queue* that will hold the values of *nodes* (uncomputed,
    not empty; planned now as one ``freeze`` plans them), computed by
    :func:`settle`."""
    with DEVICE_LOCK, _LOCK, using_queue(queue):
        staged = stage_roots(nodes) if len(nodes) > 1 or _STORE_FIRST else []
        roots = [*staged, *nodes]
        # (constants are shared by all graphs, and never stored)
        _GRAPHS.update(n for n in walk_all(roots) if not is_kind(n, "const"))
        marked: list[Node] = []
        plan_ahead(roots, marked)
        for node in marked:
            # (the stand-in becomes an array of the value's own)
            array = new_array(queue, node.shape or (1,), node.dtype)
            keep_on_device(node, array.reshape(node.shape) if node.shape
                           else array.reshape(()))
        freeze = _Freeze(queue, roots, nodes, marked)
        _PENDING.append(freeze)
        _BUFFERS.update(_buffer(a) for a in freeze.held.values())
        if _before_evaluate not in BEFORE_EVALUATE:
            BEFORE_EVALUATE.append(_before_evaluate)
    return [array for _, array in freeze.entries]


def _buffer(array: cla.Array) -> int | None:
    """The address of *array*'s buffer (None for one it does not hold)."""
    data = getattr(array, "base_data", None)
    return getattr(data, "int_ptr", None)


def is_pending(array: cla.Array) -> bool:
    """Whether *array* is one :func:`defer` handed out, not computed yet."""
    return bool(_BUFFERS) and _buffer(array) in _BUFFERS


def _before_evaluate(root: Node) -> None:
    """Settle before evaluating work that reads a put-off value or shares
    work with a put-off freeze (computing it now would change how the
    freeze is planned: it is planned as it was put off)."""
    for node in walk(root, computed):
        if node in _GRAPHS or _holds_pending(node):
            settle()
            return


def _holds_pending(node: Node) -> bool:
    """Whether *node* is computed and its value is a put-off one."""
    data = node.data if is_kind(node, "input") else on_device(node)
    return data is not None and is_pending(data)


def _plan_all(marked: list[Node]) -> list[Step]:
    """The steps of the put-off freezes, in order, each planned as its
    freeze planned it (stand-ins for the values planned before it, added to
    *marked*; the arrays of the values not computed yet taken away first)."""
    for freeze in _PENDING:
        for node in freeze.marked:
            _DEVICE.pop(node, None)
    steps: list[Step] = []
    # (planned as inside the trace that put them off, see steps.graph_structure)
    with tracing("freeze"):
        for freeze in _PENDING:
            with using_queue(freeze.queue):
                steps += plan_ahead(freeze.roots, marked)
    return steps


def plan_pending() -> list[Step]:
    """The steps that :func:`settle` will run, planned now so that their
    kernels are built with others; the put-off values still read as
    computed afterwards."""
    with DEVICE_LOCK, _LOCK:
        marked: list[Node] = []
        try:
            return _plan_all(marked)
        finally:
            for node in marked:
                _DEVICE.pop(node, None)
            for freeze in _PENDING:
                for node, array in freeze.held.items():
                    keep_on_device(node, array)


def settle() -> None:
    """Compute the arrays that :func:`defer` handed out, in order, the new
    kernels of all built first as one program."""
    with DEVICE_LOCK, _LOCK:
        if not _PENDING:
            return
        marked: list[Node] = []
        try:
            steps = _plan_all(marked)
        finally:
            for node in marked:
                _DEVICE.pop(node, None)
        pending = list(_PENDING)
        _PENDING.clear()
        _BUFFERS.clear()
        _GRAPHS.clear()
        BEFORE_EVALUATE.remove(_before_evaluate)
        queue = pending[0].queue
        build_new_kernels(queue, [(st, example_arguments(st)) for st in steps])
        with tracing("freeze"):
            for freeze in pending:
                with using_queue(freeze.queue):
                    for root in freeze.roots:
                        evaluate(root)
                    for node, array in freeze.entries:
                        _copy(freeze.queue, evaluate(node), array)


def _copy(queue: cl.CommandQueue, value: cla.Array, array: cla.Array) -> None:
    """*value* into *array* (same shape and dtype) on *queue*."""
    if not array.nbytes:
        return
    if value.flags.c_contiguous:
        cl.enqueue_copy(queue, array.base_data, value.base_data,  # type: ignore[arg-type]
                        byte_count=value.nbytes, src_offset=value.offset,
                        dst_offset=array.offset)
    else:
        array.set(value.get(queue=queue), queue=queue)


__all__ = ["defer", "is_pending", "plan_pending", "settle"]
