"""GPU A/B behind issue 21's W6 (float32 matrix products): lazyarray's
blocked contraction built with each layout knob of
:mod:`lazyarray.lower.contraction` (contiguous runs per work-item, A's slab
transposed, the k slice unrolled, tile sizes), a hand-written float4 OpenCL
SGEMM as the ceiling of this OpenCL, and cuBLAS through CuPy (TF32 off).
Every kernel is checked against NumPy before it is timed; kernel times come
from profiling events. The PTX of each lazyarray variant is searched
for vector loads from local memory (``ld.shared.v4``).

    python benchmarks/ab_sgemm_gpu.py [N ...] [tf32]

With ``tf32`` it times lazyarray's tensor-core kernel (TF32 inputs, float32
sums) instead, against torch's and CuPy's cuBLAS with TF32 allowed, each
checked against NumPy on TF32-rounded inputs.
"""
import os
import re
import sys
import time

os.environ["LAZYARRAY_DISK_CACHE"] = "0"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import lazyarray as la
from lazyarray.explain import kernel_profiles
from lazyarray.lower import contraction
from lazyarray.run import default_queue
from lazyarray.run import steps as runtime

#: a float4 SGEMM written for this comparison: 16x16 work-items, 128x128
#: outputs per group, 8x8 per work-item in float4 runs, k slices of 16, A's
#: slab transposed (padded by one float4 per k)
HAND = """
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void sgemm(int M, int N, int K, __global const float *A, __global const float *B,
           __global float *C)
{
    int tx = get_local_id(0), ty = get_local_id(1), t = 16 * ty + tx;
    int row0 = 128 * get_group_id(1), col0 = 128 * get_group_id(0);
    __local float4 As[16][33];
    __local float4 Bs[16][32];
    __local float *as = (__local float *) As;
    float4 acc[8][2];
    for (int r = 0; r < 8; ++r) acc[r][0] = acc[r][1] = (float4) (0.0f);
    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int p = 0; p < 8; ++p) {
            int row = t / 16 + 16 * p, k = t % 16;
            as[132 * k + row] = A[(size_t) (row0 + row) * K + k0 + k];
        }
        for (int p = 0; p < 2; ++p) {
            int idx = t + 256 * p, k = idx / 32, c = idx % 32;
            Bs[k][c] = vload4(0, B + (size_t) (k0 + k) * N + col0 + 4 * c);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        #pragma unroll
        for (int k = 0; k < 16; ++k) {
            float4 a0 = As[k][ty], a1 = As[k][ty + 16], b0 = Bs[k][tx], b1 = Bs[k][tx + 16];
            float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            for (int r = 0; r < 8; ++r) {
                acc[r][0] = fma((float4) (a[r]), b0, acc[r][0]);
                acc[r][1] = fma((float4) (a[r]), b1, acc[r][1]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int r = 0; r < 8; ++r) {
        size_t row = row0 + 4 * ty + (r % 4) + 64 * (r / 4);
        vstore4(acc[r][0], 0, C + row * N + col0 + 4 * tx);
        vstore4(acc[r][1], 0, C + row * N + col0 + 64 + 4 * tx);
    }
}
"""

#: (label, RUN, A_PAD (None: A not transposed), UNROLL_K, tag of a column
#: run, (group, block, k_tile))
VARIANTS = [
    ("strided (before)", 1, None, None, "ilp", ((16, 16), (8, 8), 16)),
    ("runs 4, A^T, k unrolled", 4, 4, "unr", "ilp", ((16, 16), (8, 8), 16)),
    ("runs 4 vec, A^T, k unrolled", 4, 4, "unr", "vec", ((16, 16), (8, 8), 16)),
    ("runs 4 vec, A^T", 4, 4, None, "vec", ((16, 16), (8, 8), 16)),
    ("runs 4 vec, A^T pad 0, k unrolled", 4, 0, "unr", "vec", ((16, 16), (8, 8), 16)),
    ("runs 4 vec, A, k unrolled", 4, None, "unr", "vec", ((16, 16), (8, 8), 16)),
    ("runs 4 vec, A^T, k unrolled, k tile 32", 4, 4, "unr", "vec", ((16, 16), (8, 8), 32)),
    ("runs 4 vec, A^T, k unrolled, 16x8 items 8x16", 4, 4, "unr", "vec",
     ((16, 8), (8, 16), 16)),
]


