"""GPU A/B behind issue 21's layouts for rows of four: softmax over Nx4 rows,
one work-item per row, with each of three ways to load a row (four scalar
loads, ``vload4``, one aligned ``float4``) and five ways to divide and store
it (four scalar stores; a vector division with scalar stores, an aligned
``float4`` store or ``vstore4``; scalar divisions with an aligned store),
all built with the correctly rounded division option (kernelcore's default);
then ``2*a.T`` of an Nx4 ``a`` with a work-group row per result row (the
default layout before) and with a work-item per result column. Kernel times
from profiling events, as % of a buffer copy; every result is checked.

    python benchmarks/ab_narrow_gpu.py [log2 rows, default 24]
"""
import sys
from functools import partial

import numpy as np
import pyopencl as cl
from common import median_seconds

CR = "-cl-fp32-correctly-rounded-divide-sqrt"

SOFTMAX_HEAD = """
__kernel void __attribute__ ((reqd_work_group_size(128, 1, 1)))
k(__global float *restrict out, __global float const *restrict in0)
{
  int i = get_local_id(0) + 128 * get_group_id(0);
  float r[4]; float m = -INFINITY, s = 0.0f;
"""
LOADS = {
    "scalar loads": "for (int j = 0; j < 4; j++) r[j] = in0[4 * i + j];",
    "vload4": "{ float4 v = vload4(i, in0); r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w; }",
    "aligned float4 load": "{ float4 v = *(__global const float4 *)(in0 + 4 * i); "
                           "r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w; }",
}
SOFTMAX_MIDDLE = """
  for (int j = 0; j < 4; j++) m = !(m <= r[j]) && r[j] == r[j] ? m : r[j];
  for (int j = 0; j < 4; j++) { r[j] = exp(r[j] - m); s += r[j]; }
"""
ROW = "(float4)(r[0], r[1], r[2], r[3])"
STORES = {
    "scalar stores": "for (int j = 0; j < 4; j++) out[4 * i + j] = r[j] / s;",
    "vector division, scalar stores": f"{{ float4 d = {ROW} / s; out[4*i] = d.x; "
                                      "out[4*i+1] = d.y; out[4*i+2] = d.z; out[4*i+3] = d.w; }",
    "vector division, aligned store": f"{{ float4 d = {ROW} / s; "
                                      "*(__global float4 *)(out + 4 * i) = d; }",
    "scalar divisions, aligned store": "{ float4 d = (float4)(r[0] / s, r[1] / s, r[2] / s, "
                                       "r[3] / s); *(__global float4 *)(out + 4 * i) = d; }",
    "vector division, vstore4": f"{{ float4 d = {ROW} / s; vstore4(d, i, out); }}",
}

TRANSPOSES = {
    "a work-group row per result row": """
__kernel void __attribute__ ((reqd_work_group_size(256, 1, 1)))
k(__global float *restrict out, __global float const *restrict in0, long n)
{
  long i = get_local_id(0) + 256 * (long) get_group_id(0);
  out[n * get_group_id(1) + i] = 2.0f * in0[4 * i + get_group_id(1)];
}""",
    "a work-item per result column": """
__kernel void __attribute__ ((reqd_work_group_size(256, 1, 1)))
k(__global float *restrict out, __global float const *restrict in0, long n)
{
  long i = get_local_id(0) + 256 * (long) get_group_id(0);
  for (int j = 0; j < 4; j++) out[n * j + i] = 2.0f * in0[4 * i + j];
}""",
}



def main() -> None:
    ctx = cl.create_some_context(interactive=False)
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    dev = q.device
    print(dev.name, dev.platform.name, dev.driver_version)
    for log2 in map(int, sys.argv[1:] or (24,)):
        n = 1 << log2
        x = np.random.default_rng(0).standard_normal((n, 4)).astype(np.float32)
        xb = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
        ob = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, x.nbytes)
        copy = median_seconds(q, partial(cl.enqueue_copy, q, ob, xb))
        print(f"2^{log2} x 4: copy {copy * 1e6:.1f} us")
        e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        softmax = e / e.sum(axis=1, keepdims=True)
        got = np.empty_like(x)
        for load_name, load in LOADS.items():
            for store_name, store in STORES.items():
                src = ("#pragma OPENCL FP_CONTRACT OFF\n" + SOFTMAX_HEAD + load
                       + SOFTMAX_MIDDLE + store + "\n}")
                k = cl.Program(ctx, src).build(options=[CR]).k
                k.set_args(ob, xb)
                t = median_seconds(q, partial(cl.enqueue_nd_range_kernel, q, k, (n,), (128,)))
                cl.enqueue_copy(q, got, ob)
                q.finish()
                assert np.allclose(got, softmax, rtol=1e-5), (load_name, store_name)
                print(f"  softmax, {load_name:20s} {store_name:32s} {t * 1e6:8.1f} us "
                      f"{copy / t * 100:5.1f}% of copy")
        for name, src in TRANSPOSES.items():
            k = cl.Program(ctx, src).build(options=[CR]).k
            k.set_args(ob, xb, np.int64(n))
            grid = (n, 4) if "row per" in name else (n,)
            local = (256, 1) if "row per" in name else (256,)
            t = median_seconds(q, partial(cl.enqueue_nd_range_kernel, q, k, grid, local))
            got_t = np.empty((4, n), np.float32)
            cl.enqueue_copy(q, got_t, ob)
            q.finish()
            assert np.array_equal(got_t, 2 * x.T), name
            print(f"  2*a.T, {name:40s} {t * 1e6:8.1f} us {copy / t * 100:5.1f}% of copy")


if __name__ == "__main__":
    main()
