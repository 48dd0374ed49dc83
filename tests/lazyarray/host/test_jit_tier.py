"""la.jit on small host arrays under the automatic tier: the first calls of a
signature run compiled, the next ones on the host, then the faster tier runs
the rest (lazyarray.host.trial); every call gives NumPy's answer either way."""

import numpy as np
import pytest

import lazyarray as la
from lazyarray.host import HostArray
from lazyarray.host import trial as trial_module
from lazyarray.host.trial import COMPILED_TRIALS, HOST_TRIALS, TierTrial
from tests.helpers import counting

TRIAL_CALLS = 1 + COMPILED_TRIALS + HOST_TRIALS


@pytest.fixture(autouse=True)
def fresh_choices(monkeypatch, tmp_path):
    """Each test starts with no tier remembered for any code, in the process
    or on disk."""
    monkeypatch.setattr(trial_module, "CHOICES", {})
    monkeypatch.setenv("LAZYARRAY_CACHE_DIR", str(tmp_path))
    return tmp_path


def _convection(xp, u):
    un = u.copy()
    u[1:] = un[1:] - 0.4 * (un[1:] - un[:-1])
    u[0] = 1.0
    return u


def _run(step, xp, calls):
    u = xp.ones(41)
    u[10:20] = 2.0
    for _ in range(calls):
        u = step(xp, u) if step is _convection else step(u)
    return u


def _chosen(jitted) -> TierTrial:
    (trial,) = jitted.tier_trials.values()
    return trial


@pytest.mark.parametrize("winner", ["host", "compiled"])
def test_each_tier_gives_numpys_answers_and_the_chosen_one_runs_the_rest(monkeypatch, winner):
    # the measurement decides: make the other tier look slower
    slow = "compiled" if winner == "host" else "host"
    record = TierTrial.record
    monkeypatch.setattr(TierTrial, "record", lambda self, tier, seconds: record(
        self, tier, seconds + (1.0 if tier == slow else 0.0)))
    step = la.jit(lambda u: _convection(la, u))
    want = _run(_convection, np, TRIAL_CALLS + 5)
    with la.tier("auto"), counting() as n:
        got = _run(step, la, TRIAL_CALLS)
        trial = _chosen(step)
        assert trial.choice == winner
        assert trial.compiled_calls == 1 + COMPILED_TRIALS
        assert trial.host_calls == HOST_TRIALS
        trial_launches = n.launches
        assert trial_launches >= 1 + COMPILED_TRIALS
        u = got
        for _ in range(5):
            u = step(u)
    np.testing.assert_array_equal(np.asarray(u.get() if not isinstance(u, HostArray) else u),
                                  want)
    assert step.trace_count == 1
    if winner == "host":
        assert type(u) is HostArray
        assert n.launches == trial_launches          # no kernel after the choice
    else:
        assert n.launches > trial_launches


@pytest.mark.parametrize("winner", ["host", "compiled"])
def test_a_function_made_again_from_the_same_code_keeps_the_tier(monkeypatch, winner):
    """A script that decorates a nested function on each run pays the trial
    calls once per signature: the next function of that code runs the chosen
    tier from its first call (a host choice: no trace, no launch)."""
    slow = "compiled" if winner == "host" else "host"
    record = TierTrial.record
    monkeypatch.setattr(TierTrial, "record", lambda self, tier, seconds: record(
        self, tier, seconds + (1.0 if tier == slow else 0.0)))

    def make():
        return la.jit(lambda u: _convection(la, u))

    with la.tier("auto"):
        first = make()
        _run(first, la, TRIAL_CALLS)
        assert _chosen(first).choice == winner
        second = make()
        with counting() as n:
            got = _run(second, la, 3)
            launches = n.launches
        other = la.jit(lambda u: _convection(la, u) * 1)     # other code: its own trial
        _run(other, la, 2)
    np.testing.assert_array_equal(np.asarray(got.get() if not isinstance(got, HostArray)
                                             else got), _run(_convection, np, 3))
    trial = _chosen(second)
    assert trial.choice == winner and trial.compiled_calls == trial.host_calls == 0
    if winner == "host":
        assert second.trace_count == 0 and launches == 0
    else:
        assert second.trace_count == 1 and launches >= 3
    assert _chosen(other).choice is None


