"""Matrix products: register and local-memory blocking on GPUs, register
blocking in vectors on CPUs.

A reduction ``out[..., i, j] = sum(k, A[..., i, k] * B[..., k, j])`` (matmul,
einsum, tensordot, any operands transposed or broadcast) is computed in
blocks: each work-group owns a ``GROUP[0]*BLOCK[0]`` by ``GROUP[1]*BLOCK[1]``
block of the result; for every ``K_TILE`` slice of *k* the group first copies
the slices of A and B it needs into local memory, then each work-item
accumulates its ``BLOCK[0] x BLOCK[1]`` outputs in registers. A work-item's
outputs come in runs of :data:`RUN` neighbours along both axes, the runs
``GROUP * RUN`` apart; A's slab is stored transposed (k major, padded), so
that a work-item's rows of one k, like its columns of B's slab, are one
aligned vector of local memory (the slabs are declared aligned, and the
column run is a ``vec`` loop): on an H200 this took 4096^3 float32
products from 29.9 to 44.8 TFLOP/s, 0.87 of cuBLAS
(``benchmarks/ab_sgemm_gpu.py``).

On a CPU (:func:`cpu_contraction_schedule`) a work-item owns ``CPU_ROWS``
rows by ``CPU_VECTORS`` vectors of ``CPU_WIDTH`` columns of the result and
keeps them in vector registers: for every *k* it multiplies one element of
A per row by a vector load from a row of B (a ``vec`` loop).

Public names: contraction_operands, contraction_schedule, cpu_contraction_schedule,
GROUP, BLOCK, K_TILE, RUN, RUN_TAGS, SLAB_ALIGNMENT, A_PAD, TRANSPOSE_A, UNROLL_K, CPU_ROWS,
CPU_VECTORS, CPU_WIDTH.
"""

from __future__ import annotations

import pymbolic.primitives as prim

import kernelcore as lp
from kernelcore import KernelcoreError, find_reductions, get_dependencies
from lazyarray.lower.tiles import input_reads, read_subscripts, tag_batch

#: work-items of a group along (i, j)
GROUP = (16, 16)
#: outputs per work-item along (i, j)
BLOCK = (8, 8)
#: length of the k slices staged in local memory
K_TILE = 16
#: contiguous outputs of a work-item along each axis (a 16-byte vector)
RUN = 4
#: tags of a work-item's run, by local axis: rows (1) unrolled, columns (0) a vector
RUN_TAGS = {1: "ilp", 0: "vec"}
#: the local slabs' alignment, in elements
SLAB_ALIGNMENT = 16
#: spare words after each k of A's transposed slab
A_PAD = 4
#: whether A's slab is stored transposed (k major)
TRANSPOSE_A = True
#: tag of the loop over a k slice
UNROLL_K = "unr"
#: result rows, vectors per row and vector width of one CPU work-item
#: (float32 products on PoCL with two AVX-512 cores: 6 x 4 float16
#: accumulators took 0.99 ms at 512² (270 GFLOP/s, near NumPy's BLAS) and
#: 13.9 ms at 1024²; 8 x 2 1.05 and 14.8 ms, 4 x 4 1.19 and 18.4 ms)
CPU_ROWS, CPU_VECTORS, CPU_WIDTH = 6, 4, 16


def contraction_operands(knl: lp.LoopKernel, i: str, j: str, k: str) -> tuple[str, str] | None:
    """``(A, B)``: the arguments the single reduction of *knl* over *k* multiplies,
    A read along (i, k) and B along (k, j), each read once; None for other kernels."""
    if len(knl.instructions) != 1:
        return None
    [insn] = knl.instructions
    reductions = [r for e in insn.expressions() for r in find_reductions(e)]
    if len(reductions) != 1 or reductions[0].inames != (k,) \
            or reductions[0].operation != "sum":
        return None
    reads = input_reads(knl)
    if len(reads) != 2 or any(len(r) != 1 for r in reads.values()):
        return None
    roles = {}
    for name, [index] in reads.items():
        used = set().union(*(get_dependencies(e) for e in index)) & {i, j, k}
        roles[frozenset(used)] = name
    a, b = roles.get(frozenset({i, k})), roles.get(frozenset({k, j}))
    return (a, b) if a and b else None


