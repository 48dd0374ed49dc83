"""W9: first-call latency of W1 (on W9_SIZE elements) in fresh processes.

Each measurement is a child process (``sys.executable -c ...``) that imports
the library (timed: the import), puts the inputs on the device, then times
from just before the first call to its result on the host (the first call:
tracing, code generation, compilation, launch, copy back). "cold" runs with
empty on-disk caches: kernelcore's and lazyarray's (``KERNELCORE_CACHE_DIR``,
``LAZYARRAY_CACHE_DIR``), pyopencl's binaries and pytools'
(``XDG_CACHE_HOME``), PoCL's (``POCL_CACHE_DIR``), the NVIDIA driver's
(``CUDA_CACHE_PATH``) and JAX's persistent compilation cache
(``JAX_COMPILATION_CACHE_DIR``) all in a new temporary directory; "warm" is a
second fresh process with the same directory.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import common

logger = logging.getLogger("suite")

W9_SIZE = 1000
CHECK_RTOL = 1e-4

_PRELUDE = """
import json, time
import numpy as np
rng = np.random.default_rng(0)
host = [rng.random({n}, dtype=np.float32) for _ in range(5)]
a, b, c, d, e = (h.astype(np.float64) for h in host)
expected = a * b + c * d - np.sin(e)
t0 = time.perf_counter()
"""

_REPORT = """
t3 = time.perf_counter()
error = float(np.max(np.abs(out - expected)) / np.max(np.abs(expected)))
print(json.dumps({{"import_s": t1 - t0, "first_call_s": t3 - t2, "error": error,
                   "dtype": str(out.dtype), "backend": backend}}))
"""

_LAZYARRAY = """
import lazyarray as la
from lazyarray.run import default_queue
t1 = time.perf_counter()
args = [la.asarray(h) for h in host]
default_queue().finish()
backend = default_queue().device.name
def w1(a, b, c, d, e):
    return a * b + c * d - np.sin(e)
f = {wrap}
t2 = time.perf_counter()
out = np.asarray(f(*args))
"""

_JAX = """
import jax
import jax.numpy as jnp
t1 = time.perf_counter()
args = jax.block_until_ready([jax.device_put(h) for h in host])
backend = jax.default_backend()
def w1(a, b, c, d, e):
    return a * b + c * d - jnp.sin(e)
f = jax.jit(w1)
t2 = time.perf_counter()
out = np.asarray(f(*args))
"""

#: child program per variant
CHILDREN = {
    "lazyarray-jit": _LAZYARRAY.replace("{wrap}", "la.jit(w1)"),
    "lazyarray-eager": _LAZYARRAY.replace("{wrap}", "w1"),
    "jax": _JAX,
}


def _child_env(cache: Path, kind: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "KERNELCORE_CACHE_DIR": str(cache / "kernelcore"),
        "LAZYARRAY_CACHE_DIR": str(cache / "lazyarray"),
        "XDG_CACHE_HOME": str(cache / "xdg"),
        "POCL_CACHE_DIR": str(cache / "pocl"),
        "CUDA_CACHE_PATH": str(cache / "cuda"),
        "JAX_COMPILATION_CACHE_DIR": str(cache / "jax"),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(common.REPO_ROOT), env.get("PYTHONPATH")) if p),
    })
    if kind == "gpu":
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    else:
        env.setdefault("JAX_PLATFORMS", "cpu")
    return env


def _run_child(variant: str, cache: Path, kind: str) -> dict:
    """One fresh process of *variant* with caches under *cache*: its report."""
    code = _PRELUDE.format(n=W9_SIZE) + CHILDREN[variant] + _REPORT.format()
    proc = subprocess.run([sys.executable, "-c", code], env=_child_env(cache, kind),
                          capture_output=True, text=True, timeout=600)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"child exited with {proc.returncode}: "
                           + proc.stderr.strip()[-2000:])
    report = json.loads(lines[-1])
    if report["dtype"] != "float32" or not report["error"] <= CHECK_RTOL:
        raise ValueError(f"wrong result: {report['dtype']}, max |error| / max "
                         f"|expected| = {report['error']:.3g}")
    return report


def _cache_has_files(path: Path) -> bool:
    return path.is_dir() and any(p.is_file() for p in path.rglob("*"))


def _measure(variant: str, kind: str, reps: int) -> dict[str, dict]:
    """Records of *variant* for the cold and the warm case."""
    samples: dict[str, list[dict]] = {"cold": [], "warm": []}
    for rep in range(reps):
        with tempfile.TemporaryDirectory(prefix="suite-w9-") as tmp:
            cache = Path(tmp)
            samples["cold"].append(_run_child(variant, cache, kind))
            if variant == "jax" and not _cache_has_files(cache / "jax"):
                return {"cold": _record(samples["cold"], kind),
                        "warm": {"status": "skipped", "reason": "JAX wrote nothing to "
                                 "its persistent compilation cache"}}
            samples["warm"].append(_run_child(variant, cache, kind))
        logger.info("  W9 %s %d/%d: cold %.0f ms, warm %.0f ms", variant, rep + 1, reps,
                    1e3 * samples["cold"][-1]["first_call_s"],
                    1e3 * samples["warm"][-1]["first_call_s"])
    return {which: _record(s, kind) for which, s in samples.items()}


def _record(reports: list[dict], kind: str) -> dict:
    backend = reports[0]["backend"]
    if kind == "gpu" and backend == "cpu":
        return {"status": "skipped", "reason": "JAX has no GPU backend here"}
    imports = common.timing_summary([r["import_s"] for r in reports])
    return {"status": "ok", "backend": backend,
            **common.timing_summary([r["first_call_s"] for r in reports]),
            "import_s": imports["median_s"],
            "max_rel_error": max(r["error"] for r in reports)}


def run(kind: str, reps: int) -> list[dict]:
    """The "W9 cold" and "W9 warm" case records (*reps* pairs of fresh
    processes per variant; the median is reported)."""
    cases = {which: {"name": f"W9 {which}", "workload": "W9",
                     "expression": f"first call of W1 on {W9_SIZE} elements in a fresh "
                     f"process, {'empty' if which == 'cold' else 'filled'} caches",
                     "size": str(W9_SIZE), "unit": "ms", "variants": {}}
             for which in ("cold", "warm")}
    for variant in CHILDREN:
        if variant == "jax" and importlib.util.find_spec("jax") is None:
            records = {which: {"status": "not installed", "reason": "No module named 'jax'"}
                       for which in cases}
        else:
            try:
                records = _measure(variant, kind, reps)
            except Exception as e:
                logger.error("  W9 %s failed: %s", variant, e)
                error = f"{type(e).__name__}: {e}"
                records = {which: {"status": "failed", "error": error} for which in cases}
        for which, rec in records.items():
            cases[which]["variants"][variant] = rec
    return list(cases.values())
