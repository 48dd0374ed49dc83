"""GPU A/B of row kernels over short and long rows (issue 21).

Softmax ``e = exp(x - x.max(1, keepdims=True)); e / e.sum(1, keepdims=True)``
over float32 rows of several lengths, for a few total sizes: lazyarray's row
kernel (one kernel; its time from OpenCL profiling events, the median of
``--repeat`` launches, see :func:`lazyarray.explain.kernel_profiles`) as a
fraction of a ``clEnqueueCopyBuffer`` of the same bytes (the array's size:
the copy reads and writes it once, as softmax does), and the largest
absolute difference of the result from NumPy's (float64) softmax.

Layouts (``--layouts``, compared on the same device in one run):

* ``new``: :func:`lazyarray.lower.reduction.row_layout` (short rows share a
  work-group; rows of 256 and more get one each);
* ``old``: a work-group of :func:`~lazyarray.lower.reduction.row_group`
  work-items per row, whatever its length (the layout before short rows);
* ``s<S>g<G>`` (e.g. ``s4g256``): ``new`` with SHORT_ROW_SLOTS = S and
  SHORT_ROW_GROUP = G (``s<S>``: the group unchanged), to tune those two;
* ``l<L>r<R>`` (e.g. ``l128r2``): L work-items per row and R rows per
  work-group at every length (rows of up to 32 L elements).

Needs only numpy, pyopencl and lazyarray (run from a checkout)::

    python benchmarks/rows_gpu.py                       # 2^20 and 2^26 elements
    python benchmarks/rows_gpu.py --log2 26 --lengths 2,16,100 --layouts new,old

Prints one Markdown table (``--json PATH`` also writes the numbers).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

# (recipes on disk are keyed by the graph, not by the layout compared here)
os.environ.setdefault("LAZYARRAY_DISK_CACHE", "0")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import pyopencl as cl

import lazyarray as la
from lazyarray.explain import kernel_profiles
from lazyarray.lower import kernel as lower_kernel
from lazyarray.lower import reduction
from lazyarray.run import default_queue
from lazyarray.run import steps as runtime

LENGTHS = (2, 8, 16, 33, 64, 100, 128, 256, 1024, 8192)
LOG2_SIZES = (20, 26)
LAYOUTS = {"new": reduction.row_layout,
           "old": lambda extent, rows: (reduction.row_group(extent), 1)}
DEFAULTS = (reduction.SHORT_ROW_SLOTS, reduction.SHORT_ROW_GROUP)


def _short_sizes(name: str) -> tuple[int, int]:
    """(SHORT_ROW_SLOTS, SHORT_ROW_GROUP) of layout *name*."""
    if name in LAYOUTS or _fixed(name):
        return DEFAULTS
    found = re.fullmatch(r"s(\d+)(?:g(\d+))?", name)
    if found is None:
        raise SystemExit(f"unknown layout {name!r}: new, old, s<slots>g<group> or "
                         "l<lanes>r<rows>")
    return int(found[1]), int(found[2] or DEFAULTS[1])


def _fixed(name: str) -> tuple[int, int] | None:
    """(work-items per row, rows per group) of a layout ``l<L>r<R>``."""
    found = re.fullmatch(r"l(\d+)r(\d+)", name)
    return None if found is None else (int(found[1]), int(found[2]))


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def use_layout(name: str) -> None:
    """Plan row kernels with layout *name* from now on."""
    reduction.SHORT_ROW_SLOTS, reduction.SHORT_ROW_GROUP = _short_sizes(name)
    fixed = _fixed(name)
    lower_kernel.row_layout = (  # type: ignore
        (lambda extent, rows: fixed) if fixed else LAYOUTS.get(name, reduction.row_layout))
    runtime._KERNELS.clear()
    runtime._PLANS.clear()


def copy_seconds(context: cl.Context, device: cl.Device, nbytes: int, repeat: int) -> float:
    """Median device time of a clEnqueueCopyBuffer of *nbytes*."""
    queue = cl.CommandQueue(context, device,
                            properties=cl.command_queue_properties.PROFILING_ENABLE)
    flags = cl.mem_flags.READ_WRITE
    src, dst = cl.Buffer(context, flags, nbytes), cl.Buffer(context, flags, nbytes)
    cl.enqueue_fill_buffer(queue, src, np.ones(1, np.float32), 0, nbytes)
    for _ in range(3):
        cl.enqueue_copy(queue, dst, src)
    queue.finish()
    samples = []
    for _ in range(repeat):
        event = cl.enqueue_copy(queue, dst, src)
        event.wait()
        samples.append(1e-9 * (event.profile.end - event.profile.start))
    return statistics.median(samples)


def layout_of(n: int, rows: int) -> str:
    """The current layout of rows of *n* elements, *rows* of them."""
    lanes, per_group = lower_kernel.row_layout(n, rows)
    return f"{lanes}x{per_group}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lengths", default=",".join(map(str, LENGTHS)),
                   help="row lengths, comma-separated (default %(default)s)")
    p.add_argument("--log2", default=",".join(map(str, LOG2_SIZES)),
                   help="log2 of the total elements, comma-separated (default %(default)s)")
    p.add_argument("--layouts", default="new,old",
                   help="of: new, old, s<slots>g<group> (default %(default)s)")
    p.add_argument("--repeat", type=int, default=20, help="timed launches per point")
    p.add_argument("--no-check", action="store_true", help="skip the comparison with NumPy")
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--force-gpu-layout", action="store_true",
                   help="plan with a GPU's layouts on any device (a check on a CPU)")
    args = p.parse_args(argv)
    lengths = [int(v) for v in args.lengths.split(",")]
    sizes = [1 << int(v) for v in args.log2.split(",")]
    layouts = args.layouts.split(",")
    for name in layouts:
        _short_sizes(name)

    if args.force_gpu_layout:
        from lazyarray import target as la_target
        la_target.device_profile = lambda device: ("gpu", 4)
    queue = default_queue()
    device = queue.device
    print(f"device: {device.name} [{device.platform.name}], driver {device.driver_version}")
    print(f"softmax along rows, float32; time = median of {args.repeat} launches "
          "(profiling events); 'of copy' = copy time / kernel time; layout = "
          "work-items per row x rows per work-group")
    print()
    header = ["elements", "rows of", "copy µs"]
    for name in layouts:
        header += [f"{name} layout", f"{name} µs", f"{name} of copy", f"{name} max error"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---:|" * len(header))
    results = []
    rng = np.random.default_rng(0)
    for size in sizes:
        for n in lengths:
            rows = size // n
            a = rng.standard_normal((rows, n), dtype=np.float32)
            copy = copy_seconds(queue.context, device, a.nbytes, args.repeat)
            want = None if args.no_check else softmax(a.astype(np.float64))
            x = la.asarray(a)
            cells = [f"2^{size.bit_length() - 1}", str(n), f"{1e6 * copy:.1f}"]
            point: dict[str, object] = {"elements": size, "row": n, "rows": rows, "copy_s": copy}
            for name in layouts:
                use_layout(name)
                start = time.perf_counter()
                profiles = kernel_profiles(softmax(x), repeat=args.repeat)
                seconds = sum(prof.seconds for prof in profiles)
                error = None
                if want is not None:
                    got = np.asarray(softmax(x))
                    error = float(np.max(np.abs(got - want)))
                layout = layout_of(n, rows)
                point[name] = {"layout": layout, "kernels": len(profiles),
                               "seconds": seconds, "of_copy": copy / seconds,
                               "max_error": error,
                               "wall_s": time.perf_counter() - start}
                kernels = "" if len(profiles) == 1 else f" ({len(profiles)} kernels)"
                cells += [layout + kernels, f"{1e6 * seconds:.1f}",
                          f"{copy / seconds:.3f}",
                          "-" if error is None else f"{error:.1e}"]
            results.append(point)
            print("| " + " | ".join(cells) + " |", flush=True)
            del x
    use_layout("new")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "device": device.name, "driver": device.driver_version, "repeat": args.repeat,
            "points": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
