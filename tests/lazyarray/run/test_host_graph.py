"""Small graphs computed by NumPy on the host (lazyarray.run.host_graph, what
an array context's first freezes on a CPU device use): NumPy's values and
dtypes for every kind of node and for elementwise operations over every
dtype, NaN and infinity, 0-d and empty arrays; graphs it cannot compute as
NumPy would (too large, an operation it does not know, one NumPy refuses or
types otherwise) are left alone."""

import numpy as np
import pytest

import lazyarray as la
from lazyarray.run.host_graph import HOST_OPERATIONS, host_values

LIMIT = 1 << 16


def _read(array):
    return array.get()


def _host(expression, *arrays, limit=LIMIT):
    """*expression* of *arrays* recorded on the device tier, computed by
    host_values (None where it refuses)."""
    with la.tier("device"):
        lazy = expression(la, *[la.asarray(a) for a in arrays])
        values = host_values([lazy.node], limit, _read)
    return None if values is None else values[0]


def _same(got, want):
    want = np.asarray(want)
    assert got is not None
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def _values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -60), min(info.max, 60), shape, endpoint=True
                            ).astype(dtype)
    x = rng.standard_normal(shape) * 4
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    x = np.asarray(x).astype(dtype)
    if x.size >= 4:
        flat = x.reshape(-1)
        flat[:4] = [np.nan, np.inf, -np.inf, 0.0]
    return x


DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint32, np.uint64,
          np.float32, np.float64, np.complex64, np.complex128]

UNARY = ["negative", "absolute", "sqrt", "exp", "log", "sin", "tanh", "floor", "isnan",
         "isfinite", "sign", "square", "logical_not", "invert", "expm1", "arctan"]
BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder",
          "maximum", "minimum", "fmax", "fmin", "less", "equal", "not_equal",
          "logical_and", "logical_xor", "bitwise_and", "bitwise_or", "arctan2", "hypot",
          "copysign", "fmod", "heaviside", "logaddexp", "left_shift", "right_shift"]


def _elementwise_cases():
    for dtype in DTYPES:
        for name in UNARY + BINARY:
            yield name, dtype


@pytest.mark.parametrize(("name", "dtype"), list(_elementwise_cases()))
def test_elementwise_operations_give_numpys_values(rng, name, dtype):
    """Every operation NumPy and lazyarray's device tier both take: NumPy's
    values and dtype (on 0-d, empty and broadcast operands)."""
    ufunc = getattr(np, name)
    shapes = [[(7, 5)], [()], [(0, 3)]] if ufunc.nin == 1 else \
        [[(7, 5), (5,)], [(), (4,)], [(0, 3), (3,)], [(3, 1), (1, 4)]]
    for shape_list in shapes:
        arrays = [_values(rng, s, dtype) for s in shape_list]
        with np.errstate(all="ignore"):
            try:
                want = ufunc(*arrays)
            except TypeError:
                continue            # (NumPy has no loop for this dtype)
        try:
            got = _host(lambda xp, *a: getattr(xp, name)(*a), *arrays)
        except (TypeError, la.LazyArrayError):
            continue                # (the device tier refuses it when recording)
        _same(got, want)


def test_python_scalars_take_the_arrays_type(rng):
    x = _values(rng, (6,), np.float32)
    i = _values(rng, (6,), np.int8)
    _same(_host(lambda xp, a: a * 2.5 + 1, x), x * 2.5 + 1)
    _same(_host(lambda xp, a: a + 3, i), i + 3)
    _same(_host(lambda xp, a: xp.where(a > 0, a, 0), i), np.where(i > 0, i, 0))


