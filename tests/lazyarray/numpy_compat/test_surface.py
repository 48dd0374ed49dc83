"""The NumPy that scripts reach for: the array object's methods, the
namespace's creation functions and aliases, ufunc objects, and the host
fallback for what lazyarray does not compute itself; every result compared
with NumPy's. On the host tier NumPy computes: its answers, no fallback."""

from __future__ import annotations

import re as regex

import numpy as np
import pytest

import lazyarray as la
from tests.helpers import counting, host_fallback, numpy_computes


@pytest.mark.parametrize("obj, kwargs", [
    ([1, 2], {}),
    ([[1.0, 2.0], [3.0, 4.0]], {"dtype": np.float32}),
    ((1, 2.5), {}),
    (3, {"ndmin": 2}),
    ([True, False], {}),
    ([], {}),
    (np.arange(6).reshape(2, 3), {"dtype": np.int16}),
])
def test_array_creates_what_numpy_creates(obj, kwargs):
    got = la.array(obj, **kwargs)
    expected = np.array(obj, **kwargs)
    assert isinstance(got, la.LazyArray)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got.get(), expected)


def test_array_of_lazy_arrays_copies_and_stacks():
    x = la.array([1.0, 2.0])
    y = la.array(x)
    y[0] = 5.0
    np.testing.assert_array_equal(x.get(), [1.0, 2.0])    # a copy, as np.array(x)
    np.testing.assert_array_equal(la.array([x, x * 2]).get(), [[1, 2], [2, 4]])
    np.testing.assert_array_equal(la.array([la.asarray(1.0), 2.0]).get(), [1.0, 2.0])
    assert la.array(x, dtype=np.int32).dtype == np.int32


# {{{ ufunc objects

def _pair():
    rng = np.random.default_rng(3)
    a = rng.integers(-5, 6, (3, 4)).astype(np.float64)
    return a, la.asarray(a)


def test_ufunc_call_with_out_positionally_and_where():
    a, x = _pair()
    z = la.asarray(a.copy())
    assert np.multiply(z, z, z) is z                      # NumPy's np.multiply(Z, Z, Z)
    np.testing.assert_array_equal(z.get(), a * a)
    out = la.asarray(np.full_like(a, -1.0))
    mask = a > 0
    la.sqrt(x, out=out, where=mask)
    expected = np.full_like(a, -1.0)
    np.sqrt(a, out=expected, where=mask)
    np.testing.assert_array_equal(out.get(), expected)
    np.testing.assert_array_equal(la.add(x, 1, dtype=np.float32).get(),
                                  np.add(a, 1, dtype=np.float32))
    assert la.add(x, 1, dtype=np.float32).dtype == np.float32
    if numpy_computes(x):       # NumPy leaves the elements where mask is False unset
        np.testing.assert_array_equal(la.sqrt(x, where=mask).get()[mask], np.sqrt(a[mask]))
    else:
        with pytest.raises(TypeError, match="where"):
            la.sqrt(x, where=mask)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "logical_and",
                                  "logical_or", "subtract"])
@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
def test_ufunc_reduce_matches_numpy(name, axis):
    a, x = _pair()
    if name == "subtract" and axis in (None, (0, 1)):
        with pytest.raises(ValueError, match="reorderable"):
            np.subtract.reduce(a, axis=axis)
        with pytest.raises(ValueError, match="reorderable"):
            la.subtract.reduce(x, axis=axis)
        return
    for keepdims in (False, True):
        got = getattr(la, name).reduce(x, axis=axis, keepdims=keepdims)
        expected = getattr(np, name).reduce(a, axis=axis, keepdims=keepdims)
        np.testing.assert_array_equal(np.asarray(got), expected)
        via_numpy = getattr(np, name).reduce(x, axis=axis, keepdims=keepdims)
        np.testing.assert_array_equal(np.asarray(via_numpy), expected)


def test_ufunc_reduce_initial_and_where():
    a, x = _pair()
    mask = np.array([True, False, True, True])
    np.testing.assert_array_equal(np.add.reduce(x, axis=0, where=mask).get(),
                                  np.add.reduce(a, axis=0, where=mask))
    np.testing.assert_array_equal(np.maximum.reduce(x, axis=1, initial=3.5).get(),
                                  np.maximum.reduce(a, axis=1, initial=3.5))
    np.testing.assert_array_equal(
        la.maximum.reduce(x, axis=0, initial=-10, where=mask).get(),
        np.maximum.reduce(a, axis=0, initial=-10, where=mask))
    with pytest.raises(ValueError, match="identity"):
        la.maximum.reduce(x, where=mask)


