#!/usr/bin/env python3
"""Check that pyopencl can build *and run* a small kernel on some OpenCL device.

Exit status 0 on success, after printing the name of the first device that
worked (GPUs are tried before CPUs, the same preference as the default device
choice of kernelcore). Exit status 1 when no device works; the reason for each
failed device goes to stderr.

Building matters: a broken PoCL enumerates its CPU device fine and only fails
when a program is compiled (e.g. "unknown target CPU 'generic'").
"""

import sys

SOURCE = """
__kernel void twice_plus_one(__global const float *a, __global float *out)
{
    int i = get_global_id(0);
    out[i] = 2.0f * a[i] + 1.0f;
}
"""


def try_device(cl, np, device):
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)
    a = np.arange(64, dtype=np.float32)
    mf = cl.mem_flags
    a_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    out_buf = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
    prg = cl.Program(ctx, SOURCE).build()
    prg.twice_plus_one(queue, a.shape, None, a_buf, out_buf)
    out = np.empty_like(a)
    cl.enqueue_copy(queue, out, out_buf)
    queue.finish()
    if not np.array_equal(out, 2 * a + 1):
        raise RuntimeError("kernel ran but produced wrong results")


def main():
    try:
        import numpy as np
        import pyopencl as cl
    except Exception as exc:
        print(f"cannot import numpy/pyopencl: {exc}", file=sys.stderr)
        return 1

    try:
        platforms = cl.get_platforms()
    except Exception as exc:
        print(f"no OpenCL platform: {exc}", file=sys.stderr)
        return 1

    devices = []
    for platform in platforms:
        try:
            devices.extend(platform.get_devices())
        except Exception as exc:
            print(f"platform {platform.name!r}: cannot list devices: {exc}",
                  file=sys.stderr)
    if not devices:
        print("no OpenCL device found", file=sys.stderr)
        return 1

    def is_gpu(dev):
        return bool(dev.type & cl.device_type.GPU)

    devices.sort(key=lambda dev: 0 if is_gpu(dev) else 1)
    for dev in devices:
        label = f"{dev.name.strip()} [{dev.platform.name.strip()}]"
        try:
            try_device(cl, np, dev)
        except Exception as exc:
            msg = " ".join(str(exc).split())
            print(f"device {label}: {type(exc).__name__}: {msg[:500]}",
                  file=sys.stderr)
            continue
        print(label)
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
