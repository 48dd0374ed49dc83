"""GPU A/B behind issue 21's column sums: is a split reduction's second
kernel worth replacing by a last-group combine? Column sums of a 16777216x4
float32 matrix, hand-written: two kernels (parts, then one work-group combines
them) against one kernel whose last work-group to finish (an atomic ticket)
combines the parts; lazyarray's jitted ``a.sum(axis=0)`` alongside. Per
variant: the median wall time of a call followed by ``queue.finish()``, and
the time per call of 200 calls waited for once; also the wall time of one
and two empty launches with a wait. Every result is checked against NumPy.

    NROWS=16777216 python benchmarks/ab_last_group_gpu.py
"""
import os
import statistics
import time

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

os.environ["LAZYARRAY_DISK_CACHE"] = "0"

import lazyarray as la
from lazyarray.run import default_queue

PARTS = 512
SOURCE = r"""
__kernel __attribute__((reqd_work_group_size(4, 64, 1)))
void stage1(__global const float *in0, __global float *part, __global float *out,
            __global volatile int *counter, int last_too)
{
  __local float buf[256];
  __local int is_last;
  int c = get_local_id(0), r = get_local_id(1), g = get_group_id(1);
  float acc = 0.0f;
  for (int rp = 0; rp < %(N)d / %(PARTS)d / 64; ++rp)
    acc += in0[4 * ((%(N)d / %(PARTS)d) * g + 64 * rp + r) + c];
  buf[64 * c + r] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 32; s > 0; s >>= 1) {
    if (r < s) buf[64*c+r] += buf[64*c+r+s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (r == 0) part[4 * g + c] = buf[64 * c];
  if (!last_too) return;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  if (c == 0 && r == 0) is_last = atomic_inc(counter) == get_num_groups(1) - 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!is_last) return;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  acc = 0.0f;
  for (int p = 0; p < %(PARTS)d / 64; ++p)
    acc += ((volatile __global float *)part)[4 * (64 * p + r) + c];
  buf[64 * c + r] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 32; s > 0; s >>= 1) {
    if (r < s) buf[64*c+r] += buf[64*c+r+s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (r == 0) out[c] = buf[64 * c];
  if (c == 0 && r == 0) *counter = 0;
}
__kernel __attribute__((reqd_work_group_size(4, 256, 1)))
void stage2(__global const float *part, __global float *out)
{
  __local float buf[1024];
  int c = get_local_id(0), r = get_local_id(1);
  float acc = 0.0f;
  for (int p = 0; p < %(PARTS)d / 256; ++p) acc += part[4 * (256 * p + r) + c];
  buf[256 * c + r] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 128; s > 0; s >>= 1) {
    if (r < s) buf[256*c+r] += buf[256*c+r+s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (r == 0) out[c] = buf[256 * c];
}
"""


def wall(queue, fn, n: int = 200) -> float:
    """Median microseconds of ``fn(); queue.finish()``."""
    for _ in range(20):
        fn()
    queue.finish()
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        queue.finish()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def piped(queue, fn, n: int = 200) -> float:
    """Microseconds per call of *n* calls waited for once."""
    for _ in range(20):
        fn()
    queue.finish()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    queue.finish()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    rows, cols = int(os.environ.get("NROWS", 16777216)), 4
    queue = default_queue()
    prg = cl.Program(queue.context, SOURCE % {"PARTS": PARTS, "N": rows}).build()
    x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    dx = cla.to_device(queue, x)
    part = cla.empty(queue, (PARTS * cols,), np.float32)
    out = cla.zeros(queue, (cols,), np.float32)
    counter = cla.zeros(queue, (1,), np.int32)
    k1, k2 = cl.Kernel(prg, "stage1"), cl.Kernel(prg, "stage2")
    want = x.sum(axis=0, dtype=np.float64)

    def two():
        k1.set_args(dx.data, part.data, out.data, counter.data, np.int32(0))
        cl.enqueue_nd_range_kernel(queue, k1, (4, 64 * PARTS), (4, 64))
        k2.set_args(part.data, out.data)
        cl.enqueue_nd_range_kernel(queue, k2, (4, 256), (4, 256))

    def one():
        k1.set_args(dx.data, part.data, out.data, counter.data, np.int32(1))
        cl.enqueue_nd_range_kernel(queue, k1, (4, 64 * PARTS), (4, 64))

    a = la.asarray(dx)
    f = la.jit(lambda a: a.sum(axis=0))
    variants = {"two kernels": (two, two, lambda: out.get()),
                "one kernel, last group combines": (one, one, lambda: out.get()),
                "lazyarray jit": (lambda: f(a).block_until_ready(), lambda: f(a),
                                  lambda: np.asarray(f(a)))}
    for name, (waited, launched, result) in variants.items():
        waited()
        queue.finish()
        ok = np.allclose(result(), want, rtol=1e-4)
        print(f"{name:34s} wall+wait {wall(queue, waited):7.1f} us   "
              f"pipelined {piped(queue, launched):7.1f} us  {'ok' if ok else 'WRONG'}",
              flush=True)
    tiny = cl.Program(queue.context, "__kernel void t(__global float *a) "
                      "{ a[get_global_id(0)] = 1.0f; }").build().t
    tiny.set_args(out.data)

    def launch():
        cl.enqueue_nd_range_kernel(queue, tiny, (4,), (4,))
    print(f"empty kernel launch+finish: {wall(queue, launch):.1f} us; "
          f"two launches + finish: {wall(queue, lambda: (launch(), launch())):.1f} us")
    g = la.jit(lambda a: a.sum(axis=1))
    print(f"lazyarray rows wall+wait {wall(queue, lambda: g(a).block_until_ready()):.1f} us")


if __name__ == "__main__":
    main()
