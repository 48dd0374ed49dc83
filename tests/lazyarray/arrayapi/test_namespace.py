"""The ``la`` namespace as a Python Array API (2024.12) namespace, and the
NumPy-side names it mirrors."""

import numpy as np
import pytest

import lazyarray as la

ARRAY_API_FUNCTIONS = """
abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_left_shift
bitwise_invert bitwise_or bitwise_right_shift bitwise_xor ceil clip conj copysign cos
cosh divide equal exp expm1 floor floor_divide greater greater_equal hypot imag isfinite
isinf isnan less less_equal log log1p log2 log10 logaddexp logical_and logical_not
logical_or logical_xor maximum minimum multiply negative not_equal positive pow real
remainder round sign signbit sin sinh square sqrt subtract tan tanh trunc
arange asarray empty empty_like eye from_dlpack full full_like linspace meshgrid ones
ones_like tril triu zeros zeros_like
astype can_cast finfo iinfo isdtype result_type
take matmul matrix_transpose tensordot vecdot
broadcast_arrays broadcast_to concat expand_dims flip moveaxis permute_dims repeat
reshape roll squeeze stack tile unstack
argmax argmin nonzero searchsorted where
unique_all unique_counts unique_inverse unique_values argsort sort
cumulative_sum max mean min prod std sum var all any
__array_namespace_info__
""".split()
ARRAY_API_DTYPES = ("bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 "
                    "float64 complex64 complex128").split()
NUMPY_NAMES = """
arcsinh arccosh arctanh invert left_shift right_shift bitwise_not deg2rad rad2deg
degrees radians exp2 fabs reciprocal heaviside around float_power isclose allclose diff
nan_to_num angle conjugate fmod logaddexp2 fmax fmin tri modf divmod
""".split()


def test_every_array_api_name_exists():
    missing = [n for n in ARRAY_API_FUNCTIONS + ARRAY_API_DTYPES if not hasattr(la, n)]
    assert not missing
    assert all(callable(getattr(la, n)) for n in ARRAY_API_FUNCTIONS)
    for n in ARRAY_API_DTYPES:
        assert np.dtype(getattr(la, n)) == np.dtype(n)
    assert la.__array_api_version__ == "2024.12"
    assert la.e == np.e and la.pi == np.pi and la.inf == np.inf and np.isnan(la.nan)
    assert la.newaxis is None


def test_numpy_names_exist():
    assert not [n for n in NUMPY_NAMES if not hasattr(la, n)]
    assert set(NUMPY_NAMES + ["abs", "pow"]) <= set(la.__all__) | {"abs", "pow"}


def test_namespace_of_arrays():
    x = la.asarray(np.arange(3.0))
    assert x.__array_namespace__() is la
    assert x.__array_namespace__(api_version="2023.12") is la
    assert x.__array_namespace__(api_version="2024.12") is la
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="1999.01")


def test_namespace_info():
    info = la.__array_namespace_info__()
    caps = info.capabilities()
    assert set(caps) >= {"boolean indexing", "data-dependent shapes"}
    device = info.default_device()
    assert info.devices() == [device]
    assert la.asarray([1.0]).device == device
    assert info.default_dtypes() == {"real floating": np.float64,
                                     "complex floating": np.complex128,
                                     "integral": np.int64, "indexing": np.int64}
    assert set(info.dtypes()) == set(ARRAY_API_DTYPES)
    assert set(info.dtypes(kind="signed integer")) == {"int8", "int16", "int32", "int64"}
    assert set(info.dtypes(kind=("bool", "real floating"))) == {"bool", "float32",
                                                                "float64"}
    assert info.dtypes(kind="complex floating")["complex64"] == np.complex64
    with pytest.raises(ValueError):
        info.dtypes(kind="strings")


def test_dtype_functions_agree_with_numpy():
    x = la.asarray(np.ones(2, np.float32))
    i = la.asarray(np.ones(2, np.int16))
    assert la.finfo(x).eps == np.finfo(np.float32).eps
    assert la.finfo(la.float64).max == np.finfo(np.float64).max
    assert la.iinfo(i).min == -32768 and la.iinfo(la.uint8).max == 255
    assert la.result_type(x, i) == np.float32
    assert la.result_type(i, la.int32) == np.int32
    assert la.result_type(x, 1.0) == np.float32
    assert la.can_cast(i, la.int32) and not la.can_cast(x, la.int16)
    assert la.can_cast(la.uint8, la.int16) and not la.can_cast(la.int64, la.uint64)
    for dtype, kind, expected in [(la.float32, "real floating", True),
                                  (la.int8, "integral", True),
                                  (la.uint16, "signed integer", False),
                                  (la.bool, "bool", True),
                                  (la.complex64, ("real floating", "complex floating"),
                                   True),
                                  (la.int64, "numeric", True), (la.bool, "numeric", False)]:
        assert la.isdtype(dtype, kind) is expected


