"""la.jit on small host arrays under the automatic tier: the calls of a
signature run on the host until they took PROMOTE_AFTER seconds together,
then compiled trial calls, then the faster tier runs the rest
(lazyarray.host.trial); every call gives NumPy's answer either way."""

import numpy as np
import pytest

import lazyarray as la
from lazyarray.host import HostArray
from lazyarray.host import trial as trial_module
from lazyarray.host.trial import COMPILED_TRIALS, HOST_TRIALS, REPLAY_TRIALS, TierTrial
from tests.helpers import counting

TRIAL_CALLS = HOST_TRIALS + 1 + COMPILED_TRIALS


@pytest.fixture
def replay_trials(monkeypatch):
    """The host replay's trial calls as they are outside these tests."""
    monkeypatch.setattr(trial_module, "REPLAY_TRIALS", REPLAY_TRIALS)


@pytest.fixture(autouse=True)
def fresh_choices(monkeypatch, tmp_path):
    """Each test starts with no trial and no tier remembered for any code, in
    the process or on disk, and (unless it says otherwise) promotes a
    signature to its compiled trial after HOST_TRIALS host calls, however
    short (its small steps stand for hot code), without a replay trial."""
    monkeypatch.setattr(trial_module, "_TRIALS", {})
    monkeypatch.setattr(trial_module, "PROMOTE_AFTER", 0.0)
    monkeypatch.setattr(trial_module, "HOST_ONLY", 0.0)
    # (no host replay trial unless a test asks for one with replay_trials:
    # tests/lazyarray/host/test_replay.py has the replay's)
    monkeypatch.setattr(trial_module, "REPLAY_TRIALS", -1)
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
    # (one program: traced here, or shared from the other case's function)
    assert step.trace_count <= 1 and len(step.programs) == 1
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
    assert _chosen(second) is _chosen(first)
    # (the first function's program is shared: nothing traced again)
    assert second.trace_count == 0
    assert launches == 0 if winner == "host" else launches >= 3
    assert _chosen(other).choice is None


def test_a_trial_continues_over_functions_made_from_the_same_code():
    """Calls of jitted functions made anew from one code count together
    towards the compiled trial (a script decorating its step on each run)."""
    with la.tier("auto"):
        made = [la.jit(lambda u: _convection(la, u)) for _ in range(HOST_TRIALS)]
        for step in made:
            _run(step, la, 1)
        trial = _chosen(made[0])
    assert trial.host_calls == HOST_TRIALS and trial.next_tier() == "compiled"


def test_a_new_process_reads_a_compiled_choice_from_disk(monkeypatch, fresh_choices):
    """A choice to compile outlives the process (here: the trials of the
    process forgotten): the next runs compiled once its host calls took
    REMEMBERED_AFTER seconds, without trials. A host
    choice removes it (every process starts on the host tier); a damaged
    file is ignored; with the disk cache off nothing is written."""
    record = TierTrial.record
    slow = ["host"]
    monkeypatch.setattr(TierTrial, "record", lambda self, tier, seconds: record(
        self, tier, seconds + (1.0 if tier == slow[0] else 0.0)))

    def make():
        return la.jit(lambda u: _convection(la, u))

    def new_process():
        monkeypatch.setattr(trial_module, "_TRIALS", {})

    with la.tier("auto"):
        _run(make(), la, TRIAL_CALLS)
        [path] = (fresh_choices / trial_module.DISK_FOLDER).iterdir()
        assert path.read_text() == "compiled\n"
        new_process()
        again = make()
        with counting() as n:
            _run(again, la, 1)          # (on the host until its calls took REMEMBERED_AFTER)
            assert n.launches == 0 and _chosen(again).choice is None
            _run(again, la, 1)          # (the first took a (patched) second: compiled now)
            assert n.launches >= 1
        assert _chosen(again).choice == "compiled" and _chosen(again).host_calls == 1
        path.write_text("garbage")
        new_process()
        damaged = make()
        _run(damaged, la, 1)
        assert _chosen(damaged).choice is None and damaged.trace_count == 0
        new_process()
        slow[0] = "compiled"
        _run(make(), la, TRIAL_CALLS)
        assert not path.exists()
        new_process()
        slow[0] = "host"
        monkeypatch.setenv("LAZYARRAY_DISK_CACHE", "0")
        _run(make(), la, TRIAL_CALLS)
        assert not path.exists()