def test_ufunc_accumulate_outer_at_and_reduceat():
    a, x = _pair()
    np.testing.assert_array_equal(np.add.accumulate(x, axis=1).get(), np.add.accumulate(a, 1))
    np.testing.assert_array_equal(la.multiply.accumulate(x).get(), np.multiply.accumulate(a))
    with host_fallback(x, match="maximum.accumulate"):
        got = np.maximum.accumulate(x, axis=1)
    assert isinstance(got, la.LazyArray)
    np.testing.assert_array_equal(got.get(), np.maximum.accumulate(a, axis=1))
    np.testing.assert_array_equal(np.subtract.outer(x[0], x[:, 1]).get(),
                                  np.subtract.outer(a[0], a[:, 1]))
    z, expected = la.asarray(np.zeros(5)), np.zeros(5)
    with host_fallback(z, match="add.at"):
        np.add.at(z, [0, 0, 3], 2.0)
    np.add.at(expected, [0, 0, 3], 2.0)
    np.testing.assert_array_equal(z.get(), expected)
    np.testing.assert_array_equal(la.add.reduceat(x[0], [0, 2]).get(),
                                  np.add.reduceat(a[0], [0, 2]))


@pytest.mark.parametrize("name, args", [("ldexp", ([1.0, 3.0], [2, 3])),
                                        ("nextafter", ([1.0, 2.0], [2.0, 0.0])),
                                        ("gcd", ([12, 9], [8, 6])), ("frexp", ([8.0, 3.0],))])
def test_ufuncs_without_device_versions_run_on_the_host(name, args):
    lazy = [la.asarray(np.asarray(v)) for v in args]
    with host_fallback(*lazy):
        got = getattr(np, name)(*lazy)
    expected = getattr(np, name)(*(np.asarray(v) for v in args))
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,)):
        assert isinstance(g, la.LazyArray)
        np.testing.assert_array_equal(g.get(), e)

# }}}


# {{{ the host fallback

@la.tier("device")              # (the fallback is the device tier's)
def test_functions_lazyarray_lacks_run_on_the_host_with_one_warning():
    a = np.random.default_rng(4).random((5, 6))
    x = la.asarray(a)
    from lazyarray import fallback
    fallback._warned.discard("np.unwrap")
    with pytest.warns(la.LazyArrayHostFallbackWarning, match="np.unwrap") as record:
        got = np.unwrap(x * 10, axis=0)
    assert len(record) == 1 and record[0].filename == __file__     # the user's line
    assert isinstance(got, la.LazyArray)
    np.testing.assert_allclose(got.get(), np.unwrap(a * 10, axis=0))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # once per function
        np.testing.assert_allclose(la.unwrap(x * 10), np.unwrap(a * 10))
        # no lazy input: NumPy's result as a lazy array, without a warning
        made = la.fromfunction(lambda i, j: i * j, (2, 3))
    assert isinstance(made, la.LazyArray)
    np.testing.assert_array_equal(made.get(), np.fromfunction(lambda i, j: i * j, (2, 3)))


@pytest.mark.parametrize("call", [
    lambda xp, x, a: xp.copyto(x, 7.0, where=a > 5),
    lambda xp, x, a: xp.put(x, [0, 5, 5, -1], [-1.0, -2.0, -3.0]),
    lambda xp, x, a: xp.put(x, [13, -20], [4.0], mode="wrap"),
    lambda xp, x, a: xp.put_along_axis(x, np.argsort(a, axis=1)[:, :2], 99.0, axis=1),
    lambda xp, x, a: xp.putmask(x, a > 5, [1.0, 2.0]),
    lambda xp, x, a: xp.place(x, a > 5, [1.0, 2.0, 3.0]),
    lambda xp, x, a: xp.fill_diagonal(x, 0.5)])
