"""Storage planning: which nodes of a graph are stored (each then computed
by a kernel of its own) and why; every other node is inlined into the kernel
of the stored value that reads it, up to a size budget per kernel.

Public names: storage_plan, stored_nodes, row_reductions, StorageRule, RECOMPUTE_LIMIT,
NARROW_ROWS_LIMIT, EXPENSIVE_LIMIT, EXPENSIVE,
ROW_LIMIT, MIN_ROWS, KERNEL_BUDGET, PASTE_DEPTH, PASTE_WEIGHT.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lazyarray.graph import (
    Node,
    Reduce,
    computed,
    walk,
)
from lazyarray.mapper import NodeMapper, is_kind
from lazyarray.plan.accesses import accesses, operand_uses
from lazyarray.plan.indexing import out_index
from lazyarray.plan.layouts import MAX_GROUP, ROW_SLOTS, has_narrow_rows
from lazyarray.target import Target, default_target

#: per device kind: a computed node that would be evaluated this many times
#: per element of a stored value is stored itself (e.g. each step of an
#: unrolled stencil loop on a CPU). GPUs have compute to spare for memory
#: traffic saved: there a stencil step is recomputed inside the next one
#: (ten 5-point steps of 8192^2 on an H100: 5 kernels, 1.7 ms; 10 kernels,
#: 2.7 ms), on PoCL that is slower (2.7 against 2.5 ms for 768^2)
RECOMPUTE_LIMIT = {"cpu": 4, "gpu": 6}
#: ... and GPU values of rows of 2 to 4 elements (a work-item per row, see
#: :func:`~lazyarray.lower.tiles.has_narrow_rows`) read at this many elements
#: per element (a stencil's step; not what a reduction's argument is computed
#: from, as softmax's exponentials): there a fused step costs more than it
#: saves where it reads its input often (ten heat steps on an H200 over
#: 16777216x4, a step read 3.5 times per element: 1682 us in 5 kernels,
#: 1415 us in 10; over 8388608x3, 2.7 times: 471 us in 5, 611 us in 10)
NARROW_ROWS_LIMIT = 3
#: per device kind: the limit of :data:`RECOMPUTE_LIMIT` for an elementwise
#: node of an :data:`EXPENSIVE` operation. A value broadcast over a short axis
#: is read a few times per element (n-body's ``r2**-1.5`` over the three
#: coordinates): on PoCL its powers then cost more than storing it (256
#: bodies, 196,608 powers per step: 13 ms; 65,536 stored: 4 ms). Twice per
#: element stays fused (a softmax's exponentials, read by its sum and its
#: division in one row kernel).
EXPENSIVE_LIMIT = {"cpu": 3, "gpu": 6}
#: elementwise operations that cost tens of arithmetic operations each
EXPENSIVE = frozenset([
    "power", "float_power", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh",
    "tanh", "arcsinh", "arccosh", "arctanh", "hypot", "cbrt", "logaddexp",
    "logaddexp2"])


def storage_plan(root: Node, target: Target | None = None,
                 named: frozenset[Node] = frozenset()) -> list[tuple[Node, str]]:
    """The nodes whose values are stored, children before parents, each with
    the rule that stores it.

    Stored are: the root, every reduction, every external call
    (:mod:`lazyarray.calls`) with the arrays it reads, and every elementwise or
    concatenation node that fusing would evaluate at least the device kind's
    :data:`RECOMPUTE_LIMIT` times (on average) per element of the value that
    reads it, on *target* (by default lazyarray's device). Reads of one node
    at the same index in one kernel count once (the kernel computes the value
    once, see :class:`~lazyarray.lower.expr.Expr`).
    A computed value is also stored where inlining it would make a kernel's
    code larger than :data:`KERNEL_BUDGET` operations, or nest it deeper than
    :data:`PASTE_DEPTH` where no temporary can hold it. All other nodes are
    recomputed inside the kernel of the stored value that reads them.
    Nodes in *named* (values array handles hold, which later
    work reads again) are stored too.
    """
    if all(is_kind(c, "input", "const") for c in root.children()):
        return [(root, "result")]       # one operation on inputs (eager calls)
    kind = (target or default_target()).kind
    rule = StorageRule(kind)
    # (computed values are inputs: planning covers the new part of the graph)
    order = [n for n in walk(root, computed) if n is root or not computed(n)]
    # per node: the (kernel, index) pairs it is evaluated at (with the share of
    # the kernel's elements that evaluate it), and the number of evaluations
    # that are never shared (conditional, or inside a reduction)
    at: dict[Node, dict[tuple, float]] = {}
    unshared: dict[Node, float] = {}
    # per node: its evaluations in all where they are never shared (inside
    # reductions: once per element reduced, also along broadcast axes)
    unshared_total: dict[Node, float] = {}
    reasons: dict[Node, str] = {}
    # per kernel: the operations in its code; per node: per kernel, the copies
    # of its expression inlined without temporaries, and their deepest nesting
    size: dict[Node, int] = {}
    pasted: dict[Node, dict[Node, tuple[int, int]]] = {}
    reducing: set[Node] = set()
    whole = _inlined_sizes(order, named)
    reduced = _reduction_bodies(order) if kind == "gpu" else set()
    _evaluate_as_root(root, at, unshared)
    for node in reversed(order):            # consumers before producers
        count = sum(at.get(node, {}).values()) + unshared.get(node, 0)
        if node is root:
            reasons[node] = "result"
        elif node in named:
            reasons[node] = "held by an array"
        else:
            # (a kernel computes a value read at one index once, also along the
            # axes it is broadcast over: per element, at most once per index)
            evaluations = (unshared_total.get(node, 0) / max(1, _elements(node))
                           + sum(at.get(node, {}).values()))
            reason = rule(node, _Reads(count, evaluations,
                                       at.get(node, {}), pasted.get(node, {}),
                                       size, reducing, node in reduced))
            if reason:
                reasons[node] = reason
        if is_kind(node, "external_call", "call_output"):
            # a call of a kernel lazyarray did not write (lazyarray.calls)
            # reads whole arrays: they are stored before it runs
            reasons.setdefault(node, "external call")
            for child in node.children():
                if not computed(child) and not is_kind(child, "const", "param"):
                    reasons.setdefault(child, "read whole by an external call")
        if node in reasons:
            if node is not root:
                _evaluate_as_root(node, at, unshared)
            size[node] = _operations(node)
            pasted[node] = {}
            if is_kind(node, "reduce", "scan"):
                reducing.add(node)
                pasted[node] = {node: (1, 0)}
                # (a long body is computed elementwise, where values are shared)
                if is_kind(node.arg, "map", "concat", "gather") and not computed(node.arg) \
                        and whole[node.arg] * PASTE_WEIGHT > KERNEL_BUDGET:
                    reasons[node.arg] = ("size budget: the body of a reduction, over "
                                             f"{KERNEL_BUDGET // PASTE_WEIGHT} operations")
        else:
            for kernel, copies in _copies(at.get(node, ()), pasted.get(node, {}),
                                          reducing):
                size[kernel] += copies * _operations(node)
        for (kernel, index), weight in at.get(node, {}).items():
            for child, child_index, share in accesses(node, list(index)):
                if child_index is None:
                    unshared[child] = unshared.get(child, 0) + weight * share
                    unshared_total[child] = (unshared_total.get(child, 0)
                                             + weight * share * _elements(kernel))
                    _paste(pasted, child, kernel, 1, 1)
                else:
                    key = (kernel, tuple(child_index))
                    reads = at.setdefault(child, {})
                    reads[key] = min(1, reads.get(key, 0) + weight * share)
        times = unshared.get(node, 0)
        if times:
            # (a stored reduction evaluates its argument once per element of it)
            total = (_elements(node.arg) if node in reasons and is_kind(node, "reduce", "scan")
                     else unshared_total.get(node, 0))
            for child, _, share in accesses(node, out_index(node)):
                unshared[child] = unshared.get(child, 0) + times * share
                unshared_total[child] = unshared_total.get(child, 0) + total * share
        for kernel, (copies, depth) in pasted.get(node, {}).items():
            for (child, _, _), uses in zip(accesses(node, out_index(node)),
                                           operand_uses(node)):
                _paste(pasted, child, kernel, copies * uses, depth + 1)
    absorbed = row_reductions(root, {k for k in reasons if k != root}, ROW_LIMIT[kind],
                              size)
    if absorbed:
        ops = ", ".join(getattr(n, "op", "") for n in order if n in absorbed)
        reasons[root] += f" (row kernel: {ops} per row)"
    return [(n, reasons[n]) for n in order
            if n in reasons and n not in absorbed]


class _Reads(NamedTuple):
    """How a node not stored yet is read where the plan stands: *times*
    evaluations per element of the stored values reading it, *evaluations*
    per element of its own (more than *times* where a reduction reads it
    broadcast: once per element reduced), its (kernel,
    index) pairs *at*, its inlined copies *pasted*, the kernels' code
    sizes *size*, the kernels of reductions and scans *reducing*, and whether
    a reduction's argument is computed from it (*in_reduction*)."""

    times: float
    evaluations: float
    at: dict
    pasted: dict
    size: dict
    reducing: set[Node]
    in_reduction: bool


class StorageRule(NodeMapper[str | None]):
    """Why a node that is neither the result nor held by an array is stored
    (None: it is recomputed where it is read), by its kind, on a device of
    *kind* (``"cpu"``, ``"gpu"``)."""

    def __init__(self, kind: str):
        self.kind = kind
        self.limit = RECOMPUTE_LIMIT[kind]
        self.expensive_limit = EXPENSIVE_LIMIT[kind]

    def map_reduce(self, node: Node, reads: _Reads) -> str | None:
        return "reduction"

    def map_scan(self, node: Node, reads: _Reads) -> str | None:
        return "scan"

    def map_map(self, node: Node, reads: _Reads) -> str | None:
        op = node.op                    # type: ignore[attr-defined]
        if op == "_stored":
            return "an operand a product reads as both of its operands"
        if op == "_packed" and self.kind == "cpu":
            return "a product's operand read across its rows (packed for vector loads)"
        return self.map_concat(node, reads)

    def map_concat(self, node: Node, reads: _Reads) -> str | None:
        count = reads.times
        if count >= self.limit:
            return f"recompute rule: read {count:.3g} times per element (limit {self.limit})"
        if is_kind(node, "map") and node.op in EXPENSIVE \
                and reads.evaluations >= self.expensive_limit:
            return (f"recompute rule: {node.op} evaluated {reads.evaluations:.3g} times per "
                    f"element (limit {self.expensive_limit})")
        if self.kind == "gpu" and count >= NARROW_ROWS_LIMIT and not reads.in_reduction \
                and has_narrow_rows(node.shape):
            return (f"recompute rule: read {count:.3g} times per element "
                    f"of short rows (limit {NARROW_ROWS_LIMIT})")
        return self.map_gather(node, reads)

    def map_gather(self, node: Node, reads: _Reads) -> str | None:
        return _over_budget(node, reads.at, reads.pasted, reads.size, reads.reducing)

    def _read_where_used(self, node: Node, reads: _Reads) -> str | None:
        return None

    # (views, constants, ranges and inputs are read where they are used;
    # external calls are stored by the rule of calls in :func:`storage_plan`)
    map_view = map_reshape = map_iota = map_const = map_param = map_input = _read_where_used
    map_external_call = map_call_output = _read_where_used


def _reduction_bodies(order: list[Node]) -> set[Node]:
    """The nodes of *order* that the argument of one of its
    reductions is computed from (up to other reductions)."""
    found: set[Node] = set()
    stack = [n.arg for n in order if is_kind(n, "reduce")]
    while stack:
        node = stack.pop()
        if node in found or computed(node) or is_kind(node, "reduce", "scan"):
            continue
        found.add(node)
        stack.extend(node.children())
    return found


#: the most operations one kernel computes: a value whose inlining would make
#: a kernel larger is stored (the code stays linear in the graph's size)
KERNEL_BUDGET = 1024
#: the deepest that operations nest where no temporary can hold a value
#: (inside reductions, gathered and conditional reads: the copies multiply)
PASTE_DEPTH = 24
#: such operations count this many times against the budget of a reduction
#: (its layouts repeat its body: vector lanes, tails)
PASTE_WEIGHT = 16


def _inlined_sizes(order: list[Node], named: frozenset[Node] = frozenset()
                   ) -> dict[Node, int]:
    """Per node of *order* (producers first): the operations of its expression
    inlined whole, without temporaries (at most :data:`KERNEL_BUDGET` + 1);
    the nodes in *named* are stored, read as inputs."""
    whole: dict[Node, int] = {}
    for node in order:
        if node in named:
            whole[node] = 0
            continue
        reads = zip(accesses(node, out_index(node)), operand_uses(node))
        whole[node] = min(KERNEL_BUDGET + 1, _operations(node) + sum(
            uses * whole.get(child, 0) for (child, _, _), uses in reads))
    return whole


def _elements(node: Node) -> int:
    """The number of elements of *node*'s value."""
    count = 1
    for n in node.shape:
        count *= n
    return count


def _operations(node: Node) -> int:
    """The operations computing *node* adds to a kernel's code, counting the
    reads of its operands."""
    if is_kind(node, "view", "const", "input"):
        return 0
    return 1 + sum(operand_uses(node))


def _copies(keys, pasted: dict, reducing: set[Node]) -> list[tuple[Node, int]]:
    """Per kernel: how many copies of a node's expression its code holds, from
    the node's (kernel, index) pairs and its inlined copies *pasted* (weighed
    by :data:`PASTE_WEIGHT` in the kernels of reductions and scans,
    *reducing*)."""
    copies: dict[Node, int] = {}
    for kernel, _ in keys:
        copies[kernel] = copies.get(kernel, 0) + 1
    for kernel, (n, _) in pasted.items():
        weight = PASTE_WEIGHT if kernel in reducing else 1
        copies[kernel] = copies.get(kernel, 0) + n * weight
    return list(copies.items())


def _over_budget(node: Node, keys, pasted: dict, size: dict, reducing: set[Node]) -> str | None:
    """Why inlining *node* into the kernels that read it breaks the size
    budget, or None if it does not."""
    for kernel, copies in _copies(keys, pasted, reducing):
        if size[kernel] + copies * _operations(node) > KERNEL_BUDGET:
            return f"size budget: a kernel would compute over {KERNEL_BUDGET} operations"
    depth = max((d for _, d in pasted.values()), default=0)
    if depth > PASTE_DEPTH:
        return f"size budget: inlined {depth} operations deep (limit {PASTE_DEPTH})"
    return None


def _paste(pasted: dict, node: Node, kernel: Node, copies: int, depth: int) -> None:
    """Record *copies* more copies of *node*'s expression, nested *depth*
    operations deep, in the code of *kernel*."""
    mine = pasted.setdefault(node, {})
    n, d = mine.get(kernel, (0, 0))
    mine[kernel] = (n + copies, max(d, depth))


def _evaluate_as_root(node: Node, at: dict, unshared: dict) -> None:
    """Record that *node* is computed once per element by a kernel of its own."""
    if is_kind(node, "reduce", "scan"):
        at[node], unshared[node] = {}, 1
    else:
        at[node], unshared[node] = {(node, tuple(out_index(node))): 1}, 0


#: per device kind: rows up to this many elements are reduced inside the
#: kernel that uses them (GPUs: as many as a row kernel's registers hold)
ROW_LIMIT = {"cpu": 8192, "gpu": MAX_GROUP * ROW_SLOTS}
#: ... when there are at least this many rows to spread over work-items
MIN_ROWS = 64


def row_reductions(root: Node, stored: set[Node], limit: int,
                   size: dict[Node, int] | None = None) -> set[Node]:
    """Reductions that the kernel of *root* computes itself, once per row, into
    private temporaries (``x / x.sum(axis=-1, keepdims=True)``: one kernel).

    On CPUs one work-item computes a row; on GPUs a work-group does, or
    part of one for rows under 256 elements, down to one work-item
    (:func:`~lazyarray.lower.reduction.row_layout`).

    A reduction qualifies when it reduces the last axis and keeps its
    dimensions, its kept axes have
    *root*'s extents, its rows are at most *limit* long and many
    (:data:`MIN_ROWS`), and *root* reads it only through elementwise
    operations (possibly inside other such reductions). With the kernels'
    code sizes *size* (kernel root -> operations), reductions are absorbed
    only while *root*'s kernel stays within :data:`KERNEL_BUDGET`.
    """
    if is_kind(root, "reduce", "scan") or root.ndim == 0:
        return set()

    def fits(d: Reduce) -> bool:
        row = int(np.prod([d.arg.shape[a] for a in d.axes], dtype=np.int64))
        rows = int(np.prod([root.shape[k] for k in range(root.ndim) if k not in d.axes],
                           dtype=np.int64))
        return (d.keepdims and d.ndim == root.ndim and d.op in _ROW_OPS
                and d.axes == (root.ndim - 1,)
                and d.arg.shape == root.shape and 0 < row <= limit
                and rows >= MIN_ROWS)

    region: set[Node] = {root}
    found: dict[Node, Reduce] = {}
    stack = [root]
    while stack:
        for child in stack.pop().children():
            if child in region or computed(child) or (child in stored and not (
                    is_kind(child, "reduce") and fits(child))):
                continue
            if is_kind(child, "map") or (is_kind(child, "reduce") and fits(child)):
                if is_kind(child, "reduce"):
                    found[child] = child
                region.add(child)
                stack.append(child)
    if not found:
        return set()
    # every reader of an absorbed reduction must be inside the kernel, and no
    # other stored value's kernel may read it (it would not be stored)
    parents: dict[Node, list[Node]] = {}
    nodes = [n for n in walk(root, computed) if n is root or not computed(n)]
    for n in nodes:
        for child in n.children():
            parents.setdefault(child, []).append(n)
    absorbed = {k for k in found if all(p in region for p in parents.get(k, []))}
    if size is not None:
        total = size.get(root, 0)
        for k in found:
            if k in absorbed and total + size.get(k, 0) > KERNEL_BUDGET:
                absorbed.discard(k)
            elif k in absorbed:
                total += size.get(k, 0)
    changed = True
    while changed and absorbed:
        changed = False
        for other in nodes:
            if other in stored and other not in absorbed:
                dropped = absorbed & _read_by(other, stored)
                if dropped:
                    absorbed -= dropped
                    changed = True
    return absorbed


def _read_by(node: Node, stored: set[Node]) -> set[Node]:
    """The stored values that the kernel computing *node* reads."""
    def read(n: Node) -> bool:
        return n is not node and n in stored

    return {n for n in walk(node, read) if read(n)}


_ROW_OPS = ("sum", "product", "max", "min")


def stored_nodes(root: Node, target: Target | None = None,
                 named: frozenset[Node] = frozenset()) -> list[Node]:
    """The nodes of :func:`storage_plan`."""
    return [n for n, _ in storage_plan(root, target, named)]
