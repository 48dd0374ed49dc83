"""HostArray's C methods (lazyarray.host.cdispatch) against their Python
twins and NumPy: the same results (class, dtype, values), the same errors
and warnings, the same fallbacks, for every operand kind they meet."""

import itertools
import operator
import warnings

import numpy as np
import pytest

import lazyarray as la
import lazyarray.host.cdispatch as cdispatch
from lazyarray.host import HostArray, PendingArray
from lazyarray.host.dispatch import MUTATION, SMALL
from lazyarray.host.fusion import DEFER_ELEMENTS


@pytest.fixture(scope="module", autouse=True)
def c_methods():
    """The C methods installed (built in this thread where not yet built)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LAZYARRAY_NATIVE", "sync")
        patch.delenv("LAZYARRAY_CDISPATCH", raising=False)
        cdispatch.install()
    assert cdispatch.installed(), "the C methods were not built (no compiler?)"
    with la.tier("auto"):
        yield


def _twin(name):
    return cdispatch._TWINS[name]


def _values():
    """NumPy values host arrays hold: dtypes, 0-d, empty, NaN/inf, scalars."""
    rng = np.random.default_rng(5)
    out = [rng.standard_normal(7), rng.standard_normal((3, 4)).astype(np.float32),
           np.arange(-3, 4), np.array([True, False, True]), np.array(2.5), np.empty(0),
           np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 3.0]),
           (rng.standard_normal(7) + 1j * rng.standard_normal(7)),
           np.arange(7, dtype=np.uint8), np.float64(1.5), np.int32(3)]
    return out


def _host(value):
    handle = object.__new__(HostArray)
    handle._hv = value.copy() if isinstance(value, np.ndarray) else value
    handle._copy = None
    return handle


def _outcome(function, *args, **kwargs):
    """What ``function(*args, **kwargs)`` gives: (class, dtype, value) or the
    error's class and text, and the warnings' classes and texts."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = function(*args, **kwargs)
        except Exception as error:
            got = ("raised", type(error), str(error))
        else:
            got = _described(result)
    return got, [(w.category, str(w.message)) for w in caught]


def _described(result):
    """A result as comparable data: a host array's class, value class,
    dtype, bytes and shape; tuples and lists item by item."""
    if isinstance(result, HostArray):
        value = result._hv
        return (type(result), type(value), getattr(value, "dtype", None),
                np.asarray(value).tobytes(), np.shape(value))
    if type(result) in (tuple, list):
        return (type(result), *(_described(r) for r in result))
    if isinstance(result, np.generic):   # (NumPy's scalar: of numbers only)
        return (type(result), result.dtype, np.asarray(result).tobytes())
    if isinstance(result, la.LazyArray):
        value = result.get()
        return (type(result), value.dtype, value.tobytes(), value.shape)
    return (type(result), result)


_BINARY = {"__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
           "__truediv__": operator.truediv, "__pow__": operator.pow,
           "__lt__": operator.lt, "__le__": operator.le, "__gt__": operator.gt,
           "__ge__": operator.ge, "__eq__": operator.eq, "__ne__": operator.ne}
_OTHERS = [2, -3, 0, 2.5, 0.0, float("nan"), 2**70, True, None, "text", np.float64(2.0), 1j]


@pytest.mark.parametrize("name", sorted(_BINARY) + ["__radd__", "__rsub__", "__rmul__",
                                                    "__rtruediv__", "__rpow__"])
def test_operators_agree_with_their_twins_and_numpy(name):
    c_method = getattr(HostArray, name)
    assert type(c_method).__name__ == "method_descriptor"
    values = _values()
    operands = [*values, *_OTHERS]
    for left, right in itertools.product(values, operands):
        def operands(left=left, right=right):
            return (_host(left), _host(right) if isinstance(right, np.ndarray | np.generic)
                    else right)
        want = _outcome(_twin(name), *operands())
        got = _outcome(c_method, *operands())
        assert got == want, (name, left, right)
        if got[0][0] is HostArray and type(right) in (int, float):
            # number <op> array for the reflected ones, as NumPy computes them
            numpy_op = _BINARY[name.replace("__r", "__")] if name.startswith("__r") \
                else _BINARY[name]
            with np.errstate(all="ignore"):
                expected = numpy_op(right, left) if name.startswith("__r") \
                    else numpy_op(left, right)
            assert got[0][3] == np.asarray(expected).tobytes(), (name, left, right)


