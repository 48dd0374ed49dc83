"""The NumPy that scripts reach for: the array object's methods, the
namespace's creation functions and aliases, ufunc objects, and the host
fallback for what lazyarray does not compute itself; every result compared
with NumPy's."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarray as la


@pytest.mark.parametrize("obj, kwargs", [
    ([1, 2], {}),
    ([[1.0, 2.0], [3.0, 4.0]], {"dtype": np.float32}),
    ((1, 2.5), {}),
    (3, {"ndmin": 2}),
    ([True, False], {}),
    ([], {}),
    (np.arange(6).reshape(2, 3), {"dtype": np.int16}),
])
def test_array_creates_what_numpy_creates(obj, kwargs):
    got = la.array(obj, **kwargs)
    expected = np.array(obj, **kwargs)
    assert isinstance(got, la.LazyArray)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got.get(), expected)


def test_array_of_lazy_arrays_copies_and_stacks():
    x = la.array([1.0, 2.0])
    y = la.array(x)
    y[0] = 5.0
    np.testing.assert_array_equal(x.get(), [1.0, 2.0])    # a copy, as np.array(x)
    np.testing.assert_array_equal(la.array([x, x * 2]).get(), [[1, 2], [2, 4]])
    np.testing.assert_array_equal(la.array([la.asarray(1.0), 2.0]).get(), [1.0, 2.0])
    assert la.array(x, dtype=np.int32).dtype == np.int32
