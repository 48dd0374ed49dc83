"""Float32 matrix products on NVIDIA tensor cores (TF32 inputs).

A TF32 product is defined as: each operand element rounded to TF32 (10
mantissa bits, to nearest, ties away from zero: PTX's ``cvt.rna.tf32.f32``,
modelled by :func:`round_tf32` and kernelcore's ``round_tf32`` function),
the products and their sums in float32 (in the tensor cores' order).

:func:`tf32_kernel` computes it for two plain row-major float32 matrices
whose sizes are whole tiles (:func:`tensor_core_shapes`), through inline PTX
``mma.sync`` (NVIDIA GPUs of compute capability 8 or more): a work-group of 8
warps owns a :data:`BM` x :data:`BN` block of the result; for each :data:`BK`
slice of k it copies A's and B's slices into local memory (float4 loads, rows
padded so that a warp's fragment reads hit 32 different banks), then each
warp multiplies its 64 x 32 part in m16n8k8 steps (4 x 4 tiles of 4
accumulators per work-item). ``benchmarks/ab_sgemm_gpu.py tf32`` checks and
times it against cuBLAS with TF32.

Public names: BM, BN, BK, THREADS, tf32_body, tf32_kernel, tensor_core_schedule,
tensor_core_shapes, round_tf32.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pymbolic.primitives as prim

import kernelcore as lp
from kernelcore import Reduction, TypeCast
from lazyarray.lower.contraction import contraction_operands

#: result rows and columns of a work-group, and the k slice it stages
BM, BN, BK = 128, 128, 16
#: work-items of a group (8 warps: 2 along the rows, 4 along the columns)
THREADS = 256
#: whether elements are rounded to TF32 as they are copied to local memory
#: (once) rather than as fragments are read (once per warp reading them):
#: 72.5 against 70.2 TFLOP/s at 4096^3 on an H200
ROUND_ON_COPY = True
#: row lengths of the local slabs (padded: A's by 4 words, B's by 8)
A_ROW, B_ROW = BK + 4, BN + 8


def tensor_core_shapes(m: int, n: int, k: int) -> bool:
    """Whether an (m x k) by (k x n) product is a whole number of tiles."""
    return m % BM == 0 and n % BN == 0 and k % BK == 0 and min(m, n, k) > 0


def tf32_body(n: int, k: int, a: str = "in0", b: str = "in1", out: str = "out",
              a_slab: str = "a_slab", b_slab: str = "b_slab", thread: str = "tid",
              row_block: str = "gi", col_block: str = "gj",
              round_on_copy: bool | None = None) -> str:
    """The OpenCL statements of one work-item (*thread* of its group, in the
    group at (*row_block*, *col_block*)) computing ``out = a @ b`` for
    row-major A (rows of *k*) and B (rows of *n*), with local slabs of
    ``BM * A_ROW`` and ``BK * B_ROW`` floats. With *round_on_copy* the
    elements are rounded to TF32 once, as they are copied to local memory,
    else each time a fragment is read."""
    if round_on_copy is None:
        round_on_copy = ROUND_ON_COPY

    def rounded_copy(value: str, to: str) -> str:
        if not round_on_copy:
            return f"vstore4({value}, 0, {to});"
        parts = " ".join(f'asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u{e}) : "f"({value}.s{e}));'
                         for e in range(4))
        return (f"{{ unsigned u0, u1, u2, u3; {parts} "
                f"vstore4(as_float4((uint4) (u0, u1, u2, u3)), 0, {to}); }}")

    def fragment(into: str) -> str:
        if round_on_copy:
            return f"{into} = as_uint(v[e]);"
        return f'asm("cvt.rna.tf32.f32 %0, %1;" : "=r"({into}) : "f"(v[e]));'

    copy_a = rounded_copy("va", f"{a_slab} + r * {A_ROW} + 4 * q")
    copy_b = rounded_copy("vb", f"{b_slab} + kr * {B_ROW} + 4 * c")
    fragment_a, fragment_b = fragment("fa[i][e]"), fragment("fb[j][e]")
    return f"""
