"""Reductions with NumPy's ``out=``, ``initial=`` and ``where=`` keywords
(functions, methods and ``np.f(lazy)``), against NumPy: several dtypes, NaN,
0-d and empty arrays, keywords combined."""

import warnings

import numpy as np
import pytest

import lazyarray as la

A = np.array([[1.5, np.nan, -3.0, 2.0], [4.0, 5.0, 0.0, -1.0], [2.0, 2.0, 8.0, 0.5]])
MASK = np.array([True, False, True, True])


def _check(got, expected):
    got = got.get() if isinstance(got, la.LazyArray) else got
    assert np.asarray(got).shape == np.shape(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6, equal_nan=True)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("name", ["sum", "prod"])
def test_sum_and_prod_with_where_and_initial(name, dtype):
    a = np.nan_to_num(A).astype(dtype)
    x = la.asarray(a)
    for kwargs in (dict(where=MASK), dict(initial=3), dict(initial=2, where=MASK),
                   dict(axis=0, where=A[:, :1] > 1.6),
                   dict(axis=1, keepdims=True, initial=1, where=MASK)):
        _check(getattr(la, name)(x, **kwargs), getattr(np, name)(a, **kwargs))
        _check(getattr(np, name)(x, **kwargs), getattr(np, name)(a, **kwargs))
        _check(getattr(x, name)(**kwargs), getattr(a, name)(**kwargs))


@pytest.mark.parametrize("dtype", [np.float64, np.uint8])
@pytest.mark.parametrize("name", ["max", "min"])
def test_extremes_with_initial_and_where(name, dtype):
    a = np.nan_to_num(A).astype(dtype) if dtype != np.float64 else A
    x = la.asarray(a)
    for kwargs in (dict(initial=3), dict(axis=0, initial=2, where=MASK),
                   dict(axis=1, initial=4, where=MASK, keepdims=True)):
        _check(getattr(la, name)(x, **kwargs), getattr(np, name)(a, **kwargs))
        _check(getattr(x, name)(**kwargs), getattr(a, name)(**kwargs))
    with pytest.raises(ValueError, match="initial"):
        getattr(la, name)(x, where=MASK)


def test_empty_and_zero_dimensional_reductions_take_initial():
    empty = np.zeros((0, 3))
    _check(la.max(la.asarray(empty), axis=0, initial=-2.0), np.max(empty, axis=0, initial=-2.0))
    _check(la.min(la.asarray(empty), initial=7.0), np.min(empty, initial=7.0))
    _check(la.sum(la.asarray(empty), axis=0, initial=1.5), np.sum(empty, axis=0, initial=1.5))
    _check(la.prod(la.asarray(empty), initial=4.0), np.prod(empty, initial=4.0))
    scalar = np.float64(2.5)
    _check(la.sum(la.asarray(scalar), initial=1.0), np.sum(scalar, initial=1.0))
    _check(la.max(la.asarray(scalar), initial=3.0, where=False),
           np.max(scalar, initial=3.0, where=False))
    _check(la.sum(la.asarray(scalar), where=False), np.sum(scalar, where=False))


def test_initial_is_cast_to_the_reduction_dtype():
    a = np.array([1, 2, 3])
    _check(la.sum(la.asarray(a), initial=0.5), np.sum(a, initial=0.5))
    _check(la.max(la.asarray(a), initial=7.9), np.max(a, initial=7.9))


@pytest.mark.parametrize("name", ["any", "all"])
def test_logical_reductions_with_where(name):
    a = np.array([[0, 1, 2, 0], [3, 0, 0, 1]])
    x = la.asarray(a)
    for kwargs in (dict(where=MASK), dict(axis=1, where=MASK), dict(axis=0, where=a > 0),
                   dict(where=np.zeros(4, bool))):
        _check(getattr(la, name)(x, **kwargs), getattr(np, name)(a, **kwargs))
        _check(getattr(x, name)(**kwargs), getattr(a, name)(**kwargs))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128])
@pytest.mark.parametrize("name", ["mean", "var", "std"])
def test_moments_with_where(name, dtype):
    a = (np.nan_to_num(A) * (1 + 1j if dtype == np.complex128 else 1)).astype(dtype)
    x = la.asarray(a)
    for kwargs in (dict(where=MASK), dict(axis=1, where=MASK),
                   dict(axis=0, where=a.real > 0.7, keepdims=True)):
        if name != "mean":
            kwargs = dict(kwargs, ddof=1)
        _check(getattr(la, name)(x, **kwargs), getattr(np, name)(a, **kwargs))
        _check(getattr(np, name)(x, **kwargs), getattr(np, name)(a, **kwargs))
    # a slice with nothing selected: NaN as NumPy
    _check(getattr(la, name)(x, axis=1, where=np.zeros(4, bool)),
           getattr(np, name)(a, axis=1, where=np.zeros(4, bool)))


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmean", "nanvar", "nanstd"])
def test_nan_functions_with_where(name):
    x = la.asarray(A)
    for kwargs in (dict(where=MASK), dict(axis=1, where=MASK), dict(axis=0, where=A > 1)):
        _check(getattr(la, name)(x, **kwargs), getattr(np, name)(A, **kwargs))


