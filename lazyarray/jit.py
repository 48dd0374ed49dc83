"""``la.jit``: trace a function once per argument signature, replay its kernels.

Public names: jit.

The first call with a new signature (array shapes and dtypes, the container
structure, the kinds of Python numbers, and the values of static arguments,
bools, strings and NumPy scalars) runs the function on lazy placeholders and plans
the kernels of its results. Later calls with that signature launch the planned
kernels on the new arguments without running the function again. A jitted
function made anew from the same code, reading equal constants from its
closure and globals (a step decorated inside a function that a script calls
on each run), takes the programs an earlier one traced.

Calls on small host arrays under the automatic tier may instead run the
function itself on NumPy, where a measurement of both showed that faster
(:mod:`lazyarray.host.trial`; ``LAZYARRAY_TIER=device`` always compiles,
``LAZYARRAY_TIER=host`` runs the function itself when all its arrays are on the host).

A jitted function may be called from several threads: a signature is traced
once (other threads with that signature wait for the trace), and a program
keeps no array of the call that traced it.
"""

from __future__ import annotations

import functools
import inspect
import logging
import numbers
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

import lazyarray.run as _run
from lazyarray.closure import changed, closed_over, constants_key, outside_values, restore
from lazyarray.deferred import deferred
from lazyarray.errors import ConcretizationError, LazyArrayError, NotTraceableWarning
from lazyarray.graph import Input, Param
from lazyarray.handle import LazyArray, asarray
from lazyarray.host.array import HostArray
from lazyarray.host.dispatch import NUMPY_SCALARS, holding
from lazyarray.host.fusion import PENDING, flush
from lazyarray.host.policy import _MODES, get_tier, host_enabled
from lazyarray.host.replay import HostReplay
from lazyarray.host.trial import TierTrial, host_arguments, shared_trial, to_host
from lazyarray.jit_program import (
    Program,
    changed_arguments,
    device_data,
    fast_data,
    is_array,
    run_program,
    run_simple,
    traced_scalar,
)
from lazyarray.jit_replay import ReplayCalls
from lazyarray.mapper import is_kind
from lazyarray.precision import get_matmul_precision
from lazyarray.pytree import flatten, unflatten
from lazyarray.target import Target
from lazyarray.tracing import ACTIVE_TRACES, HOST_DRAWS, TRACING, tracing

if TYPE_CHECKING:

    import kernelcore as _kernelcore
else:
    # (kernelcore loads with the first trace)
    _kernelcore = deferred("kernelcore")

logger = logging.getLogger(__name__)
_modules = sys.modules
#: programs by what their function reads from outside (its code, closure and
#: globals, all constants: :func:`~lazyarray.closure.constants_key`), its
#: static arguments, the call's signature and the device's target (which the
#: plans were made for): a jitted function made anew from
#: the same code (a nested step decorated on each run of a script) traces and
#: plans nothing that an earlier one did
SHARED_PROGRAMS: dict[tuple, Program] = {}
#: the most programs kept there (the oldest quarter goes when it is full)
SHARED_LIMIT = 256


class _Recording(NamedTuple):
    """What a trace recorded: the placeholders of the distinct array
    arguments, the parameters (traced numbers first), the outputs' nodes and
    structure, per output the argument it is (the function returned that
    argument itself) or None, the arguments written into, the supplies."""

    placeholders: list
    params: list
    out_nodes: list
    structure: tuple
    returned: list
    changed: list
    supplies: tuple


def _positional_key(args: tuple) -> tuple | None:
    """The shapes and dtypes of host arrays and the types of Python numbers
    among *args*, or None if some argument is neither."""
    key: list[Any] = []
    for a in args:
        kind = type(a)
        if kind is HostArray:
            value = a._hv
            key.append((value.shape, value.dtype))
        elif kind is float or kind is int or kind is complex or kind is bool:
            key.append(kind)
        else:
            return None
    return tuple(key)


