"""lazyarray quickstart: a NumPy function run on lazy arrays, under la.jit,
explained, and timed against NumPy.

Run it with ``bash scripts/bootstrap.sh demo`` (which sets up .venv and
OpenCL first), or directly with ``.venv/bin/python examples/quickstart.py``
(``--rows``, ``--cols`` and ``--repeat`` change the size and the number of timed
calls). Exits with status 1 if a result disagrees with NumPy.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import kernelcore as lp
import lazyarray as la


def scores(x, w):
    """Plain NumPy: weight each row's magnitudes, then a softmax along each row.

    Nothing here knows about lazyarray: given lazy arrays, every ``np.*`` call
    and operator below records an operation instead of computing it.
    """
    s = np.sqrt(np.abs(x) + 1.0) * w - 0.5
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def agree(name: str, got, want) -> bool:
    got = np.asarray(got)
    ok = got.dtype == want.dtype and got.shape == want.shape and bool(
        np.allclose(got, want, rtol=1e-5, atol=1e-8))
    err = float(np.max(np.abs(got - want) / np.abs(want))) if got.shape == want.shape else np.inf
    print(f"  {name}: {'agrees with NumPy' if ok else 'DIFFERS FROM NumPy'} "
          f"(max relative difference {err:.1e})")
    return ok


def per_call(fn, repeat: int) -> float:
    """The best of three averages of *repeat* calls of *fn*, in seconds."""
    fn()
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args(argv)

    device = lp.default_queue().device
    print(f"device: {device.name.strip()} [{device.platform.name.strip()}]")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.rows, args.cols)).astype(np.float32)
    w = rng.standard_normal(args.cols).astype(np.float32)
    want = scores(x, w)
    ok = True

    print("\n1. The NumPy function on a lazy array (drop-in)")
    lazy = scores(la.asarray(x), w)
    done = ("computed at once by NumPy (small work runs on the host tier, see "
            "docs/performance.md)" if isinstance(lazy, la.HostArray) else "nothing computed yet")
    print(f"  scores(la.asarray(x), w) is a {type(lazy).__name__} {lazy.shape} "
          f"{lazy.dtype}: {done}")
    ok &= agree("lazy.get()", lazy.get(), want)

    print("\n2. The same function under la.jit")
    fast = la.jit(scores)
    ok &= agree("la.jit(scores)(x, w)", fast(x, w).get(), want)
    ok &= agree("second call", fast(x * 0.5, w).get(), scores(x * 0.5, w))
    print(f"  traced {fast.trace_count} time(s) for two calls")

    print("\n3. la.explain: the kernels that computing the result runs")
    la.explain(scores(la.asarray(x), w))

    print(f"\n4. Time per call, {args.rows}x{args.cols} float32")
    x_dev, w_dev = la.asarray(x).compute(), la.asarray(w).compute()   # inputs on the device
    t_numpy = per_call(lambda: scores(x, w), args.repeat)
    t_lazy = per_call(lambda: fast(x_dev, w_dev).block_until_ready(), args.repeat)
    name = device.name.strip()
    width = max(len("NumPy, on the host"), len(f"la.jit, on {name}"))
    print(f"  {'NumPy, on the host':<{width}}  {t_numpy * 1e3:8.2f} ms")
    print(f"  {f'la.jit, on {name}':<{width}}  {t_lazy * 1e3:8.2f} ms  "
          f"({t_numpy / t_lazy:.1f}x NumPy's speed; inputs already on the device)")
    print()
    if not ok:
        print("quickstart: results DIFFER from NumPy")
        return 1
    print("quickstart: all results agree with NumPy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
