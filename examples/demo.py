"""kernelcore demo: build two loop kernels, run them through OpenCL, check them.

Run it with ``bash scripts/bootstrap.sh demo`` (which sets up .venv and
OpenCL first), or directly with ``.venv/bin/python examples/demo.py``.
Exits with a nonzero status if a result disagrees with NumPy.
"""

import sys

import numpy as np

import kernelcore as lp


def to_host(ary):
    """Return *ary* as a NumPy array (device arrays are copied back)."""
    if hasattr(ary, "get"):
        return ary.get()
    return np.asarray(ary)


def check(name, ok):
    print(f"{name}: {'OK' if ok else 'FAILED'}")
    return bool(ok)


def main():
    queue = lp.default_queue()
    dev = queue.device
    print(f"device: {dev.name.strip()} [{dev.platform.name.strip()}]")

    rng = np.random.default_rng(seed=42)
    all_ok = True

    # 1. Elementwise: out = 2*a over a one-dimensional ISL domain.
    knl = lp.make_kernel(
        "{ [i]: 0<=i<n }",
        "out[i] = 2*a[i]")

    a = rng.random(1000, dtype=np.float32)
    evt, (out,) = knl(queue, a=a)
    out = to_host(out)
    all_ok &= check("scale (out = 2*a)",
                    out.shape == a.shape and np.allclose(out, 2*a))

    print()
    print("Generated OpenCL code for the scale kernel:")
    print(lp.generate_code_v2(lp.add_dtypes(knl, {"a": np.float32})).device_code())

    # 2. Reduction: matrix-vector product y = A @ x.
    mv = lp.make_kernel(
        "{ [i,j]: 0<=i<n and 0<=j<m }",
        "y[i] = sum(j, A[i,j]*x[j])")

    n, m = 300, 200
    A = rng.random((n, m), dtype=np.float32)
    x = rng.random(m, dtype=np.float32)
    evt, (y,) = mv(queue, A=A, x=x)
    y = to_host(y)
    all_ok &= check("matvec (y = A @ x)",
                    y.shape == (n,) and np.allclose(y, A @ x, rtol=1e-4, atol=1e-4))

    # 3. The same matvec mapped onto the device: rows split into work-groups.
    par = lp.auto_parallelize(mv, queue.device)
    evt, (y,) = par(queue, A=A, x=x)
    all_ok &= check("parallel matvec (auto_parallelize)",
                    np.allclose(to_host(y), A @ x, rtol=1e-4, atol=1e-4))
    print()
    print("Generated OpenCL code for the parallel matvec:")
    print(lp.generate_code_v2(lp.add_dtypes(par, {"A": np.float32, "x": np.float32}))
          .device_code())

    if not all_ok:
        print("demo FAILED")
        return 1
    print("demo OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
