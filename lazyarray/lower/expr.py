"""Expressions of elementwise subgraphs, as kernelcore expressions.

A kernel computes one stored node; the nodes between it and its stored
inputs are inlined into its expression. A value the kernel reads more than
once at the same index, or one deep in a long chain, becomes a private
temporary computed once, so that a kernel's code grows with the number of
values it computes, not with the number of ways they are read.

Public names: Expr, row_operands, TEMP_DEPTH.
"""

from __future__ import annotations

from collections.abc import Container
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
import pymbolic.primitives as prim

import kernelcore as lp
from kernelcore import Reduction, TypeCast, parse_expression, substitute
from lazyarray.graph import Concat, Const, Gather, Iota, Map, Node, Reduce, Reshape, View
from lazyarray.lower.intervals import Range, value_range
from lazyarray.lower.ir import assignment, bounds, box, domain
from lazyarray.lower.reduction import CPU_REDUCTION_LANES, combine, kernel_reduction
from lazyarray.mapper import NodeMapper, is_kind
from lazyarray.plan.accesses import accesses, concat_sources, operand_uses
from lazyarray.plan.indexing import index_expr
from lazyarray.plan.inputs import KernelInput
from lazyarray.ufunc_templates import ELEMENTWISE

if TYPE_CHECKING:
    import islpy as isl

#: a computed value whose expression would nest deeper than this many
#: operations is held in a private temporary (deeply nested expressions are
#: slow to process and overflow recursive code generators)
TEMP_DEPTH = 16


def _conditional_parts(node: Node, index, inputs: Container) -> list[tuple[Node, list]]:
    """The parts of concatenation *node* read only where they apply, each
    with its index (none for other nodes; a kernel's *inputs* read themselves)."""
    if not is_kind(node, "concat"):
        return []
    return [(read, read_index) for read, read_index, shared, _
            in concat_sources(node, list(index), inputs) if not shared]


def _literal(c: Const):
    """The value of *c*: a Python number where it is weak (or a bool), else
    converted to its type."""
    v = c.value.item()
    if isinstance(v, bool) or c.weak:
        return v
    return TypeCast(c.dtype, v)


@cache
def _template(op: str) -> prim.Expression:
    """The expression of elementwise operation *op* (see
    :data:`~lazyarray.ops.elementwise.ELEMENTWISE`) over the operands
    ``_op0, _op1, _op2``."""
    return parse_expression(ELEMENTWISE[op].format("_op0", "_op1", "_op2"))


def _apply(op: str, operands: list) -> prim.Expression:
    """Elementwise operation *op* of *operands* (expressions)."""
    return substitute(_template(op), {f"_op{k}": v for k, v in enumerate(operands)})


def row_operands(reductions: list[Reduce], inputs: dict) -> set[Node]:
    """Ids of the values that row *reductions* read at their own positions:
    their arguments, and the inputs they read through elementwise operations
    of the same shape (``x`` in ``(x*x).sum(axis=-1)``)."""
    found = {r.arg for r in reductions}
    seen: set[Node] = set()
    stack = [r.arg for r in reductions]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node in inputs:
            found.add(node)
        elif is_kind(node, "map"):
            stack.extend(c for c in node.args if c.shape == node.shape)
    return found