def test_functions_writing_into_their_arguments_write_into_lazy_arrays(call):
    a = np.arange(12.0).reshape(3, 4)
    x = la.asarray(a.copy())
    alias = x
    call(np, x, a)                       # NumPy's function on the lazy array
    expected = a.copy()
    call(np, expected, a)
    np.testing.assert_array_equal(alias.get(), expected)
    y = la.asarray(a.copy())
    call(la, y, a)
    np.testing.assert_array_equal(y.get(), expected)


@pytest.mark.parametrize("values", [1.5, [1.5], np.array([1.5]), np.array(1.5), 1 + 2j,
                                    np.array([True]), np.array([2**40]), np.float32(2.5)])
@pytest.mark.parametrize("name", ["put", "putmask", "place"])
def test_writing_functions_convert_values_as_numpy(name, values):
    # put casts arrays unsafely, putmask and place safely; numbers and lists
    # are converted as NumPy converts them (a complex number into integers raises)
    def call(xp, x):
        if name == "put":
            xp.put(x, [0, 2], values)
        else:
            getattr(xp, name)(x, np.array([True, False, True, False]), values)
        return x
    try:
        expected = call(np, np.arange(4))
    except TypeError as error:
        with pytest.raises(TypeError, match=regex.escape(str(error)[:20])):
            call(la, la.asarray(np.arange(4)))
        return
    got = call(la, la.asarray(np.arange(4)))
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.get(), expected)


def test_a_host_fallback_never_writes_into_a_host_copy():
    from lazyarray.fallback import host_call
    x = la.asarray(np.arange(4.0))
    with pytest.raises(la.LazyArrayError, match="writes into its argument"):
        host_call(np.fill_diagonal, (x.reshape(2, 2), 1.0), {})
    with pytest.raises(IndexError):
        la.put(x, [7], 1.0)
    np.testing.assert_array_equal(x.get(), np.arange(4.0))


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError):
        _ = la.no_such_function
    with pytest.raises(AttributeError):
        _ = la.nditer         # NumPy's classes are not host functions

# }}}


# {{{ the array object

def test_conversions_sizes_and_formatting():
    a = np.arange(6.0).reshape(2, 3)
    x = la.asarray(a)
    assert x.tolist() == a.tolist() and x.nbytes == a.nbytes and x.itemsize == a.itemsize
    assert x.strides == a.strides and x.flags["C_CONTIGUOUS"] and x.base is None
    assert str(x) == str(a) and f"{x}" == f"{a}"
    err = la.asarray(np.float64(1.234567e-5))
    assert f"{err:.3e}" == "1.235e-05" and f"{err}" == f"{np.float64(1.234567e-5)}"
    assert 4.0 in x and 7.0 not in x
    assert x.tobytes() == a.tobytes()
    assert x.view() is not x and np.array_equal(x.view().get(), a)
    if numpy_computes(x):       # NumPy's view of the bytes as another dtype
        np.testing.assert_array_equal(x.view(np.int64).get(), a.view(np.int64))
    else:
        with pytest.raises(la.DTypeError, match="astype"):
            x.view(np.int64)


def test_pickling_keeps_the_value():
    import pickle
    x = la.asarray(np.arange(5, dtype=np.int16)) * 2
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, la.LazyArray) and y.dtype == np.int16
    np.testing.assert_array_equal(y.get(), np.arange(5, dtype=np.int16) * 2)


def test_flat_fill_sort_and_shape_assignment():
    a = np.array([[3.0, 1.0, 2.0], [9.0, 7.0, 8.0]])
    x = la.asarray(a.copy())
    assert [float(v) for v in x.flat] == a.ravel().tolist() and len(x.flat) == 6
    assert float(x.flat[4]) == 7.0
    x.flat[[0, 5]] = -1.0
    expected = a.copy()
    expected.flat[[0, 5]] = -1.0
    np.testing.assert_array_equal(x.get(), expected)
    x.sort(axis=1)
    expected.sort(axis=1)
    np.testing.assert_array_equal(x.get(), expected)
    alias = x
    x.shape = (3, 2)
    expected.shape = (3, 2)
    assert alias.shape == (3, 2)
    np.testing.assert_array_equal(x.get(), expected)
    view = x[1:]
    if numpy_computes(x):       # NumPy reshapes a contiguous view in place
        view.shape = (4,)
        np.testing.assert_array_equal(view.get(), expected[1:].ravel())
    else:
        with pytest.raises(AttributeError, match="view"):
            view.shape = (4,)
    assert x.shape == (3, 2)
    x.fill(2)
    assert x.get().tolist() == [[2.0, 2.0]] * 3


