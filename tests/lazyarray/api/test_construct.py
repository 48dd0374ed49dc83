"""Creation functions, concatenation and stacking against NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la
from tests.helpers import counting

#: the joins' default counts (every example compiles kernels of its own);
#: their ``_many`` twins, ``slow``, run 25
_SETTINGS = settings(max_examples=25)
_FEW = settings(max_examples=8)


@pytest.mark.parametrize("make,expected", [
    (lambda: la.zeros((2, 3)), np.zeros((2, 3))),
    (lambda: la.ones(4, np.int32), np.ones(4, np.int32)),
    (lambda: la.full((2, 2), 7), np.full((2, 2), 7)),
    (lambda: la.full((3,), 2.5, np.float32), np.full((3,), 2.5, np.float32)),
    (lambda: la.zeros(()), np.zeros(())),
    (lambda: la.zeros((0, 3)), np.zeros((0, 3))),
    (lambda: la.ones_like(np.ones((2, 5), np.float32)), np.ones((2, 5), np.float32)),
    (lambda: la.full_like(np.ones(3, np.int64), 4), np.full_like(np.ones(3, np.int64), 4)),
    (lambda: la.arange(7), np.arange(7)),
    (lambda: la.arange(2, 11, 3), np.arange(2, 11, 3)),
    (lambda: la.arange(5, 0, -2), np.arange(5, 0, -2)),
    (lambda: la.arange(0.5, 2.0, 0.25), np.arange(0.5, 2.0, 0.25)),
    (lambda: la.arange(4, dtype=np.float32), np.arange(4, dtype=np.float32)),
    (lambda: la.arange(3, 1), np.arange(3, 1)),
    (lambda: la.linspace(0, 1, 11), np.linspace(0, 1, 11)),
    (lambda: la.linspace(-2, 3, 4, endpoint=False), np.linspace(-2, 3, 4, endpoint=False)),
    (lambda: la.linspace(1, 2, 1), np.linspace(1, 2, 1)),
    (lambda: la.eye(3), np.eye(3)),
    (lambda: la.eye(3, 5, k=2, dtype=np.int32), np.eye(3, 5, k=2, dtype=np.int32)),
    (lambda: la.eye(4, k=-1), np.eye(4, k=-1)),
    (lambda: la.identity(2, np.float32), np.identity(2, np.float32)),
])
def test_creation_matches_numpy(queue, make, expected):
    got = make()
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got.get(), expected, rtol=1e-15, atol=1e-15)


def test_creation_errors():
    with pytest.raises(la.ShapeError, match="negative dimensions"):
        la.zeros((2, -1))
    with pytest.raises(la.DTypeError):
        la.zeros(3, np.float16)
    with pytest.raises(ZeroDivisionError):     # (NumPy's)
        la.arange(0, 3, 0)


@st.composite
def joinable(draw):
    ndim = draw(st.integers(1, 3))
    base = draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim))
    axis = draw(st.integers(-ndim, ndim - 1))
    count = draw(st.integers(1, 4))
    shapes = []
    for _ in range(count):
        shape = list(base)
        shape[axis] = draw(st.integers(0, 4))
        shapes.append(tuple(shape))
    dtypes = draw(st.lists(st.sampled_from([np.float32, np.float64, np.int32, np.int64]),
                           min_size=count, max_size=count))
    return shapes, dtypes, axis


@_FEW
@given(joinable(), st.integers(0, 2**31 - 1))
def test_concatenate_matches_numpy(case, seed):
    _check_concatenate(case, seed)


@pytest.mark.slow
@_SETTINGS
@given(joinable(), st.integers(0, 2**31 - 1))
def test_concatenate_matches_numpy_many(case, seed):
    _check_concatenate(case, seed)


def _check_concatenate(case, seed):
    shapes, dtypes, axis = case
    rng = np.random.default_rng(seed)
    arrays = [(rng.random(s) * 10).astype(d) for s, d in zip(shapes, dtypes)]
    got = la.concatenate([la.asarray(a) for a in arrays], axis=axis)
    expected = np.concatenate(arrays, axis=axis)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got.get(), expected)


_STACKABLE = (st.lists(st.integers(0, 4), min_size=0, max_size=2), st.integers(1, 3),
              st.integers(0, 2**31 - 1), st.data())


@_FEW
@given(*_STACKABLE)
def test_stack_matches_numpy(shape, count, seed, data):
    _check_stack(shape, count, seed, data)


@pytest.mark.slow
@_SETTINGS
@given(*_STACKABLE)
def test_stack_matches_numpy_many(shape, count, seed, data):
    _check_stack(shape, count, seed, data)


def _check_stack(shape, count, seed, data):
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    rng = np.random.default_rng(seed)
    arrays = [rng.random(shape).astype(np.float32) for _ in range(count)]
    got = np.stack([la.asarray(a) for a in arrays], axis=axis)
    assert isinstance(got, la.LazyArray)
    np.testing.assert_array_equal(got.get(), np.stack(arrays, axis=axis))


def test_concatenate_fuses_with_elementwise_work(queue):
    a = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)
    x = la.asarray(a)
    with counting() as ran:
        result = np.concatenate([np.sin(x), 2 * x[:, ::-1]], axis=1) * 3 + 1
        got = result.get()
    assert ran.launches == 1
    expected = np.concatenate([np.sin(a), 2 * a[:, ::-1]], axis=1) * 3 + 1
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_concatenate_none_axis_and_hstack_vstack(queue):
    a, b = np.arange(6).reshape(2, 3), np.arange(4)
    np.testing.assert_array_equal(la.concatenate([a, b], axis=None).get(),
                                  np.concatenate([a, b], axis=None))
    np.testing.assert_array_equal(la.hstack([b, b]).get(), np.hstack([b, b]))
    np.testing.assert_array_equal(la.vstack([a[0], a]).get(), np.vstack([a[0], a]))


def test_join_errors_name_the_problem():
    with pytest.raises(la.ShapeError, match="along dimension 0"):
        la.concatenate([np.ones((2, 3)), np.ones((3, 3))], axis=1)
    with pytest.raises(la.ShapeError, match="same number of dimensions"):
        la.concatenate([np.ones((2, 3)), np.ones(3)])
    with pytest.raises(la.ShapeError, match="out of bounds"):
        la.concatenate([np.ones(3), np.ones(3)], axis=1)
    with pytest.raises(la.ShapeError, match="same shape"):
        la.stack([np.ones(3), np.ones(4)])
    with pytest.raises(la.ShapeError, match="zero-dimensional"):
        la.concatenate([np.float32(1), np.float32(2)])


def test_arange_in_expressions_fuses(queue):
    with counting() as ran:
        x = (la.arange(10) * 0.5 + la.ones(10)).sum()
        assert float(x) == pytest.approx((np.arange(10) * 0.5 + 1).sum())
    assert ran.launches == 1


@pytest.mark.parametrize("tier", ["host", "device"])
def test_a_0d_integer_array_is_a_shape_as_in_numpy(tier):
    n_host = np.array([1, 2, 3]).sum()
    with la.tier(tier):
        n = la.asarray(np.array([1, 2, 3])).sum()
        assert la.zeros(n).shape == np.zeros(n_host).shape == (6,)
        assert la.ones((n, 2)).shape == (6, 2)
        with pytest.raises(TypeError):
            la.zeros(la.asarray(2.5))


@pytest.mark.parametrize("tier", ["auto", "device"])
def test_linspace_rounds_integer_samples_down_as_numpy(tier):
    with la.tier(tier):
        for start, stop, num, dtype in ((-5, 5, 4, int), (-5, 5, 70001, int),
                                        (0, 10, 7, np.uint8), (3, -3, 9, np.int16)):
            got = la.linspace(start, stop, num, dtype=dtype)
            expected = np.linspace(start, stop, num, dtype=dtype)
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.parametrize("make", [
    lambda xp: xp.zeros((2**62, 4)), lambda xp: xp.ones((2**40, 2**40)),
    lambda xp: xp.zeros((2**32,) * 3), lambda xp: xp.full(2**63 - 1, 1.0),
    lambda xp: xp.broadcast_to(xp.zeros(3), (2**62, 3)),
    lambda xp: xp.arange(3) * xp.ones((2**61, 1))])
def test_arrays_too_big_to_address_are_refused_when_made(make):
    with pytest.raises(ValueError, match="too big|too large"):
        make(np)
    with pytest.raises(ValueError, match="too big|too large"):     # (the host tier: NumPy's)
        make(la)