def set_knobs(run, pad, unroll, column_tag, sizes):
    contraction.RUN = run
    contraction.A_PAD = pad if pad is not None else 0
    contraction.TRANSPOSE_A = pad is not None
    contraction.UNROLL_K = unroll
    contraction.RUN_TAGS = {1: "ilp", 0: column_tag}
    contraction.GROUP, contraction.BLOCK, contraction.K_TILE = sizes
    contraction.contraction_schedule.__defaults__ = sizes
    runtime._KERNELS.clear()
    runtime._PLANS.clear()


def ptx_loads(ctx, code):
    """(vector, scalar) loads from local memory in the PTX of *code*."""
    prg = cl.Program(ctx, code).build()
    ptx = prg.get_info(cl.program_info.BINARIES)[0].decode(errors="replace")
    return (len(re.findall(r"ld\.shared\.v[24]", ptx)),
            len(re.findall(r"ld\.shared\.f32", ptx)))


def code_of(y):
    text = la.explain(y, show_code=True, print_it=False)
    return "\n".join(line[4:] for line in text.splitlines() if line.startswith("  | "))


def cupy_rate(a, b, flops):
    import cupy
    ca, cb = cupy.asarray(a), cupy.asarray(b)
    ev0, ev1 = cupy.cuda.Event(), cupy.cuda.Event()
    cupy.matmul(ca, cb)
    ev0.record()
    for _ in range(10):
        cupy.matmul(ca, cb)
    ev1.record()
    ev1.synchronize()
    return flops / (cupy.cuda.get_elapsed_time(ev0, ev1) / 1e3 / 10) / 1e9


def tf32_section(q, n: int) -> None:
    """lazyarray's tensor-core product at *n*^3 against cuBLAS with TF32."""
    from lazyarray.lower import tensorcore
    from lazyarray.lower.tensorcore import round_tf32, tf32_kernel
    rng = np.random.default_rng(1)
    a = rng.random((n, n), dtype=np.float32) - 0.5
    b = rng.random((n, n), dtype=np.float32) - 0.5
    ref = round_tf32(a).astype(np.float64) @ round_tf32(b).astype(np.float64)
    full = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(ref).max()
    flops = 2.0 * n ** 3
    prof = cl.CommandQueue(q.context, q.device,
                           properties=cl.command_queue_properties.PROFILING_ENABLE)
    ad, bd = cla.to_device(prof, a), cla.to_device(prof, b)
    cd = cla.empty(prof, (n, n), np.float32)
    for on_copy in (False, True):
        tensorcore.ROUND_ON_COPY = on_copy
        knl = tf32_kernel(n, n, n)
        start = time.perf_counter()
        knl(prof, in0=ad, in1=bd, out=cd)
        got = cd.get()
        build = time.perf_counter() - start
        err, err_full = (np.abs(got - ref).max() / scale, np.abs(got - full).max() / scale)
        evs = [knl(prof, in0=ad, in1=bd, out=cd)[0] for _ in range(10)]
        prof.finish()
        t = sum(e.profile.end - e.profile.start for e in evs) / 10 / 1e9
        print(f"{n}^3 tf32 kernel, rounded {'on copy' if on_copy else 'per fragment'}: "
              f"{flops / t / 1e9:8.0f} GFLOP/s (err vs TF32 inputs {err:.1e}, vs float32 "
              f"{err_full:.1e}, build {build:.1f} s)", flush=True)
    tensorcore.ROUND_ON_COPY = True
    la_a, la_b = la.asarray(a), la.asarray(b)
    for precision in ("float32", "tf32"):
        runtime._KERNELS.clear()
        runtime._PLANS.clear()
        with la.matmul_precision(precision):
            got = np.asarray(la_a @ la_b)
            t = sum(p.seconds for p in kernel_profiles(la_a @ la_b, repeat=10))
            cores = "mma.sync" in code_of(la_a @ la_b)
        err = np.abs(got - (ref if precision == "tf32" else full)).max() / scale
        print(f"{n}^3 la.matmul_precision({precision!r}) a @ b: {flops / t / 1e9:8.0f} GFLOP/s "
              f"(err {err:.1e}, tensor cores: {cores})", flush=True)
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = True
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        tc = ta @ tb
        err = (tc.cpu().numpy() - ref).__abs__().max() / scale
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(10):
            ta @ tb
        e1.record()
        torch.cuda.synchronize()
        rate = flops / (e0.elapsed_time(e1) / 1e3 / 10) / 1e9
        print(f"{n}^3 torch cuBLAS tf32: {rate:8.0f} GFLOP/s (err vs TF32 inputs {err:.1e})",
              flush=True)
    except Exception as e:
        print("torch:", e)


