"""Everyday NumPy functions on the device (lazyarray.api.statistics,
numeric, histograms, joining) against NumPy: results, dtypes and shapes,
over hypothesis-drawn shapes, dtypes, axes and values (NaN and infinities
included), NumPy's errors, NumPy's dispatch (``np.f(lazy)``) and la.jit.

Shapes come from small fixed sets so that kernels are reused across
examples (every new shape compiles new kernels).
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la
from lazyarray.api import histograms as H
from lazyarray.api import joining as J
from lazyarray.api import numeric as N
from lazyarray.api import statistics as S
from lazyarray.protocols import implementation as _implementation

_SETTINGS = settings(max_examples=20)
_FEW = settings(max_examples=12)
_FEWER = settings(max_examples=8)
#: the default counts of the costlier tests (every example compiles kernels of
#: its own); their ``_many`` twins, ``slow``, run the full counts above
_SETTINGS_DEFAULT = settings(max_examples=8)
_FEW_DEFAULT = settings(max_examples=5)
_FEWEST = settings(max_examples=4)

MODULES = (S, N, H, J)
FUNCTIONS = {name: getattr(m, name) for m in MODULES for name in m.__all__}

FLOATS = (np.float32, np.float64)
NUMBERS = (np.float32, np.float64, np.int64)
#: int32 in a few tests only (each dtype compiles its own kernels)
WITH_INT32 = NUMBERS + (np.int32,)


@pytest.fixture(scope="module", autouse=True)
def _dispatch():
    """``np.f(lazy)`` dispatches to ``lazyarray.f``: the functions are put
    into the namespace (as ``lazyarray/__init__.py`` will import them)."""
    with pytest.MonkeyPatch.context() as mp:
        for name, fn in FUNCTIONS.items():
            mp.setattr(la, name, fn, raising=False)
        yield


# {{{ helpers

def _numpy(f, *args, **kwargs):
    """NumPy's result, or the exception it raises (warnings silenced)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return f(*args, **kwargs)
        except Exception as e:
            return e


def _lazy(x):
    """NumPy arrays in *x* (also in lists and tuples) as lazy arrays."""
    if isinstance(x, np.ndarray):
        return la.asarray(x)
    if type(x) in (list, tuple):
        return type(x)(_lazy(v) for v in x)
    return x


def _holds_lazy(x) -> bool:
    return isinstance(x, la.LazyArray) or type(x) in (list, tuple) and any(
        _holds_lazy(v) for v in x)


