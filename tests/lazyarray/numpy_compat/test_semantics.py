"""NumPy's answers (and NumPy's errors) for the cases where C's rules differ:
narrow integers fused into wider consumers, out-of-range comparisons,
negative scalar bases, powers, NaN in max/min, float ``//`` and ``%``,
non-bool conditions, bool max/min, byte order, shapes given as floats."""

import operator
from functools import partial

import numpy as np
import pytest

import lazyarray as la
from tests.helpers import error_match


def _same(got, want):
    """Equal values, dtypes and shapes (NaN where NumPy has NaN; the sign of a
    zero too)."""
    got = np.asarray(got.get() if isinstance(got, la.LazyArray) else got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.array_equal(got, want, equal_nan=want.dtype.kind in "fc"), (got, want)
    if want.dtype.kind == "f":
        finite = ~np.isnan(want)
        assert np.array_equal(np.signbit(got[finite]), np.signbit(want[finite])), (got, want)


def _both(f, *arrays):
    """f(np, *arrays) and f(la, *lazy arrays), compared (NumPy's error, if
    it raises one, must be lazyarray's too)."""
    try:
        with np.errstate(all="ignore"):
            want = f(np, *arrays)
    except Exception as e:
        with pytest.raises(type(e)):
            f(la, *(la.asarray(a) for a in arrays)).get()
        return
    _same(f(la, *(la.asarray(a) for a in arrays)), want)


NARROW = [np.int8, np.uint8, np.int16, np.uint16]


@pytest.mark.parametrize("dtype", NARROW)
def test_narrow_integers_wrap_inside_wider_consumers(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.max, info.max - 3, info.min, 0, 1], dtype)
    _both(lambda m, a: a + a + 0.5, x)
    _both(lambda m, a: (a * a).astype(np.int64), x)
    _both(lambda m, a: (3 - a).astype(np.int64), x)
    _both(lambda m, a: (~a).astype(np.float64), x)
    _both(lambda m, a: ((a << 3) + 1).astype(np.int32), x)
    _both(lambda m, a: (-a).astype(np.int64), x)
    _both(lambda m, a: (a * dtype(3)).astype(np.int32) // 7, x)
    _both(lambda m, a: m.where(a + a > 10, 1.0, 0.0), x)


def test_issue_examples_of_narrow_wrapping():
    _both(lambda m, u: u + u + 0.5, np.array([200], np.uint8))
    _both(lambda m, u: (3 - u).astype(np.int64), np.array([15], np.uint8))
    _both(lambda m, u: (u * np.int8(3)).astype(np.int32), np.array([100], np.int8))


_COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
                "==": operator.eq, "!=": operator.ne}


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64, np.int8,
                                   np.int32, np.int64])
@pytest.mark.parametrize("op", list(_COMPARISONS))
def test_comparisons_with_python_ints_outside_the_range(dtype, op):
    info = np.iinfo(dtype)
    x = np.array([info.min, 0, 9, info.max], dtype)
    compare = _COMPARISONS[op]
    for c in (-1, info.min - 1, info.max + 1, 2**70, -2**70):
        _same(compare(la.asarray(x), c), compare(x, c))
        _same(compare(c, la.asarray(x)), compare(c, x))


def test_negative_scalar_base():
    x = np.array([2.0, 3.0, 0.5])
    _both(lambda m, a: (-2) ** a, x)
    _both(lambda m, a: (-2.0) ** a, x)
    _both(lambda m, a: a - 3 * -a, x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("exponent", [2, 3, 0.5, -1, 1, 0, -2, 2.5, 4, -3, -4, -0.5, 1.5,
                                      -1.5, -2.5, 0.7])
def test_scalar_powers(dtype, exponent):
    x = np.array([-np.inf, -2.0, -0.0, 0.0, 0.3, 1.7, 3.0, 1e20, np.inf, np.nan], dtype)
    if exponent in (2, 0.5, -1, 1, 0):      # NumPy's exact square, sqrt, 1/x, ...
        _both(lambda m, a: a ** exponent, x)
        return
    with np.errstate(all="ignore"):
        want = x ** exponent
    got = (la.asarray(x) ** exponent).get()
    assert got.dtype == want.dtype
    # pow itself may differ by an ulp between libm and OpenCL (also where
    # the result is subnormal, as 1e20 ** -2 in float32)
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps,
                               atol=2 * np.finfo(dtype).smallest_subnormal)