def test_operator_results_are_numpy_s_through_python_syntax():
    rng = np.random.default_rng(2)
    x_np = rng.standard_normal(50)
    y_np = rng.standard_normal(50)
    x, y = la.asarray(x_np), la.asarray(y_np)
    for got, want in [(x + y, x_np + y_np), (2.0 - x, 2.0 - x_np), (x * 3, x_np * 3),
                      (1 / x, 1 / x_np), (x ** 2, x_np ** 2), (2 ** x, 2 ** x_np),
                      (x < y, x_np < y_np), (x[1:] - x[:-1], x_np[1:] - x_np[:-1]),
                      (0.5 > x, 0.5 > x_np), (x == 0.5, x_np == 0.5)]:  # noqa: SIM300
        assert type(got) is HostArray
        np.testing.assert_array_equal(got, want, strict=True)


def test_getitem_agrees_with_its_twin():
    values = [np.arange(24.0).reshape(4, 6), np.arange(5), np.array(3.0), np.empty((0, 3))]
    keys = [0, -1, 3, 9, slice(1, None), slice(None, None, -2), (1, 2), (slice(1, 3), 0),
            (0, 0, 0), Ellipsis, None, (None, 1), [0, 1], True, (slice(None), slice(2, 4))]
    for value, key in itertools.product(values, keys):
        got = _outcome(HostArray.__getitem__, _host(value), key)
        want = _outcome(_twin("__getitem__"), _host(value), key)
        assert got == want, (value, key)


def test_setitem_agrees_with_its_twin_and_counts_the_write():
    targets = [np.arange(24.0).reshape(4, 6), np.arange(5), np.zeros(3, np.float32)]
    keys = [0, -1, 7, slice(1, 3), (1, 2), (slice(None), 0), slice(None, None, 2), [0, 1]]
    assigned = [1.5, 2, -7, 2**70, float("nan"), np.arange(2.0), np.float64(4.0), "x"]
    for target, key, value in itertools.product(targets, keys, assigned):
        outcomes = []
        for method in (HostArray.__setitem__, _twin("__setitem__")):
            a = _host(target)
            b = _host(value) if isinstance(value, np.ndarray) else value
            before = MUTATION[0]
            outcome = _outcome(method, a, key, b)
            outcomes.append((outcome, a._hv.tobytes(), MUTATION[0] - before))
        assert outcomes[0] == outcomes[1], (target, key, value)


def test_copy_agrees_with_its_twin():
    for value in _values():
        for args, kwargs in [((), {}), (("F",), {}), ((), {"order": "C"}), (("X",), {})]:
            got = _outcome(HostArray.copy, _host(value), *args, **kwargs)
            want = _outcome(_twin("copy"), _host(value), *args, **kwargs)
            assert got == want, (value, args, kwargs)
    a = la.asarray(np.arange(4.0))
    b = a.copy()
    b[0] = 9.0
    assert float(a[0]) == 0.0


def test_fallbacks_keep_deferral_large_results_and_the_device_tier():
    big = la.asarray(np.ones(DEFER_ELEMENTS))
    assert type(big + big) is PendingArray              # (the twin deferred it)
    assert type(big[1:] + big[1:]) is HostArray
    assert type(big * 2.0) is PendingArray
    pending = big + big
    assert type(la.asarray(np.ones(DEFER_ELEMENTS)) + pending) is PendingArray
    small = la.asarray(np.arange(3.0))
    wide = small[:, None]
    outer = wide * small
    assert type(outer) is HostArray and outer.shape == (3, 3)
    with la.tier("device"):
        lazy = small * 2.0
        assert type(lazy) is not HostArray
        np.testing.assert_array_equal(lazy, np.arange(3.0) * 2.0)
        part = small[1:]
        assert type(part) is not HostArray
    large = la.asarray(np.ones(SMALL + 1, np.int64))
    assert (large + 1).shape == (SMALL + 1,)      # (wrap() decides where it lives)
    np.testing.assert_array_equal(large + 1, np.full(SMALL + 1, 2))