int lane = {thread} & 31, warp = {thread} >> 5;
int g = lane >> 2, t = lane & 3;
int wr = 64 * (warp >> 2), wc = 32 * (warp & 3);
size_t row0 = (size_t) {BM} * {row_block}, col0 = (size_t) {BN} * {col_block};
float acc[4][4][4];
for (int x = 0; x < 64; ++x) ((float *) acc)[x] = 0.0f;
for (int k0 = 0; k0 < {k}; k0 += {BK}) {{
  for (int p = 0; p < 2; ++p) {{
    int f = {thread} + {THREADS} * p;
    int r = f >> 2, q = f & 3;
    int kr = f >> 5, c = f & 31;
    float4 va = vload4(0, {a} + (row0 + r) * {k} + k0 + 4 * q);
    float4 vb = vload4(0, {b} + (size_t) (k0 + kr) * {n} + col0 + 4 * c);
    {copy_a}
    {copy_b}
  }}
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int kk = 0; kk < {BK}; kk += 8) {{
    unsigned fa[4][4], fb[4][2];
    for (int i = 0; i < 4; ++i) {{
      int r = wr + 16 * i + g;
      float v[4] = {{{a_slab}[r * {A_ROW} + kk + t], {a_slab}[(r + 8) * {A_ROW} + kk + t],
                    {a_slab}[r * {A_ROW} + kk + t + 4],
                    {a_slab}[(r + 8) * {A_ROW} + kk + t + 4]}};
      for (int e = 0; e < 4; ++e)
        {fragment_a}
    }}
    for (int j = 0; j < 4; ++j) {{
      int c = wc + 8 * j + g;
      float v[2] = {{{b_slab}[(kk + t) * {B_ROW} + c], {b_slab}[(kk + t + 4) * {B_ROW} + c]}};
      for (int e = 0; e < 2; ++e)
        {fragment_b}
    }}
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                     "{{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, "
                     "{{%0, %1, %2, %3}};"
                     : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]),
                       "+f"(acc[i][j][3])
                     : "r"(fa[i][0]), "r"(fa[i][1]), "r"(fa[i][2]), "r"(fa[i][3]),
                       "r"(fb[j][0]), "r"(fb[j][1]));
  }}
  barrier(CLK_LOCAL_MEM_FENCE);
}}
for (int i = 0; i < 4; ++i)
  for (int j = 0; j < 4; ++j) {{
    size_t r = row0 + wr + 16 * i + g, c = col0 + wc + 8 * j + 2 * t;
    vstore2((float2) (acc[i][j][0], acc[i][j][1]), 0, {out} + r * {n} + c);
    vstore2((float2) (acc[i][j][2], acc[i][j][3]), 0, {out} + (r + 8) * {n} + c);
  }}
"""


def tf32_kernel(m: int, n: int, k: int, a: str = "in0", b: str = "in1") -> lp.LoopKernel:
    """The kernelcore kernel computing ``out = a @ b`` (float32, row-major,
    sizes :func:`tensor_core_shapes` accepts) on the tensor cores."""
    f32 = np.float32
    knl = lp.make_kernel(
        f"{{[tid, gi, gj]: 0 <= tid < {THREADS} and 0 <= gi < {m // BM} "
        f"and 0 <= gj < {n // BN}}}",
        [lp.CInstruction(["tid", "gi", "gj"], tf32_body(n, k, a, b),
                         read_variables={a, b, "a_slab", "b_slab"},
                         assignees="out[0]; a_slab[0]; b_slab[0]", id="mma")],
        [lp.GlobalArg("out", f32, shape=(m, n)), lp.GlobalArg(a, f32, shape=(m, k)),
         lp.GlobalArg(b, f32, shape=(k, n)),
         lp.TemporaryVariable("a_slab", f32, shape=(BM * A_ROW,),
                              address_space=lp.AddressSpace.LOCAL),
         lp.TemporaryVariable("b_slab", f32, shape=(BK * B_ROW,),
                              address_space=lp.AddressSpace.LOCAL)],
        name="lazyarray_kernel")
    knl = lp.tag_inames(knl, {"tid": "l.0", "gj": "g.0", "gi": "g.1"})
    return lp.set_options(knl, no_numpy=True).default_entrypoint


def tensor_core_schedule(knl: lp.LoopKernel, out_inames: list[str], k: str,
                         extents: dict[str, int]) -> lp.LoopKernel | None:
    """:func:`tf32_kernel` in place of *knl* where *knl* is exactly
    ``out[i, j] = sum(k, round_tf32(A[i, k]) * round_tf32(B[k, j]))`` over two
    float32 arguments stored row-major as (i, k) and (k, j) matrices of whole
    tiles; None otherwise."""
    if len(out_inames) != 2:
        return None
    i, j = out_inames
    operands = contraction_operands(knl, i, j, k)
    if operands is None:
        return None
    a, b = operands
    m, n, depth = extents[i], extents[j], extents[k]
    args: dict[str, Any] = knl.arg_dict     # (the operands are arrays)
    if any(args[x].dtype != np.float32 for x in ("out", a, b)) or \
            tuple(args[a].shape) != (m, depth) or tuple(args[b].shape) != (depth, n) or \
            not tensor_core_shapes(m, n, depth):
        return None
    [insn] = knl.instructions
    var = prim.Variable

    def rounded(name, *index):
        return prim.Call(var("round_tf32"), (prim.Subscript(var(name),
                                                            tuple(var(x) for x in index)),))

    def bare(e):
        while isinstance(e, TypeCast) and e.dtype == np.float32:
            e = e.child
        return e

    body = bare(insn.expression)  # type: ignore[attr-defined]
    product = bare(body.expr) if isinstance(body, Reduction) else None
    want = {rounded(a, i, k), rounded(b, k, j)}
    if not (isinstance(body, Reduction) and body.inames == (k,) and body.operation == "sum"
            and isinstance(product, prim.Product) and len(product.children) == 2
            and {bare(c) for c in product.children} == want
            and insn.assignee == prim.Subscript(var("out"), (var(i), var(j)))):  # type: ignore[attr-defined]
        return None
    return tf32_kernel(m, n, depth, a, b)


def round_tf32(x: np.ndarray) -> np.ndarray:
    """*x* (float32) rounded to TF32 as ``cvt.rna.tf32.f32`` does: to the
    nearest value with 10 mantissa bits, ties away from zero; NaN stays NaN."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32)
    rounded = ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isnan(x), x, rounded)
