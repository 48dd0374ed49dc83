"""Native steps of host replays (lazyarray.host.native): the elementwise
graph of a hot jitted step compiled as one C loop. Every call gives NumPy's
answer bit for bit and writes its arguments as NumPy does; graphs with a
part the loop does not compute exactly as NumPy (comparisons, integer or
transcendental operations) and calls with arguments that are not
C-contiguous are left to the NumPy calls."""

import numpy as np
import pytest

import lazyarray as la
import lazyarray.host.replay as replay_module
from lazyarray.host import HostArray
from lazyarray.host import native as native_module
from tests.lazyarray.host.test_replay import (  # noqa: F401  (replay_wins: autouse)
    CASES,
    _case,
    _host,
    _lazy,
    _replayed,
    replay_wins,
)

CALLS = 24


@pytest.fixture(autouse=True)
def native_at_once(monkeypatch):
    """The replay chosen once tried (test_replay's ``replay_wins``, imported
    and so in force here too); its native step made at its second call and
    compiled in the calling thread; the calls counted."""
    monkeypatch.setenv("LAZYARRAY_NATIVE", "sync")
    monkeypatch.setattr(replay_module, "NATIVE_AFTER", 1)
    calls = {"native": 0}
    run = native_module.NativeStep.__call__

    def counted(self, values):
        done = run(self, values)
        calls["native"] += done
        return done
    monkeypatch.setattr(native_module.NativeStep, "__call__", counted)
    return calls


def _jitted_calls(function, arguments, calls=CALLS):
    """NumPy's and the jitted function's results and arguments after each of
    *calls* calls, compared bit for bit."""
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in arguments]
    jitted = la.jit(lambda *args: function(la, *args))
    with la.tier("auto"):
        got_args = [_lazy(a) for a in arguments]
        for _ in range(calls):
            want = function(np, *want_args)
            got = jitted(*got_args)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                assert isinstance(g, HostArray)
                np.testing.assert_array_equal(_host(g), w, strict=True)
            for g, w in zip(got_args, want_args):
                if isinstance(w, np.ndarray):
                    np.testing.assert_array_equal(_host(g), w, strict=True)
    return jitted


#: the cases of test_replay whose whole graph a native step computes
NATIVE = {"convection", "heat"}


