"""Sorting, searching and set functions (computed on the host) against NumPy,
and their refusal inside la.jit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la


@settings(max_examples=15, deadline=None, derandomize=True, database=None)
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
    with pytest.raises(la.LazyArrayError, match="la.sort .* inside la.jit"):
        la.jit(lambda v: np.sort(v))(a)
    with pytest.raises(la.LazyArrayError, match="boolean mask"):
        la.jit(lambda v: v[v > 1])(a)
    # outside jit both work
    np.testing.assert_array_equal(np.sort(la.asarray(a)).get(), [1, 2, 3])
