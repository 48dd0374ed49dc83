"""Integer-array and boolean-mask indexing, and take, against NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la

_SETTINGS = settings(max_examples=20, deadline=None, derandomize=True, database=None)


@_SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_take_matches_numpy(shape, data):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    n = a.size if axis is None else shape[axis]
    idx_shape = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    idx = np.asarray(data.draw(st.lists(st.integers(-n, n - 1),
                                        min_size=int(np.prod(idx_shape)),
                                        max_size=int(np.prod(idx_shape)))),
                     dtype=np.int64).reshape(idx_shape)
    got = np.take(la.asarray(a), idx, axis=axis)
    expected = np.take(a, idx, axis=axis)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.get(), expected)


def test_array_and_mask_indexing(queue):
    a = np.arange(20.0).reshape(4, 5)
    x = la.asarray(a)
    np.testing.assert_array_equal(x[[0, -1, 2]].get(), a[[0, -1, 2]])
    np.testing.assert_array_equal(x[np.array([[1], [3]])].get(), a[np.array([[1], [3]])])
    np.testing.assert_array_equal(x[la.asarray(np.array([3, 1]))].get(), a[[3, 1]])
    np.testing.assert_array_equal(x[a[:, 0] > 4].get(), a[a[:, 0] > 4])
    np.testing.assert_array_equal(x[x > 7].get(), a[a > 7])
    np.testing.assert_array_equal(x[x > 100].get(), a[a > 100])
    np.testing.assert_array_equal((x[[1, 2], :] * 2).get(), a[[1, 2], :] * 2)


def test_bad_indices_raise_index_error():
    x = la.asarray(np.arange(6).reshape(2, 3))
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 2"):
        x[[0, 5]]
    with pytest.raises(IndexError, match="integer type"):
        x[np.array([0.5])]
    with pytest.raises(IndexError, match="does not match"):
        x[np.array([True, False, True])]
    with pytest.raises(IndexError, match="only integers"):
        x[0, [1, 2]]
