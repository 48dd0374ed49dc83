"""The host tier: small work runs by NumPy at once (no kernel), with NumPy's
answers, views and in-place writes; large results and mixed work go to the
device; la.jit and every lazyarray function accept host arrays."""

import pickle
import re
import warnings

import numpy as np
import pytest

import lazyarray as la
from lazyarray.host import HostArray
from lazyarray.run.steps import STATS
from tests.helpers import counting


@pytest.fixture(params=["host", "auto"])
def host_tier(request):
    with la.tier(request.param):
        yield request.param


def _same(got, want):
    got = got.get() if isinstance(got, la.LazyArray) else np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def _laplace(xp, n=12, steps=20):
    p = xp.zeros((n, n))
    p[:, -1] = xp.asarray(np.linspace(0, 1, n))
    norms = []
    for _ in range(steps):
        pn = p.copy()
        p[1:-1, 1:-1] = 0.25 * (pn[1:-1, 2:] + pn[1:-1, :-2] + pn[2:, 1:-1] + pn[:-2, 1:-1])
        p[0, :] = p[1, :]
        p[-1, :] = p[-2, :]
        norms.append(float(xp.sum(xp.abs(p) - xp.abs(pn)) / xp.sum(xp.abs(pn))))
    return p, norms


def test_a_small_script_runs_on_the_host_with_numpys_answers_and_no_kernels(host_tier):
    launches, planned = STATS["launches"], STATS["planned"]
    p, norms = _laplace(la)
    want, want_norms = _laplace(np)
    assert type(p) is HostArray
    _same(p, want)
    assert norms == want_norms
    assert (STATS["launches"], STATS["planned"]) == (launches, planned)


