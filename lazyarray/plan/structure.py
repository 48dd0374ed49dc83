"""What the planner and the lowering read of an operation besides its
shape, dtype and operands: the fields that enter structure keys (plans and
kernels are reused for operations equal in them).

Public names: StructureFields, structure_fields, FIELDS_BY_KIND, kernel_structure.
"""

from __future__ import annotations

from lazyarray.calls import CallOutput, ExternalCall
from lazyarray.graph import Concat, Gather, Iota, Map, Node, Reduce, Reshape, Scan, View, walk
from lazyarray.mapper import NodeMapper, is_kind
from lazyarray.plan.inputs import KernelInput


class StructureFields(NodeMapper[tuple]):
    """An operation's structure fields. Leaves (inputs, constants,
    parameters) are keyed by the callers, by position and value."""

    def map_map(self, node: Map) -> tuple:
        return (node.op,)

    def map_reduce(self, node: Reduce) -> tuple:
        return (node.op, node.axes, node.keepdims)

    def map_scan(self, node: Scan) -> tuple:
        return (node.op, node.axis)

    def map_view(self, node: View) -> tuple:
        return (node.axis_map,)

    def map_reshape(self, node: Reshape) -> tuple:
        return ()

    def map_concat(self, node: Concat) -> tuple:
        return (node.axis,)

    def map_iota(self, node: Iota) -> tuple:
        return (node.axis,)

    def map_gather(self, node: Gather) -> tuple:
        return (node.axis,)

    def map_external_call(self, node: ExternalCall) -> tuple:
        return (node.callee, node.names)

    def map_call_output(self, node: CallOutput) -> tuple:
        return (node.name,)


#: :class:`StructureFields` (it keeps no state)
structure_fields = StructureFields()

#: its method by node kind (a planner's walk asks it of every node: one
#: lookup instead of the mapper's dispatch)
FIELDS_BY_KIND = {name[len("map_"):]: getattr(structure_fields, name)
                  for name in dir(StructureFields) if name.startswith("map_")}


def kernel_structure(node: Node, inputs: dict[Node, KernelInput], shapes: bool = True,
                     positions: bool = True) -> tuple:
    """The structure of the kernel computing *node* from *inputs* (node ->
    (node, argument name); names of scalar arguments start with ``s``):
    one entry per node, inputs and scalars by position (not value),
    children by their entries' numbers; without *shapes* for kernels
    generic over the element count, without *positions* (views' starts and
    steps) for kernels taking them as arguments. Kernels of equal structure
    are one."""
    position = {nid: k for k, nid in enumerate(inputs)}
    number: dict[Node, int] = {}
    entries: list[tuple] = []
    for n in walk(node, lambda n: n in position):
        entry: tuple
        shape = (n.shape,) if shapes else ()
        if n in position:
            kind = "scalar" if inputs[n].scalar else "in"
            entry = (kind, position[n], n.dtype.str, *shape)
        elif is_kind(n, "const"):
            entry = n._key
        else:
            fields = structure_fields(n) if positions or not is_kind(n, "view") else ()
            entry = (n.mapper_method, *shape, n.dtype.str, fields,
                     tuple(number[c] for c in n.children()))
        number[n] = len(entries)
        entries.append(entry)
    return tuple(entries)