def test_index_by_range_and_where_with_a_condition_only():
    a = np.arange(12).reshape(3, 4)
    x = la.asarray(a)
    np.testing.assert_array_equal(x[range(1, 3)].get(), a[range(1, 3)])
    np.testing.assert_array_equal(x[:, range(0, 4, 2)].get(), a[:, range(0, 4, 2)])
    for got, expected in zip(la.where(x > 6), np.where(a > 6)):
        np.testing.assert_array_equal(np.asarray(got), expected)
    for got, expected in zip(np.where(x > 6), np.where(a > 6)):
        np.testing.assert_array_equal(np.asarray(got), expected)


def test_dtype_aliases_and_shape_queries_compute_nothing():
    assert la.double is np.float64 and la.single is np.float32 and la.intc is np.intc
    x = la.asarray(np.ones((2, 5))) * 3
    with counting() as ran:
        assert np.shape(x) == (2, 5) and np.ndim(x) == 2 and np.size(x) == 10
        assert np.size(x, 1) == 5 and np.issubdtype(x.dtype, la.floating)
        assert la.issubdtype(x, np.floating)
    assert ran.launches == 0

# }}}


@la.tier("device")              # (la.explain's account of the device's work)
def test_explain_names_values_computed_on_the_host():
    x = la.asarray(np.random.default_rng(0).random((4, 5)))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", la.LazyArrayHostFallbackWarning)
        m = np.unwrap(x, axis=0)
    text = la.explain(x - m, print_it=False)
    assert "computed on the host by np.unwrap, copied to the device" in text
    assert "(device data)" in text                         # x itself


@pytest.mark.parametrize("name", ["arccos", "arcsinh", "log1p", "log2", "log10"])
def test_complex_ufuncs_without_device_kernels_run_on_the_host(name):
    z = np.array([0.5 + 1j, -2 + 0.1j, 0j, 3 - 4j], np.complex64)
    lazy = la.asarray(z)
    with host_fallback(lazy):
        got = getattr(np, name)(lazy)
    assert isinstance(got, la.LazyArray) and got.dtype == np.complex64
    np.testing.assert_allclose(got.get(), getattr(np, name)(z), rtol=1e-6)
    np.testing.assert_array_equal(np.round(la.asarray(z), 1).get(), np.round(z, 1))


def test_array_api_details():
    """Boolean scalar indices, per-element repeats, finfo as Python floats,
    eye's far diagonals, axis errors that are IndexErrors, complex powers."""
    a = np.arange(6.0).reshape(2, 3)
    x = la.asarray(a)
    for key in [True, False, (0, True), (Ellipsis, False), (slice(None), True, 1)]:
        np.testing.assert_array_equal(x[key].get(), a[key])
    np.testing.assert_array_equal(x[la.asarray(np.bool_(False))].get(), a[np.False_])
    np.testing.assert_array_equal(la.repeat(x, [1, 0, 2], axis=1).get(),
                                  np.repeat(a, [1, 0, 2], axis=1))
    np.testing.assert_array_equal(la.repeat(x, la.asarray(np.array([2]))).get(),
                                  np.repeat(a, [2]))
    info = la.finfo(np.float32)
    assert type(info.eps) is float and info.eps == float(np.finfo(np.float32).eps)
    assert type(la.finfo(np.complex128).max) is float and info.bits == 32
    np.testing.assert_array_equal(la.eye(3, 4, k=10**20).get(), np.zeros((3, 4)))
    with pytest.raises(IndexError):
        la.expand_dims(x, axis=3)
    with pytest.raises(ValueError):
        x.sum(axis=2)
    z = np.array([1 + 1j, -2 + 0.5j], np.complex64)
    base = la.asarray(z)
    with host_fallback(base):
        got = base ** la.asarray(np.complex64(2 - 1j))
    np.testing.assert_allclose(got.get(), z ** np.complex64(2 - 1j), rtol=1e-6)


@pytest.mark.parametrize("dtype, big", [(np.complex64, [89.0, 100.0, -95.0]),
                                        (np.complex128, [710.0, 750.0, -720.0])])