CASES = {
    "arith": lambda xp, a, b: (a * 2 - b) / (b + 1.5) ** 2,
    "int_div": lambda xp, a, b: (xp.arange(-7, 8) // 3, xp.arange(-7, 8) % 3),
    "int_promote": lambda xp, a, b: (xp.arange(5, dtype=xp.int8) + 100,
                                     xp.arange(250, 255, dtype=xp.uint8) + xp.uint8(10)),
    "compare": lambda xp, a, b: (a < b) & (b != 0) | (a == xp.nan),
    "none_compare": lambda xp, a, b: (a == None, a != None),  # noqa: E711
    "nan_inf": lambda xp, a, b: xp.asarray([xp.nan, xp.inf, -xp.inf, 0.0]) * 0 + 1,
    "reductions": lambda xp, a, b: (xp.sum(a), a.mean(axis=0), xp.max(b, axis=1, keepdims=True),
                                    a.std(ddof=1), xp.argmax(b), xp.cumsum(a, axis=1)),
    "empty": lambda xp, a, b: (xp.zeros((0, 3)).sum(axis=0), xp.ones((2, 0)) * 3),
    "zero_d": lambda xp, a, b: (xp.asarray(3.5) * 2, xp.sum(a) / xp.sum(b)),
    "broadcast": lambda xp, a, b: a[:, None, :] - b[None, :, :],
    "fancy": lambda xp, a, b: (a[[0, 2]], a[a > 0.5], b[1, [0, -1]]),
    "functions": lambda xp, a, b: (xp.where(a > 0.5, a, -b), xp.clip(a, 0.2, 0.7),
                                   xp.concatenate([a, b]), xp.stack([a, b]).shape,
                                   xp.roll(a, 1, axis=1), xp.linalg.norm(a)),
    "complex": lambda xp, a, b: xp.exp(1j * a).real,
}


def test_unique_values_are_sorted(host_tier):
    got = la.unique_values(la.asarray([3, 1, 2, 3, 1]))
    _same(got, np.array([1, 2, 3]))
    counts = la.unique_counts(la.asarray([3, 1, 2, 3, 1]))
    _same(counts.values, np.array([1, 2, 3]))
    _same(counts.counts, np.array([2, 1, 2]))


@pytest.mark.parametrize("case", sorted(CASES))
def test_operations_agree_with_numpy(host_tier, case):
    rng = np.random.default_rng(5)
    a, b = rng.random((3, 4)), rng.random((3, 4))
    with np.errstate(all="ignore"):
        want = CASES[case](np, a, b)
        got = CASES[case](la, la.asarray(a), la.asarray(b))
    if not isinstance(want, tuple):
        got, want = (got,), (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, tuple):
            assert g == w
        else:
            _same(g, w)


def test_views_and_in_place_writes_behave_as_numpys(host_tier):
    a = np.arange(12.0).reshape(3, 4)
    x = la.asarray(a)
    row, column = x[1], x[:, 2]
    x[1, 1:3] += 10
    a[1, 1:3] += 10
    column *= 2
    a[:, 2] *= 2
    _same(row, a[1])
    _same(x, a)
    t = x.T
    t[0, 0] = -1
    a.T[0, 0] = -1
    _same(x, a)
    y = x.copy()
    y[...] = 0
    _same(x, a)
    np.add(x, 1, out=x)
    np.add(a, 1, out=a)
    _same(x, a)


def test_a_host_array_read_by_device_work_is_copied_anew_after_each_write():
    with la.tier("auto"):
        small = la.ones(8)
        big = la.asarray(np.arange(8.0 * 200_000).reshape(200_000, 8))
        assert type(small) is HostArray and type(big) is la.LazyArray
        first = (big * small).sum(axis=0)
        small[3] = 5
        second = (big * small).sum(axis=0)
        weights = np.ones(8)
        want_first = (big.get() * weights).sum(axis=0)
        weights[3] = 5
        _same(first, want_first)
        _same(second, (big.get() * weights).sum(axis=0))


def test_large_results_of_host_arrays_move_to_the_device_under_auto():
    with la.tier("auto"):
        x = la.arange(1000.0)
        outer = x[:, None] * x[None, :]
        assert type(x) is HostArray and type(outer) is la.LazyArray
        _same(outer.sum(axis=1), np.outer(np.arange(1000.0), np.arange(1000.0)).sum(axis=1))
    with la.tier("host"):
        assert type(la.arange(1000.0)[:, None] * la.arange(1000.0)) is HostArray
    with la.tier("device"):
        assert type(la.zeros(3)) is la.LazyArray


@pytest.mark.parametrize("spelling", ["operator", "ufunc", "ndarray"])
def test_small_host_arrays_broadcast_to_a_large_result_are_recorded_not_computed(spelling):
    # pairwise differences of 300 points (n-body, k-NN): NumPy would make the
    # 270,000-element array and copy it to the device; recorded, it fuses
    # with the sum after it into one kernel
    from lazyarray.graph import Input
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((300, 3)), rng.standard_normal((300, 3))
    with la.tier("auto"):
        x, y = la.asarray(a), la.asarray(b)
        assert type(x) is HostArray
        left = x[:, None, :]
        right = {"operator": y[None, :, :], "ufunc": y[None, :, :],
                 "ndarray": b[None, :, :]}[spelling]
        d = np.subtract(left, right) if spelling == "ufunc" else left - right
        assert type(d) is la.LazyArray and not isinstance(d.node, Input)
        with counting() as n:
            got = (d ** 2).sum(axis=2).get()
        assert n.launches == 1
        want = ((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2)
        np.testing.assert_allclose(got, want, rtol=1e-13)
        # equal shapes, small results, object arrays and the host tier stay on the host
        assert type(x - y) is HostArray
        assert type(x[:10, None, :] - y[None, :10, :]) is HostArray
    with la.tier("host"):
        assert type(la.asarray(a)[:, None, :] - la.asarray(b)[None, :, :]) is HostArray
    with la.tier("auto"):
        names = la.asarray(np.array(["p"] * 300, dtype=object))
        assert type(names[:, None] + names[None, :]) is HostArray
        # (new axes spelled with fewer indices than the array has axes too)
        assert type(x[:, None] - y[None]) is la.LazyArray


def test_large_broadcasts_numpy_answers_differently_stay_with_numpy():
    # integers to negative powers raise, small integers give float16 arctan2,
    # complex comparisons are NumPy's order: such operations stay on the host
    # whatever the result's size (found by a hunt: the device gave values)
    x = np.arange(-150, 150)
    small = np.arange(300).astype(np.int8)
    z = np.arange(300) * (1 + 1j)
    with la.tier("auto"):
        X, S, Z = la.asarray(x), la.asarray(small), la.asarray(z)
        with pytest.raises(ValueError, match="negative integer powers"):
            X[:, None] ** X[None]
        for f in (np.arctan2, np.hypot, np.nextafter, np.ldexp):
            got = f(S[:, None], S[None])
            assert type(got) is HostArray
            np.testing.assert_array_equal(got, f(small[:, None], small[None]))
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # (no fallback from the device)
            got = np.asarray(Z[:, None] < Z[None])
        np.testing.assert_array_equal(got, z[:, None] < z[None])


@pytest.mark.parametrize("make", ["zeros", "ones", "empty", "full"])
def test_creation_takes_every_shape_numpy_takes(host_tier, make):
    args = (7.0,) if make == "full" else ()
    for shape in [np.int64(3), np.array(3), (np.int64(2), 3), [2, 3]]:
        got = getattr(la, make)(shape, *args)
        assert type(got) is HostArray and got.shape == np.zeros(shape).shape
        if make != "empty":
            _same(got, getattr(np, make)(shape, *args))
    for shape in [2.0, (3.5,), (-1,), None]:             # NumPy's errors
        with pytest.raises(Exception) as expected:
            getattr(np, make)(shape, *args)
        with pytest.raises(type(expected.value), match=re.escape(str(expected.value))):
            getattr(la, make)(shape, *args)


def test_lazyarrays_own_answers_are_the_same_on_both_tiers(host_tier):
    """Sorted unique_* (np.unique_* too, where NumPy 2.3+ may give any order)
    and Array API lists, as on the device."""
    a = np.array([7, -2, 7, 0, 3, -2, 7, 40, 11, -5], np.int32)
    x = la.asarray(a)
    values, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True,
                                               return_counts=True)
    for namespace in (la, np):
        _same(namespace.unique_values(x), values)
        _same(namespace.unique_counts(x).counts, counts)
        _same(namespace.unique_inverse(x).inverse_indices, inverse)
        _same(namespace.unique_all(x).indices, index)
    for make in (la.broadcast_arrays, la.meshgrid):
        got = make(x[:3], la.asarray(np.ones((2, 1))))
        assert type(got) is list and all(type(g) is HostArray for g in got)


def test_jit_and_device_functions_accept_host_arrays():
    with la.tier("auto"):
        x = la.asarray(np.arange(6.0))
        offset = la.full(6, 0.5)

        @la.jit
        def step(v):
            return la.sin(v) + offset

        np.testing.assert_allclose(step(x).get(), np.sin(np.arange(6.0)) + 0.5, rtol=1e-15)
        assert type(x) is HostArray
        _same(la.sort(-x), np.sort(-np.arange(6.0)))


def test_host_arrays_pickle_print_and_convert(host_tier):
    x = la.asarray(np.array([[1.5, 2.0], [3.0, 4.0]]))
    assert str(x) == str(np.array([[1.5, 2.0], [3.0, 4.0]]))
    _same(pickle.loads(pickle.dumps(x)), x.get())
    assert float(x[0, 0]) == 1.5 and int(x[1, 1]) == 4 and bool(x[0, 1])
    assert x.__array_namespace__() is la and x.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    assert list(range(10))[la.asarray(3)] == 3


def test_a_large_host_array_converts_without_a_device_copy():
    host = np.linspace(0.0, 1.0, 200_000)
    with la.tier("host"):               # (on a GPU "auto" keeps 65,536 elements at most)
        x = la.asarray(host) * 2.0
        for convert in (np.asarray, np.array, HostArray.get, lambda a: a.__dlpack__()):
            convert(x)
        assert isinstance(x, HostArray) and x._copy is None      # no device copy made
        first = np.asarray(x)
        first[0] = -1.0                                         # the caller's own copy
        np.testing.assert_array_equal(np.asarray(x), host * 2.0)


def test_the_tier_is_chosen_by_setting_and_block():
    before = la.get_tier()
    try:
        la.set_tier("host")
        assert la.get_tier() == "host"
        with la.tier("device"):
            assert la.get_tier() == "device" and type(la.ones(2)) is la.LazyArray
        assert type(la.ones(2)) is HostArray
    finally:
        la.set_tier(before)
    with pytest.raises(ValueError, match="tier 'fast'"):
        la.set_tier("fast")


def test_dtypes_kernels_lack_stay_on_the_host_with_a_clear_error_on_the_device():
    with la.tier("host"):
        fields = la.zeros(3, dtype=[("u", float), ("v", float)])
        fields["u"] = [1.0, 2.0, 3.0]
        _same(fields["u"] * 2, np.array([2.0, 4.0, 6.0]))
    with la.tier("device"), pytest.raises(la.DTypeError, match="host"):
        fields + 1


def test_explain_says_a_host_array_was_computed_by_numpy():
    with la.tier("host"):
        text = la.explain(la.ones(3) * 2, print_it=False)
    assert "host tier" in text and "0 kernel(s)" in text


def test_windows_of_a_large_device_array_build_nothing_new():
    """Sliding windows at new offsets and new lengths over a computed device
    array: small parts are read to the host, no kernel is planned per offset."""
    values = np.random.default_rng(1).random(1_100_000)   # (over every device's limit)
    with la.tier("auto"):
        x = la.asarray(values) * 2
        x.compute()
        assert type(x) is la.LazyArray
        with counting() as ran:
            means = [float(x[i:i + 32].mean()) for i in range(50)]
            sums = [float(x[:n].sum()) for n in range(100, 120)]
        assert ran.planned == 0
    assert np.allclose(means, [(2 * values[i:i + 32]).mean() for i in range(50)])
    assert np.allclose(sums, [(2 * values[:n]).sum() for n in range(100, 120)])


def test_work_on_small_buffers_handed_in_stays_on_the_device(monkeypatch):
    """Small pyopencl arrays handed in (W8's eager call) are not read to the
    host on every call: the sum is one launch of a kernel planned once."""
    import pyopencl.array as cla

    from lazyarray.run import default_queue

    queue = default_queue()
    a, b = np.arange(1000, dtype=np.float32), np.linspace(0, 1, 1000, dtype=np.float32)
    da, db = cla.to_device(queue, a), cla.to_device(queue, b)
    reads = []
    real_get = cla.Array.get
    monkeypatch.setattr(cla.Array, "get", lambda self, *args, **kwargs: (
        reads.append(self.shape), real_get(self, *args, **kwargs))[1])
    with la.tier("auto"):
        (la.asarray(da) + la.asarray(db)).compute()
        launches, planned = STATS["launches"], STATS["planned"]
        results = [(la.asarray(da) + la.asarray(db)).compute() for _ in range(3)]
        assert STATS["launches"] - launches == 3 and STATS["planned"] == planned
        assert reads == []
    for r in results:
        np.testing.assert_array_equal(r.get(), a + b)


def test_writes_into_small_device_arrays_stay_on_the_device():
    with la.tier("auto"):
        big = la.asarray(np.arange(100_000.0)) + 0
        big.compute()
        part = big[10:20]
        np.add(part, 1, out=part)
        la.copyto(part, part * 2)
        part += 1
        want = np.arange(100_000.0)
        want[10:20] = (want[10:20] + 1) * 2 + 1
        _same(big, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.complex64])
