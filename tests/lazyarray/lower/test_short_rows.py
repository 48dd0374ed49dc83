"""GPU row kernels over short rows (several rows per work-group) give NumPy's
results.

The GPU layout is forced on whatever device the tests use (the device
profile is replaced), so the 2-D local layouts of
:func:`lazyarray.lower.reduction.row_layout` run on the CPU too.
"""

from __future__ import annotations

import numpy as np
import pytest

import kernelcore as lp
import lazyarray as la
from lazyarray.lower import reduction as lower_reduction
from lazyarray.lower.reduction import row_layout
from lazyarray.run import steps as runtime
from tests.helpers import counting

#: row lengths: around the layouts' thresholds (the others only with ``-m slow``)
LENGTHS = [1, 3, 16, 33, 100, 256, 300] + [pytest.param(n, marks=pytest.mark.slow)
                                           for n in (2, 7, 31, 255, 513, 1000)]
#: not a multiple of any number of rows per work-group
ROWS = 131


@pytest.fixture
def gpu(device_layouts):
    device_layouts("gpu", 4)


def _one_kernel(y) -> np.ndarray:
    with counting() as ran:
        got = np.asarray(y)
    assert ran.launches == 1
    return got


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_row_layouts():
    """Short rows share a work-group of SHORT_ROW_GROUP work-items, a power
    of two per row holding at most SHORT_ROW_SLOTS elements each; long rows
    keep a work-group each."""
    group, slots = lower_reduction.SHORT_ROW_GROUP, lower_reduction.SHORT_ROW_SLOTS
    tiny, tiny_slots = lower_reduction.TINY_ROW, lower_reduction.TINY_ROW_SLOTS
    assert row_layout(2, 10 ** 6) == (1, group)
    assert row_layout(tiny_slots, 10 ** 6) == (1, group)
    assert row_layout(tiny_slots + 1, 10 ** 6) == (2, group // 2)
    assert row_layout(tiny, 10 ** 6) == (tiny // tiny_slots, group * tiny_slots // tiny)
    assert row_layout(tiny + 1, 10 ** 6) == (4, group // 4)
    assert row_layout(100, 10 ** 6) == (16, group // 16)
    assert row_layout(255, 10 ** 6) == (32, group // 32)
    # few rows along the innermost row axis: no more rows per group than that
    assert row_layout(3, 3) == (1, 4)
    assert row_layout(100, 1) == (16, 1)
    # rows of 256 to MID_ROW: ROW_GROUP work-items each, MID_ROW_GROUP per group
    lanes, mid, mid_group = (lower_reduction.ROW_GROUP, lower_reduction.MID_ROW,
                             lower_reduction.MID_ROW_GROUP)
    for n in (256, 300, mid):
        assert row_layout(n, 10 ** 6) == (lanes, mid_group // lanes)
        assert lanes * lower_reduction.ROW_SLOTS >= n
    assert row_layout(300, 3) == (lanes, 4)
    # longer rows: a work-group per row (row_group's rule)
    for n in (mid + 1, 1000, 8192):
        assert row_layout(n, 10 ** 6) == (lower_reduction.row_group(n), 1)
    for n in range(1, 256):
        lanes, rows = row_layout(n, 10 ** 6)
        most = tiny_slots if n <= tiny else slots
        assert lanes * rows == group and lanes * most >= n
        assert lanes == 1 or (lanes // 2) * most < n


@pytest.mark.parametrize("n, size", [(100, (16, 8)), (16, (4, 32)), (3, (128,)),
                                     (255, (32, 4)), (256, (32, 8)), (300, (32, 8)),
                                     (513, (32,))])
def test_short_rows_share_work_groups(gpu, n, size):
    """Softmax over short rows: several rows per work-group, their local
    trees in rows of local memory of their own (or no tree at all with one
    work-item per row); a bound check for the last group's rows."""
    a = np.random.default_rng(1).standard_normal((ROWS, n)).astype(np.float32)
    x = la.asarray(a)
    y = _softmax(x)
    [step] = runtime.plan([y.node])
    code = lp.generate_code_v2(step.kernel).device_code()
    dims = ", ".join(map(str, size + (1,) * (3 - len(size))))
    assert f"reqd_work_group_size({dims})" in code
    if size == (128,):
        assert "__local" not in code and "barrier" not in code
    elif len(size) == 2:
        assert f"[{size[0] * size[1]}]" in code          # a row of lanes per row
        assert "lid(1)" in code
    np.testing.assert_allclose(_one_kernel(y), _softmax(a), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax(gpu, n, dtype):
    a = np.random.default_rng(n).standard_normal((ROWS, n)).astype(dtype)
    got = _one_kernel(_softmax(la.asarray(a)))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, _softmax(a), rtol=tol, atol=tol * 1e-2)


@pytest.mark.parametrize("n", LENGTHS)
def test_normalisations(gpu, n):
    rng = np.random.default_rng(100 + n)
    a = rng.standard_normal((ROWS, n)).astype(np.float32)
    x = la.asarray(a)
    np.testing.assert_allclose(_one_kernel(x - x.mean(axis=1, keepdims=True)),
                               a - a.mean(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)
    b = rng.standard_normal((ROWS, n))
    y = la.asarray(b)
    np.testing.assert_allclose(_one_kernel(y / abs(y).max(axis=1, keepdims=True)),
                               b / abs(b).max(axis=1, keepdims=True), rtol=1e-14)


@pytest.mark.parametrize("n", LENGTHS)
def test_integers_exact(gpu, n):
    a = np.random.default_rng(200 + n).integers(-1000, 1000, (ROWS, n)).astype(np.int32)
    x = la.asarray(a)
    got = _one_kernel(x * 3 - x.max(axis=1, keepdims=True) + x.min(axis=1, keepdims=True))
    want = a * 3 - a.max(axis=1, keepdims=True) + a.min(axis=1, keepdims=True)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    got = _one_kernel(x - x.sum(axis=1, keepdims=True))
    want = a - a.sum(axis=1, keepdims=True)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [1, 3, 33, 100])
def test_nan_and_inf(gpu, n):
    """A NaN in a row makes its max NaN (NumPy's), also where the other lanes
    of the row or the other rows of the group have none; infinities."""
    a = np.random.default_rng(300 + n).standard_normal((ROWS, n)).astype(np.float32)
    a[5, n // 2] = np.nan
    a[7, -1] = np.inf
    a[9, 0] = -np.inf
    a[130, 0] = np.nan                  # in the last, partial group
    x = la.asarray(a)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(_one_kernel(_softmax(x)), _softmax(a), rtol=1e-5,
                                   atol=1e-7)
        np.testing.assert_allclose(_one_kernel(x / abs(x).max(axis=1, keepdims=True)),
                                   a / abs(a).max(axis=1, keepdims=True), rtol=1e-6)
        np.testing.assert_array_equal(_one_kernel(x - x.max(axis=1, keepdims=True)),
                                      a - a.max(axis=1, keepdims=True))


@pytest.mark.parametrize("shape", [(5, 13, 20), (70, 3, 7), (3, 40, 100), (200, 1, 9)])
def test_more_axes(gpu, shape):
    """Rows over several axes: the innermost row axis is shared by a group's
    rows (fewer of them where that axis is short), the others on groups."""
    a = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(_one_kernel(_softmax(la.asarray(a))), _softmax(a),
                               rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("n", [3, 33, 100])
def test_rows_read_elsewhere(gpu, n):
    """A result reading the rows elsewhere than at its own position (no row
    arrays: the reductions read the input themselves)."""
    a = np.random.default_rng(5).standard_normal((ROWS, n)).astype(np.float32)
    x = la.asarray(a)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    ea = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(_one_kernel(e[:, ::-1] / e.sum(axis=1, keepdims=True)),
                               ea[:, ::-1] / ea.sum(axis=1, keepdims=True), rtol=1e-5,
                               atol=1e-7)


@pytest.mark.parametrize("n", [2, 100])
def test_jitted_softmax_replays(gpu, n):
    """Under la.jit the laid-out kernel is replayed on new values."""
    f = la.jit(_softmax)
    rng = np.random.default_rng(6)
    for _ in range(3):
        a = rng.standard_normal((ROWS, n)).astype(np.float32)
        np.testing.assert_allclose(np.asarray(f(la.asarray(a))), _softmax(a), rtol=1e-5,
                                   atol=1e-7)


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_short_rows_are_stored_as_aligned_vectors(gpu, n, dtype):
    """Rows of 2 or 4 elements, one work-item each, are stored as one
    aligned vector (on an H200 the four stores of a row took twice a copy's
    time); the results stay NumPy's, NaNs and infinities included."""
    rng = np.random.default_rng(400 + n)
    a = (rng.standard_normal((ROWS, n)) * 50).astype(dtype)
    if a.dtype.kind == "f":
        a[3, 0], a[8, -1] = np.nan, np.inf
    x = la.asarray(a)
    y = x - x.max(axis=1, keepdims=True) if a.dtype.kind != "f" else _softmax(x)
    [step] = runtime.plan([y.node])
    code = lp.generate_code_v2(step.kernel).device_code()
    ctype = {np.float32: "float", np.float64: "double", np.int32: "int",
             np.uint8: "uchar"}[dtype]
    assert f"*(__global {ctype}{n} *) (out + {n} * " in code
    with np.errstate(invalid="ignore"):
        want = a - a.max(axis=1, keepdims=True) if a.dtype.kind != "f" else _softmax(a)
        got = _one_kernel(y)
    assert got.dtype == want.dtype
    if a.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [2, 4])
def test_short_rows_without_a_vector_form(gpu, n):
    """Rows whose results have no vector form here (booleans, complex values)
    are stored element by element, and stay NumPy's."""
    rng = np.random.default_rng(500 + n)
    a = rng.standard_normal((ROWS, n))
    x = la.asarray(a)
    np.testing.assert_array_equal(_one_kernel(x > x.mean(axis=1, keepdims=True)),
                                  a > a.mean(axis=1, keepdims=True))
    c = a + 1j * rng.standard_normal((ROWS, n))
    z = la.asarray(c)
    np.testing.assert_allclose(_one_kernel(z / abs(z).max(axis=1, keepdims=True)),
                               c / abs(c).max(axis=1, keepdims=True), rtol=1e-13)
