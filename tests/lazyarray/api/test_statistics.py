"""var, std, argmax, argmin, count_nonzero, cumsum and cumprod against NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la

_SETTINGS = settings(max_examples=20)
#: the costlier tests by default (every example compiles kernels of its own);
#: their ``_many`` twins, ``slow``, run _SETTINGS
_FEW = settings(max_examples=8)


@st.composite
def arrays_and_axis(draw, allow_empty=True):
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0 if allow_empty else 1, 4),
                                min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.bool_]))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    data = rng.integers(-3, 4, shape).astype(dtype)     # ties are likely
    axis = draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1))) if ndim else None
    keepdims = draw(st.booleans())
    return data, axis, keepdims


@_FEW
@given(arrays_and_axis(allow_empty=False))
def test_argmax_argmin_match_numpy(case):
    _check_argmax_argmin(case)


@pytest.mark.slow
@_SETTINGS
@given(arrays_and_axis(allow_empty=False))
def test_argmax_argmin_match_numpy_many(case):
    _check_argmax_argmin(case)


def _check_argmax_argmin(case):
    data, axis, keepdims = case
    for name in ("argmax", "argmin"):
        got = getattr(la, name)(la.asarray(data), axis=axis, keepdims=keepdims)
        expected = getattr(np, name)(data, axis=axis, keepdims=keepdims)
        assert got.shape == np.shape(expected) and got.dtype == np.int64
        np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning")
@_FEW
@given(arrays_and_axis(), st.integers(0, 1))
def test_var_std_count_nonzero_match_numpy(case, ddof):
    _check_var_std_count_nonzero(case, ddof)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning")
@_SETTINGS
@given(arrays_and_axis(), st.integers(0, 1))
def test_var_std_count_nonzero_match_numpy_many(case, ddof):
    _check_var_std_count_nonzero(case, ddof)


def _check_var_std_count_nonzero(case, ddof):
    data, axis, keepdims = case
    x = la.asarray(data)
    with np.errstate(all="ignore"):
        for name in ("var", "std"):
            expected = getattr(np, name)(data, axis=axis, ddof=ddof, keepdims=keepdims)
            got = getattr(np, name)(x, axis=axis, ddof=ddof, keepdims=keepdims)
            assert got.shape == np.shape(expected) and got.dtype == expected.dtype
            np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-6)
    expected = np.count_nonzero(data, axis=axis, keepdims=keepdims)
    got = la.count_nonzero(x, axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_argmax_prefers_the_first_nan(queue):
    a = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 5.0, 5.0, 1.0]], np.float32)
    np.testing.assert_array_equal(la.argmax(a, axis=1).get(), np.argmax(a, axis=1))
    np.testing.assert_array_equal(la.argmin(a, axis=1).get(), np.argmin(a, axis=1))


def test_empty_argmax_is_an_error():
    with pytest.raises(la.ShapeError, match="empty sequence"):
        la.argmax(np.ones((0, 3)))


@_SETTINGS
@given(arrays_and_axis())
def test_cumsum_cumprod_match_numpy(case):
    data, axis, _ = case
    x = la.asarray(data)
    for name in ("cumsum", "cumprod"):
        expected = getattr(np, name)(data, axis=axis)
        got = getattr(np, name)(x, axis=axis)
        assert isinstance(got, la.LazyArray)
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5)


def test_long_cumsum_runs_as_a_scan(queue):
    data = np.random.default_rng(0).random(300_000).astype(np.float32)
    x = la.asarray(data)
    text = la.explain(x.cumsum(), print_it=False)
    assert "running sum along axis 0" in text and "[result]" in text
    np.testing.assert_allclose(la.cumsum(x).get(), np.cumsum(data), rtol=1e-3)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("kw", [{"axis": 0}, {"axis": None, "ddof": 1},
                                {"axis": 1, "keepdims": True}])
def test_complex_var_and_std_are_real(dtype, kw):
    rng = np.random.default_rng(9)
    c = (rng.random((5, 3)) + 1j * rng.random((5, 3))).astype(dtype)
    for name in ("var", "std"):
        got = getattr(la.asarray(c), name)(**kw)
        expected = getattr(c, name)(**kw)
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_long_single_precision_sums_are_as_accurate_as_numpys(dtype):
    # 2^17 equal values (the device path): lanes adding long runs in single
    # precision were 2e-6 to 7e-6 off; NumPy's pairwise sums are within 1.5e-7
    n = 1 << 17
    value = np.float32(0.1) * (1 + 1j if dtype == np.complex64 else 1)
    exact = np.complex128(value) * n
    x = la.asarray(np.full(n, value, dtype))
    m = la.asarray(np.full((3, n), value, dtype))
    results = {"sum": x.sum(), "mean * n": x.mean() * n, "rows": m.sum(axis=1),
               "columns": m.T.sum(axis=0), "jit": la.jit(lambda v: v.sum())(x)}
    for what, result in results.items():
        got = np.asarray(result)
        assert got.dtype == dtype, what
        error = np.max(np.abs(got.astype(np.complex128) - exact)) / abs(exact)
        assert error < 3e-7, (what, error)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_means_divide_as_numpy(dtype):
    """A complex mean divides its sum as NumPy's does (in double precision,
    by the count's reciprocal): bit for bit NumPy's on sums that are exact
    (the division was 1 ulp off NumPy's for most complex64 means before)."""
    rng = np.random.default_rng(7)
    for n in (1, 3, 7, 10, 29, 58):
        x = ((rng.integers(-40, 40, (n, 3)) + 1j * rng.integers(-40, 40, (n, 3))) / 8
             ).astype(dtype)
        for kwargs in ({}, {"axis": 0}, {"axis": 1}, {"axis": 0, "keepdims": True}):
            with la.tier("device"):
                got = np.asarray(la.mean(la.asarray(x), **kwargs))
            want = np.mean(x, **kwargs)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
        with la.tier("device"):
            got = np.asarray(la.var(la.asarray(x), axis=0))
        np.testing.assert_array_equal(got, np.var(x, axis=0))