def test_inside_jit_the_twins_record():
    @la.jit
    def step(u):
        u[1:] = u[1:] - 0.5 * (u[1:] - u[:-1])
        u[0] = 1.0
        return u * 2.0

    u_np = np.linspace(0, 1, 40)
    got = step(la.asarray(u_np.copy()))
    want = u_np.copy()
    want[1:] = want[1:] - 0.5 * (want[1:] - want[:-1])
    want[0] = 1.0
    np.testing.assert_array_equal(got, want * 2.0)


def test_uninstall_puts_the_twins_back():
    cdispatch.uninstall()
    try:
        assert not cdispatch.installed()
        assert type(HostArray.__dict__["__add__"]).__name__ == "function"
        x = la.asarray(np.arange(3.0))
        np.testing.assert_array_equal(x + 1, [1.0, 2.0, 3.0])
    finally:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("LAZYARRAY_NATIVE", "sync")
            cdispatch.install()
    assert cdispatch.installed()
    assert type(HostArray.__dict__["__add__"]).__name__ == "method_descriptor"


def test_a_write_computes_the_pending_expressions_first():
    big = la.asarray(np.ones(DEFER_ELEMENTS))
    doubled = big * 2.0
    assert type(doubled) is PendingArray
    big[0] = 5.0                                        # (a C write, after a flush)
    big[1:3] = la.asarray(np.array([7.0, 8.0]))
    assert float(doubled[0]) == 2.0 and float(doubled[2]) == 2.0
    assert float(big[0]) == 5.0 and float(big[2]) == 8.0


def test_ufunc_calls_agree_with_their_twin():
    from lazyarray.api.ufuncs import Ufunc

    c_call = Ufunc.__dict__["__call__"]
    assert type(c_call).__name__ == "method_descriptor"
    twin = cdispatch._CALL_TWINS[Ufunc]
    ufuncs = sorted({getattr(la, name) for name in dir(la)
                     if isinstance(getattr(la, name), Ufunc)}, key=lambda u: u.__name__)
    assert len(ufuncs) > 50
    values = _values()[:8]
    numbers = [2, 0.5, -1, 2**70, True]
    for ufunc in ufuncs:
        arity = ufunc.nin
        pool = [*values, *numbers]
        cases = [(v,) for v in pool] if arity == 1 else \
            [(a, b) for a in values for b in (*values[:4], *numbers)] + \
            [(b, a) for a in values[:3] for b in numbers]
        for case in cases:
            def operands(case=case):
                return [_host(v) if isinstance(v, np.ndarray) else v for v in case]
            got = _outcome(c_call, ufunc, *operands())
            want = _outcome(twin, ufunc, *operands())
            assert got == want, (ufunc, case)
    x = la.asarray(np.arange(3.0))
    out = la.asarray(np.zeros(3))
    assert la.add(x, 1.0, out=out) is out                  # (keywords: the twin)
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("name", ["__neg__", "__pos__", "__abs__", "__invert__"])
def test_unary_operators_agree_with_their_twins(name):
    assert type(HostArray.__dict__[name]).__name__ == "method_descriptor"
    for value in _values():
        got = _outcome(getattr(HostArray, name), _host(value))
        want = _outcome(_twin(name), _host(value))
        assert got == want, (name, value)
    with la.tier("device"):
        lazy = -la.asarray(np.arange(3.0))
        assert type(lazy) is not HostArray
        np.testing.assert_array_equal(lazy, -np.arange(3.0))


