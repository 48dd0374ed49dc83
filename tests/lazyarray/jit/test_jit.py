"""la.jit: results equal NumPy's, tracing happens once per signature, replays
launch only the planned kernels."""

import subprocess
import sys
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la
from lazyarray import target as la_target
from tests.helpers import ROOT, counting


def _rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).random(shape).astype(dtype)


def test_same_signature_traces_once_and_replays_the_kernels(queue):
    @la.jit
    def f(x, y):
        return np.sin(x) * y + 1

    a, b = _rand(100), _rand(100, seed=1)
    np.testing.assert_allclose(f(a, b).get(), np.sin(a) * b + 1, rtol=1e-6)
    with counting() as ran:
        for seed in range(3):
            c, d = _rand(100, seed=seed + 5), _rand(100, seed=seed + 9)
            np.testing.assert_allclose(np.asarray(f(c, d)), np.sin(c) * d + 1, rtol=1e-6)
        assert f.trace_count == 1
    assert ran.launches == 3     # one fused kernel per call


def test_new_shape_or_dtype_retraces(queue):
    @la.jit
    def f(x):
        return (x * 2).sum(axis=0)

    f(_rand((4, 3)))
    f(_rand((4, 3), seed=2))
    assert f.trace_count == 1
    np.testing.assert_allclose(f(_rand((5, 3))).get(), 2 * _rand((5, 3)).sum(axis=0),
                               rtol=1e-5)
    assert f.trace_count == 2
    x64 = _rand((4, 3), np.float64)
    out = f(x64)
    assert out.dtype == np.float64 and f.trace_count == 3
    np.testing.assert_allclose(out.get(), 2 * x64.sum(axis=0))


def test_static_arguments_and_python_scalars(queue):
    @la.jit(static_argnums=1)
    def scaled_sum(x, axis, scale):
        return x.sum(axis=axis) * scale

    a = _rand((3, 4))
    np.testing.assert_allclose(scaled_sum(a, 0, 2.0).get(), a.sum(axis=0) * 2, rtol=1e-6)
    np.testing.assert_allclose(scaled_sum(a, 1, 2.0).get(), a.sum(axis=1) * 2, rtol=1e-6)
    assert scaled_sum.trace_count == 2
    # a new Python float is a new value of the same trace, not a new signature
    np.testing.assert_allclose(scaled_sum(a, 1, 3.0).get(), a.sum(axis=1) * 3, rtol=1e-6)
    assert scaled_sum.trace_count == 2
    # a new kind of scalar is
    np.testing.assert_allclose(scaled_sum(a, 1, 3).get(), a.sum(axis=1) * 3, rtol=1e-6)
    assert scaled_sum.trace_count == 3


def test_static_argnames_must_be_hashable(queue):
    f = la.jit(lambda x, axes: x.sum(axis=axes), static_argnames="axes")
    with pytest.raises(la.LazyArrayError, match="hashable"):
        f(_rand((2, 2)), [0])


@dataclass
class State:
    u: object
    v: object


def test_containers_in_and_out(queue):
    @la.jit
    def step(state, params):
        u = state.u + params["dt"] * state.v
        return State(u=u, v=state.v * params["decay"]), [u.max(), (u.min(),)]

    u, v = _rand(50), _rand(50, seed=3)
    dt, decay = np.float32(0.1), np.float32(0.9)
    new, [mx, (mn,)] = step(State(u, v), {"dt": dt, "decay": decay})
    expected_u = u + dt * v
    assert isinstance(new, State)
    np.testing.assert_allclose(new.u.get(), expected_u, rtol=1e-6)
    np.testing.assert_allclose(new.v.get(), v * decay, rtol=1e-6)
    assert float(mx) == pytest.approx(expected_u.max(), rel=1e-6)
    assert float(mn) == pytest.approx(expected_u.min(), rel=1e-6)
    # feed the result back: the same signature, no retrace
    step(new, {"dt": dt, "decay": decay})
    assert step.trace_count == 1


def test_closure_constants_and_identity_outputs(queue):
    offset = la.asarray(np.arange(4, dtype=np.float32))

    @la.jit
    def f(x):
        return x, x + offset

    a = _rand(4)
    same, shifted = f(a)
    np.testing.assert_array_equal(same.get(), a)
    np.testing.assert_allclose(shifted.get(), a + np.arange(4), rtol=1e-6)


