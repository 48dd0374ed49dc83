"""A/B of kernelcore's float32 math helpers (``math_f32="branch_free"``,
:mod:`kernelcore.target.f32math`) or, with ``--dtype float64``, its float64
ones (``math_f64``, :mod:`kernelcore.target.f64math`) against the device's
built-ins, through lazyarray, with NumPy alongside: per ufunc, the median
time of a warm ``la.jit`` call on 2^21 values (waited for), in one process
per choice. For PoCL's CPU devices (where lazyarray picks the helpers)::

    python benchmarks/ab_f32math_cpu.py [--dtype float64] [--log2 21] [--repeat 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

UNARY = ("sin", "cos", "tan", "arcsin", "arccos", "arctan", "log", "log2", "log10",
         "log1p", "exp2", "expm1", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "cbrt")
BINARY = ("power", "arctan2", "hypot")
#: the float64 ufuncs with kernelcore's helpers
UNARY_F64 = ("log", "log2", "log10", "log1p", "exp2", "expm1", "sinh", "cosh", "tanh",
             "arctan", "arcsin", "arccos", "cbrt")
BINARY_F64 = ("power", "arctan2", "hypot")


def _inputs(n: int, dtype: str):
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, n).astype(dtype)
    return x, rng.uniform(0.5, 4, n).astype(dtype)


def _domain(name: str, x, y):
    """Arguments where the function is defined (as the ufunc sees them)."""
    import numpy as np
    if name in ("arcsin", "arccos", "arctanh"):
        return (x / np.float32(4.5),)
    if name in ("log", "log2", "log10", "arccosh", "power"):
        return (y,) if name != "power" else (y, x)
    if name == "log1p":
        return (np.abs(x),)
    return (x, y) if name in BINARY else (x,)


def _names(dtype: str) -> tuple[str, ...]:
    return UNARY + BINARY if dtype == "float32" else UNARY_F64 + BINARY_F64


def measure(choice: str, log2: int, repeat: int, dtype: str) -> dict[str, float]:
    """Median ms per warm jit call of each ufunc with *choice*."""
    import numpy as np

    import lazyarray as la
    import lazyarray.target as target
    setattr(target, "math_f32_choice" if dtype == "float32" else "math_f64_choice",
            lambda device: choice)
    x, y = _inputs(1 << log2, dtype)
    result = {}
    for name in _names(dtype):
        args = _domain(name, x, y)
        fn = getattr(np, name)
        lazy = [la.asarray(a) for a in args]
        f = la.jit((lambda a, b, fn=fn: fn(a, b)) if len(args) == 2 else (lambda a, fn=fn: fn(a)))
        f(*lazy).block_until_ready()
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            f(*lazy).block_until_ready()
            times.append(time.perf_counter() - start)
        result[name] = 1e3 * statistics.median(times)
        if choice == "branch_free":
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                fn(*args)
                times.append(time.perf_counter() - start)
            result["numpy " + name] = 1e3 * statistics.median(times)
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log2", type=int, default=21)
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    p.add_argument("--choice", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.choice:
        print(json.dumps(measure(args.choice, args.log2, args.repeat, args.dtype)))
        return
    found = {}
    for choice in ("builtin", "branch_free"):
        done = subprocess.run([sys.executable, __file__, "--choice", choice, "--log2",
                               str(args.log2), "--repeat", str(args.repeat),
                               "--dtype", args.dtype],
                              capture_output=True, text=True, check=True, env=dict(os.environ))
        found[choice] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"2^{args.log2} {args.dtype} values, median ms of {args.repeat} warm jit calls")
    print("| ufunc | built-in | kernelcore's | speed-up | NumPy |")
    print("|---|---:|---:|---:|---:|")
    for name in _names(args.dtype):
        old, new = found["builtin"][name], found["branch_free"][name]
        print(f"| {name} | {old:.2f} | {new:.2f} | {old / new:.1f}x | "
              f"{found['branch_free']['numpy ' + name]:.2f} |")


if __name__ == "__main__":
    main()
