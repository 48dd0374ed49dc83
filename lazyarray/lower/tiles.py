"""Transposed reads: local-memory tiles on GPUs, register blocks on CPUs.

An elementwise kernel whose result is written along its last axis but which
reads an input along another axis (``2*a.T``, ``a.T + b``, a ``moveaxis``
materialized) would read that input with a large stride between neighbouring
work-items. On a GPU such a kernel works in square tiles instead: a
work-group first copies the input's tile into local memory, reading the input
contiguously, then writes its tile of the result, also contiguously, reading
the local copy transposed. The local tile has one spare column so that the
transposed reads fall into different memory banks.

On a CPU each work-item writes a :data:`BLOCK` x :data:`BLOCK` block of the
result, one row of the block at a time: the row's elements are contiguous
(one vector store), and the block's input rows stay in the L1 cache while the
block's columns are read (2*a.T of 1024x1024 on PoCL: 0.6 ms, 1.2 ms with
local-memory tiles, 7.6 ms for NumPy).

A GPU result of a few long rows read from a few columns (``2*a.T`` of a
16777216x4 ``a``) has no square tiles: each work-item writes one element of
every row, so that it reads a whole row of the input (neighbouring
addresses) and the work-items of a group write each row contiguously. A
result of many short rows (``2*a.T`` of a 4x16777216 ``a``) has each
work-item write a row, reading each input row contiguously across the group.
Results of such short rows get that layout whatever they read: a work-item
per element made the work-items of the boundary columns of a stencil
diverge from the others in every warp.

Public names: transposed_inputs, tiled_transpose_schedule, blocked_transpose_schedule,
narrow_transpose_schedule, is_narrow, read_subscripts, input_reads, tag_batch, BLOCK, NARROW
(the tile's edge and the row test are :mod:`lazyarray.plan.layouts`').
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import kernelcore as lp
from kernelcore import (
    AccessOutOfBoundsError,
    KernelcoreError,
    check_array_bounds,
    collect_accesses,
    get_dependencies,
)
from lazyarray.plan.layouts import NARROW_COLUMNS, TILE

#: edge of a CPU work-item's block
BLOCK = 16
#: work-item rows of a tile's work-group (each walks TILE // ROWS tile rows)
ROWS = 8
#: a GPU result with at most this many rows (and more columns than a tile)
#: has each work-item write one element of every row (2*a.T of 16777216x4 on
#: an H200: 310 us with a work-group row per result row, 135 us, a copy's
#: time, this way)
NARROW = 16
#: work-items per group of that layout
NARROW_GROUP = 256


def tag_batch(knl: lp.LoopKernel, inames: list[str], extents: Sequence[int]) -> lp.LoopKernel:
    """*knl* with the innermost of *inames* before the last two (a batch axis)
    that has more than one element, if any, on work-group axis 2."""
    batch = [i for i, n in zip(inames[:-2], extents[:-2]) if n > 1]
    return lp.tag_inames(knl, {batch[-1]: "g.2"}) if batch else knl


def read_subscripts(knl: lp.LoopKernel, names: Collection[str]) -> dict[str, list[tuple]]:
    """The subscripts of every read of the arrays *names* in *knl*, by array."""
    found: dict[str, list[tuple]] = {}
    for name, index, _ in collect_accesses(knl.instructions).accesses:
        if name in names:
            found.setdefault(name, []).append(index)
    return found


def input_reads(knl: lp.LoopKernel) -> dict[str, list[tuple]]:
    """:func:`read_subscripts` of every array argument of *knl* but ``out``."""
    return read_subscripts(knl, [a.name for a in knl.args
                                 if a.name != "out" and getattr(a, "shape", None)])


def transposed_inputs(knl: lp.LoopKernel, inames: list[str]) -> list[str]:
    """The arguments of *knl* (written along *inames*, the last contiguous)
    that every read walks along another of the last two *inames*: their last
    subscript follows the next-to-last iname, not the last one."""
    if len(inames) < 2:
        return []
    row, col = inames[-2], inames[-1]
    result = []
    for name, reads in sorted(input_reads(knl).items()):
        if all(len(ix) >= 2 and get_dependencies(ix[-1]) & set(inames) == {row}
               and any(col in get_dependencies(e) for e in ix[:-1]) for ix in reads):
            result.append(name)
    return result


def tiled_transpose_schedule(knl: lp.LoopKernel, inames: list[str], extents: tuple,
                             arrays: list[str], tile: int = TILE, rows: int = ROWS
                             ) -> lp.LoopKernel | None:
    """*knl* computed in *tile* x *tile* tiles of its last two *inames* by
    work-groups of *tile* x *rows* work-items, each of *arrays* fetched into a
    padded local tile first; None when the reads do not allow it (their
    footprint is not a tile: a rolled or wrapped read covers a box reaching
    past its array)."""
    row, col = inames[-2], inames[-1]
    knl = lp.split_iname(knl, col, tile, outer_tag="g.0", inner_tag="l.0")
    knl = lp.split_iname(knl, row, tile, outer_tag="g.1")
    knl = lp.split_iname(knl, f"{row}_inner", rows, inner_tag="l.1")
    knl = tag_batch(knl, inames, extents)
    sweep = [f"{row}_inner_outer", f"{row}_inner_inner", f"{col}_inner"]
    for name in arrays:
        try:
            knl = lp.add_prefetch(knl, name, sweep, temporary_name=f"{name}_tile",
                                  default_tag="l.auto")
        except KernelcoreError:
            return None
        fetched = knl.temporary_variables[f"{name}_tile"]
        if len(fetched.shape) != 2 or fetched.shape[0] * fetched.shape[1] > 4 * tile * tile:
            return None                 # (a footprint in pieces: more than local memory holds)
        knl = lp.tag_array_axes(knl, fetched.name, f"stride:{fetched.shape[1] + 1},stride:1")
    try:
        check_array_bounds(knl)
    except AccessOutOfBoundsError:
        return None
    return knl


def blocked_transpose_schedule(knl: lp.LoopKernel, inames: list[str], extents: tuple,
                               block: int = BLOCK) -> lp.LoopKernel:
    """*knl* with each work-item computing a *block* x *block* block of its
    last two *inames*, row by row, a row's elements unrolled (for CPUs)."""
    row, col = inames[-2], inames[-1]
    knl = lp.split_iname(knl, col, block, outer_tag="g.0", inner_tag="ilp")
    knl = lp.split_iname(knl, row, block, outer_tag="g.1")
    knl = tag_batch(knl, inames, extents)
    return knl


def is_narrow(extents: tuple) -> bool:
    """Whether a result of *extents* gets :func:`narrow_transpose_schedule`:
    at most :data:`NARROW` rows or :data:`NARROW_COLUMNS` columns (more
    than one), the other axis longer than a tile."""
    rows, cols = extents[-2:]
    return (1 < rows <= NARROW and cols > TILE) or (1 < cols <= NARROW_COLUMNS
                                                      and rows > TILE)


def narrow_transpose_schedule(knl: lp.LoopKernel, inames: list[str], extents: tuple
                              ) -> lp.LoopKernel:
    """*knl* (a result with few rows or columns along the last two of
    *inames*, see :func:`is_narrow`) with each work-item writing one element
    of every short row, or one whole short row, the short loop unrolled (for
    GPUs)."""
    row, col = inames[-2], inames[-1]
    long, short = (col, row) if 1 < extents[-2] <= NARROW else (row, col)
    knl = lp.split_iname(knl, long, NARROW_GROUP, outer_tag="g.0", inner_tag="l.0")
    knl = lp.tag_inames(knl, {short: "unr"})
    return tag_batch(knl, inames, extents)
