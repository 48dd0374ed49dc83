"""The host replay of a jitted function (lazyarray.host.replay): calls on
small host arrays computed from the trace's graph by NumPy, without running
the function. Every call gives NumPy's answer, bit for bit, writes into its
arguments as the function does and returns fresh arrays; it plans, builds
and launches nothing; functions made anew from the same code share a
replay only where they read equal constants."""

import numpy as np
import pytest

import lazyarray as la
from lazyarray.host import HostArray
from lazyarray.host import trial as trial_module
from lazyarray.host.trial import TierTrial
from tests.helpers import counting

CALLS = 24


@pytest.fixture(autouse=True)
def replay_wins(monkeypatch, tmp_path):
    """No trial remembered; the function's own calls look slow, so the
    replay is chosen once tried; no compiled trial."""
    monkeypatch.setattr(trial_module, "_TRIALS", {})
    monkeypatch.setattr(trial_module, "PROMOTE_AFTER", 1e9)
    monkeypatch.setenv("LAZYARRAY_CACHE_DIR", str(tmp_path))
    record = TierTrial.record
    monkeypatch.setattr(TierTrial, "record", lambda self, tier, seconds: record(
        self, tier, seconds + (1.0 if tier == "host" else 0.0)))


def _trial(jitted) -> TierTrial:
    (trial,) = jitted.tier_trials.values()
    return trial


def convection(xp, u):
    un = u.copy()
    u[1:] = un[1:] - 0.4 * (un[1:] - un[:-1])
    u[0] = 1.0
    return u


def heat(xp, u, r):
    u[1:-1] = u[1:-1] + r * (u[2:] - 2 * u[1:-1] + u[:-2])
    u[0] = 0
    u[-1] = 0
    return u


def jacobi(xp, p, b):
    pn = p.copy()
    p[1:-1, 1:-1] = (pn[1:-1, 2:] + pn[1:-1, :-2] + pn[2:, 1:-1] + pn[:-2, 1:-1]
                     - b[1:-1, 1:-1]) / 4
    p[:, -1] = p[:, -2]
    p[0, :] = p[1, :]
    p[:, 0] = p[:, 1]
    p[-1, :] = 0
    return p, xp.sqrt(xp.sum((p - pn) ** 2))


def statistics(xp, x):
    centred = x - x.mean(axis=0)
    return (centred / (x.std(axis=0) + 1e-3), xp.cumsum(x, axis=1), x.max(), x.argmin(axis=1),
            xp.where(x > 0.5, x, -x), xp.clip(x, 0.2, 0.8).reshape(-1))


def outer(xp, a, b):
    return xp.exp(-(a[:, None] - b[None, :]) ** 2) @ b


def shift(xp, u):
    u[1:] = u[:-1]
    return u[2:5]


def integers(xp, k, m):
    k[::2] = (k[::2] * 3 + m[1::2]) % 7
    return k // 2, k.sum(), -k[::-1]


def float32_with_python_numbers(xp, x, s):
    return x * 0.5 + s, (x < 0.25).astype(xp.float32) * x


def shifted(xp, u):
    # (the written part reads the argument shifted by one: computed straight
    # into the buffer, NumPy copies the overlapping operand first)
    u[1:] = u[:-1] * 0.5 + 1.0
    u[0] = u[-1] - 1.0
    return u


def chains(xp, x, k):
    # (temporaries written over by the next call of their chain; one read by
    # a sum and by a product is not, nor the int chain under a float result)
    t = xp.sqrt(x * x + 1.0) - x
    m = (k * 3 + 1) % 5
    return t * m, m, t.sum(), -(x + 2.0)


def _case(name):
    """(function, its arguments for NumPy as a function of the call)."""
    rng = np.random.default_rng(7)
    line, grid, rhs = rng.random(33), rng.random((9, 11)), rng.random((9, 11))
    x = rng.random((6, 5))
    f32 = rng.random(17).astype(np.float32)
    k, m = rng.integers(0, 50, 12), rng.integers(0, 50, 12)
    return {
        "convection": (convection, (line,)),
        "heat": (heat, (line, 0.3)),
        "jacobi": (jacobi, (grid, rhs)),
        "statistics": (statistics, (x,)),
        "outer": (outer, (line[:7], line[7:14])),
        "shift": (shift, (line,)),
        "integers": (integers, (k, m)),
        "float32": (float32_with_python_numbers, (f32, 1.5)),
        "shifted": (shifted, (line,)),
        "chains": (chains, (line[:12], k)),
    }[name]


def _lazy(value):
    return la.asarray(value.copy()) if isinstance(value, np.ndarray) else value


def _host(value):
    return value.get() if isinstance(value, HostArray) else np.asarray(value)


CASES = ["convection", "heat", "jacobi", "statistics", "outer", "shift", "integers", "float32",
         "shifted", "chains"]


