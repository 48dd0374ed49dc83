"""Kernels that read an input transposed: local-memory tiles on GPUs, blocks
per work-item on CPUs."""

import numpy as np
import pytest

import lazyarray as la
from kernelcore.ir.tags import IlpTag
from lazyarray.lower import tiles as lower_tiles
from lazyarray.plan import layouts
from lazyarray.run import steps as runtime
from tests.arrays import heat_step


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
def test_transposed_reads_are_tiled_and_exact(layout_kind, name, fn, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    got, tiled = _tiled(fn, *arrays)
    assert tiled
    np.testing.assert_allclose(got, fn(*arrays), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shift", [100, 5, -31])
def test_a_rolled_transposed_read_is_exact(layout_kind, shift):
    """A roll wraps its read around the array: a tile's footprint is two
    pieces whose box reaches past the array, so no local tile is used on a
    GPU (it read out of bounds) and the result is NumPy's."""
    a = np.random.default_rng(2).random((270, 260)) < 0.5
    fn = lambda x: np.roll(x.T == x.T, shift, axis=-1)   # noqa: E731
    got, tiled = _tiled(fn, a)
    if layout_kind == "gpu":
        assert not tiled
    np.testing.assert_array_equal(got, fn(a))


def test_mixed_reads_are_not_tiled(layout_kind):
    """``a + a.T`` reads *a* both ways: no tile covers both reads."""
    a = np.random.default_rng(1).standard_normal((50, 50)).astype(np.float32)
    got, tiled = _tiled(lambda x: x + x.T, a)
    assert not tiled
    np.testing.assert_allclose(got, a + a.T)


def test_small_results_keep_the_default_schedule(layout_kind):
    a = np.arange(20 * 10, dtype=np.float32).reshape(20, 10)
    got, tiled = _tiled(lambda x: x.T * 2, a)
    assert not tiled and np.array_equal(got, a.T * 2)


def test_gpu_tiles_are_padded(device_layouts):
    device_layouts("gpu", 4)
    a = la.asarray(np.ones((64, 64), np.float32))
    [step] = runtime.plan([(a.T * 2).node])
    [tile] = [t for n, t in step.kernel.temporary_variables.items() if n.endswith("_tile")]
    assert tile.element_strides() == (layouts.TILE + 1, 1)


NARROW_CASES = [
    ("2*a.T of 4 columns", lambda a: 2 * a.T, [(1677, 4)], np.float32),
    ("2 columns, ints", lambda a: a.T * 3 - 1, [(1000, 2)], np.int64),
    ("16 columns plus a row", lambda a, b: a.T + b, [(300, 16), (300,)], np.float64),
    ("moveaxis, a batch", lambda a: np.moveaxis(a, 2, 1) - 1, [(3, 100, 7)], np.float32),
    ("booleans", lambda a: a.T > 0, [(500, 3)], np.float32),
    ("complex", lambda a: (a + 1j).T * 2j, [(200, 4)], np.float64),
    ("rolled", lambda a: np.roll(a.T, 7, axis=-1) + 1, [(90, 5)], np.float32),
    ("short rows", lambda a: 2 * a.T, [(4, 1677)], np.float32),
    ("short rows, a batch", lambda a: np.moveaxis(a, 2, 1) * 3, [(3, 3, 90)], np.int32),
    ("short rows plus a row", lambda a, b: a.T - b, [(2, 200), (2,)], np.float64),
]


@pytest.mark.parametrize("name, fn, shapes, dtype", NARROW_CASES,
                         ids=[c[0] for c in NARROW_CASES])
def test_narrow_transposes_write_a_column_per_work_item(layout_kind, name, fn, shapes, dtype):
    """A result of at most NARROW rows read from columns: on a GPU each
    work-item writes one element of every row (its rows unrolled), reading
    one input row; of at most NARROW columns: each work-item writes a row.
    NumPy's values either way."""
    rng = np.random.default_rng(3)
    arrays = [(rng.standard_normal(s) * 20).astype(dtype) for s in shapes]
    lazy = fn(*(la.asarray(a) for a in arrays))
    [step] = runtime.plan([lazy.node])
    assert lower_tiles.is_narrow(lazy.shape)
    short = lazy.ndim - (2 if lazy.shape[-2] <= lower_tiles.NARROW else 1)
    assert (str(step.kernel.iname_tags.get(f"i{short}")) == "unr") == (layout_kind == "gpu")
    np.testing.assert_array_equal(np.asarray(lazy), fn(*arrays))


@pytest.mark.parametrize("shape", [(100, lower_tiles.NARROW + 1),
                                   (layouts.NARROW_COLUMNS + 1, 100)])
def test_wider_results_are_not_narrow(device_layouts, shape):
    device_layouts("gpu", 4)
    a = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    lazy = 2 * la.asarray(a).T
    [step] = runtime.plan([lazy.node])
    assert not lower_tiles.is_narrow(lazy.shape)
    assert "unr" not in {str(t) for t in step.kernel.iname_tags.values()}
    np.testing.assert_array_equal(np.asarray(lazy), 2 * a.T)


ROW_CASES = [
    ("two heat steps", lambda u: heat_step(heat_step(u)), [(1000, 4)], np.float32),
    ("three columns", lambda a, b: a * b + 1, [(700, 3), (700, 1)], np.float64),
    ("a batch", lambda a: np.sin(a) - a[:, ::-1], [(3, 90, 2)], np.float32),
    ("complex", lambda a: (a + 2j) * a, [(200, 4)], np.complex64),
    ("integers", lambda a: a // 3 + np.roll(a, 1, axis=0), [(333, 4)], np.int32),
]


@pytest.mark.parametrize("name, fn, shapes, dtype", ROW_CASES, ids=[c[0] for c in ROW_CASES])
def test_short_rows_get_a_work_item_per_row(layout_kind, name, fn, shapes, dtype):
    """A result of rows of 2 to NARROW_COLUMNS elements (more rows than a
    tile) has a work-item per row on a GPU, its row unrolled, whatever it
    reads (a stencil's boundary columns no longer diverge within a warp);
    NumPy's values either way."""
    rng = np.random.default_rng(6)
    arrays = [(rng.standard_normal(s) * 20).astype(dtype) for s in shapes]
    lazy = fn(*(la.asarray(a) for a in arrays))
    plan = runtime.plan([lazy.node])
    assert layouts.has_narrow_rows(lazy.shape)
    last = f"i{lazy.ndim - 1}"
    assert all((str(s.kernel.iname_tags.get(last)) == "unr") == (layout_kind == "gpu")
               for s in plan)
    want = fn(*arrays)
    if dtype in (np.float32, np.complex64):
        np.testing.assert_allclose(np.asarray(lazy), want, rtol=2e-6, atol=1e-4)
    else:
        np.testing.assert_array_equal(np.asarray(lazy), want)
