"""CPU A/B for float32 ``sin`` on PoCL: kernelcore's branch-free helper
(``kc_sin_f32``, one element per work-item, which PoCL vectorizes across
work-items) against its vector version (``f32_vector_helper``: 16 elements
per work-item, branching on the whole vector: when every lane is below 2^18
in magnitude, a Cody-Waite reduction in double (pi/2 in three parts) and
the same Taylor polynomials, else the helper over the lanes). A work-item's
code cannot branch on its neighbours' lanes; an explicit vector can (OpenCL's
``all``). Times of ``sin(e)`` and of W1's ``a*b + c*d - sin(e)`` over 2^21
values, and the number of results that differ from the helper's (bitwise)
on values from ordinary ones to random bit patterns and near multiples of
pi/2.

    python benchmarks/ab_sin_vector_cpu.py [log2 size, default 21]
"""
import statistics
import sys
import time

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from common import ensure_repo_on_path

ensure_repo_on_path()
from kernelcore.target.f32math import f32_helper_source, f32_vector_helper  # noqa: E402

WIDTH = 16


def source(width: int) -> str:
    w = width
    vector = f32_vector_helper("kc_sin_f32", w)
    assert vector is not None
    return ("#pragma OPENCL FP_CONTRACT OFF\n" + f32_helper_source("kc_sin_f32")
            + vector[1] + f"""
__kernel void sin_vector(__global float *out, __global const float *e)
{{
  size_t i = get_global_id(0);
  vstore{w}(kc_sin_f32v{w}(vload{w}(i, e)), i, out);
}}
__kernel void sin_helper(__global float *out, __global const float *e)
{{
  size_t i = get_global_id(0);
  out[i] = kc_sin_f32(e[i]);
}}
__kernel void w1_vector(__global float *out, __global const float *a, __global const float *b,
                        __global const float *c, __global const float *d,
                        __global const float *e)
{{
  size_t i = get_global_id(0);
  vstore{w}(vload{w}(i, a) * vload{w}(i, b) + vload{w}(i, c) * vload{w}(i, d)
            - kc_sin_f32v{w}(vload{w}(i, e)), i, out);
}}
__kernel void w1_helper(__global float *out, __global const float *a, __global const float *b,
                        __global const float *c, __global const float *d,
                        __global const float *e)
{{
  size_t i = get_global_id(0);
  out[i] = a[i] * b[i] + c[i] * d[i] - kc_sin_f32(e[i]);
}}
""")


def hard_values(n: int, rng) -> np.ndarray:
    """Ordinary values, values up to 2^18 of both signs, random bit patterns
    (NaNs and infinities included), floats nearest to multiples of pi/2."""
    q = n // 4
    bits = rng.integers(0, 2**32, q, dtype=np.uint64).astype(np.uint32).view(np.float32)
    signs = np.where(rng.random(q) < 0.5, -1, 1)
    return np.concatenate([
        rng.random(q, dtype=np.float32) * 10,
        (rng.random(q) * 2**18 * signs).astype(np.float32),
        bits,
        (np.arange(1, n - 3 * q + 1) * (np.pi / 2)).astype(np.float32)])


def main() -> None:
    n = 1 << int(sys.argv[1] if len(sys.argv) > 1 else 21)
    ctx = cl.create_some_context(interactive=False)
    q = cl.CommandQueue(ctx)
    print(q.device.name, q.device.platform.name)
    prg = cl.Program(ctx, source(WIDTH)).build()
    kernels = {name: cl.Kernel(prg, name)
               for name in ("sin_helper", "sin_vector", "w1_helper", "w1_vector")}
    rng = np.random.default_rng(0)
    inputs = [cla.to_device(q, rng.random(n, dtype=np.float32)) for _ in range(5)]
    out = cla.empty_like(inputs[0])

    def launch(name: str, values) -> None:
        vector = name.endswith("vector")
        args = [out.data] + [v.data for v in values]
        kernels[name](q, (n // WIDTH,) if vector else (n,), (8,) if vector else (64,), *args)

    for name in list(kernels) * 2:
        values = inputs if name.startswith("w1") else inputs[4:]
        launch(name, values)
        q.finish()
        samples = []
        for _ in range(20):
            start = time.perf_counter()
            launch(name, values)
            q.finish()
            samples.append(time.perf_counter() - start)
        print(f"  {name:12s} {statistics.median(samples) * 1e3:7.2f} ms")
    hard = cla.to_device(q, hard_values(n, rng))
    launch("sin_vector", [hard])
    vector = out.get()
    launch("sin_helper", [hard])
    helper = out.get()
    same = (vector.view(np.uint32) == helper.view(np.uint32)) | (
        np.isnan(vector) & np.isnan(helper))
    print(f"  results that differ from the helper's: {int((~same).sum())} of {n}")


if __name__ == "__main__":
    main()