@pytest.mark.parametrize("name", CASES)
def test_replayed_calls_give_numpys_answers_and_write_arguments_as_numpy(name):
    function, arguments = _case(name)
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in arguments]
    jitted = la.jit(lambda *args: function(la, *args))
    with la.tier("auto"), counting() as n:
        got_args = [_lazy(a) for a in arguments]
        for call in range(CALLS):
            want = function(np, *want_args)
            got = jitted(*got_args)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                assert isinstance(g, HostArray)
                np.testing.assert_array_equal(_host(g), w)
                assert _host(g).dtype == np.asarray(w).dtype, (name, call)
            for g, w in zip(got_args, want_args):
                if isinstance(w, np.ndarray):
                    np.testing.assert_array_equal(_host(g), w)
    trial = _trial(jitted)
    assert trial.next_tier() == "replay" and trial.replay_calls > CALLS // 2
    assert n.planned == 0 and n.launches == 0 and jitted.trace_count == 0


def test_a_replayed_step_reuses_its_temporaries_and_writes_into_the_argument():
    """The heat step's replay holds one temporary at a time and computes the
    written interior straight into the argument (NumPy's run of the function
    holds two or three temporaries and copies the interior in): its peak of
    new memory is one array, with NumPy's answer."""
    import tracemalloc

    n = 20_000
    start = np.sin(np.linspace(0, 3, n))
    jitted = la.jit(lambda u: heat(la, u, 0.3))
    with la.tier("auto"):
        u = la.asarray(start.copy())
        for _ in range(CALLS):
            jitted(u)
        assert _trial(jitted).next_tier() == "replay"
        tracemalloc.start()
        try:
            jitted(u)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    want = start.copy()
    for _ in range(CALLS + 1):
        heat(np, want, 0.3)
    np.testing.assert_array_equal(u.get(), want)
    assert peak < 1.5 * n * 8, peak


def test_a_returned_argument_is_the_callers_array_and_other_results_are_fresh():
    jitted = la.jit(lambda u: convection(la, u))
    copy_of = la.jit(lambda u: (u.copy(), u[1:4]))
    with la.tier("auto"):
        u = la.ones(10)
        for _ in range(CALLS):
            assert jitted(u) is u
        for _ in range(CALLS):
            whole, part = copy_of(u)
        assert _trial(copy_of).next_tier() == "replay"
        whole[:] = 5
        part[:] = 7
    np.testing.assert_array_equal(u.get(), np.ones(10))


def test_a_function_made_again_shares_the_replay_only_with_equal_constants():
    """A script decorating a nested step on each run: equal constants share
    one replay (traced once); a new constant gives a new one, whose answers
    use it."""
    def make(r):
        return la.jit(lambda u: heat(la, u, r))

    with la.tier("auto"):
        first = make(0.25)
        u = la.linspace(0, 1, 21) ** 2
        for _ in range(CALLS):
            first(u)
        trial = _trial(first)
        second = make(0.25)
        second(u)
        assert second._replays[trial] is first._replays[trial]
        third = make(0.125)
        v, want = la.linspace(0, 1, 21) ** 2, np.linspace(0, 1, 21) ** 2
        for _ in range(3):
            third(v)
            heat(np, want, 0.125)
        assert third._replays[trial] is not first._replays[trial]
    np.testing.assert_array_equal(v.get(), want)
    assert len(trial.replays) == 2


def test_a_module_attribute_changed_between_functions_is_read_anew():
    """``params.dt`` read from a parameters module: a function made anew
    after it changed replays with the new value (not a shared replay)."""
    import types

    params = types.ModuleType("params")
    params.dt = 0.5

    def make():
        return la.jit(lambda u: u * params.dt + 1)

    with la.tier("auto"):
        u = la.ones(8)
        first = make()
        for _ in range(CALLS):
            got = first(u)
        np.testing.assert_array_equal(got.get(), np.full(8, 1.5))
        params.dt = 0.25
        second = make()
        for _ in range(3):
            got = second(u)
        assert _trial(second) is _trial(first) and _trial(first).next_tier() == "replay"
    np.testing.assert_array_equal(got.get(), np.full(8, 1.25))


def test_a_bool_argument_is_not_baked_into_a_replay():
    """A bool (or string, or NumPy scalar) argument is part of the trace, but
    the tier trial's signature holds its type only: no replay."""
    jitted = la.jit(lambda u, flag: u * 2 if flag else u * 3)
    with la.tier("auto"):
        u = la.ones(4)
        for call in range(CALLS):
            flag = call % 3 == 0
            np.testing.assert_array_equal(jitted(u, flag).get(), np.full(4, 2.0 if flag else 3.0))
    assert not _trial(jitted).replay_ok


def test_a_closure_array_written_between_calls_is_read_anew():
    table = la.arange(6.0)
    jitted = la.jit(lambda u: u * table)
    with la.tier("auto"):
        u = la.ones(6)
        for _ in range(CALLS):
            jitted(u)
        table[2] = 100.0
        got = jitted(u)
    assert _trial(jitted).next_tier() == "replay"
    np.testing.assert_array_equal(got.get(), [0, 1, 100, 3, 4, 5])


