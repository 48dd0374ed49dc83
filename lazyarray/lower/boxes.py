"""Box kernels, generic over shapes and offsets: a stored value of up to
:data:`~lazyarray.lower.flat.FLAT_RANGE_LIMIT` elements computed elementwise
from boxes of arrays (views of ranges along each axis, ``u[1:-1, 2:]``,
``u[::2, :3]``, new axes, fixed indices), rows or elements picked by index
arrays (``X[idx]``, ``X[mask]``), joins (``np.concatenate``,
``np.roll``, ``np.pad``, the values a slice assignment makes, ``p[1:-1, 1:-1]
= ...`` followed by boundary rows and columns), broadcasts and positions
(``arange``), or a reduction of all the elements of such a value.

Every extent, every view's start or fixed index and every place where a
join's part begins is an argument of the kernel; its code holds only the
operations, the dtypes, the numbers of axes, the steps of views, which
axes are broadcast, and how the values are wired. So a 2-D stencil on a new
grid, a window at a new place or of a new size, a roll by another shift
reuse the kernel.

An elementwise box kernel runs one work-item per element, over a grid of
rows (the leading axes together, :data:`~lazyarray.lower.flat.BOX_ROWS`)
times the last axis (:data:`~lazyarray.lower.flat.SIZE_ARGUMENT`); a
reduction is one work-group, as a flat one.

Public names: box_plan, build_box_kernel.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pymbolic.primitives as prim

import kernelcore as lp
from kernelcore import INDEX_LIMIT, Reduction, TypeCast, make_loop_kernel
from lazyarray.graph import Concat, Gather, Map, Node, Reduce, View, walk
from lazyarray.lower.expr import Expr
from lazyarray.lower.flat import (
    _FLAT_REDUCTIONS,
    _VECTOR_FUNCTIONS,
    BOX_ARGUMENTS,
    BOX_PREFIX,
    BOX_ROWS,
    FLAT_GROUP,
    FLAT_RANGE_LIMIT,
    FLAT_REDUCTION_LIMIT,
    REDUCED_ARGUMENT,
    SIZE_ARGUMENT,
    _reduction_kernel,
    _region,
)
from lazyarray.lower.ir import assignment, domain
from lazyarray.lower.reduction import kernel_reduction
from lazyarray.mapper import is_kind
from lazyarray.plan.inputs import KernelInput
from lazyarray.target import Target

#: the most axes a box kernel's value has (rows and columns: PoCL 5's
#: vectorized code read wrong elements for a 3-D value whose leading axes
#: were split from the row number by division)
BOX_NDIM = 2
#: the most elements a work-item of a box kernel's reduction along one axis
#: reduces, by the axis: along columns (axis 0) in the order NumPy adds
#: rows; along rows (axis 1) as the flat kernels' rows (NumPy sums longer
#: contiguous rows pairwise, rounding less)
AXIS_REDUCED = {0: 1 << 16, 1: 1 << 12}
#: the most reads of arrays and constants the expression of one element
#: makes (joins of joins choose among their parts: a chain of slice
#: assignments reading shifted rows of the previous value doubles them)
BOX_READ_LIMIT = 256
_INT64, _UINT64 = np.dtype(np.int64), np.dtype(np.uint64)


def _reads(body: Node, region: list[Node]) -> int:
    """How many reads of leaves the expression of one element of *body*
    makes, every operand expanded where it is used."""
    count: dict[Node, int] = {}
    for n in region:
        count[n] = 1 if is_kind(n, "const", "iota") else sum(
            count.get(c, 1) for c in n.children())
    return count.get(body, 1)


def _supported(n: Node, target: Target) -> bool:
    """Whether a box kernel computes *n* inside: an elementwise operation
    (not one with a vector version of its own on a CPU), a view keeping the
    order of the axes, a join, a gather, a constant or a position."""
    if is_kind(n, "map"):
        return not (target.kind == "cpu" and n.op in _VECTOR_FUNCTIONS  # type: ignore[attr-defined]
                    and n.dtype == np.float32)
    if is_kind(n, "view"):
        axes = [entry[1] for entry in cast(View, n).axis_map if entry[0] == "axis"]
        # (a transpose keeps the tiled kernels of its shape)
        return axes == sorted(set(axes))
    return is_kind(n, "concat", "const", "iota", "gather")


def _body(node: Node) -> Node:
    return cast(Reduce, node).arg if is_kind(node, "reduce") else node


def _positions(node: Node, inputs: dict[Node, KernelInput]
               ) -> list[tuple[tuple, int]]:
    """The size arguments of *node*'s box kernel after the element counts,
    in order, as (what it is, its value): the extents of the value (all but
    the last), of each array read, each view's starts and fixed indices, the
    extent each gather picks along, the place where each join's part begins
    (but the first)."""
    body = _body(node)
    found: list[tuple[tuple, int]] = [(("out", k), n) for k, n in enumerate(body.shape)]
    for n in walk(body, lambda n: n in inputs):
        if n in inputs:
            if not inputs[n].scalar:
                found += [((n, "extent", k), extent) for k, extent in enumerate(n.shape)]
        elif is_kind(n, "view"):
            found += [((n, k), entry[1] if entry[0] == "const" else entry[2])
                      for k, entry in enumerate(cast(View, n).axis_map)]
        elif is_kind(n, "gather"):
            g = cast(Gather, n)
            found.append(((n, "extent"), max(g.arg.shape[g.axis], 1)))
        elif is_kind(n, "concat"):
            c = cast(Concat, n)
            offset = 0
            for k, arg in enumerate(c.args):
                if k:
                    found.append(((n, k), offset))
                offset += arg.shape[c.axis]
    return found


def _broadcasts(node: Node) -> tuple:
    """Per operand of elementwise *node*, the axes it is broadcast along
    (one element where *node* has more: what the code of a box kernel
    depends on of the extents)."""
    args = cast(Map, node).args
    return tuple(tuple(k for k in range(a.ndim) if a.shape[k] == 1
                       and node.shape[k + node.ndim - a.ndim] != 1) for a in args)


def _key(node: Node, inputs: dict[Node, KernelInput]) -> tuple:
    """The structure of *node*'s box kernel: operations, dtypes, numbers of
    axes, broadcasts, views' steps and axes, joins' axes, inputs by
    position; no extents, starts or offsets."""
    position = {n: k for k, n in enumerate(inputs)}
    number: dict[Node, int] = {}
    entries: list[tuple] = []
    for n in walk(node, lambda n: n in position):
        entry: tuple
        if n in position:
            entry = ("scalar" if inputs[n].scalar else "in", position[n], n.dtype.str, n.ndim)
        elif is_kind(n, "const"):
            entry = n._key
        else:
            if is_kind(n, "view"):
                fields: tuple = tuple(entry[:2] + entry[3:] if entry[0] == "axis" else ("const",)
                                      for entry in cast(View, n).axis_map)
            elif is_kind(n, "map"):
                fields = (n.op, _broadcasts(n))  # type: ignore[attr-defined]
            elif is_kind(n, "reduce"):
                r = cast(Reduce, n)
                fields = (r.op, r.axes, r.keepdims)
            else:
                fields = (getattr(n, "axis", None),)
            entry = (n.mapper_method, n.ndim, n.dtype.str, fields,
                     tuple(number[c] for c in n.children()))
        number[n] = len(entries)
        entries.append(entry)
    return ("box", tuple(entries))


def box_plan(node: Node, inputs: dict[Node, KernelInput], target: Target
             ) -> tuple[tuple, tuple[tuple[str, int], ...]] | None:
    """The structure key and the size arguments (by name) of *node*'s box
    kernel reading *inputs*, or None where *node* gets no box kernel: it
    computes more than :data:`FLAT_RANGE_LIMIT` elements (a reduction: more
    than :data:`FLAT_REDUCTION_LIMIT`), an operation a box kernel does not
    (reshapes, scans, inner reductions, transposes), more than
    :data:`BOX_NDIM` axes, or an element's expression of more than
    :data:`BOX_READ_LIMIT` reads. (Layouts of their own for the shape, as a
    GPU's for narrow rows, come back when the plan is specialized.)"""
    body = _body(node)
    if is_kind(node, "reduce"):
        r = cast(Reduce, node)
        if r.dtype.kind == "c" or r.op not in _FLAT_REDUCTIONS:
            return None
        if len(r.axes) == body.ndim:
            if r.keepdims or np.prod(body.shape) > FLAT_REDUCTION_LIMIT:
                return None
        elif body.ndim != 2 or len(r.axes) != 1 \
                or body.shape[r.axes[0]] > AXIS_REDUCED[r.axes[0]]:
            return None             # (not axis=(), an identity)
    if body in inputs or not 1 <= body.ndim <= BOX_NDIM or 0 in body.shape \
            or np.prod(body.shape) > FLAT_RANGE_LIMIT:
        return None
    region = _region(body, inputs)
    if not all(_supported(n, target) for n in region) \
            or _reads(body, region) > BOX_READ_LIMIT:
        return None
    if any(np.prod(n.shape) > INDEX_LIMIT for n, _, scalar in inputs.values() if not scalar):
        return None
    positions = _positions(node, inputs)
    if len(positions) > BOX_ARGUMENTS:
        return None
    last = body.shape[-1]
    if not is_kind(node, "reduce"):
        counts: tuple = ((SIZE_ARGUMENT, last), (BOX_ROWS, int(np.prod(body.shape)) // last))
    elif _axis(node) is None:
        counts = ((SIZE_ARGUMENT, int(np.prod(body.shape))),)
    else:
        axis = cast(int, _axis(node))
        counts = ((SIZE_ARGUMENT, body.shape[1 - axis]), (REDUCED_ARGUMENT, body.shape[axis]))
    return _key(node, inputs), (*counts, *(
        (f"{BOX_PREFIX}{k}", int(value)) for k, (_, value) in enumerate(positions)))


def _axis(node: Node) -> int | None:
    """The axis a box kernel's reduction *node* reduces, if not all."""
    r = cast(Reduce, node)
    return r.axes[0] if len(r.axes) < r.arg.ndim else None


def _unraveled(flat: prim.Expression, extents: list[prim.Expression]) -> list:
    """The index in an array of *extents* (one or two) of C-order position
    *flat* (divided unsigned: no rounding toward minus infinity to emulate)."""
    if len(extents) == 1:
        return [flat]
    flat, columns = TypeCast(_UINT64, flat), TypeCast(_UINT64, extents[1])
    return [TypeCast(_INT64, prim.FloorDiv(flat, columns)),
            TypeCast(_INT64, prim.Remainder(flat, columns))]


class _BoxExpr(Expr):
    """:class:`Expr` at symbolic indices: arrays read at the C-order position
    of their extents' arguments, views at their starts' arguments, joins
    choosing their part by the arguments of where the parts begin. No
    value is held in a temporary (an index differs with the part a join
    chose)."""

    def __init__(self, inputs: dict[Node, KernelInput], names: dict[tuple, prim.Variable]):
        super().__init__(inputs)
        self.names = names

    def __call__(self, node: Node, index: list) -> prim.Expression:
        read = self.inputs.get(node)
        if read is None:
            return self._value(node, index)
        if read.scalar:
            return super().__call__(node, index)
        position: prim.Expression = 0
        for k, i in enumerate(index):
            position = i if k == 0 else prim.Sum((
                prim.Product((position, self.names[(node, "extent", k)])), i))
        return prim.Subscript(prim.Variable(read.name), (position,))

    def map_view(self, node: View, index: list) -> prim.Expression:  # type: ignore[override]
        arg_index: list[prim.Expression] = []
        for k, entry in enumerate(node.axis_map):
            start = self.names[(node, k)]
            if entry[0] == "const":
                arg_index.append(start)
            else:
                i, step = index[entry[1]], entry[3]
                arg_index.append(prim.Sum((start, i if step == 1 else prim.Product((step, i)))))
        return self(node.arg, arg_index)

    def map_gather(self, node: Gather, index: list) -> prim.Expression:  # type: ignore[override]
        # (negative indices count from the end: checked to lie in [-n, n)
        # when the gather was made, read modulo the extent)
        k, m = node.axis, node.indices.ndim
        at = TypeCast(_INT64, self(node.indices, index[k:k + m]))
        position = prim.Remainder(at, self.names[(node, "extent")])
        return self(node.arg, [*index[:k], position, *index[k + m:]])

    def map_concat(self, node: Concat, index: list) -> prim.Expression:  # type: ignore[override]
        var = index[node.axis]
        parts: list[tuple[prim.Expression, prim.Expression]] = []
        for k, arg in enumerate(node.args):
            begin = self.names[(node, k)] if k else 0
            part_index = list(index)
            part_index[node.axis] = prim.Sum((var, prim.Product((-1, begin)))) if k else var
            parts.append((begin, TypeCast(node.dtype, self(arg, part_index))))

        def choice(low: int, high: int) -> prim.Expression:
            if high - low == 1:
                return parts[low][1]
            middle = (low + high) // 2
            return prim.If(prim.Comparison(var, "<", parts[middle][0]),
                           choice(low, middle), choice(middle, high))

        return choice(0, len(parts))


def build_box_kernel(node: Node, inputs: dict[Node, KernelInput], target: Target
                     ) -> lp.LoopKernel:
    """The box kernel of *node* (see :func:`box_plan`): one work-item per
    element over rows times the last axis, or (a reduction of all the
    elements) one work-group."""
    v = prim.Variable
    body = _body(node)
    positions = _positions(node, inputs)
    names = {what: v(f"{BOX_PREFIX}{k}") for k, (what, _) in enumerate(positions)}
    expr = _BoxExpr(inputs, names)
    extents = [names[("out", k)] for k in range(body.ndim)]
    reduction = is_kind(node, "reduce")
    size = v(SIZE_ARGUMENT)
    data: list[Any] = [lp.ValueArg(SIZE_ARGUMENT, np.int64)]
    if not reduction:
        data.append(lp.ValueArg(BOX_ROWS, np.int64))
    data += [lp.ValueArg(f"{BOX_PREFIX}{k}", np.int64) for k in range(len(positions))]
    for n, name, scalar in sorted(inputs.values(), key=lambda read: read.name):
        if scalar:
            data.append(lp.ValueArg(name, n.dtype))
            continue
        own = [names[(n, "extent", k)] for k in range(n.ndim)]
        length = own[0] if len(own) == 1 else prim.Product(tuple(own)) if own else 1
        data.append(lp.GlobalArg(name, n.dtype, shape=(length,)))
    group = FLAT_GROUP[target.kind]
    if reduction and _axis(node) is not None:
        data[1:1] = [lp.ValueArg(REDUCED_ARGUMENT, np.int64)]
        data.insert(0, lp.GlobalArg("out", node.dtype, shape=(size,)))
        i, j = v("i0"), v("j")
        index = [j, i] if _axis(node) == 0 else [i, j]
        outputs = domain(["i0"], {"i0": 1}, {SIZE_ARGUMENT: 1, "i0": -1, 1: -1})
        walk_ = domain(["j"], {"j": 1}, {REDUCED_ARGUMENT: 1, "j": -1, 1: -1})
        knl = make_loop_kernel([outputs, walk_], [assignment(
            prim.Subscript(v("out"), (i,)),
            Reduction(kernel_reduction(cast(Reduce, node)), ("j",), expr(body, index)))],
            data, name="lazyarray_kernel")
        knl = lp.split_iname(knl, "i0", group, outer_tag="g.0", inner_tag="l.0")
    elif reduction:
        data.insert(0, lp.GlobalArg("out", node.dtype, shape=(1,)))

        class _Flat:
            """The body read at a C-order position (what the reduction walks)."""
            cse_insns: list = []

            def __call__(self, n: Node, index: list) -> prim.Expression:
                return expr(n, _unraveled(index[0], extents))

        knl = _reduction_kernel(cast(Reduce, node), body, cast(Expr, _Flat()), data, group)
    else:
        rows = v(BOX_ROWS)
        data.insert(0, lp.GlobalArg("out", node.dtype, shape=(prim.Product((rows, size)),)))
        index = [v("ir"), v("il")] if body.ndim > 1 else [v("il")]
        points = domain(["ir", "il"], {"ir": 1}, {BOX_ROWS: 1, "ir": -1, 1: -1},
                        {"il": 1}, {SIZE_ARGUMENT: 1, "il": -1, 1: -1})
        out = prim.Subscript(v("out"), (prim.Sum((prim.Product((v("ir"), size)), v("il"))),))
        knl = make_loop_kernel([points], [assignment(out, expr(body, index))], data,
                               name="lazyarray_kernel")
        knl = lp.split_iname(knl, "il", group, outer_tag="g.0", inner_tag="l.0")
        knl = lp.tag_inames(knl, {"ir": "g.1"})
    # (every read is in bounds by construction: views and joins were checked
    # when they were made; with symbolic extents that cannot be proven here)
    knl = lp.set_options(knl, no_numpy=True, enforce_array_accesses_within_bounds="no_check")
    return knl.copy(target=lp.PyOpenCLTarget(fp_contract=False, math_f32=target.math_f32,
                                          math_f64=target.math_f64))
