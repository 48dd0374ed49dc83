"""``la.pad`` in every NumPy mode against NumPy: re-indexing modes lazily
(including widths past the array's length), the others on the host;
several dtypes, 0-d and empty arrays."""

import warnings

import numpy as np
import pytest

import lazyarray as la
from lazyarray.graph import Input

WIDTHS = [1, (2, 3), ((1, 5), (7, 2)), ((0, 0), (3, 0))]


def _same(got, expected):
    assert isinstance(got, la.LazyArray)
    value = got.get()
    assert value.dtype == expected.dtype and value.shape == expected.shape
    np.testing.assert_array_equal(value, expected)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", la.LazyArrayHostFallbackWarning)
        yield


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric"])
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64, np.bool_])
def test_reindexing_modes_are_lazy_and_match_numpy(mode, dtype):
    a = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    x = la.asarray(a)
    # every width for one dtype; one width for the others (kernels take long to build)
    for widths in WIDTHS if dtype == np.float64 else WIDTHS[2:3]:
        padded = la.pad(x, widths, mode=mode)
        assert not isinstance(padded.node, Input)       # a lazy expression, not a result
        _same(padded, np.pad(a, widths, mode=mode))
        _same(np.pad(x, widths, mode=mode), np.pad(a, widths, mode=mode))


@pytest.mark.parametrize("mode", ["edge", "wrap", "reflect", "symmetric"])
def test_widths_longer_than_the_axis(mode):
    a = np.array([3.0, -1.0, 4.0])
    for widths in [(5, 7), (20, 1), (0, 13)]:
        _same(la.pad(la.asarray(a), widths, mode=mode), np.pad(a, widths, mode=mode))
    one = np.array([[2.5]])
    _same(la.pad(la.asarray(one), 3, mode=mode), np.pad(one, 3, mode=mode))


@pytest.mark.parametrize("mode", ["linear_ramp", "maximum", "mean", "median", "minimum"])
def test_value_modes_run_on_the_host_as_numpy(mode):
    a = np.array([[1.0, 5.0, 2.0, np.nan], [4.0, 0.5, 3.0, 7.0]])
    a = np.nan_to_num(a) if mode == "linear_ramp" else a
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for widths in WIDTHS:
            expected = np.pad(a, widths, mode=mode)
            got = la.pad(la.asarray(a), widths, mode=mode).get()
            np.testing.assert_array_equal(got, expected)
    ints = np.arange(6, dtype=np.int64).reshape(2, 3)
    _same(la.pad(la.asarray(ints), 2, mode=mode), np.pad(ints, 2, mode=mode))


def test_mode_keywords():
    a = np.arange(10.0).reshape(2, 5)
    x = la.asarray(a)
    _same(la.pad(x, ((1, 2), (0, 1)), constant_values=((5, 6), (7, 8))),
          np.pad(a, ((1, 2), (0, 1)), constant_values=((5, 6), (7, 8))))
    _same(la.pad(x, 3, mode="reflect", reflect_type="odd"),
          np.pad(a, 3, mode="reflect", reflect_type="odd"))
    _same(la.pad(x, 2, mode="symmetric", reflect_type="odd"),
          np.pad(a, 2, mode="symmetric", reflect_type="odd"))
    _same(la.pad(x, 2, mode="linear_ramp", end_values=(-1, 9)),
          np.pad(a, 2, mode="linear_ramp", end_values=(-1, 9)))
    _same(la.pad(x, 2, mode="mean", stat_length=2), np.pad(a, 2, mode="mean", stat_length=2))
    with pytest.raises(ValueError, match="unsupported keyword"):
        la.pad(x, 1, mode="edge", constant_values=3)


def test_empty_mode_and_callables():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    padded = la.pad(la.asarray(a), ((1, 0), (2, 2)), mode="empty")
    assert padded.shape == (3, 7) and padded.dtype == np.int32
    np.testing.assert_array_equal(padded.get()[1:, 2:5], a)

    def ramp(vector, widths, axis, kwargs):
        vector[:widths[0]] = kwargs.get("value", 10) + axis
        if widths[1]:
            vector[-widths[1]:] = -1

    _same(la.pad(la.asarray(a), 2, mode=ramp, value=4), np.pad(a, 2, mode=ramp, value=4))


def test_zero_dimensional_and_empty_arrays():
    scalar = np.float64(3.5)
    _same(la.pad(la.asarray(scalar), 2), np.pad(scalar, 2))
    empty = np.zeros((0, 3))
    _same(la.pad(la.asarray(empty), ((0, 0), (1, 1)), mode="edge"),
          np.pad(empty, ((0, 0), (1, 1)), mode="edge"))
    _same(la.pad(la.asarray(empty), 2, constant_values=1.5),
          np.pad(empty, 2, constant_values=1.5))
    for mode in ("edge", "reflect", "wrap"):
        with pytest.raises(ValueError):
            la.pad(la.asarray(empty), 1, mode=mode)
        with pytest.raises(ValueError):
            np.pad(empty, 1, mode=mode)