def test_a_function_whose_graph_has_no_replay_runs_itself():
    jitted = la.jit(lambda u: la.sort(u)[::-1] + 1)
    with la.tier("auto"):
        u = la.asarray(np.random.default_rng(3).random(20))
        for _ in range(CALLS):
            got = jitted(u)
    trial = _trial(jitted)
    assert not trial.replay_ok and trial.next_tier() == "host"
    np.testing.assert_array_equal(got.get(), np.sort(u.get())[::-1] + 1)


def test_explain_says_which_tier_runs_a_jitted_functions_calls():
    jitted = la.jit(lambda u: heat(la, u, 0.25))
    with la.tier("auto"):
        u = la.linspace(0, 1, 21)
        for _ in range(CALLS):
            jitted(u)
        text = la.explain(jitted, print_it=False)
    assert "((21,) float64): the host replay of its trace" in text
    assert f"replay {1e6 * _trial(jitted).replay_best:.1f} us" in text


# {{{ random graphs (tests/fuzz_graphs.py) replayed

def _replayed(program, calls=2):
    """The output of the fuzzer's *program* as a jitted function of its
    inputs computed by its host replay, on a first call (checked) and
    *calls* - 1 more (the replay's own loop); None where it has no replay."""
    keep = program.closure(program.out_line)
    inputs = [program.lines[i] for i in keep if program.tags[i] == "input"]
    body = [program.lines[i] for i in keep if program.tags[i] != "input"]
    if not body:
        return None
    params = [line.split(" = ", 1)[0] for line in inputs]
    out = program.lines[program.out_line].split(" = ", 1)[0]
    namespace = {"np": np, "m": la, **program.inputs}
    exec("def replayed(" + ", ".join(params) + "):\n"
         + "".join(f"    {text}\n" for line in body for text in line.split("\n"))
         + f"    return {out}\n", namespace)
    jitted = la.jit(namespace["replayed"])

    def arguments():
        for line in inputs:
            exec(line, namespace)
        return tuple(namespace[p] for p in params)

    made = jitted._make_replay(arguments(), {})
    if made is None:
        return None
    replay, first = made
    results = [_host(first)]
    for _ in range(calls - 1):
        args = arguments()
        results.append(_host(replay([args[k] for k in jitted._leaf_order])))
    return results


@pytest.mark.parametrize("seed", [20240601, pytest.param(1000, marks=pytest.mark.slow),
                                  pytest.param(1001, marks=pytest.mark.slow)])
def test_random_graphs_replayed_give_numpys_answers(seed):
    """Every fuzzer graph of small host arrays whose replay is made gives
    NumPy's answer (within the fuzzer's bounds, which are NumPy's own
    answers for data movement, integers and correctly rounded operations)
    on its first and second call; most graphs have a replay."""
    import warnings

    import tests.fuzz_graphs as F

    replayed = tried = 0
    failures = []
    count = 300 if seed == 20240601 else 1000
    for index in range(count):
        program = F.generate(seed, index)
        if program.expect_error is not None or program.expect_float16:
            continue
        if any(v.value.size > 4096 for v in program.vals if v is not None
               and hasattr(v.value, "size")):
            continue
        tried += 1
        with la.tier("auto"), np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = _replayed(program)
        if results is None:
            continue
        replayed += 1
        for call, got in enumerate(results):
            wrong = F.compare(program.vals[program.out_line], got)
            if wrong is not None:
                failures.append(f"graph {index}, call {call + 1}: {wrong}\n{program.source()}")
    assert not failures, f"{len(failures)} of {replayed} replays differ:\n" + "\n\n".join(
        failures[:5])
    print(f"{replayed} of {tried} graphs replayed")
    assert replayed > tried // 2, (replayed, tried)

# }}}


def test_keyword_static_zero_dimensional_and_empty_arguments():
    """Calls by keyword (the general path), static arguments, 0-d arrays
    and empty ones replay with NumPy's answers; an array passed twice
    runs the function itself (its writes are seen through both names)."""
    def scaled(u, s, *, power):
        u[...] = u * s + 1
        return u ** power, s * 2

    jitted = la.jit(scaled, static_argnames="power")
    twice = la.jit(lambda a, b: (a.__setitem__(0, 5.0), b[0] + 0)[1])
    with la.tier("auto"):
        cases = [(la.asarray(np.arange(6.0)), np.arange(6.0)), (la.asarray(2.5), np.array(2.5)),
                 (la.zeros(0), np.zeros(0))]
        for lazy, want in cases:
            for _ in range(CALLS):
                got, doubled = jitted(u=lazy, s=la.asarray(0.5), power=2)
                want[...] = want * 0.5 + 1
                np.testing.assert_array_equal(_host(got), want ** 2)
                np.testing.assert_array_equal(_host(lazy), want)
                assert float(doubled) == 1.0
        assert all(t.next_tier() == "replay" for t in jitted.tier_trials.values())
        a = la.ones(3)
        for _ in range(CALLS):
            assert float(twice(a, a)) == 5.0
    assert not _trial(twice).replay_ok