class Expr(NodeMapper[prim.ExpressionNode]):
    """Kernelcore expressions and statements computing elementwise subgraphs.

    Once told what it computes (:meth:`compute`), a value the kernel reads
    more than once at the same index (counting the repeats of an operand in
    an operation's spelling, as in NaN-propagating ``maximum``), or one whose
    expression would nest deeper than :data:`TEMP_DEPTH`, becomes a private
    temporary computed once. With *row_lanes* (CPUs), a value that a row
    reduction reduces and the result also reads (softmax's exponentials) is
    computed once per element into a private row array, and its reductions
    over long rows keep two vectors of running results. With *row_group*
    (GPUs: the work-items sharing a row), such values and the inputs read
    that way are held in registers: each work-item keeps the row's elements
    it owns (every *row_group*-th), so that the row is read from memory once.
    """

    def __init__(self, inputs: dict[Node, KernelInput], row_lanes: int | None = None,
                 row_group: int | None = None, fixed: dict[Node, Range] | None = None):
        self.inputs = inputs        # stored node -> its KernelInput
        #: value ranges of inputs whose values never change (a compiled
        #: program's integer constants): gathers by them are not wrapped
        self.fixed = fixed or {}
        self.shared: dict = {}      # (node, index) -> reads in shareable places
        self.out_index: tuple = ()
        self.inames: list[str] = []             # the loops of the output's elements
        self.row_arrays: dict[Node, prim.Variable] = {}  # node -> its private row array
        self.row_insns: list = []               # row temporaries' statements, in order
        self.row_temps: dict[Node, prim.Variable] = {}  # reduction -> private temporary
        self.cse_insns: list = []               # shared values' statements, in order
        self.row_domains: list[isl.BasicSet] = []
        self.row_lanes = row_lanes
        self.row_group = row_group
        self._positions: dict = {}  # GPU row position -> (slot, work-item) inames
        self._row_count = 0
        self._filling: set[Node] = set()        # row arrays being filled
        self.row_tags: dict[str, str] = {}      # iname tags of the row reductions
        self.row_temporaries: list = []         # their lanes and row arrays
        self.row_splits: list[str] = []         # row array inames to walk in lanes
        self.row_vectors: list[str] = []        # reduction lanes to walk in two vectors
        self.reduced: set[Node] = set()         # what row reductions read per element
        self.shape_of_out: tuple | None = None
        self._temps: dict[tuple, prim.Variable] = {}  # (node, index) -> its temporary
        self._temp_keys: set[tuple] = set()     # the (node, index) pairs to hold
        self._unshared = 0                      # > 0: inside a conditional or a reduction
        self._in_rows = 0                       # > 0: inside a row temporary's instruction
        self._elementwise = False               # computing an output elementwise (compute)

    def __call__(self, node: Node, index: list) -> prim.Expression:
        held = self._held(node, index)
        if held is not None:
            return held
        if node in self.inputs:
            read = self.inputs[node]
            name = prim.Variable(read.name)
            if read.scalar:
                # (typed as its node: kernelcore types scalar arguments weakly,
                # as it types Python numbers)
                return TypeCast(node.dtype, name)
            return prim.Subscript(name, tuple(index_expr(i) for i in index) or (0,))
        key = (node, tuple(index))
        if key in self._temps and not self._in_rows:
            return self._temps[key]     # (computed for every element, also where conditional)
        if self._unshared or key not in self._temp_keys:
            return self._value(node, index)
        name = self._temps[key] = self._private(node.dtype, self._value(node, index))
        return name

    def _private(self, dtype: np.dtype, value: prim.Expression) -> prim.Variable:
        """A private temporary of type *dtype* holding *value*, computed once
        per element of the output."""
        name = prim.Variable(f"cse{len(self.cse_insns)}")
        self.cse_insns.append(assignment(name, value, dtype, self.inames or None))
        return name

    def _value(self, node: Node, index: list) -> prim.Expression:
        """The expression of *node* at *index* (by its kind's ``map_`` method:
        inputs, parameters and scans are always read, never computed here)."""
        return NodeMapper.__call__(self, node, index)

    def map_const(self, node: Const, index: list) -> prim.Expression:
        return _literal(node)

    def map_view(self, node: View | Reshape, index: list) -> prim.Expression:
        [(arg, arg_index, _)] = accesses(node, index)
        return self(arg, arg_index)

    map_reshape = map_view

    def map_iota(self, node: Iota, index: list) -> prim.Expression:
        return TypeCast(np.dtype(np.int64), index_expr(index[node.axis]))

    def map_map(self, node: Map, index: list) -> prim.Expression:
        parts = [self(a, a_index) for a, a_index, _ in accesses(node, index)]
        if node.op == "astype":
            return _converted(node.args[0].dtype, node.dtype, parts[0])
        return TypeCast(node.dtype, _apply(node.op, parts))

    def _unshared_read(self, node: Node, index: list, rows: bool = False) -> str:
        """*node* at *index* where values are not shared: conditionally, or
        (*rows*) in the instruction of a row temporary, outside the loops of
        the output's elements."""
        self._unshared += 1
        self._in_rows += rows
        try:
            return self(node, index)
        finally:
            self._unshared -= 1
            self._in_rows -= rows

    def _held(self, node: Node, index: list) -> prim.Expression | None:
        """*node* at *index* read from its row array, if it has (or, read
        at the output's index, gets) one and this work-item holds that
        element; else None."""
        if not index or len(index) != len(self.out_index) \
                or list(index[:-1]) != list(self.out_index[:-1]) or node in self._filling:
            return None
        position = index_expr(index[-1])
        at_output = not self._unshared and tuple(index) == self.out_index
        if node not in self.row_arrays and not (
                (at_output or position in self._positions) and self._in_row_array(node)):
            return None
        if self.row_group is not None and position not in self._positions:
            return None
        return prim.Subscript(self._row_array(node), (self._slot(position),))

    def _slot(self, position: prim.Expression) -> prim.Expression:
        """The index of the element at *position* in a row array: the position
        on a CPU, the work-item's slot on a GPU."""
        if position in self._positions:
            return prim.Variable(self._positions[position][0])
        return position

    def _in_row_array(self, node: Node) -> bool:
        """Whether *node* is kept in a row array: it is computed (a Map; on a
        GPU also an input), a row reduction of this kernel reads it per element
        (:attr:`reduced`), and the result reads it at its own index."""
        if node in self.row_arrays:
            return True
        if self.row_group is not None:
            kept = is_kind(node, "map") or node in self.inputs
        else:
            kept = self.row_lanes is not None and is_kind(node, "map")
        return (kept and node.shape == self.shape_of_out and node in self.reduced
                and self.shared.get((node, self.out_index), 0) > 0)

    def row_position(self, outer: str, inner: str, extent: int) -> prim.Expression:
        """A GPU row kernel's position ``group*outer + inner`` along a row of
        *extent* elements: *inner* are the work-items of the row, *outer* (a
        loop unrolled, so that row arrays stay in registers) the slot of each
        work-item's row arrays (the only work-item of its row: *inner* is
        0)."""
        group = self.row_group
        assert group is not None
        self.row_domains.append(domain(
            [outer, inner], *bounds(inner, group), {outer: 1},
            {outer: -group, inner: -1, 1: extent - 1}))
        self.row_tags.update({inner: "l.0" if group > 1 else "unr", outer: "unr"})
        position = prim.Sum((prim.Product((group, prim.Variable(outer))), prim.Variable(inner)))
        self._positions[position] = (outer, inner)
        return position

    def compute(self, node: Node, index: list, reduced: set[Node]) -> None:
        """Prepare to compute *node* elementwise at *index* (inames, or row
        positions), whose region's row reductions reduce the nodes *reduced*:
        decide which values become temporaries, and compute them (producers
        first, so that no expression nests deeper than :data:`TEMP_DEPTH`)."""
        self.out_index = tuple(index)
        self._elementwise = True
        positions = [index_expr(k) for k in index]
        # (a row position stands for its two inames; an iname's name is read
        # only when it is not one)
        self.inames = [i for k in positions
                       for i in (self._positions[k] if k in self._positions  # noqa: SIM401
                                 else (k.name,))]
        self.shape_of_out = node.shape
        self.reduced = reduced
        order, reads, counts = self._shared_reads(node, index)
        depth: dict[tuple, int] = {}
        for key, value, at in order:
            below = max((depth.get(r, 0) for r in reads[key] if r not in self._temp_keys),
                        default=0)
            depth[key] = below + 1
            if self._may_hold(value, at) and (
                    counts[key] >= 2 or depth[key] > TEMP_DEPTH):
                self._temp_keys.add(key)
        for key, value, at in order:
            if key in self._temp_keys:
                self(value, list(at))

    def _may_hold(self, node: Node, index: tuple) -> bool:
        """Whether *node* at *index* may become a temporary: a computed value
        that is not read from a row array."""
        return (is_kind(node, "map", "concat", "gather", "view", "reshape")
                and node not in self.inputs
                and not (index == self.out_index and self._in_row_array(node)))

    def _shared_reads(self, root: Node, index: list) -> tuple[list, dict, dict]:
        """Which (node, index) pairs that could be shared (see
        :func:`accesses`) computing *root* at *index* reaches (kept in
        :attr:`shared`), and, apart from those reached only through row
        arrays: the pairs producers first, as ``(key, node, index)``, the
        keys each one reads, and how many times each is read."""
        reached: dict[tuple, int] = {}
        self.shared = reached
        counts: dict[tuple, int] = {}
        reads: dict[tuple, list] = {}
        order: list = []
        stack: list = [(root, tuple(index), 1, True, False)]
        while stack:
            node, at, times, direct, done = stack.pop()
            key = (node, at)
            if done:
                order.append((key, node, at))
                continue
            first = key not in reached
            reached[key] = reached.get(key, 0) + times
            first_direct = direct and key not in counts
            if direct:
                counts[key] = counts.get(key, 0) + times
            if node in self.inputs or is_kind(node, "const") \
                    or not (first or first_direct):
                continue
            # (a value read from a row array is computed where the array is filled)
            below = first_direct and not (at == self.out_index and self._in_row_array(node))
            if first_direct:
                reads[key] = []
                stack.append((node, at, 0, True, True))
            for (child, child_index, _), uses in zip(accesses(node, list(at)),
                                                     operand_uses(node)):
                if child_index is None:
                    continue
                if below:
                    reads[key].append((child, tuple(child_index)))
                if below or first:
                    stack.append((child, tuple(child_index), uses, below, False))
        # a value also read where a concatenation's part applies is computed
        # once for both (the part's expression reads the temporary)
        pending = [read for _, node, at in order
                   for read in _conditional_parts(node, at, self.inputs)]
        seen: set[tuple] = set()
        while pending:
            node, at = pending.pop()
            key = (node, tuple(at))
            if key in counts:
                counts[key] += 1
            elif key not in seen and node not in self.inputs:
                seen.add(key)
                pending += [(child, child_index) for child, child_index, _
                            in accesses(node, list(at)) if child_index is not None]
                pending += _conditional_parts(node, at, self.inputs)
        return order, reads, counts

    def _row_array(self, node: Node) -> prim.Variable:
        """The private row array holding *node* along the current row (on a
        GPU, the elements this work-item owns)."""
        name = self.row_arrays.get(node)
        if name is None:
            k = self._row_count
            self._row_count += 1
            name = prim.Variable(f"rowvals{k}")
            extent = node.shape[-1]
            if self.row_group is None:
                j = slot = prim.Variable(f"rv{k}")
                self.row_domains.append(box(j.name, extent))
                self.row_splits.append(j.name)
                shape = (extent,)
            else:
                slot = prim.Variable(f"rv{k}_o")
                j = self.row_position(slot.name, f"rv{k}_l", extent)
                shape = (-(-extent // self.row_group),)
            self.row_temporaries.append(lp.TemporaryVariable(
                name.name, node.dtype, shape=shape, address_space="private"))
            self._filling.add(node)     # the fill reads *node* itself
            body = self._unshared_read(node, [*self.out_index[:-1], j], rows=True)
            self._filling.remove(node)
            self.row_arrays[node] = name
            self.row_insns.append(assignment(prim.Subscript(name, (slot,)), body,
                                             inames=self._row_inames()))
        return name

    def _row_inames(self) -> list[str] | None:
        """The inames of the rows, in which a GPU row kernel's row statements
        lie (a work-group may hold several rows: its local trees need them);
        None (those of the indices used) on a CPU."""
        if self.row_group is None:
            return None
        return [i.name for i in map(index_expr, self.out_index[:-1])
                if isinstance(i, prim.Variable)]

    def map_reduce(self, node: Reduce, index: list) -> prim.Variable:
        """A reduction absorbed into this kernel (see :func:`row_reductions`):
        a private temporary computed once per row; with *row_lanes*, the row
        is walked in that many interleaved lanes (vector registers on a CPU)
        and a sequential tail."""
        name = self.row_temps.get(node)
        if name is not None:
            return name
        k = len(self.row_temps)
        name = self.row_temps[node] = prim.Variable(f"row{k}")
        [axis] = node.axes
        extent, op = node.arg.shape[axis], kernel_reduction(node)

        in_array = (list(index[:-1]) == list(self.out_index[:-1])
                    and self._in_row_array(node.arg))

        def body(position: prim.Expression) -> prim.Expression:
            if in_array:
                return prim.Subscript(self._row_array(node.arg), (self._slot(position),))
            return self._unshared_read(node.arg, [position if a == axis else index[a]
                                                  for a in range(node.arg.ndim)], rows=True)

        def loop(iname: str, n: int) -> str:
            self.row_domains.append(box(iname, n))
            return iname

        def declared(var: prim.Variable, value: prim.Expression) -> None:
            self.row_insns.append(assignment(var, value, node.dtype, self._row_inames()))

        if self.row_group is not None:
            o, v = f"r{k}_o", f"r{k}_l"
            position = self.row_position(o, v, extent)
            declared(name, Reduction(op, (o, v), body(position)))
            return name
        lanes = self.row_lanes
        if not lanes or extent < 2 * lanes:
            r = loop(f"r{k}_{axis}", extent)
            declared(name, Reduction(op, (r,), body(prim.Variable(r))))
            return name
        wide = extent >= 2 * CPU_REDUCTION_LANES
        lanes = CPU_REDUCTION_LANES if wide else lanes
        count = extent // lanes
        o, v, w = loop(f"r{k}_o", count), loop(f"r{k}_v", lanes), loop(f"r{k}_w", lanes)
        if wide:
            self.row_vectors.append(v)
        else:
            self.row_tags[v] = "vec"
        part = prim.Variable(f"{name.name}_lanes")
        self.row_temporaries.append(
            lp.TemporaryVariable(part.name, node.dtype, shape=(lanes,), address_space="private"))
        lane = prim.Sum((prim.Product((lanes, prim.Variable(o))), prim.Variable(v)))
        self.row_insns.append(assignment(prim.Subscript(part, (prim.Variable(v),)),
                                         Reduction(op, (o,), body(lane))))
        total = Reduction(op, (w,), prim.Subscript(part, (prim.Variable(w),)))
        if count * lanes < extent:
            t = loop(f"r{k}_t", extent - count * lanes)
            whole, tail = prim.Variable(f"{name.name}_body"), prim.Variable(f"{name.name}_tail")
            declared(whole, total)
            declared(tail, Reduction(op, (t,), body(prim.Sum((count * lanes, prim.Variable(t))))))
            total = combine(op, whole, tail)
        declared(name, total)
        return name

    def map_gather(self, node: Gather, index: list) -> prim.Expression:
        """*arg* read at the gathered position (negative indices count from
        the end, as in NumPy: the index modulo the extent, which also keeps a
        changed index array, a jitted function's argument, from reading
        outside the array; the indices were checked when the gather was
        made)."""
        k, m = node.axis, node.indices.ndim
        extent = max(node.arg.shape[k], 1)
        int64 = np.dtype(np.int64)
        read = self(node.indices, index[k:k + m])
        known = value_range(node.indices, self.fixed) if self.fixed else None
        position: prim.Expression
        if known is not None and known[0] >= 0 and known[1] < min(extent, 2**32):
            # (through uint32: kernelcore then knows the position is not negative)
            position = TypeCast(int64, TypeCast(np.dtype(np.uint32), read))
        else:
            position = prim.Remainder(TypeCast(int64, read), extent)
        if self._elementwise and not self._unshared:
            position = self._private(int64, position)
        return self._unshared_read(node.arg, index[:k] + [position] + index[k + m:])

    def map_concat(self, node: Concat, index: list) -> prim.Expression:
        """Each part read where the index along the axis falls into it (by
        bisection, so that the choices nest as deep as the logarithm of their
        number, where each source is one part)."""
        var = index_expr(index[node.axis])
        extent = node.shape[node.axis]
        sources = []
        for read, read_index, shared, ranges in concat_sources(node, index, self.inputs):
            value = self(read, read_index) if shared else self._unshared_read(read, read_index)
            sources.append((TypeCast(node.dtype, value), ranges))
        if all(len(ranges) == 1 for _, ranges in sources):
            def choice(low: int, high: int) -> prim.Expression:
                if high - low == 1:
                    return sources[low][0]
                middle = (low + high) // 2
                return prim.If(prim.Comparison(var, "<", sources[middle][1][0][0]),
                               choice(low, middle), choice(middle, high))

            return choice(0, len(sources))
        # (joined views of one value, as after x[:, 3] = v: the value most of
        # the elements read is the last choice)
        last = max(range(len(sources)), key=lambda k: sum(b - a for a, b in sources[k][1]))
        expr: prim.Expression = sources[last][0]
        for value, ranges in reversed([s for k, s in enumerate(sources) if k != last]):
            expr = prim.If(_ranges_test(var, ranges, extent), value, expr)
        return expr


def _ranges_test(var: prim.Expression, ranges: list[tuple[int, int]], extent: int
                 ) -> prim.Expression:
    """A test that *var* (from 0 to *extent*) falls into one of *ranges*."""
    tests = []
    for low, high in ranges:
        bounds = ([prim.Comparison(var, ">=", low)] if low > 0 else []) + (
            [prim.Comparison(var, "<", high)] if high < extent else [])
        tests.append(bounds[0] if len(bounds) == 1 else prim.LogicalAnd(tuple(bounds))
                     if bounds else True)
    return tests[0] if len(tests) == 1 else prim.LogicalOr(tuple(tests))


def _converted(source: np.dtype, dtype: np.dtype, value: prim.Expression) -> prim.Expression:
    """*value* of *source* converted to *dtype*; floats become narrow integers
    through int32 (uint32 through int64), as NumPy's casts do on x86, so that
    values beyond the narrow type wrap (C leaves them undefined: a fused
    kernel could keep -2.0 as a uint8 -2)."""
    if source.kind == "f" and dtype.kind in "iu" and dtype.itemsize <= 4 \
            and dtype != np.int32:
        wide = np.dtype(np.int64 if dtype == np.uint32 else np.int32)
        return TypeCast(dtype, TypeCast(wide, value))
    return TypeCast(dtype, value)
