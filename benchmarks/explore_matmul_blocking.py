"""Explore register/local-memory blocking of the kernelcore matmul on a device.

Usage: python benchmarks/explore_matmul_blocking.py [N] — prints GFLOP/s of a
few tilings (threads per group x outputs per thread) next to the device BLAS
(CuPy when available), each checked against NumPy first.
"""

import sys
import time

import numpy as np

import kernelcore as lp


def blocked(ti, tj, bi, bj, tk, assume):
    """ti x tj work-items, each computing bi x bj outputs; k tiles of tk."""
    knl = lp.make_kernel("{[i,j,k]: 0<=i,j,k<n}", "c[i, j] = sum(k, a[i, k]*b[k, j])",
                         assumptions=assume, name="mm")
    knl = lp.split_iname(knl, "i", ti * bi, outer_tag="g.1")
    knl = lp.split_iname(knl, "i_inner", bi, outer_tag="l.1", inner_tag="ilp")
    knl = lp.split_iname(knl, "j", tj * bj, outer_tag="g.0")
    knl = lp.split_iname(knl, "j_inner", bj, outer_tag="l.0", inner_tag="ilp")
    knl = lp.split_iname(knl, "k", tk)
    knl = lp.add_prefetch(knl, "a", ["k_inner", "i_inner_outer", "i_inner_inner"],
                          default_tag="l.auto")
    knl = lp.add_prefetch(knl, "b", ["k_inner", "j_inner_outer", "j_inner_inner"],
                          default_tag="l.auto")
    return knl


def time_it(fn, queue, reps=10):
    fn()
    queue.finish()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    queue.finish()
    return (time.perf_counter() - start) / reps


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    queue = lp.default_queue()
    print("device:", queue.device.name)
    import pyopencl.array as cla
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    a_d, b_d = cla.to_device(queue, a), cla.to_device(queue, b)
    c_d = cla.empty(queue, (n, n), np.float32)
    flops = 2.0 * n**3
    try:
        import cupy
        ca, cb = cupy.asarray(a), cupy.asarray(b)
        cupy.matmul(ca, cb)
        cupy.cuda.Device().synchronize()
        start = time.perf_counter()
        for _ in range(10):
            cupy.matmul(ca, cb)
        cupy.cuda.Device().synchronize()
        blas = flops / ((time.perf_counter() - start) / 10) / 1e9
        print(f"cupy: {blas:.0f} GFLOP/s")
    except Exception as e:
        blas = None
        print("cupy unavailable:", e)
    configs = [(16, 16, 4, 4, 16), (16, 16, 8, 8, 8), (16, 16, 8, 8, 16), (16, 16, 4, 8, 16),
               (8, 32, 8, 4, 16), (16, 16, 8, 4, 16)]
    for assume in ["n >= 1", "n mod 128 = 0 and n >= 128"]:
        for cfg in configs:
            label = f"{cfg[0]}x{cfg[1]} threads, {cfg[2]}x{cfg[3]} per thread, k tile {cfg[4]}"
            try:
                knl = blocked(*cfg, assume)
                if "mod" in assume and (n % (cfg[0] * cfg[2]) or n % (cfg[1] * cfg[3])):
                    continue
                knl(queue, a=a_d, b=b_d, c=c_d)
                err = np.abs(c_d.get() - ref).max() / np.abs(ref).max()
                if err > 1e-4:
                    print(f"{label} [{assume}]: WRONG (rel err {err:.1e})")
                    continue
                t = time_it(lambda knl=knl: knl(queue, a=a_d, b=b_d, c=c_d)[0], queue)
                rate = flops / t / 1e9
                frac = f" = {rate / blas:.3f} of cupy" if blas else ""
                print(f"{label} [{assume}]: {rate:.0f} GFLOP/s{frac}")
            except lp.KernelcoreError as e:
                print(f"{label} [{assume}]: {type(e).__name__}: {str(e)[:160]}")


if __name__ == "__main__":
    main()
