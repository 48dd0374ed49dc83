"""PoCL's loop-vectorizer remarks for the math-helper tests: whether this
machine has a PoCL CPU device, and the remarks of a child process that
builds and runs a kernel per helper (and per mixed expression)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: the child: one kernel per body, each built and run once on PoCL's CPU device
_CHILD = r"""
import sys
import pyopencl as cl
from kernelcore.target.{module} import {table} as table, {source} as source
device = next(d for p in cl.get_platforms() if "Portable Computing Language" in p.name
              for d in p.get_devices() if d.type & cl.device_type.CPU)
ctx = cl.Context([device])
helpers = {prelude!r} + "\n".join(source(h) for h in table.values())
bodies = [f"{{h}}(x[i])" if name not in ("pow", "atan2", "hypot") else f"{{h}}(x[i], z[i])"
          for name, h in table.items()] + {mixes!r}
for k, body in enumerate(bodies):
    src = helpers + ("\n__kernel void __attribute__((reqd_work_group_size(64, 1, 1))) "
                     f"k{{k}}(__global {ctype} *y, __global const {ctype} *x, "
                     f"__global const {ctype} *z) {{{{ size_t i = get_global_id(0); "
                     f"y[i] = {{body}}; }}}}")
    prg = cl.Program(ctx, src).build()
    queue = cl.CommandQueue(ctx)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, {itemsize} * 64)
    getattr(prg, f"k{{k}}")(queue, (64,), (64,), buf, buf, buf)    # (PoCL compiles here)
    queue.finish()
    print("built", k, file=sys.stderr, flush=True)
"""


def pocl_cpu() -> bool:
    """Whether a PoCL CPU device is here."""
    import pyopencl as cl
    return any("Portable Computing Language" in p.name and p.get_devices(cl.device_type.CPU)
               for p in cl.get_platforms())


def vectorizer_remarks(module: str, table: str, source: str, ctype: str, mixes: list[str],
                       helpers: int, cache: Path) -> str:
    """PoCL's vectorizer remarks (and the output) of a child process that
    builds and runs a kernel calling each of the *helpers* helpers of
    ``kernelcore.target.<module>`` (the dict *table*, the sources from the
    function *source*) on *ctype* values, then one per expression of
    *mixes*, with PoCL's cache in *cache*; checked to have built them all."""
    child = _CHILD.format(
        module=module, table=table, source=source, ctype=ctype, mixes=mixes,
        itemsize=8 if ctype == "double" else 4,
        prelude="#pragma OPENCL EXTENSION cl_khr_fp64: enable\n" if ctype == "double" else "")
    env = dict(os.environ, POCL_VECTORIZER_REMARKS="1", POCL_CACHE_DIR=str(cache))
    done = subprocess.run([sys.executable, "-c", child], capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count("built") == helpers + len(mixes)
    return done.stdout + done.stderr           # (PoCL prints its remarks on stdout)