def test_elements_and_scalar_arithmetic_keep_numpys_types(host_tier, dtype):
    a = np.arange(1, 7, dtype=dtype)
    x = la.asarray(a)
    s, t = x[1], x[-1]
    # (an element read is NumPy's scalar, as NumPy gives it: a float for float64)
    assert type(s) is type(a[1]) and type(x.reshape(2, 3)[1, 2]) is type(a[5])
    assert isinstance(x[0], float) == (dtype == np.float64)
    with np.errstate(all="ignore"):
        for got, want in [(s * 2, a[1] * 2), (s + t, a[1] + a[-1]), (2.5 - s, 2.5 - a[1]),
                          (s / t, a[1] / a[-1]), (-s, -a[1]), (abs(s), abs(a[1])),
                          (s ** 2, a[1] ** 2), (s < t, a[1] < a[-1]), (la.sqrt(s), np.sqrt(a[1])),
                          (s.sum(), a[1].sum())]:
            _same(got, want)
    s += 1
    _same(x, a)             # an element read is a copy
    _same(s, a[1] + 1)
    x[0] = t
    a[0] = a[-1]
    _same(x, a)
    assert complex(s) == complex(a[1] + 1) and s.shape == () and s.dtype == a.dtype


def test_element_loops_give_numpys_answers_and_jitted_results_stay_arrays(host_tier):
    """The loops of a course's first steps (``u[i] = un[i] - c * (un[i] -
    un[i - 1])``, elements read and written one by one, NumPy scalars mixed
    with host arrays) give NumPy's values; the same element read on the device
    is a lazy 0-d array; a jitted function returning an element returns an
    array whichever tier runs it."""
    def course_step(xp, nx=41, nt=5):
        u = xp.ones(nx)
        u[10:21] = 2
        for _ in range(nt):
            un = u.copy()
            for i in range(1, nx - 1):
                u[i] = un[i] - 0.3 * (un[i] - un[i - 1]) + 0.1 * (un[i + 1] - 2 * un[i] + un[i - 1])
            u[0] = un[1] * np.float32(0.5) + u[1:3].sum() / 4
        return u

    _same(course_step(la), course_step(np))
    with la.tier("device"):
        element = la.asarray(np.arange(4.0))[2]
        assert isinstance(element, la.LazyArray) and element.shape == ()
    first = la.jit(lambda x: (x[1] * 2, x[0]))
    values = la.asarray(np.arange(3.0))
    for _ in range(12):
        for got, want in zip(first(values), (2.0, 0.0)):
            assert isinstance(got, la.LazyArray) and got.shape == () and float(got) == want