def contraction_schedule(knl: lp.LoopKernel, out_inames: list[str], k: str,
                         extents: dict[str, int], group: tuple[int, int] = GROUP,
                         block: tuple[int, int] = BLOCK, k_tile: int = K_TILE
                         ) -> lp.LoopKernel | None:
    """*knl* blocked as the module describes, or None when it is not a
    contraction or too small to fill a block of the default sizes or of the
    sizes given (so other sizes change how a kernel is blocked, never whether)."""
    if len(out_inames) < 2:
        return None
    i, j = out_inames[-2], out_inames[-1]
    operands = contraction_operands(knl, i, j, k)
    if operands is None or not all(
            extents[i] >= g[0] * b[0] and extents[j] >= g[1] * b[1] and extents[k] >= t
            for g, b, t in ((GROUP, BLOCK, K_TILE), (group, block, k_tile))):
        return None
    a, b = operands
    sweeps = []
    for name, threads, per_item, tag in ((i, group[0], block[0], 1), (j, group[1], block[1], 0)):
        knl = lp.split_iname(knl, name, threads * per_item, outer_tag=f"g.{tag}")
        runs = RUN if per_item % RUN == 0 else 1
        knl = lp.split_iname(knl, f"{name}_inner", threads * runs, outer_tag="ilp")
        knl = lp.split_iname(knl, f"{name}_inner_inner", runs, outer_tag=f"l.{tag}",
                             inner_tag=RUN_TAGS[tag])
        sweeps.append([f"{name}_inner_outer", f"{name}_inner_inner_outer",
                       f"{name}_inner_inner_inner"])
    knl = tag_batch(knl, out_inames, [extents[n] for n in out_inames])
    knl = lp.split_iname(knl, k, k_tile, inner_tag=UNROLL_K)
    try:
        for name, sweep in ((a, sweeps[0]), (b, sweeps[1])):
            knl = lp.add_prefetch(knl, name, [f"{k}_inner", *sweep],
                                  temporary_name=f"{name}_slab", default_tag="l.auto")
    except KernelcoreError:
        return None
    # (aligned slabs: a work-item's run is one vector load from local memory)
    itemsize = knl.arg_dict[a].dtype.itemsize  # type: ignore[union-attr]
    knl = lp.set_temporary_alignment(knl, [f"{a}_slab", f"{b}_slab"], SLAB_ALIGNMENT * itemsize)
    slab = knl.temporary_variables[f"{a}_slab"]
    if TRANSPOSE_A and len(slab.shape) == 2 and slab.shape[0] == group[0] * block[0]:
        # A's slab transposed: a work-item's rows of one k are contiguous
        rows = slab.shape[0] + A_PAD
        knl = lp.tag_array_axes(knl, slab.name, f"stride:1,stride:{rows}")
    return knl


def cpu_contraction_schedule(knl: lp.LoopKernel, out_inames: list[str], k: str,
                             extents: dict[str, int], rows: int = CPU_ROWS,
                             vectors: int = CPU_VECTORS) -> lp.LoopKernel | None:
    """*knl* register-blocked in vectors as the module describes (*rows* by
    *vectors* vectors per work-item, fewer vectors, halving, where the
    columns are not a multiple of that many), or None when it is not a
    contraction whose B rows are contiguous along the result's columns, a
    multiple of :data:`CPU_WIDTH` long."""
    if len(out_inames) < 2:
        return None
    i, j = out_inames[-2], out_inames[-1]
    operands = contraction_operands(knl, i, j, k)
    if operands is None or extents[j] % CPU_WIDTH:
        return None
    [b_index] = read_subscripts(knl, [operands[1]])[operands[1]]
    if not (isinstance(b_index[-1], prim.Variable) and b_index[-1].name == j):
        return None
    while extents[j] % (vectors * CPU_WIDTH):
        vectors //= 2
    knl = lp.split_iname(knl, j, vectors * CPU_WIDTH, outer_tag="g.0")
    knl = lp.split_iname(knl, f"{j}_inner", CPU_WIDTH, outer_tag="ilp", inner_tag="vec")
    knl = lp.split_iname(knl, i, rows, outer_tag="g.1", inner_tag="ilp")
    return tag_batch(knl, out_inames, [extents[n] for n in out_inames])