def test_square_of_float64_rows_is_exact():
    # PoCL's double16 pown was wrong: x**2 summed along CPU vector rows
    x = np.linspace(-3, 3, 4096 * 3).reshape(3, 4096)
    got = (la.asarray(x) ** 2).sum(axis=1).get()
    np.testing.assert_allclose(got, (x * x).sum(axis=1), rtol=1e-13)
    y = np.arange(1, 200, dtype=np.float64) * 0.3
    np.testing.assert_allclose(la.sum(la.asarray(y) ** 2).get(), np.sum(y ** 2), rtol=1e-14)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16])
def test_integer_powers(dtype):
    x = np.array([0, 1, 2, 3, 5, 7], dtype)
    _both(lambda m, a: a ** 2, x)
    _both(lambda m, a: a ** 3, x)
    _both(lambda m, a: a ** a, x)
    with pytest.raises(Exception) as numpy_error:
        x ** -1
    with pytest.raises(type(numpy_error.value)):      # (uint16: an OverflowError)
        la.asarray(x) ** -1
    with pytest.raises(ValueError, match="negative integer powers"):
        la.asarray(x) ** np.int8(-1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((7,), None), ((300,), None), ((200000,), None),
                                        ((70, 100), 0), ((70, 100), 1), ((100, 70), -1),
                                        ((5, 4099), 1), ((64, 300), None)])
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_and_min_propagate_nan(dtype, shape, axis, op):
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    for position in (0, x.size // 2, x.size - 1):
        y = x.copy()
        y.flat[position] = np.nan
        _same(getattr(la.asarray(y), op)(axis=axis), getattr(y, op)(axis=axis))
    _same(getattr(la.asarray(x), op)(axis=axis), getattr(x, op)(axis=axis))


def test_nan_propagates_through_row_kernels():
    x = np.random.default_rng(2).standard_normal((80, 100))
    x[3, 7] = np.nan
    a = la.asarray(x)
    _same(a - a.max(axis=-1, keepdims=True), x - x.max(axis=-1, keepdims=True))
    _same(np.maximum(a, np.nan), np.maximum(x, np.nan))


def test_any_and_all_of_0d_and_empty_axes():
    for v in (np.array(3.0), np.array(0), np.array(-2, np.int8), np.array(True)):
        _both(lambda m, a: a.any(), v)
        _both(lambda m, a: a.all(), v)
    x = np.array([0.0, 2.0])
    _both(lambda m, a: a.any(axis=(), keepdims=True), x)
    _both(lambda m, a: a.all(axis=()), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_floor_divide_and_remainder(dtype):
    a = np.array([1.0, -5.0, 5.0, np.inf, -0.0, 0.0, 1.0, 7.0, -7.0, np.nan, 3.5, -3.5,
                  1e30, 0.7, -0.7], dtype)
    b = np.array([0.001, np.inf, np.inf, 1.0, 3.0, -3.0, 0.0, -0.0, 2.0, 1.0, -np.inf,
                  0.5, 1e-10, 0.1, 0.1], dtype)
    _both(lambda m, x, y: x // y, a, b)
    _both(lambda m, x, y: x % y, a, b)
    _both(lambda m, x: 1.0 // x, np.array([0.001, 0.1, 0.3, -0.3], dtype))


@pytest.mark.parametrize("cond_dtype", [np.float64, np.int32, np.uint8, np.complex64])
def test_where_with_a_condition_that_is_not_bool(cond_dtype):
    c = np.array([0, 1.5, 0, -2, np.nan if np.dtype(cond_dtype).kind in "fc" else 3]
                 ).astype(cond_dtype)
    x = np.arange(5.0)
    _both(lambda m, cc, xx: m.where(cc, xx, 0.0), c, x)


def test_max_and_min_of_bools():
    u = np.arange(12, dtype=np.uint8).reshape(3, 4)
    _both(lambda m, a: (a > 2).max(axis=1), u)
    _both(lambda m, a: (a > 2).min(axis=0), u)
    _both(lambda m, a: (a > 2).max(), u)


@pytest.mark.parametrize("dtype", [">f8", ">i4", ">u2", ">c16", "<f4"])
def test_byte_order(dtype):
    x = np.arange(5, dtype=dtype)
    _both(lambda m, a: a + 1, x)
    _same(la.asarray(x), x.astype(np.dtype(dtype).newbyteorder("=")))


def test_shapes_must_be_integers():
    for make in (la.zeros, la.ones, la.empty):
        for shape in [(3.5,), 2.0]:
            numpy_make = partial(getattr(np, make.__name__), shape)
            with pytest.raises(TypeError, match=error_match("shape", numpy_make)):
                make(shape)
    assert la.zeros((np.int64(3), 2)).shape == (3, 2)


def test_complex_kernels_declare_the_helpers_they_use():
    # a complex64 sum whose constant was computed in complex128 used cdouble_*
    # helpers that the preamble did not declare
    _same(la.ones(5000, dtype=np.complex64).sum(), np.ones(5000, dtype=np.complex64).sum())
    z = np.array([1 + 2j, -1j, 3.0], np.complex64)
    _both(lambda m, a: a ** 2, z)
    _both(lambda m, a: a ** 0.5 + 1j, z)


def test_float32_operations_are_rounded_one_by_one():
    # no fused multiply-add: NumPy rounds the products before adding
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 4096)).astype(np.float32)
    c = rng.standard_normal(4096)
    _both(lambda m, x, y, z: (x * 0.1 + y * 0.3) + z, a, b, c)
    _both(lambda m, x, y: x * y - x * np.float32(0.7), a, b)
    _both(lambda m, x, y, z: m.cumsum(x * y) + z, a, b, c)


def test_signed_overflow_wraps_as_in_numpy():
    # C leaves signed overflow undefined (the compiler computed an int32
    # product in 64 bits inside an int64 sum)
    a1 = np.array([250, 192, 1073741824, 105, 114], dtype=np.int32)
    a2 = np.array([-2097890831, -442692526, 704851712, 67171183, -1198984829], dtype=np.int32)
    _both(lambda m, x, y: (x * y).sum(axis=-1), a1, a2)
    rng = np.random.default_rng(3)
    for dtype in (np.int32, np.int64):
        info = np.iinfo(dtype)
        a, b = rng.integers(info.min, info.max, (2, 5000), dtype=dtype)
        _both(lambda m, x, y: x * y + x, a, b)
        _both(lambda m, x, y: (x * y).reshape(50, 100).sum(axis=1), a, b)
        _both(lambda m, x: x ** 3 - (x << 5), a)
        _both(lambda m, x, info=info: -x + info.min, a)


def test_argmax_over_an_axis_of_an_empty_array():
    a = np.zeros((3, 0))
    _both(lambda m, x: x.argmax(axis=0), a)
    with pytest.raises(ValueError, match="empty sequence"):
        la.asarray(a).argmax(axis=1)


def test_any_and_all_of_complex_values():
    z = np.array([[0j, 1j], [0j, 0j], [2 + 0j, 1j]] * 30)
    _both(lambda m, x: x.any(axis=-1, keepdims=True), z)
    _both(lambda m, x: x.all(axis=0), z)
    _both(lambda m, x: x.any(), z)


def test_real_and_conj_of_real_values_keep_their_grouping():
    a = np.array([[1., 2.], [4., 8.]])
    _both(lambda m, x: m.conjugate(m.concatenate([x, x])).sum(axis=-1), a)
    _both(lambda m, x: m.conjugate(m.where(x > 2, x, 0.0)) * 2, a)
    _both(lambda m, x: m.real(m.where(x > 2, x, 0.0)) * 2, a)


def test_any_and_all_over_no_axis_test_for_nonzero():
    _both(lambda m, x: x.any(), np.array(0.4))
    _both(lambda m, x: x.all(axis=()), np.array([0.4, -0.5, 0.0]))


@pytest.mark.parametrize("dtype", NARROW)
def test_reductions_of_narrow_integer_expressions(dtype):
    x = np.array([3, 5, 7, 100], dtype)
    _both(lambda m, a: m.minimum(a, a).max(), x)
    _both(lambda m, a: m.where(a > 4, a, a).max(), x)
    _both(lambda m, a: (a | a).max(axis=0), x)
    _both(lambda m, a: m.fmin(a, a).min(axis=None, keepdims=True), x)
    rows = (np.arange(1, 1501) * 37 % 120).astype(dtype).reshape(3, 500)
    _both(lambda m, a: m.clip(a, None, 60).sum(axis=1), rows)
    _both(lambda m, a: m.minimum(a, 60).astype(np.float32).sum(axis=1), rows)
    _both(lambda m, a: m.clip(a, None, 60).max(axis=1), rows)


@pytest.mark.parametrize("name", ["fmod", "hypot", "power", "arctan2", "copysign"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_non_finite_scalars_as_function_arguments(name, dtype):
    x = np.array([1.5, -2.0, 0.0], dtype)
    for c in (np.inf, -np.inf, np.nan):
        _both(lambda m, a, c=c: getattr(m, name)(a, c), x)


def test_bool_products_store_bools():
    b1 = np.array([[True, True, False]])
    b2 = np.array([[True], [True], [True]])
    _both(lambda m, p, q: (p @ q).astype(np.int64), b1, b2)
    _both(lambda m, p, q: (p @ q).sum(), b1, b2)
    _both(lambda m, p, q: m.einsum('ij,jk->ik', p, q).astype(np.int8), b1, b2)
    _both(lambda m, p: p.sum(axis=1, dtype=bool).astype(int), b1)


def test_out_of_range_python_ints_wrap_in_where():
    u8 = np.array([25, 127, 1], np.uint8)
    _both(lambda m, v: v >> m.where(v > 3, v, -2**63), u8)
    _both(lambda m, v: m.where(v > 3, v, -1) + v, u8)


def test_astype_to_the_same_dtype_is_a_copy():
    x = la.asarray(np.array([1., 2., 3.]))
    y = x.astype(np.float64)
    y[0] = 5
    _same(x, np.array([1., 2., 3.]))
    _same(y, np.array([5., 2., 3.]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint16, np.bool_])
def test_floor_divide_by_nan(dtype):
    x = np.array([1, 2, 0], dtype)
    _both(lambda m, a: m.floor_divide(a, np.float32(np.nan)), x)
    _both(lambda m, a: a // np.nan, x)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_negation_keeps_infinite_parts(dtype):
    z = np.array([complex(np.inf, 0.5), complex(1, np.inf), 2 + 3j], dtype)
    _both(lambda m, a: -a, z)
    _both(lambda m, a: m.negative(a), z)
    _both(lambda m, a: 0 - a, z)
    _both(lambda m, a: m.ones(3, dtype) - a, z)


def test_empty_bool_products_and_reductions():
    _both(lambda m, a, b: a @ b, np.zeros((2, 0), bool), np.zeros((0, 3), bool))
    _both(lambda m, a: a.all(axis=1), np.zeros((2, 0), bool))
    _both(lambda m, a: a.any(axis=1), np.zeros((2, 0), bool))


@pytest.mark.parametrize("x,bounds", [
    (np.array([True, False]), (2**64 - 1, 1e30)), (np.array([True, False]), (3, np.uint8(200))),
    (np.array([True, False]), (None, 0)), (np.array([-3, 100, 7], np.int8), (-1000, 1000)),
    (np.array([-3, 100, 7], np.int8), (np.int16(-300), None)),
    (np.array([1.5, np.nan]), (np.float32(0), 1))])
def test_clip_resolves_its_three_operands_together(x, bounds):
    _both(lambda m, a: m.clip(a, *bounds), x)


def test_a_row_reduction_read_by_two_kernels_is_stored():
    rng = np.random.default_rng(4)
    for shape in [(64, 200), (64, 2), (2000, 2)]:
        a = rng.random(shape)

        def f(m, x):
            v = x * x.max(axis=1, keepdims=True)
            return v - v.sum(axis=0, keepdims=True)

        def g(m, x):
            v = x - x.min(axis=-1, keepdims=True)
            return m.where((v != 0).any(axis=0, keepdims=True), v, 1) * v.mean(axis=0)

        for h in (f, g):
            want = h(np, a)
            np.testing.assert_allclose(h(la, la.asarray(a)).get(), want, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_sqrt_of_huge_and_tiny_values(dtype):
    big = np.finfo(np.dtype(dtype).char.lower()).max
    z = np.array([complex(big, 1e-30), complex(big / 2, big / 2), complex(-big / 2, big / 3),
                  3 + 4j, -3 - 4j, complex(1e-40, 1e-41), complex(-1e-42, 1e-44),
                  complex(np.inf, 1), complex(-np.inf, 1), complex(1, np.inf),
                  complex(1, -np.inf)], dtype)
    got = la.sqrt(la.asarray(z)).get()
    np.testing.assert_allclose(got, np.sqrt(z), rtol=4 * np.finfo(got.real.dtype).eps, atol=0)


def test_min_and_max_of_literals_and_conditionals_on_narrow_and_wide_integers():
    # NVIDIA's OpenCL found min(short, 256) and max(long, c ? 1 : 1) ambiguous
    _both(lambda m, a: m.where(a, True, 1).max(axis=0, keepdims=True),
          np.array([75], np.uint8))
    for dtype in (np.int16, np.uint8, np.int64, np.uint64):
        x = np.array([3, 0, 5], dtype)

        def f(m, a, dtype=dtype):
            b = a.astype(dtype)
            b[0] = 100
            return m.min(b, axis=0) + m.max(m.where(a > 1, 1, 2))

        _both(f, x)


def test_array_keys_cast_numpy_scalars_as_numpy_does():
    x = np.array([1, 2, 3, 4], np.int32)
    mask = np.array([True, False, True, False])

    def fancy(m, a):
        b = a.astype(np.int32)
        b[np.array([1, 3])] = np.uint32(4000000000)
        b[a > 2] = np.uint64(2**63)
        return b

    _both(fancy, x)
    with pytest.raises(OverflowError):
        y = la.asarray(x)
        y[mask] = 2**40                          # a Python int out of range: NumPy's error


def test_negative_scalar_powers_of_empty_integer_arrays():
    _both(lambda m, a: a ** -2, np.zeros((2, 0, 3), np.int8))


def test_a_scan_never_holds_a_row_reduction():
    rng = np.random.default_rng(7)
    a1 = rng.integers(-6, 7, (65, 70)).astype(np.int8)
    a2 = rng.integers(-128, 128, (65, 70)).astype(np.int8)
    _both(lambda m, x, y: m.fmod(x, y * y.max(axis=1, keepdims=True) | 1).cumsum(axis=-2),
          a1, a2)


@pytest.mark.parametrize("axis", [0, 1])
def test_scans_start_from_the_first_element(layout_kind, axis):
    """NumPy's cumsum and cumprod copy the first element (its reductions
    start from the identity): a running sum keeps a negative zero's sign,
    and a complex running product of inf+0j or of a NaN part is not spoilt by
    ``(1+0j) * z`` (found by the fuzzer, seed 1010: ``cumprod`` of
    -2+nanj along an axis of one, then ``astype(float32)``)."""
    x = np.full((70, 66), -0.0, np.float32)
    x[5, 7] = x[7, 5] = 1.0
    _both(lambda m, a: m.cumsum(a, axis=axis), x)
    _both(lambda m, a: m.cumprod(a, axis=axis), x)
    for dtype in (np.complex64, np.complex128):
        z = np.ones((3, 4), dtype)
        z[0, :] = [complex(-2, np.nan), complex(np.inf, 0), complex(0, -np.inf), -0.0]
        z[:, 0] = [complex(-2, np.nan), complex(np.inf, 0), 2.0]
        _both(lambda m, a: m.cumprod(a, axis=axis), z)
        _both(lambda m, a: m.cumprod(a[:1], axis=axis).astype(np.float32), z)
        _both(lambda m, a: m.cumsum(a, axis=axis), z)


@pytest.mark.parametrize("shape,axis", [((64, 200), 0), ((64, 200), 1), ((5000,), None),
                                        ((300, 3, 70), (0, 1))])
@pytest.mark.parametrize("op", ["any", "all"])
def test_any_and_all_of_small_floats_on_every_layout(shape, axis, op):
    rng = np.random.default_rng(9)
    x = (np.sign(rng.standard_normal(shape)) * 10.0 ** rng.uniform(-30, 30, shape)
         ).astype(np.float32)
    _both(lambda m, a: getattr(a, op)(axis=axis), x)
    x.flat[::7] = 0
    _both(lambda m, a: getattr(a, op)(axis=axis), x)


def test_operands_that_opt_out_of_ufuncs_get_their_reflected_operator():
    """NumPy's rule for ``__array_ufunc__ = None`` (arraycontext's containers):
    ``lazy * obj`` and ``obj * lazy`` both call the object's operator."""
    class OptsOut:
        __array_ufunc__ = None

        def __rmul__(self, other):
            return ("rmul", "lazy" if isinstance(other, la.LazyArray) else type(other).__name__)

        def __radd__(self, other):
            return ("radd", "lazy" if isinstance(other, la.LazyArray) else type(other).__name__)

    x = la.asarray(np.arange(3.0))          # (a host array under the host tier)
    assert x * OptsOut() == ("rmul", "lazy")
    assert x + OptsOut() == ("radd", "lazy")
    assert np.arange(3.0) * OptsOut() == ("rmul", "ndarray")      # (NumPy's own)
    with pytest.raises(TypeError):
        x - OptsOut()
