"""Sorting on the device (lazyarray.ops.sort): sort/argsort/partition against
NumPy's stable sort for every dtype, lengths that are not powers of two,
every axis, NaN/inf/-0.0, complex NaN classes, ties, the Array API's
descending sort; one kernel per dtype whatever the lengths; no host
fallback."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.exceptions import AxisError

import lazyarray as la
from lazyarray.ops import sort as device_sort
from tests.helpers import counting


@pytest.fixture(autouse=True, params=["device's own", "network"])
def sorter(request, monkeypatch):
    """Each test twice: with the device's own choice (NumPy's sort on a CPU
    device) and with the sorting network's launches on every device."""
    if request.param == "network":
        monkeypatch.setattr(device_sort._Sort, "sorts_on_host", lambda self, queue: False)
    return request.param


DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float32, np.float64, np.complex64, np.complex128]
LENGTHS = [0, 1, 2, 3, 5, 17, 1000, 4097]


def host_argsort(x, axis=-1, descending=False):
    """The reference: NumPy's stable argsort, with the Array API's stable
    *descending* (equal values keep their order)."""
    x = np.asarray(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    backwards = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return x.shape[axis] - 1 - np.flip(backwards, axis)


def host_sort(x, axis=-1, descending=False):
    """The reference: NumPy's sort, with the Array API's *descending*."""
    x = np.asarray(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    return np.take_along_axis(x, host_argsort(x, axis, descending), axis)


def _values(rng, shape, dtype, spread: int = 6) -> np.ndarray:
    """Values of *dtype* with many ties, and for floats NaN, +-inf and -0.0
    (complex: NaN in either part)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, 0, 1, 2, info.max - 1] if dtype.kind == "u" else
                        [info.min, info.max, -1, 0, 1, 2, -2], dtype)
        a = rng.integers(-spread if dtype.kind == "i" else 0, spread, size).astype(dtype)
        pick = rng.random(size) < 0.2
        a[pick] = rng.choice(pool, int(pick.sum()))
        return a.reshape(shape)
    real = np.empty(0, dtype).real.dtype
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5], real)

    def part():
        p = (rng.integers(-spread, spread, size) / 2).astype(real)
        pick = rng.random(size) < 0.3
        p[pick] = rng.choice(special, int(pick.sum()))
        return p

    if dtype.kind == "f":
        return part().reshape(shape)
    a = np.empty(size, dtype)
    a.real, a.imag = part(), part()
    return a.reshape(shape)


def _check(x_host: np.ndarray, axis, descending: bool = False) -> None:
    """la.sort and la.argsort of *x_host* along *axis* equal NumPy's stable
    ones (the Array API's descending sort: lazyarray.api.searching's reference)."""
    x = la.asarray(x_host)
    got_i = la.argsort(x, axis=axis, descending=descending).get()
    got_v = la.sort(x, axis=axis, descending=descending).get()
    if descending:
        want_i = host_argsort(x_host, axis=axis, descending=True)
        want_v = host_sort(x_host, axis=axis, descending=True)
    else:
        want_i = np.argsort(x_host, axis=axis, kind="stable")
        want_v = np.sort(x_host, axis=axis, kind="stable")
    assert got_i.dtype == np.int64 and got_v.dtype == x_host.dtype
    np.testing.assert_array_equal(got_i, want_i)
    np.testing.assert_array_equal(got_v, want_v)
    if x_host.dtype.kind in "fc":
        # the same zeros (a stable sort keeps -0.0 and 0.0 in their order)
        np.testing.assert_array_equal(np.signbit(got_v.real), np.signbit(want_v.real))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_and_length_matches_numpy(queue, dtype):
    rng = np.random.default_rng(7)
    for n in LENGTHS:
        _check(_values(rng, (n,), dtype), -1)
    a = _values(rng, (3, 17, 5), dtype)
    for axis in (0, 1, 2, None):
        _check(a, axis)
    _check(a, 1, descending=True)
    _check(_values(rng, (33,), dtype), 0, descending=True)


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4), (1, 1), (4, 1), (1, 5), (2, 0, 3)])
def test_empty_and_length_one_axes(queue, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32)[::-1].reshape(shape)
    for axis in range(len(shape)):
        _check(a, axis)
        _check(a, axis, descending=True)


def test_zero_dimensional_values(queue):
    a = np.array(3.0)
    x = la.asarray(a)
    with pytest.raises(AxisError):
        la.sort(x)
    np.testing.assert_array_equal(la.sort(x, axis=None).get(), np.sort(a, axis=None))
    np.testing.assert_array_equal(la.argsort(x).get(), np.argsort(a))
    np.testing.assert_array_equal(np.argsort(x, axis=None).get(), np.argsort(a, axis=None))


def test_long_rows_with_many_ties_are_stable(queue):
    rng = np.random.default_rng(3)
    for n in (4097, 20000):
        a = rng.integers(0, 4, n).astype(np.float64)
        a[rng.random(n) < 0.1] = np.nan
        _check(a, 0)
        _check(a, 0, descending=True)
    b = rng.integers(0, 3, (64, 129)).astype(np.int32)          # many rows at once
    _check(b, 1)
    _check(b, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_rows_without_ties_match_numpy(queue, dtype):
    # (a CPU device sorts them with NumPy's faster unstable sort: no tie, one order)
    rng = np.random.default_rng(11)
    a = rng.permutation(200 * 50).reshape(200, 50).astype(dtype)
    a[3, 7], a[5, 0], a[9, 1] = np.nan, np.inf, -np.inf
    if a.dtype.kind == "c":
        a.imag = rng.permutation(a.size).reshape(a.shape)
    for axis in (0, 1):
        _check(a, axis)
        _check(a, axis, descending=True)


def test_complex_nan_order_is_numpys(queue):
    nan = np.nan
    values = [complex(1, 2), complex(1, nan), complex(nan, 1), complex(nan, nan),
              complex(0, nan), complex(nan, 0), complex(1, 1), complex(-np.inf, 3),
              complex(2, nan), complex(nan, -1), complex(0.0, -0.0), complex(-0.0, 0.0)]
    a = np.array(values * 3, np.complex128)
    np.random.default_rng(1).shuffle(a)
    _check(a, 0)
    _check(a.astype(np.complex64), 0, descending=True)


def test_kind_stable_and_numpy_entry_points(queue):
    rng = np.random.default_rng(5)
    a = _values(rng, (6, 11), np.float64)
    x = la.asarray(a)
    for kind in (None, "quicksort", "mergesort", "heapsort", "stable"):
        np.testing.assert_array_equal(np.argsort(x, axis=0, kind=kind).get(),
                                      np.argsort(a, axis=0, kind="stable"))
    np.testing.assert_array_equal(np.sort(x, stable=True).get(), np.sort(a, stable=True))
    np.testing.assert_array_equal(x.argsort(axis=0).get(), np.argsort(a, 0, kind="stable"))
    y = la.asarray(a)
    y.sort(axis=0, stable=True)
    expected = a.copy()
    expected.sort(axis=0, stable=True)
    np.testing.assert_array_equal(y.get(), expected)
    np.testing.assert_array_equal(x.get(), a)                   # x is unchanged
    z = la.asarray(a)
    row = z[2]
    row.sort()                                                  # through a view
    expected = a.copy()
    expected[2].sort()
    np.testing.assert_array_equal(z.get(), expected)


def test_argument_errors_are_numpys(queue):
    x = la.asarray(np.arange(4.0))
    with pytest.raises(ValueError, match="sort kind"):
        la.sort(x, kind="bogus")
    with pytest.raises(ValueError, match="order"):
        la.argsort(x, order="f")
    with pytest.raises(ValueError):
        la.sort(x, kind="stable", stable=True)
    with pytest.raises(AxisError):
        la.argsort(x, axis=1)
    with pytest.raises(ValueError, match="out of bounds"):
        la.partition(x, 4)


def test_partition_is_a_full_sort(queue):
    rng = np.random.default_rng(2)
    a = _values(rng, (5, 9), np.int16)
    x = la.asarray(a)
    part = np.partition(x, 3, axis=1).get()
    np.testing.assert_array_equal(part[:, 3], np.partition(a, 3, axis=1)[:, 3])
    np.testing.assert_array_equal(part, np.sort(a, axis=1))
    idx = np.argpartition(x, [1, 4], axis=0).get()
    np.testing.assert_array_equal(np.take_along_axis(a, idx, 0), np.sort(a, axis=0))


def test_no_host_fallback_warning(queue):
    a = _values(np.random.default_rng(4), (4, 7), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", la.LazyArrayHostFallbackWarning)
        x = la.asarray(a)
        results = [la.sort(x), la.argsort(x, axis=0), np.sort(x), np.argsort(x, axis=None),
                   x.argsort(), la.sort(x, descending=True), np.partition(x, 2),
                   np.argpartition(x, 2, axis=0)]
        y = la.asarray(a)
        y.sort()
        for r in results + [y]:
            r.get()
    np.testing.assert_array_equal(y.get(), np.sort(a))


def test_kernels_compiled_do_not_grow_with_lengths(queue):
    """Sorting many lengths, row counts and axes of one dtype compiles one
    sort kernel and plans no lazyarray kernel."""
    rng = np.random.default_rng(9)
    la.argsort(la.asarray(rng.random(3))).get()                 # (the kernel built)
    kernels, programs = len(device_sort.STAGE_KERNELS), len(device_sort._PROGRAMS)
    with counting() as ran:
        for n in (2, 3, 4, 7, 9, 31, 64, 65, 100, 257, 600, 1500):
            a = rng.random((n % 3 + 1, n))
            x = la.asarray(a)
            np.testing.assert_array_equal(la.argsort(x, axis=1).get(),
                                          np.argsort(a, axis=1, kind="stable"))
            np.testing.assert_array_equal(la.sort(x, axis=0, descending=True).get(),
                                          host_sort(a, axis=0, descending=True))
        assert len(device_sort.STAGE_KERNELS) == kernels
        assert len(device_sort._PROGRAMS) == programs
    assert ran.planned == 0


def test_sort_inside_jit_replays(queue):
    f = la.jit(lambda v: la.sort(v * 2, axis=0) + la.argsort(v, axis=0))
    rng = np.random.default_rng(6)
    for _ in range(2):
        a = rng.integers(0, 5, (9, 4)).astype(np.float64)
        np.testing.assert_array_equal(
            f(a).get(), np.sort(a * 2, axis=0) + np.argsort(a, axis=0, kind="stable"))


def test_stage_list_is_a_sorting_network():
    """The stages sort every 0/1 sequence of a few lengths (the 0-1 principle),
    with padding past the end as +infinity."""
    for n in range(1, 12):
        stages = device_sort.stages(n)
        for bits in range(1 << n):
            v = [(bits >> k) & 1 for k in range(n)]
            for j, mask in stages:
                for i in range(len(v)):
                    partner = i ^ mask
                    if i & j == 0 and partner < n and v[partner] < v[i]:
                        v[i], v[partner] = v[partner], v[i]
            assert v == sorted(v), (n, bits)


_DTYPES = st.sampled_from([np.bool_, np.int8, np.uint16, np.int64, np.uint64, np.float32,
                           np.float64, np.complex64])


@settings(max_examples=40)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=3), _DTYPES, st.data())
def test_hypothesis_shapes_and_dtypes(queue, shape, dtype, data):
    seed = data.draw(st.integers(0, 2 ** 16))
    axis = data.draw(st.sampled_from([None, *range(-len(shape), len(shape))]))
    descending = data.draw(st.booleans())
    _check(_values(np.random.default_rng(seed), tuple(shape), dtype, spread=3), axis,
           descending)


def test_order_statistics_membership_and_counts_sort_on_the_device(queue, monkeypatch):
    from lazyarray.api import histograms
    monkeypatch.setattr(histograms, "_PAIRS_LIMIT", 10)      # counted by sorting
    monkeypatch.setattr(histograms, "_HOST_PAIRS", 1 << 62)     # (not by NumPy on the host)
    rng = np.random.default_rng(8)
    a = _values(rng, (5, 40), np.float64)
    b = rng.integers(0, 9, 300)
    test = rng.integers(0, 100, 50)
    with warnings.catch_warnings():
        warnings.simplefilter("error", la.LazyArrayHostFallbackWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        x = la.asarray(a)
        got = [np.median(x, axis=1), np.nanmedian(x, axis=0), np.percentile(x, [10, 90], axis=1),
               np.quantile(x, 0.3, method="nearest"), np.isin(la.asarray(b), la.asarray(test)),
               np.bincount(la.asarray(b))]
        got = [g.get() for g in got]
        expected = [np.median(a, axis=1), np.nanmedian(a, axis=0),
                    np.percentile(a, [10, 90], axis=1), np.quantile(a, 0.3, method="nearest"),
                    np.isin(b, test), np.bincount(b)]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, equal_nan=True)


def test_wide_kernel_generates_int64_positions():
    """Values of more than 2**31 elements use a kernel of int64 positions
    (generated here, not run)."""
    import kernelcore as lp
    code = lp.generate_code_v2(device_sort._build(np.dtype(np.float64), True)).device_code()
    assert "long const n" in code and "int const n" not in code