def _as_arrays(result: Any) -> Any:
    """*result* of the function itself on host arrays with its NumPy scalars
    (elements read: ``x[i]``) as 0-d host arrays, as the other tiers give
    them (a result, or a tuple or list of results)."""
    kind = type(result)
    if kind in NUMPY_SCALARS:
        return holding(result)
    if (kind is tuple or kind is list) and any(type(r) in NUMPY_SCALARS for r in result):
        return kind(holding(r) if type(r) in NUMPY_SCALARS else r for r in result)
    return result


def _may_hold_host_arrays(values: Any) -> bool:
    """Whether some of *values* is a host array or a container (which may hold one)."""
    found = False
    for value in values:
        kind = type(value)
        if kind is HostArray or kind is list or kind is tuple or kind is dict:
            found = True
        elif isinstance(value, HostArray):
            _ = value._hv               # (a pending host array, computed: host.pending)
            found = True
    return found


def _check_static(signature: inspect.Signature, argnums: tuple[int, ...],
                  argnames: tuple[str, ...], name: str) -> None:
    """TypeError for static arguments that *signature* has no parameter for
    (a misspelled name would leave the argument traced)."""
    params = signature.parameters
    kinds = {p.kind for p in params.values()}
    if inspect.Parameter.VAR_KEYWORD not in kinds:
        for argname in argnames:
            if argname not in params:
                raise TypeError(f"la.jit({name}): static_argnames names {argname!r}, which "
                                f"is not a parameter of {name}{signature}")
    if inspect.Parameter.VAR_POSITIONAL not in kinds:
        positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                         for p in params.values())
        for argnum in argnums:
            if not -positional <= argnum < positional:
                raise TypeError(f"la.jit({name}): static_argnums {argnum} is out of range "
                                f"for {name}{signature}")


