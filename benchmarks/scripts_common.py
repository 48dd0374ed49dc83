"""What the script suite's parent and child processes share: loading a script,
the array modules it runs on, results on the host, comparisons, lazyarray's counters.

Imports nothing heavy at module level: a fresh-process measurement imports
this after it has timed ``import numpy`` / ``import lazyarray``.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
SCRIPT_DIR = BENCH_DIR / "scripts"

#: the variants a script runs as: the array module and the entry point
VARIANTS = {"numpy": ("numpy", "run"), "lazyarray": ("lazyarray", "run"),
            "lazyarray-jit": ("lazyarray", "run_jit")}

#: how lazyarray's ``np.random`` is provided: its own functions, or NumPy's
#: legacy generator with the arrays handed over by ``la.asarray``
RANDOM_MODES = ("auto", "native", "numpy")


def load_script(name: str) -> types.ModuleType:
    """The script module *name* of ``benchmarks/scripts``."""
    path = SCRIPT_DIR / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no script {name!r} in {SCRIPT_DIR}")
    module_name = f"_lazyarray_scripts.{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def script_names() -> tuple[str, ...]:
    """The suite's scripts in table order (``scripts/__init__.py``'s SCRIPTS)."""
    init = SCRIPT_DIR / "__init__.py"
    namespace: dict[str, Any] = {}
    exec(compile(init.read_text(), str(init), "exec"), namespace)
    return tuple(namespace["SCRIPTS"])


class HostRandom:
    """``np.random`` for lazyarray drawn from NumPy's legacy generator: every
    function of ``numpy.random`` by name, its array results as lazy arrays."""

    def __init__(self, la: types.ModuleType) -> None:
        self._la = la

    def __getattr__(self, name: str) -> Any:
        import numpy

        func = getattr(numpy.random, name)
        if not callable(func):
            return func

        def call(*args: Any, **kwargs: Any) -> Any:
            args = tuple(_on_host(a) for a in args)
            kwargs = {k: _on_host(v) for k, v in kwargs.items()}
            out = func(*args, **kwargs)
            return self._la.asarray(out) if isinstance(out, numpy.ndarray) else out

        call.__name__ = name
        return call


def _on_host(value: Any) -> Any:
    import numpy

    if type(value).__module__.startswith("lazyarray"):
        return numpy.asarray(value)
    return value


class _WithHostRandom(types.ModuleType):
    """lazyarray's namespace with :class:`HostRandom` as ``random``."""

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.modules["lazyarray"], name)


def array_module(variant: str, random_mode: str = "auto") -> tuple[types.ModuleType, str]:
    """The module *variant* runs on and where its random numbers come from
    (``numpy``, ``native`` or ``numpy shim``)."""
    module_name, _ = VARIANTS[variant]
    module = importlib.import_module(module_name)
    if module_name == "numpy":
        return module, "numpy"
    native = hasattr(getattr(module, "random", None), "seed")
    if random_mode == "native" or (random_mode == "auto" and native):
        return module, "native"
    proxy = _WithHostRandom("lazyarray")
    proxy.random = HostRandom(module)     # type: ignore[attr-defined]
    return proxy, "numpy shim"


def entry_point(script: types.ModuleType, variant: str) -> Any:
    """The function of *script* that *variant* calls, or None."""
    return getattr(script, VARIANTS[variant][1], None)


def to_host(result: Any) -> Any:
    """*result* with every array a NumPy array (tuples and lists kept as tuples);
    computes lazy values."""
    import numpy

    if isinstance(result, (tuple, list)):
        return tuple(to_host(r) for r in result)
    if isinstance(result, (bool, int, float, complex)):
        return result
    return numpy.asarray(result)


def compare(got: Any, want: Any, rtol: float, atol: float) -> str | None:
    """None where *got* matches *want* within the tolerances (``numpy.allclose``,
    NaNs equal, same shapes); else what differs."""
    import numpy

    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return f"result structure differs: {_describe(got)} vs {_describe(want)}"
        for k, (g, w) in enumerate(zip(got, want)):
            error = compare(g, w, rtol, atol)
            if error:
                return f"item {k}: {error}"
        return None
    g, w = numpy.asarray(got), numpy.asarray(want)
    if g.shape != w.shape:
        return f"shape {g.shape} vs {w.shape}"
    if g.size == 0:
        return None
    if g.dtype.kind in "biu" and w.dtype.kind in "biu":
        bad = int(numpy.count_nonzero(g != w))
        return None if bad == 0 else f"{bad} of {g.size} integers differ"
    try:
        if numpy.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
            return None
    except TypeError:
        return f"cannot compare dtypes {g.dtype} and {w.dtype}"
    diff = numpy.abs(g.astype(numpy.float64) - w.astype(numpy.float64))
    diff = numpy.where(numpy.isnan(diff), numpy.inf, diff)
    where = numpy.unravel_index(int(numpy.argmax(diff)), diff.shape)
    return (f"max |difference| {float(diff[where]):.3g} at {tuple(int(i) for i in where)} "
            f"({float(g[where]):.6g} vs {float(w[where]):.6g}; rtol {rtol:g}, atol {atol:g})")


def _describe(value: Any) -> str:
    return f"tuple of {len(value)}" if isinstance(value, tuple) else type(value).__name__


def lazy_counters() -> dict[str, int] | None:
    """lazyarray's running totals of kernels launched and planned (and recipes
    loaded from disk), or None where lazyarray has none of these counters."""
    la = sys.modules.get("lazyarray")
    if la is None:
        return None
    stats = getattr(la, "STATS", None)
    if not isinstance(stats, dict):
        stats = None
        for module in ("lazyarray.run.steps", "lazyarray.run"):
            try:
                stats = getattr(importlib.import_module(module), "STATS", None)
            except ImportError:
                continue
            if isinstance(stats, dict):
                break
    if not isinstance(stats, dict):
        return None
    out = {k: int(stats[k]) for k in ("launches", "planned") if k in stats}
    try:
        disk = importlib.import_module("lazyarray.run.cache").STATS
        out["disk_hits"] = int(disk.get("disk_hits", 0))
    except (ImportError, AttributeError):
        pass
    return out


def counter_delta(before: dict[str, int] | None,
                  after: dict[str, int] | None) -> dict[str, int] | None:
    """*after* minus *before*, key by key."""
    if before is None or after is None:
        return None
    return {k: after[k] - before.get(k, 0) for k in after}