@pytest.mark.parametrize("name", ["exp", "sinh", "cosh", "tanh"])
def test_complex_exponentials_give_numpys_special_and_large_values(dtype, big, name):
    """C99 Annex G values for infinite and NaN parts (exp(inf + 0j) is inf + 0j,
    not inf + nan j), and no overflow where the result is finite."""
    import itertools
    parts = [0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 1e-30, 3.0e4, *big]
    z = np.array([complex(a, b) for a, b in itertools.product(parts, parts)], dtype)
    got = getattr(np, name)(la.asarray(z)).get()
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(z)
    for part in ("real", "imag"):
        g, e = getattr(got, part), getattr(expected, part)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(e))
        np.testing.assert_array_equal(np.isinf(g) & (g > 0), np.isinf(e) & (e > 0))
        np.testing.assert_array_equal(np.isinf(g) & (g < 0), np.isinf(e) & (e < 0))
        finite = np.isfinite(e)
        np.testing.assert_allclose(g[finite], e[finite], rtol=1e-5, atol=1e-30)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@la.tier("device")              # (NumPy's expm1 differs at infinities)
def test_complex_expm1_on_the_device(dtype):
    """Finite values as NumPy's (accurate near 0), infinite and NaN parts as
    the Array API specifies (where NumPy's expm1 gives inf + nan j for
    inf + 0j, the specification and C's exp(z) - 1 give inf + 0j)."""
    import itertools
    import warnings
    parts = [0.0, -0.0, 1e-5, -1e-6, 1.5, -2.0, 3e4]
    z = np.array([complex(a, b) for a, b in itertools.product(parts, parts)], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error", la.LazyArrayHostFallbackWarning)
        got = np.expm1(la.asarray(z)).get()
    with np.errstate(all="ignore"):
        expected = np.expm1(z)
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-5, atol=1e-30)
    inf, nan = np.inf, np.nan
    special = {complex(inf, 0): (inf, 0), complex(-inf, inf): (-1, 0),
               complex(inf, inf): (inf, nan), complex(-inf, nan): (-1, 0),
               complex(inf, nan): (inf, nan), complex(nan, 0): (nan, 0)}
    values = np.array([complex(k.real, k.imag) for k in special], dtype)
    values.imag = [k.imag for k in special]
    got = np.expm1(la.asarray(values)).get()
    for g, (re, im) in zip(got, special.values()):
        for part, want in ((g.real, re), (g.imag, im)):
            assert (np.isnan(part) and np.isnan(want)) or (
                part == want and (np.isnan(want) or np.isinf(want) or abs(part) == abs(want)))


def test_flat_assignment_into_a_transposed_view_reaches_it():
    """``y.flat[k] = v`` where the flat reshape of *y* is a copy (a transposed
    view) still writes into *y*."""
    a = np.arange(12.0).reshape(3, 4)
    y = la.asarray(a.copy()).T
    y.flat[[1, 7]] = 5.0
    expected = a.copy().T
    expected.flat[[1, 7]] = 5.0
    np.testing.assert_array_equal(y.get(), expected)


def test_host_function_with_lazy_keyword_array():
    """A lazy array passed by keyword to a host-computed function (sorter=)
    is computed like a positional one (once: endless recursion)."""
    values = np.array([9125805, 92148, 165768825474565, 345811], dtype=np.uint64)
    sorter = np.argsort(values)
    got = la.searchsorted(la.asarray(values), 822489, sorter=la.asarray(sorter))
    assert int(got) == np.searchsorted(values, 822489, sorter=sorter)
    got = np.searchsorted(la.asarray(values), [5, 10**15], side="right",
                          sorter=la.asarray(sorter))
    np.testing.assert_array_equal(got.get(), np.searchsorted(values, [5, 10**15], "right",
                                                             sorter=sorter))


