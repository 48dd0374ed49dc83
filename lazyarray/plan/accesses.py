"""Index accesses: which operands computing a node at an index reads, and
where (the planner counts reads with them; lowering inlines along them).

Public names: accesses, Accesses, concat_sources, viewed, operand_uses,
OperandUses.
"""

from __future__ import annotations

from collections.abc import Container

from lazyarray.graph import Concat, Gather, Map, Node, Reshape, View, computed
from lazyarray.mapper import NodeMapper, is_kind
from lazyarray.plan.indexing import affine, broadcast, flatten, unflatten, within
from lazyarray.ufunc_templates import ELEMENTWISE

#: one read: the node read, the index it is read at (None where the read is
#: never shared) and the share of the reader's elements that read it
Access = tuple[Node, "list | None", float]


class Accesses(NodeMapper[list]):
    """The children that computing a node at an index reads: each with the
    index it is read at (``None`` where the read is never shared: gathered
    data, a part of a concatenation computed only where it applies, or inside
    a reduction) and the share of the node's elements that read it.

    Views of one value that a concatenation joins in place (the untouched
    parts of ``x`` in ``x[:, 3] = v``: each element read where it is) are
    one read of that value, shared."""

    def map_view(self, node: View, index: list) -> list[Access]:
        return [(node.arg, [m[1] if m[0] == "const" else affine(m[2], m[3], index[m[1]])
                            for m in node.axis_map], 1)]

    def map_reshape(self, node: Reshape, index: list) -> list[Access]:
        return [(node.arg, unflatten(flatten(index, node.shape), node.arg.shape), 1)]

    def map_map(self, node: Map, index: list) -> list[Access]:
        return [(a, broadcast(index, a.shape, node.shape), 1) for a in node.args]

    def map_concat(self, node: Concat, index: list) -> list[Access]:
        total = node.shape[node.axis] or 1
        return [(read, read_index if shared else None, sum(b - a for a, b in ranges) / total)
                for read, read_index, shared, ranges in concat_sources(node, index)]

    def map_gather(self, node: Gather, index: list) -> list[Access]:
        k, m = node.axis, node.indices.ndim
        return [(node.indices, index[k:k + m], 1), (node.arg, None, 1)]

    def _unshared(self, node, index: list) -> list[Access]:
        """Every operand, read at indices of its own (inside a reduction, a
        scan or a call)."""
        return [(child, None, 1) for child in node.children()]

    map_reduce = map_scan = map_external_call = map_call_output = _unshared
    # (leaves read nothing)
    map_input = map_const = map_param = map_iota = _unshared


#: :class:`Accesses` (it keeps no state)
accesses = Accesses()


def viewed(node: Node, index: list, inputs: Container = ()) -> tuple[Node, list]:
    """The node that views of *node* read at *index*, and where (a computed
    view, or one of a kernel's *inputs*, is read itself)."""
    while is_kind(node, "view") and not computed(node) and node not in inputs:
        [(node, index, _)] = accesses(node, index)
    return node, index


def concat_sources(node: Concat, index: list, inputs: Container = ()
                   ) -> list[tuple[Node, list, bool, list]]:
    """What computing the concatenation *node* at *index* reads, in order: the
    node read, its index, whether the read may be shared (a view of a value
    read inside its bounds), and the ranges along the axis where it applies.
    Parts viewing one value at the same index are one source; views among a
    kernel's *inputs* are read themselves."""
    sources: list = []
    found: dict[tuple, list] = {}
    offset = 0
    for arg in node.args:
        extent = arg.shape[node.axis]
        if extent:
            part_index = list(index)
            part_index[node.axis] = affine(-offset, 1, index[node.axis])
            base, base_index = viewed(arg, part_index, inputs)
            if base is not arg and within(base_index, base.shape):
                key = (base, tuple(base_index))
                if key not in found:
                    found[key] = [base, base_index, True, []]
                    sources.append(found[key])
                found[key][3].append((offset, offset + extent))
            else:
                sources.append([arg, part_index, False, [(offset, offset + extent)]])
        offset += extent
    return [tuple(source) for source in sources]


class OperandUses(NodeMapper[list]):
    """How many times the expression of a node repeats each read of
    :func:`accesses` (an elementwise template may name an operand twice)."""

    def map_map(self, node: Map) -> list[int]:
        if node.op == "astype":
            return [1] * len(node.args)
        template = ELEMENTWISE[node.op]
        return [max(1, template.count(f"{{{k}}}")) for k in range(len(node.args))]

    def _once(self, node) -> list[int]:
        return [1] * len(node.children())

    map_view = map_reshape = map_concat = map_gather = map_reduce = map_scan = _once
    map_external_call = map_call_output = map_input = map_const = map_param = _once
    map_iota = _once


#: :class:`OperandUses` (it keeps no state)
operand_uses = OperandUses()
