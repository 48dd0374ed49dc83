"""One-dimensional stencils and strided reads of device arrays (``x[1:] -
x[:-1]``, ``x[::2]``, ``x[::-1]``) are flat kernels taking the ranges' starts,
steps and lengths as arguments: new lengths and offsets build nothing, and
the results equal NumPy's on CPU and GPU layouts, every dtype."""

import numpy as np
import pytest

import lazyarray as la
from tests.helpers import counting

LENGTHS = [2, 3, 7, 64, 1000, 4097]

EXPRESSIONS = {
    "difference": lambda xp, x, y: x[1:] - x[:-1],
    "second difference": lambda xp, x, y: x[2:] - 2 * x[1:-1] + x[:-2],
    "strided": lambda xp, x, y: x[::2] * 3 + 1,
    "reversed": lambda xp, x, y: x[::-1] * x,
    "reversed strided": lambda xp, x, y: x[-1::-3] - x[::3][::-1],
    "with a whole array": lambda xp, x, y: x[1:] * y[:-1] + y[1:],
    "sum of products": lambda xp, x, y: (x[1:] * x[:-1]).sum(),
    "largest step": lambda xp, x, y: xp.max(x[1:] - x[:-1]),
    "upwind step": lambda xp, x, y: x[1:] - 0.5 * (x[1:] - x[:-1]),
}


def _values(rng, n, dtype):
    if dtype == np.bool_:
        return rng.random(n) > 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-50, 50, n).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


# (no maximum of complex numbers: lazyarray refuses NumPy's lexicographic one)
CASES = [(name, dtype) for name in sorted(EXPRESSIONS)
         for dtype in (np.float64, np.float32, np.int32, np.int64, np.complex128)
         if not (dtype == np.complex128 and name == "largest step")]


@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_ranges_of_device_arrays_give_numpys_values(layout_kind, rng, name, dtype):
    expression = EXPRESSIONS[name]
    for n in LENGTHS:
        a, b = _values(rng, n, dtype), _values(rng, n, dtype)
        with la.tier("device"):
            got = np.asarray(expression(la, la.asarray(a), la.asarray(b)))
        want = expression(np, a, b)
        assert got.dtype == np.asarray(want).dtype, (n, got.dtype)
        tol = 1e-5 if dtype in (np.float32,) else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"n={n}")


def test_bool_ranges_give_numpys_values(layout_kind, rng):
    for n in LENGTHS:
        a = rng.random(n) > 0.5
        with la.tier("device"):
            x = la.asarray(a)
            got = np.asarray(x[1:] ^ x[:-1]), np.asarray((x[::2] & x[::-2]).sum())
        np.testing.assert_array_equal(got[0], a[1:] ^ a[:-1])
        assert got[1] == (a[::2] & a[::-2]).sum()


@pytest.mark.parametrize("name", ["difference", "second difference", "strided",
                                  "sum of products", "upwind step"])
def test_new_lengths_and_offsets_build_nothing(layout_kind, rng, name):
    expression = EXPRESSIONS[name]
    planned = []
    # (a reduction of more than FLAT_REDUCTION_LIMIT elements gets a layout of its size)
    for n in [5000, 5001, 7000, 9999, 60001]:
        for start in (0, 3, 17):
            a, b = rng.standard_normal(n + start), rng.standard_normal(n + start)
            with la.tier("device"), counting() as c:
                x = la.asarray(a)[start:]
                got = np.asarray(expression(la, x, la.asarray(b)[start:]))
            planned.append(c.planned)
            np.testing.assert_allclose(got, expression(np, a[start:], b[start:]),
                                       rtol=1e-12, atol=1e-12)
    assert planned[0] >= 1 and sum(planned[1:]) == 0, planned


def test_an_offset_window_read_with_a_step_builds_nothing(layout_kind, rng):
    # a stencil sliding over a long series: the window's start is an argument
    a = rng.standard_normal(100_000)
    planned = []
    with la.tier("device"):
        x = la.asarray(a)
        for start in range(0, 90_000, 9_000):
            with counting() as c:
                w = x[start:start + 5000]
                got = float((w[2:] - 2 * w[1:-1] + w[:-2]).sum())
            planned.append(c.planned)
            w = a[start:start + 5000]
            assert got == pytest.approx((w[2:] - 2 * w[1:-1] + w[:-2]).sum(), abs=1e-9)
    assert sum(planned[1:]) == 0, planned


