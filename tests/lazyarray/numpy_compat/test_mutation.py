"""NumPy's mutation semantics: in-place operators and ``x[key] = v`` change
the array handle (its aliases see it), views (basic indexing, transposes,
contiguous reshapes, squeeze/expand_dims, ``.real``) read and write their
base's current value; copies don't. Differential tests against NumPy."""

import operator
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la
from lazyarray.handle import DEPTH_LIMIT, HANDED_OVER
from lazyarray.values import on_host
from tests.helpers import error_match, numpy_computes

_SETTINGS = settings(max_examples=25)

#: Python's in-place operators (``x += y`` is ``x = operator.iadd(x, y)``)
_OPS = [operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv,
        operator.imod, operator.ipow, operator.iand, operator.ior, operator.ixor,
        operator.ilshift, operator.irshift]
_DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint32, np.float32, np.float64,
           np.complex64, np.bool_]


def _outcome(fn):
    """``('ok', value)`` or ``('error', exception type)``."""
    try:
        with np.errstate(all="ignore"):
            return "ok", fn()
    except (TypeError, ValueError, OverflowError, ZeroDivisionError) as e:
        return "error", type(e)


def _same(lazy, expected) -> None:
    assert lazy.shape == expected.shape and lazy.dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(lazy), expected)


def _data(rng, shape, dtype) -> np.ndarray:
    """Small values of *dtype* (an array, also for shape ``()``)."""
    if np.dtype(dtype).kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    values = np.asarray(rng.integers(0, 7, shape))
    if np.dtype(dtype).kind == "c":
        return (values + 1j * rng.integers(-3, 4, shape)).astype(dtype)
    return values.astype(dtype)


# {{{ in-place operators

@_SETTINGS
@given(st.sampled_from(_DTYPES), st.data())
def test_in_place_operators_match_numpy_and_keep_the_handle(queue, dtype, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    shape = data.draw(st.sampled_from([(), (0,), (5,), (2, 3)]))
    a = _data(rng, shape, dtype)
    x = la.asarray(a)
    alias = x
    for _ in range(3):
        op = data.draw(st.sampled_from(_OPS))
        kind = data.draw(st.sampled_from(["int", "float", "array"]))
        if kind == "int":
            other = data.draw(st.integers(1, 3))
        elif kind == "float":
            other = data.draw(st.sampled_from([0.5, 2.0]))
        else:
            other_dtype = data.draw(st.sampled_from(_DTYPES))
            other = _data(rng, shape[-1:] if shape else (), other_dtype)
            if np.dtype(other_dtype).kind in "iu":
                other = other % 3 + 1          # positive: exponents and shifts
        expected = _outcome(partial(op, a.copy(), other))
        before = x.copy()
        got = _outcome(partial(op, x, la.asarray(other) if kind == "array" else other))
        if expected[0] == "error":
            assert got[0] == "error", (op, other, a.dtype)
            _same(x, a)                         # nothing changed
            continue
        assert got[0] == "ok", (op, other, a.dtype, got)
        assert got[1] is x                      # the same handle, updated
        if a.dtype.kind in "fc" and op in (operator.ipow, operator.itruediv,
                                           operator.ifloordiv, operator.imod):
            np.testing.assert_allclose(x.get(), expected[1], rtol=1e-5)
            a = x.get()
        else:
            a = expected[1]
            _same(x, a)
        assert alias is x
        assert before.get().shape == a.shape    # (the copy: still its old value)


def test_in_place_operators_keep_the_dtype_and_cast_as_numpy(queue):
    f = la.asarray(np.ones(3, np.float32))
    f += la.asarray(np.full(3, 0.1))                    # float64 cast back to float32
    _same(f, np.ones(3, np.float32) + np.float32(0.1))
    i = la.asarray(np.arange(3, dtype=np.int32))
    i += la.asarray(np.arange(3, dtype=np.int64))       # same kind
    _same(i, np.arange(3, dtype=np.int32) * 2)
    for target, other in [(np.arange(3), 1.5), (np.arange(3), np.ones(3)),
                          (np.ones(3, bool), 1), (np.ones(3, np.float64), 1j),
                          (np.ones(3, np.uint8), np.ones(3, np.int8))]:
        with pytest.raises(TypeError) as expected:
            t = target.copy()
            t += other
        lazy = la.asarray(target)
        with pytest.raises(type(expected.value)) as got:
            lazy += la.asarray(other) if isinstance(other, np.ndarray) else other
        assert str(got.value) == str(expected.value)
        _same(lazy, target)


def test_int_true_division_in_place_refuses_as_numpy(queue):
    i = la.asarray(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="same_kind"):
        i /= 2
    _same(i, np.arange(3, dtype=np.int32))


def test_out_of_range_python_ints_refuse_as_numpy(queue):
    small = la.asarray(np.zeros(3, np.int8))
    with pytest.raises(OverflowError):
        small += 1000
    _same(small, np.zeros(3, np.int8))


def test_in_place_operators_refuse_a_broadcast_that_grows_the_array(queue):
    x = la.asarray(np.ones(3))
    with pytest.raises(ValueError, match="non-broadcastable output"):
        x += la.asarray(np.ones((2, 3)))
    _same(x, np.ones(3))


def test_ufunc_out_writes_into_the_array(queue):
    host = np.arange(5.0)
    x = la.asarray(host)
    alias = x
    assert np.add(x, 1, out=x) is x
    np.sin(x[:3], out=x[2:])                # overlapping: as if the input were copied
    np.multiply(2, 3, out=(x[:1],))
    expected = host.copy()
    np.add(expected, 1, out=expected)
    np.sin(expected[:3], out=expected[2:])
    np.multiply(2, 3, out=(expected[:1],))
    np.testing.assert_allclose(alias.get(), expected, rtol=1e-15)
    ints = la.asarray(np.arange(3))
    with pytest.raises(TypeError, match="same_kind"):
        np.sqrt(ints, out=ints)
    broadcast = error_match("non-broadcastable", lambda: np.sin(expected, out=expected[1:]), x)
    with pytest.raises(ValueError, match=broadcast):
        np.sin(x, out=x[1:])
    _same(ints, np.arange(3))


def test_in_place_matmul(queue):
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(9.0).reshape(3, 3)
    x = la.asarray(a)
    alias = x
    x @= la.asarray(b)
    expected = a.copy()
    expected @= b
    np.testing.assert_allclose(alias.get(), expected)
    with pytest.raises(ValueError):
        x @= la.asarray(np.ones((3, 2)))

# }}}


# {{{ views against NumPy views

def _basic_key(draw, shape):
    key = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "slice", "int", "all"]))
        if kind == "int" and n:
            key.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            key.append(slice(draw(st.integers(-n - 1, n + 1)), draw(st.integers(-n - 1, n + 1)),
                             draw(st.sampled_from([1, 1, 2, -1, -2]))))
        else:
            key.append(slice(None))
    if draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), Ellipsis)
    return tuple(key)


