"""What the planner and the lowering read of an operation besides its
shape, dtype and operands: the fields that enter structure keys (plans and
kernels are reused for operations equal in them).

Public names: StructureFields, structure_fields.
"""

from __future__ import annotations

from lazyarray.mapper import NodeMapper


class StructureFields(NodeMapper[tuple]):
    """An operation's structure fields. Leaves (inputs, constants,
    parameters) are keyed by the callers, by position and value."""

    def map_map(self, node) -> tuple:
        return (node.op,)

    def map_reduce(self, node) -> tuple:
        return (node.op, node.axes, node.keepdims)

    def map_scan(self, node) -> tuple:
        return (node.op, node.axis)

    def map_view(self, node) -> tuple:
        return (node.axis_map,)

    def map_reshape(self, node) -> tuple:
        return ()

    def map_concat(self, node) -> tuple:
        return (node.axis,)

    def map_iota(self, node) -> tuple:
        return (node.axis,)

    def map_gather(self, node) -> tuple:
        return (node.axis,)

    def map_external_call(self, node) -> tuple:
        return (node.callee, node.names)

    def map_call_output(self, node) -> tuple:
        return (node.name,)


#: :class:`StructureFields` (it keeps no state)
structure_fields = StructureFields()
