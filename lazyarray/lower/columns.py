"""Column reductions of a matrix on a CPU (``x.sum(axis=0)``), walked as
memory lies: a work-item per part of the rows adds whole rows into a row of
partial results (the compiler vectorizes the loop over contiguous columns);
matrices of fewer than CPU_LANES columns are read several rows at a time as
one stretch of up to NARROW_WIDTH elements, into as many running results.
A second kernel combines the parts; a single part writes the result itself.

Public names: cpu_column_kernel, MIN_STREAM_ROWS, MIN_STREAM_COLUMNS, NARROW_WIDTH.
"""

from __future__ import annotations

import pymbolic.primitives as prim

import kernelcore as lp
from kernelcore import Reduction, TypeCast, make_loop_kernel, reduction_identity
from lazyarray.graph import Reduce
from lazyarray.lower.expr import Expr
from lazyarray.lower.ir import assignment, barrier, below, bounds, box, domain, sum_of
from lazyarray.lower.reduction import COMBINE, CPU_LANES, combine, kernel_reduction
from lazyarray.target import Target


def cpu_column_kernel(node: Reduce, expr: Expr, data: list, target: Target
                      ) -> lp.LoopKernel | None:
    """The kernel of Reduce *node* over the rows of a matrix on a CPU
    *target* (bodies from *expr*, arguments *data*), or None when it is no
    such reduction (or too short for these layouts)."""
    if target.kind != "cpu" or node.axes != (0,) or node.arg.ndim != 2 \
            or node.op not in COMBINE:
        return None
    rows, cols = node.arg.shape
    if cols >= CPU_LANES and rows > 1:
        return _streamed_columns(node, expr, data, target.units)
    if cols < CPU_LANES and rows >= 2 * (NARROW_WIDTH // cols):
        return _narrow_columns(node, expr, data, target.units)
    return None


#: a part of a streamed column reduction covers at least this many rows ...
MIN_STREAM_ROWS = 64
#: ... and, where the rows are too few for a part per core, this many columns
#: (its work-items take neighbouring blocks of the columns instead)
MIN_STREAM_COLUMNS = 256


def _streamed_columns(node, expr, data: list, units: int) -> lp.LoopKernel:
    """Column reductions of a matrix on a CPU, walked as memory lies: the
    rows are cut into parts (and, when they are too few for the cores, the
    columns into blocks), one work-item per part and block adds its rows one
    after the other into a row of partial results (a loop over contiguous
    columns the compiler vectorizes); a second kernel combines the parts.
    A single part adds its rows into the result itself."""
    rows, cols = node.arg.shape
    parts = max(1, min(2 * units, rows // MIN_STREAM_ROWS))
    per = -(-rows // parts)
    parts = -(-rows // per)
    blocks = max(1, min(-(-2 * units // parts), cols // MIN_STREAM_COLUMNS))
    width = -(-cols // blocks)
    width += -width % CPU_LANES
    blocks = -(-cols // width)
    name = kernel_reduction(node)
    v = prim.Variable

    def column(col: str) -> prim.Expression:
        return sum_of((width, "pc"), col)

    def element(row, col: str) -> prim.Expression:
        return TypeCast(node.dtype, expr(node.arg, [row, column(col)]))

    def out(col: prim.Expression) -> prim.Expression:
        return prim.Subscript(v("out"), (0, col) if node.keepdims else (col,))

    def part(row: str, col: str) -> prim.Expression:
        if parts == 1:
            return out(column(col))
        return prim.Subscript(v("part"), (v(row), column(col)))

    insns = [
        assignment(part("pg", "j"), element(sum_of((per, "pg")), "j"), inames=("pg", "pc", "j"),
                   id="first"),
        # (inside the loops of the part and of its rows even where the
        # element does not vary along them: a sum of equal rows adds each)
        assignment(part("pg", "jr"),
                   combine(name, part("pg", "jr"), element(sum_of((per, "pg"), "r"), "jr")),
                   inames=("pg", "pc", "jr", "r"), id="rest", depends_on=("first",),
                   no_sync_with=frozenset({("first", "any")})),
    ]
    domains = [domain(["pg", "pc"], *bounds("pg", parts), *bounds("pc", blocks)),
               domain(["j", "jr"], *bounds("j", width), *bounds("jr", width),
                      below(column("j"), cols), below(column("jr"), cols)),
               domain(["r"], {"r": 1, 1: -1}, {"r": -1, 1: per - 1},
                      below(sum_of((per, "pg"), "r"), rows))]
    temporaries = []
    if parts > 1:
        combined = prim.Subscript(v("part"), (v("pg2"), v("j2")))
        insns += [barrier(id="parts", depends_on=("rest",)),
                  assignment(out(v("j2")), Reduction(name, ("pg2",), combined),
                             depends_on=("parts",))]
        domains.append(domain(["pg2", "j2"], *bounds("pg2", parts), *bounds("j2", cols)))
        temporaries.append(lp.TemporaryVariable("part", node.dtype, shape=(parts, cols),
                                                address_space="global"))
    knl = make_loop_kernel(domains, insns, data + temporaries, name="lazyarray_kernel")
    knl = lp.set_options(knl, no_numpy=True)
    knl = lp.tag_inames(knl, {"pg": "g.0", "pc": "g.1"})
    knl = lp.prioritize_loops(knl, "r,jr")
    if parts == 1:
        return knl
    return lp.split_iname(knl, "j2", 64, outer_tag="g.0", inner_tag="l.0")


#: elements of the running results of a narrow column reduction on a CPU:
#: that many consecutive elements of whole rows, in registers
NARROW_WIDTH = 64


def _narrow_columns(node, expr, data: list, units: int) -> lp.LoopKernel:
    """Column reductions of a matrix of fewer than CPU_LANES columns on a
    CPU: its rows are read k at a time as one stretch of k * columns
    elements (up to NARROW_WIDTH), which a work-item per part of the rows
    adds into as many running results (unrolled: registers), the rows that
    make no whole stretch last; a second kernel combines the parts and the
    k results of each column (a single part combines its own)."""
    rows, cols = node.arg.shape
    k = NARROW_WIDTH // cols
    width = k * cols
    full = rows // k                        # whole stretches
    parts = max(1, min(2 * units, full // MIN_STREAM_ROWS))
    per = -(-full // parts)
    parts = -(-full // per)
    name = kernel_reduction(node)
    v = prim.Variable
    acc = v("acc")

    def element(row: prim.Expression, col: prim.Expression) -> prim.Expression:
        return TypeCast(node.dtype, expr(node.arg, [row, col]))

    def add(slot: prim.Expression, value: prim.Expression) -> prim.Expression:
        return combine(name, prim.Subscript(acc, (slot,)), value)

    q_index = sum_of((per, "pg"), "qr")
    insns = [
        assignment(prim.Subscript(acc, (v("t0"),)), reduction_identity(name, node.dtype),
                   id="init"),
        assignment(prim.Subscript(acc, (v("tq"),)),
                   add(v("tq"), element(
                       prim.Sum((prim.Product((k, q_index)),
                                 prim.FloorDiv(v("tq"), cols))),
                       prim.Remainder(v("tq"), cols))),
                   inames=("pg", "tq", "qr"), id="step", depends_on=("init",)),
    ]
    domains = [box("pg", parts),
               domain(["t0", "tq"], *bounds("t0", width), *bounds("tq", width)),
               domain(["qr"], *bounds("qr", per), below(q_index, full))]
    last = "step"
    if rows > k * full:
        # (the rows after the whole stretches, in the last part)
        insns.append(assignment(
            prim.Subscript(acc, (sum_of((cols, "rt"), "ct"),)),
            add(sum_of((cols, "rt"), "ct"), element(sum_of(k * full, "rt"), v("ct"))),
            inames=("pg", "rt", "ct"), id="tail", depends_on=("step",)))
        domains.append(domain(["rt", "ct"], *bounds("rt", rows - k * full),
                              *bounds("ct", cols), {"pg": 1, 1: -(parts - 1)}))
        last = "tail"
    out = prim.Subscript(v("out"), (0, v("j2")) if node.keepdims else (v("j2"),))
    temporaries = [lp.TemporaryVariable("acc", node.dtype, shape=(width,),
                                        address_space="private")]
    if parts == 1:
        # (one work-item: it combines its k results of each column itself)
        insns.append(assignment(out, Reduction(name, ("i2",), prim.Subscript(
            acc, (sum_of((cols, "i2"), "j2"),))), depends_on=(last,)))
        domains.append(domain(["j2", "i2"], *bounds("j2", cols), *bounds("i2", k)))
    else:
        combined = prim.Subscript(v("part"), (v("pg2"), sum_of((cols, "i2"), "j2")))
        insns += [
            assignment(prim.Subscript(v("part"), (v("pg"), v("ts"))),
                       prim.Subscript(acc, (v("ts"),)), id="store", depends_on=(last,)),
            barrier(id="parts", depends_on=("store",)),
            assignment(out, Reduction(name, ("pg2", "i2"), combined), depends_on=("parts",)),
        ]
        domains += [box("ts", width),
                    domain(["pg2", "i2", "j2"], *bounds("pg2", parts), *bounds("i2", k),
                           *bounds("j2", cols))]
        temporaries.append(lp.TemporaryVariable("part", node.dtype, shape=(parts, width),
                                                address_space="global"))
    knl = make_loop_kernel(domains, insns, data + temporaries, name="lazyarray_kernel")
    knl = lp.set_options(knl, no_numpy=True)
    unrolled = {i: "unr" for i in ("t0", "tq", "ts", "rt", "ct", "j2", "i2")
                if i in knl.all_inames() and (parts == 1 or i not in ("j2", "i2"))}
    # (a single part: one work-item, no grid)
    knl = lp.tag_inames(knl, {"pg": "g.0" if parts > 1 else None, **unrolled})
    return lp.prioritize_loops(knl, "qr,tq")