@pytest.mark.parametrize("name, call", [
    ("fliplr", lambda xp, a: xp.fliplr(a)),
    ("flipud", lambda xp, a: xp.flipud(a)),
    ("hsplit", lambda xp, a: xp.hsplit(a, 2)[1]),
    ("vsplit", lambda xp, a: xp.vsplit(a, 2)[1]),
    ("dsplit", lambda xp, a: xp.dsplit(a[..., None].repeat(2, 2), 2)[0][..., 0]),
    ("ascontiguousarray", lambda xp, a: xp.ascontiguousarray(a)),
    ("broadcast_arrays", lambda xp, a: xp.broadcast_arrays(a, a[0])[0]),
    ("diagonal", lambda xp, a: xp.diagonal(a)),
    ("broadcast_to", lambda xp, a: xp.broadcast_to(a[0], (3, 6))),
    ("sliding_window_view", lambda xp, a: xp.lib.stride_tricks.sliding_window_view(a, 2, 1)),
])
def test_views_write_through_or_refuse_writes_as_numpys(name, call):
    # a write into NumPy's view reaches its array (or raises, for a read-only view)
    def written(xp):
        a = xp.asarray(np.arange(24.0).reshape(4, 6))
        view = call(xp, a)
        assert view.flags.writeable == call(np, np.arange(24.0).reshape(4, 6)).flags.writeable
        try:
            view[(0,) * view.ndim] = -1.0
        except ValueError as error:
            return str(error)
        try:
            view += 100
        except ValueError as error:
            return str(error)
        return a.get() if isinstance(a, la.LazyArray) else a
    expected, got = written(np), written(la)
    if isinstance(expected, str):
        assert got == expected
    else:
        np.testing.assert_array_equal(got, expected)
    for bad, error in [(lambda: la.fliplr(la.arange(3)), "Input must be >= 2-d"),
                       (lambda: la.hsplit(la.asarray(1.0), 1), "hsplit only works"),
                       (lambda: la.vsplit(la.arange(3), 1), "vsplit only works"),
                       (lambda: la.dsplit(la.ones((2, 2)), 1), "dsplit only works")]:
        with pytest.raises(ValueError, match=error):
            bad()
    assert la.ascontiguousarray(la.asarray(2.0)).shape == (1,)


def test_broadcast_results_of_broadcast_arrays_are_read_only():
    # (NumPy 2 warns on writes to them and means to make them read-only; a
    # lazy array's broadcast elements are one element, so writes are refused)
    x = la.asarray(np.arange(6.0).reshape(2, 3))
    same, broadcast = la.broadcast_arrays(x, x[0])
    broadcast_host = np.broadcast_arrays(np.ones((2, 3)), np.ones(3))[1]
    if numpy_computes(x):
        assert broadcast.flags.writeable == broadcast_host.flags.writeable
        return
    assert not broadcast.flags.writeable and same.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        broadcast[0, 0] = 1.0
    same[0, 0] = -1.0
    assert x.get()[0, 0] == -1.0


def test_numpys_submodules_under_lazyarrays_name_read_lazy_arrays():
    # scripts written `import lazyarray as np` reach NumPy's testing, polynomial,
    # emath and exceptions modules (NumPy's own, reading the values)
    x = la.linspace(-1, 1, 9)
    y = 1 / (1 + 25 * x ** 2)
    hx, hy = np.linspace(-1, 1, 9), 1 / (1 + 25 * np.linspace(-1, 1, 9) ** 2)
    assert la.polynomial.Polynomial.fit(x, y, 4)(0.5) == pytest.approx(
        np.polynomial.Polynomial.fit(hx, hy, 4)(0.5), rel=1e-12)
    la.testing.assert_allclose(y, hy, rtol=1e-15)
    with pytest.raises(AssertionError):
        la.testing.assert_allclose(y, hy + 1)
    assert la.emath.sqrt(-1) == 1j
    with pytest.raises(la.exceptions.AxisError):
        la.sum(la.ones((2, 2)), axis=3)
    for name in ("ma", "polynomial", "testing", "emath", "exceptions", "dtypes", "typing"):
        assert getattr(la, name) is getattr(np, name)


