"""NumPy ufuncs on lazy arrays against NumPy itself: values (IEEE special
values included), result dtypes and refusals, over generated shapes
(0-size and broadcast ones) and dtypes.

To keep kernel compiles few, every example computes all ufuncs of a test and
stacks the results of one dtype into one array: one kernel per result dtype.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la

SETTINGS = settings(max_examples=30)
#: the all-ufunc tests by default (every example compiles kernels of its own:
#: 30 took 25 s each); their ``_many`` twins, ``slow``, run SETTINGS
FEW = settings(max_examples=12)

REAL_DTYPES = [np.dtype(t) for t in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64")]
COMPLEX_DTYPES = [np.dtype("complex64"), np.dtype("complex128")]

UNARY = [
    "absolute", "negative", "positive", "sign", "square", "reciprocal", "invert",
    "logical_not", "isnan", "isinf", "isfinite", "signbit", "floor", "ceil", "trunc",
    "rint", "fabs", "conjugate", "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2",
    "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
    "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "degrees", "radians"]
BINARY = [
    "add", "subtract", "multiply", "true_divide", "maximum", "minimum", "fmax", "fmin",
    "copysign", "heaviside", "logaddexp", "logaddexp2", "arctan2", "hypot", "fmod",
    "float_power", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
    "right_shift", "logical_and", "logical_or", "logical_xor", "less", "less_equal",
    "greater", "greater_equal", "equal", "not_equal"]
#: integer division: NumPy's results for zero divisors and MIN // -1 included
INT_ONLY = ["floor_divide", "remainder"]
#: ufuncs whose float results must agree bit for bit (signs of zeros too)
EXACT = {"absolute", "negative", "positive", "sign", "square", "reciprocal", "floor",
         "ceil", "trunc", "rint", "fabs", "conjugate", "copysign", "heaviside", "add",
         "subtract", "multiply", "true_divide", "fmod"}
#: exact values, but NumPy's choice between 0.0 and -0.0 depends on its SIMD path
EXACT_UP_TO_ZERO_SIGN = {"maximum", "minimum", "fmax", "fmin"}
#: ufuncs lazyarray computes on complex operands (the others must refuse)
COMPLEX_OK = {"absolute", "negative", "positive", "sign", "square", "reciprocal",
              "conjugate", "isnan", "isinf", "isfinite", "logical_not", "sqrt", "exp", "expm1",
              "log", "sin", "cos", "tan", "sinh", "cosh", "tanh", "add", "subtract",
              "multiply", "true_divide", "equal", "not_equal", "logical_and",
              "logical_or", "logical_xor"}

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0,
           2.0 ** 100, -(2.0 ** 100), 2.0 ** -140]


def _values(dtype: np.dtype):
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        small = st.integers(max(int(info.min), -3), min(int(info.max), 70))
        return st.one_of(small, st.integers(int(info.min), int(info.max)),
                         st.sampled_from([int(info.min), int(info.max), 0, 1]))
    if dtype.kind == "f":
        return st.one_of(st.sampled_from(SPECIAL), st.floats(-20, 20))
    part = st.one_of(st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.5]), st.floats(-4, 4))
    return st.builds(complex, part, part)


@st.composite
def _operands(draw, nin, dtypes, scalars=True):
    """(shape-compatible) NumPy operands: arrays of broadcastable shapes, or
    Python scalars (weak in both NumPy and lazyarray)."""
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(0, 4)) for _ in range(ndim))
    first = draw(st.sampled_from(dtypes))
    result = []
    for k in range(nin):
        dtype = first if k == 0 or draw(st.integers(0, 3)) else draw(st.sampled_from(dtypes))
        if k > 0 and scalars and draw(st.integers(0, 5)) == 0:
            value = draw(_values(dtype))
            result.append(bool(value) if dtype.kind == "b" else
                          int(value) if dtype.kind in "iu" else value)
            continue
        skip = draw(st.integers(0, ndim))
        sub = tuple(1 if draw(st.integers(0, 3)) == 0 else s for s in shape[skip:])
        n = int(np.prod(sub, dtype=np.int64))
        values = draw(st.lists(_values(dtype), min_size=n, max_size=n))
        with np.errstate(all="ignore"):
            result.append(np.array(values, dtype=dtype).reshape(sub))
    return result


def _loop_has_float16(ufunc, args) -> bool:
    operand = [np.dtype(bool) if isinstance(a, bool) else type(a)
               if isinstance(a, (int, float, complex)) else a.dtype for a in args]
    try:
        return np.dtype(np.float16) in ufunc.resolve_dtypes(tuple(operand) + (None,))
    except TypeError:
        return False


def _compare(name, actual, desired, from_complex=False):
    if desired.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, desired, err_msg=name)
        return
    if (name in EXACT or name in EXACT_UP_TO_ZERO_SIGN) and desired.dtype.kind == "f" \
            and not from_complex:
        np.testing.assert_array_equal(actual, desired, err_msg=name)
        if name in EXACT:
            # (the sign of a NaN means nothing)
            np.testing.assert_array_equal(np.signbit(actual) & ~np.isnan(actual),
                                          np.signbit(desired) & ~np.isnan(desired),
                                          err_msg=f"{name}: signs of zeros")
        return
    single = desired.dtype in (np.float32, np.complex64)
    # (a complex function combines several real ones, each a few ulp off:
    # near a pole, tanh(1.625j), that grows to 3e-6 on NVIDIA's OpenCL)
    rtol = (1e-5 if from_complex else 2e-6) if single else 1e-13
    np.testing.assert_allclose(actual, desired, rtol=rtol,
                               atol=1e-6 if single else 1e-14, equal_nan=True,
                               err_msg=name)


def _check(names, args):
    """Apply each ufunc of *names* to *args* through NumPy's dispatch on lazy
    arrays and compare with NumPy: stacked by result dtype, one kernel each."""
    lazy_args = [la.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    buckets: dict = {}
    for name in names:
        ufunc = getattr(np, name)
        try:
            with np.errstate(all="ignore"):
                desired = np.asarray(ufunc(*args))
        except TypeError:
            with pytest.raises((la.DTypeError, TypeError)):
                ufunc(*lazy_args)
            continue
        complex_loop = any(np.asarray(a).dtype.kind == "c" for a in args)
        on_host = complex_loop and name not in COMPLEX_OK
        from lazyarray import fallback
        fallback._warned.discard(f"np.{name}")
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", la.LazyArrayHostFallbackWarning)
                lazy = ufunc(*lazy_args)
        except la.DTypeError:
            assert _loop_has_float16(ufunc, args), f"{name} refused {args}"
            continue
        # complex loops without a kernel run on the host, saying so
        assert on_host == any(issubclass(w.category, la.LazyArrayHostFallbackWarning)
                              for w in caught), name
        assert isinstance(lazy, la.LazyArray), name
        assert lazy.dtype == desired.dtype, (name, lazy.dtype, desired.dtype)
        assert lazy.shape == desired.shape, name
        buckets.setdefault(desired.dtype, []).append((name, lazy, desired))
    for entries in buckets.values():
        stacked = la.stack([lazy for _, lazy, _ in entries]).get()
        for k, (name, _, desired) in enumerate(entries):
            _compare(name, stacked[k], desired, complex_loop)


@FEW
@given(_operands(1, REAL_DTYPES))
def test_unary_ufuncs_match_numpy(args):
    _check(UNARY, args)


@pytest.mark.slow
@SETTINGS
@given(_operands(1, REAL_DTYPES))
def test_unary_ufuncs_match_numpy_many(args):
    _check(UNARY, args)


@FEW
@given(_operands(2, REAL_DTYPES))
def test_binary_ufuncs_match_numpy(args):
    _check(BINARY, args)


@pytest.mark.slow
@SETTINGS
@given(_operands(2, REAL_DTYPES))
def test_binary_ufuncs_match_numpy_many(args):
    _check(BINARY, args)


@SETTINGS
@given(_operands(2, [d for d in REAL_DTYPES if d.kind in "iu"]))
def test_integer_division_matches_numpy(args):
    _check(INT_ONLY, args)


@settings(max_examples=15)
@given(_operands(1, COMPLEX_DTYPES))
def test_complex_unary_ufuncs(args):
    _check(UNARY, args)


@settings(max_examples=15)
@given(_operands(2, COMPLEX_DTYPES))
def test_complex_binary_ufuncs(args):
    _check(BINARY, args)


def test_ieee_special_values_all_pairs():
    """Every pair of special values, for the binary float ufuncs."""
    a, b = np.meshgrid(np.array(SPECIAL), np.array(SPECIAL))
    for dtype in (np.float32, np.float64):
        _check(BINARY, [a.astype(dtype), b.astype(dtype)])
        _check(UNARY, [a.astype(dtype)])


def test_shifts_by_every_count():
    for dtype in ("int8", "uint8", "int16", "int32", "uint32", "int64", "uint64"):
        info = np.iinfo(dtype)
        x = np.array([info.min, -5 if info.min else 5, -1 if info.min else 1, 0, 3,
                      info.max], dtype=dtype)[:, None]
        counts = np.arange(max(-3, int(info.min)), 70).astype(dtype)[None, :]
        _check(["left_shift", "right_shift"], [x, counts])


def test_array_api_spellings_are_the_ufuncs():
    x = la.asarray(np.array([-1.5, 0.5, 2.0]))
    pairs = {"abs": "absolute", "acos": "arccos", "acosh": "arccosh", "asin": "arcsin",
             "asinh": "arcsinh", "atan": "arctan", "atanh": "arctanh", "conj": "conjugate"}
    for alias, name in pairs.items():
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(getattr(la, alias)(x).get(),
                                       getattr(np, name)(x.get()), rtol=1e-15)
    i = la.asarray(np.array([1, 6, -8], np.int16))
    np.testing.assert_array_equal(la.bitwise_left_shift(i, 2).get(), i.get() << 2)
    np.testing.assert_array_equal(la.bitwise_right_shift(i, 1).get(), i.get() >> 1)
    np.testing.assert_array_equal(la.bitwise_invert(i).get(), ~i.get())
    np.testing.assert_array_equal(la.pow(x, 2).get(), x.get() ** 2)
    # (OpenCL's atan2 is within a few ulp of NumPy's: NVIDIA's differs in the last bit)
    np.testing.assert_allclose(la.atan2(x, 1.0).get(), np.arctan2(x.get(), 1.0), rtol=1e-15)


def test_dunders():
    a = np.array([[-3, 0, 5], [7, -128, 127]], np.int8)
    b = np.array([1, 2, 3], np.int8)
    x, y = la.asarray(a), la.asarray(b)
    for lazy, ref in [(x & y, a & b), (x | y, a | b), (x ^ y, a ^ b), (~x, ~a),
                      (x << y, a << b), (x >> y, a >> b), (3 & x, 3 & a), (3 | x, 3 | a),
                      (3 ^ x, 3 ^ a), (1 << y, 1 << b), (64 >> y, 64 >> b),
                      (abs(x), abs(a)), (+x, +a), (x ** 2, a ** 2), (2 ** y, 2 ** b),
                      (x.mT, a.T), (x.clip(-2, 6), a.clip(-2, 6)),
                      (x.astype(np.float32, copy=False), a.astype(np.float32))]:
        assert isinstance(lazy, la.LazyArray)
        assert lazy.dtype == ref.dtype
        np.testing.assert_array_equal(lazy.get(), ref)
    flags = la.asarray(np.array([True, False]))
    np.testing.assert_array_equal((~flags).get(), [False, True])
    z = la.asarray(np.array([1 + 2j, -3j], np.complex64))
    np.testing.assert_array_equal(z.real.get(), [1, 0])
    np.testing.assert_array_equal(z.imag.get(), [2, -3])
    np.testing.assert_array_equal(z.conj().get(), [1 - 2j, 3j])
    assert z.real.dtype == np.float32
    r = la.asarray(np.array([0.5, -1.5]))
    assert r.real is r or np.array_equal(r.real.get(), r.get())
    np.testing.assert_array_equal(r.imag.get(), [0, 0])
    assert x.device == la.__array_namespace_info__().default_device()
    assert x.to_device(x.device) is x


def test_astype_follows_numpy_conversions():
    a = np.array([0.5, 0.0, -0.0, 2.0, np.nan, -3.75])
    x = la.asarray(a)
    np.testing.assert_array_equal(x.astype(bool).get(), a.astype(bool))
    np.testing.assert_array_equal(la.astype(x, np.int32).get()[[0, 1, 3, 5]],
                                  a.astype(np.int32)[[0, 1, 3, 5]])
    z = la.asarray(np.array([1.5 + 2j, 0j, 1j]))
    np.testing.assert_array_equal(z.astype(bool).get(), [True, False, True])
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.testing.assert_array_equal(z.astype(np.float64).get(), [1.5, 0, 0])


def test_bool_arithmetic_is_logical():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    x, y = la.asarray(a), la.asarray(b)
    for lazy, ref in [(x + y, a + b), (x * y, a * b), (np.maximum(x, y), np.maximum(a, b))]:
        assert lazy.dtype == np.bool_
        np.testing.assert_array_equal(lazy.get().view(np.uint8), ref.view(np.uint8))


def test_nonfinite_constants():
    a = np.array([np.nan, -1.0, 0.0, 2.0], np.float32)
    x = la.asarray(a)
    for lazy, ref in [(np.maximum(x, np.nan), np.maximum(a, np.nan)),
                      (x + np.float32(np.inf), a + np.float32(np.inf)),
                      (la.where(x > 0, -np.inf, x), np.where(a > 0, -np.inf, a)),
                      (la.full(3, np.inf, dtype=np.float32), np.full(3, np.inf, np.float32)),
                      (la.clip(x, -np.inf, 1.0), np.clip(a, -np.inf, 1.0))]:
        assert lazy.dtype == ref.dtype
        np.testing.assert_array_equal(lazy.get(), ref)


@SETTINGS
@given(_operands(1, [np.dtype(np.float32), np.dtype(np.float64)], scalars=False),
       st.integers(-3, 3))
def test_round_clip_nan_to_num(args, decimals):
    [a] = args
    x = la.asarray(a)
    lo, hi = -1.5, 2.0
    results = [(la.round(x, decimals), np.round(a, decimals)),
               (np.round(x, decimals), np.round(a, decimals)),
               (np.around(x, decimals), np.around(a, decimals)),
               (la.clip(x, lo, hi), np.clip(a, lo, hi)),
               (np.clip(x, np.nan, hi), np.clip(a, np.nan, hi)),
               (la.clip(x, max=hi), np.clip(a, max=hi)),
               (la.nan_to_num(x), np.nan_to_num(a)),
               (np.nan_to_num(x, nan=-7.0, posinf=9.0), np.nan_to_num(a, nan=-7.0, posinf=9.0))]
    for lazy, ref in results:
        assert isinstance(lazy, la.LazyArray)
        assert lazy.dtype == ref.dtype
    stacked = la.stack([lazy for lazy, _ in results]).get()
    for k, (_, ref) in enumerate(results):
        if k < 3:
            # scaling by 10**decimals rounds identically in both
            np.testing.assert_array_equal(stacked[k], ref, err_msg=f"round {decimals}")
        else:
            np.testing.assert_array_equal(stacked[k], ref, err_msg=str(k))


def test_round_integers_and_half_even():
    a = np.array([15, 25, -15, -25, 7, 123], np.int64)
    for decimals in (-2, -1, 0, 2):
        lazy = la.round(la.asarray(a), decimals)
        assert lazy.dtype == a.dtype
        np.testing.assert_array_equal(lazy.get(), np.round(a, decimals))
    f = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.25, 0.35])
    np.testing.assert_array_equal(la.round(la.asarray(f)).get(), np.round(f))
    np.testing.assert_array_equal(la.asarray(f).round(1).get(), np.round(f, 1))


def test_clip_integer_bounds_like_numpy():
    a = np.array([-128, -3, 0, 100, 127], np.int8)
    for lo, hi in [(0, 1000), (-1000, 5), (np.int16(-5), 5)]:
        ref = np.clip(a, lo, hi)
        lazy = la.clip(la.asarray(a), lo, hi)
        assert lazy.dtype == ref.dtype
        np.testing.assert_array_equal(lazy.get(), ref)


@SETTINGS
@given(_operands(2, [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32)],
                 scalars=False), st.booleans())
def test_isclose_allclose(args, equal_nan):
    a, b = args
    b = b if b.dtype.kind == "f" else b.astype(np.float64)
    near = b * (1 + 1e-6)
    with np.errstate(all="ignore"):
        for other in (b, near):
            ref = np.isclose(a, other, equal_nan=equal_nan)
            lazy = la.isclose(la.asarray(a), la.asarray(other), equal_nan=equal_nan)
            assert lazy.dtype == ref.dtype and lazy.shape == ref.shape
            np.testing.assert_array_equal(lazy.get(), ref)
            assert la.allclose(la.asarray(a), la.asarray(other), equal_nan=equal_nan) == \
                np.allclose(a, other, equal_nan=equal_nan)
    assert isinstance(np.isclose(la.asarray(a), la.asarray(b)), la.LazyArray)


def test_diff_angle_modf_divmod():
    a = np.array([[1.0, 4.0, -2.0, np.inf], [0.5, 0.5, 3.0, -1.0]])
    x = la.asarray(a)
    for n in (0, 1, 2):
        np.testing.assert_array_equal(la.diff(x, n).get(), np.diff(a, n))
    np.testing.assert_array_equal(np.diff(x, axis=0, prepend=0.0).get(),
                                  np.diff(a, axis=0, prepend=0.0))
    flags = np.array([True, False, False, True])
    np.testing.assert_array_equal(la.diff(la.asarray(flags)).get(), np.diff(flags))
    np.testing.assert_allclose(la.angle(x).get(), np.angle(a))
    np.testing.assert_allclose(la.angle(x, deg=True).get(), np.angle(a, deg=True))
    frac, whole = np.modf(x)
    rf, rw = np.modf(a)
    np.testing.assert_array_equal(frac.get(), rf)
    np.testing.assert_array_equal(np.signbit(frac.get()), np.signbit(rf))
    np.testing.assert_array_equal(whole.get(), rw)
    q, r = np.divmod(la.asarray(np.array([7, -7, 0])), 3)
    np.testing.assert_array_equal(q.get(), [2, -3, 0])
    np.testing.assert_array_equal(r.get(), [1, 2, 0])


def test_unsupported_say_so():
    with pytest.raises(la.DTypeError, match="float16"):
        np.sin(la.asarray(np.arange(3, dtype=np.int8)))
    with pytest.raises(la.DTypeError, match="complex"):
        np.arctan2(la.asarray(np.ones(2, np.complex64)), 1.0)
    with pytest.raises(la.DTypeError):
        np.left_shift(la.asarray(np.ones(2, np.uint64)), la.asarray(np.ones(2, np.int64)))
    with pytest.raises(la.DTypeError):
        np.bitwise_and(la.asarray(np.ones(2)), 1)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_sqrt_on_the_branch_cut(dtype):
    """A zero imaginary part's sign picks the side of the cut, as in NumPy
    (sqrt(-1 - 0j) is -1j); special values as NumPy has them."""
    nan, inf = np.nan, np.inf
    z = np.array([complex(-1, -0.0), complex(-1, 0.0), complex(-0.0, -0.0), complex(0.0, -0.0),
                  complex(4, -0.0), complex(-inf, -0.0), complex(inf, -0.0),
                  complex(nan, 0.0), complex(0, nan), complex(-3, -4)], dtype)
    got, want = np.sqrt(la.asarray(z)).get(), np.sqrt(z)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))
    np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_tanh_and_tan_near_their_poles(dtype):
    """Near tan's poles complex tanh and tan keep their relative accuracy
    (a formula dividing by 1 + cos(2y) gave inf for tanh(1.5707j) in single
    precision); far from the origin tanh goes to +-1."""
    z = np.array([1.5625j, 1.57j, 1.5707j, 0.3 + 1.5625j, 1.5707, 1.5707 + 1e-3j,
                  12 + 3j, -30 - 1j, complex(-0.0, -0.0), 0.5 - 0.25j], dtype)
    single = dtype == np.complex64
    for f in (np.tanh, np.tan):
        got, want = f(la.asarray(z)).get(), f(z)
        np.testing.assert_allclose(got, want, rtol=1e-6 if single else 1e-14, err_msg=f.__name__)
        np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_division_matches_numpy(queue, dtype):
    """Smith's division, as NumPy's: by zero each part is divided by a zero
    ((1+1j)/0 is inf+infj, 1/0 inf+nanj); by infinities and NaN, and
    ordinary quotients to rounding."""
    specials = np.array([1 + 1j, 1 + 0j, 1j, -1 + 2j, 0j, complex("nan"), 1 - 1j,
                         complex(np.inf, 1), complex(1, -np.inf), 3e-30 + 4e-30j], dtype)
    num = np.repeat(specials, specials.size)
    den = np.tile(np.array([0j, -0.0 + 0j, 0 - 0j, 2 + 0j, 1e-30 + 1e30j, complex(np.inf, 0),
                            1 - 1j, complex("nan"), 3 + 4j, -1e-20 + 0j], dtype), specials.size)
    with np.errstate(all="ignore"):
        want = num / den
        got = np.asarray(la.asarray(num) / la.asarray(den))
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps, equal_nan=True)
    assert np.array_equal(np.isinf(got.real), np.isinf(want.real))
    assert np.array_equal(np.isinf(got.imag), np.isinf(want.imag))
    rng = np.random.default_rng(5)
    a, b = ((rng.standard_normal(1000) + 1j * rng.standard_normal(1000)).astype(dtype)
            for _ in range(2))
    np.testing.assert_allclose(np.asarray(la.asarray(a) / la.asarray(b)), a / b,
                               rtol=4 * np.finfo(dtype).eps)


def _sign_scaled(z):
    """NumPy's sign of *z*, below 2**-100 of z times 2**100 (exact): there
    |z| of subnormal parts rounds to a few bits and NumPy's quotient with it
    (1+1j for the smallest subnormal pair) is that far off; lazyarray scales."""
    with np.errstate(all="ignore"):
        return np.sign(np.where(abs(z) < 2.0 ** -100, z * 2.0 ** 100, z))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_sign_at_the_ends_of_the_range(dtype):
    """sign(z) is z / |z| with each part divided as a real: subnormal and
    huge |z| give unit results (a complex division gave inf+nanj for 1e-40
    and 0.99999994 for 3e38); where |z| overflows, the infinite part's sign
    (NumPy's 1j for 3e38+3e38j in single precision); NaN where both parts
    are infinite or one is NaN and neither infinite."""
    tiny = float(np.finfo(dtype).smallest_subnormal)
    big = float(np.finfo(dtype).max)
    inf, nan = np.inf, np.nan
    z = np.array([tiny, -tiny * 1j, complex(tiny, tiny), 1e-40, big, complex(big, big),
                  complex(-big, big / 2), complex(inf, 1), complex(1, -inf), complex(inf, inf),
                  complex(inf, nan), complex(nan, -inf), complex(nan, 1), complex(1, nan),
                  complex(-0.0, 0.0), complex(0.0, -0.0), 3 + 4j, -5e-310 + 1e-310j], dtype)
    got = np.asarray(np.sign(la.asarray(z)))
    want = _sign_scaled(z)
    np.testing.assert_allclose(got, want, rtol=2 * np.finfo(dtype).eps, atol=0, equal_nan=True)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    rng = np.random.default_rng(7)
    r = (rng.standard_normal(500) + 1j * rng.standard_normal(500)) * 10.0 ** rng.integers(
        -300 if dtype == np.complex128 else -40, 300 if dtype == np.complex128 else 38, 500)
    r = r.astype(dtype)
    np.testing.assert_allclose(np.asarray(np.sign(la.asarray(r))), _sign_scaled(r),
                               rtol=2 * np.finfo(dtype).eps, atol=0)


@pytest.mark.parametrize("fn", [lambda m, x: m.sum(m.float_power(x, np.float32(0.1)), axis=-1),
                                lambda m, x: m.mean(m.float_power(x, 2.5) * x, axis=-1),
                                lambda m, x: m.sum(m.fmod(x * 1.5, 2.25), axis=-1)])
def test_double_powers_in_row_sums(fn):
    """Row sums of double powers and remainders (the fuzzer's seed 1004,
    graph 970: PoCL's ``pow`` of 16 doubles, in a CPU row sum's vector
    accumulator, was wrong in some lanes: 2% off)."""
    a = (np.arange(9 * 1100) % 7).reshape(9, 1100).astype(np.uint8)
    a.flat[70::13] = 255
    np.testing.assert_allclose(np.asarray(fn(la, la.asarray(a))), fn(np, a), rtol=1e-13)
