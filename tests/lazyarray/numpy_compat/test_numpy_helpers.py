"""NumPy's helper classes and index tricks under ``import lazyarray as np``
(lazyarray.api.numpy_helpers), on both tiers: each gives NumPy's answer."""

from __future__ import annotations

import warnings

import numpy
import pytest

import lazyarray as la

A = numpy.arange(6.0).reshape(2, 3)


@pytest.fixture(params=["host", "device"])
def tier(request):
    with la.tier(request.param), warnings.catch_warnings():
        warnings.simplefilter("ignore", la.LazyArrayHostFallbackWarning)
        yield request.param


def test_ndarray_is_the_class_of_numpys_and_lazy_arrays(tier):
    x = la.asarray(A)
    assert isinstance(x, la.ndarray) and isinstance(A, la.ndarray)
    assert not isinstance(3.0, la.ndarray) and not isinstance([1.0], la.ndarray)
    assert issubclass(la.HostArray, la.ndarray) and issubclass(numpy.ndarray, la.ndarray)
    made = la.ndarray((2, 3), numpy.float32)
    assert isinstance(made, la.LazyArray) and made.shape == (2, 3) and made.dtype == numpy.float32
    with pytest.raises(TypeError, match="buffer"):
        la.ndarray((2,), buffer=bytearray(16))


def test_errstate_silences_numpys_warnings(tier):
    with la.errstate(divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = la.log(la.zeros(3))
    numpy.testing.assert_array_equal(numpy.asarray(got), [-numpy.inf] * 3)


def test_vectorize_gives_numpys_values_as_a_lazy_array(tier):
    def f(a, b):
        return a + b if a > 1 else b
    got = la.vectorize(f)(la.asarray(A), 10)
    assert isinstance(got, la.LazyArray)
    numpy.testing.assert_array_equal(numpy.asarray(got), numpy.vectorize(f)(A, 10))


def test_ndenumerate_and_ndindex(tier):
    x = la.asarray(A)
    assert [(i, float(v)) for i, v in la.ndenumerate(x)] == \
        [(i, float(v)) for i, v in numpy.ndenumerate(A)]
    assert list(la.ndindex(2, 3)) == list(numpy.ndindex(2, 3))


def test_r_and_c_join_as_numpys(tier):
    x = la.asarray(A)
    for got, want in [(la.r_[x[0], 7, 8], numpy.r_[A[0], 7, 8]), (la.r_[0:3, 5], numpy.r_[0:3, 5]),
                      (la.c_[x[0], x[1]], numpy.c_[A[0], A[1]])]:
        assert isinstance(got, la.LazyArray)
        numpy.testing.assert_array_equal(numpy.asarray(got), want)


def test_poly1d_and_masked_arrays(tier):
    p, q = la.poly1d([1.0, 2.0, 3.0]), numpy.poly1d([1.0, 2.0, 3.0])
    numpy.testing.assert_array_equal(numpy.asarray(p(la.asarray(A))), q(A))
    assert p.deriv() == q.deriv()
    masked = la.ma.masked_invalid(numpy.asarray(la.asarray([1.0, numpy.nan, 3.0])))
    assert float(masked.mean()) == 2.0
