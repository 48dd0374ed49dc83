"""Which tier computes an operation: ``"host"`` (NumPy, at once), ``"device"``
(recorded lazily, compiled kernels) or ``"auto"`` (the host for results up to
the device's :attr:`~lazyarray.target.Target.host_tier_elements`, the device
for larger ones).

The tier is ``LAZYARRAY_TIER`` from the environment (default ``auto``), or
what :func:`set_tier` or a :func:`tier` block chose (per thread/context).
While ``la.jit`` traces a function every operation is recorded (device).

Public names: set_tier, get_tier, tier, host_enabled, host_limit, TIERS.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator
from contextlib import contextmanager

from lazyarray import run as _run
from lazyarray.target import Target
from lazyarray.tracing import TRACING

#: the tiers a user can choose
TIERS = ("auto", "host", "device")


def _from_environment() -> str:
    value = os.environ.get("LAZYARRAY_TIER", "auto").strip().lower() or "auto"
    if value not in TIERS:
        raise ValueError(f"LAZYARRAY_TIER={value!r}: expected one of {', '.join(TIERS)}")
    return value


_DEFAULT = [_from_environment()]
_CHOSEN: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "lazyarray_tier", default=None)
#: the automatic limit by queue (the queue's Target, asked once)
_LIMITS: dict = {}


def _check(mode: str) -> str:
    if mode not in TIERS:
        raise ValueError(f"tier {mode!r}: expected one of {', '.join(TIERS)}")
    return mode


def set_tier(mode: str) -> None:
    """Choose the tier for the whole process: ``"auto"`` (the default),
    ``"host"`` (NumPy for every operation whose arrays are on the host) or
    ``"device"`` (every operation recorded and compiled)."""
    _DEFAULT[0] = _check(mode)


def get_tier() -> str:
    """The tier in force here (a :func:`tier` block's, else the process's)."""
    return _CHOSEN.get() or _DEFAULT[0]


@contextmanager
def tier(mode: str) -> Iterator[None]:
    """Compute in the block with the tier *mode* (this thread/context only)."""
    token = _CHOSEN.set(_check(mode))
    try:
        yield
    finally:
        _CHOSEN.reset(token)


def host_enabled() -> bool:
    """Whether operations on host arrays run on the host here (not while
    ``la.jit`` traces, not under the ``"device"`` tier)."""
    return not TRACING.names and (_CHOSEN.get() or _DEFAULT[0]) != "device"


def host_limit() -> int | None:
    """The largest result in elements the host tier keeps on the host (None:
    no limit, the ``"host"`` tier)."""
    if (_CHOSEN.get() or _DEFAULT[0]) == "host":
        return None
    queue = _run.default_queue()
    limit = _LIMITS.get(queue)
    if limit is None:
        limit = _LIMITS[queue] = Target.of_queue(queue).host_tier_elements
    return limit
