"""``x[key] = value`` against NumPy: basic keys, masks, integer arrays; the
update stays lazy and fuses with its readers; it works inside ``la.jit``."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarray as la
from tests.helpers import counting

_SETTINGS = settings(max_examples=30)

_DTYPES = [np.float32, np.float64, np.int32, np.bool_]
_SHAPES = st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple)


def _base(shape, dtype):
    a = (np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) - 3) * 1.5
    return a.astype(dtype)


@st.composite
def _values(draw, target):
    """A scalar or an array broadcastable to *target*, of some dtype; values
    with fractions (float into int truncates), small enough for every dtype."""
    if draw(st.booleans()):
        return draw(st.one_of(st.integers(-20, 20), st.integers(-80, 80).map(lambda v: v / 4),
                              st.booleans()))
    shape = draw(hnp.broadcastable_shapes(target, min_dims=0, max_dims=len(target) + 1,
                                               min_side=0))
    if len(shape) > len(target):
        shape = (1,) + shape[1:]            # NumPy drops extra leading unit axes only
    dtype = draw(st.sampled_from(_DTYPES))
    raw = draw(hnp.arrays(np.int64, shape, elements=st.integers(-80, 80)))
    return (raw / 4).astype(dtype)


def _assign_both(a, key, value):
    """Assign in NumPy and in lazyarray; both must agree, also on errors."""
    x = la.asarray(a)
    before = x.copy()                       # a copy taken before: keeps the old values
    view = x[...]                           # a view: sees the new values
    expected = a.copy()
    try:
        expected[key] = value
    except (IndexError, ValueError) as e:
        with pytest.raises(type(e)):
            x[key] = value
        return None
    x[key] = value
    assert x.shape == a.shape and x.dtype == a.dtype
    np.testing.assert_array_equal(x.get(), expected)
    np.testing.assert_array_equal(before.get(), a)
    np.testing.assert_array_equal(view.get(), expected)
    return x


@_SETTINGS
@given(st.sampled_from([np.float32, np.int32, np.bool_]), _SHAPES, st.data())
def test_basic_keys_match_numpy(dtype, shape, data):
    a = _base(shape, dtype)
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    value = data.draw(_values(a[key].shape))
    _assign_both(a, key, value)


@_SETTINGS
@given(_SHAPES, st.data())
def test_mask_keys_match_numpy(shape, data):
    a = _base(shape, np.float32)
    k = data.draw(st.integers(1, len(shape)))
    mask = data.draw(hnp.arrays(np.bool_, shape[:k]))
    count = int(mask.sum())
    rest = shape[k:]
    value = data.draw(st.one_of(
        _values(rest),                                  # elementwise: no count needed
        hnp.arrays(np.int32, (count,) + rest, elements=st.integers(-9, 9))))
    lazy_mask = data.draw(st.booleans())
    x = la.asarray(a)
    x[la.asarray(mask) if lazy_mask else mask] = value
    expected = a.copy()
    expected[mask] = value
    np.testing.assert_array_equal(x.get(), expected)


@_SETTINGS
@given(_SHAPES, st.data())
def test_integer_array_keys_match_numpy(shape, data):
    """Repeated indices: the last write wins, as in NumPy; slices and integers
    mixed in; out-of-bounds indices raise IndexError in both."""
    a = _base(shape, np.float64)
    key = []
    for n in shape:
        kind = data.draw(st.sampled_from(["array", "slice", "int"]))
        if kind == "slice":
            key.append(slice(data.draw(st.integers(-n - 1, n)), None,
                             data.draw(st.sampled_from([1, 2, -1]))))
        elif kind == "int":
            key.append(data.draw(st.integers(-n - 1, n)))
        else:
            key.append(data.draw(hnp.arrays(np.int64, data.draw(st.sampled_from([(3,), (1,)])),
                                            elements=st.integers(-n - 1, n))))
    if not any(isinstance(k, np.ndarray) for k in key):
        key[0] = np.array([0, 0, -1])
    key = tuple(key)
    try:
        target = a[key].shape
    except IndexError:
        target = ()
    value = data.draw(_values(target))
    _assign_both(a, key, value)


def test_assignments_in_place_of_numpy_idioms(queue):
    a = np.zeros((4, 5), np.float32)
    x = la.asarray(a)
    x[1:3, ::2] = np.arange(3)
    x[-1] = 7.9                        # float32
    x[..., 0] = la.asarray(np.array([1, 2, 3, 4]))
    x[None, 0, 1:4] = [[5, 6, 7]]
    x[x > 6] = -1.0
    x[[0, 0, 3], [4, 4, 2]] = [10, 11, 12]          # last write wins
    expected = a.copy()
    expected[1:3, ::2] = np.arange(3)
    expected[-1] = 7.9
    expected[..., 0] = [1, 2, 3, 4]
    expected[None, 0, 1:4] = [[5, 6, 7]]
    expected[expected > 6] = -1.0
    expected[[0, 0, 3], [4, 4, 2]] = [10, 11, 12]
    np.testing.assert_array_equal(x.get(), expected)
    v = la.asarray(np.zeros((7, 3)))
    v[5:0:-2, ::-1] = np.arange(9).reshape(3, 3)    # reversed and strided
    v[-1:-3:-1, 0] = [7, 8]
    w = np.zeros((7, 3))
    w[5:0:-2, ::-1] = np.arange(9).reshape(3, 3)
    w[-1:-3:-1, 0] = [7, 8]
    np.testing.assert_array_equal(v.get(), w)
    i = la.asarray(np.zeros(4, np.int16))
    i[1:] = np.array([2.9, -2.9, 1e2])             # truncated like NumPy
    np.testing.assert_array_equal(i.get(), [0, 2, -2, 100])


def test_errors_match_numpy(queue):
    x = la.asarray(np.zeros((3, 4)))
    with pytest.raises(la.ShapeError, match=r"from shape \(2, 4\) into shape \(3, 4\)"):
        x[:] = np.ones((2, 4))
    with pytest.raises(ValueError, match=r"from shape \(3,\) into shape \(4,\)"):
        x[1] = np.ones(3)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        x[3] = 1
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 5]] = 1
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0] = 1
    with pytest.raises(IndexError, match="does not match"):
        x[np.array([True, False])] = 1
    with pytest.raises(OverflowError):
        la.asarray(np.zeros(2, np.int8))[0] = 300
    np.testing.assert_array_equal(x.get(), 0)       # failed assignments change nothing


def _heat(u, c, steps):
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + c * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:]
                                             + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
    return u


def test_heat_equation_updates_fuse(queue):
    a = np.random.default_rng(0).random((12, 12)).astype(np.float32)
    u = la.asarray(a)
    with counting() as ran:
        one = _heat(la.asarray(a), np.float32(0.1), 1).get()
    assert ran.launches == 1          # region, borders and stencil: one kernel
    with counting() as ran:
        result = _heat(u, np.float32(0.1), 10).get()
        # each step reads the last one at five offsets, so each is stored once
    assert ran.launches <= 10
    np.testing.assert_allclose(one, _heat(a.copy(), np.float32(0.1), 1), rtol=1e-6)
    np.testing.assert_allclose(result, _heat(a.copy(), np.float32(0.1), 10), rtol=1e-5)


def test_update_fuses_with_its_reader(queue):
    x = la.asarray(np.arange(10.0))
    x[2:5] = 0
    x[::3] = x[::3] + 1                              # strided region
    y = (x * 2).sum()
    with counting() as ran:
        got = float(y)
    assert ran.launches == 1
    a = np.arange(10.0)
    a[2:5] = 0
    a[::3] += 1
    assert got == (a * 2).sum()


def test_setitem_inside_jit(queue):
    @la.jit
    def step(u, c):
        u[1:-1] = u[1:-1] + c * (u[2:] - 2 * u[1:-1] + u[:-2])
        u[0] = u[-1]
        u[u > 4] = 4                                 # mask, scalar: no count needed
        return u

    def reference(a, c):
        a = a.copy()
        a[1:-1] = a[1:-1] + c * (a[2:] - 2 * a[1:-1] + a[:-2])
        a[0] = a[-1]
        a[a > 4] = 4
        return a

    a = np.linspace(0, 6, 9)
    for shift in (0.0, 0.5):
        np.testing.assert_allclose(step(la.asarray(a + shift), 0.25).get(),
                                   reference(a + shift, 0.25))
    assert step.trace_count == 1

    @la.jit
    def scatter(u, i):
        u[i] = 1
        return u

    with pytest.raises(la.LazyArrayError, match="la.jit"):
        scatter(la.asarray(a), la.asarray(np.array([1, 2])))

    @la.jit
    def masked_by_count(u):
        u[u > 1] = la.asarray(np.arange(7.0))
        return u

    with pytest.raises(la.LazyArrayError, match="la.jit"):
        masked_by_count(la.asarray(a))


@pytest.mark.parametrize("shape", [(3, 4), (100000, 4)])
def test_put_along_axis_broadcasts_the_index_over_the_other_axes(shape):
    # (the other axes ran over the index's extents: one row was written)
    rows = shape[0]
    cases = [(np.array([[0]]), 5.0), (np.array([[2]]), np.arange(rows, dtype=float)[:, None]),
             (np.arange(rows)[:, None] % 4, 7.0)]
    with la.tier("device"):
        for index, values in cases:
            expected = np.zeros(shape)
            np.put_along_axis(expected, index, values, axis=1)
            got = la.zeros(shape)
            la.put_along_axis(got, la.asarray(index), values, axis=1)
            np.testing.assert_array_equal(np.asarray(got), expected)
