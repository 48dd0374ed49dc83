"""The device's roofline: its peak memory bandwidth and arithmetic rates,
measured once per device by small OpenCL microbenchmarks and kept on disk.

- bandwidth: a ``float4`` copy ``out[i] = in[i]`` over 2 x 64 MiB (256 MiB
  each on a GPU); bytes read plus bytes written per second, best of the
  runs;
- flops: every work-item runs 8 independent chains of ``float4`` (``double4``)
  multiply-adds, ``a = a * b + c``: 2 floating point operations per lane
  and step, best of the runs (float64 only where the device has it).

The result is stored with the lazyarray disk cache (``LAZYARRAY_CACHE_DIR``,
else ``KERNELCORE_CACHE_DIR``, else the user cache directory; not stored
when ``LAZYARRAY_DISK_CACHE=0``) under the device's identity (platform, name,
driver), so that a later process reads it instead of measuring (about a
second on a GPU, a few on a CPU).

Public names: Peaks, device_peaks.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyopencl as cl

import lazyarray.run as _run
from kernelcore import DiskStore, default_cache_dir

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Peaks:
    """A device's measured peaks: *bandwidth* in bytes per second, and
    floating point operations per second by dtype (``float32``, ``float64``;
    a dtype the device lacks is absent)."""

    device: str
    bandwidth: float
    flops: tuple          # of (dtype name, operations per second)

    def flop_rate(self, dtype: Any) -> float | None:
        """The peak of *dtype*'s operations (complex types: of their parts'
        dtype), or None if not measured (or not a NumPy type)."""
        try:
            name = np.dtype(dtype).name
        except TypeError:
            return None              # (a name NumPy has not: "tf32")
        name = {"complex64": "float32", "complex128": "float64"}.get(name, name)
        return dict(self.flops).get(name)


_PEAKS: dict[int, Peaks] = {}
_LOCK = threading.Lock()

_COPY = """
__kernel void copy4(__global float4 *out, __global const float4 *in)
{
    size_t i = get_global_id(0);
    out[i] = in[i];
}
"""

_FMA = """
__kernel void fma_chains(__global T4 *out, T b, T c)
{
    T4 x0 = (T4)(get_global_id(0)) * (T)1e-9;
    T4 x1 = x0 + (T)1, x2 = x0 + (T)2, x3 = x0 + (T)3,
       x4 = x0 + (T)4, x5 = x0 + (T)5, x6 = x0 + (T)6, x7 = x0 + (T)7;
    for (int k = 0; k < STEPS; ++k) {
        x0 = x0 * b + c; x1 = x1 * b + c; x2 = x2 * b + c; x3 = x3 * b + c;
        x4 = x4 * b + c; x5 = x5 * b + c; x6 = x6 * b + c; x7 = x7 * b + c;
    }
    out[get_global_id(0)] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}
"""
#: multiply-add steps per chain
_STEPS = 256


def _identity(device: cl.Device) -> str:
    return " | ".join(str(x).strip() for x in (
        device.platform.name, device.platform.version, device.name,
        device.driver_version, device.max_compute_units))


def _best_seconds(queue, launch, repeats: int) -> float:
    """The shortest device time of *launch()* (an event) over *repeats* runs
    (profiling events on a profiling queue, else wall-clock time)."""
    profiling = bool(queue.properties & cl.command_queue_properties.PROFILING_ENABLE)
    launch().wait()                     # (warm-up: compilation, first touch)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        event = launch()
        event.wait()
        seconds = (1e-9 * (event.profile.end - event.profile.start) if profiling
                   else time.perf_counter() - start)
        best = min(best, seconds)
    return best


def _bandwidth(queue, gpu: bool) -> float:
    device = queue.device
    nbytes = min((256 if gpu else 64) << 20, device.max_mem_alloc_size // 4,
                 device.global_mem_size // 8)
    n4 = max(nbytes // 16, 1024)
    mf = cl.mem_flags
    src = cl.Buffer(queue.context, mf.READ_ONLY, 16 * n4)
    dst = cl.Buffer(queue.context, mf.WRITE_ONLY, 16 * n4)
    cl.enqueue_fill_buffer(queue, src, np.float32(1), 0, 16 * n4)  # type: ignore[arg-type]
    kernel = cl.Program(queue.context, _COPY).build().copy4
    kernel.set_args(dst, src)
    seconds = _best_seconds(queue, lambda: cl.enqueue_nd_range_kernel(
        queue, kernel, (n4,), None), 10)
    return 2 * 16 * n4 / seconds


def _flops(queue, dtype: str, gpu: bool) -> float:
    device = queue.device
    items = 64 * device.max_compute_units * (256 if gpu else 16)
    ctype = "double" if dtype == "float64" else "float"
    options = [f"-DT={ctype}", f"-DT4={ctype}4", f"-DSTEPS={_STEPS}"]
    source = ("#pragma OPENCL EXTENSION cl_khr_fp64: enable\n" if ctype == "double"
              else "") + _FMA
    kernel = cl.Program(queue.context, source).build(options=options).fma_chains
    out = cl.Buffer(queue.context, cl.mem_flags.WRITE_ONLY,
                    items * 4 * np.dtype(dtype).itemsize)
    kernel.set_args(out, np.dtype(dtype).type(0.999), np.dtype(dtype).type(0.001))
    seconds = _best_seconds(queue, lambda: cl.enqueue_nd_range_kernel(
        queue, kernel, (items,), None), 5)
    return items * 8 * 4 * 2 * _STEPS / seconds


def _measure(queue) -> Peaks:
    device = queue.device
    gpu = bool(device.type & cl.device_type.GPU)
    if not queue.properties & cl.command_queue_properties.PROFILING_ENABLE:
        queue = cl.CommandQueue(queue.context, device,
                                properties=cl.command_queue_properties.PROFILING_ENABLE)
    flops = [("float32", _flops(queue, "float32", gpu))]
    if device.double_fp_config:
        flops.append(("float64", _flops(queue, "float64", gpu)))
    peaks = Peaks(device.name.strip(), _bandwidth(queue, gpu), tuple(flops))
    logger.info("measured the roofline of %s: %.1f GB/s, %s", peaks.device,
                peaks.bandwidth / 1e9, ", ".join(f"{d} {r / 1e9:.1f} GFLOP/s"
                                                 for d, r in flops))
    return peaks


def _store():
    directory = os.environ.get("LAZYARRAY_CACHE_DIR") or default_cache_dir()
    return DiskStore("lazyarray-roofline-v1", directory)


def _disk_enabled() -> bool:
    return os.environ.get("LAZYARRAY_DISK_CACHE", "1").lower() not in ("0", "false", "no")


def device_peaks(queue: cl.CommandQueue | None = None, remeasure: bool = False) -> Peaks:
    """The measured :class:`Peaks` of *queue*'s device (by default
    lazyarray's): from this process's memory, else from the disk cache, else
    measured now (and stored). *remeasure* measures again."""
    if queue is None:
        queue = _run.default_queue()
    device = queue.device
    with _LOCK:
        peaks = _PEAKS.get(device.int_ptr)
        if peaks is not None and not remeasure:
            return peaks
        identity = _identity(device)
        key = hashlib.sha256(identity.encode()).hexdigest()
        if not remeasure and _disk_enabled():
            peaks = _store().get(key, lambda v: isinstance(v, Peaks))
        if peaks is None or remeasure:
            peaks = _measure(queue)
            if _disk_enabled():
                _store().put(key, peaks)
        _PEAKS[device.int_ptr] = peaks
        return peaks
