"""Sorting (on the device), searching and set functions (computed on the
host) against NumPy, and the host functions' refusal inside la.jit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la
from lazyarray.values import on_host


@settings(max_examples=15)
@given(st.lists(st.integers(-5, 5), min_size=0, max_size=12))
def test_sorting_and_sets_match_numpy(values):
    a = np.asarray(values, dtype=np.int64)
    x = la.asarray(a) * 1                  # a lazy expression, computed first
    np.testing.assert_array_equal(np.sort(x).get(), np.sort(a))
    np.testing.assert_array_equal(np.argsort(x, kind="stable").get(),
                                  np.argsort(a, kind="stable"))
    np.testing.assert_array_equal(np.unique(x).get(), np.unique(a))
    (got,), (expected,) = np.nonzero(x), np.nonzero(a)
    np.testing.assert_array_equal(got.get(), expected)
    np.testing.assert_array_equal(np.searchsorted(np.sort(x), [0, 3]).get(),
                                  np.searchsorted(np.sort(a), [0, 3]))


def test_named_tuple_results(queue):
    counts = la.unique_counts(la.asarray(np.array([2, 1, 2])))
    np.testing.assert_array_equal(counts.values.get(), [1, 2])
    np.testing.assert_array_equal(counts.counts.get(), [1, 2])


def test_value_dependent_operations_refuse_jit(queue):
    a = np.array([3, 1, 2])
    with pytest.raises(la.LazyArrayError, match="la.unique .* inside la.jit"):
        la.jit(lambda v: np.unique(v))(a)
    with pytest.raises(la.LazyArrayError, match="boolean mask"):
        la.jit(lambda v: v[v > 1])(a)
    # outside jit both work
    np.testing.assert_array_equal(np.unique(la.asarray(a)).get(), [1, 2, 3])


def test_scalar_conversions_fetch_a_computed_value_once(queue):
    import pyopencl.array as cla
    x = la.asarray(np.arange(6.0)).sum()
    assert float(x) == 15.0 and on_host(x.node) is not None
    host = on_host(x.node)
    assert int(x) == 15 and on_host(x.node) is host             # no second fetch
    got = x.get()
    got[...] = -1                                              # a copy: the cache is intact
    assert float(x) == 15.0
    # an array handed in is read anew: its buffer may change
    dev = cla.to_device(queue, np.array([1.0]))
    y = la.asarray(dev)
    assert float(y[0]) == 1.0
    dev.fill(2.0)
    assert float(y[0]) == 2.0
    f = la.jit(lambda a: a * 2)
    r = f(np.array([3.0]))
    assert float(r[0]) == 6.0 and bool(r[0])


@settings(max_examples=30)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=10), st.integers(1, 2))
def test_array_api_descending_sorts_are_stable(values, rows):
    a = np.asarray(values * rows, dtype=np.int64).reshape(rows, -1)
    x = la.asarray(a)
    order = np.asarray(la.argsort(x, axis=1, descending=True))
    for r in range(rows):
        expected = sorted(range(a.shape[1]), key=lambda k: (-a[r, k], k))
        assert order[r].tolist() == expected
    np.testing.assert_array_equal(np.asarray(la.sort(x, axis=1, descending=True)),
                                  -np.sort(-a, axis=1))


def test_correction_is_ddof():
    a = np.array([3.0, 1.0, 2.0, 5.0])
    x = la.asarray(a)
    assert float(la.var(x, correction=1)) == pytest.approx(np.var(a, ddof=1))
    assert float(x.std(correction=1)) == pytest.approx(np.std(a, ddof=1))
    with pytest.raises(ValueError, match="both"):
        la.var(x, ddof=1, correction=1)