@pytest.mark.parametrize("name", ["arange", "linspace", "arange with a range"])
def test_positions_of_new_lengths_build_nothing(layout_kind, rng, name):
    # arange and linspace values (an element's position) in flat kernels
    make = {"arange": lambda xp, n, a: xp.arange(n) * 0.5 + 3,
            "linspace": lambda xp, n, a: xp.sin(xp.linspace(-1.0, 2.5, n)),
            "arange with a range": lambda xp, n, a: a[1:] * xp.arange(n - 1)}[name]
    planned = []
    for n in [3, 17, 1000, 4097, 65536, 99999]:
        a = rng.standard_normal(n)
        with la.tier("device"), counting() as c:
            got = np.asarray(make(la, n, la.asarray(a)))
        planned.append(c.planned)
        np.testing.assert_allclose(got, make(np, n, a), rtol=1e-13, atol=1e-13)
    assert sum(planned[1:]) == 0, planned


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32, np.int16])
def test_gathers_of_new_lengths_give_numpys_values_and_build_nothing(layout_kind, rng,
                                                                      index_dtype):
    # x[idx] (negative indices count from the end), in expressions and sums,
    # and boolean masks of new counts
    planned = []
    for n, m in [(50, 7), (9, 60_000), (5000, 300), (5001, 299), (70_000, 4096), (11, 30_000)]:
        a, b = rng.standard_normal(n), rng.standard_normal(m)
        idx = rng.integers(-n, n, m).astype(index_dtype)
        with la.tier("device"), counting() as c:
            x, i, y = la.asarray(a), la.asarray(idx), la.asarray(b)
            got = [np.asarray(x[i]), np.asarray(x[i] * y + x[:m][::-1] if m <= n else x[i] - y),
                   float((x[i] ** 2).sum()), np.asarray(x[x > 0.5])]
        planned.append(c.planned)
        want = [a[idx], a[idx] * b + a[:m][::-1] if m <= n else a[idx] - b,
                float((a[idx] ** 2).sum()), a[a > 0.5]]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    # (the first two shapes plan the structures; each expression of m <= n
    # and of m > n is one structure)
    assert sum(planned[2:]) == 0, planned


@pytest.mark.slow
def test_ranges_of_arrays_beyond_32_bit_positions_are_read_right():
    # a range of an array of more than 2^31 - 1 elements (found by a hunt:
    # the flat kernel kept 32-bit positions and refused it)
    a = np.zeros(2**31 + 4096, np.uint8)
    a[2**31:2**31 + 100] = np.arange(100, dtype=np.uint8)
    with la.tier("device"):
        x = la.asarray(a)
        got = np.asarray(x[2**31:2**31 + 100] + 1)
    np.testing.assert_array_equal(got, a[2**31:2**31 + 100] + 1)


@pytest.mark.parametrize("name", ["var", "std", "centred sum", "keepdims mean"])
def test_windows_of_statistics_at_new_offsets_and_lengths_build_nothing(layout_kind, rng,
                                                                         name):
    # (the sliding windows: var and std centre on a 0-d mean, a
    # scalar operand; a full reduction kept as (1,) is flat too)
    statistic = {"var": lambda xp, w: w.var(), "std": lambda xp, w: xp.std(w, ddof=1),
                 "centred sum": lambda xp, w: xp.abs(w - w.mean()).sum(),
                 "keepdims mean": lambda xp, w: w.mean(keepdims=True)}[name]
    a = rng.standard_normal(50_000)
    planned = []
    with la.tier("device"):
        x = la.asarray(a)
        for i in range(30):
            with counting() as c:
                got = np.asarray(statistic(la, x[i * 37:i * 37 + 1000 + 13 * i]))
            planned.append(c.planned)
            want = statistic(np, a[i * 37:i * 37 + 1000 + 13 * i])
            assert got.shape == np.shape(want)
            np.testing.assert_allclose(got, want, rtol=1e-12)
    assert sum(planned[10:]) == 0, planned


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argmax_of_windows_gives_numpys_first_position_and_builds_nothing(layout_kind, rng,
                                                                          dtype, op):
    # (ties everywhere: small integers; NaN and infinities among floats: the
    # first NaN wins; a work-group's items hold interleaved elements, so the
    # first position is the least of those holding the best value)
    a = rng.integers(0, 4, 20_000).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a[rng.integers(0, a.size, 40)] = np.nan
        a[rng.integers(0, a.size, 40)] = np.inf
        a[rng.integers(0, a.size, 40)] = -np.inf
    planned = []
    with la.tier("device"):
        x = la.asarray(a)
        for _ in range(30):
            start, n = int(rng.integers(0, 10_000)), int(rng.integers(1, 9_000))
            with counting() as c:
                got = int(getattr(x[start:start + n], op)())
            planned.append(c.planned)
            assert got == int(getattr(a[start:start + n], op)()), (start, n)
        for b in (np.full(300, -np.inf), np.full(300, np.nan), np.zeros(300),
                  np.full(200, np.iinfo(np.int64).min), np.full(200, np.iinfo(np.int64).max)):
            assert int(getattr(la.asarray(b)[1:], op)()) == int(getattr(b[1:], op)())
    assert sum(planned[10:]) == 0, planned


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_running_sums_of_windows_are_numpys_bit_for_bit(layout_kind, rng, dtype, op):
    # (a CPU walks a flat scan in order, as NumPy adds: every window at a new
    # offset and length reuses it; a GPU's scans keep their parallel layouts)
    a = (rng.standard_normal(20_000) * 3).astype(dtype) if np.dtype(dtype).kind == "f" \
        else rng.integers(0, 3, 20_000).astype(dtype)
    planned = []
    with la.tier("device"), np.errstate(over="ignore"):
        x = la.asarray(a)
        for _ in range(24):
            start, n = int(rng.integers(0, 10_000)), int(rng.integers(2, 9_000))
            with counting() as c:
                got = np.asarray(getattr(x[start:start + n] * 2, op)())
            planned.append(c.planned)
            want = getattr(a[start:start + n] * 2, op)()
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    if layout_kind == "cpu":
        assert sum(planned[8:]) == 0, planned