@pytest.mark.parametrize("call", [
    lambda xp, a: xp.arange(0, 10, 0),
    lambda xp, a: xp.split(a, 0),
    lambda xp, a: xp.concatenate(a, a),
    lambda xp, a: a[2**63],
    lambda xp, a: xp.where(a > 1, x=a),
    lambda xp, a: xp.argmax(a, axis=(0, 1)),
    lambda xp, a: xp.cumsum(a, axis=(0,)),
    lambda xp, a: xp.ones(3, order="X"),
    lambda xp, a: a.astype(int, casting="foo"),
    lambda xp, a: a.astype(int, casting="safe"),
    lambda xp, a: xp.nan_to_num(a, nan="a"),
    lambda xp, a: setattr(a, "imag", 1),
    lambda xp, a: a.__delitem__(0),
    lambda xp, a: xp.sum(a, axis="0"),
    lambda xp, a: xp.sum(a, keepdims="no"),
    lambda xp, a: xp.sum(a, initial=np.ones(2)),
    lambda xp, a: a.reshape(3.0, 2),
    lambda xp, a: a.reshape("3", "2"),
    lambda xp, a: xp.eye(2.7),
    lambda xp, a: xp.eye(3, k=1.5),
    lambda xp, a: xp.round(a, 1.5),
    lambda xp, a: xp.pad(a, 1.5),
    lambda xp, a: xp.mean(a, axis=1.0),
    lambda xp, a: xp.squeeze(a[None], 0.0),
    lambda xp, a: xp.add(a, 1, outt=None),
    lambda xp, a: xp.add(a, 1, casting="sometimes"),
    lambda xp, a: xp.add(a, 1, out=xp.zeros((2, 3), np.int32), casting="safe"),
    lambda xp, a: xp.add(a, 1, out=(a, a)),
    lambda xp, a: xp.dot(a, a.T, out=xp.zeros((2, 2), np.float32)),
    lambda xp, a: xp.dot(a, a.T, out=xp.zeros((2, 3))),
    lambda xp, a: xp.matmul(a, a.T, out=xp.zeros((2, 2), np.int32)),
    lambda xp, a: xp.tile(a, -1),
    lambda xp, a: xp.repeat(a, -1),
    lambda xp, a: xp.full((3, 4), [1, 2, 3]),
    lambda xp, a: xp.moveaxis(a[None], (0, 0), (1, 2)),
])
def test_bad_arguments_raise_numpys_exception_types(call):
    # (an `except` written for NumPy's error catches lazyarray's)
    a = np.arange(6.0).reshape(2, 3)
    with pytest.raises(Exception) as expected:
        call(np, a)
    with pytest.raises(expected.type):
        call(la, la.asarray(a))


def test_creation_order_astype_casting_and_parts_as_numpy():
    a = np.arange(6.0).reshape(2, 3)
    for order in ("C", "F"):
        np.testing.assert_array_equal(la.ones((2, 3), order=order).get(), np.ones((2, 3)))
    x = la.asarray(a)
    assert x.astype(np.float32, casting="same_kind").dtype == np.float32
    x.real = 4.0
    np.testing.assert_array_equal(x.get(), np.full((2, 3), 4.0))
    h = np.array([complex(np.nan, np.inf), complex(-np.inf, 1), 1 + 2j], np.complex64)
    for kwargs in ({}, {"nan": 3, "posinf": 7}, {"posinf": np.inf}):
        got, want = la.nan_to_num(la.asarray(h), **kwargs), np.nan_to_num(h, **kwargs)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.get(), want)


def test_products_write_into_out_and_full_broadcasts_an_array_as_numpy():
    a = np.arange(6.0).reshape(2, 3)
    for name, dtype in (("dot", np.float64), ("matmul", np.float64), ("matmul", np.float32)):
        out, host_out = la.zeros((2, 2), dtype), np.zeros((2, 2), dtype)
        result = getattr(la, name)(la.asarray(a), la.asarray(a.T), out=out)
        getattr(np, name)(a, a.T, out=host_out)
        assert result is out and out.dtype == host_out.dtype
        np.testing.assert_array_equal(out.get(), host_out)
    got, want = la.full((3, 4), [1, 2, 3, 4], np.float32), np.full((3, 4), [1, 2, 3, 4], np.float32)
    assert got.dtype == want.dtype and got.flags.writeable
    np.testing.assert_array_equal(got.get(), want)
    got[0, 0] = 9
    assert got.get()[1, 0] == 1
    o = la.zeros(6, np.int32)
    np.testing.assert_array_equal(la.add(la.arange(6.0), 0.5, out=o, casting="unsafe").get(),
                                  np.add(np.arange(6.0), 0.5, out=np.zeros(6, np.int32),
                                         casting="unsafe"))
