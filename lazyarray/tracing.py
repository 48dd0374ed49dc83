"""What ``la.jit`` is tracing in each thread, the scalar arguments a trace
adds to every call, and the refusal of work that needs array values while
it traces.

Public names: TRACING, Trace, tracing, per_call_arguments, refuse_while_tracing,
concretization_message, traced_value.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any

from lazyarray.errors import LazyArrayError, inside_lazyarray, user_line
from lazyarray.graph import Param, walk
from lazyarray.mapper import is_kind

#: draws of NumPy's streams on the host so far ([0]; la.jit's tier trial keeps
#: a function that draws on the host tier, so that its numbers do not depend on
#: when a faster tier was found)
HOST_DRAWS = [0]


class Trace:
    """What a trace adds to the calls of its program: scalar parameters
    numbered from *first_slot* on, and the functions that give their values
    at each call (see :func:`per_call_arguments`)."""

    def __init__(self, first_slot: int) -> None:
        self.first_slot = first_slot
        #: the Param nodes added, in slot order
        self.params: list[Any] = []
        #: per registration: a function of no arguments giving its parameters' values
        self.supplies: list[Callable[[], Sequence]] = []
        #: the placeholders of the traced function's array arguments
        self.inputs: set[Any] = set()


class _Tracing(threading.local):
    """What ``la.jit`` is tracing in the current thread."""

    def __init__(self) -> None:
        #: names of the jitted functions being traced (innermost last)
        self.names: list[str] = []
        #: their traces (innermost last)
        self.traces: list[Trace] = []


#: the jitted functions each thread is tracing
TRACING = _Tracing()
#: how many traces run in all threads (0: no thread traces, which the host
#: tier asks for every operation without reading the thread-local record)
ACTIVE_TRACES = [0]
_COUNT_LOCK = threading.Lock()


@contextmanager
def tracing(name: str, first_slot: int = 0) -> Iterator[Trace]:
    """Mark the jitted function *name* as traced by this thread for the block;
    the block gets the :class:`Trace` that collects its per-call arguments
    (numbered from *first_slot*, after the function's own scalar arguments)."""
    trace = Trace(first_slot)
    TRACING.names.append(name)
    TRACING.traces.append(trace)
    with _COUNT_LOCK:
        ACTIVE_TRACES[0] += 1
    try:
        yield trace
    finally:
        TRACING.names.pop()
        TRACING.traces.pop()
        with _COUNT_LOCK:
            ACTIVE_TRACES[0] -= 1


def per_call_arguments(supply: Callable[[], Sequence], dtypes: Sequence) -> list[Any]:
    """New scalar parameters (``graph.Param`` nodes of *dtypes*) of the
    function being traced, whose values every call of the jitted function
    takes from ``supply()``: the supplies of a trace run once per call, in
    the order they were registered, before its kernels (a supply may also
    just act, with no *dtypes*). For state that must move on at every call,
    such as a random stream's counter."""
    trace = TRACING.traces[-1]
    params = [Param(trace.first_slot + len(trace.params) + k, dtype)
              for k, dtype in enumerate(dtypes)]
    trace.params.extend(params)
    trace.supplies.append(supply)
    return params


def traced_value(node: Any) -> bool:
    """Whether *node*, while this thread traces a function, depends on the
    trace's arguments (array placeholders, scalar parameters): each call
    computes it anew, so the trace must not compute it (a value computed
    now would be frozen into every later call)."""
    if not TRACING.names:
        return False
    inputs = _trace_inputs()
    return any(n in inputs or is_kind(n, "param") for n in walk(node))


def _trace_inputs() -> set:
    """The array placeholders of the traces this thread is in."""
    return set().union(*(trace.inputs for trace in TRACING.traces))


def traced_argument_data(node: Any) -> Any:
    """The device data the call being traced passed for *node*, when *node*
    is an array argument's placeholder (its values are this call's; later
    calls pass others), else None."""
    if not TRACING.names or not is_kind(node, "input"):
        return None
    return node.data if node in _trace_inputs() else None


def refuse_while_tracing(what: str) -> None:
    """Raise if this thread is tracing a function for ``la.jit``: *what*
    depends on array values, which a trace must not bake in."""
    if TRACING.names:
        raise LazyArrayError(
            f"{what} depends on the values of arrays, so it cannot be used inside "
            f"la.jit (tracing {TRACING.names[-1]}); call it outside the jitted function")


def concretization_message(array: Any, what: str) -> str:
    """Why *what* on lazy *array* is refused while ``la.jit`` traces, where,
    and what to do instead."""
    name = TRACING.names[-1]
    lines = [(f"{what} needs the value of an array, but la.jit is tracing {name}(): "
              f"values are unknown while tracing, and one computed now would be frozen "
              f"into every later call."), f"  at {user_line()}"]
    params = {n for n in walk(array.node) if is_kind(n, "param")}
    if params:
        names = _argument_names(params) or ["n"]
        lines.append(f"It depends on the Python number argument(s) {', '.join(names)} "
                     f"of {name}, which la.jit traces as values; to branch on them or "
                     f"use them as sizes, make them static: "
                     f"la.jit({name}, static_argnames={tuple(names)!r}).")
    lines.append("Instead: choose per element with la.where(condition, a, b) rather "
                 "than an `if`; pass what sets a shape, a count or a branch as a static "
                 "argument (static_argnames); return arrays and convert them after the "
                 "call; or leave the function un-jitted.")
    return "\n".join(lines)


def _argument_names(params: set) -> list[str]:
    """Names of the callers' variables that hold the scalar parameters
    *params* (Param nodes): the traced function's arguments."""
    names: list[str] = []
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if not inside_lazyarray(frame):
            names.extend(local for local, value in frame.f_locals.items()
                         if isinstance(getattr(type(value), "node", None), property)
                         and value.node in params
                         and local not in names)
        frame = frame.f_back
    return names