def main() -> None:
    sizes = [int(s) for s in sys.argv[1:] if s != "tf32"] or [4096]
    q = default_queue()
    print(q.device.name, q.device.driver_version, flush=True)
    if "tf32" in sys.argv:
        for n in sizes:
            tf32_section(q, n)
        return
    prof = cl.CommandQueue(q.context, q.device,
                           properties=cl.command_queue_properties.PROFILING_ENABLE)
    hand = cl.Program(q.context, HAND).build().sgemm
    rng = np.random.default_rng(0)
    for n in sizes:
        a = rng.random((n, n), dtype=np.float32) - 0.5
        b = rng.random((n, n), dtype=np.float32) - 0.5
        ref = a.astype(np.float64) @ b.astype(np.float64)
        scale = np.abs(ref).max()
        flops = 2.0 * n ** 3
        try:
            print(f"{n}^3 cupy (TF32 off): {cupy_rate(a, b, flops):8.0f} GFLOP/s",
                  flush=True)
        except Exception as e:
            print("cupy:", e)
        ad, bd = cla.to_device(prof, a), cla.to_device(prof, b)
        cd = cla.empty(prof, (n, n), np.float32)
        grid = (n // 128 * 16, n // 128 * 16)
        hand(prof, grid, (16, 16), np.int32(n), np.int32(n), np.int32(n),
             ad.data, bd.data, cd.data)
        err = np.abs(cd.get() - ref).max() / scale
        evs = [hand(prof, grid, (16, 16), np.int32(n), np.int32(n), np.int32(n),
                    ad.data, bd.data, cd.data) for _ in range(10)]
        prof.finish()
        t = sum(e.profile.end - e.profile.start for e in evs) / 10 / 1e9
        vec, scalar = ptx_loads(q.context, HAND)
        print(f"{n}^3 hand-written float4: {flops / t / 1e9:8.0f} GFLOP/s (err {err:.1e}, "
              f"ld.shared vector {vec} scalar {scalar})", flush=True)
        la_a, la_b = la.asarray(a), la.asarray(b)
        for label, *knobs in VARIANTS:
            set_knobs(*knobs)
            start = time.perf_counter()
            y = la_a @ la_b
            got = np.asarray(y)
            build = time.perf_counter() - start
            err = np.abs(got - ref).max() / scale
            t = sum(p.seconds for p in kernel_profiles(la_a @ la_b, repeat=10))
            vec, scalar = ptx_loads(q.context, code_of(la_a @ la_b))
            print(f"{n}^3 {label}: {flops / t / 1e9:8.0f} GFLOP/s (err {err:.1e}, "
                  f"build {build:.1f} s, ld.shared vector {vec} scalar {scalar})",
                  flush=True)


if __name__ == "__main__":
    main()
