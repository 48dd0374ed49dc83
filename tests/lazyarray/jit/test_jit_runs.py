"""A jitted function's small steps as one kernel on a GPU
(:mod:`lazyarray.run.jit_runs`), here on whatever device runs the tests laid
out as a GPU: NumPy's results call after call, one launch a call, with
traced scalars, constants the function captured, several outputs,
arguments written in place and intermediates read by later steps; on a CPU
device the steps keep their own kernels."""

import numpy as np
import pytest

import lazyarray as la
from lazyarray.run import STATS, sequence


@pytest.fixture
def rng():
    return np.random.default_rng(31)


def _step(table):
    def step(u, w, t):
        g = la.sin(u) * t + table                 # a captured constant, a traced scalar
        s = la.sum(g * w)                         # 0-d, read by two later steps
        u[1:-1] = g[1:-1] - s / g.size            # the argument written in place
        return g.cumsum() - s, la.max(g) * s
    return step


@pytest.mark.parametrize("kind, launches", [("gpu", 1), ("cpu", None)])
def test_small_steps_are_one_launch_on_a_gpu(device_layouts, rng, kind, launches):
    device_layouts(kind)
    n = 300
    table = rng.standard_normal(n)
    step = la.jit(_step(la.asarray(table)))
    reference = _step(table)
    counts: list[int] = []
    kept: list = []                                  # (earlier calls' results and NumPy's)
    for call in range(4):
        u, w, t = rng.standard_normal(n), rng.standard_normal(n), 0.5 + call
        x = la.asarray(u)
        before = STATS["launches"]
        with la.tier("device"):
            a, b = step(x, la.asarray(w), t)
        counts.append(STATS["launches"] - before)
        want_a, want_b = reference(u, w, t)          # (NumPy; writes u in place)
        np.testing.assert_allclose(a.get(), want_a, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(b.get(), want_b, rtol=1e-12)
        np.testing.assert_allclose(x.get(), u, rtol=1e-12, atol=1e-12)
        kept.append((a, want_a))
        for earlier, want in kept:                   # (later calls did not change them)
            np.testing.assert_allclose(earlier.get(), want, rtol=1e-12, atol=1e-12)
    if launches is not None:
        assert counts[1:] == [launches] * 3, counts
    else:
        assert min(counts[1:]) > 1, counts


def test_a_run_that_cannot_be_built_falls_back_to_the_steps(device_layouts, rng, monkeypatch):
    device_layouts("gpu")

    def refuse(*args, **kwargs):
        return None

    monkeypatch.setattr(sequence.SequenceLaunch, "build", refuse)
    table = rng.standard_normal(50)
    step = la.jit(_step(la.asarray(table)))
    u, w = rng.standard_normal(50), rng.standard_normal(50)
    x = la.asarray(u)
    with la.tier("device"):
        a, b = step(x, la.asarray(w), 2.0)
    want_a, want_b = _step(table)(u, w, 2.0)
    np.testing.assert_allclose(a.get(), want_a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x.get(), u, rtol=1e-12, atol=1e-12)
