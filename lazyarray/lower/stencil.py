"""Stencils on GPUs: kernels that read an input at several rows.

A kernel whose result ``out[..., r, c]`` reads an input at rows ``r - 1``,
``r`` and ``r + 1`` (a heat step; two fused steps read five rows) reads each
input row several times. With a work-item per element and the work-items of
a group along one row, every one of those reads of another row comes from
the L2 cache: the kernel is limited by the cache, not by memory. Here each
work-item computes :data:`STENCIL_ROWS` consecutive rows of one column (an
unrolled loop), so a row it read for one result row is still in registers or
in the L1 cache for the next, and the work-items of a group still write
their rows contiguously.

Public names: reads_rows, stencil_schedule, STENCIL_GROUP, STENCIL_ROWS,
STENCIL_MIN_COLUMNS.
"""

from __future__ import annotations

from itertools import combinations

import pymbolic.primitives as prim
from pymbolic.mapper.distributor import distribute

import kernelcore as lp
from kernelcore import get_dependencies
from lazyarray.lower.tiles import input_reads, tag_batch

#: work-items per group, along the result's rows
STENCIL_GROUP = 256
#: consecutive result rows per work-item (ten heat steps on an H200, fused
#: in pairs, % of a copy's bandwidth per step with a work-item per element /
#: 2 / 4 / 8 rows: 8192x8192 80 / 83 / 98 / 104, 1048576x64 69 / 73 / 99 / 98,
#: 64x1048576 66 / 77 / 85 / 95, 4x16777216 77 / 96 / 138 / 138, 16384x16384
#: 79 / 83 / 98 / 106; ``benchmarks/ab_stencil_gpu.py``)
STENCIL_ROWS = 8
#: results with fewer columns keep the default layout (measured from 64
#: columns; rows of up to 4 have a work-item each, see
#: :func:`lazyarray.lower.tiles.has_narrow_rows`)
STENCIL_MIN_COLUMNS = 64


def reads_rows(knl: lp.LoopKernel, inames: list[str], extents: tuple) -> bool:
    """Whether *knl* (written along *inames* over *extents*, the last
    contiguous, at least :data:`STENCIL_MIN_COLUMNS` of them) reads an input
    at two rows a constant apart: two subscripts along the next-to-last of
    *inames* whose difference is a nonzero integer."""
    if len(inames) < 2 or extents[-1] < STENCIL_MIN_COLUMNS:
        return False
    row = inames[-2]
    for reads in input_reads(knl).values():
        along = list({ix[-2] for ix in reads
                      if len(ix) >= 2 and row in get_dependencies(ix[-2])})
        along = [a for a in along if _affine(a)]
        if any(isinstance(d := distribute(a - b), int) and d != 0
               for a, b in combinations(along, 2)):
            return True
    return False


def _affine(expr) -> bool:
    """Whether *expr* is built of integers and variables by sums and
    products with at most one factor that is not an integer (a gathered or
    wrapped subscript, ``(i + 13) % 200``, is not)."""
    if isinstance(expr, (int, prim.Variable)):
        return True
    if isinstance(expr, prim.Sum):
        return all(_affine(c) for c in expr.children)
    if isinstance(expr, prim.Product):
        return sum(not isinstance(c, int) for c in expr.children) <= 1 and all(
            _affine(c) for c in expr.children)
    return False


def stencil_schedule(knl: lp.LoopKernel, inames: list[str], extents: tuple,
                     group: int = STENCIL_GROUP, rows: int = STENCIL_ROWS
                     ) -> lp.LoopKernel:
    """*knl* with work-groups of *group* work-items along its last iname,
    each work-item computing *rows* consecutive values of the one before
    (unrolled); any axis before those on work-group axis 2."""
    row, col = inames[-2], inames[-1]
    knl = lp.split_iname(knl, col, group, outer_tag="g.0", inner_tag="l.0")
    knl = lp.split_iname(knl, row, rows, outer_tag="g.1", inner_tag="unr")
    return tag_batch(knl, inames, extents)
