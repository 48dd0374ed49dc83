"""Kernels that read an input transposed: local-memory tiles on GPUs, blocks
per work-item on CPUs."""

import numpy as np
import pytest

import lazyarray as la
from lazyarray import target as la_target
from kernelcore.ir.tags import IlpTag
from lazyarray.lower import tiles as lower_tiles
from lazyarray.run import steps as runtime


@pytest.fixture(params=["cpu", "gpu"])
def kind(request, monkeypatch):
    monkeypatch.setattr(la_target, "device_profile", lambda device: (request.param, 4))
    monkeypatch.setattr(runtime, "_KERNELS", {})
    return request.param


def _tiled(fn, *arrays):
    """fn's value on lazy arrays, and whether its kernel used tiles (GPU) or
    blocks (CPU)."""
    lazy = fn(*(la.asarray(a) for a in arrays))
    [step] = runtime.plan([lazy.node])
    knl = step.kernel
    blocked = any(n.endswith("_tile") for n in knl.temporary_variables) or any(
        isinstance(t, IlpTag) for t in knl.iname_tags.values())
    return np.asarray(lazy), blocked


CASES = [
    ("2*a.T", lambda a: 2 * a.T, [(64, 96)]),
    ("odd edges", lambda a: a.T * a.T + 1, [(33, 70)]),
    ("transposed sum", lambda a, b: a.T + np.sin(b), [(100, 40), (40, 100)]),
    ("moveaxis", lambda a: np.moveaxis(a, 2, 1) - 1, [(3, 40, 50)]),
    ("sliced", lambda a: a[1:-1, ::2].T * 3, [(70, 90)]),
]


@pytest.mark.parametrize("name, fn, shapes", CASES, ids=[c[0] for c in CASES])
def test_transposed_reads_are_tiled_and_exact(kind, name, fn, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    got, tiled = _tiled(fn, *arrays)
    assert tiled
    np.testing.assert_allclose(got, fn(*arrays), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shift", [100, 5, -31])
def test_a_rolled_transposed_read_is_exact(kind, shift):
    """A roll wraps its read around the array: a tile's footprint is two
    pieces whose box reaches past the array, so no local tile is used on a
    GPU (it read out of bounds) and the result is NumPy's."""
    a = np.random.default_rng(2).random((270, 260)) < 0.5
    fn = lambda x: np.roll(x.T == x.T, shift, axis=-1)   # noqa: E731
    got, tiled = _tiled(fn, a)
    if kind == "gpu":
        assert not tiled
    np.testing.assert_array_equal(got, fn(a))


def test_mixed_reads_are_not_tiled(kind):
    """``a + a.T`` reads *a* both ways: no tile covers both reads."""
    a = np.random.default_rng(1).standard_normal((50, 50)).astype(np.float32)
    got, tiled = _tiled(lambda x: x + x.T, a)
    assert not tiled
    np.testing.assert_allclose(got, a + a.T)


def test_small_results_keep_the_default_schedule(kind):
    a = np.arange(20 * 10, dtype=np.float32).reshape(20, 10)
    got, tiled = _tiled(lambda x: x.T * 2, a)
    assert not tiled and np.array_equal(got, a.T * 2)


def test_gpu_tiles_are_padded(monkeypatch):
    monkeypatch.setattr(la_target, "device_profile", lambda device: ("gpu", 4))
    monkeypatch.setattr(runtime, "_KERNELS", {})
    a = la.asarray(np.ones((64, 64), np.float32))
    [step] = runtime.plan([(a.T * 2).node])
    [tile] = [t for n, t in step.kernel.temporary_variables.items() if n.endswith("_tile")]
    assert tile.element_strides() == (lower_tiles.TILE + 1, 1)