@pytest.mark.parametrize("name", ["__iadd__", "__isub__", "__imul__", "__itruediv__"])
def test_in_place_operators_agree_with_their_twins_and_count_the_write(name):
    assert type(HostArray.__dict__[name]).__name__ == "method_descriptor"
    values = _values()
    for target, other in itertools.product(values[:8], [*values[:8], *_OTHERS]):
        outcomes = []
        for method in (getattr(HostArray, name), _twin(name)):
            a = _host(target)
            b = _host(other) if isinstance(other, np.ndarray | np.generic) else other
            before = MUTATION[0]
            got = _outcome(method, a, b)
            outcomes.append((got, np.asarray(a._hv).tobytes(), MUTATION[0] - before))
        assert outcomes[0] == outcomes[1], (name, target, other)
    x = la.asarray(np.arange(4.0))
    same = x
    x += 1.0
    assert x is same
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0, 4.0])


def test_an_in_place_write_computes_the_pending_expressions_first():
    big = la.asarray(np.ones(DEFER_ELEMENTS))
    doubled = big * 2.0
    assert type(doubled) is PendingArray
    big += 1.0
    assert float(doubled[0]) == 2.0 and float(big[0]) == 2.0


def test_a_damaged_module_in_the_cache_is_built_again(monkeypatch, tmp_path):
    monkeypatch.setenv("LAZYARRAY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("LAZYARRAY_NATIVE", "sync")
    path = cdispatch._library()
    assert str(path).startswith(str(tmp_path))
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a shared library")
    cdispatch.uninstall()
    monkeypatch.setattr(cdispatch, "_MODULE", [])     # (as in a new process)
    try:
        cdispatch.install()
        assert cdispatch.installed()
        assert path.read_bytes() != b"not a shared library"
        x = la.asarray(np.arange(3.0))
        np.testing.assert_array_equal(x * 2.0, [0.0, 2.0, 4.0])
    finally:
        cdispatch.install()
    assert cdispatch.installed()


def test_the_c_call_of_numpy_functions_agrees_with_quick_call():
    from lazyarray.host.dispatch import _NO, C_CALL, quick_call

    assert C_CALL, "the C call was not installed"
    call = C_CALL[0]
    small = _values()[:8]
    cases = [(np.roll, (v, 1)) for v in small] + \
        [(np.transpose, (v,)) for v in small] + \
        [(np.asarray, (v,)) for v in small] + \
        [(np.nonzero, (v,)) for v in small] + \
        [(np.clip, (v, 0, 1)) for v in small] + \
        [(np.where, (v, 1.0, v)) for v in small] + \
        [(np.sum, (v,)) for v in small] + \
        [(np.reshape, (np.arange(6.0), (2, 3)))] + \
        [(np.concatenate, ([np.arange(3.0)],))] + \
        [(np.roll, (np.arange(5.0), "x")), (np.roll, (np.arange(5.0), None)),
         (np.add, (np.arange(3.0), 1j)), (np.tile, (np.arange(3.0), SMALL))]
    for function, args in cases:
        def operands(args=args):
            return tuple(_host(a) if isinstance(a, np.ndarray) else a for a in args)
        got = _outcome(call, function, operands())
        want = _outcome(quick_call, function, operands())
        assert got == want, (function, args)
        if type(args[0]) is np.ndarray and function is np.asarray:
            handle = _host(args[0])
            assert call(function, (handle,)) is handle      # (its own buffer: itself)
    # lists and tuples of host arrays, elements and numbers (np.array([a, b]))
    x, y = _host(np.arange(3.0)), _host(np.ones(3))
    for function, args in [(np.array, ([x[0], x[1], 2.0],)), (np.concatenate, ([x, y],)),
                           (np.stack, ((x, y),)), (np.array, ([[1.0, x[2]], [x[0], 4]],)),
                           (np.reshape, (x, (3, 1))), (np.array, ([x, [1, 2, 3]],))]:
        got = _outcome(call, function, args)
        assert got == _outcome(quick_call, function, args), (function, args)
        assert got[0][0] is HostArray and not got[1], got
        np.testing.assert_array_equal(function(*args), function(
            *[[np.asarray(v) for v in a] if type(a) is list else np.asarray(a)
              if isinstance(a, HostArray) else a for a in args]))
    # (tuples and lists are not host arrays or scalars: quick_call's "no")
    assert call(np.concatenate, ([np.arange(3.0)],)) is _NO
    with la.tier("device"):
        assert call(np.transpose, (_host(np.arange(3.0)),)) is _NO
