"""Copies between host and device arrays as launchers (hysop's
``OpenClCopyLauncher``).

Public names: OpenClCopyLauncher.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

from kernelcore.diagnostic import InvocationError
from kernelcore.runtime.launcher_base import LauncherI, _resolve_queue

logger = logging.getLogger("kernelcore.launchers")

_DEBUG = logging.DEBUG


def _device_side(ary, what: str) -> tuple[cl.MemoryObjectHolder, int, int]:
    """(buffer, byte offset, byte size) of a device array or buffer."""
    if isinstance(ary, cla.Array):
        if not ary.flags.forc:
            raise InvocationError(f"{what} is a non-contiguous pyopencl array")
        return ary.base_data, ary.offset, ary.nbytes  # type: ignore[return-value]
    if isinstance(ary, cl.MemoryObjectHolder):
        return ary, 0, ary.size
    raise InvocationError(f"{what} must be a pyopencl array or buffer, got "
                          f"{type(ary).__name__}")


def _host_side(ary, what: str) -> np.ndarray:
    if not isinstance(ary, np.ndarray):
        raise InvocationError(f"{what} must be a numpy array, got {type(ary).__name__}")
    if not (ary.flags.c_contiguous or ary.flags.f_contiguous):
        raise InvocationError(f"{what} is a non-contiguous numpy array")
    return ary


class OpenClCopyLauncher(LauncherI):
    """A copy host->device, device->host or device->device (decided by the types
    of *src* and *dst*: numpy arrays are host data; pyopencl arrays and buffers
    are device data). Offsets are in bytes, added to those of array views. A
    device->device copy moves *byte_count* bytes (default: all of *src*).

    Copies do not block unless *blocking*: host data must not be touched before
    the returned event completes.
    """

    def __init__(self, name: str, src, dst, src_device_offset: int | None = None,
                 dst_device_offset: int | None = None, byte_count: int | None = None,
                 blocking: bool = False, default_queue: cl.CommandQueue | None = None,
                 **kwds: Any):
        super().__init__(name, **kwds)
        self._src, self._dst = src, dst
        self._default_queue = default_queue
        src_host, dst_host = isinstance(src, np.ndarray), isinstance(dst, np.ndarray)
        kw: dict[str, Any] = {}
        if src_host and dst_host:
            raise InvocationError(f"copy '{name}': both ends are host arrays")
        if src_host:
            self.direction = "host_to_device"
            host = _host_side(src, f"copy '{name}' source")
            buf, off, size = _device_side(dst, f"copy '{name}' destination")
            off += dst_device_offset or 0
            if host.nbytes > size - (dst_device_offset or 0):
                raise InvocationError(f"copy '{name}': {host.nbytes} bytes do not fit "
                                      "in the destination")
            self._copy_args: tuple = (buf, host)
            kw["dst_offset"] = off
            kw["is_blocking"] = blocking
        elif dst_host:
            self.direction = "device_to_host"
            host = _host_side(dst, f"copy '{name}' destination")
            buf, off, size = _device_side(src, f"copy '{name}' source")
            off += src_device_offset or 0
            if host.nbytes > size - (src_device_offset or 0):
                raise InvocationError(f"copy '{name}': the destination wants "
                                      f"{host.nbytes} bytes, the source has fewer")
            self._copy_args = (host, buf)
            kw["src_offset"] = off
            kw["is_blocking"] = blocking
        else:
            self.direction = "device_to_device"
            sbuf, soff, ssize = _device_side(src, f"copy '{name}' source")
            dbuf, doff, dsize = _device_side(dst, f"copy '{name}' destination")
            ssize -= src_device_offset or 0
            dsize -= dst_device_offset or 0
            count = ssize if byte_count is None else int(byte_count)
            if count > ssize or count > dsize:
                raise InvocationError(f"copy '{name}': {count} bytes exceed the source "
                                      f"({ssize}) or destination ({dsize})")
            self._copy_args = (dbuf, sbuf)
            kw.update(src_offset=soff + (src_device_offset or 0),
                      dst_offset=doff + (dst_device_offset or 0), byte_count=count)
        self._copy_kwargs = kw

    def global_size_configured(self) -> bool:
        return True

    def __call__(self, queue: cl.CommandQueue | None = None, wait_for=None,
                 **kwds) -> cl.Event:
        """Enqueue the copy after *wait_for*; returns its event."""
        if kwds:
            raise InvocationError(f"copy '{self._name}' takes no parameters, got "
                                  + ", ".join(sorted(kwds)))
        queue = _resolve_queue(self, queue, self._default_queue)
        if queue is not self._queue:
            self._use_queue(queue)
        if logger.isEnabledFor(_DEBUG):
            logger.debug("copy %s: %s", self._name, self.direction)
        evt = cl.enqueue_copy(queue, *self._copy_args, wait_for=wait_for,
                              **self._copy_kwargs)
        self._after_enqueue(evt)
        return evt
