"""Programs are built from binaries kept on disk where the OpenCL platform
keeps none of its own (PoCL, NVIDIA): a new process builds from the binary,
and a binary the driver refuses is rebuilt from source and replaced."""

import json
import os
import subprocess
import sys

import pytest

_CHILD = """
import json
import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from kernelcore.runtime import build
from kernelcore.runtime.device import default_queue

queue = default_queue()
program = build.compile_program(queue.context, '''
__kernel void twice(__global float *out, __global const float *a)
{ int i = get_global_id(0); out[i] = 2.0f * a[i] + 1.0f; }''')
a = cla.to_device(queue, np.arange(100, dtype=np.float32))
out = cla.empty_like(a)
program.twice(queue, (100,), None, out.data, a.data)
print(json.dumps({"out": out.get().tolist(), **build.BINARY_STATS}))
"""


def _child(cache_dir, **env) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                          env=dict(os.environ, KERNELCORE_CACHE_DIR=str(cache_dir), **env),
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _keeps_binaries() -> bool:
    from pyopencl.characterize import has_src_build_cache

    from kernelcore.runtime.device import default_queue
    return bool(has_src_build_cache(default_queue().device))


def test_a_second_process_builds_from_the_binary(tmp_path):
    if not _keeps_binaries():
        pytest.skip("pyopencl keeps this platform's binaries itself")
    expected = [2.0 * k + 1.0 for k in range(100)]
    first = _child(tmp_path)
    second = _child(tmp_path)
    assert first["out"] == second["out"] == expected
    assert (first["hits"], first["stores"]) == (0, 1)
    assert (second["hits"], second["stores"]) == (1, 0)
    off = _child(tmp_path, KERNELCORE_BINARY_CACHE="0")
    assert off["out"] == expected and (off["hits"], off["stores"]) == (0, 0)


def test_a_refused_binary_is_rebuilt_from_source(tmp_path):
    if not _keeps_binaries():
        pytest.skip("pyopencl keeps this platform's binaries itself")
    from kernelcore.runtime.store import DiskStore

    expected = [2.0 * k + 1.0 for k in range(100)]
    assert _child(tmp_path)["stores"] == 1
    store = DiskStore("kernelcore-binaries-v1", str(tmp_path))
    (key,) = [row[0] for row in store._run(
        lambda conn: conn.execute("SELECT key FROM entries").fetchall())]
    store.put(key, b"not a program binary")
    store._close()
    rebuilt = _child(tmp_path)
    assert rebuilt["out"] == expected and (rebuilt["hits"], rebuilt["stores"]) == (0, 1)
    again = _child(tmp_path)
    assert again["out"] == expected and (again["hits"], again["stores"]) == (1, 0)