def test_a_new_process_reads_the_choice_from_disk(monkeypatch, fresh_choices):
    """The choice outlives the process (here: the process's memory emptied);
    a damaged file is ignored and measured again; with the disk cache off
    nothing is written."""
    record = TierTrial.record
    monkeypatch.setattr(TierTrial, "record", lambda self, tier, seconds: record(
        self, tier, seconds + (1.0 if tier == "compiled" else 0.0)))

    def make():
        return la.jit(lambda u: _convection(la, u))

    with la.tier("auto"):
        _run(make(), la, TRIAL_CALLS)
        [path] = (fresh_choices / trial_module.DISK_FOLDER).iterdir()
        assert path.read_text() == "host\n"
        monkeypatch.setattr(trial_module, "CHOICES", {})
        again = make()
        _run(again, la, 2)
        assert _chosen(again).choice == "host" and again.trace_count == 0
        path.write_text("garbage")
        monkeypatch.setattr(trial_module, "CHOICES", {})
        damaged = make()
        _run(damaged, la, 2)
        assert _chosen(damaged).choice is None and damaged.trace_count == 1
        monkeypatch.setattr(trial_module, "CHOICES", {})
        monkeypatch.setenv("LAZYARRAY_DISK_CACHE", "0")
        path.unlink()
        _run(make(), la, TRIAL_CALLS)
        assert not path.exists()


def test_the_trial_reads_compiled_results_back_to_host_arrays():
    step = la.jit(lambda u: _convection(la, u))
    with la.tier("auto"):
        u = _run(step, la, 2)
    assert type(u) is HostArray
    np.testing.assert_array_equal(np.asarray(u), _run(_convection, np, 2))


def test_in_place_writes_to_arguments_are_seen_on_both_tiers(monkeypatch):
    @la.jit
    def bump(u, v):
        u[1:3] = v[:2] * 2
        return u.sum()

    un, vn = np.zeros(6), np.arange(6.0)
    with la.tier("auto"):
        u, v = la.zeros(6), la.arange(6.0)
        for _ in range(TRIAL_CALLS + 2):
            total = bump(u, v)
            un[1:3] = vn[:2] * 2
            np.testing.assert_array_equal(np.asarray(u), un)
            assert float(total) == un.sum()
            v = v + 1
            vn = vn + 1
    assert _chosen(bump).choice is not None


def test_a_function_drawing_random_numbers_stays_compiled():
    @la.jit
    def noisy(u):
        return u + la.random.uniform(size=u.shape)

    with la.tier("auto"):
        u = la.zeros(8)
        for _ in range(TRIAL_CALLS + 2):
            noisy(u)
    assert _chosen(noisy).choice == "compiled"


def test_the_device_tier_never_runs_jitted_calls_on_the_host():
    step = la.jit(lambda u: _convection(la, u))
    with la.tier("device"):
        u = _run(step, la, TRIAL_CALLS + 2)
    assert step.tier_trials == {}
    assert type(u) is not HostArray


@pytest.mark.parametrize(("host_seconds", "choice"), [(0.25, "compiled"), (0.15, "host")])
def test_a_trial_chooses_the_tier_of_the_fastest_call(host_seconds, choice):
    trial = TierTrial()
    for k in range(1 + COMPILED_TRIALS):
        assert trial.next_tier() == "compiled"
        trial.record("compiled", 5.0 if k == 0 else 0.2)   # the first (trace, build) is not timed
    for k in range(HOST_TRIALS):
        assert trial.choice is None and trial.next_tier() == "host"
        trial.record("host", 9.0 if k == 0 else host_seconds)   # one slow call does not decide
    assert (trial.choice, trial.compiled_best, trial.host_best) == (choice, 0.2, host_seconds)
    assert trial.next_tier() == choice