def same(got, expected, exact: bool = True, rtol=None):
    """*got* (lazy arrays, or tuples/lists of them) equals NumPy's *expected*
    in type structure, shape, dtype and values (NaNs in the same places)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected)
        for g, e in zip(got, expected):
            same(g, e, exact, rtol)
        return
    assert isinstance(got, la.LazyArray), type(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    value = got.get()
    if exact or expected.dtype.kind in "biu":
        np.testing.assert_array_equal(value, expected)
    else:
        tol = rtol or (2e-5 if expected.dtype in (np.float32, np.complex64) else 1e-12)
        np.testing.assert_allclose(value, expected, rtol=tol, atol=tol, equal_nan=True)


def check(f, *args, exact=True, rtol=None, **kwargs):
    """``f(*args)`` on NumPy arrays against ``f`` on lazy copies of them
    (through NumPy's dispatch when *f* is NumPy's): equal results, or the
    same kind of exception."""
    expected = _numpy(f, *args, **kwargs)
    lazy_args = [_lazy(a) for a in args]
    lazy_kwargs = {k: _lazy(v) for k, v in kwargs.items()}
    if not _holds_lazy(lazy_args) and not _holds_lazy(list(lazy_kwargs.values())):
        f = FUNCTIONS[f.__name__]           # (NumPy dispatches on arrays only)
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f(*lazy_args, **lazy_kwargs)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("error", la.LazyArrayHostFallbackWarning)
        # (sorting runs on the host by design, and says so)
        warnings.filterwarnings("ignore", r"la\.(arg)?sort ran on the host",
                                la.LazyArrayHostFallbackWarning)
        got = f(*lazy_args, **lazy_kwargs)
    same(got, expected, exact, rtol)


SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]


@st.composite
def arrays(draw, dtypes=NUMBERS, shapes=SHAPES, specials=True, low=-4, high=5):
    """A small array with ties, and NaN/inf for floats (if *specials*)."""
    shape = draw(st.sampled_from(shapes))
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if dtype.kind == "b":
        return np.asarray(rng.integers(0, 2, shape).astype(bool))
    a = rng.integers(low, high, shape).astype(dtype)
    if dtype.kind == "f":
        a = np.asarray(a + (rng.random(shape) < 0.3) * 0.5)
        if specials and a.size and draw(st.booleans()):
            flat = a.reshape(-1)
            flat[rng.integers(0, a.size, 2)] = rng.choice([np.nan, np.inf, -np.inf], 2)
    return np.asarray(a, dtype=dtype)


def axes(draw, a):
    """None, one axis of *a* or two (NumPy cannot reshape empty arrays for a
    tuple of axes: none for those)."""
    ndim = a.ndim
    choices = [None] + list(range(-ndim, ndim))
    if ndim >= 2 and a.size:
        choices.append((0, ndim - 1))
    return draw(st.sampled_from(choices))

# }}}


def test_functions_replace_the_host_fallback():
    for name, fn in FUNCTIONS.items():
        assert getattr(la, name) is fn
        assert fn.__module__.startswith("lazyarray.api.") and fn.__doc__
        numpy_fn = getattr(np, name, None)
        if callable(numpy_fn) and not isinstance(numpy_fn, type) and name not in (
                "mgrid", "ogrid"):
            assert _implementation(numpy_fn) is fn, name


# {{{ statistics

@_FEWEST
@given(st.data())
def test_quantiles_match_numpy(data):
    _check_quantiles(data)


@pytest.mark.slow
@_FEW
@given(st.data())
def test_quantiles_match_numpy_many(data):
    _check_quantiles(data)


def _check_quantiles(data):
    a = data.draw(arrays(dtypes=NUMBERS, shapes=[(5,), (3, 4), (2, 3, 4), ()]))
    axis = axes(data.draw, a)
    keepdims = data.draw(st.booleans())
    method = data.draw(st.sampled_from(S._METHODS))
    q = data.draw(st.sampled_from([0.5, 0, 1, [0.0, 0.25, 1.0], np.float32(0.3), 0.75]))
    for f, scale in ((np.quantile, 1), (np.nanquantile, 1), (np.percentile, 100),
                     (np.nanpercentile, 100)):
        qq = q if scale == 1 else (np.asarray(q) * 100 if isinstance(q, list) else q * 100)
        check(f, a, qq, axis, method=method, keepdims=keepdims)


@_SETTINGS_DEFAULT
@given(st.data())
def test_medians_match_numpy(data):
    _check_medians(data)


@pytest.mark.slow
@_SETTINGS
@given(st.data())
def test_medians_match_numpy_many(data):
    _check_medians(data)


def _check_medians(data):
    a = data.draw(arrays(dtypes=WITH_INT32 + (np.bool_,)))
    axis = axes(data.draw, a)
    keepdims = data.draw(st.booleans())
    check(np.median, a, axis, keepdims=keepdims)
    check(np.nanmedian, a, axis, keepdims=keepdims)


def test_quantile_errors_and_scalars():
    a = np.array([3.0, 1.0, np.nan, 2.0])
    check(np.quantile, a, 1.5)
    check(np.percentile, a, -1)
    check(np.quantile, a, 0.5, method="nope")
    check(np.quantile, a.astype(complex), 0.5)
    check(np.quantile, np.zeros(0), 0.5)
    check(np.nanquantile, np.zeros((0, 2)), 0.5, axis=0)
    check(np.nanmedian, np.full((2, 3), np.nan), axis=1)
    # complex values with NaN parts: NumPy's median of the others
    rng = np.random.default_rng(3)
    c = rng.standard_normal((5, 6)) + 1j * rng.standard_normal((5, 6))
    c.real[rng.random(c.shape) < 0.3] = np.nan
    c.imag[rng.random(c.shape) < 0.2] = np.nan
    c[0] = np.nan
    for axis in (None, 0, 1):
        check(np.nanmedian, c, axis, exact=False)
    check(np.median, np.zeros((0, 3)), axis=0)
    check(np.quantile, np.arange(6), [[0.1, 0.5], [0.9, 1.0]], interpolation="nearest")
    check(np.quantile, np.arange(6), la.asarray(np.array([0.2, 0.4])))


def test_weighted_quantiles_run_numpy_on_the_host(monkeypatch):
    from lazyarray import fallback
    monkeypatch.setattr(fallback, "_warned", set())     # (each function warns once)
    rng = np.random.default_rng(5)
    a, w = rng.random((4, 7)), rng.integers(1, 4, (4, 7)).astype(float)
    for f, q in ((np.quantile, [0.25, 0.5]), (np.percentile, 90), (np.nanquantile, 0.5),
                 (np.nanpercentile, [10, 50])):
        with pytest.warns(la.LazyArrayHostFallbackWarning, match=f.__name__):
            got = f(la.asarray(a), q, axis=1, weights=la.asarray(w), method="inverted_cdf")
        assert isinstance(got, la.LazyArray)
        np.testing.assert_array_equal(got.get(), f(a, q, axis=1, weights=w,
                                                   method="inverted_cdf"))


@_FEWEST
@given(st.data())
def test_nan_reductions_match_numpy(data):
    _check_nan_reductions(data)


@pytest.mark.slow
@_FEWER
@given(st.data())
def test_nan_reductions_match_numpy_many(data):
    _check_nan_reductions(data)


def _check_nan_reductions(data):
    a = data.draw(arrays(dtypes=NUMBERS + (np.bool_,)))
    axis = axes(data.draw, a)
    keepdims = data.draw(st.booleans())
    ddof = data.draw(st.integers(0, 2))
    for f in (np.nansum, np.nanprod, np.nanmean, np.nanmax, np.nanmin):
        check(f, a, axis, keepdims=keepdims, exact=False)
    if a.dtype != np.bool_:
        check(np.nanvar, a, axis, ddof=ddof, keepdims=keepdims, exact=False)
        check(np.nanstd, a, axis, keepdims=keepdims, correction=ddof, exact=False)
        check(np.ptp, a, axis, keepdims=keepdims)
    one_axis = None if axis is None or isinstance(axis, tuple) else axis
    check(np.nanargmax, a, one_axis, keepdims=keepdims)
    check(np.nanargmin, a, one_axis)
    if a.dtype != np.bool_:
        check(np.nancumsum, a, one_axis, exact=False)
        check(np.nancumprod, a, one_axis, exact=False)
    check(np.nansum, a, axis, dtype=np.float64, exact=False)


@_FEWEST
@given(st.data())
def test_average_matches_numpy(data):
    _check_average(data)


@pytest.mark.slow
@_FEWER
@given(st.data())
def test_average_matches_numpy_many(data):
    _check_average(data)


def _check_average(data):
    a = data.draw(arrays(dtypes=NUMBERS + (np.bool_,), shapes=[(5,), (3, 4), (2, 3, 4)],
                         specials=False))
    axis = axes(data.draw, a)
    keepdims = data.draw(st.booleans())
    returned = data.draw(st.booleans())
    check(np.average, a, axis, returned=returned, keepdims=keepdims, exact=False)
    kind = data.draw(st.sampled_from(["same", "along", "int"]))
    rng = np.random.default_rng(a.size)
    if kind == "same":
        w = rng.random(a.shape)
    elif kind == "int":
        w = rng.integers(1, 4, a.shape).astype(np.int32)
    else:
        w = rng.random(a.shape[axis]) if isinstance(axis, int) else \
            rng.random(tuple(a.shape[d] for d in axis)) if axis is not None else \
            rng.random(a.shape)
    check(np.average, a, axis, w, returned, keepdims=keepdims, exact=False)


def test_average_errors():
    a = np.arange(6.0).reshape(2, 3)
    check(np.average, a, None, np.ones(3))
    check(np.average, a, 1, np.ones(2))
    check(np.average, a, 1, np.array([1.0, -1.0, 0.0]))
    check(np.average, a, (1, 0), np.arange(6.0).reshape(3, 2) + 1)


@pytest.mark.parametrize("kwargs,dtype", [
    ({}, np.float64), ({}, np.int64), ({}, np.float32), ({"bias": True}, np.int64),
    ({"ddof": 0}, np.float32), ({"ddof": 3}, np.float64), ({"rowvar": False}, np.float64),
    ({"fweights": np.array([1, 2, 1, 1, 3, 1])}, np.int64),
    ({"aweights": np.linspace(0.1, 1, 6)}, np.float32),
    ({"fweights": np.array([1, 2, 1, 1, 3, 1]), "aweights": np.linspace(0.1, 1, 6),
      "ddof": 2}, np.float64),
    ({"y": "second"}, np.float64), ({"dtype": np.float32}, np.int64),
    ({"fweights": np.array([1, 2, -1, 1, 3, 1])}, np.float64),
    ({"fweights": np.array([1.5, 2, 1, 1, 3, 1])}, np.float64),
    ({"aweights": np.ones(5)}, np.float64)])
def test_cov_and_corrcoef_match_numpy(kwargs, dtype):
    rng = np.random.default_rng(3)
    m = rng.integers(-5, 6, (3, 6)).astype(dtype)
    if kwargs.get("y") == "second":
        kwargs = {"y": (m[:2] * 2 + 1)}
    check(np.cov, m, exact=False, **kwargs)
    if not set(kwargs) & {"fweights", "aweights", "bias", "ddof"}:
        check(np.corrcoef, m, exact=False, **kwargs)
    if not kwargs:
        check(np.cov, m[0], exact=False)
        check(np.corrcoef, m[0], m[1], exact=False)
        check(np.corrcoef, m[0], exact=False)
    check(np.cov, np.zeros((0, 3)))

# }}}


# {{{ counting and binning

@_FEW_DEFAULT
@given(st.data())
def test_bincount_matches_numpy(data):
    _check_bincount(data)


@pytest.mark.slow
@_FEW
@given(st.data())
def test_bincount_matches_numpy_many(data):
    _check_bincount(data)


def _check_bincount(data):
    n = data.draw(st.sampled_from([1, 20]))
    high = data.draw(st.sampled_from([1, 12]))
    dtype = data.draw(st.sampled_from([np.int64, np.int32, np.uint8, np.bool_]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.integers(0, high, n).astype(dtype)
    minlength = data.draw(st.sampled_from([0, 3, 15]))
    check(np.bincount, x, minlength=minlength)
    weights = data.draw(st.sampled_from([None, "float", "int"]))
    if weights:
        w = rng.random(n) if weights == "float" else rng.integers(-3, 4, n)
        check(np.bincount, x, w, minlength, exact=False)


def test_many_buckets_are_counted_by_numpy_on_the_host():
    # (10**5 values in 1,000 buckets: the comparisons took 0.3 s on a 2-core CPU)
    rng = np.random.default_rng(2)
    h = rng.standard_normal(100_000)
    for bins in (100, 1000):
        got, edges = la.histogram(la.asarray(h), bins=bins)
        want, want_edges = np.histogram(h, bins=bins)
        np.testing.assert_array_equal(got.get(), want)
        np.testing.assert_array_equal(edges.get(), want_edges)
    labels = rng.integers(0, 5000, 100_000)
    np.testing.assert_array_equal(la.bincount(la.asarray(labels)).get(), np.bincount(labels))


def test_bincount_many_buckets_and_errors(monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 600, 100)
    check(np.bincount, x)
    monkeypatch.setattr(H, "_PAIRS_LIMIT", 1000)      # counted by sorting
    monkeypatch.setattr(H, "_HOST_PAIRS", 1 << 62)     # (not by NumPy on the host)
    check(np.bincount, x)
    check(np.bincount, x, np.linspace(0, 1, 100), exact=False)
    check(np.histogram, x, 40, weights=x % 3)
    check(np.bincount, np.array([1, -1]))
    check(np.bincount, np.array([1.0, 2.0]))
    check(np.bincount, np.array([[1, 2]]))
    check(np.bincount, np.array([1, 2], np.uint64))
    check(np.bincount, np.array([1, 2]), minlength=-1)
    check(np.bincount, np.array([1, 2]), np.ones(3))
    check(np.bincount, np.array([0, 1, 1]), np.array([1j, 2, 3 + 1j]))
    check(np.bincount, np.zeros(0, np.int64), np.zeros(0), 4)
    check(np.bincount, np.zeros(0, np.int64))


@_FEW_DEFAULT
@given(st.data())
def test_histogram_matches_numpy(data):
    _check_histogram(data)


@pytest.mark.slow
@_FEW
@given(st.data())
def test_histogram_matches_numpy_many(data):
    _check_histogram(data)


def _check_histogram(data):
    a = data.draw(arrays(dtypes=NUMBERS, shapes=[(0,), (12,), (3, 5)], specials=False,
                         low=-6, high=7))
    bins = data.draw(st.sampled_from(
        [10, 1, 3, [-6.0, -1.0, 0.0, 0.5, 7.0], [-2, 0, 0, 3], list(np.linspace(-7, 7, 41)),
         "auto", "sturges"]))
    rng_ = data.draw(st.sampled_from([None, (-2, 3), (0.5, 0.5)]))
    if isinstance(bins, list) or isinstance(bins, str) and a.size == 0:
        rng_ = None
    density = data.draw(st.booleans())
    weights = data.draw(st.sampled_from([None, "float", "int"]))
    w = None if weights is None or isinstance(bins, str) else \
        np.random.default_rng(3).random(a.shape) if weights == "float" else \
        np.arange(a.size, dtype=np.int32).reshape(a.shape) % 4
    exact = w is None and not density
    check(np.histogram, a, bins, rng_, density, w, exact=exact)
    if a.dtype.kind == "f" and a.size:
        b = a.copy()
        b.flat[0], b.flat[-1] = np.nan, np.inf
        check(np.histogram, b, 4, (-3, 3))            # NaN and inf outside the range
        check(np.histogram, b)                         # range not finite: an error
    check(np.histogram_bin_edges, a, bins if not isinstance(bins, str) else 5, rng_)


def test_histogram_errors():
    a = np.arange(5.0)
    check(np.histogram, a, 0)
    check(np.histogram, a, 3, (3, 1))
    check(np.histogram, a, [3, 1, 2])
    check(np.histogram, a, [[1, 2]])
    check(np.histogram, a, 2.5)
    check(np.histogram, a, 3, weights=np.ones(4))


@_SETTINGS_DEFAULT
@given(st.data())
def test_digitize_matches_numpy(data):
    _check_digitize(data)


@pytest.mark.slow
@_SETTINGS
@given(st.data())
def test_digitize_matches_numpy_many(data):
    _check_digitize(data)


def _check_digitize(data):
    x = data.draw(arrays(dtypes=NUMBERS, shapes=[(7,), (2, 3), ()], low=-3, high=45))
    bins = data.draw(st.sampled_from([
        [0, 1, 2], [0.0, 2.0, 2.0, 5.0], list(range(40)), [5, 3, 3, -1],
        list(range(44, 0, -1)), [0.0, 1.0, np.nan], [], [3]]))
    right = data.draw(st.booleans())
    kind = data.draw(st.sampled_from(FLOATS if np.isnan(bins).any() else NUMBERS))
    check(np.digitize, x, np.asarray(bins, dtype=kind), right)
    check(np.digitize, x, [1, 3, 2])


@_FEWEST
@given(st.data())
def test_interp_matches_numpy(data):
    _check_interp(data)


@pytest.mark.slow
@_FEWER
@given(st.data())
def test_interp_matches_numpy_many(data):
    _check_interp(data)


def _check_interp(data):
    n = data.draw(st.sampled_from([1, 2, 5, 40]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    xp = np.sort(rng.integers(-10, 10, n).astype(np.float64) / 2)       # ties likely
    fp = rng.normal(size=n).astype(data.draw(st.sampled_from((np.float32, np.float64))))
    x = data.draw(arrays(dtypes=NUMBERS, shapes=[(9,), (2, 3), ()], low=-8, high=8))
    bounds = data.draw(st.sampled_from([{}, {"left": -100.0}, {"left": 1, "right": 2.5}]))
    check(np.interp, x, xp, fp, **bounds)
    if data.draw(st.booleans()):
        check(np.interp, x, xp, fp.astype(np.float64) * (1 + 2j), **bounds)
    period = data.draw(st.sampled_from([None, 3.0, -7]))
    if period is not None:
        check(np.interp, x, rng.random(n) * 10, fp, period=period)


def test_interp_special_values_and_errors():
    xp, fp = np.array([0.0, 1.0, 1.0, 2.0, 4.0]), np.array([0.0, 10.0, 20.0, np.inf, -5.0])
    x = np.array([np.nan, -1, 0, 0.5, 1, 1.5, 2, 3, 4, 5, np.inf, -np.inf])
    check(np.interp, x, xp, fp)
    check(np.interp, 0.5, [0, 1], [0, 2])
    check(np.interp, x, xp, fp[:3])
    check(np.interp, x, [], [])
    check(np.interp, x, xp, fp, period=0)


@_FEW_DEFAULT
@given(st.data())
def test_gradient_matches_numpy(data):
    _check_gradient(data)


@pytest.mark.slow
@_FEW
@given(st.data())
def test_gradient_matches_numpy_many(data):
    _check_gradient(data)


def _check_gradient(data):
    a = data.draw(arrays(dtypes=NUMBERS, shapes=[(5,), (3, 4), (3, 3, 4), (2,), ()],
                         specials=False))
    edge_order = data.draw(st.sampled_from([1, 2]))
    axis = data.draw(st.sampled_from([None, -1, 0, (1, 0)] if a.ndim >= 2 else [None, 0]
                                     if a.ndim else [None]))
    chosen = tuple(range(a.ndim)) if axis is None else (axis,) if isinstance(axis, int) \
        else axis
    kind = data.draw(st.sampled_from(["none", "scalar", "per-axis"]))
    rng = np.random.default_rng(a.size)
    if kind == "none" or not chosen:
        spacing = ()
    elif kind == "scalar":
        spacing = (data.draw(st.sampled_from([2.0, np.float64(0.5), 3])),)
    else:
        spacing = tuple(data.draw(st.sampled_from([
            "uniform", "coords", "int"])) for _ in chosen)
        spacing = tuple(
            np.arange(a.shape[d]) * 0.5 if s == "uniform" else
            np.cumsum(rng.random(a.shape[d]) + 0.1) if s == "coords" else
            np.cumsum(rng.integers(1, 4, a.shape[d]))
            for s, d in zip(spacing, [d % a.ndim for d in chosen]))
    check(np.gradient, a, *spacing, axis=axis, edge_order=edge_order, exact=False)


@_SETTINGS
@given(st.data())
def test_trapezoid_matches_numpy(data):
    a = data.draw(arrays(dtypes=NUMBERS + (np.bool_,), shapes=[(5,), (3, 4), (2, 3, 4)]))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    kind = data.draw(st.sampled_from(["dx", "x1", "xn", "none"]))
    if kind == "dx":
        check(np.trapezoid, a, dx=data.draw(st.sampled_from([0.5, 2])), axis=axis,
              exact=False)
    elif kind == "x1":
        check(np.trapezoid, a, np.cumsum(np.arange(a.shape[axis]) * 0.5), axis=axis,
              exact=False)
    elif kind == "xn" and a.dtype != np.bool_:
        check(np.trapezoid, a, a * 2, axis=axis, exact=False)
    else:
        check(np.trapezoid, a, axis=axis, exact=False)

# }}}


# {{{ diagonals, index grids, sequences

@_SETTINGS_DEFAULT
@given(st.data())
def test_diagonals_match_numpy(data):
    _check_diagonals(data)


@pytest.mark.slow
@_SETTINGS
@given(st.data())
def test_diagonals_match_numpy_many(data):
    _check_diagonals(data)


def _check_diagonals(data):
    a = data.draw(arrays(dtypes=WITH_INT32 + (np.bool_, np.complex64),
                         shapes=[(4,), (0,), (3, 4), (4, 2), (2, 3, 4), ()]))
    k = data.draw(st.integers(-4, 5))
    check(np.diag, a, k)
    check(np.diagflat, a, k)
    if a.ndim >= 2:
        axis1, axis2 = data.draw(st.sampled_from([(0, 1), (1, 0), (-1, 0), (2, 1)]
                                                  if a.ndim == 3 else [(0, 1), (1, 0)]))
        check(np.diagonal, a, k, axis1, axis2)
        dtype = data.draw(st.sampled_from([None, np.float64]))
        check(np.trace, a, k, axis1, axis2, dtype, exact=False)
    check(np.diagonal, a, 0, 0, 0)


@pytest.mark.parametrize("n,k,m", [(4, 0, None), (4, -1, 5), (5, 1, 2), (0, 0, None),
                                   (3, -5, None), (40, 3, 45)])
def test_triangle_indices_match_numpy(n, k, m):
    same(N.tril_indices(n, k, m), np.tril_indices(n, k, m))
    same(N.triu_indices(n, k, m), np.triu_indices(n, k, m))
    if n == 4:
        a = np.zeros((n, n if m is None else m))
        same(N.tril_indices_from(a, k), np.tril_indices_from(a, k))
        same(N.triu_indices_from(la.asarray(a), k), np.triu_indices_from(a, k))
        with pytest.raises(ValueError):
            N.tril_indices_from(np.zeros(3))


@pytest.mark.parametrize("dims", [(2, 3), (4,), (), (2, 0, 3)])
@pytest.mark.parametrize("dtype", [int, np.float32])
def test_indices_match_numpy(dims, dtype):
    same(N.indices(dims, dtype), np.indices(dims, dtype))
    same(N.indices(dims, dtype, sparse=True), np.indices(dims, dtype, sparse=True))


@pytest.mark.parametrize("key", [
    np.s_[0:3], np.s_[-1:1:5j], np.s_[0:5:2], np.s_[0:1:0.25], np.s_[3], np.s_[0:3, 0:1:4j],
    np.s_[1:4, -2:2:2, 0:1:3j], np.s_[0:2.5, 1:3], np.s_[0:3:1j, 0:0]])
def test_grids_match_numpy(key):
    for ours, theirs in ((N.mgrid, np.mgrid), (N.ogrid, np.ogrid)):
        expected = _numpy(theirs.__getitem__, key)
        if isinstance(expected, Exception):
            with pytest.raises(type(expected)):
                ours[key]
        else:
            same(ours[key], expected)
            with la.tier("auto"):       # (NumPy's, on the host tier)
                small = ours[key]
            for got in small if isinstance(small, tuple) else (small,):
                assert isinstance(got, la.HostArray)
            same(small, expected)


@pytest.mark.parametrize("args", [
    (0, 3, 4), (0.0, 2.0), (np.float32(0), 3, 5), (1, 2, 5, False), ([0, 1], [2, 3], 3),
    (2, 0, 4, True, 2.0), (0, 1, 0), (0, 1, 1)])
@pytest.mark.parametrize("axis", [0, -1])
def test_logspace_geomspace_match_numpy(args, axis):
    check(np.logspace, *args, axis=axis, exact=False)
    check(np.logspace, *args[:4], dtype=np.float32, axis=axis, exact=False)
    start = args[0] if np.ndim(args[0]) else args[0] + 1
    stop = args[1]
    check(np.geomspace, start, stop, *args[2:4], axis=axis, exact=False)
    check(np.geomspace, -np.asarray(start) * 2, -np.asarray(stop), *args[2:4], axis=axis,
          exact=False)
    check(np.geomspace, 0, 3)
    check(np.logspace, [0, 1], [2, 3], 4, base=[2.0, 10.0], axis=axis, exact=False)

# }}}


# {{{ gathering, choosing, membership

@_SETTINGS_DEFAULT
@given(st.data())
def test_argwhere_matches_numpy(data):
    _check_argwhere(data)


@pytest.mark.slow
@_SETTINGS
@given(st.data())
def test_argwhere_matches_numpy_many(data):
    _check_argwhere(data)


def _check_argwhere(data):
    a = data.draw(arrays(dtypes=NUMBERS + (np.bool_,), shapes=SHAPES + [(40,)], low=-1,
                         high=2))
    check(np.argwhere, a)


@_FEW_DEFAULT
@given(st.data())
def test_take_along_axis_matches_numpy(data):
    _check_take_along_axis(data)


@pytest.mark.slow
@_FEW
@given(st.data())
def test_take_along_axis_matches_numpy_many(data):
    _check_take_along_axis(data)


def _check_take_along_axis(data):
    a = data.draw(arrays(dtypes=NUMBERS + (np.bool_,), shapes=[(5,), (3, 4), (2, 3, 4)]))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    rng = np.random.default_rng(a.size)
    kind = data.draw(st.sampled_from(["argsort", "random", "broadcast", "flat"]))
    if kind == "argsort":
        check(np.take_along_axis, a, np.argsort(a, axis=axis), axis)
    elif kind == "random":
        shape = list(a.shape)
        shape[axis] = 3
        index = rng.integers(-a.shape[axis], a.shape[axis], shape)
        check(np.take_along_axis, a, index, axis)
    elif kind == "broadcast":
        shape = [1] * a.ndim
        shape[axis] = 2
        check(np.take_along_axis, a, rng.integers(0, a.shape[axis], shape), axis)
    else:
        check(np.take_along_axis, a, rng.integers(0, a.size, 4), None)
    check(np.take_along_axis, a, np.full(a.shape, a.shape[axis]), axis)   # out of bounds
    check(np.take_along_axis, a, np.zeros(a.shape), axis)                 # not integers


@_SETTINGS
@given(st.data())
def test_select_matches_numpy(data):
    a = data.draw(arrays(dtypes=NUMBERS, shapes=[(5,), (3, 4)]))
    choice_dtype = data.draw(st.sampled_from(NUMBERS + (np.bool_,)))
    default = data.draw(st.sampled_from([0, -1.5, np.float32(2), True]))
    conds = [a > 1, a < 0]
    choices = [a.astype(choice_dtype), data.draw(st.sampled_from([7, 2.5, a[..., :1]]))]
    check(np.select, conds, choices, default)
    check(np.select, [a > 0], [a, a])
    check(np.select, [a], [a])


@_SETTINGS_DEFAULT
@given(st.data())
def test_isin_matches_numpy(data):
    _check_isin(data)


@pytest.mark.slow
@_SETTINGS
@given(st.data())
def test_isin_matches_numpy_many(data):
    _check_isin(data)


def _check_isin(data):
    a = data.draw(arrays(dtypes=NUMBERS, shapes=[(5,), (3, 4), (), (0,)], low=-5, high=60))
    rng = np.random.default_rng(a.size)
    m = data.draw(st.sampled_from([0, 1, 5, 50]))
    test = rng.integers(-5, 60, m).astype(data.draw(st.sampled_from(NUMBERS)))
    if test.dtype.kind == "f" and m:
        test[0] = np.nan
    invert = data.draw(st.booleans())
    check(np.isin, a, test, invert=invert)
    check(np.isin, a, la.asarray(test).reshape(-1, 1) if m else test, kind="sort")

# }}}


# {{{ convolution, products, polynomials, comparisons

@_FEW_DEFAULT
@given(st.data())
def test_convolve_correlate_match_numpy(data):
    _check_convolve_correlate(data)


@pytest.mark.slow
@_FEW
@given(st.data())
def test_convolve_correlate_match_numpy_many(data):
    _check_convolve_correlate(data)


def _check_convolve_correlate(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    n, m = data.draw(st.sampled_from([1, 2, 5, 6])), data.draw(st.sampled_from([1, 3, 4, 7]))
    kinds = NUMBERS + (np.complex128, np.bool_)
    a = (rng.integers(-3, 4, n) + (rng.random(n) < 0.3) * 0.5).astype(
        data.draw(st.sampled_from(kinds)))
    v = rng.integers(-3, 4, m).astype(data.draw(st.sampled_from(kinds)))
    if v.dtype.kind == "c":
        v = v + 1j * rng.integers(-2, 3, m)
    mode = data.draw(st.sampled_from(["full", "same", "valid", 0, "bad"]))
    check(np.convolve, a, v, mode, exact=False)
    check(np.correlate, a, v, mode, exact=False)


def test_convolve_errors():
    check(np.convolve, np.zeros(0), np.ones(2))
    check(np.correlate, np.ones(2), np.zeros(0))
    check(np.convolve, np.ones((2, 2)), np.ones(2))
    check(np.convolve, 3.0, np.ones(3))


@_SETTINGS_DEFAULT
@given(st.data())
def test_cross_matches_numpy(data):
    _check_cross(data)


@pytest.mark.slow
@_SETTINGS
@given(st.data())
def test_cross_matches_numpy_many(data):
    _check_cross(data)


def _check_cross(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    ka, kb = data.draw(st.sampled_from([(3, 3), (2, 3), (3, 2), (2, 2), (4, 3)]))
    sa, sb = data.draw(st.sampled_from([((4,), (4,)), ((1,), (3,)), ((), ()), ((2, 1), (3,))]))
    dtype = data.draw(st.sampled_from(NUMBERS))
    a = rng.integers(-5, 6, sa + (ka,)).astype(dtype)
    b = rng.normal(size=sb + (kb,)).astype(data.draw(st.sampled_from(NUMBERS)))
    axisc = data.draw(st.sampled_from([-1, 0]))
    check(np.cross, a, b, axisc=axisc if ka == 3 or kb == 3 else -1, exact=False)
    check(np.cross, np.moveaxis(a, -1, 0), b, axisa=0, exact=False)


@_SETTINGS_DEFAULT
@given(st.data())
def test_kron_matches_numpy(data):
    _check_kron(data)


@pytest.mark.slow
@_SETTINGS
@given(st.data())
def test_kron_matches_numpy_many(data):
    _check_kron(data)


def _check_kron(data):
    a = data.draw(arrays(dtypes=NUMBERS + (np.bool_,), shapes=[(2,), (2, 3), (), (1, 2, 2)],
                         specials=False))
    b = data.draw(arrays(dtypes=WITH_INT32, shapes=[(3,), (2, 2), ()], specials=False))
    check(np.kron, a, b)
    check(np.kron, b, a)


@_SETTINGS_DEFAULT
@given(st.data())
def test_polyval_matches_numpy(data):
    _check_polyval(data)


@pytest.mark.slow
@_SETTINGS
@given(st.data())
def test_polyval_matches_numpy_many(data):
    _check_polyval(data)


def _check_polyval(data):
    x = data.draw(arrays(dtypes=NUMBERS + (np.bool_,), shapes=[(5,), (3, 4), ()],
                         specials=False))
    p = data.draw(st.sampled_from([[1, 2, 3], [0.5, -1.0], [2], [], np.array([1, -2, 0, 1],
                                                                          np.float32)]))
    check(np.polyval, p, x, exact=False)
    check(np.polyval, np.asarray(p), x, exact=False)
    check(np.polyval, p, 2.0, exact=False)


@pytest.mark.parametrize("pair", [
    ([1, 2], [1, 2]), ([1, 2], [1, 3]), ([1, 2], [[1, 2], [1, 2]]), ([np.nan], [np.nan]),
    ([1.0, np.nan], [1, np.nan]), (np.zeros((0, 2)), np.zeros((0, 2))), ([[1]], [1, 1, 1]),
    (np.zeros(3), np.zeros(2)), (3, [3, 3])])
def test_array_equal_and_equiv_match_numpy(pair):
    a, b = (np.asarray(x) for x in pair)
    for kwargs in ({}, {"equal_nan": True}):
        assert np.array_equal(la.asarray(a), la.asarray(b), **kwargs) == \
            np.array_equal(a, b, **kwargs)
    assert np.array_equiv(la.asarray(a), b) == np.array_equiv(a, b)
    assert isinstance(N.array_equiv(a, la.asarray(b)), bool)

# }}}


# {{{ joining, splitting, rotating

@_FEW_DEFAULT
@given(st.data())
def test_atleast_and_stacking_match_numpy(data):
    _check_atleast_and_stacking(data)


@pytest.mark.slow
@_FEW
@given(st.data())
def test_atleast_and_stacking_match_numpy_many(data):
    _check_atleast_and_stacking(data)


def _check_atleast_and_stacking(data):
    a = data.draw(arrays(dtypes=NUMBERS + (np.bool_,), shapes=[(), (3,), (2, 3), (1, 2, 3)]))
    b = data.draw(arrays(dtypes=NUMBERS, shapes=[(), (3,), (2, 3)]))
    for f in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
        check(f, a)
        check(f, a, b)
    check(np.append, a, b)
    check(np.append, a, b, axis=0)
    check(np.column_stack, [a, b] if a.ndim < 3 else [b])
    check(np.dstack, [a, b])


@_SETTINGS
@given(st.data())
def test_array_split_matches_numpy(data):
    a = data.draw(arrays(dtypes=NUMBERS, shapes=[(7,), (3, 4), (0, 2)]))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    sections = data.draw(st.sampled_from([1, 2, 3, 8, [1, 3], [2, 10], [], 0]))
    check(np.array_split, a, sections, axis)


@_SETTINGS_DEFAULT
@given(st.data())
def test_insert_delete_match_numpy(data):
    _check_insert_delete(data)


@pytest.mark.slow
@_SETTINGS
@given(st.data())
def test_insert_delete_match_numpy_many(data):
    _check_insert_delete(data)


def _check_insert_delete(data):
    a = data.draw(arrays(dtypes=WITH_INT32 + (np.bool_,), shapes=[(5,), (3, 4)]))
    axis = data.draw(st.sampled_from([None] + list(range(-a.ndim, a.ndim))))
    n = a.size if axis is None else a.shape[axis]
    obj = data.draw(st.sampled_from([
        0, n, -1, n + 1, [1], [0, 2, 2], [-1, 0], slice(0, 4, 2), slice(None),
        np.array([True] + [False] * (n - 1)), np.array([], dtype=np.int64)]))
    values = data.draw(st.sampled_from([9, 2.5, [7, 8], np.arange(4).reshape(2, 2)]))
    check(np.insert, a, obj, values, axis)
    check(np.delete, a, obj, axis)


@_SETTINGS
@given(st.data())
def test_rot90_matches_numpy(data):
    a = data.draw(arrays(dtypes=NUMBERS, shapes=[(3, 4), (2, 3, 4), (0, 2), (5,)]))
    k = data.draw(st.integers(-5, 5))
    axes_ = data.draw(st.sampled_from([(0, 1), (1, 0), (-1, 0), (0, 0), (0, 1, 2)]))
    check(np.rot90, a, k, axes_)

# }}}


# {{{ la.jit

def test_device_functions_run_inside_jit():
    a = np.array([0.0, 1.0, 3.0, 2.0, 5.0])
    cases = [
        (lambda x: np.convolve(x, np.array([1.0, 2.0])), lambda x: np.convolve(x, [1.0, 2.0])),
        (lambda x: np.interp(x, np.arange(40.0), np.arange(40.0) ** 2), None),
        (lambda x: np.take_along_axis(x, np.array([4, 0, -1]), 0), None),
        (lambda x: np.digitize(x, [0.5, 2.5]), None),
        (lambda x: np.histogram(x, 3, (0, 5))[0], None),
        (lambda x: np.nanmean(x), None), (lambda x: np.gradient(x), None),
        (lambda x: np.cross(x[:3], x[2:]), None), (lambda x: np.isin(x, [1.0, 5.0]), None),
        (lambda x: np.diag(x, 1), None), (lambda x: np.trapezoid(x), None)]
    for lazy_f, numpy_f in cases:
        same(la.jit(lazy_f)(a), _numpy(numpy_f or lazy_f, a), exact=False)


@pytest.mark.parametrize("f", [
    lambda x: np.bincount(x.astype(np.int64)), lambda x: np.argwhere(x),
    lambda x: np.histogram(x)[0], lambda x: np.array_equal(x, x)])
def test_data_dependent_shapes_refuse_jit(f):
    with pytest.raises(la.ConcretizationError):
        la.jit(f)(np.array([0.0, 1.0, 3.0]))

# }}}


@pytest.mark.parametrize("n, m", [(7, 3), (3, 7), (1, 4), (70001, 3), (3, 70001)])
def test_convolve_and_correlate_with_infinities_and_a_longer_second_operand(n, m):
    # no products with the zeros beyond the ends (inf * 0 was NaN there); a
    # longer second operand of correlate is windowed as the first (was
    # quadratic in its length), conjugated as NumPy's
    rng = np.random.default_rng(n + m)
    a = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    v = rng.standard_normal(m) - 2j * rng.standard_normal(m)
    a_inf, v_inf = a.real.copy(), v.real.copy()
    v_inf[0] = np.inf
    with la.tier("device"):
        for x, y in ((a, v), (a_inf, v_inf), (a.real, v.real)):
            for f in ("convolve", "correlate"):
                for mode in ("full", "same", "valid"):
                    expected = getattr(np, f)(x, y, mode)
                    got = np.asarray(getattr(la, f)(la.asarray(x), la.asarray(y), mode))
                    assert got.shape == expected.shape
                    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_polyval_takes_the_rows_of_two_dimensional_coefficients():
    x = np.linspace(0, 1, 5)[:, None]
    with la.tier("device"):
        for p in ([[1.0, 2], [3, 4]], np.array([1.0, -2, 3]), la.asarray(np.eye(2))):
            expected = np.polyval(np.asarray(p), x)
            got = la.polyval(p, la.asarray(x))
            assert got.shape == expected.shape
            np.testing.assert_allclose(np.asarray(got), expected)
        with pytest.raises(TypeError, match="0-d"):
            la.polyval(2.0, la.asarray(x))


def test_weighted_bincount_of_many_buckets_keeps_small_buckets_next_to_large_ones():
    # (buckets were differences of one running sum: 1e17 swallowed the
    # buckets after it, float32 weights lost their last digits)
    rng = np.random.default_rng(3)
    x = rng.integers(0, 1 << 20, 1024)
    x[:4] = [5, 5, 6, 1 << 20]
    for weights in (np.where(x == 5, 1e17, 1.0), rng.random(1024).astype(np.float32)):
        expected = np.bincount(x, weights)
        got = la.bincount(la.asarray(x), weights=la.asarray(weights))
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(np.asarray(got), expected)
