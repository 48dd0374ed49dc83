"""The progress line of long kernel builds: work that is still building its
new kernels (lowering, code generation, the OpenCL compiler)
:data:`PROGRESS_AFTER` seconds after its planning began prints one line on
stderr, while it waits::

    lazyarray: building 3 kernels for y = float((a * b).sum()) (run.py:12) ...

so that a long first run is not mistaken for a hang. Kernels built before (in
this process, or loaded from their disk recipes) print nothing.
``LAZYARRAY_QUIET=1`` in the environment, or ``la.set_progress(False)``,
silences it.

Public names: set_progress, progress_enabled, watch, PROGRESS_AFTER.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

#: seconds of building after which the line is printed
PROGRESS_AFTER = 2.0

_ON = [os.environ.get("LAZYARRAY_QUIET", "").strip().lower() in ("", "0", "false", "no")]
#: whether this thread runs inside a watched build (nested evaluations print nothing)
_WATCHING = threading.local()
_NOTHING = contextlib.nullcontext()


def set_progress(on: bool) -> None:
    """Print (True, the default unless ``LAZYARRAY_QUIET=1``) or not (False)
    one line on stderr when building new kernels takes more than
    :data:`PROGRESS_AFTER` seconds."""
    _ON[0] = bool(on)


def progress_enabled() -> bool:
    """Whether long kernel builds print their progress line."""
    return _ON[0]


class _Watch:
    """A build of *count* new kernels for *label*: the line is printed
    *delay* seconds after the block starts, unless it ended before."""

    __slots__ = ("count", "label", "delay", "timer")

    def __init__(self, count: int, label: str, delay: float):
        self.count, self.label, self.delay = count, label, delay
        self.timer: threading.Timer | None = None

    def __enter__(self) -> None:
        _WATCHING.on = True
        if self.delay <= 0:
            self._report()
        else:
            self.timer = threading.Timer(self.delay, self._report)
            self.timer.daemon = True
            self.timer.start()

    def __exit__(self, *exc: Any) -> None:
        if self.timer is not None:
            self.timer.cancel()
        _WATCHING.on = False

    def _report(self) -> None:
        if _ON[0]:
            kernels = "kernel" if self.count == 1 else "kernels"
            sys.stderr.write(f"lazyarray: building {self.count} {kernels} for "
                             f"{self.label} ...\n")
            sys.stderr.flush()


def watch(steps: Iterable, started: float, label: Callable[[], str]
          ) -> contextlib.AbstractContextManager:
    """A context manager around running *steps* (planned since *started*, a
    :func:`time.perf_counter` time): if some of their kernels were never
    run (their first run generates code and compiles it), the progress line
    is printed once :data:`PROGRESS_AFTER` seconds have passed since
    *started*, naming *label()*. Nothing inside a watched build, or when
    silenced."""
    if not _ON[0] or getattr(_WATCHING, "on", False):
        return _NOTHING
    count = 0
    for step in steps:
        compiled = step.compiled
        if compiled is not None and getattr(compiled, "bound", True) is None:
            count += 1
    if not count:
        return _NOTHING
    return _Watch(count, label(), PROGRESS_AFTER - (time.perf_counter() - started))
