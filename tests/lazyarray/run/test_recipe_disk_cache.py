"""Planned kernels are stored on disk: a new process runs them without
lowering or generating code; unreadable entries are rebuilt."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

_CHILD = """
import json, os, sys
import numpy as np
import kernelcore as lp
import lazyarray as la
if os.environ.get("TEST_MATH_F32"):
    import lazyarray.target
    lazyarray.target.math_f32_choice = lambda device: os.environ["TEST_MATH_F32"]
from lazyarray.lower import kernel as lower
from lazyarray.run import cache

lowered = []
original = lower.build_kernel
def counting(node, inputs, *rest, **options):
    lowered.append(type(node).__name__)
    return original(node, inputs, *rest, **options)
lower.build_kernel = counting
from lazyarray.run import steps as runtime
runtime.build_kernel = counting

x = la.asarray(np.arange(3000, dtype=np.float32).reshape(30, 100))
f = la.jit(lambda x: (np.sin(x) * 2).sum(axis=1) + x.max())
modules = set(sys.modules)
y = np.asarray(f(x))
imported = sorted(set(sys.modules) - modules)
z = np.asarray(np.exp(x[:, :7] / 1000).T * 3)
print(json.dumps({"y": y.tolist(), "z": z.tolist(), "lowered": lowered, "imported": imported,
                  "hits": cache.STATS["disk_hits"], "stores": cache.STATS["disk_stores"]}))
"""


def _child(cache_dir: Path, math_f32: str = "") -> dict:
    env = dict(os.environ, LAZYARRAY_CACHE_DIR=str(cache_dir), TEST_MATH_F32=math_f32)
    done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _expected():
    x = np.arange(3000, dtype=np.float32).reshape(30, 100)
    return (np.sin(x) * 2).sum(axis=1) + x.max(), np.exp(x[:, :7] / 1000).T * 3


def test_a_second_process_lowers_nothing(tmp_path):
    """... and imports no module in its first call (a first call from the
    disk cache only builds, binds and launches)."""
    first = _child(tmp_path)
    second = _child(tmp_path)
    y, z = _expected()
    for run in (first, second):
        np.testing.assert_allclose(run["y"], y, rtol=1e-5)
        np.testing.assert_allclose(run["z"], z, rtol=1e-5)
    assert first["lowered"] and first["stores"] == len(first["lowered"])
    assert second["lowered"] == [] and second["hits"] == len(first["lowered"])
    assert second["imported"] == []


def test_a_process_with_another_target_does_not_reuse_recipes(tmp_path, queue):
    """The recipe key covers the whole target: kernels made with kernelcore's
    float32 math helpers are not run where the target says the built-ins
    (and the other way round)."""
    from lazyarray.target import math_f32_choice
    other = "builtin" if math_f32_choice(queue.device) == "branch_free" else "branch_free"
    first = _child(tmp_path)
    second = _child(tmp_path, other)
    y, z = _expected()
    np.testing.assert_allclose(second["y"], y, rtol=1e-5)
    np.testing.assert_allclose(second["z"], z, rtol=1e-5)
    assert sorted(second["lowered"]) == sorted(first["lowered"]) and second["hits"] == 0


def test_unreadable_entries_are_rebuilt(tmp_path):
    first = _child(tmp_path)
    damaged = 0
    for path in tmp_path.rglob("*"):
        if path.is_file() and "lazyarray-recipes" in str(path) and path.suffix != ".lock":
            path.write_bytes(b"\\x00 not a pickle")
            damaged += 1
    assert damaged
    again = _child(tmp_path)
    y, z = _expected()
    np.testing.assert_allclose(again["y"], y, rtol=1e-5)
    np.testing.assert_allclose(again["z"], z, rtol=1e-5)
    assert sorted(again["lowered"]) == sorted(first["lowered"])


def test_offset_views_of_device_arrays_are_read_where_they_start(queue):
    """Bound launches rebind whole buffers; arrays that start inside a buffer
    (pyopencl views) go through the kernel call instead, every time."""
    import pyopencl.array as cla

    import lazyarray as la
    host = np.arange(40, dtype=np.float32)
    dev = cla.to_device(queue, host)
    for start in (0, 5, 0, 7):      # the first run binds; later offsets must not reuse it
        view = dev[start:start + 20]
        got = np.asarray(la.asarray(view) * 2 + 1)
        np.testing.assert_array_equal(got, host[start:start + 20] * 2 + 1)


def test_strided_device_views_are_refused_with_a_clear_error(queue):
    import pyopencl.array as cla
    import pytest

    import lazyarray as la
    dev = cla.to_device(queue, np.arange(40, dtype=np.float32))
    np.asarray(la.asarray(dev[:20]) + 1)          # binds a launch for shape (20,)
    f = la.jit(lambda x: x + 1)
    f(dev[:20])
    with pytest.raises(la.LazyArrayError, match="C order"):
        la.asarray(dev[::2])
    with pytest.raises(la.LazyArrayError, match="C order"):
        f(dev[::2])


def test_source_fingerprint_covers_every_subfolder(tmp_path):
    """A changed file in any folder of the sources changes the fingerprint that
    keys stored recipes (lowering lives in lazyarray/lower, not next to the cache)."""
    import lazyarray.lower.kernel
    from kernelcore.version import tree_fingerprint
    from lazyarray.run import cache
    assert Path(lazyarray.lower.kernel.__file__).resolve().is_relative_to(cache.PACKAGE_ROOT)
    (tmp_path / "deep" / "er").mkdir(parents=True)
    source = tmp_path / "deep" / "er" / "m.py"
    source.write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("not a source")
    before = tree_fingerprint(tmp_path)
    (tmp_path / "notes.txt").write_text("still not a source")
    assert tree_fingerprint(tmp_path) == before
    source.write_text("x = 12\n")
    assert tree_fingerprint(tmp_path) != before
