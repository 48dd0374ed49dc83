"""What Array API clients (scikit-learn, xarray, einops) need of lazyarray,
against NumPy: sorted set functions, ``x == None``, window views,
namespaces that export only their API, a clear error for an array the device
has no room for, and einops' operations on lazy arrays."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import lazyarray as la

FLOATS = np.array([[3.0, np.nan, 1.0, 3.0], [-0.0, 0.0, np.nan, 1.0], [2.5, 1.0, -4.0, 2.5]])
INTS = np.array([7, -2, 7, 0, 3, -2, 7], dtype=np.int32)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", la.LazyArrayHostFallbackWarning)
        yield


def _equal(got, expected):
    value = got.get()
    assert value.dtype == expected.dtype and value.shape == expected.shape
    np.testing.assert_array_equal(value, expected)


# {{{ set functions

def _expected_all(a):
    """NumPy's unique_all, sorted (NumPy 2.3+ may return any order)."""
    values, first, inverse, counts = np.unique(
        a, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    return values, first, inverse.reshape(a.shape), counts


@pytest.mark.parametrize("a", [FLOATS, INTS, INTS.astype(np.uint8), np.array([True, False, True]),
                               FLOATS.astype(np.complex64) * 1j, np.float64(2.5),
                               np.zeros((0, 3)), np.array([np.nan, np.nan, 1.0])])
def test_unique_functions_are_sorted_and_consistent(a):
    x = la.asarray(a)
    values, first, inverse, counts = _expected_all(a)
    _equal(la.unique_values(x), values)
    result = la.unique_counts(x)
    _equal(result.values, values)
    _equal(result.counts, counts)
    result = la.unique_inverse(x)
    _equal(result.values, values)
    _equal(result.inverse_indices, inverse)
    result = la.unique_all(x)
    for got, expected in zip(result, (values, first, inverse, counts)):
        _equal(got, expected)
    # the values are sorted, and they index back to the array
    assert result.values.shape == (len(values),)
    if a.size:
        np.testing.assert_array_equal(result.values.get()[result.inverse_indices.get()], a)
    # np.unique_*(lazy) is lazyarray's, sorted too
    _equal(np.unique_values(x), values)


def test_unique_keeps_numpy_options():
    x = la.asarray(FLOATS)
    _equal(la.unique(x), np.unique(FLOATS))
    _equal(la.unique(x, equal_nan=False), np.unique(FLOATS, equal_nan=False))
    for got, expected in zip(la.unique(x, return_index=True, return_inverse=True,
                                       return_counts=True),
                             np.unique(FLOATS, return_index=True, return_inverse=True,
                                       return_counts=True)):
        _equal(got, expected)
    rows = np.array([[1, 2], [0, 5], [1, 2]])
    _equal(la.unique(la.asarray(rows), axis=0), np.unique(rows, axis=0))
    with pytest.raises(la.LazyArrayError, match="la.jit"):
        la.jit(lambda v: la.unique_values(v))(INTS)

# }}}


# {{{ comparisons with None

@pytest.mark.parametrize("a", [FLOATS, INTS, np.float32(1.5), np.zeros((0, 2), bool)])
def test_comparison_with_none_as_numpy(a):
    x = la.asarray(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _equal(x == None, np.asarray(a == None))            # noqa: E711 - the case tested
        _equal(x != None, np.asarray(a != None))            # noqa: E711
    assert (x == None).dtype == np.bool_                    # noqa: E711
    _equal(np.equal(x, None), np.equal(a, None))
    _equal(np.not_equal(None, x), np.not_equal(None, a))

# }}}


# {{{ stride tricks

@pytest.mark.parametrize("window,axis", [(3, -1), (2, 0), ((2, 3), None), ((2, 2), (1, 1)),
                                         (12, 1), ((1,), (0,)), (0, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.int16, np.bool_])
def test_sliding_window_view_matches_numpy(window, axis, dtype):
    a = (np.arange(4 * 13).reshape(4, 13) % 7).astype(dtype)
    x = la.asarray(a)
    expected = np.lib.stride_tricks.sliding_window_view(a, window, axis)
    _equal(la.lib.stride_tricks.sliding_window_view(x, window, axis), expected)
    _equal(np.lib.stride_tricks.sliding_window_view(x, window, axis), expected)


def test_sliding_window_view_errors_and_rolling_use():
    x = la.asarray(np.arange(5.0))
    swv = la.lib.stride_tricks.sliding_window_view
    with pytest.raises(ValueError, match="larger"):
        swv(x, 6)
    with pytest.raises(ValueError):
        swv(x, (2, 2))
    with pytest.raises(ValueError, match="writes"):
        swv(x, 2, writeable=True)
    # xarray's rolling mean: the mean over the window axis
    a = np.arange(12.0).reshape(3, 4) ** 2
    expected = np.lib.stride_tricks.sliding_window_view(a, 2, axis=1).mean(-1)
    np.testing.assert_allclose(swv(la.asarray(a), 2, axis=1).mean(-1).get(), expected)
    _equal(swv(la.asarray(np.float64(3.0)), ()), np.lib.stride_tricks.sliding_window_view(
        np.float64(3.0), ()))


@pytest.mark.parametrize("shape,strides", [((3, 4), (16, 8)), ((2, 3), (0, 8)), ((), ()),
                                           ((4, 2), (8, 24)), ((0, 5), (8, 8))])
def test_as_strided_matches_numpy_inside_the_array(shape, strides):
    a = np.arange(24.0).reshape(4, 6)
    expected = np.lib.stride_tricks.as_strided(a, shape, strides)
    _equal(la.lib.stride_tricks.as_strided(la.asarray(a), shape, strides), expected)


def test_as_strided_refuses_what_it_cannot_show():
    x = la.asarray(np.arange(6, dtype=np.int32))
    with pytest.raises(IndexError, match="inside the array"):
        la.lib.stride_tricks.as_strided(x, (10,), (4,))
    with pytest.raises(ValueError, match="item size"):
        la.lib.stride_tricks.as_strided(x, (2,), (6,))
    _equal(la.lib.stride_tricks.as_strided(x), np.arange(6, dtype=np.int32))

# }}}


# {{{ namespaces

@pytest.mark.parametrize("name", ["linalg", "fft", "lib", "lib.stride_tricks"])
def test_submodules_export_only_their_api(name):
    namespace = la
    for part in name.split("."):
        namespace = getattr(namespace, part)
    for private in ("np", "math", "threading", "operator", "annotations"):
        assert private not in dir(namespace)
    assert not hasattr(namespace, "np") and not hasattr(namespace, "math")
    assert sorted(dir(namespace)) == sorted(namespace.__all__)
    assert all(callable(getattr(namespace, n)) or n == "stride_tricks"
               for n in namespace.__all__)

# }}}


# {{{ out of device memory

def test_an_array_too_large_for_the_device_is_a_clear_memory_error():
    too_large = la.zeros(10**13)                   # lazy: nothing allocated yet
    with pytest.raises(MemoryError) as caught:
        too_large.get()
    error = caught.value
    assert isinstance(error, la.DeviceMemoryError) and isinstance(error, la.LazyArrayError)
    message = str(error)
    assert "80000000000000 bytes" in message and "max_mem_alloc_size" in message
    assert "global_mem_size" in message and __file__ in message
    frames = []
    tb = error.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert len([f for f in frames if "lazyarray" in f and "tests" not in f]) <= 3
    # a reduction of the same expression stores no such array
    assert float(la.zeros(10**9, dtype=np.float32).sum()) == 0.0

# }}}


# {{{ dtypes the device does not compute

@pytest.mark.parametrize("a,advice", [
    (np.array(["a", "bc"]), "keep it in NumPy"), (np.array([None, 1], dtype=object), "NumPy"),
    (np.zeros(2, dtype=[("a", "f8"), ("b", "i4")]), "NumPy"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), "astype"),
    (np.ones(2, np.float16), "float32")])
def test_unsupported_dtypes_are_named_at_the_users_line(a, advice):
    with pytest.raises(la.DTypeError) as caught:
        la.asarray(a)
    message = str(caught.value)
    assert str(a.dtype) in message and advice in message and __file__ in message


@pytest.mark.skipif(np.dtype(np.longdouble).itemsize <= 8, reason="long double is float64 here")
def test_long_doubles_are_held_and_computed_by_numpy():
    a = np.linspace(0, 1, 5, dtype=np.longdouble) / 3
    x = la.asarray(a)
    _equal(x, a)
    _equal(x * 2 + 1, a * 2 + 1)                      # operators: NumPy on the host
    _equal(np.sin(x), np.sin(a))
    _equal(np.sum(x), np.asarray(np.sum(a)))           # NumPy's functions too
    _equal(np.cumsum(x), np.cumsum(a))
    with pytest.raises(la.DTypeError, match="long double") as caught:
        x.sum()                                        # lazyarray's own: a clear error
    assert __file__ in str(caught.value) and "x.get()" in str(caught.value)
    with pytest.raises(la.DTypeError, match="long double"):
        la.ones(3).astype(np.longdouble)

# }}}


# {{{ einops

def test_einops_operations_match_numpy():
    import einops
    a = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    x = la.asarray(a)
    for pattern, kwargs in [("a b c -> c (a b)", {}), ("a b (c d) -> (a c) b d", dict(d=2)),
                            ("a b c -> b a c", {})]:
        got = einops.rearrange(x, pattern, **kwargs)
        assert isinstance(got, la.LazyArray)
        _equal(got, einops.rearrange(a, pattern, **kwargs))
    for reduction in ("sum", "mean", "max", "min", "prod"):
        _equal(einops.reduce(x, "a b c -> a c", reduction), einops.reduce(a, "a b c -> a c",
                                                                           reduction))
    _equal(einops.reduce(x, "a b (c d) -> a d", "max", d=2),
           einops.reduce(a, "a b (c d) -> a d", "max", d=2))
    _equal(einops.repeat(x, "a b c -> a r b c s", r=2, s=3),
           einops.repeat(a, "a b c -> a r b c s", r=2, s=3))
    _equal(einops.repeat(x[0, 0], "c -> (c r)", r=2), einops.repeat(a[0, 0], "c -> (c r)", r=2))
    _equal(einops.rearrange([x[0], x[1]], "n b c -> b n c"),
           einops.rearrange([a[0], a[1]], "n b c -> b n c"))
    m = np.arange(12, dtype=np.float64).reshape(3, 4)
    got = einops.einsum(la.asarray(m), la.asarray(m), "i j, k j -> i k")
    np.testing.assert_allclose(got.get(), einops.einsum(m, m, "i j, k j -> i k"))
    with pytest.raises(NotImplementedError, match="non-floating"):      # (as for NumPy)
        einops.reduce(la.asarray(np.arange(4)), "a -> ", "mean")


@pytest.mark.parametrize("first", ["lazyarray", "einops"])
def test_einops_finds_lazyarray_whichever_is_imported_first(first):
    second = "einops" if first == "lazyarray" else "lazyarray"
    program = (f"import {first}, {second}, sys\n"
               "import lazyarray as la, einops, numpy as np\n"
               "x = la.asarray(np.arange(6.0).reshape(2, 3))\n"
               "y = einops.rearrange(x, 'a b -> b a')\n"
               "assert isinstance(y, la.LazyArray), type(y)\n"
               "print(y.get().tolist())\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]"


def test_lazyarray_does_not_import_einops():
    program = "import sys, lazyarray\nprint('einops' in sys.modules)\n"
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"

# }}}
