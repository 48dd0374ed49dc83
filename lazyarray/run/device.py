"""The device lazyarray computes on: its queue, the lock around device work,
waiting for it, and arrays coming in from other queues.

The queue is kernelcore's default queue unless a block runs under
:func:`using_queue` (an array context computing on the queue it was given):
the choice is per thread (a context variable), so threads computing for
different contexts do not see each other's queues.

Public names: default_queue, using_queue, queue_chosen, queue_of, adopt, to_device,
DEVICE_LOCK, synchronize, round_trip.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

from kernelcore import default_queue as _kernelcore_queue
from lazyarray.errors import LazyArrayError

#: the queue chosen by :func:`using_queue` in this thread (None: kernelcore's)
_ACTIVE_QUEUE: contextvars.ContextVar[cl.CommandQueue | None] = contextvars.ContextVar(
    "lazyarray_queue", default=None)


def default_queue() -> cl.CommandQueue:
    """The queue lazyarray computes on: the one :func:`using_queue` chose in
    this thread, else kernelcore's default queue."""
    return _ACTIVE_QUEUE.get() or _kernelcore_queue()


def queue_chosen() -> bool:
    """Whether a :func:`using_queue` block chose the queue of this thread."""
    return _ACTIVE_QUEUE.get() is not None


@contextmanager
def using_queue(queue: cl.CommandQueue | None) -> Iterator[cl.CommandQueue]:
    """Compute on *queue* inside the block (None: the current queue): arrays
    made, kernels planned for its device and launched, results allocated and
    values transferred there. Blocks nest; the previous queue comes back at
    the end. Only the calling thread is affected."""
    if queue is None:
        yield default_queue()
        return
    token = _ACTIVE_QUEUE.set(queue)
    try:
        yield queue
    finally:
        _ACTIVE_QUEUE.reset(token)


_CONTEXT_QUEUES: dict[int, tuple[cl.Context, cl.CommandQueue]] = {}


def queue_of(data: cla.Array) -> cl.CommandQueue:
    """The queue to read *data* on: the queue it carries (for a value
    lazyarray computed, the queue that computed it), else the current queue
    if *data* is in its OpenCL context, else a queue on *data*'s context.
    An array of an array context thus reads back outside the context's
    :func:`using_queue` block (``x.get()``, ``np.asarray(x)``)."""
    if data.queue is not None:
        return data.queue
    queue = default_queue()
    context = data.context
    if context is None or context == queue.context:
        return queue
    entry = _CONTEXT_QUEUES.get(context.int_ptr)
    if entry is None or entry[0] != context:
        entry = (context, cl.CommandQueue(context))
        _CONTEXT_QUEUES[context.int_ptr] = entry
    return entry[1]


def adopt(data: cla.Array) -> cla.Array:
    """*data*, once the work queued on its own queue (if not lazyarray's) is
    done; strided views are refused (kernels read whole, C-ordered buffers)."""
    if not data.flags.c_contiguous:
        raise LazyArrayError(
            f"lazyarray reads pyopencl arrays in C order; this one has strides "
            f"{data.strides} for shape {data.shape}: pass a contiguous array (or a "
            f"NumPy array, or slice the lazy array instead: la.asarray(x)[::2])")
    if data.queue is not None and data.queue is not default_queue():
        data.queue.finish()
    return data


def to_device(host: np.ndarray) -> cla.Array:
    """A device copy of the NumPy array *host* (C-ordered, native byte order)
    on the current queue."""
    if not host.dtype.isnative:         # (kernels read native byte order)
        host = host.astype(host.dtype.newbyteorder("="))
    with DEVICE_LOCK:
        return cla.to_device(default_queue(), np.require(host, requirements="C"))


#: held while a thread computes values or moves them between host and device:
#: the evaluations of several threads share stored nodes, and NVIDIA's OpenCL
#: crashed when threads transferred and launched at once (their work runs on
#: one in-order queue anyway)
DEVICE_LOCK = threading.RLock()



def synchronize() -> None:
    """Wait until the device has finished all queued work."""
    with DEVICE_LOCK:
        default_queue().finish()


#: seconds of :func:`round_trip` by queue (``int_ptr``)
_ROUND_TRIPS: dict[int, float] = {}


def round_trip() -> float:
    """Seconds from enqueueing the smallest command (a four-byte fill) on
    the current queue to seeing it finished, the least of five (measured once
    per queue): what waiting for a result adds to a call's time beyond the
    device's work and the call's own enqueueing."""
    queue = default_queue()
    known = _ROUND_TRIPS.get(queue.int_ptr)
    if known is None:
        buffer = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, 4)
        pattern = np.zeros(1, np.uint32)
        known = float("inf")
        with DEVICE_LOCK:
            for _ in range(5):
                queue.finish()
                started = time.perf_counter()
                cl.enqueue_fill_buffer(queue, buffer, pattern, 0, 4)
                queue.finish()
                known = min(known, time.perf_counter() - started)
        _ROUND_TRIPS[queue.int_ptr] = known
    return known
