"""Choosing the OpenCL device.

An explicit queue always wins. Otherwise: ``KERNELCORE_DEVICE`` (``cpu``,
``gpu``, ``P:D`` platform/device indices, or a substring of the device or
platform name), then ``PYOPENCL_CTX`` (pyopencl's own selection), then the
first GPU, then the first CPU, then any device.

PoCL's CPU worker threads are pinned to cores (``POCL_AFFINITY=1``) unless
the environment says otherwise: unpinned, the scheduler often stacks both
workers on one core of a small machine, and a kernel then takes twice as
long in about one process out of two.

The default context and queue are made once per process, also when several
threads ask for them first at the same time.

Public names: default_context, default_queue, choose_device.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

import pyopencl as cl

from kernelcore.diagnostic import KernelcoreError

logger = logging.getLogger(__name__)
os.environ.setdefault("POCL_AFFINITY", "1")      # read when PoCL starts up
_DEFAULT: dict[str, Any] = {}
_DEFAULT_LOCK = threading.RLock()


def _all_devices() -> list[tuple[int, int, cl.Device]]:
    result = []
    try:
        platforms = cl.get_platforms()
    except cl.Error as e:
        raise KernelcoreError(
            f"no OpenCL platform found ({e}); install an OpenCL driver, e.g. "
            "'apt-get install pocl-opencl-icd' and set OCL_ICD_VENDORS=/etc/OpenCL/vendors "
            "(scripts/bootstrap.sh does this)") from None
    for pi, p in enumerate(platforms):
        try:
            devs = p.get_devices()
        except cl.Error:
            continue
        for di, d in enumerate(devs):
            result.append((pi, di, d))
    return result


def choose_device(spec: str | None = None) -> cl.Device:
    """The device named by *spec* (see module doc), or the default one."""
    devices = _all_devices()
    if not devices:
        raise KernelcoreError("no OpenCL device found")
    spec = spec if spec is not None else os.environ.get("KERNELCORE_DEVICE")
    if spec:
        s = spec.strip().lower()
        if s in ("gpu", "cpu", "accelerator"):
            kind = {"gpu": cl.device_type.GPU, "cpu": cl.device_type.CPU,
                    "accelerator": cl.device_type.ACCELERATOR}[s]
            matches = [d for _, _, d in devices if d.type & kind]
        elif ":" in s and all(part.isdigit() for part in s.split(":", 1)):
            pi, di = (int(x) for x in s.split(":", 1))
            matches = [d for p, i, d in devices if (p, i) == (pi, di)]
        else:
            matches = [d for _, _, d in devices
                       if s in d.name.lower() or s in d.platform.name.lower()]
        if not matches:
            names = "; ".join(f"{p}:{i} {d.name.strip()} [{d.platform.name.strip()}]"
                              for p, i, d in devices)
            raise KernelcoreError(f"KERNELCORE_DEVICE={spec!r} matches no device "
                                  f"(available: {names})")
        return matches[0]
    for kind in (cl.device_type.GPU, cl.device_type.CPU):
        for _, _, d in devices:
            if d.type & kind:
                return d
    return devices[0][2]


def default_context() -> cl.Context:
    """The process-wide default OpenCL context (created on first use)."""
    ctx = _DEFAULT.get("ctx")
    if ctx is not None:
        return ctx
    with _DEFAULT_LOCK:
        if "ctx" not in _DEFAULT:
            if not os.environ.get("KERNELCORE_DEVICE") and os.environ.get("PYOPENCL_CTX"):
                ctx = cl.create_some_context(interactive=False)
            else:
                ctx = cl.Context([choose_device()])
            logger.info("default OpenCL device: %s", ctx.devices[0].name.strip())
            _DEFAULT["ctx"] = ctx
        return _DEFAULT["ctx"]


def default_queue() -> cl.CommandQueue:
    """A process-wide in-order command queue on :func:`default_context`.

    Profiling is off unless ``KERNELCORE_PROFILING=1``: on NVIDIA's OpenCL a
    launch on a profiling queue costs about twice as much. Launcher
    statistics need a profiling queue (:func:`profiling_queue`)."""
    queue = _DEFAULT.get("queue")
    if queue is not None:
        return queue
    with _DEFAULT_LOCK:
        if "queue" not in _DEFAULT:
            on = os.environ.get("KERNELCORE_PROFILING", "").lower() in ("1", "true", "yes")
            _DEFAULT["queue"] = cl.CommandQueue(
                default_context(),
                properties=cl.command_queue_properties.PROFILING_ENABLE  # type: ignore[arg-type]
                if on else 0)
        return _DEFAULT["queue"]


def profiling_queue() -> cl.CommandQueue:
    """A new in-order command queue with profiling on :func:`default_context`."""
    return cl.CommandQueue(default_context(),
                           properties=cl.command_queue_properties.PROFILING_ENABLE)