def test_lazy_arguments_are_evaluated_first(queue):
    f = la.jit(lambda x: x * x)
    a = la.asarray(_rand(10)) + 1
    np.testing.assert_allclose(f(a).get(), (_rand(10) + 1) ** 2, rtol=1e-6)


def test_unsupported_argument_is_reported(queue):
    f = la.jit(lambda x: x)
    with pytest.raises(la.LazyArrayError, match="cannot pass a object"):
        f(object())


@settings(max_examples=15)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=3), st.integers(0, 2**31 - 1))
def test_jit_matches_eager_and_numpy(shape, seed):
    @la.jit
    def f(x, y):
        return np.exp(-x) * y - x.mean(), (y * y).sum()

    a, b = _rand(tuple(shape), seed=seed), _rand(tuple(shape), seed=seed + 1)
    r, s = f(a, b)
    np.testing.assert_allclose(r.get(), np.exp(-a) * b - a.mean(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(s), (b * b).sum(), rtol=1e-5)
    r2, _ = f(b, a)
    np.testing.assert_allclose(r2.get(), np.exp(-b) * a - b.mean(), rtol=1e-5, atol=1e-6)
    # (one program for the signature: traced here, or by an earlier example's f)
    assert len(f.programs) == 1 and f.trace_count <= 1


def test_zero_dimensional_array_arguments_do_not_retrace(queue):
    f = la.jit(lambda x, dt: x * dt)
    for d in (0.1, 0.2, 0.3):
        out = f(np.ones(3, np.float32), np.asarray(d, np.float32))
        np.testing.assert_allclose(out.get(), np.full(3, d, np.float32))
    assert f.trace_count == 1


@pytest.mark.parametrize("kind, launches", [("cpu", 12), ("gpu", 6)])
def test_stencil_steps_are_stored_not_recomputed(queue, monkeypatch, kind, launches):
    """Each step reads the previous one five times: the planner stores every
    step on a CPU (one kernel each), every other step on a GPU (which may
    recompute up to 6 times), instead of recomputing 5**steps times."""
    import importlib.util

    monkeypatch.setattr(la_target, "device_profile", lambda device: (kind, 4))
    path = ROOT / "examples" / "heat2d.py"
    spec = importlib.util.spec_from_file_location("heat2d", path)
    heat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(heat)
    u0 = heat.initial(24)
    with counting() as ran:
        got = heat.run_jit(u0, steps=12).get()
    assert ran.launches == launches
    np.testing.assert_allclose(got, heat.run(u0, 12, 0.2), rtol=1e-5, atol=1e-6)
    eager = heat.run(la.asarray(u0), 12, 0.2)
    np.testing.assert_allclose(eager.get(), heat.run(u0, 12, 0.2), rtol=1e-5, atol=1e-6)


def test_jit_of_a_partial():
    import functools

    def scale(k, x):
        return x * k

    f = la.jit(functools.partial(scale, 3))
    a = np.arange(5, dtype=np.float32)
    assert np.array_equal(np.asarray(f(a)), a * 3)
    assert "scale" in f.name


def test_a_jitted_function_called_while_another_is_traced_is_part_of_its_trace(queue):
    inner = la.jit(lambda x, k: x * k, static_argnums=1)
    outer = la.jit(lambda x: inner(x, 2) + 1)
    a = np.arange(4, dtype=np.float32)
    assert np.array_equal(outer(a).get(), a * 2 + 1)
    assert np.array_equal(outer(a + 5).get(), (a + 5) * 2 + 1)   # not the first call's
    assert outer.trace_count == 1 and inner.trace_count == 0
    noise = la.jit(lambda x: x + la.random.rand(4))
    twice = la.jit(lambda x: noise(x) * 2)
    assert not np.array_equal(twice(a).get(), twice(a).get())   # new numbers each call


def test_numpys_random_namespace_first_loaded_inside_a_trace_still_draws_anew():
    """``la.random`` loads on first use: loaded by a trace, its global state
    must not restart at every call of the jitted function (same numbers)."""
    program = (
        "import sys, numpy as np, lazyarray as la\n"
        "assert 'lazyarray.random' not in sys.modules\n"
        "noise = la.jit(lambda x: x + la.random.rand(4))\n"
        "a = np.zeros(4, np.float32)\n"
        "first, second = noise(a).get(), noise(a).get()\n"
        "assert not np.array_equal(first, second), (first, second)\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_arguments_named_out_of_alphabetical_order_keep_their_places(queue):
    """Calls passing computed arrays by position take a fast path: it must give
    the program its arrays in the order the trace took them (flattened by
    name), not by position (a wrong answer from the second call on)."""
    @la.jit
    def f(z, a, m):
        return z * 2 + a - m

    h = [np.arange(4.0) * (k + 1) for k in range(3)]
    z, a, m = (la.asarray(x) for x in h)
    for _ in range(3):
        out = f(z, a, m)
        np.testing.assert_array_equal(out.get(), h[0] * 2 + h[1] - h[2])
        z = out
        h[0] = h[0] * 2 + h[1] - h[2]
    assert f.trace_count == 1


SCALE = la.asarray(np.linspace(1.0, 2.0, 1000))


def test_writes_and_rebinding_of_arrays_read_from_outside_retrace(queue):
    # (a trace holds the values it read from globals and closures: NumPy's
    # semantics read them anew at each call)
    global SCALE
    ones = np.ones(1000)

    @la.jit
    def scaled(x):
        return x * SCALE

    np.testing.assert_array_equal(scaled(ones).get(), np.linspace(1.0, 2.0, 1000))
    SCALE[:10] = 3.0
    assert scaled(ones).get()[:11].tolist() == [3.0] * 10 + [np.linspace(1, 2, 1000)[10]]
    assert scaled(ones).get()[0] == 3.0 and scaled.trace_count == 2     # (once per change)
    SCALE = la.full(1000, 5.0)
    np.testing.assert_array_equal(scaled(ones).get(), np.full(1000, 5.0))

    weights = la.asarray(np.arange(1000.0))

    @la.jit
    def shifted(x):
        return x + weights

    np.testing.assert_array_equal(shifted(la.ones(1000)).get(), 1 + np.arange(1000.0))
    weights[0] = -7.0
    assert shifted(la.ones(1000)).get()[0] == -6.0 and shifted.trace_count == 2


def test_writes_to_a_host_array_read_from_outside_retrace_and_others_do_not(queue):
    with la.tier("auto"):
        weights, other = la.asarray(np.arange(100.0)), la.ones(10)
    assert type(weights) is la.HostArray

    @la.jit
    def shifted(x):
        return x + weights

    for k in range(3):
        np.testing.assert_array_equal(shifted(la.ones(100)).get(), 1 + np.arange(100.0))
        other[0] = k                    # (a write to another host array)
    assert shifted.trace_count == 1
    weights[0] = -7.0
    assert shifted(la.ones(100)).get()[0] == -6.0 and shifted.trace_count == 2


@pytest.mark.parametrize("tier", ["auto", "device"])
def test_an_array_passed_twice_is_one_array_in_the_trace(tier):
    # writes through one parameter are read through the other, as in NumPy
    @la.jit
    def bump_then_read(a, b):
        a += 1
        return b * 2

    @la.jit
    def both(a, b):
        a += 1
        b += 10

    with la.tier(tier):
        for n in (4, 70000):
            x = la.zeros(n)
            np.testing.assert_array_equal(np.asarray(bump_then_read(x, x)), np.full(n, 2.0))
            np.testing.assert_array_equal(np.asarray(x), np.ones(n))
            y, z = la.zeros(n), la.zeros(n)
            np.testing.assert_array_equal(np.asarray(bump_then_read(y, z)), np.zeros(n))
            both(x, x)
            np.testing.assert_array_equal(np.asarray(x), np.full(n, 12.0))


def test_jit_on_methods_binds_the_instance():
    @dataclass
    class Model:
        w: la.LazyArray

        @la.jit
        def apply(self, x):
            return x * self.w

    class Plain:
        @la.jit
        def apply(self, x):
            return x + 1

    m = Model(la.asarray(np.arange(3.0)))
    np.testing.assert_array_equal(np.asarray(m.apply(la.ones(3))), np.arange(3.0))
    m.w = la.asarray(np.full(3, 5.0))       # (the instance's arrays are arguments)
    np.testing.assert_array_equal(np.asarray(m.apply(la.ones(3))), np.full(3, 5.0))
    with pytest.raises(la.LazyArrayError, match="cannot pass a Plain"):
        Plain().apply(la.ones(3))
    assert Model.apply is Model.__dict__["apply"]


@pytest.mark.parametrize("tier", ["auto", "device"])
def test_traced_python_ints_compare_and_clip_keeps_numpys_dtype(tier):
    sign = la.jit(lambda x, n: la.where(n > 0, x, -x))
    same = la.jit(lambda x, n, m: x * (n == m))
    clip = la.jit(lambda x, lo, hi: la.clip(x, lo, hi))
    with la.tier(tier):
        x = la.ones(3)
        np.testing.assert_array_equal(np.asarray(sign(x, 3)), np.ones(3))
        np.testing.assert_array_equal(np.asarray(sign(x, -3)), -np.ones(3))
        np.testing.assert_array_equal(np.asarray(same(x, 2, 2)), np.ones(3))
        np.testing.assert_array_equal(np.asarray(same(x, 2, 3)), np.zeros(3))
        for a, lo, hi in ((np.arange(5, dtype=np.float32), 0.5, 2.5),
                          (np.arange(5, dtype=np.int8), 1, 3)):
            got = clip(la.asarray(a), lo, hi)
            expected = np.clip(a, lo, hi)
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(np.asarray(got), expected)


def test_a_write_into_a_global_array_inside_jit_is_refused_and_leaves_it_intact():
    with la.tier("device"):
        table = la.zeros(4)

        @la.jit
        def record(x):
            table[0] = x.sum()
            return x

        with pytest.raises(la.LazyArrayError, match="writes into an array it reads from"):
            record(la.ones(4))
        np.testing.assert_array_equal(table.get(), np.zeros(4))
        table[1] = 5.0                      # (still an ordinary array)
        np.testing.assert_array_equal(table.get(), [0, 5, 0, 0])


@pytest.mark.parametrize("tier", ["auto", "device"])
def test_jit_takes_varargs_keyword_varargs_and_positional_only_parameters(tier):
    namespace: dict = {}
    exec("def shifted(x, /, y=1.0):\n    return x + y", namespace)

    def mixed(a, *rest, scale=1.0, **named):
        return (a + sum(rest)) * scale + named.get("b", 0)

    with la.tier(tier):
        ones = la.ones(3)
        np.testing.assert_array_equal(np.asarray(la.jit(lambda *xs: xs[0] + xs[1])(ones, ones)),
                                      np.full(3, 2.0))
        np.testing.assert_array_equal(np.asarray(la.jit(lambda **kw: kw["a"] * 2)(a=ones)),
                                      np.full(3, 2.0))
        shifted = la.jit(namespace["shifted"])
        np.testing.assert_array_equal(np.asarray(shifted(ones)), np.full(3, 2.0))
        np.testing.assert_array_equal(np.asarray(shifted(ones, 2.0)), np.full(3, 3.0))
        got = la.jit(mixed)(ones, ones, ones, scale=2.0, b=ones)
        np.testing.assert_array_equal(np.asarray(got), np.full(3, 7.0))


@pytest.mark.parametrize("n", [10, 70001])
def test_index_arrays_computed_inside_jit_are_each_calls_own(n):
    # (they were computed while tracing, for their bounds, and so frozen into
    # the program: a second call indexed with the first call's argmax)
    rng = np.random.default_rng(n)
    cases = [
        (lambda a: a[la.argmax(a)], lambda a: a[np.argmax(a)]),
        (lambda a: a[la.argsort(a)], lambda a: a[np.argsort(a)]),
        (lambda a: la.take(a, la.argsort(a)), lambda a: np.take(a, np.argsort(a))),
        (lambda a: a.reshape(-1, 1)[la.arange(a.size), la.argmin(a.reshape(-1, 1), 1)],
         lambda a: a.reshape(-1, 1)[np.arange(a.size), np.argmin(a.reshape(-1, 1), 1)]),
        (lambda a: la.digitize(a, -la.sort(-a[:3])),
         lambda a: np.digitize(a, -np.sort(-a[:3]))),
    ]
    with la.tier("device"):
        for jitted, numpy_version in cases:
            f = la.jit(jitted)
            for _ in range(3):
                x = rng.standard_normal(n)
                np.testing.assert_array_equal(np.asarray(f(la.asarray(x))), numpy_version(x))


def test_python_integers_beyond_int64_are_part_of_the_signature():
    # (a traced int is int64: beyond it, the value is the signature's, NumPy's rules)
    scale = la.jit(lambda v, k: v * k)
    np.testing.assert_array_equal(scale(la.asarray(np.ones(3)), 2**70).get(), np.ones(3) * 2**70)
    np.testing.assert_array_equal(scale(la.asarray(np.ones(3)), 3).get(), np.ones(3) * 3)
    with pytest.raises(OverflowError):
        scale(la.asarray(np.ones(3, np.int64)), 2**70)


def test_index_arguments_out_of_range_raise_in_the_tracing_call():
    # (NumPy's IndexError, where they wrapped around the extent silently)
    gather = la.jit(lambda v, k: v[k])
    along = la.jit(lambda a, k: la.take_along_axis(a, k, axis=1))
    v, a = np.arange(10.0, 14.0), np.arange(12.0).reshape(3, 4)
    for bad in ([-5, 4], [0, 100]):
        with pytest.raises(IndexError, match="out of bounds"):
            gather(la.asarray(v), la.asarray(np.array(bad)))
    with pytest.raises(IndexError, match="out of bounds"):
        along(la.asarray(a), la.asarray(np.full((3, 1), 7)))
    np.testing.assert_array_equal(gather(la.asarray(v), la.asarray(np.array([-4, 3]))).get(),
                                  v[[-4, 3]])
    np.testing.assert_array_equal(along(la.asarray(a), la.asarray(np.full((3, 1), 2))).get(),
                                  a[:, 2:3])


def test_jit_says_what_it_cannot_take():
    # a misspelled static argument is refused when decorating (it would be
    # traced); a returned string names itself, not kernelcore's internals
    def f(x, steps):
        return x * steps
    with pytest.raises(TypeError, match="static_argnames names 'step'"):
        la.jit(f, static_argnames="step")
    with pytest.raises(TypeError, match="static_argnums 2 is out of range"):
        la.jit(f, static_argnums=2)
    assert la.jit(f, static_argnames="steps")(la.asarray(np.ones(2)), 3).get().tolist() == [3, 3]
    labelled = la.jit(lambda v: (v * 2, "label"))
    with pytest.raises(la.LazyArrayError, match="returned a str"):
        labelled(la.asarray(np.ones(3)))


def test_a_traced_size_says_to_make_it_static():
    # (the message named repr() or print(), which the user did not call)
    zeros_like_n = la.jit(lambda x, n: x + la.zeros(n))
    with la.tier("device"), pytest.raises(la.ConcretizationError,
                                          match="(?s)use as an index or size.*static"):
        zeros_like_n(la.asarray(np.ones(3)), 3)


def test_a_time_step_writing_into_its_argument_replays_its_bound_launch(queue, monkeypatch):
    # (u[1:-1] = ...; return u: the caller's array and the result get the
    # step's value, and later calls launch the bound kernel directly, with no
    # per-step planning or arguments by name)
    @la.jit
    def step(u):
        u[1:-1] = u[1:-1] + 0.25 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u[0] = 0
        return u

    h = np.sin(np.linspace(0, 3, 200))
    u = la.asarray(h.copy())
    for _ in range(3):
        old = u
        u = step(u)
        h[1:-1] = h[1:-1] + 0.25 * (h[2:] - 2 * h[1:-1] + h[:-2])
        h[0] = 0
        np.testing.assert_allclose(np.asarray(old), h, rtol=1e-15, atol=0)
    import lazyarray.run as run
    planned = []
    original = run.run_step
    monkeypatch.setattr(run, "run_step", lambda *a, **k: planned.append(1) or original(*a, **k))
    with counting() as ran:
        for _ in range(5):
            old = u
            u = step(u)
            h[1:-1] = h[1:-1] + 0.25 * (h[2:] - 2 * h[1:-1] + h[:-2])
            h[0] = 0
        np.testing.assert_allclose(np.asarray(u), h, rtol=1e-14, atol=1e-300)
        np.testing.assert_allclose(np.asarray(old), h, rtol=1e-14, atol=1e-300)
    assert ran.launches == 5 and not planned and step.trace_count == 1


def test_a_step_returning_weights_and_a_loss_replays_its_bound_launches(queue, monkeypatch):
    # (several results, one of them 0-d, and a product: later calls launch
    # the bound kernels directly, as a single result's call does)
    @la.jit
    def train(w, x, y):
        r = x @ w - y
        return w - 0.1 * (x.T @ r) / len(y), (r * r).mean(), {"norm": (w * w).sum()}

    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((40, 3)), rng.standard_normal(40)
    w, want = la.zeros(3), np.zeros(3)
    import lazyarray.run as run
    planned = []
    original = run.run_step
    for call in range(6):
        if call == 2:
            monkeypatch.setattr(run, "run_step",
                                lambda *a, **k: planned.append(1) or original(*a, **k))
        w, loss, extra = train(w, la.asarray(x), la.asarray(y))
        r = x @ want - y
        want, want_loss, norm = want - 0.1 * (x.T @ r) / 40, (r * r).mean(), (want * want).sum()
        np.testing.assert_allclose(np.asarray(w), want, rtol=1e-13)
        np.testing.assert_allclose(float(loss), want_loss, rtol=1e-13)
        np.testing.assert_allclose(float(extra["norm"]), norm, rtol=1e-13, atol=1e-300)
    assert not planned and train.trace_count == 1


def _decorated(scale):
    """A jitted function made anew on each call (a script's nested step)."""
    @la.jit
    def step(u):
        u[1:-1] = u[1:-1] + scale * (u[2:] - 2 * u[1:-1] + u[:-2])
        return u
    return step


def test_a_function_made_again_shares_the_program_only_with_equal_constants(caplog):
    # a nested step decorated on each run: the second traces and plans
    # nothing (and the log says whose program it runs); a new constant is a
    # new program with its value
    import logging

    caplog.set_level(logging.INFO, logger="lazyarray.jit")
    a = _rand(300, np.float64)
    with la.tier("device"):
        first = _decorated(0.25)
        got_first = first(la.asarray(a.copy()))
        second, u = _decorated(0.25), la.asarray(a.copy())
        with counting() as ran:
            got_second = second(u)
            planned, launches = ran.planned, ran.launches
        third = _decorated(0.125)
        got_third = third(la.asarray(a.copy()))
    assert (first.trace_count, second.trace_count, third.trace_count) == (1, 0, 1)
    assert planned == 0 and launches == 1
    shared = [r for r in caplog.records if "an earlier function of the same code" in r.message]
    assert len(shared) == 1
    for got, scale in [(got_first, 0.25), (got_second, 0.25), (got_third, 0.125)]:
        want = a.copy()
        want[1:-1] = want[1:-1] + scale * (want[2:] - 2 * want[1:-1] + want[:-2])
        np.testing.assert_allclose(got.get(), want, rtol=1e-13)


def test_a_function_reading_an_array_or_a_changed_global_traces_its_own_program():
    # an array in the closure (its values are in the trace), a module global
    # rebound between the two functions: no program is shared
    import types

    params = types.ModuleType("params")
    params.dt = 0.5

    def make(weights):
        return la.jit(lambda u: u * params.dt + weights)

    a = _rand(50, np.float64)
    with la.tier("device"):
        weights = la.asarray(np.arange(50.0))
        first, second = make(weights), make(weights)
        np.testing.assert_allclose(first(la.asarray(a)).get(), a * 0.5 + np.arange(50.0))
        np.testing.assert_allclose(second(la.asarray(a)).get(), a * 0.5 + np.arange(50.0))
        assert (first.trace_count, second.trace_count) == (1, 1)
        scale = la.jit(lambda u: u * params.dt)
        np.testing.assert_allclose(scale(la.asarray(a)).get(), a * 0.5)
        params.dt = 0.25
        again = la.jit(lambda u: u * params.dt)
        np.testing.assert_allclose(again(la.asarray(a)).get(), a * 0.25)
        assert again.trace_count == 1


def test_a_program_holding_arrays_made_from_host_data_is_not_shared():
    # the trace turned host data into an array (here NumPy's random draw,
    # made anew by each trace): each function keeps its own
    def make():
        return la.jit(lambda u: u + la.asarray(np.random.default_rng().random(5)))

    with la.tier("device"):
        u = la.zeros(5)
        first, second = make(), make()
        x, y = first(u).get(), second(u).get()
    assert second.trace_count == 1 and not np.array_equal(x, y)