def test_the_trial_reads_compiled_results_back_to_host_arrays():
    step = la.jit(lambda u: _convection(la, u))
    with la.tier("auto"):
        u = _run(step, la, HOST_TRIALS + 2)
    assert step.trace_count == 1 and type(u) is HostArray
    np.testing.assert_array_equal(np.asarray(u), _run(_convection, np, HOST_TRIALS + 2))


def test_cold_code_builds_nothing(monkeypatch, replay_trials):
    """Until its host calls took PROMOTE_AFTER seconds together, a jitted
    function runs on NumPy: a short script plans, builds and launches
    nothing; a hot one is then traced and tried compiled."""
    monkeypatch.setattr(trial_module, "PROMOTE_AFTER", 0.25)
    step = la.jit(lambda u: _convection(la, u))
    with la.tier("auto"), counting() as n:
        u = _run(step, la, 20)
        assert step.trace_count == 0 and n.launches == 0 and n.planned == 0
        trial = _chosen(step)
        # (the function itself, then by turns with its host replay, which
        # traces without planning)
        assert trial.choice is None and trial.host_calls + trial.replay_calls == 20
        assert trial.host_calls >= HOST_TRIALS and trial.replay_calls > REPLAY_TRIALS
        trial.host_total = 0.25            # (as if its calls had taken that long)
        u = step(u)
        assert step.trace_count == 1 and n.launches >= 1 and trial.compiled_calls == 1
    np.testing.assert_array_equal(np.asarray(u), _run(_convection, np, 21))


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


def test_a_function_drawing_random_numbers_stays_on_the_host():
    """Its numbers are NumPy's stream's, on every call (the choice does not
    wait for a compiled trial, so they do not depend on when it ended)."""
    @la.jit
    def noisy(u):
        return u + la.random.uniform(size=u.shape)

    la.random.seed(11)
    with la.tier("auto"):
        u = la.zeros(8)
        got = [np.asarray(noisy(u)) for _ in range(TRIAL_CALLS + 2)]
    np.random.seed(11)
    want = [np.zeros(8) + np.random.uniform(size=8) for _ in range(TRIAL_CALLS + 2)]
    np.testing.assert_array_equal(np.array(got), np.array(want))
    assert _chosen(noisy).choice == "host" and noisy.trace_count == 0


def test_the_device_tier_never_runs_jitted_calls_on_the_host():
    step = la.jit(lambda u: _convection(la, u))
    with la.tier("device"):
        u = _run(step, la, TRIAL_CALLS + 2)
    assert step.tier_trials == {}
    assert type(u) is not HostArray


def test_the_host_tier_runs_jitted_calls_of_host_arrays_of_any_size_with_numpy():
    step = la.jit(lambda u: _convection(la, u))
    with la.tier("host"):
        u = la.ones(100_000)          # (over the automatic tier's limit)
        u[10:20] = 2.0
        with counting() as n:
            for _ in range(TRIAL_CALLS + 2):
                u = step(u)
    want = np.ones(100_000)
    want[10:20] = 2.0
    for _ in range(TRIAL_CALLS + 2):
        want = _convection(np, want)
    assert type(u) is HostArray and step.trace_count == 0 and n.launches == 0
    np.testing.assert_array_equal(np.asarray(u), want)


@pytest.mark.parametrize(("host_seconds", "choice"), [(0.25, "compiled"), (0.15, "host")])
def test_a_trial_chooses_the_tier_of_the_fastest_call(host_seconds, choice):
    trial = TierTrial()
    for k in range(HOST_TRIALS):
        assert trial.choice is None and trial.next_tier() == "host"
        trial.record("host", 9.0 if k == 0 else host_seconds)   # one slow call does not decide
    for k in range(1 + COMPILED_TRIALS):
        assert trial.choice is None and trial.next_tier() == "compiled"
        trial.record("compiled", 5.0 if k == 0 else 0.2)   # the first (trace, build) is not timed
    assert (trial.choice, trial.compiled_best, trial.host_best) == (choice, 0.2, host_seconds)
    assert trial.next_tier() == choice


