"""Lowering a stored node to a kernelcore kernel: elementwise operations and
views between stored values are inlined (see :mod:`lazyarray.lower.expr`),
then a schedule is chosen for the device kind (reduction layouts, row kernels,
transposed tiles, stencils, blocked products).

Public names: build_kernel, sequential_kernel, kernel_region, NotApplicable.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pymbolic.primitives as prim

import kernelcore as lp
from kernelcore import INDEX_LIMIT, Reduction, make_loop_kernel
from lazyarray.graph import Node, Reduce
from lazyarray.lower.columns import cpu_column_kernel
from lazyarray.lower.contraction import contraction_schedule, cpu_contraction_schedule
from lazyarray.lower.expr import Expr, row_operands
from lazyarray.lower.intervals import Range
from lazyarray.lower.ir import assignment, box, domain
from lazyarray.lower.reduction import (
    CPU_LANES,
    cpu_row_kernel_schedule,
    kernel_reduction,
    reduction_kernel,
    row_kernel_schedule,
    row_layout,
)
from lazyarray.lower.stencil import reads_rows, stencil_schedule
from lazyarray.lower.tensorcore import tensor_core_schedule
from lazyarray.lower.tiles import (
    blocked_transpose_schedule,
    is_narrow,
    narrow_transpose_schedule,
    tiled_transpose_schedule,
    transposed_inputs,
)
from lazyarray.mapper import is_kind
from lazyarray.plan.indexing import Ix, index_expr, out_index
from lazyarray.plan.inputs import KernelInput
from lazyarray.plan.layouts import TILE, has_narrow_rows
from lazyarray.target import Target, default_target


class NotApplicable(Exception):
    """A schedule choice (:mod:`lazyarray.run.tune`) that does not apply to
    the kernel asked for."""


#: the alignment (bytes) lazyarray declares for a GPU kernel's result: results
#: are new buffers, aligned at least to OpenCL's minimum base address alignment
OUT_ALIGNMENT = 64
#: the work-group size of CPU elementwise kernels (kernelcore's default), and
#: the elements of one vector per work-item where float32 sin or cos are
#: computed (W1's kernel on PoCL, 2^21 elements: 8.3 -> 4.2 ms, see
#: ``benchmarks/results/ab-cpu-issue21-sin-vector.md``)
CPU_GROUP, VECTOR_LANES = 64, 16
#: the elementwise operations those kernels may contain besides sin and cos
VECTOR_OPS = {"add", "subtract", "multiply", "negative", "positive", "true_divide",
              "sin", "cos"}
#: rows of a GPU row kernel with one work-item per row that it stores as one
#: vector (softmax over 16777216 rows of 4 floats on an H200: 290 us with
#: four stores per row, 131 us, a copy's time, with one aligned float4)
ROW_VECTORS = (2, 4)


def kernel_region(root: Node, inputs: Collection[Node]) -> list[Node]:
    """The nodes a kernel computing *root* evaluates (up to its inputs)."""
    seen: set[Node] = set()
    found: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node in seen or node in inputs:
            continue
        seen.add(node)
        found.append(node)
        stack.extend(node.children())
    return found


def build_kernel(node: Node, inputs: dict[Node, KernelInput],
                 choice: tuple[str, tuple] | None = None,
                 target: Target | None = None) -> lp.LoopKernel:
    """A kernelcore kernel computing *node* into ``out`` from the stored nodes
    in *inputs* (node -> :class:`~lazyarray.plan.inputs.KernelInput`), parallelized for the device;
    *choice* (knob, values) overrides one of the schedule's sizes, as
    :mod:`lazyarray.run.tune` describes. Kernels reaching element offsets beyond
    ``2**31 - 1`` index with int64. Laid out for *target* (by default
    lazyarray's device)."""
    target = target or default_target()
    knl = _scheduled_kernel(node, inputs, choice, target)
    # NumPy rounds every operation: no fused multiply-adds, except in matrix
    # products (which add in another order than NumPy's BLAS anyway)
    product = is_kind(node, "reduce") and _is_product_sum(node)
    knl = knl.copy(target=lp.PyOpenCLTarget(fp_contract=product, math_f32=target.math_f32,
                                          math_f64=target.math_f64))
    if _needs_wide_indices(node, inputs):
        knl = knl.copy(index_dtype=np.dtype(np.int64))
    return knl


def _needs_wide_indices(node: Node, inputs: dict[Node, KernelInput]) -> bool:
    """Whether a kernel computing *node* from *inputs* has more than
    ``2**31 - 1`` elements in an array it reads or writes, or in a value it
    computes (a reshape's flat offsets, a broadcast)."""
    values = kernel_region(node, inputs) + [read.node for read in inputs.values()]
    return any(int(np.prod(n.shape, dtype=np.int64)) > INDEX_LIMIT for n in values)


def _scheduled_kernel(node: Node, inputs: dict[Node, KernelInput],
                      choice: tuple[str, tuple] | None, target: Target):
    """:func:`build_kernel`'s kernel, for the default index type."""
    sizes = dict([choice]) if choice else {}
    kind = target.kind
    if is_kind(node, "reduce", "scan"):
        expr = Expr(inputs)
    else:
        reductions = [n for n in kernel_region(node, inputs) if is_kind(n, "reduce")]
        reduced = {n.arg for n in reductions}
        group, rows_per_group = row_layout(node.shape[-1], (1, *node.shape)[-2]) \
            if kind == "gpu" and reduced else (None, 1)
        if group is not None:
            reduced = row_operands(reductions, inputs)
        expr = Expr(inputs, row_lanes=CPU_LANES if kind == "cpu" else None, row_group=group)
        index = out_index(node)
        if group is not None:
            last = node.shape[-1]
            name = index[-1].var.name
            index[-1] = Ix(expr.row_position(f"{name}_o", f"{name}_l", last), last)
            if group == 1 and last in ROW_VECTORS and node.dtype.kind in "iuf":
                expr.row_tags[f"{name}_o"] = "vec"
        expr.compute(node, index, reduced)
    data = _arguments(node, inputs, "out", OUT_ALIGNMENT if kind == "gpu" else None)
    if is_kind(node, "reduce"):
        if _is_product_sum(node):
            knl, out_inames = _plain_kernel(node, expr, data)
            extents = {f"i{k}": n for k, n in enumerate(node.arg.shape)}
            if target.tensor_cores and "contraction" not in sizes:
                cores = tensor_core_schedule(knl, out_inames, f"i{node.axes[0]}", extents)
                if cores is not None:
                    return cores
            schedule = contraction_schedule if kind == "gpu" else cpu_contraction_schedule
            blocked = schedule(knl, out_inames, f"i{node.axes[0]}", extents,
                               *sizes.get("contraction", ()))
            if blocked is not None:
                return blocked
            if "contraction" in sizes:
                # (another layout would add the terms in another order)
                raise NotApplicable(f"the blocking {sizes['contraction']} does not "
                                    "apply to this product")
        laid_out = cpu_column_kernel(node, expr, data, target) or \
            reduction_kernel(node, expr, data, target)
        if laid_out is not None:
            return laid_out
    knl, out_inames = _plain_kernel(node, expr, data)
    if expr.row_temps:
        if kind == "gpu":
            return row_kernel_schedule(knl, node.shape, expr.row_tags, rows_per_group, group)
        return cpu_row_kernel_schedule(knl, node.shape, expr.row_tags, expr.row_splits,
                                       expr.row_vectors)
    elementwise = not is_kind(node, "reduce", "scan")
    if kind == "gpu" and elementwise and node.ndim >= 2 \
            and (has_narrow_rows(node.shape)
                 or is_narrow(node.shape) and transposed_inputs(knl, out_inames)):
        return narrow_transpose_schedule(knl, out_inames, node.shape)
    if elementwise and not expr.row_temps and min(node.shape[-2:], default=0) >= TILE:
        transposed = transposed_inputs(knl, out_inames)
        tile = sizes.get("transpose", ())
        if transposed and kind == "cpu":
            return blocked_transpose_schedule(knl, out_inames, node.shape, *tile)
        tiled = transposed and tiled_transpose_schedule(knl, out_inames, node.shape,
                                                        transposed, *tile)
        if tiled:
            return tiled
    if kind == "gpu" and elementwise and not sizes and node.ndim >= 2 \
            and reads_rows(knl, out_inames, node.shape):
        return stencil_schedule(knl, out_inames, node.shape)
    group_size = sizes.get("group_size", (None,))
    knl = lp.auto_parallelize(knl, kind, group_size=group_size[0],
                              items=group_size[1] if len(group_size) > 1 else None)
    if kind == "cpu" and target.math_f32 == "branch_free" and not sizes \
            and _vector_math(node, inputs):
        return _cpu_vector_lanes(knl)
    return knl


def _arguments(node: Node, inputs: dict[Node, KernelInput], out: str,
               alignment: int | None) -> list[lp.ArrayArg | lp.ValueArg]:
    """The arguments of a kernel computing *node* into *out* from *inputs*."""
    data: list[lp.ArrayArg | lp.ValueArg] = [
        lp.GlobalArg(out, node.dtype, shape=node.shape or (1,), alignment=alignment)]
    for stored_node, name, scalar in sorted(inputs.values(), key=lambda read: read.name):
        data.append(lp.ValueArg(name, stored_node.dtype) if scalar
                    else lp.GlobalArg(name, stored_node.dtype, shape=stored_node.shape or (1,)))
    return data


def sequential_kernel(node: Node, inputs: dict[Node, KernelInput], out: str,
                      fixed: dict[Node, Range] | None = None) -> lp.LoopKernel:
    """A kernel computing *node* into the array argument *out* from the
    stored nodes in *inputs*, every loop sequential and unscheduled: one part
    of a compiled program run by one work-item (:mod:`lazyarray.run.sequence`).
    *fixed*: the value ranges of integer inputs whose values never change
    (gathers by indices within bounds read them without a wrap)."""
    expr = Expr(inputs, fixed=fixed)
    if not is_kind(node, "reduce", "scan"):
        reductions = [n for n in kernel_region(node, inputs) if is_kind(n, "reduce")]
        expr.compute(node, out_index(node), {n.arg for n in reductions})
    knl, _ = _plain_kernel(node, expr, _arguments(node, inputs, out, None), out)
    return knl


def _vector_math(node: Node, inputs: dict[Node, KernelInput]) -> bool:
    """Whether *node* is float32 arithmetic and ``sin``/``cos`` (with a
    vector version in kernelcore's branch-free math) on inputs of its shape,
    calling one of these, over rows of a multiple of CPU_GROUP elements."""
    region = kernel_region(node, inputs)
    return (node.ndim >= 1 and node.shape[-1] >= CPU_GROUP and node.shape[-1] % CPU_GROUP == 0
            and any(is_kind(n, "map") and n.op in ("sin", "cos") for n in region)
            and all(is_kind(n, "map") and n.op in VECTOR_OPS and n.dtype == np.float32
                    and all(a.dtype == np.float32 for a in n.args) for n in region)
            and all(n.shape == node.shape and n.dtype == np.float32
                    for n, _, scalar in inputs.values() if not scalar))


def _cpu_vector_lanes(knl: lp.LoopKernel) -> lp.LoopKernel:
    """*knl* (parallelized for a CPU) with each work-item computing
    VECTOR_LANES neighbouring elements as one vector (kernelcore's vector
    ``sin``/``cos`` take a fast path for a whole vector of moderate
    arguments; PoCL's vectorized work-item loops compute both paths)."""
    local = [i for i, tag in knl.iname_tags.items() if str(tag) == "l.0"]
    if len(local) != 1:
        return knl
    [fast] = local
    knl = lp.tag_inames(knl, {fast: None}, force=True)
    return lp.split_iname(knl, fast, VECTOR_LANES, outer_tag="l.0", inner_tag="vec")


def _is_product_sum(node: Reduce) -> bool:
    """Whether *node* sums a product over one axis (a matrix product's shape)."""
    arg = node.arg
    if is_kind(arg, "map") and arg.op == "astype":
        arg = arg.args[0]
    return (node.op == "sum" and len(node.axes) == 1 and not node.keepdims
            and is_kind(arg, "map") and arg.op == "multiply" and node.ndim >= 2)


def _plain_kernel(node: Node, expr: Expr, data: list, out: str = "out"
                  ) -> tuple[lp.LoopKernel, list[str]]:
    """The unscheduled kernel computing *node* into *out*, and the inames of
    its output."""
    v = prim.Variable
    if is_kind(node, "reduce"):
        arg = node.arg
        index = [f"i{k}" for k in range(arg.ndim)]
        red = tuple(index[a] for a in node.axes)
        kept = [v(index[k]) for k in range(arg.ndim) if k not in node.axes]
        out_index = [v(index[k]) if k not in node.axes else 0
                     for k in range(arg.ndim)] if node.keepdims else kept
        body = expr(arg, [v(i) for i in index])
        rhs = Reduction(kernel_reduction(node), red, body) if red else body
        domains = [box(i, arg.shape[k]) for k, i in enumerate(index)]
    elif is_kind(node, "scan"):
        names = [f"i{k}" for k in range(node.ndim)]
        out_index = [v(i) for i in names]
        running = list(out_index)
        running[node.axis] = v("s")
        rhs = Reduction(node.op, ("s",), expr(node.arg, running))
        domains = [box(i, node.shape[k]) for k, i in enumerate(names)]
        # the running index depends on the output's: a scan, computed in O(n)
        domains.append(domain(["s"], {"s": 1}, {names[node.axis]: 1, "s": -1}))
    else:
        rhs = expr(node, list(expr.out_index))
        out_index = [index_expr(i) for i in expr.out_index]
        # (a GPU row kernel's row position has its domain among the rows')
        domains = [box(i.name, node.shape[k])
                   for k, i in enumerate(out_index) if isinstance(i, prim.Variable)]
    lhs = prim.Subscript(v(out), tuple(out_index) or (0,))
    instructions = [*expr.row_insns, *expr.cse_insns, assignment(lhs, rhs)]
    knl = make_loop_kernel((domains or [box("z", 1)]) + expr.row_domains,
                         instructions, data + expr.row_temporaries, name="lazyarray_kernel")
    # lazyarray passes device arrays only
    return lp.set_options(knl, no_numpy=True), [str(i) for i in out_index]