@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
def test_nan_extremes_with_initial_and_where(name):
    a = np.array([[np.nan, np.nan, 1.0], [2.0, np.nan, -1.0]])
    x = la.asarray(a)
    for kwargs in (dict(initial=0.5), dict(axis=0, initial=3.0), dict(axis=1),
                   dict(axis=1, initial=-5.0, where=np.array([True, True, False]))):
        _check(getattr(la, name)(x, **kwargs), getattr(np, name)(a, **kwargs))
    _check(getattr(np, name)(x, initial=9.0), getattr(np, name)(a, initial=9.0))


@pytest.mark.parametrize("name,kwargs", [
    ("sum", dict(axis=0)), ("prod", dict(axis=1)), ("max", dict(axis=0)),
    ("min", dict()), ("mean", dict(axis=1)), ("var", dict(axis=0)), ("std", dict()),
    ("any", dict(axis=0)), ("all", dict(axis=1)), ("argmax", dict(axis=1)),
    ("argmin", dict()), ("cumsum", dict(axis=0)), ("cumprod", dict(axis=1)),
    ("nansum", dict(axis=0)), ("nanmean", dict(axis=1)), ("nanmax", dict(axis=0)),
    ("nanstd", dict()), ("nanargmin", dict(axis=0)), ("ptp", dict(axis=1)),
    ("nancumsum", dict(axis=1)), ("median", dict(axis=1)), ("nanmedian", dict(axis=0))])
def test_out_writes_into_a_lazy_array(name, kwargs):
    a = np.nan_to_num(A) if name in ("argmax", "argmin", "ptp", "prod", "cumprod") else A
    expected = getattr(np, name)(a, **kwargs)
    x = la.asarray(a)
    out = la.asarray(np.full(np.shape(expected), 7, np.asarray(expected).dtype))
    result = getattr(la, name)(x, out=out, **kwargs)
    assert result is out
    _check(out, expected)
    host = np.full(np.shape(expected), -7, np.asarray(expected).dtype)
    assert getattr(np, name)(x, out=host, **kwargs) is host
    _check(host, expected)
    if hasattr(x, name):
        method_out = la.zeros(np.shape(expected), dtype=np.asarray(expected).dtype)
        assert getattr(x, name)(out=method_out, **kwargs) is method_out
        _check(method_out, expected)


def test_out_of_quantiles():
    a = np.nan_to_num(A)
    for name, q in (("quantile", [0.25, 0.5]), ("percentile", 40), ("nanquantile", 0.7),
                    ("nanpercentile", [10, 90])):
        expected = getattr(np, name)(A if name.startswith("nan") else a, q, axis=1)
        out = la.zeros(np.shape(expected))
        got = getattr(la, name)(la.asarray(A if name.startswith("nan") else a), q, axis=1,
                                out=out)
        assert got is out
        _check(out, expected)


def test_out_casts_as_numpy_and_checks_the_shape():
    a = np.array([[1.5, 2.25], [3.0, 4.5]])
    x = la.asarray(a)
    out, expected = la.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64)
    np.sum(a, axis=0, out=expected)
    la.sum(x, axis=0, out=out)
    _check(out, expected)
    with pytest.raises(ValueError, match="shape"):
        la.sum(x, axis=0, out=la.zeros(3))
    combined, expected = la.zeros((2, 1)), np.zeros((2, 1))
    np.sum(a, axis=1, keepdims=True, initial=1.0, where=np.array([True, False]),
           out=expected)
    x.sum(axis=1, keepdims=True, initial=1.0, where=np.array([True, False]), out=combined)
    _check(combined, expected)


def test_numpy_positional_order_of_arguments():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = la.asarray(a)
    _check(np.sum(x, 0, np.float32), np.sum(a, 0, np.float32))
    _check(x.sum(1, np.int64, None, True), a.sum(1, np.int64, None, True))
    _check(np.max(x, 1, None, True), np.max(a, 1, None, True))
    _check(np.var(x, 0, np.float32, None, 1), np.var(a, 0, np.float32, None, 1))
    _check(np.mean(x, 1, np.float32, None, True), np.mean(a, 1, np.float32, None, True))