def test_promotion_waits_for_enough_host_time(monkeypatch):
    monkeypatch.setattr(trial_module, "PROMOTE_AFTER", 1.0)
    trial = TierTrial()
    trial.no_replay()               # (a function without a host replay: see below)
    for _ in range(HOST_TRIALS + 5):
        trial.record("host", 0.125)
        assert trial.next_tier() == ("compiled" if trial.host_total >= 1.0
                                     and trial.host_calls >= HOST_TRIALS else "host")
    assert trial.next_tier() == "compiled" and trial.host_total == 0.125 * (HOST_TRIALS + 5)


@pytest.mark.parametrize(("replay_seconds", "choice"), [(0.1, "replay"), (0.3, "host")])
def test_the_host_replay_takes_turns_with_the_function_and_the_faster_runs_on(
        monkeypatch, replay_trials, replay_seconds, choice):
    monkeypatch.setattr(trial_module, "PROMOTE_AFTER", 100.0)
    trial = TierTrial()
    for _ in range(HOST_TRIALS):
        assert trial.next_tier() == "host"
        trial.record("host", 0.2)
    tiers = []
    while trial.replay_calls <= REPLAY_TRIALS:
        tiers.append(trial.next_tier())
        trial.record(tiers[-1], 9.0 if len(tiers) == 1 else replay_seconds
                     if tiers[-1] == "replay" else 0.2)   # (the first replay traces)
    assert tiers == ["replay", "host"] * REPLAY_TRIALS + ["replay"]
    assert trial.replay_best == replay_seconds and trial.choice is None
    # (a replayed call counts towards hot code as a call of the function would)
    assert trial.host_total == pytest.approx(0.2 * 2 * HOST_TRIALS
                                             + max(replay_seconds, 0.2) * REPLAY_TRIALS)
    assert [trial.next_tier() for _ in range(3)] == [choice] * 3
    trial.host_total = 100.0             # hot: the compiled trial, against the faster
    assert trial.next_tier() == "compiled"
    for _ in range(1 + COMPILED_TRIALS):
        trial.record("compiled", 0.15)
    assert trial.choice == ("replay" if replay_seconds < 0.15 else "compiled")


def test_calls_too_short_for_any_launch_stay_on_the_host(monkeypatch, replay_trials):
    """A signature whose host calls take under HOST_ONLY seconds is decided
    once the function and its replay were timed: no plan, no build, no
    timing from then on (where the function was the faster and its replay
    may run natively, after that has been tried: see the test below)."""
    monkeypatch.setattr(trial_module, "HOST_ONLY", 1.0)      # (every call is shorter)
    step = la.jit(lambda u: _convection(la, u))
    with la.tier("auto"), counting() as n:
        u = _run(step, la, HOST_TRIALS + 20)
        trial = _chosen(step)
        assert trial.choice in ("host", "replay")
        # (the function's calls are counted while its replay may run natively)
        assert trial.host_calls == 2 * HOST_TRIALS or trial.native is True
        assert trial.replay_calls == REPLAY_TRIALS + 1
        assert step.trace_count == 0 and n.launches == 0 and n.planned == 0
    np.testing.assert_array_equal(np.asarray(u), _run(_convection, np, HOST_TRIALS + 20))


def test_a_function_that_cannot_be_traced_keeps_running_on_the_host(monkeypatch):
    # its host calls ran it untraced; when the trial would compile it, tracing
    # asks for a value: it stays on the host (warned once) instead of raising
    # at call 6, also where the disk remembers a choice to compile it
    def step(u):
        if u.sum() > 0:         # a Python branch on a value: not traceable
            u = u * 0.5
        return np.sin(u) + 0.001 * u

    jitted = la.jit(step)
    with la.tier("auto"), pytest.warns(la.NotTraceableWarning, match="not traceable") as caught:
        want, u = np.linspace(0.1, 1, 50), la.linspace(0.1, 1, 50)
        for _ in range(TRIAL_CALLS + 5):
            u, want = jitted(u), step(want)
    assert len(caught) == 1
    assert _chosen(jitted).choice == "host" and isinstance(u, HostArray)
    np.testing.assert_array_equal(u.get(), want)
    trial_module._TRIALS.clear()          # (a new process, told to compile by the disk)
    monkeypatch.setattr(trial_module, "_load_choice", lambda origin: "compiled")
    monkeypatch.setattr(trial_module, "REMEMBERED_AFTER", 0.0)
    again = la.jit(step)
    with la.tier("auto"), pytest.warns(la.NotTraceableWarning):
        np.testing.assert_array_equal(again(la.linspace(0.1, 1, 50)).get(),
                                      step(np.linspace(0.1, 1, 50)))
    assert _chosen(again).choice == "host"
    with la.tier("device"), pytest.raises(la.ConcretizationError):
        la.jit(step)(la.linspace(0.1, 1, 50))


