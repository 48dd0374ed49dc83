"""Several threads evaluating, jitting and building kernels at once.

Each scenario runs in a child process (an abort inside the OpenCL driver must
fail the test, not end the test run), with its own empty kernel caches, so
that threads also generate and build kernels at the same time. Every thread
compares each of its results with NumPy; the child reports the mismatches and
exceptions it saw, and a faulthandler timer turns a hang into a failure
that shows every thread's stack. Threads switch every 10 us (not 5 ms), so
that a thread is often interrupted between setting a kernel's arguments and
enqueueing it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_CHILD = r'''
import faulthandler, json, sys, threading, traceback
import numpy as np

scenario, threads, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
faulthandler.dump_traceback_later(240, exit=True)
sys.setswitchinterval(1e-5)     # threads take turns often: races show up

import kernelcore as lp
import lazyarray as la

problems = []
barrier = threading.Barrier(threads)


def check(got, want, what):
    got = np.asarray(got)
    if got.shape != np.shape(want) or not np.allclose(got, want, rtol=2e-5, atol=1e-5):
        problems.append(f"{what}: wrong values")


def evaluate(t, r):
    """One template (shape), one interned expression shared by threads, and
    values only this thread has."""
    for k in range(10):
        p = np.arange(1000, dtype=np.float32) + t + k
        check((la.asarray(p) * 2 + 1).get(), p * 2 + 1, "private elementwise")
    check((SHARED * 3 - 2).get(), SHARED_HOST * 3 - 2, "shared node")
    check(SHARED.sum(), SHARED_HOST.sum(dtype=np.float64), "shared reduction")
    big = np.linspace(0, 1, 50000, dtype=np.float32) * (t + 1)
    check(la.asarray(big).sum(), big.sum(dtype=np.float64), "private big reduction")


@la.jit
def stencil(x, y):
    return (x[1:] - x[:-1]) * 0.5 + y[1:].sum()


def jit(t, r):
    """One signature shared by every thread (traced once), one of its own."""
    x = np.linspace(0, t + 1, 64, dtype=np.float32) ** 2
    y = np.ones(64, np.float32) * (t + 1)
    check(stencil(x, y), (x[1:] - x[:-1]) * 0.5 + y[1:].sum(), "shared signature")
    n = 40 + t + threads * r
    x2 = np.arange(n, dtype=np.float32)
    check(stencil(x2, x2), (x2[1:] - x2[:-1]) * 0.5 + x2[1:].sum(), "own signature")


def build(t, r):
    """Expressions and shapes no other thread or round has: every call lowers,
    generates and builds new kernels."""
    c = float(1 + t + threads * r)
    shape = (17 + t, 9 + r)
    x = np.random.default_rng(t * 100 + r).standard_normal(shape).astype(np.float32)
    a = la.asarray(x)
    check(np.sin(a) * c + a.sum(axis=0), np.sin(x) * c + x.sum(axis=0), "new kernel")
    check((a @ a.T) / c, (x @ x.T) / c, "new product")
    check(np.cumsum(a * c, axis=1), np.cumsum(x * c, axis=1), "new scan")


KNL = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i] + b[i]")


def kernelcore(t, r):
    """One kernel shared by the threads (its device kernel too), called many
    times on data of different sizes, and a kernel of its own."""
    import pyopencl.array as cla
    queue = lp.default_queue()
    for k in range(50):
        n = 1000 + 37 * t + k
        a = np.arange(n, dtype=np.float32)
        b = np.full(n, t + k, np.float32)
        evt, (out,) = KNL(queue, a=cla.to_device(queue, a), b=cla.to_device(queue, b))
        check(out.get(), 2 * a + b, "shared kernelcore kernel")
    own = lp.make_kernel("{ [i, j]: 0<=i<n and 0<=j<m }",
                         f"out[i] = sum(j, a[i, j] * {t + 2 + threads * r})")
    m = np.arange(60, dtype=np.float64).reshape(6, 10)
    evt, (out,) = own(queue, a=m)
    check(out, (m * (t + 2 + threads * r)).sum(axis=1), "own kernelcore kernel")


SHARED_HOST = np.arange(3000, dtype=np.float32) / 7
SHARED = la.asarray(SHARED_HOST)
work = {"evaluate": evaluate, "jit": jit, "build": build, "kernelcore": kernelcore}[scenario]


def run(t):
    try:
        barrier.wait()
        for r in range(rounds):
            work(t, r)
    except Exception:
        problems.append(traceback.format_exc())


pool = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
for th in pool:
    th.start()
for th in pool:
    th.join()
print(json.dumps({"problems": problems[:5], "count": len(problems),
                  "traces": stencil.trace_count}))
'''


def _run_child(tmp_path, scenario: str, threads: int, rounds: int) -> dict:
    env = dict(os.environ, KERNELCORE_CACHE_DIR=str(tmp_path / "cache"),
               LAZYARRAY_CACHE_DIR=str(tmp_path / "cache"),
               POCL_CACHE_DIR=str(tmp_path / "pocl"))
    done = subprocess.run([sys.executable, "-c", _CHILD, scenario, str(threads), str(rounds)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, (
        f"child died with status {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("scenario", ["evaluate", "jit", "build", "kernelcore"])
def test_threads_get_right_values(tmp_path, scenario):
    report = _run_child(tmp_path, scenario, threads=4, rounds=2)
    assert report["count"] == 0, "\n".join(report["problems"])
    if scenario == "jit":
        # the signature shared by the threads is traced once, each thread's
        # own signatures once each
        assert report["traces"] == 1 + 4 * 2


def test_evaluating_from_threads_many_times(tmp_path):
    """The first failure seen: threads evaluating results of one template
    aborted inside the OpenCL driver (a shared event list)."""
    for _ in range(3):
        report = _run_child(tmp_path, "evaluate", threads=6, rounds=20)
        assert report["count"] == 0, "\n".join(report["problems"])


def test_tracing_in_one_thread_does_not_refuse_work_in_another():
    """``la.jit`` marks the traced function per thread: another thread may
    meanwhile do what a trace must not (read array values)."""
    import threading

    import numpy as np

    import lazyarray as la
    started, release = threading.Event(), threading.Event()

    @la.jit
    def slow(x):
        started.set()
        release.wait(30)
        return x + 1

    results = {}
    tracer = threading.Thread(target=lambda: results.update(traced=slow(np.ones(3))))
    tracer.start()
    try:
        assert started.wait(30)
        x = la.asarray(np.arange(4.0))
        assert bool((x >= 0).all())          # reads a value while slow is traced
        np.testing.assert_array_equal(np.asarray(x[x > 1]), [2.0, 3.0])
    finally:
        release.set()
        tracer.join(30)
    np.testing.assert_array_equal(np.asarray(results["traced"]), [2.0, 2.0, 2.0])