def _derive(draw, lazy, host):
    """A random view (or copy, as NumPy decides) of a pair of arrays."""
    kind = draw(st.sampled_from(["index", "index", "T", "reshape", "ravel", "squeeze",
                                 "expand", "swap", "copy", "flip"]))
    if kind == "index":
        key = _basic_key(draw, host.shape)
        return lazy[key], host[key]
    if kind == "T":
        return lazy.T, host.T
    if kind == "reshape" and host.ndim:
        return lazy.reshape(-1), host.reshape(-1)
    if kind == "ravel":
        return lazy.ravel(), host.ravel()
    if kind == "squeeze":
        return np.squeeze(lazy), np.squeeze(host)
    if kind == "expand":
        return np.expand_dims(lazy, 0), np.expand_dims(host, 0)
    if kind == "swap" and host.ndim >= 2:
        return lazy.swapaxes(0, -1), host.swapaxes(0, -1)
    if kind == "flip":
        return np.flip(lazy), np.flip(host)
    return lazy.copy(), host.copy()


def _mutate(draw, lazy, host):
    kind = draw(st.sampled_from(["setitem", "add", "mask", "all"]))
    value = draw(st.integers(-9, 9))
    if kind == "setitem":
        key = _basic_key(draw, host.shape)
        host[key] = value
        lazy[key] = value
    elif kind == "add":
        host += value
        lazy += value
    elif kind == "mask":
        mask = (host % 3) == 1
        host[mask] = value
        lazy[la.asarray(mask)] = value
    else:
        host[...] = value
        lazy[...] = value


@settings(max_examples=40)
@given(st.sampled_from([(4, 5), (3, 1, 4), (6,), (), (0, 3)]),
       st.sampled_from([np.int32, np.float64]), st.data())
def test_views_of_views_follow_numpy(queue, shape, dtype, data):
    """Random views of views, mutated through random handles: every handle
    equals its NumPy counterpart after every step."""
    host = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    pairs = [(la.asarray(host), host)]
    for _ in range(data.draw(st.integers(2, 5))):
        lazy, numpy_ = pairs[data.draw(st.integers(0, len(pairs) - 1))]
        if data.draw(st.booleans()):
            pairs.append(_derive(data.draw, lazy, numpy_))
        else:
            _mutate(data.draw, lazy, numpy_)
    for lazy, numpy_ in pairs:
        _same(lazy, np.asarray(numpy_))


