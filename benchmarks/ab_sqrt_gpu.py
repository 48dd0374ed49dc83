"""GPU A/B behind issue 21's W2 choices: W2's kernel as lazyarray writes it
(eight steps of ``x*0.999 + 0.5*sqrt(|x| + 1)``, no contraction) built with
the correctly rounded sqrt option (kernelcore's default), with that option
and PTX's ``sqrt.rn.f32`` inline, and without the option (not NumPy's
results); each with 1 and 4 elements per work-item. Kernel times from
profiling events, as % of a buffer copy, and the largest distance from
NumPy's result in ulps.

    python benchmarks/ab_sqrt_gpu.py [log2 sizes, default 26 28]
"""
import sys
from functools import partial

import numpy as np
import pyopencl as cl
from common import median_seconds

PTX_SQRT = """inline float kc_sqrtf(float x)
{
#ifdef KC_PTX_SQRT
  float r;
  asm("sqrt.rn.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return sqrt(x);
#endif
}"""
STEPS = "\n".join("  v = v * s1 + s2 * SQRT(fabs(v) + s3);" for _ in range(8))
CR = "-cl-fp32-correctly-rounded-divide-sqrt"
VARIANTS = (("flag, builtin sqrt", [CR], "sqrt"),
            ("flag, PTX sqrt.rn", [CR, "-DKC_PTX_SQRT"], "kc_sqrtf"),
            ("no flag, builtin sqrt", [], "sqrt"))


def source(sqrt: str, per: int) -> str:
    """W2's kernel with *sqrt* and *per* elements per work-item."""
    return f"""#pragma OPENCL FP_CONTRACT OFF
{PTX_SQRT}
#define SQRT {sqrt}
__kernel void __attribute__ ((reqd_work_group_size(256, 1, 1)))
k(__global float *restrict out, __global const float *restrict in0,
  float s1, float s2, float s3)
{{
  for (int j = 0; j < {per}; ++j) {{
  int i = get_local_id(0) + 256 * (get_group_id(0) * {per} + j);
  float v = in0[i];
{STEPS}
  out[i] = v;
  }}
}}"""



def main() -> None:
    ctx = cl.create_some_context(interactive=False)
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    dev = q.device
    print(dev.name, dev.platform.name, dev.driver_version)
    for log2 in map(int, sys.argv[1:] or (26, 28)):
        n = 1 << log2
        x = np.random.rand(n).astype(np.float32) * 2 - 1
        xb = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
        ob = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
        ref = x.copy()
        for _ in range(8):
            ref = ref * np.float32(0.999) + np.float32(0.5) * np.sqrt(np.abs(ref) + np.float32(1))
        copy = median_seconds(q, partial(cl.enqueue_copy, q, ob, xb))
        print(f"2^{log2}: copy {copy * 1e6:.1f} us")
        for name, options, sqrt in VARIANTS:
            if "PTX" in name and "NVIDIA" not in dev.platform.vendor:
                continue
            for per in (1, 4):
                k = cl.Program(ctx, source(sqrt, per)).build(options=options).k
                k.set_args(ob, xb, np.float32(0.999), np.float32(0.5), np.float32(1))
                t = median_seconds(
                    q, partial(cl.enqueue_nd_range_kernel, q, k, (n // per,), (256,)))
                got = np.empty_like(x)
                cl.enqueue_copy(q, got, ob)
                q.finish()
                ulp = np.max(np.abs(got.view(np.int32).astype(np.int64) - ref.view(np.int32)))
                print(f"  {name:24s} per={per}: {t * 1e6:8.1f} us  {copy / t * 100:5.1f}% "
                      f"of copy  max ulp vs numpy {ulp}")


if __name__ == "__main__":
    main()
