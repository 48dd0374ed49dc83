"""lazyarray's first slice: elementwise fusion and reductions vs NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la
from tests.helpers import launches_of


def test_elementwise_chain_is_one_kernel():
    rng = np.random.default_rng(0)
    a, b, c = (rng.random((20, 30), dtype=np.float32) for _ in range(3))
    x, y, z = la.asarray(a), la.asarray(b), la.asarray(c)
    expr = np.sin(x) * y + z
    assert isinstance(expr, la.LazyArray) and expr.shape == (20, 30)
    value, launches = launches_of(expr.get)
    assert launches == 1
    np.testing.assert_allclose(value, np.sin(a) * b + c, rtol=1e-5)


def test_results_are_computed_once():
    x = la.asarray(np.arange(10.0))
    y = x * 2 + 1
    y.get()
    _, launches = launches_of(y.get)
    assert launches == 0


def test_reduction_then_broadcast_back():
    rng = np.random.default_rng(1)
    a = rng.random((7, 13))
    x = la.asarray(a)
    centered = x - x.mean(axis=1, keepdims=True)
    value, launches = launches_of(centered.get)
    assert launches == 2          # the row means are stored, the rest fuses
    np.testing.assert_allclose(value, a - a.mean(axis=1, keepdims=True))


def test_numpy_promotion_with_python_scalars():
    x = la.asarray(np.arange(4, dtype=np.float32))
    assert (x * 2.5).dtype == np.float32
    assert (la.asarray(np.arange(4, dtype=np.int32)) / 2).dtype == np.float64
    assert (x > 1).dtype == np.bool_
    np.testing.assert_array_equal((x * 2.5).get(), np.arange(4, dtype=np.float32) * 2.5)


def test_errors_at_call_time():
    with pytest.raises(la.ShapeError, match="broadcast"):
        la.asarray(np.ones(3)) + la.asarray(np.ones(4))
    with pytest.raises(la.ShapeError, match="zero-size"):
        la.asarray(np.ones((0, 3))).max(axis=0)
    with pytest.raises(la.ShapeError, match="out of bounds"):
        la.asarray(np.ones(3)).sum(axis=2)


_UNARY = ["sin", "exp", "negative", "absolute", "sqrt"]
_BINARY = ["add", "subtract", "multiply", "maximum", "minimum"]


@st.composite
def _expressions(draw):
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(0, 4)) for _ in range(ndim))
    n_inputs = draw(st.integers(1, 3))
    inputs = []
    for _ in range(n_inputs):
        # broadcastable variants of the shape: drop leading axes, set some to 1
        k = draw(st.integers(0, ndim))
        sub = tuple(1 if draw(st.booleans()) else s for s in shape[k:])
        inputs.append(sub)
    ops = draw(st.lists(st.tuples(st.sampled_from(_UNARY + _BINARY),
                                  st.integers(0, 10), st.integers(0, 10)), max_size=5))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    reduce_axis = draw(st.one_of(st.none(), st.integers(0, 2)))
    return inputs, ops, dtype, reduce_axis


def _apply(mod_fns, values, ops):
    stack = list(values)
    for name, i, j in ops:
        a = stack[i % len(stack)]
        if name in _UNARY:
            if name == "sqrt":
                stack.append(mod_fns["sqrt"](mod_fns["absolute"](a)))
            else:
                stack.append(mod_fns[name](a))
        else:
            stack.append(mod_fns[name](a, stack[j % len(stack)]))
    return stack[-1]


@settings(max_examples=40)
@given(_expressions())
def test_random_expressions_match_numpy(case):
    shapes, ops, dtype, reduce_axis = case
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(dtype) if s else dtype(rng.standard_normal())
              for s in shapes]
    fns = {name: getattr(np, name) for name in _UNARY + _BINARY}
    expected = _apply(fns, [np.asarray(a) for a in arrays], ops)
    lazy = _apply(fns, [la.asarray(a) for a in arrays], ops)
    if isinstance(lazy, la.LazyArray) and reduce_axis is not None and lazy.ndim:
        axis = reduce_axis % lazy.ndim
        expected = np.asarray(expected).sum(axis=axis)
        lazy = lazy.sum(axis=axis)
    result = np.asarray(lazy)
    assert result.shape == np.shape(expected)
    assert result.dtype == np.asarray(expected).dtype
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(result, expected, rtol=tol, atol=tol)


_SLICES = st.one_of(st.integers(-3, 3).map(lambda i: i),
                    st.tuples(st.one_of(st.none(), st.integers(-5, 5)),
                              st.one_of(st.none(), st.integers(-5, 5)),
                              st.sampled_from([None, 1, 2, -1, -2])).map(lambda t: slice(*t)))


@settings(max_examples=40)
@given(st.tuples(st.integers(1, 5), st.integers(1, 5)),
       st.lists(st.one_of(_SLICES, st.none()), min_size=0, max_size=2))
def test_basic_indexing_matches_numpy(shape, key):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    key = tuple(key)
    try:
        expected = a[key]
    except IndexError:
        with pytest.raises(IndexError):   # the error NumPy raises
            la.asarray(a)[key]
        return
    result = la.asarray(a)[key]
    assert result.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(result), expected)


def test_views_fuse_into_one_kernel():
    u = np.random.default_rng(3).random((10, 12))
    x = la.asarray(u)
    step = x[1:-1, 1:-1] + 0.1*(x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:]
                                - 4*x[1:-1, 1:-1])
    value, launches = launches_of(step.get)
    assert launches == 1
    ref = u[1:-1, 1:-1] + 0.1*(u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                               - 4*u[1:-1, 1:-1])
    np.testing.assert_allclose(value, ref)


@pytest.mark.parametrize("new_shape", [(3, 8), (-1,), (2, -1, 3), (24, 1)])
def test_transpose_and_reshape(new_shape):
    a = np.arange(24.0).reshape(4, 6)
    x = la.asarray(a)
    np.testing.assert_array_equal(np.asarray(x.T), a.T)
    np.testing.assert_array_equal(np.asarray(x.T.reshape(new_shape)), a.T.reshape(new_shape))
    with pytest.raises(la.ShapeError, match="reshape"):
        x.reshape(5, 5)


def test_python_protocols(queue):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = la.asarray(a)
    rows = list(x)
    assert len(rows) == 2 and all(isinstance(r, la.LazyArray) for r in rows)
    np.testing.assert_array_equal(rows[1].get(), a[1])
    assert [float(v) for v in x[0]] == [0.0, 1.0, 2.0]
    assert x.__array_namespace__() is la
    with pytest.raises(IndexError, match="out of bounds"):
        x[2]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(TypeError, match="0-d"):
        iter(x.sum())


def test_pyopencl_buffers_changed_in_place_are_read_again(queue):
    import pyopencl.array as cla
    buf = cla.to_device(queue, np.arange(4, dtype=np.float32))
    first = la.asarray(buf) + 1
    np.testing.assert_array_equal(first.get(), [1, 2, 3, 4])
    buf.fill(10)                                   # changed outside lazyarray
    second = la.asarray(buf) + 1
    np.testing.assert_array_equal(second.get(), [11, 11, 11, 11])
    np.testing.assert_array_equal(first.get(), [1, 2, 3, 4])   # computed before


@pytest.mark.parametrize("fill", [True, False, 0, 3, 2.5])
def test_computed_constant_read_as_array(fill):
    """A 0-d constant array whose value was computed (printed) is read as the
    array it became by later kernels (once a wrong argument kind)."""
    out = la.full((), fill)
    assert repr(out)
    assert bool(la.all(la.equal(out, la.asarray(fill))))
    assert (out + la.asarray(fill)).item() == np.asarray(fill) + np.asarray(fill)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grouped_sums_round_as_numpys(queue, dtype):
    # (a + (b - c) is not a + b - c in floating point: the generated code
    # keeps the grouping, so every result equals NumPy's bit for bit)
    rng = np.random.default_rng(9)
    x, y, z = ((rng.standard_normal(4000) * 10.0 ** rng.integers(-3, 4, 4000)).astype(dtype)
               for _ in range(3))
    lx, ly, lz = (la.asarray(v) for v in (x, y, z))
    for got, want in [(lx + (ly - lz), x + (y - z)), (lx + (ly + lz), x + (y + z)),
                      ((lx + ly) + lz, (x + y) + z), (lx - (ly - lz), x - (y - z)),
                      (lx * (ly * lz), x * (y * z)), (lx + ly * (lz + lx), x + y * (z + x))]:
        np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_abs_of_the_most_negative_integer_stays_negative_downstream(queue, dtype):
    # (NumPy's abs wraps: abs(INT_MIN) is INT_MIN, and the ops after it see it
    # so; NVIDIA's OpenCL compiler took every abs written on int16 or int32
    # itself for non-negative: casts, products, remainders, signs went wrong)
    y = np.array([np.iinfo(dtype).min, 7, -3, np.iinfo(dtype).max, 0], dtype)
    x = la.asarray(y)
    wrong = []
    with np.errstate(all="ignore"):
        for name, op in [("remainder", lambda a: np.abs(a) % 5),
                         ("floor_divide", lambda a: np.abs(a) // 5),
                         ("sign", lambda a: np.sign(np.abs(a))),
                         ("right_shift", lambda a: np.abs(a) >> 1),
                         ("less", lambda a: np.abs(a) < 0),
                         ("astype", lambda a: np.abs(a).astype(np.int64)),
                         ("prod", lambda a: np.abs(a).prod(keepdims=True, dtype=np.int64)),
                         ("transposed_prod", lambda a: np.abs(a.reshape(5, 1).T).prod(
                             axis=0, dtype=np.int64))]:
            got, want = np.asarray(op(x)), op(y)
            assert got.dtype == want.dtype
            if not np.array_equal(got, want):
                wrong.append(name)
    assert not wrong, wrong


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.uint32])
def test_floats_beyond_a_narrow_integer_type_wrap_as_numpys_casts_fused_or_not(dtype):
    # C leaves such conversions undefined; NumPy's (on x86) go through a
    # 32-bit integer: -2.5 as uint8 is 254, also inside a fused kernel
    # (where it was kept as -2)
    values = np.array([-2.5, 300.2, 70000.7, -40000.1, 3.9, -0.5])
    with la.tier("device"):
        for source in (values, values.astype(np.float32)):
            x = la.asarray(source)
            np.testing.assert_array_equal(np.asarray(x.astype(dtype)), source.astype(dtype))
            np.testing.assert_array_equal(np.asarray(x.astype(dtype).astype(float) + 1),
                                          source.astype(dtype).astype(float) + 1)


@pytest.mark.parametrize("n", [2, 5, 7])
def test_a_constant_equal_to_the_element_count_is_not_the_kernels_size(n):
    # (a remembered plan took a flat kernel's element count from the graph
    # position of a constant node equal to it: the next graph of that
    # structure ran over its own constant's count of elements)
    a = np.arange(n, dtype=np.float64)
    b = np.arange(n) % 2 == 0
    with la.tier("device"):
        for scale in (np.float64(n), np.float64(0), np.float64(3.5), np.float64(n)):
            np.testing.assert_array_equal(np.asarray(la.asarray(a) * scale), a * scale)
        for exponent in (n, 0, 3, n, 1):
            np.testing.assert_array_equal(np.asarray(la.asarray(b) ** exponent), b ** exponent)


def test_python_integers_beyond_every_integer_type_with_floats_are_floats():
    # NumPy converts them to (weak) floats; beyond float64, Python's OverflowError
    x = la.asarray(np.array([1.0, -2.0, 0.5]))
    for value in (2**70, -(2**70), 2**64 - 1, 2**64):
        for dtype in (np.float64, np.float32, np.complex64):
            host = np.array([1.0, -2.0, 0.5], dtype)
            got, expected = x.astype(dtype) * value, host * value
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got.get(), expected)
    with pytest.raises(OverflowError, match="too large to convert to float"):
        x * 10**400
    with pytest.raises(OverflowError):
        la.asarray(np.arange(3)) + 2**70


@pytest.mark.parametrize("axis", [2, 5, -3])
def test_diff_refuses_an_axis_out_of_range(axis):
    a = np.arange(12.0).reshape(3, 4)
    with pytest.raises(np.exceptions.AxisError):
        np.diff(a, axis=axis)
    with pytest.raises(np.exceptions.AxisError):
        la.diff(la.asarray(a), axis=axis)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_abs_within_an_ulp_of_numpy_with_hypot_in_the_same_kernel(dtype):
    # (on CPU devices complex abs is kernelcore's vectorizable hypot: its
    # helper and hypot's own are defined once in a kernel using both)
    rng = np.random.default_rng(8)
    h = (rng.standard_normal(2000) * 10.0 ** rng.integers(-30, 30, 2000)
         + 1j * rng.standard_normal(2000) * 10.0 ** rng.integers(-30, 30, 2000)).astype(dtype)
    h[:8] = [complex(np.inf, 1), complex(np.nan, np.inf), complex(1, np.nan), 0, -0.0,
             complex(3e38, 3e38), complex(1e-40, -1e-41), complex(-5, 12)]
    z = la.asarray(h)
    got = (np.abs(z) + np.where(np.hypot(z.real, z.imag) >= 0, 0, 0).astype(np.float32)).get()
    want = np.abs(h)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    # within 2 ulp of the exact modulus, as NumPy's complex abs is (kernelcore's
    # hypot on CPU devices is within one; NVIDIA's double hypot within two)
    exact = np.hypot(h.real.astype(np.longdouble), h.imag.astype(np.longdouble))
    np.testing.assert_array_max_ulp(want[ok], exact[ok].astype(want.dtype), maxulp=2)
    np.testing.assert_array_max_ulp(got[ok], exact[ok].astype(want.dtype), maxulp=2)


@pytest.mark.parametrize("decimals", [400, 308, 309, -309, -400])
def test_round_to_more_digits_than_float64_holds_gives_numpys_values(decimals):
    # (10.0 ** 400 raised OverflowError in Python; NumPy's float64 scale is inf)
    a = np.array([1 / 3, 2.5, -1e300, 0.0])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(la.round(la.asarray(a), decimals).get(),
                                      np.round(a, decimals))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clip_keeps_numpys_signed_zeros_and_nans(dtype):
    """NumPy's clip between two scalar bounds keeps x on a tie (-0.0
    clipped to [0, 2] stays -0.0); with an array bound or one bound only the
    bound wins a tie; NaN bounds and values give NaN (the device tier gave
    the bound on every tie)."""
    x = np.array([1.0, np.nan, -0.0, 0.0, 3.0, -5.0, np.inf, -np.inf], dtype=dtype)
    bounds = [(np.nan, 2.0), (0.0, np.nan), (0.0, 2.0), (-1.0, -0.0), (-1.0, 0.0),
              (-0.0, 0.0), (None, 0.0), (-0.0, None), (2.0, 1.0), (None, -0.0), (0.0, None),
              (np.zeros(8, dtype), -np.zeros(8, dtype)), (np.zeros(8, dtype), 1.0),
              (-1.0, -np.zeros(8, dtype)), (np.array(0.0, dtype), np.array(1.0, dtype))]
    for lo, hi in bounds:
        want = np.clip(x, lo, hi)
        with la.tier("device"):
            got = np.asarray(la.clip(la.asarray(x), lo, hi))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_nan_to_num_keeps_finite_complex_values(dtype):
    """Complex values with no NaN or infinite part come back as they are,
    -0.0 parts included (rebuilt from their parts, a -0.0 imaginary part was
    +0.0); the others get NumPy's replacements."""
    z = np.array([complex(1, -0.0), complex(-0.0, -0.0), complex(-2.5, -0.0),
                  complex(np.nan, 1), complex(np.inf, 2), complex(3, np.nan),
                  complex(0.5, -np.inf), complex(np.nan, np.nan)], dtype=dtype)
    finite = np.isfinite(z)
    for kwargs in ({}, {"nan": 1.5, "posinf": 7.0, "neginf": -7.0}):
        want = np.nan_to_num(z, **kwargs)
        with la.tier("device"):
            got = np.asarray(la.nan_to_num(la.asarray(z), **kwargs))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got[finite].imag), np.signbit(z[finite].imag))
        np.testing.assert_array_equal(np.signbit(got[finite].real), np.signbit(z[finite].real))


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_log_keeps_its_digits_near_the_unit_circle(dtype):
    # (the slow fuzzer's find: log(|z|) lost up to half the digits of the
    # real part near |z| = 1, 5e-15 relative at -0.0074)
    rng = np.random.default_rng(7)
    r = 1 + rng.standard_normal(4000) * 10.0 ** rng.uniform(-15, -1, 4000)
    t = rng.uniform(-np.pi, np.pi, 4000)
    z = np.concatenate([r * np.exp(1j * t), [0j, complex(-0.0, 0.0), complex(0.0, -0.0),
                                            complex(np.inf, 1), complex(-np.inf, -1),
                                            complex(1, np.inf), complex(np.nan, 1),
                                            1 + 0j, -1 + 0j, 1j, complex(0.5, 1.9)]]).astype(dtype)
    with np.errstate(divide="ignore"):
        want = np.log(z)
    with la.tier("device"):
        got = np.asarray(la.log(la.asarray(z)))
    finite = np.isfinite(want)
    eps = np.finfo(dtype).eps
    for part in ("real", "imag"):
        g, w = getattr(got, part), getattr(want, part)
        error = np.abs(g - w)[finite] / np.maximum(np.abs(w[finite]), np.finfo(dtype).tiny)
        assert error.max() <= 4 * eps, (part, error.max() / eps)
        np.testing.assert_array_equal(g[~finite], w[~finite])
        np.testing.assert_array_equal(np.signbit(g[~np.isnan(w)]), np.signbit(w[~np.isnan(w)]))