def test_a_view_sees_later_writes_to_its_base_and_back(queue):
    host = np.arange(10.0)
    x = la.asarray(host)
    v = x[1:]
    x[2] = 5
    assert v[1].item() == 5
    v[0] = -1
    assert x[1].item() == -1
    x += 1
    np.testing.assert_array_equal(v.get(), x.get()[1:])
    w = v[::2]
    w *= 10
    expected = host.copy()
    expected[2] = 5
    expected[1] = -1
    expected += 1
    expected[1::2] *= 10
    _same(x, expected)
    _same(v, expected[1:])


def test_augmented_assignment_through_keys(queue):
    host = np.arange(12).reshape(3, 4)
    x = la.asarray(host)
    x[1:, ::2] += 100
    x[0] -= 1
    x[2, 3] *= 2                                # a single element: a copy, written back
    x[[0, 0, 2]] += 7                           # NumPy: a repeated index adds once
    x[:, 1:3] //= 2
    expected = host.copy()
    expected[1:, ::2] += 100
    expected[0] -= 1
    expected[2, 3] *= 2
    expected[[0, 0, 2]] += 7
    expected[:, 1:3] //= 2
    _same(x, expected)


def test_transposed_and_reshaped_views_write_through(queue):
    host = np.arange(6.0).reshape(2, 3)
    x = la.asarray(host)
    x.T[0] = -1
    x.mT[1, 1] = 50
    x.reshape(3, 2)[2] = 7
    x.ravel()[0] = 9
    np.swapaxes(x, 0, 1)[2, 0] = 3
    np.transpose(x)[0, 1] += 1
    expected = host.copy()
    expected.T[0] = -1
    expected.mT[1, 1] = 50
    expected.reshape(3, 2)[2] = 7
    expected.ravel()[0] = 9
    np.swapaxes(expected, 0, 1)[2, 0] = 3
    np.transpose(expected)[0, 1] += 1
    _same(x, expected)


def test_reshape_and_ravel_copy_where_numpy_copies(queue):
    host = np.arange(12).reshape(3, 4)
    x = la.asarray(host)
    flat = x.T.ravel()                  # not contiguous: a copy
    flat[0] = 100
    split = x[:, :2].reshape(3, 2, 1)   # splits no axis: NumPy makes a view
    split[0, 1, 0] = -5
    flattened = x.flatten()             # always a copy
    flattened[1] = 42
    expected = host.copy()
    expected.T.ravel()[0] = 100
    expected[:, :2].reshape(3, 2, 1)[0, 1, 0] = -5
    expected.flatten()[1] = 42
    _same(x, expected)
    with pytest.raises(ValueError):
        x.T.reshape(-1, copy=False)


def test_aliases_copies_and_asarray(queue):
    host = np.arange(4)
    x = la.asarray(host)
    y = x
    same = la.asarray(x)
    c1, c2, c3 = x.copy(), la.copy(x), np.copy(x)
    c4 = la.asarray(x, copy=True)
    x += 1
    for alias in (y, same):
        _same(alias, host + 1)
    for c in (c1, c2, c3, c4):
        _same(c, host)
    assert x.astype(x.dtype, copy=False) is x
    converted = x.astype(np.float64)
    x[0] = 99
    _same(converted, (host + 1).astype(np.float64))


@pytest.mark.parametrize("n", [10, HANDED_OVER + 3])
@pytest.mark.parametrize("read", [np.asarray, la.LazyArray.get, np.array])
def test_a_value_read_to_the_host_is_the_callers_own(queue, n, read):
    host = np.linspace(0.0, 1.0, n)
    x = la.asarray(host)
    with la.tier("device"):
        y = x * 2 + 1
        first = read(y)
        first[0] = -7.0                 # the caller's array: y keeps its value
        second = read(y)
        second[-1] = -8.0
        assert np.shares_memory(first, second) is False
        np.testing.assert_array_equal(read(y), host * 2 + 1)
        np.testing.assert_array_equal(y + 0, host * 2 + 1)
        # (a large value is handed over as fetched, not also kept on the host)
        assert (on_host(y.node) is None) == (n > HANDED_OVER)


def test_iterating_gives_row_views(queue):
    host = np.arange(6).reshape(2, 3)
    x = la.asarray(host)
    for row in x:
        row[1:] = 0
    expected = host.copy()
    for row in expected:
        row[1:] = 0
    _same(x, expected)


