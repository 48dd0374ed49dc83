"""The device lazyarray computes on: its queue, the lock around device work,
waiting for it, and arrays coming in from other queues.

Public names: default_queue, adopt, DEVICE_LOCK, synchronize.
"""

from __future__ import annotations

import threading

import pyopencl as cl
import pyopencl.array as cla

import kernelcore as lp


def default_queue() -> cl.CommandQueue:
    """The queue lazyarray computes on: kernelcore's default queue."""
    return lp.default_queue()


def adopt(data: cla.Array) -> cla.Array:
    """*data*, once the work queued on its own queue (if not lazyarray's) is
    done; strided views are refused (kernels read whole, C-ordered buffers)."""
    if not data.flags.c_contiguous:
        from lazyarray.errors import LazyArrayError
        raise LazyArrayError(
            f"lazyarray reads pyopencl arrays in C order; this one has strides "
            f"{data.strides} for shape {data.shape}: pass a contiguous array (or a "
            f"NumPy array, or slice the lazy array instead: la.asarray(x)[::2])")
    if data.queue is not None and data.queue is not default_queue():
        data.queue.finish()
    return data


#: held while a thread computes values or moves them between host and device:
#: the evaluations of several threads share stored nodes, and NVIDIA's OpenCL
#: crashed when threads transferred and launched at once (their work runs on
#: one in-order queue anyway)
DEVICE_LOCK = threading.RLock()



def synchronize() -> None:
    """Wait until the device has finished all queued work."""
    with DEVICE_LOCK:
        default_queue().finish()