def test_creation_and_manipulation_functions():
    a = np.arange(12.0).reshape(3, 4)
    x = la.asarray(a)
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(la.tril(x, k).get(), np.tril(a, k))
        np.testing.assert_array_equal(la.triu(x, k=k).get(), np.triu(a, k))
        np.testing.assert_array_equal(np.tril(x, k).get(), np.tril(a, k))
        np.testing.assert_array_equal(la.tri(3, 5, k, dtype=la.int32).get(),
                                      np.tri(3, 5, k, dtype=np.int32))
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            got = la.meshgrid(la.arange(3), la.arange(2.0), la.arange(4),
                              indexing=indexing, sparse=sparse)
            want = np.meshgrid(np.arange(3), np.arange(2.0), np.arange(4),
                               indexing=indexing, sparse=sparse)
            # (a list, as the Array API 2024.12 specifies; NumPy 2 returns a tuple)
            assert type(got) is list and len(got) == len(want)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype
                np.testing.assert_array_equal(g.get(), w)
    assert la.zeros(3).dtype == np.float64 and la.ones((2,), dtype=None).dtype == np.float64
    assert la.eye(2).dtype == np.float64
    np.testing.assert_array_equal(la.concat([x, x], axis=1).get(), np.concatenate([a, a], 1))
    np.testing.assert_array_equal(la.concat([x, x], axis=None).get(),
                                  np.concatenate([a, a], axis=None))
    parts = la.unstack(x, axis=1)
    assert len(parts) == 4 and all(p.shape == (3,) for p in parts)
    np.testing.assert_array_equal(parts[2].get(), a[:, 2])
    np.testing.assert_array_equal(la.matrix_transpose(la.asarray(a.reshape(3, 2, 2))).get(),
                                  np.matrix_transpose(a.reshape(3, 2, 2)))
    np.testing.assert_array_equal(la.permute_dims(x, (1, 0)).get(), a.T)
    np.testing.assert_array_equal(la.astype(x, la.int8).get(), a.astype(np.int8))


def test_cumulative_sum_all_any_vecdot():
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    x = la.asarray(a)
    np.testing.assert_array_equal(la.cumulative_sum(x, axis=1).get(),
                                  np.cumulative_sum(a, axis=1))
    np.testing.assert_array_equal(
        la.cumulative_sum(x, axis=0, include_initial=True).get(),
        np.cumulative_sum(a, axis=0, include_initial=True))
    np.testing.assert_array_equal(la.cumulative_sum(la.asarray(a[0])).get(), np.cumsum(a[0]))
    with pytest.raises(la.ShapeError):
        la.cumulative_sum(x)
    flags = np.array([[True, False], [True, True]])
    f = la.asarray(flags)
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(la.all(f, axis=axis).get(), np.all(flags, axis=axis))
        np.testing.assert_array_equal(la.any(f, axis=axis).get(), np.any(flags, axis=axis))
        np.testing.assert_array_equal(np.all(f, axis=axis).get(), np.all(flags, axis=axis))
    empty = la.asarray(np.zeros((0, 3)))
    assert bool(la.all(empty)) and not bool(la.any(empty))
    np.testing.assert_array_equal(la.all(empty, axis=0).get(), [True] * 3)
    b = np.array([[1.0, -1.0, 2.0]])
    c = np.array([1 + 1j, 2j, -1.0])
    assert la.vecdot(x, la.asarray(b)).dtype == np.vecdot(a, b).dtype
    np.testing.assert_array_equal(la.vecdot(x, la.asarray(b)).get(), np.vecdot(a, b))
    np.testing.assert_array_equal(np.vecdot(x, la.asarray(b)).get(), np.vecdot(a, b))
    np.testing.assert_allclose(la.vecdot(la.asarray(c), la.asarray(c)).get(), np.vecdot(c, c))
    np.testing.assert_array_equal(la.vecdot(x, x, axis=0).get(), np.vecdot(a, a, axis=0))


def test_from_dlpack_and_dlpack_export():
    a = np.arange(6.0).reshape(2, 3)
    x = la.from_dlpack(a)
    assert isinstance(x, la.LazyArray)
    np.testing.assert_array_equal(x.get(), a)
    np.testing.assert_array_equal(np.from_dlpack(x), a)
    assert la.from_dlpack(x) is x


def test_numpy_functions_stay_lazy():
    a = np.array([[1.5, -2.5], [np.nan, 4.0]])
    x = la.asarray(a)
    i = la.asarray(np.array([3, 5], np.int64))
    for result in (np.bitwise_and(i, 6), np.left_shift(i, 1), np.invert(i), np.clip(x, 0, 1),
                   np.round(x), np.around(x, 1), np.isclose(x, x), np.real(x), np.imag(x),
                   np.tril(x), np.diff(x), np.nan_to_num(x), np.conj(x), np.sign(x),
                   np.astype(x, np.float32), np.concat([x, x]), np.all(x), np.any(x),
                   np.cumulative_sum(i), np.matrix_transpose(x), np.square(x),
                   np.logaddexp(x, 1.0), np.copysign(x, -1.0)):
        assert isinstance(result, la.LazyArray)


def test_array_api_keyword_spellings():
    np.testing.assert_array_equal(np.asarray(la.eye(2, n_cols=3, k=1)), np.eye(2, 3, k=1))
    with pytest.raises(TypeError, match="same argument"):
        la.eye(2, 3, n_cols=3)
    x = la.asarray(np.arange(6.0))
    for copy in (None, True, False):
        np.testing.assert_array_equal(np.asarray(la.reshape(x, (2, 3), copy=copy)),
                                      np.arange(6.0).reshape(2, 3))
