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

import hashlib
import os
import platform
import sys
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
    """The default queue's Target's *attribute*, asked once (None under
    ``"host"``). Before the device runtime is loaded, the kind of device an
    earlier process of this environment found answers (the limits depend on
    it alone), so that host work does not load OpenCL to ask."""
    if _MODES[-1] == "host":
        return None
    if "lazyarray.run.device" not in sys.modules:
        kind = _remembered_kind()
        if kind is not None:
            return getattr(Target(kind, 1), attribute)
    queue = _run.default_queue()
    limit = _LIMITS.get((queue, attribute))
    if limit is None:
        target = Target.of_queue(queue)
        limit = _LIMITS[queue, attribute] = getattr(target, attribute)
        if _remembered_kind() != target.kind:
            _remember_kind(target.kind)
    return limit


#: the folder of the device kinds found, under the kernel cache's folder
KIND_FOLDER = "lazyarray-device-v1"
#: the environment variables that choose the device (with the machine's name)
_CHOOSING = ("PYOPENCL_CTX", "KERNELCORE_DEVICE", "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES",
             "POCL_DEVICES", "CUDA_VISIBLE_DEVICES", "PYOPENCL_TEST")


def _kind_file() -> Path | None:
    """The file of the device kind this machine and environment choose
    (None: the disk cache turned off)."""
    folder = cache_folder(KIND_FOLDER)
    if folder is None:
        return None
    text = repr((platform.node(), *(os.environ.get(name) for name in _CHOOSING)))
    return folder / hashlib.sha256(text.encode()).hexdigest()[:32]


#: the kind read from disk, once a process (see _remembered_kind)
_KIND_READ: list[str | None] = []


def _remembered_kind() -> str | None:
    """``"cpu"`` or ``"gpu"``: the kind of the default device a process of
    this environment found, else None (read from disk once a process)."""
    if not _KIND_READ:
        path = _kind_file()
        try:
            text = path.read_text().strip() if path is not None else None
        except (OSError, UnicodeDecodeError):
            text = None
        _KIND_READ.append(text if text in ("cpu", "gpu") else None)
    return _KIND_READ[0]


def _remember_kind(kind: str) -> None:
    """Keep *kind* on disk for later processes (whole or not at all)."""
    _KIND_READ[:] = [kind]
    path = _kind_file()
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        partial.write_text(kind)
        os.replace(partial, path)
    except OSError:
        pass


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
