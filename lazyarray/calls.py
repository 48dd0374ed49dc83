"""Calls of computations that are not lazyarray's own kernels, as nodes of
the graph: a kernel someone else wrote (a loopy program that an array
context translated into a kernelcore kernel), run on the values of lazy
arrays, with one or several outputs that later lazy work reads.

:class:`ExternalCall` is the call: its children are the arrays it reads,
whole (the planner stores each of them, in C order, before the call runs);
its value is the dict of its outputs by name. :class:`CallOutput` is one of
them, an array like any other for the nodes that read it. Both are always
stored values, planned as steps of their own, so ``la.jit`` records the call
and replays it with the kernels around it.

A callee is any object with

* ``outputs``: ``{name: (shape, dtype)}``, known when the call is made;
* ``run(queue, values, events)``: run on *queue* with *values* (by the names
  the call passes its children under: device arrays, or scalars for 0-d
  children that are kernel arguments) and return ``{name: device array}``
  (C-contiguous, of the shapes and dtypes of ``outputs``), appending the
  events of its launches to *events* (a list, or None);
* ``kernel``: the kernelcore kernel it runs (``la.explain`` shows its
  code), or None (a call that is no kernel: an MPI exchange).

Equal calls (same callee object, same argument nodes) are one node, as other
nodes are: the callee must compute a function of its arguments only.

Public names: ExternalCall, CallOutput, call, launch_of.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lazyarray.graph import Node
from lazyarray.mapper import is_kind


class ExternalCall(Node):
    """*callee* run on the nodes *args*, passed under *names*. Its value (once
    computed) is the dict of the callee's outputs."""

    __slots__ = ("callee", "names", "args")
    mapper_method = "map_external_call"
    #: the planner stores this node and every array it reads (see
    #: :func:`lazyarray.plan.storage.storage_plan`)
    external = True

    @staticmethod
    def _content(callee, names, args):
        return (callee, tuple(names), tuple(args))

    def _init(self, callee, names, args):
        self.callee = callee
        self.names = tuple(names)
        self.args = tuple(args)
        # (no array value: a stand-in shape and dtype)
        self.shape = ()
        self.dtype = np.dtype(np.int8)

    def children(self) -> tuple[Node, ...]:
        return self.args


class CallOutput(Node):
    """The output *name* of the call *call* (an array of *shape* and *dtype*)."""

    __slots__ = ("call", "name")
    mapper_method = "map_call_output"
    external = True

    @staticmethod
    def _content(call, name, shape, dtype):
        return (call, str(name), tuple(shape), np.dtype(dtype).str)

    def _init(self, call, name, shape, dtype):
        self.call = call
        self.name = str(name)
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)

    def children(self) -> tuple[Node, ...]:
        return (self.call,)


def call(callee: Any, args: Mapping[str, Node]) -> dict[str, Node]:
    """The output nodes of *callee* run on *args* (argument name -> node)."""
    names = tuple(sorted(args))
    node = ExternalCall(callee, names, tuple(args[n] for n in names))
    return {name: CallOutput(node, name, shape, dtype)
            for name, (shape, dtype) in callee.outputs.items()}


class _CallLaunch:
    """What a step runs for an :class:`ExternalCall`: the callee on the step's
    inputs (in the interface of the steps' planned kernels: ``bound_on``
    gives the launch, called as ``launch(queue, args, events)``)."""

    #: not a kernel of the table of planned kernels
    key = None

    def __init__(self, node: ExternalCall, sources: Sequence[tuple[str, Any]]):
        self.node = node
        #: per argument name: ``("in", step argument name)`` or ``("value", v)``
        self.sources = tuple(sources)
        self.kernel = node.callee.kernel
        self.bound = self

    def bound_on(self, queue, node) -> _CallLaunch:
        return self

    def at_positions(self, positions: dict[str, int]) -> None:
        """No runs by position (a call is no kernel launch)."""
        return None

    def __call__(self, queue, args: dict, events: list | None = None) -> dict:
        values = {name: args[what] if kind == "in" else what
                  for name, (kind, what) in self.sources}
        return self.node.callee.run(queue, values, events)


class _OutputLaunch:
    """What a step runs for a :class:`CallOutput`: the output out of its
    call's value (no kernel)."""

    key = None

    def __init__(self, node: CallOutput, call_input: str):
        self.node = node
        self.call_input = call_input
        self.kernel = None
        self.bound = self

    def bound_on(self, queue, node) -> _OutputLaunch:
        return self

    def at_positions(self, positions: dict[str, int]) -> None:
        """No runs by position (an output of a call is no kernel launch)."""
        return None

    def __call__(self, queue, args: dict, events: list | None = None) -> Any:
        value = args[self.call_input][self.node.name]
        return value if self.node.shape else value.reshape(())


def launch_of(node: Node, inputs: dict[Node, Any]) -> Any:
    """The launch of the step computing the external *node*, whose inputs are
    *inputs* (node -> its :class:`~lazyarray.plan.inputs.KernelInput`, whose
    ``name`` is the step's argument); children that are not inputs are
    constants written into kernels, passed by value."""
    if is_kind(node, "call_output"):
        return _OutputLaunch(node, inputs[node.call].name)
    assert is_kind(node, "external_call")
    sources = []
    for name, child in zip(node.names, node.args):
        if child in inputs:
            sources.append((name, ("in", inputs[child].name)))
        else:
            sources.append((name, ("value", child.value)))
    return _CallLaunch(node, sources)


__all__ = ["ExternalCall", "CallOutput", "call", "launch_of"]