def test_views_reshapes_joins_positions_scans_and_gathers(rng):
    x = _values(rng, (6, 5), np.float64)
    y = _values(rng, (6, 5), np.int32)
    idx = np.array([3, -1, 0, 5, 2])
    cases = {
        "strided slices": lambda xp, a, b: a[::2, 1:4] * a[1::2, -1:0:-1][:, :3],
        "new axes and transpose": lambda xp, a, b: a[:, None, :] * a[None, :, :] + a.T[:, 0],
        "a row and an element": lambda xp, a, b: a[2] + a[3, 4],
        "diagonal": lambda xp, a, b: xp.diagonal(a[:5]) * 2,
        "reshape": lambda xp, a, b: (a + 1).reshape(3, 10)[::-1],
        "concatenate": lambda xp, a, b: xp.concatenate([a, b.astype(np.float64)], axis=1),
        "concatenate promoting": lambda xp, a, b: xp.concatenate([a[0], b[0]]),
        "arange": lambda xp, a, b: xp.arange(30).reshape(6, 5) * b,
        "cumsum": lambda xp, a, b: xp.cumsum(b, axis=0),
        "cumprod": lambda xp, a, b: xp.cumprod(b[:, :2], axis=1),
        "gather": lambda xp, a, b: a[idx % 6, :4] - b[2, idx % 5][:, None],
        "sums": lambda xp, a, b: xp.sum(b, axis=1, keepdims=True) + a.sum(axis=0),
        "reductions": lambda xp, a, b: xp.stack([b.max(axis=0), b.min(axis=0),
                                                  b.prod(axis=0)]),
        "any all": lambda xp, a, b: xp.any(b > 3, axis=0) & xp.all(b < 50, axis=0),
        "argmax": lambda xp, a, b: xp.argmax(b, axis=1) + xp.argmin(b, axis=0).sum(),
        "argmax flat": lambda xp, a, b: xp.argmax(b),
        "mean": lambda xp, a, b: xp.mean(b, axis=0) - b.mean(),
        "astype": lambda xp, a, b: (b * 1000).astype(np.int8) + b.astype(np.uint8),
        "complex parts": lambda xp, a, b: xp.real(a + 1j * a) * xp.imag(a - 2j),
    }
    for name, expression in cases.items():
        with np.errstate(all="ignore"):
            want = expression(np, x, y)
        got = _host(expression, x, y)
        assert got is not None, name
        _same(got, want)


def test_writes_into_a_computed_array_pick_its_old_values():
    """A write into a computed array gathers its old values at positions
    read modulo the axis's extent (they lie outside [-n, n) from the 12th
    column written on)."""
    want = np.zeros((3, 20))
    with la.tier("device"):
        h = la.asarray(want)
        for k in range(16):
            np.asarray(h)                   # (computed on the device)
            h[:, k] = k + 1.0
            h[1, k:k + 3] = -2.0 * k
            want[:, k] = k + 1.0
            want[1, k:k + 3] = -2.0 * k
            _same(host_values([h.node], LIMIT, _read)[0], want)


def test_nan_in_max_and_sums_of_empty_axes():
    x = np.array([[1.0, np.nan, 3.0], [2.0, 0.5, -np.inf]])
    _same(_host(lambda xp, a: xp.max(a, axis=1), x), np.max(x, axis=1))
    _same(_host(lambda xp, a: xp.maximum(a, 1.5), x), np.maximum(x, 1.5))
    e = np.zeros((0, 4))
    _same(_host(lambda xp, a: a.sum(axis=0), e), e.sum(axis=0))
    _same(_host(lambda xp, a: a.prod(), e), e.prod())


def test_graphs_it_cannot_compute_as_numpy_are_left_alone(rng):
    x = _values(rng, (300,), np.float64)
    i = np.array([2, 3, 4], dtype=np.int64)
    # more elements than the limit, in a result or a value read
    assert _host(lambda xp, a: a + 1, x, limit=299) is None
    assert _host(lambda xp, a: a[:3] + 1, x, limit=299) is None
    # a sort (an external call), NumPy's refusal of negative integer powers
    assert _host(lambda xp, a: xp.sort(a[:9]) + 1, x) is None
    assert _host(lambda xp, a: a ** -a, i) is None
    assert set(HOST_OPERATIONS) >= {"add", "where", "_maximum_f", "_floor_divide_i"}
