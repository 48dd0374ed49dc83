"""The host tier's lean reductions give NumPy's answers bit for bit: value,
dtype and type (NumPy scalar or array), warnings and errors, for every
dtype, 0-d and empty arrays, NaN and infinities, and each way of passing
the axis."""

import warnings

import numpy as np
import pytest

import lazyarray as la
from lazyarray.host import lean

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float16,
          np.float32, np.float64, np.complex64, np.complex128]
SHAPES = [(), (0,), (7,), (3, 5), (2, 0, 3), (4, 1, 6)]


def _values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape) * 50
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    if np.dtype(dtype).kind in "fc" and values.size > 3:
        values.flat[1], values.flat[2] = np.inf, -np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return values.astype(dtype)


def _outcome(f, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = f(*args, **kwargs)
        except Exception as error:      # (the exception is the outcome compared)
            return ("raises", type(error)), [w.category for w in caught]
    return result, [w.category for w in caught]


def _same(got, expected):
    (g, g_warned), (e, e_warned) = got, expected
    assert g_warned == e_warned
    if isinstance(e, tuple) and e and e[0] == "raises":
        assert isinstance(g, tuple) and g[1] is e[1]
        return
    assert type(g) is type(e)
    assert np.asarray(g).dtype == np.asarray(e).dtype and np.shape(g) == np.shape(e)
    np.testing.assert_array_equal(g, e)     # (NaNs in the same places)
    assert np.asarray(g).tobytes() == np.asarray(e).tobytes()


def _calls(a):
    yield (), {}
    for axis in (None, *range(-a.ndim - 1, a.ndim + 1)):
        yield (axis,), {}
        yield (), {"axis": axis}
    yield (), {"axis": 0, "keepdims": True}
    yield (0, None), {}
    yield (), {"axis": (0,)}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_lean_functions_are_numpys(shape, dtype):
    a = _values(shape, dtype)
    if a.size > 4:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a.flat[3] = np.nan if a.dtype.kind in "fc" else a.flat[3]
    for name, lean_function in lean.FUNCTIONS.items():
        for args, kwargs in _calls(a):
            _same(_outcome(lean_function, a, *args, **kwargs),
                  _outcome(getattr(np, name), a, *args, **kwargs))
    for name, lean_method in lean.METHODS.items():
        for args, kwargs in _calls(a):
            _same(_outcome(lean_method, a, *args, **kwargs),
                  _outcome(getattr(np.ndarray, name), a, *args, **kwargs))


def test_lean_mean_rounds_as_numpy_in_single_precision():
    # (NumPy divides a float32 sum by an intp: in float64, then rounds)
    rng = np.random.default_rng(5)
    for n in (3, 7, 11, 13, 1000):
        a = rng.random(n).astype(np.float32) * 3
        for axis in (None, 0):
            _same(_outcome(lean.mean_method, a, axis), _outcome(np.ndarray.mean, a, axis))


def test_host_arrays_reduce_through_every_route_as_numpy():
    a = _values((6, 5), np.float32, seed=2)
    with la.tier("auto"):
        x = la.asarray(a)
        cases = [(la.sum(x, axis=1), np.sum(a, axis=1)), (np.sum(x), np.sum(a)),
                 (x.mean(axis=0), a.mean(axis=0)), (np.mean(x), np.mean(a)),
                 (la.max(x, 0), np.max(a, 0)), (la.any(x > 40), np.any(a > 40)),
                 (la.argmax(x, axis=1), np.argmax(a, axis=1)),
                 (la.cumsum(x, 1), np.cumsum(a, 1)), (la.mean(x), np.mean(a))]
    assert isinstance(x, la.HostArray)
    for got, expected in cases:
        assert isinstance(got, la.HostArray)
        assert got.dtype == expected.dtype and got.shape == np.shape(expected)
        assert got.get().tobytes() == np.asarray(expected).tobytes()
