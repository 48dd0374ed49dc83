"""Kernels that read an input at several rows (stencils): on GPUs each
work-item computes STENCIL_ROWS consecutive rows of a column."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazyarray as la
from lazyarray.lower import stencil
from lazyarray.run import steps as runtime
from tests.arrays import heat_step

SETTINGS = settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])


CASES = [
    ("a heat step", heat_step, [(67, 300)], np.float32),
    ("two heat steps", lambda u: heat_step(heat_step(u)), [(130, 65)], np.float32),
    ("four rows", lambda u: heat_step(heat_step(u)), [(4, 1000)], np.float64),
    ("a difference", lambda a: a[1:] - a[:-1] * 2, [(41, 70)], np.int32),
    ("a batch", lambda a: a[:, 2:] + a[:, :-2] - a[:, 1:-1], [(3, 35, 64)], np.float32),
    ("complex", lambda a: (a[1:] + 1j) * a[:-1], [(50, 100)], np.complex64),
]


@pytest.mark.parametrize("name, fn, shapes, dtype", CASES, ids=[c[0] for c in CASES])
def test_stencils_compute_rows_per_work_item(layout_kind, name, fn, shapes, dtype):
    """On a GPU the result's rows are unrolled by STENCIL_ROWS per work-item
    (groups along the rows); NumPy's values on every device kind."""
    rng = np.random.default_rng(8)
    arrays = [(rng.standard_normal(s) * 20).astype(dtype) for s in shapes]
    lazy = fn(*(la.asarray(a) for a in arrays))
    plan = runtime.plan([lazy.node])
    row = f"i{lazy.ndim - 2}"
    for step in plan:
        tags = {n: str(t) for n, t in step.kernel.iname_tags.items()}
        assert (tags.get(f"{row}_inner") == "unr") == (layout_kind == "gpu"), tags
    want = fn(*arrays)
    if dtype in (np.float32, np.complex64):
        np.testing.assert_allclose(np.asarray(lazy), want, rtol=2e-6, atol=1e-3)
    else:
        np.testing.assert_array_equal(np.asarray(lazy), want)


@pytest.mark.parametrize("fn, columns", [
    (lambda a, b: a * b + 1, 64), (lambda a, b: a[:, 1:] - b[:, :-1], 65),
    (lambda a, b: np.sin(a) + b.T, 64), (lambda a, b: a[1:] - b[:-1], 63)])
def test_other_kernels_are_not_stencils(device_layouts, fn, columns):
    """Reading every input at one row per result row (elementwise, shifted
    columns, transposed), or fewer than STENCIL_MIN_COLUMNS columns, keeps
    the other layouts."""
    device_layouts("gpu", 4)
    a, b = (np.random.default_rng(9).standard_normal((64, columns)).astype(np.float32)
            for _ in range(2))
    lazy = fn(la.asarray(a), la.asarray(b))
    [step] = runtime.plan([lazy.node])
    assert not stencil.reads_rows(step.kernel, ["i0", "i1"], lazy.shape)
    assert "unr" not in {str(t) for t in step.kernel.iname_tags.values()}
    np.testing.assert_allclose(np.asarray(lazy), fn(a, b), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda a: np.roll(a, -13, axis=None),
    lambda a: np.roll(a, 3, axis=0) + a,
    lambda a: a[(np.arange(64) * 7) % 64] - a,
], ids=["flat roll", "roll of the rows", "gathered rows"])
def test_wrapped_and_gathered_rows_on_the_gpu_layouts(layout_kind, fn):
    """Kernels whose row subscripts are not affine (a flat ``roll`` wraps
    with ``%`` and ``//``, gathered rows) are not mistaken for stencils, and
    the stencil check does not fail on them (it did: ``roll`` of int8 along
    no axis raised pymbolic's "split_term expects a multiplicative term",
    found by the fuzzer with a GPU's layouts, seed 1000, graph 792)."""
    a = np.random.default_rng(10).integers(-6, 7, (64, 200)).astype(np.int8)
    np.testing.assert_array_equal(np.asarray(fn(la.asarray(a))), fn(a))


@pytest.mark.parametrize("columns, kernels", [(4, 2), (3, 1), (64, 1)])
def test_gpu_heat_steps_fuse_in_pairs_except_over_short_rows(device_layouts, columns, kernels):
    """Two heat steps are one GPU kernel (the first recomputed inside the
    second), except over rows of four elements (a work-item per row, the
    first step read 3.5 times per element), where each step is a kernel
    of its own; NumPy's values."""
    device_layouts("gpu", 4)
    u = np.random.default_rng(10).standard_normal((500, columns)).astype(np.float32)
    lazy = heat_step(heat_step(la.asarray(u)))
    assert len(runtime.plan([lazy.node])) == kernels
    np.testing.assert_allclose(np.asarray(lazy), heat_step(heat_step(u)), rtol=2e-6, atol=1e-6)


@st.composite
def _stencils(draw):
    """(shape, dtype, terms): a sum of slices of one array shifted by up to
    two rows and columns, over a result of at least STENCIL_MIN_COLUMNS
    columns (any number of rows, a batch axis or none)."""
    rows = draw(st.integers(5, 40))
    cols = draw(st.integers(stencil.STENCIL_MIN_COLUMNS + 4, stencil.STENCIL_MIN_COLUMNS + 40))
    batch = draw(st.sampled_from([(), (2,)]))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int64, np.complex64]))
    terms = draw(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4),
                                    st.sampled_from([1, -2, 3])), min_size=2, max_size=5))
    return batch + (rows, cols), dtype, terms


def _stencil_sum(a, terms):
    total = 0
    for dr, dc, k in terms:
        total = total + k * a[..., dr:a.shape[-2] - 4 + dr, dc:a.shape[-1] - 4 + dc]
    return total


@SETTINGS
@given(_stencils())
def test_random_stencils_on_the_gpu_layout(device_layouts, case):
    """Random shifted sums (rows not a multiple of STENCIL_ROWS, batches,
    integers and complex values) laid out for a GPU but run here: NumPy's
    values, and the stencil layout wherever two terms read different rows."""
    shape, dtype, terms = case
    device_layouts("gpu", 4)
    a = (np.random.default_rng(12).standard_normal(shape) * 8).astype(dtype)
    lazy = _stencil_sum(la.asarray(a), terms)
    [step] = runtime.plan([lazy.node])
    shifted_rows = len({dr for dr, _, _ in terms}) > 1
    row = f"i{lazy.ndim - 2}_inner"
    assert (str(step.kernel.iname_tags.get(row)) == "unr") == shifted_rows
    want = _stencil_sum(a, terms)
    if np.dtype(dtype).kind in "iu":
        np.testing.assert_array_equal(np.asarray(lazy), want)
    else:
        np.testing.assert_allclose(np.asarray(lazy), want, rtol=1e-5, atol=1e-4)
