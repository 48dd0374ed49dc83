"""Deferred arithmetic on large host arrays (lazyarray.host.fusion and
host.pending): expressions of ``+ - * /``, negation, squares, absolute values
and square roots (operators and lazyarray's ufunc calls) are computed
when read, by NumPy or one native loop, with NumPy's answers bit for bit;
every write into host memory first computes the pending expressions, so
none reads memory written after it was made; NumPy's warnings follow the
error settings in force at the operator."""

import warnings

import numpy as np
import pytest

import lazyarray as la
import lazyarray.host.fusion as fusion
from lazyarray.host import HostArray, PendingArray

N = 9000


@pytest.fixture(autouse=True)
def native_at_once(monkeypatch):
    """Loops built at an expression's first computation, in this thread; the
    computations done by NumPy's calls counted."""
    monkeypatch.setenv("LAZYARRAY_NATIVE", "sync")
    monkeypatch.setattr(fusion, "BUILD_AFTER", 1)
    monkeypatch.setattr(fusion, "_LOOPS", {})   # (a full table starts again: not mid-test)
    calls = {"numpy": 0}
    real = fusion._numpy

    def counted(expr, out=None):
        calls["numpy"] += 1
        return real(expr, out)
    monkeypatch.setattr(fusion, "_numpy", counted)
    with la.tier("auto"):
        yield calls


def _pair(value):
    return la.asarray(value.copy()), value.copy()