@pytest.mark.parametrize("name", CASES)
def test_native_steps_give_numpys_answers(name, native_at_once):
    function, arguments = _case(name)
    _jitted_calls(function, arguments)
    assert (native_at_once["native"] >= CALLS // 3) == (name in NATIVE), native_at_once


def stencil_2d(xp, p, b, r):
    pn = p.copy()
    p[1:-1, 1:-1] = ((pn[1:-1, 2:] + pn[1:-1, :-2]) * 0.3 + (pn[2:, 1:-1] - pn[:-2, 1:-1]) / 7
                     - r * b[1:-1, 1:-1] * xp.sqrt(xp.abs(pn[1:-1, 1:-1])))
    p[:, -1] = pn[:, -2]
    p[0, :] = 0
    return p, -xp.sqrt(xp.abs(pn[1:-1, 1:-1])) * 2


def mixed_float32(xp, x, y, s):
    # (Python numbers converted to float32 as NumPy converts them; a float64
    # value from float32 ones and a reciprocal)
    t = x * 0.1 + s * y - 3 / (x + 2)
    return t, (t.astype(xp.float64) * 0.1) ** 2, 1 / (y - 0.7), -(t ** 2)


def periodic(xp, z, w):
    # (joins of the arguments' parts: np.roll, np.concatenate)
    return z + 0.1 * (xp.roll(z, 1, axis=0) + xp.roll(z, -2, axis=1) - 2 * z) \
        - xp.concatenate([w[3:], w[:3]], axis=0) * 0.5


@pytest.mark.parametrize("case", ["stencil_2d", "stencil_2d_float32", "mixed_float32",
                                  "periodic"])
def test_two_dimensional_float32_and_periodic_arithmetic(case, native_at_once):
    rng = np.random.default_rng(3)
    if case == "periodic":
        _jitted_calls(periodic, (rng.standard_normal((6, 7)), rng.standard_normal((6, 7))))
    elif case.startswith("stencil_2d"):
        # (float32: the C functions of absolute values and square roots in float)
        dtype = np.float32 if case.endswith("float32") else np.float64
        p, b = rng.standard_normal((9, 13)).astype(dtype), rng.random((9, 13)).astype(dtype)
        p[1, 2:5] = [-0.0, np.inf, 1e-30]
        _jitted_calls(stencil_2d, (p, b, 0.7))
    else:
        x, y = (rng.standard_normal(40).astype(np.float32) for _ in range(2))
        x[:3] = [np.inf, -0.0, np.nan]
        _jitted_calls(mixed_float32, (x, y, 1.3))
    assert native_at_once["native"] >= CALLS // 3


def test_an_argument_not_c_contiguous_is_left_to_numpy(native_at_once):
    """A call whose argument is a strided view runs the NumPy calls; the next
    contiguous one runs natively again."""
    from tests.lazyarray.host.test_replay import heat

    jitted = la.jit(lambda u: heat(la, u, 0.25))
    rng = np.random.default_rng(5)
    with la.tier("auto"):
        u = la.asarray(rng.random(40))
        for _ in range(CALLS):
            jitted(u)
        before = native_at_once["native"]
        whole = rng.random(80)
        strided = la.asarray(whole.copy())[::2]
        jitted(strided)
        assert native_at_once["native"] == before
        want = whole[::2].copy()
        heat(np, want, 0.25)
        np.testing.assert_array_equal(strided.get(), want)
        jitted(u)
        assert native_at_once["native"] == before + 1
    text = la.explain(jitted, print_it=False, show_code=True)
    assert "host replay: a native loop of 5 operations (C, built)" in text, text
    assert "void native_step(double const *restrict a" in text, text


def test_explain_says_why_a_replay_has_no_native_loop():
    from tests.lazyarray.host.test_replay import integers

    rng = np.random.default_rng(2)
    jitted = _jitted_calls(integers, (rng.integers(0, 50, 12), rng.integers(0, 50, 12)))
    text = la.explain(jitted, print_it=False)
    assert "host replay: no native loop: the graph has an argument of int64 (12,)" in text, text


def test_random_graphs_natively_give_numpys_answers(native_at_once):
    """The fuzzer's graphs replayed (as in test_replay) with native steps:
    NumPy's answers; some graphs are computed natively."""
    import warnings

    import tests.fuzz_graphs as F

    failures = []
    for index in range(300):
        program = F.generate(20240611, index)
        if program.expect_error is not None or program.expect_float16:
            continue
        # (NumPy's default error settings, which native loops reproduce; its
        # warnings not shown)
        with la.tier("auto"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = _replayed(program, calls=3)
        for call, got in enumerate(results or ()):
            wrong = F.compare(program.vals[program.out_line], got)
            if wrong is not None:
                failures.append(f"graph {index}, call {call + 1}: {wrong}\n{program.source()}")
    assert not failures, "\n\n".join(failures[:5])
    assert native_at_once["native"] > 0


def test_floating_point_exceptions_warn_and_raise_as_numpy(native_at_once):
    """A division by zero in a native loop is NumPy's: the call is computed
    again by NumPy, which warns (or raises, under ``np.errstate``) as its
    settings say; calls without one stay native."""
    import warnings

    def ratio(xp, x, y):
        return (x - 1.0) / y

    rng = np.random.default_rng(9)
    x, y = rng.random(30), rng.random(30) + 0.5
    jitted = _jitted_calls(ratio, (x, y))
    before = native_at_once["native"]
    zeros = y.copy()
    zeros[4] = 0.0
    with la.tier("auto"):
        with pytest.warns(RuntimeWarning, match="divide by zero"):
            got = jitted(la.asarray(x), la.asarray(zeros))
        with np.errstate(divide="ignore"):
            want = (x - 1.0) / zeros
        np.testing.assert_array_equal(got.get(), want)
        with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
            jitted(la.asarray(x), la.asarray(zeros))
        assert native_at_once["native"] == before
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            np.testing.assert_array_equal(jitted(la.asarray(x), la.asarray(y)).get(),
                                          (x - 1.0) / y)
        assert native_at_once["native"] == before + 1
