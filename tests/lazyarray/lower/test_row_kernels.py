"""Row kernels: reductions along short rows that a result reads back
elementwise are computed inside the result's kernel (on CPU devices)."""

import numpy as np
import pyopencl as cl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la
from tests.helpers import launches_of


def _softmax(xp_x, xp):
    e = xp.exp(xp_x - xp_x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)



def test_softmax_over_rows_is_one_kernel(queue):
    a = np.random.default_rng(0).standard_normal((1000, 300)).astype(np.float32)
    got, launches = launches_of(_softmax(la.asarray(a), np).get)
    assert launches <= 2          # the bound; one row kernel today
    assert launches == 1
    np.testing.assert_allclose(got, _softmax(a, np), rtol=1e-5, atol=1e-7)


def test_row_normalization_is_one_kernel(queue):
    a = np.random.default_rng(1).random((128, 50))
    x = la.asarray(a)
    normalized = (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)
    got, launches = launches_of(normalized.get)
    assert launches == 1
    np.testing.assert_allclose(got, (a - a.mean(axis=1, keepdims=True))
                               / a.std(axis=1, keepdims=True), rtol=1e-10)


def test_few_rows_keep_parallel_reductions(queue):
    a = np.random.default_rng(2).random((4, 5000)).astype(np.float32)
    got, launches = launches_of(_softmax(la.asarray(a), np).get)
    assert launches == 3          # rows too long and too few for a row kernel
    np.testing.assert_allclose(got, _softmax(a, np), rtol=1e-5)


def test_explain_reports_the_row_kernel(queue):
    x = la.asarray(np.ones((100, 8), np.float32))
    text = la.explain(x / x.sum(axis=1, keepdims=True), print_it=False)
    assert text.startswith("1 kernel(s)")
    assert "row kernel: sum per row" in text


def test_cpu_row_kernels_run_on_vectors(queue):
    """On a CPU the row kernel walks rows in float16 vectors: running maxima
    and sums in vector registers, vector loads and a vector exp."""
    if queue.device.type & cl.device_type.GPU:
        pytest.skip("GPUs use a work-group per row instead")
    a = np.random.default_rng(5).standard_normal((64, 256)).astype(np.float32)
    y = _softmax(la.asarray(a), np)
    code = la.explain(y, show_code=True, print_it=False)
    assert "vload16" in code and "vstore16(exp(" in code
    assert "float16 acc_" in code
    np.testing.assert_allclose(y.get(), _softmax(a, np), rtol=1e-5, atol=1e-7)


@settings(max_examples=15)
@given(st.integers(64, 130), st.integers(1, 40), st.integers(0, 2**31 - 1),
       st.sampled_from(["softmax", "center", "minmax"]))
def test_row_kernels_match_numpy(rows, cols, seed, kind):
    a = np.random.default_rng(seed).standard_normal((rows, cols))
    x = la.asarray(a)
    if kind == "softmax":
        got, expected = _softmax(x, np), _softmax(a, np)
    elif kind == "center":
        got, expected = x - x.mean(axis=1, keepdims=True), a - a.mean(axis=1, keepdims=True)
    else:
        lo, hi = x.min(axis=0, keepdims=True), x.max(axis=0, keepdims=True)
        got = (x - lo) / (hi - lo + 1)
        lo_a, hi_a = a.min(axis=0, keepdims=True), a.max(axis=0, keepdims=True)
        expected = (a - lo_a) / (hi_a - lo_a + 1)
    np.testing.assert_allclose(got.get(), expected, rtol=1e-10, atol=1e-12)
