"""Reduction kernels laid out for the device.

A reduction ``out[k] = red(r, f(k, r))`` is scheduled by where its reduced
axes lie:

* *row* reductions reduce the innermost axis, which is contiguous in memory:
  on a GPU a work-group reduces each output (work-items ``l.0`` walk the row
  coalesced, then a local tree combines them); on a CPU one work-item does,
  keeping :data:`CPU_LANES` running results for consecutive elements (a
  vector; two over long rows, :data:`CPU_REDUCTION_LANES`), plus a
  sequential tail.
* *column* reductions keep the innermost axis: neighbouring work-items (GPU) or
  the unrolled lanes of one work-item (CPU) own neighbouring outputs and walk
  the reduced axes together, so every load is contiguous (a CPU's column
  reductions of a matrix: :mod:`lazyarray.lower.columns`).
* When the outputs give too few work-groups for the device, the outermost
  reduced axis is cut into parts: a first device kernel reduces each part into
  a global temporary, a second (after a global barrier) combines the parts.

Small reductions (short rows, argmax/argmin, few elements) keep the default
one-work-item-per-output schedule of :func:`kernelcore.auto_parallelize`.

Public names: reduction_kernel, row_kernel_schedule, row_group, row_layout,
cpu_row_kernel_schedule, choose_layout, Layout, CPU_LANES, CPU_REDUCTION_LANES, COMBINE,
NAN_PROPAGATING, kernel_reduction, reduction_of, combine.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pymbolic.primitives as prim

import kernelcore as lp
from kernelcore import Reduction, make_loop_kernel, parse_expression, substitute
from lazyarray.graph import Reduce
from lazyarray.lower.ir import assignment, barrier, below, bounds, box, domain, sum_of
from lazyarray.plan.layouts import MAX_GROUP, ROW_SLOTS
from lazyarray.target import Target

#: running results per work-item of a CPU reduction (one AVX-512 register)
CPU_LANES = 16
#: ... of a CPU row reduction (or a row kernel's) over rows of at least twice
#: as many elements: two vectors of CPU_LANES, so that two chains of
#: combinations overlap (two cores, medians of five alternating processes,
#: 16 -> 32: max of 2048^2 float32 rows 0.48 -> 0.32 ms, as NaN-propagating
#: max is a compare and a select per step; softmax over 2048x1024 0.90 ->
#: 0.75 ms; sums, dot products and float64 rows level within the noise)
CPU_REDUCTION_LANES = 32
#: neighbouring columns one CPU work-item sums at most in column reductions of
#: more than two axes, a multiple of CPU_LANES (wider strips stream better)
CPU_COLUMN_LANES = 256
#: rows one work-item of a CPU row reduction reduces one after the other,
#: when that leaves enough work-groups (PoCL runs each as a call of its own;
#: two cores, row sums of 16384x64 float32 0.21 -> 0.16 ms, of 65536x32 0.43
#: -> 0.29 ms; 64 rows: no faster; 1024^2 and 2048^2 level)
CPU_ROWS = 16
#: work-items per group of a GPU reduction
GPU_GROUP = 256
#: neighbouring columns per work-item of a GPU column reduction, loaded as
#: one vector (column sums of 16384^2 floats on an H100, launches back to
#: back: 0.96 of a copy's bandwidth with one column each, 1.01 with two or
#: four; 8192^2: 0.95, 0.98 with two, 0.96 with four)
GPU_COLUMN_VECTOR = 2
#: neighbouring elements a work-item of a split GPU row reduction reads per
#: step (a dot product of 2^28 floats on an H100, first kernel: 0.968 of a
#: copy's bandwidth with one; 1.008 with two, 1.023 with two and half as many
#: parts, as many loads in flight)
GPU_ROW_PAIR = 2
#: work-items per group of a GPU row kernel at least (a warp): a group is
#: made no larger than its row needs, each work-item holding up to
#: ROW_SLOTS elements (softmax over 2^28 float32 on an H100, % of a copy's
#: bandwidth, rows of 256 / 1024 / 4096 / 16384 elements: 101 / 101 / 100 /
#: 101 with groups from 32; 38 / 57 / 100 / 99 with groups from 512, where
#: short rows left most work-items idle)
ROW_GROUP = 32
#: work-items of a GPU row kernel's group over short rows (fewer than
#: ROW_GROUP * SHORT_ROW_SLOTS elements), which holds several rows
SHORT_ROW_GROUP = 128
#: elements of a short row per work-item at most: a short row gets the
#: fewest work-items (a power of two, possibly one) holding that many each
SHORT_ROW_SLOTS = 8
#: ... and for rows of up to TINY_ROW elements, TINY_ROW_SLOTS (softmax over
#: 2^26 float32 on an H100, % of a copy's bandwidth, rows of 8 / 16 / 33 /
#: 100 elements: 55 / 89 / 53 / 91 with 4 slots, 28 / 42 / 81 / 98 with 8;
#: rows of 64 / 128 / 256+: 99 / 100 / 100; a work-group per row: 4 / 7 /
#: 15 / 45 and 29 / 57 / 100)
TINY_ROW, TINY_ROW_SLOTS = 16, 4
#: rows from ROW_GROUP * SHORT_ROW_SLOTS to MID_ROW elements: ROW_GROUP
#: work-items per row, MID_ROW_GROUP per work-group (softmax over 2^26
#: float32 rows of 256 on an H200: 79% of a copy's bandwidth with a
#: work-group of 32 per row, 96% with 8 rows per group of 256; rows of 1024:
#: 96% and 94%)
MID_ROW, MID_ROW_GROUP = 512, 256
#: work-groups per compute unit a reduction should provide at least
GROUPS_PER_UNIT = {"gpu": 8, "cpu": 4}
#: ... a GPU column reduction (its parts' second kernel combines a run of
#: parts per work-item; column sums on an H200, % of a copy's bandwidth,
#: 8 / 4 / 2 groups per unit: 2097152x32 87 / 90 / 84, 1048576x64 88 / 91 /
#: 86, 262144x256 81 / 88 / 88, 8192x8192 91 / 91 / 72)
GPU_COLUMN_GROUPS_PER_UNIT = 4
#: reductions over fewer elements per output keep one work-item per output
MIN_ROW = {"gpu": 64, "cpu": 2 * CPU_LANES}
#: a part of a split reduction covers at least this many elements per lane
MIN_PART = 16

#: kernelcore reduction -> the combination of two partial results {a}, {b}
#: (variables or array elements: a template may read them more than once)
COMBINE = {"sum": "({a}) + ({b})", "product": "({a}) * ({b})",
           "max": "max({a}, {b})", "min": "min({a}, {b})",
           "any": "({a}) or ({b})", "all": "({a}) and ({b})"}

#: the kernelcore reductions computing NumPy's max and min of floats: a NaN
#: wins (kernelcore's built-in ones combine with OpenCL's fmax and fmin,
#: which drop it). The accumulator {a} is kept where it is beyond {b} or NaN
#: (an unordered comparison) and {b} is not NaN; ties take {b}, as NumPy's
#: do. Only one comparison and one select depend on the accumulator, so the
#: chain through a row is barely longer than fmax's.
NAN_PROPAGATING = {"max": "la_max", "min": "la_min"}

for _op, _name in NAN_PROPAGATING.items():
    _not_beyond = "<=" if _op == "max" else ">="
    COMBINE[_name] = f"if(not ({{a}} {_not_beyond} {{b}}) and {{b}} == {{b}}, {{a}}, {{b}})"
    lp.register_reduction(
        _name, identity=lambda dtype, low=_op == "max": dtype.type(-np.inf if low else np.inf),
        combine=COMBINE[_name].format(a="a", b="b"), merge=COMBINE[_name].format(a="a", b="b"))
del _op, _name, _not_beyond


@cache
def _combination(op: str) -> prim.Expression:
    return parse_expression(COMBINE[op].format(a="_a", b="_b"))


def combine(op: str, a: prim.Expression, b: prim.Expression) -> prim.Expression:
    """The combination of partial results *a* and *b* of kernelcore reduction *op*."""
    return substitute(_combination(op), {"_a": a, "_b": b})


def kernel_reduction(node: Reduce) -> str:
    """The kernelcore reduction computing Reduce *node*."""
    return reduction_of(node.op, node.dtype)


def reduction_of(op: str, dtype: np.dtype) -> str:
    """The kernelcore reduction computing reduction *op* of values of *dtype*
    (NaN-propagating maxima and minima of floats, as NumPy's)."""
    if op in NAN_PROPAGATING and dtype.kind == "f":
        return NAN_PROPAGATING[op]
    return op


@dataclass(frozen=True)
class Layout:
    """How one reduction runs: *row* or column, *lanes* (the split of the
    innermost axis), *parts* of the outermost reduced axis (1: no split), and
    in a GPU column layout the neighbouring outputs of each work-item
    (*vector*: loaded and stored as one OpenCL vector), in a GPU row layout
    of short rows the *rows* that share a work-group, in a GPU column layout
    of narrow columns the *rows* a work-group reads at once."""

    row: bool
    lanes: int
    parts: int
    vector: int = 1
    #: outputs of a row layout per work-group (GPU: short rows share groups;
    #: CPU: a work-item's loop), or work-items along the reduced rows of a GPU
    #: column layout (``l.1``)
    rows: int = 1


def choose_layout(op: str, shape: tuple, axes: tuple, kind: str, units: int
                  ) -> Layout | None:
    """The layout for reducing *shape* over *axes* with *op* on a device of
    *kind* (``"gpu"``/``"cpu"``) with *units* compute units, or None for the
    default schedule."""
    if op not in COMBINE or not axes:
        return None
    last = len(shape) - 1
    row = last in axes
    kept = [shape[k] for k in range(len(shape)) if k not in axes]
    outputs = math.prod(kept)
    per_output = math.prod(shape[a] for a in axes)
    if per_output < MIN_ROW[kind]:
        return None
    lanes = CPU_LANES if kind == "cpu" else GPU_GROUP
    vector = 1
    if row:
        if kind == "gpu":
            lanes = min(lanes, _pow2_at_least(shape[last]))
        elif shape[last] >= 2 * CPU_REDUCTION_LANES:
            lanes = CPU_REDUCTION_LANES
        if kind == "cpu" and shape[last] < lanes:
            return None
        groups = outputs
    else:
        if kind == "gpu":
            lanes = min(lanes, _pow2_at_least(shape[last]))
            if shape[last] % (lanes * GPU_COLUMN_VECTOR) == 0:
                vector = GPU_COLUMN_VECTOR
        elif shape[last] < lanes:
            return None
        else:
            lanes = min(CPU_COLUMN_LANES, lanes * (shape[last] // lanes))
        # (a work-item of vectors keeps as many loads in flight as that many
        # work-items of one column each: parts as for one column each)
        groups = math.ceil(shape[last] / lanes) * math.prod(kept[:-1])
    wanted = (GPU_COLUMN_GROUPS_PER_UNIT if kind == "gpu" and not row
              else GROUPS_PER_UNIT[kind]) * units
    split_row = row and axes[0] == last
    if split_row and kind == "gpu":
        wanted //= GPU_ROW_PAIR
    parts = 1
    if groups < wanted:
        first = shape[axes[0]]
        per_lane = (lanes * (GPU_ROW_PAIR if kind == "gpu" else 1)) if split_row else 1
        parts = min(math.ceil(wanted / groups), first // (MIN_PART * per_lane))
        if kind == "gpu":
            parts = min(_pow2_at_most(max(parts, 1)), GPU_GROUP * 4, MAX_GROUP)
        parts = max(parts, 1)
    rows = 1
    if kind == "gpu" and not row and lanes < GPU_GROUP:
        # narrow columns: the group's other work-items take other rows
        rows = GPU_GROUP // lanes
    if kind == "gpu" and row and axes == (last,) and parts == 1 and kept \
            and shape[last] < ROW_GROUP * SHORT_ROW_SLOTS:
        # short rows: a few work-items per row, several rows per work-group
        # (a work-group of 64 per row of 64 leaves most of the device idle)
        lanes, rows = row_layout(shape[last], kept[-1])
    if kind == "cpu" and row and axes == (last,) and parts == 1 and kept \
            and kept[-1] >= 2 * CPU_ROWS and outputs // CPU_ROWS >= wanted \
            and shape[last] % lanes == 0:
        # (a row's tail would be a second loop over the rows: kernelcore
        # refuses the private temporaries that would then cross rows)
        rows = CPU_ROWS
    return Layout(row=row, lanes=lanes, parts=parts, vector=vector, rows=rows)


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _pow2_at_most(n: int) -> int:
    return 1 << (n.bit_length() - 1)


def reduction_kernel(node: Reduce, expr: Any, data: list, target: Target
                     ) -> lp.LoopKernel | None:
    """A scheduled kernel for Reduce *node* (bodies from *expr*, arguments
    *data*) on *target*, or None when the default schedule suits it better."""
    kind, units = target.kind, target.units
    layout = choose_layout(node.op, node.arg.shape, node.axes, kind, units)
    if layout is None:
        return None
    kept = node.arg.ndim - len(node.axes) + (layout.parts > 1) + (layout.rows > 1)
    if kind == "cpu" and layout.row and kept > 3:
        # (a kept axis beyond the three grid axes would be a loop of the
        # work-item, which kernelcore cannot share a row's private running
        # results across: the default schedule)
        return None
    return _Builder(node, expr, layout, kind == "gpu").kernel(data)


class _Builder:
    """Statements, domains and tags of one laid-out reduction."""

    def __init__(self, node, expr, layout: Layout, is_gpu: bool):
        self.node, self.expr, self.layout, self.is_gpu = node, expr, layout, is_gpu
        self.shape = node.arg.shape
        self.last = len(self.shape) - 1
        self.kept = [k for k in range(len(self.shape)) if k not in node.axes]
        self.domains: list = []
        self.tags: dict[str, str | None] = {}
        self.group_axes = 0
        self.tail: tuple[int, int] | None = None      # (start, count) on the last axis

    def kernel(self, data: list) -> lp.LoopKernel:
        """The kernel: one instruction, or a lane/part stage and its combination."""
        node, layout = self.node, self.layout
        kept = self._kept_index("")
        split = layout.parts > 1
        if split:
            self._box("pg", layout.parts, tag=self._group_tag())
        index, inames = self._reduced_index(kept)
        body = self.expr(node.arg, [index[k] for k in range(len(self.shape))])
        stage1 = self._reduce(inames, body)
        cpu_lanes = layout.row and not self.is_gpu
        if not (split or cpu_lanes):
            insns = [assignment(self._out(kept), stage1)]
            temporaries = []
        else:
            # the parts of a column layout lie one after the other (its
            # work-items write and combine neighbouring outputs), a row
            # layout's parts of one output together (a work-group combines them)
            kept_first = layout.row
            kept_shape = tuple(self.shape[k] for k in self.kept) if split else ()
            parts = (layout.parts,) if split else ()
            shape = (kept_shape + parts if kept_first else parts + kept_shape) + \
                ((layout.lanes,) if cpu_lanes else ())
            temporaries = [lp.TemporaryVariable(
                "part", node.dtype, shape=shape,
                address_space="global" if split else "private")]

            def at(kept: dict, part: list, lanes: list[str]) -> prim.Expression:
                names = [kept[k] for k in self.kept] if split else []
                part = [prim.Variable(p) if isinstance(p, str) else p for p in part]
                lanes = [prim.Variable(v) for v in lanes]  # type: ignore[misc]
                return prim.Subscript(prim.Variable("part"), tuple(
                    (names + part if kept_first else part + names) + lanes))

            written = at(kept, ["pg"] if split else [], ["v"] if cpu_lanes else [])
            insns = [assignment(written, stage1, id="stage1")]
            combined: list
            part_index: list
            combined, part_index = [], []
            if split:
                insns.append(barrier(id="parts", depends_on=("stage1",)))
                kept = self._kept_index("_2")
                combined, part_index = self._combined_parts()
            if cpu_lanes:
                combined.append(self._box("w", layout.lanes))
            read = at(kept, part_index, ["w"] if cpu_lanes else [])
            total = self._reduce(combined, read)
            dep: str | tuple[str, str] = "parts" if split else "stage1"
            if self.tail is not None:
                whole, tail = prim.Variable("body_total"), prim.Variable("tail_total")
                insns += [assignment(whole, total, node.dtype, id="body", depends_on=(dep,)),
                          assignment(tail, self._tail_value(kept), node.dtype, id="tail",
                                     depends_on=(dep,))]
                total = combine(kernel_reduction(node), whole, tail)
                dep = ("body", "tail")
            insns.append(assignment(self._out(kept), total,
                                    depends_on=dep if isinstance(dep, tuple) else (dep,)))
        knl = make_loop_kernel(self.domains, insns, data + temporaries, name="lazyarray_kernel")
        knl = lp.tag_inames(lp.set_options(knl, no_numpy=True), self.tags)
        if cpu_lanes and layout.lanes > CPU_LANES:
            # vectors of CPU_LANES, each with its own running results
            knl = lp.split_iname(knl, "v", CPU_LANES, outer_tag="ilp", inner_tag="vec")
        return knl

    # {{{ inames

    def _box(self, name: str, extent: int, tag: str | None = None) -> str:
        self.domains.append(box(name, extent))
        if tag:
            self.tags[name] = tag
        return name

    def _group_tag(self) -> str | None:
        """The next free ``g.N`` tag (None once all three are used)."""
        if self.group_axes == 3:
            return None
        self.group_axes += 1
        return f"g.{self.group_axes - 1}"

    def _kept_index(self, suffix: str) -> dict[int, prim.Expression]:
        """Index of the kept axes (the innermost one split into lanes in a
        column layout), with their inames tagged for the device."""
        self.group_axes = 0
        index: dict[int, prim.Expression] = {}
        kept = list(self.kept)
        if not self.layout.row:
            jo, jv, lanes = f"jo{suffix}", f"jv{suffix}", self.layout.lanes
            vector, extent = self.layout.vector, self.shape[self.last]
            if vector == 1:
                index[self.last] = sum_of((lanes, jo), jv)
                self.domains.append(domain([jo, jv], *bounds(jv, lanes), {jo: 1},
                                           below(index[self.last], extent)))
            else:               # (the extent is a multiple of lanes * vector)
                jw = self._box(f"jw{suffix}", vector, tag="vec")
                index[self.last] = sum_of((lanes * vector, jo), (vector, jv), jw)
                self.domains.append(domain([jo, jv], *bounds(jo, extent // (lanes * vector)),
                                           *bounds(jv, lanes)))
            self.tags[jo] = self._group_tag()
            self.tags[jv] = "l.0" if self.is_gpu else "ilp"
            kept.remove(self.last)
        rows = self.layout.rows
        if rows > 1 and self.layout.row:
            # the innermost kept axis in work-groups of *rows* rows
            k = kept.pop()
            ko, kr = f"k{k}o{suffix}", f"k{k}r{suffix}"
            index[k] = sum_of((rows, ko), kr)
            self.domains.append(domain([ko, kr], *bounds(kr, rows), {ko: 1},
                                       below(index[k], self.shape[k])))
            self.tags[ko] = self._group_tag()
            # (on a CPU, a loop of the work-item)
            self.tags[kr] = (None if not self.is_gpu else
                             "l.1" if self.layout.lanes > 1 else "l.0")
        for k in reversed(kept):
            index[k] = prim.Variable(
                self._box(f"k{k}{suffix}", self.shape[k], tag=self._group_tag()))
        return index

    def _reduced_index(self, kept: dict) -> tuple[dict, list[str]]:
        """Index of every axis in the first stage and its reduction inames."""
        layout, lanes = self.layout, self.layout.lanes
        first = self.node.axes[0]
        index = dict(kept)
        inames: list[str] = []
        for a in self.node.axes:
            extent = self.shape[a]
            parted = layout.parts > 1 and a == first
            if a == self.last and layout.row and parted and self.is_gpu:
                inames += self._interleaved_parts(extent, index, a)
            elif a == self.last and layout.row:
                if parted:
                    count = extent // (layout.parts * lanes)
                    index[a] = sum_of((count * lanes, "pg"), (lanes, "ro"), "v")
                else:
                    count = math.ceil(extent / lanes) if self.is_gpu else extent // lanes
                    index[a] = sum_of((lanes, "ro"), "v")
                if self.is_gpu:
                    self.domains.append(domain(["ro", "v"], *bounds("v", lanes),
                                               *bounds("ro", count), below(index[a], extent)))
                    if lanes > 1:
                        self.tags["v"] = "l.0"
                    inames += ["ro", "v"]
                else:
                    self._box("ro", count)
                    self._box("v", lanes, tag="vec" if lanes <= CPU_LANES else None)
                    inames.append("ro")
                    done = count * lanes * (layout.parts if parted else 1)
                    if done < extent:
                        self.tail = (done, extent - done)
            elif a == first and not layout.row and layout.rows > 1:
                # (narrow columns) rows read by the group's l.1 work-items at once
                rows, per = layout.rows, math.ceil(extent / layout.parts)
                start = [(per, "pg")] if parted else []
                index[a] = sum_of(*start, (rows, "rp"), "rl")
                self.domains.append(domain(["rp", "rl"], *bounds("rl", rows), {"rp": 1},
                                           below(sum_of((rows, "rp"), "rl"), per),
                                           below(index[a], extent)))
                self.tags["rl"] = "l.1"
                inames += ["rp", "rl"]
            elif parted:
                per = math.ceil(extent / layout.parts)
                self.domains.append(domain(["rp"], *bounds("rp", per),
                                           below(sum_of((per, "pg"), "rp"), extent)))
                index[a] = sum_of((per, "pg"), "rp")
                inames.append("rp")
            else:
                inames.append(self._box(f"r{a}", extent))
                index[a] = prim.Variable(inames[-1])
        return index, inames

    def _combined_parts(self) -> tuple[list[str], list[prim.Expression]]:
        """The inames that combine the parts in the second stage, and the
        part index they make. On a GPU, the work-items of a group combine
        them in a tree: a row layout's ``l.0`` ones, a column layout's
        ``l.1`` ones (each summing a run of parts first); on a CPU one
        work-item combines every part of its output in turn."""
        layout = self.layout
        if self.is_gpu and layout.row:
            return [self._box("pg2", layout.parts, tag="l.0")], [prim.Variable("pg2")]
        if self.is_gpu:
            # (parts and lanes are powers of two)
            rows = min(MAX_GROUP // layout.lanes, layout.parts)
            self.domains.append(domain(["pgo", "pgl"], *bounds("pgl", rows),
                                       *bounds("pgo", layout.parts // rows)))
            self.tags["pgl"] = "l.1"
            return ["pgo", "pgl"], [sum_of((rows, "pgo"), "pgl")]
        return [self._box("pg2", layout.parts)], [prim.Variable("pg2")]

    def _interleaved_parts(self, extent: int, index: dict, a: int) -> list[str]:
        """Index axis *a* (the last, of *extent*) of a split GPU row layout;
        its reduction inames. The parts interleave, so that all work-groups
        read neighbouring blocks together (as a copy does); every work-item
        reads :data:`GPU_ROW_PAIR` neighbouring elements per step."""
        parts, lanes, pair = self.layout.parts, self.layout.lanes, GPU_ROW_PAIR
        index[a] = sum_of((parts * lanes * pair, "ro"), (lanes * pair, "pg"), (pair, "v"), "w")
        self.domains.append(domain(["ro", "v"], *bounds("v", lanes),
                                   *bounds("ro", math.ceil(extent / (parts * lanes * pair)))))
        # (the bound on w, not ro, keeps the pair's loop innermost)
        bound = [] if extent % (parts * lanes * pair) == 0 else [below(index[a], extent)]
        self.domains.append(domain(["w"], *bounds("w", pair), *bound))
        self.tags.update(v="l.0", w="unr")
        return ["ro", "v", "w"]

    # }}}

    def _tail_value(self, kept: dict) -> prim.Expression:
        """The reduction of the innermost axis' leftover elements (the other
        reduced axes whole)."""
        start, count = self.tail  # type: ignore[misc]
        index = dict(kept)
        inames = []
        for a in self.node.axes:
            if a == self.last:
                index[a] = sum_of(start, "t")
                inames.append(self._box("t", count))
            else:
                inames.append(self._box(f"q{a}", self.shape[a]))
                index[a] = prim.Variable(inames[-1])
        return self._reduce(inames, self.expr(
            self.node.arg, [index[k] for k in range(len(self.shape))]))

    def _reduce(self, inames: list[str], body: prim.Expression) -> prim.Expression:
        if not inames:
            return body
        return Reduction(kernel_reduction(self.node), tuple(inames), body)

    def _out(self, kept: dict) -> prim.Expression:
        if self.node.keepdims:
            sub = [kept.get(k, 0) for k in range(len(self.shape))]
        else:
            sub = [kept[k] for k in self.kept]
        return prim.Subscript(prim.Variable("out"), tuple(sub) or (0,))


def cpu_row_kernel_schedule(knl: lp.LoopKernel, shape: tuple, tags: dict,
                            row_loops: Iterable[str] = (), vectors: Iterable[str] = ()
                            ) -> lp.LoopKernel:
    """*knl* (a row kernel whose reductions walk rows in lanes tagged by
    *tags*, or in two vectors along the lanes *vectors*) for CPUs: one
    work-item per row (a work-group each, so that the compiler vectorizes the
    lanes, not across rows), the elementwise work over the row and the loops
    filling row arrays (*row_loops*) in :data:`CPU_LANES` lanes too."""
    ndim = len(shape)
    knl = lp.tag_inames(knl, tags)
    for iname in vectors:
        knl = lp.split_iname(knl, iname, CPU_LANES, outer_tag="ilp", inner_tag="vec")
    if shape[-1] >= CPU_LANES:
        for iname in (f"i{ndim - 1}", *row_loops):
            knl = lp.split_iname(knl, iname, CPU_LANES, inner_tag="vec")
    return lp.tag_inames(knl, _row_groups(ndim))


def row_group(extent: int) -> int:
    """Work-items of a GPU row kernel over rows of *extent* elements: each
    holds at most :data:`ROW_SLOTS` elements of a row array."""
    group = ROW_GROUP
    while group < MAX_GROUP and extent > group * ROW_SLOTS:
        group *= 2
    return group


def row_layout(extent: int, rows: int) -> tuple[int, int]:
    """(work-items per row, rows per work-group) of a GPU row kernel over
    rows of *extent* elements, *rows* of them along the innermost row axis.
    Rows of ROW_GROUP * SHORT_ROW_SLOTS elements and more get a work-group
    each (:func:`row_group`); shorter ones share a work-group of
    SHORT_ROW_GROUP work-items, a power of two of them per row holding at
    most SHORT_ROW_SLOTS elements each (TINY_ROW_SLOTS for rows of up to
    TINY_ROW; one work-item per row, no local reduction, for rows that
    fit its slots). Rows of up to MID_ROW elements, a ROW_GROUP each,
    share a work-group of MID_ROW_GROUP."""
    if extent >= ROW_GROUP * SHORT_ROW_SLOTS:
        if extent <= MID_ROW:
            return ROW_GROUP, max(1, min(MID_ROW_GROUP // ROW_GROUP, _pow2_at_least(rows)))
        return row_group(extent), 1
    slots = TINY_ROW_SLOTS if extent <= TINY_ROW else SHORT_ROW_SLOTS
    lanes = _pow2_at_least(-(-extent // slots))
    return lanes, max(1, min(SHORT_ROW_GROUP // lanes, _pow2_at_least(rows)))


def row_kernel_schedule(knl: lp.LoopKernel, shape: tuple, tags: dict,
                        rows_per_group: int = 1, lanes: int | None = ROW_GROUP
                        ) -> lp.LoopKernel:
    """*knl* (a row kernel whose rows are walked by the work-items and
    unrolled slots that *tags* names, see :func:`row_layout`) for GPUs: the
    work-items of a row (*lanes* of them, along ``l.0``) reduce the row
    together (a local tree whose result each of them reads), then write the
    row, each its own elements. A work-group holds *rows_per_group*
    neighbouring rows of the innermost row axis (along ``l.1``, or ``l.0``
    with one work-item per row; the local trees then have a row of local
    memory each), else one row. (On PoCL this measured several times slower
    than one work-item per row, which the default schedule gives.)"""
    knl = lp.tag_inames(knl, tags)
    groups = _row_groups(len(shape))
    if rows_per_group > 1:
        row = f"i{len(shape) - 2}"
        del groups[row]
        knl = lp.split_iname(knl, row, rows_per_group, outer_tag="g.0",
                             inner_tag="l.0" if lanes == 1 else "l.1")
    return lp.tag_inames(knl, groups)


def _row_groups(ndim: int) -> dict[str, str]:
    """Tags putting the rows of a row kernel of *ndim* axes on work-groups:
    the innermost three axes before the last on ``g.0``, ``g.1``, ``g.2``."""
    return {f"i{k}": f"g.{n}" for n, k in enumerate(reversed(range(ndim - 1))) if n < 3}
