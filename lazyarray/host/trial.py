"""Which tier runs a jitted function's calls on small host arrays, measured
per signature: its compiled program, its host replay, or the function itself
on NumPy.

A function under ``la.jit`` called with host arrays (whose elements together
fit the host tier, :func:`~lazyarray.host.policy.host_limit`) under the
``"auto"`` tier runs on the host tier (NumPy) first, each call timed: cold
code costs no build. After :data:`HOST_TRIALS` such calls the function is
traced (no kernel planned or built) and its next calls take turns between
the function and the trace's host replay (:mod:`lazyarray.host.replay`: the
same NumPy work without the dispatch of each operation), until
:data:`REPLAY_TRIALS` replayed calls were timed; the faster of the two runs
the host tier's calls from then on (where the function was the faster and
the replay may run as a native loop, that loop is made after
:data:`~lazyarray.host.native.NATIVE_AFTER` calls and, once built, the
replay is timed against the function again). Once the host calls
took :data:`PROMOTE_AFTER` seconds together (hot code), the next calls run
compiled (the first plans and builds; the results are read back into host
arrays), the last :data:`COMPILED_TRIALS` of them timed (on a GPU, which
works while the next call's Python runs, a call counts as the longer of its
Python and its device work); the tier of the fastest call (the best of
each tier's, so that a pause of the machine does not decide) runs the
signature's later calls. A signature whose host calls
take under :data:`HOST_ONLY` seconds stays on the host tier once both of
its host forms were timed (no compiled call is that short). A function that
draws random numbers on the host stays there, so that its numbers (NumPy's)
do not depend on when the trial ended. ``LAZYARRAY_TIER``,
:func:`~lazyarray.host.policy.set_tier` and ``la.tier`` blocks force a tier
(``"device"``: every call compiled; ``"host"``: every call of host arrays
runs the function itself, whatever their size).

Jitted functions made from the same code (a script that decorates a nested
function on each run) share the trial of a signature (:func:`shared_trial`):
their calls count together, and the tier chosen holds for all (each traces
its own replay: the numbers it closes over may differ). A choice to
compile is also kept on disk, next to the kernel cache (``LAZYARRAY_CACHE_DIR``
or ``KERNELCORE_CACHE_DIR``; by the function's file, name, line and bytecode
and the call's signature; ``LAZYARRAY_DISK_CACHE=0`` turns it off): the same
script in a new process runs those calls compiled once they took
:data:`REMEMBERED_AFTER` seconds on the host, without trials.

Public names: TierTrial, shared_trial, COMPILED_TRIALS, HOST_TRIALS, REPLAY_TRIALS,
PROMOTE_AFTER, REMEMBERED_AFTER, HOST_ONLY, TRIALS_LIMIT, DISK_FOLDER, host_arguments,
to_host.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from lazyarray.handle import LazyArray
from lazyarray.host.array import HostArray
from lazyarray.host.dispatch import SMALL, holding
from lazyarray.host.native import NATIVE_AFTER
from lazyarray.host.policy import cache_folder, host_limit

#: timed compiled calls of a signature (after its first, which traces and builds)
COMPILED_TRIALS = 5
#: the fewest calls of a signature on the host tier before its compiled trial,
#: and the number of its last host calls whose best is compared (as many as
#: the compiled ones: the best of more samples would favour the host)
HOST_TRIALS = 5
#: timed calls of a signature's host replay (after its first, which traces)
REPLAY_TRIALS = 5
#: the most host replays a signature keeps for sharing (see TierTrial.replays)
REPLAYS_KEPT = 8
#: seconds the host calls of a signature take together before its compiled
#: program is traced and built: a building kernel costs 0.1-1 s (PoCL, empty
#: caches), more than the whole of a short script
PROMOTE_AFTER = 0.25
#: seconds the host calls of a signature take together before its compiled
#: program runs, where an earlier process chose to compile it: a short script
#: (a few milliseconds of NumPy) does not wait for its program to load (0.2 s
#: in a fresh process), a long one compiles five times sooner than on trial
REMEMBERED_AFTER = 0.05
#: seconds under which a signature's best host call stays on the host without a
#: compiled trial: no compiled call is that short (a jitted call of a small
#: function, with its launch, takes 6.7 us on the H200, tens of us on PoCL)
HOST_ONLY = 5e-6
#: the most trials kept (see :func:`shared_trial`)
TRIALS_LIMIT = 4096
#: the trials by (code object, signature), see :func:`shared_trial`
_TRIALS: dict[tuple, TierTrial] = {}
#: the folder of choices remembered on disk, under the kernel cache's folder
#: (a file per code and signature holding the tier's name)
DISK_FOLDER = "lazyarray-tiers-v1"


def _choice_file(origin: tuple) -> Path | None:
    """Where the choice for *origin* (code object, signature) is kept on
    disk, or None (the disk cache turned off, or no folder)."""
    folder = cache_folder(DISK_FOLDER)
    if folder is None:
        return None
    code, key = origin
    # the function's source position and bytecode, the call's signature and
    # the device chosen by the environment (nothing that differs by process)
    text = repr((code.co_filename, code.co_name, code.co_firstlineno,
                 hashlib.sha256(code.co_code).hexdigest(), key,
                 os.environ.get("PYOPENCL_CTX"), os.environ.get("KERNELCORE_DEVICE")))
    return folder / hashlib.sha256(text.encode()).hexdigest()


def _load_choice(origin: tuple) -> str | None:
    """``"compiled"`` where an earlier process chose to compile *origin*'s
    calls, else None."""
    path = _choice_file(origin)
    try:
        text = path.read_text().strip() if path is not None else None
    except (OSError, UnicodeDecodeError):
        text = None
    return "compiled" if text == "compiled" else None


def _store_choice(origin: tuple, tier: str) -> None:
    """Remember on disk that *origin*'s calls run compiled (a host choice
    removes that: every process starts on the host tier)."""
    path = _choice_file(origin)
    if path is None:
        return
    try:
        if tier != "compiled":
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        partial.write_text(tier + "\n")
        os.replace(partial, path)          # (whole or absent, for other processes)
    except OSError:
        pass                               # (a read-only cache: remembered here only)


class TierTrial:
    """The calls of one signature so far, by tier, and the tier chosen."""

    __slots__ = ("compiled_calls", "compiled_best", "host_calls", "host_recent", "host_total",
                 "replay_calls", "replay_best", "replay_ok", "replays", "choice", "origin",
                 "traced", "native", "remembered")

    def __init__(self, origin: tuple | None = None) -> None:
        """*origin*: the (code object, signature) whose compiled choice the
        disk remembers (None: not remembered)."""
        self.compiled_calls = 0
        #: seconds of the fastest timed call, by tier
        self.compiled_best = float("inf")
        self.host_calls = 0
        #: seconds of the last :data:`HOST_TRIALS` host calls (a ring: the
        #: call numbered *k* at ``k % HOST_TRIALS``; infinity for none yet)
        self.host_recent: list[float] = [float("inf")] * HOST_TRIALS
        #: seconds of all host calls together (a replayed call counted as the
        #: function's best call)
        self.host_total = 0.0
        self.replay_calls = 0
        self.replay_best = float("inf")
        #: False once the function was found to have no host replay
        self.replay_ok = True
        #: host replays by what the function reads from outside (see
        #: lazyarray.closure.constants_key): functions made anew from its
        #: code that read equal constants share one (at most REPLAYS_KEPT)
        self.replays: dict[tuple, Any] = {}
        #: ``"compiled"``, ``"replay"`` or ``"host"`` once chosen, else None
        self.choice: str | None = None
        #: whether an earlier process chose to compile (see REMEMBERED_AFTER)
        self.remembered = origin is not None and _load_choice(origin) == "compiled"
        self.origin = origin
        #: whether the function was traced for this signature (its host calls
        #: run it untraced: one asking for values runs there for good)
        self.traced = False
        #: True while the function, faster than its replay, runs until the
        #: replay's native step is made, then that step until it is built
        #: (see :meth:`await_native`), else None
        self.native: Any = None

    @property
    def replaying(self) -> bool:
        """Whether the next call runs the replay, timed, with no tier chosen
        yet (a trial call, or the replay was faster and the code is not hot yet)."""
        return self.choice is None and self.next_tier() == "replay"

    @property
    def host_best(self) -> float:
        """Seconds of the fastest of the last :data:`HOST_TRIALS` host calls."""
        return min(self.host_recent)

    def _host_tier(self) -> str:
        """The faster form of the host tier so far: ``"replay"`` or ``"host"``."""
        return "replay" if self.replay_ok and self.replay_best < self.host_best else "host"

    def await_native(self, calls: int = 0) -> None:
        """Count *calls* more calls of the function itself (untimed, after
        the function was chosen) while its replay, slower in the trial, may
        get a native step: the step is made after NATIVE_AFTER calls of the
        signature (as a replay's own), and once it is built the trial opens
        again, the replay (native now) timed against the function."""
        self.host_calls += calls
        native = self.native
        if native is True:
            if self.host_calls < NATIVE_AFTER:
                return
            steps = [replay.native_state.make_now() for replay in self.replays.values()
                     if replay is not None and replay.native_state is not None]
            native = self.native = next((s for s in steps if s is not None), None)
            if native is None:
                self._settle()
                return
        if native.function is not None:
            self.native = None
            self.choice = None
            self.replay_calls, self.replay_best = 1, float("inf")
        elif native.failed is not None:
            self.native = None
            self._settle()

    def _settle(self) -> None:
        """Choose the faster host form where it is fast enough to stay (see
        :data:`HOST_ONLY`)."""
        if min(self.host_best, self.replay_best) < HOST_ONLY:
            self.choose(self._host_tier())

    def choose(self, tier: str) -> None:
        """Run the signature's later calls on *tier* (``"compiled"``, ``"replay"``,
        ``"host"``)."""
        self.choice = tier
        if tier != "host":
            self.native = None          # (a replay counts its own calls to its native step)
        if self.origin is not None:
            _store_choice(self.origin, tier)

    def describe(self) -> str:
        """Which tier runs the signature's calls, and the measurements that decided."""
        def us(seconds: float) -> str:
            return "-" if seconds == float("inf") else f"{seconds * 1e6:.1f} us"
        tier = self.next_tier()
        name = {"host": "the function itself on NumPy", "replay": "the host replay of its trace",
                "compiled": "its compiled program"}[tier]
        state = "chosen" if self.choice is not None else "on trial"
        replay = "" if self.replay_ok else " (no replay: the function does not trace, or " \
            "its graph has a part NumPy does not compute as the graph says)"
        return (f"{name} ({state}; best calls: function {us(self.host_best)} of "
                f"{self.host_calls}, replay {us(self.replay_best)} of {self.replay_calls}, "
                f"compiled {us(self.compiled_best)} of {self.compiled_calls}){replay}")

    def share(self, key: tuple, replay: Any) -> None:
        """Keep *replay* for functions of this code reading the constants *key*."""
        if len(self.replays) >= REPLAYS_KEPT:
            del self.replays[next(iter(self.replays))]
        self.replays[key] = replay

    def no_replay(self) -> None:
        """Note that the function has no host replay (it does not trace, or
        its graph has a part NumPy does not compute as the graph says)."""
        self.replay_ok = False
        if self.choice == "replay":
            self.choice = "host"

    def next_tier(self) -> str:
        """The tier the next call runs on: the function itself for the first
        :data:`HOST_TRIALS` calls, then it and its replay by turns for the
        replay's trial calls, then the faster of the two until the host
        calls took :data:`PROMOTE_AFTER` seconds together, then the compiled
        program's for its trial calls."""
        if self.choice is not None:
            return self.choice
        if self.remembered:
            if self.host_total < REMEMBERED_AFTER:
                return "host"
            self.choice = "compiled"
            return "compiled"
        if self.host_calls < HOST_TRIALS:
            return "host"
        if self.replay_ok and self.replay_calls <= REPLAY_TRIALS:
            # (the replay's trial calls take turns with the function's, so
            # that both are timed as warm as each other)
            return "replay" if self.replay_calls + HOST_TRIALS <= self.host_calls else "host"
        if self.compiled_calls or (self.host_total >= PROMOTE_AFTER
                                   and min(self.host_best, self.replay_best) >= HOST_ONLY):
            return "compiled"
        return self._host_tier()

    def record(self, tier: str, seconds: float) -> None:
        """Count a call on *tier* that took *seconds* (a signature's first
        compiled or replayed call, which traced, is not timed); after the last
        compiled trial call, choose the tier of the fastest call (the best of the
        last host calls, of the replay's and of as many compiled ones)."""
        if tier == "host":
            self.host_recent[self.host_calls % HOST_TRIALS] = seconds
            self.host_calls += 1
            self.host_total += seconds
            if self.host_calls >= HOST_TRIALS and not self.replay_ok \
                    and self.host_best < HOST_ONLY:
                self.choose("host")
            if self.native is not None:
                self.await_native()
            return
        if tier == "replay":
            if self.replay_calls:
                self.replay_best = min(self.replay_best, seconds)
                # (counted as a call of the function itself would be: a faster
                # host form does not put off the compiled trial of hot code)
                self.host_total += max(seconds, self.host_best)
            self.replay_calls += 1
            if self.replay_calls > REPLAY_TRIALS:
                if self._host_tier() == "host" and self.native is None and any(
                        replay is not None and replay.native_state is not None
                        and replay.native_state.step is None
                        for replay in self.replays.values()):
                    # (the replay may get a native step: see await_native)
                    self.native = True
                self._settle()
            return
        if self.compiled_calls:
            self.compiled_best = min(self.compiled_best, seconds)
        self.compiled_calls += 1
        if self.compiled_calls > COMPILED_TRIALS:
            host = self._host_tier()
            best = self.replay_best if host == "replay" else self.host_best
            self.choose(host if best <= self.compiled_best else "compiled")


