"""Results and host copies are freed when the user drops them.

Device memory is measured with the memory pool lazyarray and kernelcore
allocate from (its active blocks and bytes), pyopencl arrays and host copies
with weak references, host memory with tracemalloc. Each test makes and
drops many results in a loop and checks that what is held does not grow;
values are compared with NumPy on the way.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pyopencl.array as cla

import kernelcore as lp
import lazyarray as la
from kernelcore.runtime.invoke import memory_pool
from lazyarray.values import on_host


def _held() -> tuple[int, int]:
    """(active blocks, active bytes) of the default queue's memory pool, after
    collecting garbage."""
    gc.collect()
    pool = memory_pool(lp.default_queue())
    return pool.active_blocks, pool.active_bytes


def test_results_are_freed_when_dropped():
    x = np.arange(20000, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(la.asarray(x) * 3 + 0.5), x * 3 + 0.5)  # planned
    before = _held()
    for k in range(200):
        r = (la.asarray(x + k) * 3 + 0.5).compute()
        if k % 50 == 0:
            np.testing.assert_array_equal(np.asarray(r), (x + k) * 3 + 0.5)
        del r
    assert _held() == before


def test_a_kernels_first_result_is_not_kept():
    """The first run of a kernel binds its launch: that must not keep the
    result it made."""
    x = np.linspace(0, 1, 3000, dtype=np.float32)
    first = (la.asarray(x) * 7 - 2).compute()        # a structure not run before
    device = weakref.ref(first.node.data)          # (computed: the handle holds its buffer)
    np.testing.assert_allclose(np.asarray(first), x * 7 - 2, rtol=1e-6, atol=1e-6)
    del first
    gc.collect()
    assert device() is None


def test_host_copies_are_freed_when_dropped():
    x = np.ones((256, 256), np.float32)
    copies = []
    for k in range(20):
        r = la.asarray(x * k) * 2
        got = r.get()
        np.testing.assert_array_equal(got, x * k * 2)
        copies.append(weakref.ref(on_host(r.node)))
        del r, got
    gc.collect()
    assert [c for c in copies if c() is not None] == []


def test_host_memory_does_not_grow_with_gets():
    x = np.ones(250_000, np.float32)                 # 1 MB per result and per copy
    np.testing.assert_array_equal((la.asarray(x) + 1).get(), x + 1)
    tracemalloc.start()
    try:
        for k in range(5):
            np.testing.assert_array_equal((la.asarray(x * k) + 1).get(), x * k + 1)
        gc.collect()
        settled, _ = tracemalloc.get_traced_memory()
        for k in range(40):
            assert (la.asarray(x * k) + 1).get()[7] == k + 1
        gc.collect()
        now, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert now - settled < 2_000_000, f"{(now - settled) / 1e6:.1f} MB more held"


def test_jitted_calls_keep_neither_arguments_nor_results():
    queue = lp.default_queue()
    pool = memory_pool(queue)

    @la.jit
    def step(u):
        return (u[2:] - 2 * u[1:-1] + u[:-2]) * 0.25

    def argument(k):
        host = np.sin(np.linspace(0, k + 1, 4096)).astype(np.float32)
        return host, cla.to_device(queue, host, allocator=pool)

    before = _held()
    host, dev = argument(0)
    first = step(dev)                                # traces with this argument
    np.testing.assert_allclose(np.asarray(first), (host[2:] - 2 * host[1:-1] + host[:-2]) * 0.25,
                               rtol=1e-5, atol=1e-6)
    nbytes = dev.nbytes
    del dev, first
    # the trace and the bound launch keep no argument or result (only
    # one-element templates of the result's shape)
    traced = _held()
    assert traced[1] - before[1] < nbytes
    for k in range(1, 100):
        host, dev = argument(k)
        out = step(dev)
        if k % 25 == 0:
            np.testing.assert_allclose(np.asarray(out),
                                       (host[2:] - 2 * host[1:-1] + host[:-2]) * 0.25,
                                       rtol=1e-5, atol=1e-6)
        del dev, out
    assert _held() == traced


def test_kernelcore_calls_free_their_arrays():
    knl = lp.make_kernel("{ [i, j]: 0<=i<n and 0<=j<64 }", "out[i] = sum(j, a[i, j])")
    a = np.random.default_rng(0).random((500, 64))
    before = _held()
    outs = []
    for _ in range(30):
        evt, (out,) = knl(None, a=a)
        np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-12)
        outs.append(weakref.ref(out))
        del out, evt
    gc.collect()
    assert [o for o in outs if o() is not None] == [] and _held() == before


def test_compiled_kernels_and_programs_kept_in_memory_are_bounded(monkeypatch):
    # a process meeting ever new kernel structures (a fuzzer, a long session)
    # keeps the recent ones: the table of compiled kernels stays at its limit,
    # and a structure whose kernel went is planned again (kernelcore's tables:
    # tests/kernelcore/run/test_code_cache.py)
    import importlib

    steps = importlib.import_module("lazyarray.run.steps")
    monkeypatch.setattr(steps, "KERNELS_KEPT", 8)
    # (a table of this test's own: earlier tests' kernels may be all it asks for)
    monkeypatch.setattr(steps, "_KERNELS", {})
    x = np.linspace(0.5, 2.0, 300)

    def expression(k):
        # (a structure of its own per k: k + 1 operations)
        a = la.asarray(x)
        out = a
        for j in range(k + 1):
            out = out * 1.5 + j if j % 2 else np.sin(out)
        return out

    def want(k):
        out = x
        for j in range(k + 1):
            out = out * 1.5 + j if j % 2 else np.sin(out)
        return out

    with la.tier("device"):
        for k in range(24):
            np.testing.assert_allclose(expression(k).get(), want(k), rtol=1e-12)
            assert len(steps._KERNELS) <= 8
        np.testing.assert_allclose(expression(0).get(), want(0), rtol=1e-12)
