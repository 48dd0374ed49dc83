"""Code caches: in memory within a process, on disk across processes.

The two tests across processes are ``slow``: test_cache_faults.py's
test_damaged_code_entries_are_rebuilt_in_a_new_process makes the same cold
(code generated) then warm (code from disk) pair of processes and regenerates
a damaged entry, and test_execution.py's test_on_disk_cache_across_processes
reuses cached work in a second process."""

import os
import subprocess
import sys

import numpy as np
import pytest

import kernelcore as lp

_SCRIPT = """
import numpy as np
import kernelcore as lp
knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 3*a[i] + 1")
a = np.arange(5, dtype=np.float32)
evt, (out,) = knl(None, a=a)
assert np.array_equal(out, 3*a + 1)
s = lp.cache_stats()
print(s["codegen"], s["disk_hits"])
"""


def _run(cache_dir):
    env = dict(os.environ, KERNELCORE_CACHE_DIR=str(cache_dir))
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return tuple(int(x) for x in proc.stdout.split())


@pytest.mark.slow
def test_disk_cache_across_processes(tmp_path):
    assert _run(tmp_path) == (1, 0)      # cold: generates code
    assert _run(tmp_path) == (0, 1)      # warm: code comes from disk


@pytest.mark.slow
def test_corrupt_disk_entry_is_regenerated(tmp_path):
    _run(tmp_path)
    for root, _dirs, files in os.walk(tmp_path):
        for f in files:
            path = os.path.join(root, f)
            with open(path, "r+b") as fh:
                fh.seek(0, 2)
                size = fh.tell()
                fh.seek(max(0, size // 2))
                fh.write(b"\xff" * min(64, max(1, size // 4)))
    # the damaged bytes may miss the entry: the kernel then comes from disk,
    # else from new code; the child checks the values either way
    codegen, disk_hits = _run(tmp_path)
    assert (codegen, disk_hits) in ((1, 0), (0, 1))


def test_second_call_does_no_codegen(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] - 7")
    a = np.arange(4, dtype=np.int32)
    knl(queue, a=a)
    before = lp.cache_stats()["codegen"]
    evt, (out,) = knl(queue, a=a)
    assert lp.cache_stats()["codegen"] == before
    np.testing.assert_array_equal(out, a - 7)


def test_structurally_equal_kernels_share_code(queue):
    a = np.arange(4, dtype=np.float64)
    k1 = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] * 0.5 + 11")
    k1(queue, a=a)
    before = lp.cache_stats()["codegen"]
    k2 = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = a[i] * 0.5 + 11")
    evt, (out,) = k2(queue, a=a)
    assert lp.cache_stats()["codegen"] == before
    np.testing.assert_allclose(out, a * 0.5 + 11)


def test_cast_functions(queue):
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = float32(a[i]) / 2 + int32(b[i])")
    a = np.arange(6, dtype=np.int64)
    b = np.linspace(0, 3, 6)
    evt, (out,) = knl(queue, a=a, b=b)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, a.astype(np.float32) / 2 + b.astype(np.int32))


def test_the_codes_kept_in_memory_are_bounded(monkeypatch):
    # (the disk keeps every code; memory the recent ones)
    from kernelcore.runtime import cache

    monkeypatch.setattr(cache, "CODES_KEPT", 4)
    for k in range(10):
        cache.code_cache_put(f"bounded-test-{k}", f"code {k}")
        assert len(cache._MEMORY) <= 4
    assert cache.code_cache_get("bounded-test-9") == "code 9"


def test_the_programs_kept_in_memory_are_bounded(monkeypatch, ctx):
    from kernelcore.runtime import build

    monkeypatch.setattr(build, "PROGRAMS_KEPT", 4)
    for k in range(7):
        source = f"__kernel void k(__global int *x) {{ x[0] = {k}; }}"
        program = build.built_program(ctx, source, ["k"], f"bounded-program-{k}")
        assert len(build._PROGRAMS) <= 4 and program.kernels[0].function_name == "k"
    assert (ctx.int_ptr, "bounded-program-6") in build._PROGRAMS