def shared_trial(origin: tuple | None) -> TierTrial:
    """The trial of *origin* (code object, signature): one for every jitted
    function made from that code in this process (a script that decorates a
    nested function on each run counts all its calls), a new one for None."""
    if origin is None:
        return TierTrial()
    trial = _TRIALS.get(origin)
    if trial is None:
        trial = TierTrial(origin)
        if len(_TRIALS) < TRIALS_LIMIT:
            _TRIALS[origin] = trial
    return trial


def host_arguments(leaves: list[Any], is_array: Any) -> list[HostArray] | None:
    """The host arrays among a call's *leaves* when every array leaf
    (``is_array``) is one and together they fit the host tier, else None."""
    arrays = []
    total = 0
    for leaf in leaves:
        if is_array(leaf):
            if type(leaf) is not HostArray:
                return None
            arrays.append(leaf)
            total += leaf.size
    if not arrays:
        return None
    if total > SMALL:
        # (up to SMALL elements every device's limit holds: no OpenCL asked)
        limit = host_limit()
        if limit is not None and total > limit:
            return None
    return arrays


def to_host(value: Any) -> Any:
    """*value* (an array, or a list, tuple or dict of them) with its device
    arrays read back into host arrays."""
    if type(value) is LazyArray:
        return holding(value._host())
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(to_host(v) for v in value)
    if isinstance(value, dict):
        return {k: to_host(v) for k, v in value.items()}
    return value
