"""device_sort and device_argsort (lazyarray.api.sorting) against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lazyarray.api.sorting import device_argsort, device_sort
from lazyarray.run import STATS

DTYPES = [np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
          np.uint16, np.uint32, np.uint64, np.bool_]
SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 2.5]


def _reference_argsort(x: np.ndarray, axis, descending: bool) -> np.ndarray:
    """NumPy's stable argsort; descending as the Array API defines it (equal
    values keep their order)."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    backwards = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return x.shape[axis] - 1 - np.flip(backwards, axis)


def _reference_sort(x: np.ndarray, axis, descending: bool) -> np.ndarray:
    order = _reference_argsort(x, axis, descending)
    flat = x.reshape(-1) if axis is None else x
    return np.take_along_axis(flat, order, 0 if axis is None else axis)


@st.composite
def _cases(draw):
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=9))
    if dtype.kind == "f":
        elements = st.one_of(st.sampled_from(SPECIAL),
                             st.floats(-100, 100, width=8 * dtype.itemsize))
    elif dtype.kind == "b":
        elements = st.booleans()
    else:
        info = np.iinfo(dtype)
        # few distinct values (ties), and the extremes
        elements = st.one_of(st.integers(0, 3), st.sampled_from([int(info.min), int(info.max)]))
    x = draw(hnp.arrays(dtype, shape, elements=elements))
    axis = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    return x, axis, draw(st.booleans())


def _same(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    if expected.dtype.kind == "f":
        # -0.0 and +0.0 are told apart too (the sort is stable)
        np.testing.assert_array_equal(np.signbit(actual), np.signbit(expected))
    np.testing.assert_array_equal(actual, expected)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(_cases())
def test_matches_numpy(case):
    x, axis, descending = case
    order = device_argsort(x, axis, descending=descending).get()
    _same(order, _reference_argsort(x, axis, descending).astype(np.int64))
    _same(device_sort(x, axis, descending=descending).get(),
          _reference_sort(x, axis, descending))
    if not descending:
        np.testing.assert_array_equal(device_sort(x, axis).get(), np.sort(x, axis=axis))


@pytest.mark.parametrize("dtype", DTYPES)
def test_each_dtype_with_ties(dtype):
    rng = np.random.default_rng(0)
    x = (rng.integers(0, 4, (3, 37)) > 1) if dtype is np.bool_ else \
        rng.integers(0, 5, (3, 37)).astype(dtype)
    for descending in (False, True):
        _same(device_argsort(x, descending=descending).get(),
              _reference_argsort(x, -1, descending))
        _same(device_sort(x, 0, descending=descending).get(),
              _reference_sort(x, 0, descending))


def test_nan_inf_and_signed_zeros():
    x = np.array([3.0, np.nan, -0.0, 0.0, 1.0, -np.inf, np.inf, 3.0, np.nan, 0.0, -0.0])
    for dtype in (np.float32, np.float64):
        xs = x.astype(dtype)
        np.testing.assert_array_equal(device_argsort(xs).get(), np.argsort(xs, kind="stable"))
        sorted_ = device_sort(xs).get()
        np.testing.assert_array_equal(sorted_, np.sort(xs))
        assert np.isnan(sorted_[-2:]).all()
        assert np.isnan(device_sort(xs, descending=True).get()[:2]).all()


def test_edge_shapes_and_errors():
    with pytest.raises(np.exceptions.AxisError):
        device_sort(np.float64(1.0))
    with pytest.raises(np.exceptions.AxisError):
        device_argsort(np.array(1))
    with pytest.raises(np.exceptions.AxisError):
        device_sort(np.zeros((2, 3)), axis=2)
    np.testing.assert_array_equal(device_sort(np.float64(2.0), axis=None).get(), [2.0])
    assert device_argsort(np.zeros((0, 4)), axis=1).get().shape == (0, 4)
    assert device_sort(np.zeros((3, 0), np.int8)).get().dtype == np.int8
    np.testing.assert_array_equal(device_argsort(np.ones((4, 1))).get(), np.zeros((4, 1)))


def test_one_compile_for_all_stages_and_calls():
    rng = np.random.default_rng(1)
    a, b = rng.random((4, 300)).astype(np.float32), rng.random((4, 300)).astype(np.float32)
    np.testing.assert_array_equal(device_sort(a).get(), np.sort(a))
    launches, planned = STATS["launches"], STATS["planned"]
    np.testing.assert_array_equal(device_sort(b).get(), np.sort(b))
    assert STATS["planned"] == planned
    # 512 padded: 45 stages, all launches of one kernel; a few more kernels around them
    assert STATS["launches"] - launches >= 45
    np.testing.assert_array_equal(device_argsort(b, descending=True).get(),
                                  _reference_argsort(b, -1, True))
    planned = STATS["planned"]
    device_argsort(a, descending=True).get()
    assert STATS["planned"] == planned


def test_lazy_input():
    import lazyarray as la
    x = la.asarray(np.arange(10.0)) * -1.0
    np.testing.assert_array_equal(device_sort(x).get(), np.sort(-np.arange(10.0)))


def test_refused_inside_jit():
    import lazyarray as la
    with pytest.raises(la.LazyArrayError, match="la.jit"):
        la.jit(lambda x: device_sort(x))(la.asarray(np.arange(5.0))).get()
