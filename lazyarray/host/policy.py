"""Which tier computes an operation: ``"host"`` (NumPy, at once), ``"device"``
(recorded lazily, compiled kernels) or ``"auto"`` (the host for results up to
the device's :attr:`~lazyarray.target.Target.host_tier_elements`, the device
for larger ones).

The tier is ``LAZYARRAY_TIER`` from the environment (default ``auto``), or
what :func:`set_tier` chose, or a :func:`tier` block (for the whole process
while the block runs).
While ``la.jit`` traces a function every operation is recorded (device).

Public names: set_tier, get_tier, tier, host_enabled, host_limit, broadcast_limit,
cache_folder, TIERS.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import lazyarray.run as _run
from lazyarray.target import Target
from lazyarray.tracing import ACTIVE_TRACES, TRACING

#: the tiers a user can choose
TIERS = ("auto", "host", "device")


def _from_environment() -> str:
    value = os.environ.get("LAZYARRAY_TIER", "auto").strip().lower() or "auto"
    if value not in TIERS:
        raise ValueError(f"LAZYARRAY_TIER={value!r}: expected one of {', '.join(TIERS)}")
    return value


#: the tier in force: [0] is the process's, later entries open tier() blocks
_MODES = [_from_environment()]
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
    _MODES[0] = _check(mode)


def get_tier() -> str:
    """The tier in force (the innermost :func:`tier` block's, else the process's)."""
    return _MODES[-1]


@contextmanager
def tier(mode: str) -> Iterator[None]:
    """Compute in the block with the tier *mode*."""
    _MODES.append(_check(mode))
    try:
        yield
    finally:
        _MODES.pop()


def host_enabled() -> bool:
    """Whether operations on host arrays run on the host here (not while
    ``la.jit`` traces in this thread, not under the ``"device"`` tier).
    (The hottest paths, ``HostArray``'s operators and ``la.jit``'s calls,
    test its common case inline: ``_MODES[-1]`` and ``ACTIVE_TRACES[0]``
    before calling it; a change to this rule changes them too.)"""
    return _MODES[-1] != "device" and not (ACTIVE_TRACES[0] and TRACING.names)


def host_limit() -> int | None:
    """The largest result in elements the host tier keeps on the host (None:
    no limit, the ``"host"`` tier; see Target.host_array_elements)."""
    return _limit("host_array_elements")


def broadcast_limit() -> int | None:
    """The largest broadcast of small host arrays the host tier computes
    (None: no limit, the ``"host"`` tier; see Target.host_tier_elements)."""
    return _limit("host_tier_elements")


def _limit(attribute: str) -> int | None:
    """The default queue's Target's *attribute*, asked once (None under ``"host"``)."""
    if _MODES[-1] == "host":
        return None
    queue = _run.default_queue()
    limit = _LIMITS.get((queue, attribute))
    if limit is None:
        limit = _LIMITS[queue, attribute] = getattr(Target.of_queue(queue), attribute)
    return limit


def cache_folder(name: str) -> Path | None:
    """The folder *name* next to the kernel cache (``LAZYARRAY_CACHE_DIR``,
    else kernelcore's folder, found without importing kernelcore), or None
    where ``LAZYARRAY_DISK_CACHE`` turns the disk cache off."""
    if os.environ.get("LAZYARRAY_DISK_CACHE", "1").lower() in ("0", "false", "no"):
        return None
    base = os.environ.get("LAZYARRAY_CACHE_DIR") or os.environ.get("KERNELCORE_CACHE_DIR")
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME")
                            or os.path.join(os.path.expanduser("~"), ".cache"), "kernelcore")
    return Path(base) / name