def _same(got, want):
    np.testing.assert_array_equal(got.get() if hasattr(got, "get") else got, want, strict=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_expression_is_deferred_and_computed_by_one_loop(dtype, native_at_once):
    rng = np.random.default_rng(1)
    (a, a_np), (b, b_np) = (_pair(rng.standard_normal(N).astype(dtype)) for _ in range(2))

    def expression(xp, a, b):
        return -(a * 0.3 - b) / (a + 2) ** 2 + 1.5 * b

    for call in range(3):
        got = expression(la, a, b)
        assert type(got) is PendingArray
        assert (got.shape, got.dtype, got.ndim, got.size, len(got)) == ((N,), dtype, 1, N, N)
        assert type(got) is PendingArray            # (none of those computed it)
        _same(got, expression(np, a_np, b_np))
        assert type(got) is HostArray
        if call == 0:
            first = native_at_once["numpy"]
    assert native_at_once["numpy"] == first         # (NumPy's calls once; then the loop)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stencil_assignments_give_numpys_grids(dtype, native_at_once):
    """Into a part of another array (straight into its buffer), and into the
    array read, shifted (through a temporary, as NumPy's assignment)."""
    rng = np.random.default_rng(2)
    (p, p_np), (b, b_np) = (_pair(rng.random((100, 110)).astype(dtype)) for _ in range(2))
    (u, u_np) = _pair(rng.random(N).astype(dtype))

    def step(xp, p, b, u):
        pn = p.copy()
        p[1:-1, 1:-1] = ((pn[1:-1, 2:] + pn[1:-1, :-2]) * 0.25 + (pn[2:, 1:-1] - pn[:-2, 1:-1])
                         / 3 - b[1:-1, 1:-1] * pn[1:-1, 1:-1] ** 2)
        p[:, 0] = p[:, 1]
        u[1:] = u[:-1] * 0.5 + 1.0
        u[::-1] = u * 2 - 1

    for call in range(4):
        step(la, p, b, u)
        step(np, p_np, b_np, u_np)
        _same(p, p_np)
        _same(u, u_np)
        if call == 0:
            first = native_at_once["numpy"]
    assert native_at_once["numpy"] == first


WRITES = ["setitem", "in_place", "copyto", "fill", "real", "jit", "out"]


@pytest.mark.parametrize("write", WRITES)
def test_a_pending_value_reads_memory_as_it_was_when_made(write):
    rng = np.random.default_rng(3)
    a, a_np = _pair(rng.random(N))
    t = a * 2 + 1
    assert type(t) is PendingArray
    if write == "setitem":
        a[:10] = 7.0
    elif write == "in_place":
        a += 1
    elif write == "copyto":
        np.copyto(a, np.zeros(N))
    elif write == "fill":
        a.fill(3.0)
    elif write == "real":
        a.real = np.ones(N)
    elif write == "jit":
        la.jit(lambda x: x.__setitem__(slice(0, 5), 0.0) or x)(a)
    else:
        np.multiply(a, 3, out=a)
    _same(t, a_np * 2 + 1)


def test_operations_follow_the_error_settings_at_the_operator():
    a, _ = _pair(np.ones(N))
    zeros = la.asarray(np.zeros(N))
    with np.errstate(divide="ignore"):
        quiet = a / zeros
    loud = a / zeros
    assert type(quiet) is type(loud) is PendingArray
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(quiet, np.full(N, np.inf))
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        _same(loud, np.full(N, np.inf))
    with np.errstate(divide="raise"):
        failing = a / zeros
    with pytest.raises(FloatingPointError):
        failing.get()


@pytest.mark.parametrize("seed", range(4))
def test_random_expression_trees_give_numpys_answers(seed, native_at_once):
    """Trees of the deferred operations over three arrays (one a strided
    view) and Python numbers, with NaN, infinities and signed zeros among the
    values or not, computed twice (NumPy's calls, then the loop where no
    floating point exception happens): NumPy's values and dtype."""
    rng = np.random.default_rng(seed)
    dtype = [np.float64, np.float32][seed % 2]
    base = rng.standard_normal((3, 2 * N)).astype(dtype)
    special = seed < 2              # (their floating point exceptions: NumPy's calls)
    if special:
        base[:, :6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30]
    values = [base[0, :N], base[1, N:], base[2, ::2]]
    lazy = [la.asarray(base[0, :N].copy()), la.asarray(base[1, N:].copy()),
            la.asarray(base[2].copy())[::2]]

    def tree(depth):
        if depth == 0 or rng.random() < 0.25:
            if rng.random() < 0.8:
                return f"v[{rng.integers(0, 3)}]"
            return repr(float(rng.choice([0.5, -3.0, 1e-3, 7.25])))
        if rng.random() < 0.25:
            return rng.choice([f"(-{tree(depth - 1)})", f"({tree(depth - 1)} ** 2)",
                               f"abs({tree(depth - 1)})", f"xp.sqrt({tree(depth - 1)})",
                               f"xp.absolute({tree(depth - 1)})",
                               f"xp.add({tree(depth - 1)}, {tree(depth - 1)})"])
        return f"({tree(depth - 1)} {rng.choice(['+', '-', '*', '/'])} {tree(depth - 1)})"

    looped = 0
    for _ in range(6):
        text = tree(4)
        # (NumPy's default error settings, which the loops reproduce; its
        # warnings not shown)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = eval(text, {"v": values, "xp": np})
            for call in range(2):
                before = native_at_once["numpy"]
                got = eval(text, {"v": lazy, "xp": la})
                if np.ndim(want):
                    deferred = type(got) is PendingArray
                    _same(got, np.asarray(want))
                    looped += deferred and call == 1 and native_at_once["numpy"] == before
    assert special or looped, "no expression was computed by its loop"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ufunc_calls_and_unary_operators_join_the_loop(dtype, native_at_once):
    """lazyarray's ufunc calls (add, sqrt, absolute, ...) and ``abs()`` of
    large host arrays are deferred as the operators are; an expression whose
    operands are all expressions is one loop; a pending array passed to a
    NumPy function is computed first."""
    rng = np.random.default_rng(7)
    first_values = rng.standard_normal(N).astype(dtype)
    first_values[:4] = [np.nan, -0.0, np.inf, -np.inf]
    (a, a_np), (b, b_np) = _pair(first_values), _pair(rng.standard_normal(N).astype(dtype))

    def speed(xp, a, b):
        return xp.sqrt(xp.add(xp.square(a), b * b)) + abs(-a) - xp.absolute(b)

    def both(xp, a, b):
        return (-a) + (-b)

    for call in range(3):
        for f in (speed, both):
            got = f(la, a, b)
            assert type(got) is PendingArray
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = f(np, a_np, b_np)
                _same(got, want)
            # (a negated NaN has its sign bit flipped, as NumPy's negative does)
            assert got.get().view(f"u{want.itemsize}")[0] == want.view(f"u{want.itemsize}")[0]
        assert float(la.sum(abs(a - b)[4:])) == float(np.sum(abs(a_np - b_np)[4:]))
        total = la.max(la.sqrt(b * b))
        assert type(total) is HostArray and float(total) == np.max(np.sqrt(b_np * b_np))
        if call == 0:
            first = native_at_once["numpy"]
    assert native_at_once["numpy"] == first         # (the loops, from the second call)


def test_long_chains_and_graphs_sharing_parts_stay_bounded(native_at_once):
    """A chain of thousands of deferred operations (no recursion limit), and
    two arrays updated from each other (a graph whose tree doubles every
    step): NumPy's answers, no expression of more than MOST_OPERATIONS
    operations, each shared part computed once by NumPy's calls."""
    x, x_np = _pair(np.linspace(0, 1, N))
    for _ in range(3000):
        x = x * 1.0001 + 0.5
        x_np = x_np * 1.0001 + 0.5
    _same(x, x_np)
    (u, u_np), (v, v_np) = _pair(np.ones(N)), _pair(np.linspace(-1, 1, N))
    for _ in range(60):
        u, v = u + 0.01 * v, v - 0.01 * u
        u_np, v_np = u_np + 0.01 * v_np, v_np - 0.01 * u_np
        for handle in (u, v):
            raw = HostArray.__dict__["_hv"].__get__(handle, HostArray)
            assert not isinstance(raw, fusion.Expr) \
                or raw.operations <= fusion.MOST_OPERATIONS
    _same(u, u_np)
    _same(v, v_np)

    # (a shared part by NumPy's calls: once, however many expressions read it)
    subtractions = []

    def subtract(*args, **kwargs):
        subtractions.append(args)
        return np.subtract(*args, **kwargs)
    a, a_np = _pair(np.linspace(1, 2, N))
    d = a - 0.5
    e = d * d + d / 3 - d
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(fusion.UFUNCS, "subtract", subtract)
        _same(e, (a_np - 0.5) * (a_np - 0.5) + (a_np - 0.5) / 3 - (a_np - 0.5))
    assert len(subtractions) == 2                   # (d once, then e's last)


def test_small_integer_mixed_and_broadcast_operations_are_computed_at_once():
    small = la.asarray(np.ones(100))
    ints = la.asarray(np.arange(N))
    f32, f64 = la.asarray(np.ones(N, np.float32)), la.asarray(np.ones(N))
    rows = la.asarray(np.ones((70, 80)))
    for value in (small + small, ints * 2, f32 + f64, rows + la.asarray(np.ones(80)),
                  f64 * np.float32(2)):
        assert type(value) is HostArray
    assert (f32 + f64).dtype == np.float64


def test_an_assignment_that_raises_leaves_the_array_as_it_was():
    """NumPy computes the value before it assigns: under ``np.errstate``
    raising, a failing expression writes nothing."""
    a, _ = _pair(np.ones(N))
    zeros = la.asarray(np.zeros(N))
    target, target_np = _pair(np.arange(N + 2, dtype=np.float64))
    for _ in range(3):                  # (the structure's loop built meanwhile)
        target[1:-1] = a * 2 - zeros
    target_np[1:-1] = 2.0
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        target[1:-1] = (a - zeros) / zeros
    _same(target, target_np)