def test_sliding_windows_of_host_arrays_are_numpys_views(host_tier):
    a = np.arange(12.0)
    x = la.asarray(a)
    windows = la.lib.stride_tricks.sliding_window_view(x, 4)
    _same(windows.mean(axis=-1), np.lib.stride_tricks.sliding_window_view(a, 4).mean(axis=-1))
    x[0] = 100.0
    assert float(windows[0, 0]) == 100.0        # a view, as NumPy's


def test_a_jitted_call_on_host_arrays_takes_the_short_path(monkeypatch):
    with la.tier("auto"):
        a, b = la.asarray(np.arange(6.0)), la.asarray(np.ones(6))
        assert isinstance(a, HostArray)
        f = la.jit(lambda x, y: x * 2 + y)
        np.testing.assert_array_equal(f(a, b).get(), np.arange(6.0) * 2 + 1)
        calls = []
        jitted_type = type(f)
        original = jitted_type._program

        def counting(self, *args, **kwargs):
            calls.append(1)
            return original(self, *args, **kwargs)

        monkeypatch.setattr(jitted_type, "_program", counting)
        np.testing.assert_array_equal(f(a, b).get(), np.arange(6.0) * 2 + 1)
        a[2] = -1.0                 # a host write: the next call reads the new value
        expected = np.arange(6.0) * 2 + 1
        expected[2] = -1
        np.testing.assert_array_equal(f(a, b).get(), expected)
        assert not calls            # found by shapes, not traced or looked up again