class _Jitted(ReplayCalls):
    def __init__(self, fn: Callable, static_argnums: tuple[int, ...],
                 static_argnames: tuple[str, ...]):
        self.fn = fn
        self.signature = inspect.signature(fn)
        _check_static(self.signature, static_argnums, static_argnames,
                      getattr(fn, "__name__", None) or repr(fn))
        self.static_argnums = static_argnums
        self.static_argnames = static_argnames
        self.programs: dict = {}
        #: a lock per signature being traced (made with the first trace)
        self._tracing: _kernelcore.KeyedLocks | None = None
        #: programs of calls passing only arrays by position, by shapes and dtypes
        self._by_shapes: dict = {}
        #: how often the function was traced (once per new signature)
        self.trace_count = 0
        #: by signature, the tier trials of calls on small host arrays
        #: (:mod:`lazyarray.host.trial`: which tier runs them, and why)
        self.tier_trials: dict[tuple, TierTrial] = {}
        #: the same, for calls of host arrays and Python numbers by position
        self._trials_by_position: dict[tuple, TierTrial] = {}
        #: by tier trial (a signature of small host arrays), the host replay
        #: of this function's trace, None where it has none
        self._replays: dict[TierTrial, HostReplay | None] = {}
        #: the same, taking the arguments of calls by position as they are
        self._replays_by_position: dict[TierTrial, HostReplay] = {}
        self._count_lock = threading.Lock()
        #: the arrays the function reads from its closure and globals, as the
        #: last trace saw them (see :func:`~lazyarray.closure.closed_over`)
        self._closure: tuple = ()
        params = list(self.signature.parameters.values())
        # calls passing every argument by position skip signature binding
        self._positional = tuple(p.name for p in params) if not (
            static_argnums or static_argnames) and all(
            p.kind == p.POSITIONAL_OR_KEYWORD for p in params) else None
        #: the positions of those arguments in the order the traced program
        #: takes its arrays (the order of flattening, by name)
        names = self._positional
        self._leaf_order = None if names is None else sorted(range(len(names)),
                                                             key=lambda k: names[k])
        #: the function's name in messages (partials and callables have none)
        self.name = getattr(fn, "__name__", None) or repr(fn)
        functools.update_wrapper(self, fn)

    def __get__(self, instance, owner=None):
        # (a jitted method: the instance is its first argument, a container of
        # arrays such as a dataclass, or static with ``static_argnums=0``)
        return self if instance is None else functools.partial(self, instance)

    def _split(self, args, kwargs):
        """``(static part, dynamic tree)`` of a call."""
        if self._positional is not None and not kwargs \
                and len(args) == len(self._positional):
            return (), dict(zip(self._positional, args))
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.name}(): {e}") from None
        static, dynamic = [], {}
        for k, (name, value) in enumerate(bound.arguments.items()):
            if k in self.static_argnums or name in self.static_argnames:
                try:
                    hash(value)
                except TypeError:
                    raise LazyArrayError(
                        f"static argument '{name}' of {self.name} must be "
                        f"hashable, got {type(value).__name__}") from None
                static.append((name, value))
            else:
                dynamic[name] = value
        return tuple(static), dynamic

    def __call__(self, *args, **kwargs):
        if not kwargs and _MODES[-1] == "auto" and not ACTIVE_TRACES[0]:
            # (a signature of small host arrays seen before: its trial, without
            # the checks below; once found faster there, the function itself)
            short = _positional_key(args)
            trial = self._trials_by_position.get(short) if short is not None else None
            if trial is not None:
                choice = trial.choice
                if choice == "host":
                    if trial.native is not None:
                        trial.await_native(1)       # (its replay may run natively)
                    return _as_arrays(self.fn(*args))
                if choice == "replay" or (choice is None and trial.replaying):
                    replay = self._replays_by_position.get(trial)
                    if replay is not None and not (self._closure and changed(self._closure)):
                        if choice is not None:
                            return replay(args)
                        # (timed: hot code is then tried compiled)
                        started = time.perf_counter()
                        result = replay(args)
                        trial.record("replay", time.perf_counter() - started)
                        return result
                return self._call_in_trial(trial, args, kwargs)
        if TRACING.names:
            # called by a function that la.jit traces: part of that trace (run
            # on its own, the result would be frozen into the outer program)
            return self.fn(*args, **kwargs)
        if (_may_hold_host_arrays(args) or kwargs and _may_hold_host_arrays(kwargs.values())) \
                and host_enabled():
            if get_tier() == "auto":
                trial = self._trial(args, kwargs)
                if trial is not None:
                    return self._call_in_trial(trial, args, kwargs)
            elif host_arguments(flatten(self._split(args, kwargs)[1])[0], is_array):
                # (the host tier forced, every array on the host: NumPy runs it)
                return _as_arrays(self.fn(*args, **kwargs))
        return self._compiled_call(args, kwargs)

    def _trial(self, args, kwargs) -> TierTrial | None:
        """The tier trial of the call's signature, for a call whose arrays are
        all small host arrays (see :mod:`lazyarray.host.trial`), else None."""
        short = _positional_key(args) if not kwargs and self._positional is not None \
            and len(args) == len(self._positional) else None
        if short is not None:
            trial = self._trials_by_position.get(short)
            if trial is not None:
                return trial
        static, dynamic = self._split(args, kwargs)
        leaves, structure = flatten(dynamic)
        if host_arguments(leaves, is_array) is None:
            return None
        key = (static, structure, tuple((leaf.shape, leaf.dtype) if is_array(leaf)
                                        else type(leaf) for leaf in leaves))
        trial = self.tier_trials.get(key)
        if trial is None:
            code = getattr(self.fn, "__code__", None)
            trial = self.tier_trials[key] = shared_trial(None if code is None else (code, key))
            if trial.choice is not None:
                logger.info("%s: calls of this signature run %s, as this code's did before",
                            self.name, "on the host tier" if trial.choice == "host"
                            else "compiled")
        if short is not None:
            self._trials_by_position[short] = trial
        return trial

    def _call_in_trial(self, trial: TierTrial, args, kwargs) -> Any:
        tier = trial.next_tier()
        if tier == "replay":
            if trial.choice is not None:
                return self._replay_call(trial, args, kwargs)
            started = time.perf_counter()
            result = self._replay_call(trial, args, kwargs)
            if trial.replay_ok:
                trial.record("replay", time.perf_counter() - started)
            return result
        if tier == "compiled" and not trial.traced and not self._traceable(trial, args, kwargs):
            return _as_arrays(self.fn(*args, **kwargs))
        if trial.choice is not None:
            return _as_arrays(self.fn(*args, **kwargs)) if tier == "host" \
                else self._compiled_call(args, kwargs)
        if tier == "host":
            draws = HOST_DRAWS[0]
            started = time.perf_counter()
            result = _as_arrays(self.fn(*args, **kwargs))
            if PENDING:
                flush()                 # (its deferred arithmetic: host.fusion)
            seconds = time.perf_counter() - started
            if HOST_DRAWS[0] != draws:
                # (its numbers are NumPy's stream's: they stay so)
                trial.record(tier, seconds)
                trial.choose("host")
                logger.info("%s: calls run on the host tier (it draws random numbers)",
                            self.name)
                return result
        else:
            for leaf in flatten(self._split(args, kwargs)[1])[0]:
                if is_array(leaf):
                    fast_data(leaf)          # (its device copy, made before timing)
            started = time.perf_counter()
            result = self._compiled_call(args, kwargs)
            enqueued = time.perf_counter() - started
            _run.synchronize()
            seconds = time.perf_counter() - started
            if Target.of_queue(_run.default_queue()).kind == "gpu":
                # a GPU works while the next call's Python runs: a call in a
                # loop costs the longer of the two, not their sum and the
                # wait (the device's part: the wait less an empty command's)
                seconds = max(enqueued, seconds - _run.round_trip())
        trial.record(tier, seconds)
        if tier == "compiled":
            if any(program.supplies for program in self.programs.values()):
                # (random draws: one stream, whichever call draws them)
                trial.choose("compiled")
                logger.info("%s: calls run compiled (it draws random numbers)", self.name)
                return to_host(result)
            result = to_host(result)
        if trial.choice is not None:
            logger.info("%s: calls of this signature run %s (best call: host tier %.1f us, "
                        "compiled %.1f us)", self.name,
                        "on the host tier" if trial.choice == "host" else "compiled",
                        trial.host_best * 1e6, trial.compiled_best * 1e6)
        return result

    def _traceable(self, trial: TierTrial, args, kwargs) -> bool:
        """Whether the function traces for this call (its first compiled
        one, in a tier trial of host arrays whose earlier calls ran the
        function itself); one that asks for values while traced (``if
        x.sum() > 0``) keeps running on the host tier, which gave its
        earlier answers, and says so once."""
        try:
            self._program(args, kwargs)
        except ConcretizationError as error:
            trial.choose("host")
            warnings.warn(f"{self.name} is not traceable ({error}); its calls on small host "
                          "arrays keep running the function itself with NumPy (larger arrays "
                          "or LAZYARRAY_TIER=device raise this error)", NotTraceableWarning,
                          stacklevel=4)
            return False
        trial.traced = True
        return True

    def _compiled_call(self, args, kwargs) -> Any:
        """The call run by the signature's compiled program (traced first if
        new, and again once an array it reads from its closure or globals
        was written or rebound: the traces hold their values)."""
        if self._closure and changed(self._closure):
            logger.info("%s: an array it closes over changed; tracing again", self.name)
            with self._count_lock:
                self.programs.clear()
                self._by_shapes.clear()
                self._closure = ()
        order = self._leaf_order
        if order is not None and not kwargs and len(args) == len(order) and (
                len(args) < 2 or len({id(a) for a in args}) == len(args)):
            # the common call: arrays only, by position (no containers to walk)
            data = []
            shapes: list[Any] = [get_matmul_precision()]     # (products are traced with it)
            for k in order:
                d = fast_data(args[k])
                if d is None:
                    break
                data.append(d)
                shapes += (d.shape, d.dtype)
            else:
                key = tuple(shapes)
                program = self._by_shapes.get(key)
                if program is None:
                    program, data, _, _ = self._program(args, kwargs)
                    self._by_shapes[key] = program
                arrays = [args[k] for k in order]
                if program.simple is not None:
                    return run_simple(program, data, arrays)
                return run_program(program, data, [], arrays)
        return run_program(*self._program(args, kwargs))

    def _program(self, args, kwargs) -> tuple[Program, list, list, list]:
        """The program for a call's signature (traced on the first call with
        it), the call's array arguments on the device, its traced scalar
        arguments, and its array arguments as passed."""
        static, dynamic = self._split(args, kwargs)
        leaves, structure = flatten(dynamic)
        arrays: list = []
        #: by array leaf, its position among the distinct arrays (an array
        #: passed twice is one argument of the trace: writes through one name
        #: are seen through the other, as in NumPy)
        alias: list[int] = []
        first: dict[int, int] = {}
        scalars: list = []
        values = []
        for leaf in leaves:
            if is_array(leaf):
                k = first.setdefault(id(leaf), len(arrays))
                if k == len(arrays):
                    arrays.append(leaf)
                alias.append(k)
            elif traced_scalar(leaf):
                scalars.append(type(leaf))
                values.append(leaf)
            elif isinstance(leaf, (numbers.Number, np.generic, str)):
                scalars.append((type(leaf), leaf))
            else:
                raise LazyArrayError(
                    f"{self.name}: cannot pass a {type(leaf).__name__} to a "
                    "jitted function (arrays, scalars and tuples/lists/dicts/"
                    "dataclasses of them are allowed; mark others static)")
        data = [device_data(a) for a in arrays]
        key = (static, structure, tuple(scalars),
               tuple((d.shape, d.dtype.str) for d in data), get_matmul_precision(),
               tuple(alias) if len(alias) != len(arrays) else None)
        program = self.programs.get(key)
        if program is None:
            program = self._new_program(key, static, structure, leaves, data, alias)
        return program, data, values, arrays

    def _new_program(self, key: tuple, static, structure, leaves, data, alias) -> Program:
        """The program of a signature new to this function: the one a
        function made from the same code and reading equal constants traced
        (a script that decorates a nested step on each run: see
        :data:`SHARED_PROGRAMS`), else its own trace."""
        constants = constants_key(self.fn)
        shared = None if constants is None else (
            constants, self.static_argnums, self.static_argnames, key,
            Target.of_queue(_run.default_queue()))
        program = SHARED_PROGRAMS.get(shared) if shared is not None else None
        if program is not None:
            logger.info("%s: this signature's program is the one an earlier function of "
                        "the same code and constants traced", self.name)
            return self.programs.setdefault(key, program)
        program = _kernelcore.made_once(self.programs, key,
                                        lambda: self._trace(static, structure, leaves, data,
                                                            alias),
                                        self._tracing or self._trace_locks())
        if shared is not None and not any(kind == "const" for _, sources in program.steps
                                          for _, (kind, _) in sources):
            # (a program holding arrays its trace made from host data, which
            # another function's trace may have made otherwise, is not shared)
            _kernelcore.kept(SHARED_PROGRAMS, shared, program, SHARED_LIMIT)
        return program

    def _trace_locks(self) -> _kernelcore.KeyedLocks:
        """The locks of the signatures being traced, made once."""
        with self._count_lock:
            if self._tracing is None:
                self._tracing = _kernelcore.KeyedLocks()
            return self._tracing

    def _record(self, static, structure, leaves, data, alias,
                purpose: str | None = None) -> _Recording:
        """The graph of the function run on placeholders holding *data* (the
        distinct arrays' data) and on parameters for its traced numbers; a
        trace for another *purpose* than a program is not counted."""
        if purpose is None:
            with self._count_lock:
                self.trace_count += 1
                count = self.trace_count
            logger.info("tracing %s (trace %d)", self.name, count)
        else:
            logger.info("tracing %s for %s", self.name, purpose)
        # fresh placeholders (a new array object per argument): nothing computed for
        # earlier values of the same arrays is mistaken for this trace's results
        placeholders = [Input(d.reshape(d.shape)) for d in data]
        handles = [LazyArray(p) for p in placeholders]
        it = iter(alias)
        params: list[Param] = []
        traced = []
        for leaf in leaves:
            if is_array(leaf):
                traced.append(handles[next(it)])
            elif traced_scalar(leaf):
                params.append(Param(len(params), np.result_type(leaf)))
                traced.append(LazyArray(params[-1]))
            else:
                traced.append(leaf)
        named = unflatten(structure, traced)
        named.update(dict(static))
        # (by parameter: *args, **kwargs and positional-only ones as the call had them)
        call = inspect.BoundArguments(self.signature, {  # type: ignore[arg-type]
            name: named[name] for name in self.signature.parameters if name in named})
        outside = outside_values(self.fn)
        with tracing(self.name, len(params)) as trace:
            trace.inputs.update(placeholders)
            try:
                result = self.fn(*call.args, **call.kwargs)
            finally:
                written = restore(outside)
        if written:
            raise LazyArrayError(
                f"{self.name} writes into an array it reads from its closure or module "
                "globals, which la.jit does not write back; pass the array as an argument "
                "(writes into arguments are written back) or return its new value")
        self._closure = closed_over(self.fn)
        params += trace.params
        out_leaves, out_structure = flatten(result)
        out_nodes = []
        for leaf in out_leaves:
            if not isinstance(leaf, LazyArray):
                if not isinstance(leaf, (numbers.Number, np.ndarray, np.generic)) \
                        or np.asarray(leaf).dtype.kind not in "biufc":
                    raise LazyArrayError(
                        f"{self.name} returned a {type(leaf).__name__} ({leaf!r:.40}): a "
                        "jitted function returns arrays, numbers, and tuples, lists, dicts "
                        "or dataclasses of them; return other values from a function "
                        "around it")
                leaf = asarray(leaf)
            out_nodes.append(leaf.node)
        returned = [next((k for k, h in enumerate(handles) if h is leaf), None)
                    for leaf in out_leaves]
        return _Recording(placeholders, params, out_nodes, out_structure, returned,
                          changed_arguments(handles, placeholders), tuple(trace.supplies))

    def _trace(self, static, structure, leaves, data, alias) -> Program:
        started = time.perf_counter()
        record = self._record(static, structure, leaves, data, alias)
        placeholders, params = record.placeholders, record.params
        position = {p: k for k, p in enumerate(placeholders)}
        out_nodes, changed = record.out_nodes, record.changed
        steps = _run.plan(out_nodes + [node for _, node in changed], literals=True)
        step_index = {st.node: j for j, st in enumerate(steps)}

        def source(node):
            if node in position:
                return ("arg", position[node])
            if is_kind(node, "param"):
                return ("param", node.slot)
            if node in step_index:
                return ("step", step_index[node])
            if is_kind(node, "const"):
                return ("value", node.value)
            return ("const", _run.evaluate(node))

        planned = tuple((st, tuple((name, source(n)) for name, n in st.args))
                        for st in steps)
        program = Program(planned, tuple(source(n) for n in out_nodes), record.structure,
                           tuple(params), tuple((k, source(n)) for k, n in changed),
                           len(placeholders), supplies=record.supplies,
                           name=self.name, started=started)
        # the program reads placeholders for their shapes and dtypes only: let
        # the arrays of the call that traced it go
        for p in placeholders:
            p.data = None
        return program



def jit(fn: Callable | None = None, *, static_argnums: Any = (), static_argnames: Any = ()) -> Any:
    """A version of *fn* that traces once per argument signature and then only
    launches its kernels (usable as ``@jit`` or ``@jit(static_argnums=...)``).

    Arguments may be arrays, scalars, and tuples/lists/dicts/dataclasses of
    them; the result has the structure *fn* returned, with lazy arrays as
    leaves. Python ints, floats and complex numbers are traced as values (weak
    scalars, as NumPy types them): a new value reuses the trace and its
    kernels; the function cannot branch on them or use them as sizes (mark
    such arguments static). Static arguments, bools, strings and NumPy
    scalars are part of the signature: a new value retraces.
    """
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    if fn is None:
        return lambda f: _Jitted(f, tuple(static_argnums), tuple(static_argnames))
    return _Jitted(fn, tuple(static_argnums), tuple(static_argnames))