def test_real_part_views(queue):
    real = la.asarray(np.arange(3.0))
    real.real[1] = 7            # of a real array: the array itself
    _same(real, np.array([0.0, 7.0, 2.0]))
    z = la.asarray(np.array([1 + 2j, 3 - 1j]))
    r = z.real
    z *= 2
    _same(r, np.array([2.0, 6.0]))
    _same(z.imag, np.array([4.0, -2.0]))
    if numpy_computes(z):
        r[0] = 1                # NumPy's real part of a complex array: a view
        _same(z, np.array([1 + 4j, 6 - 2j]))
        with pytest.raises(ValueError, match="read-only"):
            real.imag[0] = 1
    else:
        with pytest.raises(la.ViewWriteError, match="real part"):
            r[0] = 1
        with pytest.raises(la.ViewWriteError, match="read-only"):
            real.imag[0] = 1
        _same(z, np.array([2 + 4j, 6 - 2j]))
    _same(real, np.array([0.0, 7.0, 2.0]))


def test_zero_d_and_empty_arrays(queue):
    s = la.asarray(np.float32(2.5))
    alias = s
    s += 1
    s[...] = s * 2
    assert alias.item() == 7.0 and alias.dtype == np.float32
    element = la.asarray(np.arange(4))[2]       # an element: a copy, as NumPy's scalar
    element += 1
    empty = la.asarray(np.zeros((0, 3)))
    view = empty[:, 1:]
    view += 1
    empty[...] = 5
    _same(empty, np.zeros((0, 3)))
    _same(view, np.zeros((0, 2)))
    assert element.item() == 3

# }}}


def _life_numpy(Z, steps):
    Z = Z.copy()
    for _ in range(steps):
        N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] + Z[1:-1, 0:-2] + Z[1:-1, 2:]
             + Z[2:, 0:-2] + Z[2:, 1:-1] + Z[2:, 2:])
        birth = (N == 3) & (Z[1:-1, 1:-1] == 0)
        survive = ((N == 2) | (N == 3)) & (Z[1:-1, 1:-1] == 1)
        Z[...] = 0
        Z[1:-1, 1:-1][birth | survive] = 1
    return Z


def test_game_of_life_writes_through_a_view(queue):
    Z0 = (np.random.default_rng(3).random((12, 14)) < 0.4).astype(np.int32)
    Z = la.asarray(Z0)
    alias = Z
    for _ in range(6):
        N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] + Z[1:-1, 0:-2] + Z[1:-1, 2:]
             + Z[2:, 0:-2] + Z[2:, 1:-1] + Z[2:, 2:])
        birth = (N == 3) & (Z[1:-1, 1:-1] == 0)
        survive = ((N == 2) | (N == 3)) & (Z[1:-1, 1:-1] == 1)
        Z[...] = 0
        Z[1:-1, 1:-1][birth | survive] = 1
    _same(alias, _life_numpy(Z0, 6))


def test_long_loops_of_writes_keep_the_graph_bounded(queue):
    host = np.zeros((4, 4))
    x = la.asarray(host)
    v = x[1:3, ::2]
    steps = DEPTH_LIMIT + DEPTH_LIMIT // 2
    for k in range(steps):
        x += 1
        v -= 0.5
        x[0, 1] = k
        assert x.node.depth <= DEPTH_LIMIT + 8 and v.node.depth <= DEPTH_LIMIT + 8
    for k in range(steps):
        host += 1
        host[1:3, ::2] -= 0.5
        host[0, 1] = k
    _same(x, host)
    _same(v, host[1:3, ::2])


def test_writes_inside_jit(queue):
    @la.jit
    def stepped(x):
        y = x.copy()
        y[1:] += x[:-1]
        y.T[0] *= 2
        return y

    for seed in range(2):
        a = np.random.default_rng(seed).random(5)
        expected = a.copy()
        expected[1:] += a[:-1]
        expected.T[0] *= 2
        np.testing.assert_allclose(stepped(a).get(), expected)
    assert stepped.trace_count == 1


@pytest.mark.parametrize("key", [(None,), (1, None), (None, slice(1, 3)), (slice(1, 3), None),
                                 (None, 1, None), (Ellipsis, None)])
def test_views_with_new_axes_read_and_write_through(queue, key):
    h = np.arange(12, dtype=np.int32).reshape(3, 4) if key != (None,) else np.array(5, np.int32)
    x = la.asarray(h)
    x.compute()
    view, host_view = x[key], h[key]
    assert view.shape == host_view.shape
    np.testing.assert_array_equal(view.get(), host_view)
    view += 7
    host_view += 7
    np.testing.assert_array_equal(x.get(), h)
    np.testing.assert_array_equal(view.get(), host_view)