_KEYS = [0, -1, slice(None), slice(1, None), slice(None, -1), slice(None, None, -2),
         (0, slice(1, 3)), (slice(None), 0), (Ellipsis, -1), (None, 1), ()]
_SCALARS = [2, -3, 2.5, True, np.float32(1.5), np.int64(3), np.int32(-2), 1.5 + 2j]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8, np.bool_,
                                   np.complex128])
@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_the_quick_paths_agree_with_numpy(host_tier, dtype):
    """Slicing, writes, scalar operators, methods with number and string
    arguments and functions with keywords (the host tier's quick paths):
    NumPy's values, dtypes and errors, on 2-d, 0-d and empty arrays."""
    rng = np.random.default_rng(5)
    for a in (rng.integers(0, 5, (4, 3)).astype(dtype), np.array(3, dtype=dtype),
              np.zeros((0, 3), dtype=dtype)):
        x = la.asarray(a)
        for key in _KEYS:
            try:
                want = a[key]
            except IndexError as error:
                with pytest.raises(IndexError, match=re.escape(str(error))):
                    x[key]
                continue
            _same(x[key], want)
        with np.errstate(all="ignore"):
            for s in _SCALARS:
                for op in ("__add__", "__radd__", "__mul__", "__rsub__", "__truediv__",
                           "__lt__", "__eq__"):
                    try:
                        want = getattr(a, op)(s)
                    except (TypeError, OverflowError) as error:
                        with pytest.raises(type(error)):
                            getattr(x, op)(s)
                        continue
                    if want is not NotImplemented:
                        _same(getattr(x, op)(s), want)
        for name, args, kwargs in [("sum", (), {"axis": 0}), ("sum", (), {"keepdims": True}),
                                   ("sum", (0,), {"dtype": np.float32}),
                                   ("astype", (np.int16,), {}), ("astype", ("float32",), {}),
                                   ("reshape", (-1,), {}), ("copy", (), {"order": "F"}),
                                   ("max", (), {"axis": -1, "initial": 7}),
                                   ("round", (), {"decimals": 1}), ("cumsum", (0,), {})]:
            try:
                want = getattr(a, name)(*args, **kwargs)
            except (ValueError, TypeError, np.exceptions.AxisError) as error:
                with pytest.raises(type(error)):
                    getattr(x, name)(*args, **kwargs)
                continue
            _same(getattr(x, name)(*args, **kwargs), want)
        for func, kwargs in [("sum", {"axis": 0}), ("mean", {"keepdims": True}),
                             ("std", {"ddof": 1, "axis": -1}), ("prod", {"dtype": "int64"}),
                             ("cumsum", {"axis": 0})]:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                try:
                    want = getattr(np, func)(a, **kwargs)
                except (ValueError, TypeError, np.exceptions.AxisError) as error:
                    with pytest.raises(type(error)):
                        getattr(la, func)(x, **kwargs)
                    continue
                _same(getattr(la, func)(x, **kwargs), want)
        y = la.asarray(a.copy())
        b = a.copy()
        for key, value in [(slice(None), 1), (0, 2), ((Ellipsis,), 0)]:
            try:
                b[key] = value
            except IndexError as error:
                with pytest.raises(IndexError, match=re.escape(str(error))):
                    y[key] = value
                continue
            y[key] = value
            _same(y, b)