@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_a_compiled_trial_call_on_a_gpu_counts_its_work_not_its_wait(monkeypatch, kind):
    # a GPU runs a call's kernels while the next call's Python runs: its
    # trial time is the longer of the call's Python and its device work (the
    # wait less an empty command's round trip); a CPU device shares the
    # host's cores, and its call counts in full
    import time

    import lazyarray.run as run
    from lazyarray import target as la_target

    monkeypatch.setattr(la_target, "device_profile", lambda device: (kind, 4))
    real = run.synchronize
    monkeypatch.setattr(run, "synchronize", lambda: (real(), time.sleep(0.05)))
    monkeypatch.setattr(run, "round_trip", lambda: 0.05)
    compiled = []
    record = TierTrial.record
    monkeypatch.setattr(TierTrial, "record", lambda self, tier, seconds: (
        compiled.append(seconds) if tier == "compiled" else None, record(self, tier, seconds)))
    step = la.jit(lambda u: _convection(la, u))
    with la.tier("auto"):
        got = _run(step, la, TRIAL_CALLS)
    np.testing.assert_array_equal(np.asarray(got.get() if not isinstance(got, HostArray)
                                             else got), _run(_convection, np, TRIAL_CALLS))
    # (the first compiled call, which traces and builds, is not timed)
    timed = compiled[1:]
    assert len(timed) == COMPILED_TRIALS
    assert all(s < 0.05 for s in timed) if kind == "gpu" else all(s >= 0.05 for s in timed)


class _Step:
    """A native step's build, as the trial sees it."""

    def __init__(self):
        self.function = self.failed = None


class _Replay:
    """A host replay whose native state makes *step* (None: no native step)."""

    def __init__(self, step):
        self.native_state = self
        self.made_step, self.made, self.step = step, 0, None

    def make_now(self):
        self.made += 1
        self.step = self.made_step if self.made_step is not None else False
        return self.made_step


@pytest.mark.parametrize("outcome", ["built", "failed", "none"])
def test_a_replay_slower_than_the_function_is_timed_again_once_native(monkeypatch, replay_trials,
                                                                      outcome):
    """The function won the replay's trial, but the replay may get a native
    step: it is made after NATIVE_AFTER calls of the signature, and once it
    is built the replay (native now) is timed again against the function."""
    monkeypatch.setattr(trial_module, "HOST_ONLY", 1.0)
    monkeypatch.setattr(trial_module, "NATIVE_AFTER", 40)
    trial = TierTrial()
    step = _Step()
    replay = _Replay(step if outcome != "none" else None)
    trial.replays[("key",)] = replay
    for _ in range(HOST_TRIALS):
        trial.record("host", 0.2)
    while trial.replay_calls <= REPLAY_TRIALS:
        tier = trial.next_tier()
        trial.record(tier, 0.3 if tier == "replay" else 0.2)
    # (the function runs, untimed, its calls counted by la.jit's call)
    assert trial.choice == "host" and trial.native is True and replay.made == 0
    while trial.host_calls < 40:
        trial.await_native(1)
    assert replay.made == 1
    if outcome == "none":
        assert trial.choice == "host" and trial.native is None
        return
    assert trial.native is step and trial.choice == "host"
    trial.await_native(1)                           # (still being built)
    assert trial.native is step
    if outcome == "failed":
        step.failed = "no compiler"
        trial.await_native(1)
        assert trial.choice == "host" and trial.native is None
        return
    step.function = print
    trial.await_native(1)
    assert trial.native is None and trial.replay_calls == 1 and trial.choice is None
    tiers = []
    while trial.choice is None:
        tiers.append(trial.next_tier())
        trial.record(tiers[-1], 0.05 if tiers[-1] == "replay" else 0.2)
    assert tiers == ["replay"] * REPLAY_TRIALS and trial.choice == "replay"
    assert replay.made == 1
