"""Shared pytest configuration of the test-suite (kernelcore and lazyarray).

* ``KERNELCORE_CACHE_DIR`` is pointed at a throw-away directory for the whole
  session, so that running the tests never reads or writes the user's real
  on-disk kernel cache, while caching itself stays enabled and exercised.
* ``ctx`` / ``queue`` are session-wide OpenCL handles obtained through
  kernelcore's own device selection.
* ``rng`` is a seeded NumPy generator (fresh for every test, so tests do not
  depend on execution order); so is lazyarray's record of region offsets.
* ``run_benchmark_quick`` runs a script of ``benchmarks/`` with ``--quick``
  (the smoke tests that keep the benchmarks from rotting).
* Hypothesis profiles (below): tests set their example counts only.
* ``fresh_kernels`` / ``device_layouts`` / ``layout_kind``: an empty kernel
  table, and kernels laid out as for another kind of device.
* Tests marked ``slow`` are skipped unless ``--runslow`` is given or a ``-m``
  expression is used.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

# NOTE: kernelcore is deliberately *not* imported at module level: the cache
# directory environment variable must be in place before kernelcore is first
# imported (it may read the variable at import time).

_CACHE_DIR_ENV = "KERNELCORE_CACHE_DIR"
_session_cache_dir = None
_previous_cache_dir = None


# Hypothesis: "default" draws the same examples at every run (no example
# database, no deadline: kernels compile inside examples); "explore"
# (HYPOTHESIS_PROFILE=explore) draws new ones and keeps failing examples in
# .hypothesis/ for the next run. Tests set only their example counts.
settings.register_profile(
    "default", deadline=None, derandomize=True, database=None, print_blob=False,
    report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                           HealthCheck.data_too_large])
settings.register_profile("explore", parent=settings.get_profile("default"),
                          derandomize=False,
                          database=DirectoryBasedExampleDatabase(".hypothesis/examples"),
                          print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_addoption(parser):
    parser.addoption(
        "--runslow", action="store_true", default=False,
        help="also run tests marked 'slow'")


def pytest_configure(config):
    global _session_cache_dir, _previous_cache_dir

    config.addinivalue_line(
        "markers", "slow: long tests, excluded by default")

    # the suite checks kernels, so arrays compute on the device unless a run
    # asks for another tier (LAZYARRAY_TIER=host runs the semantics tests on
    # NumPy's host tier; tests of tiering choose theirs with la.tier)
    os.environ.setdefault("LAZYARRAY_TIER", "device")
    _previous_cache_dir = os.environ.get(_CACHE_DIR_ENV)
    _session_cache_dir = tempfile.mkdtemp(prefix="kernelcore-test-cache-")
    os.environ[_CACHE_DIR_ENV] = _session_cache_dir
    # write races are warnings (as in loopy); the suite treats them as errors
    config.addinivalue_line(
        "filterwarnings", "error::kernelcore.diagnostic.WriteRaceConditionWarning")


def pytest_unconfigure(config):
    global _session_cache_dir

    if _previous_cache_dir is None:
        os.environ.pop(_CACHE_DIR_ENV, None)
    else:
        os.environ[_CACHE_DIR_ENV] = _previous_cache_dir

    if _session_cache_dir is not None:
        shutil.rmtree(_session_cache_dir, ignore_errors=True)
        _session_cache_dir = None


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow") or config.getoption("-m"):
        return
    skip_slow = pytest.mark.skip(reason="slow test: use --runslow to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


@pytest.fixture(scope="session")
def kernelcore_cache_dir():
    """The throw-away on-disk cache directory used for this session."""
    return os.environ[_CACHE_DIR_ENV]


@pytest.fixture(scope="session")
def ctx():
    import kernelcore
    return kernelcore.default_context()


@pytest.fixture(scope="session")
def queue(ctx):
    import kernelcore
    q = kernelcore.default_queue()
    yield q
    q.finish()


@pytest.fixture
def fresh_kernels(monkeypatch):
    """``fresh_kernels()``: lazyarray's kernel table is empty from here on (new
    kernels are planned, lowered and built) until the test ends."""
    from lazyarray.run import steps

    def empty():
        monkeypatch.setattr(steps, "_KERNELS", {})
    return empty


@pytest.fixture
def device_layouts(monkeypatch, fresh_kernels):
    """``device_layouts(kind, units=4)``: from here on lazyarray lays kernels
    out as for a *kind* (``"cpu"`` or ``"gpu"``) device of *units* compute
    units, on the device at hand, from an empty kernel table."""
    from lazyarray import target

    def use(kind, units=4):
        monkeypatch.setattr(target, "device_profile", lambda device: (kind, units))
        fresh_kernels()
    return use


@pytest.fixture(params=["cpu", "gpu"])
def layout_kind(request, device_layouts):
    """``"cpu"`` or ``"gpu"``: the test runs with that kind of device's
    layouts (4 compute units) on the device at hand, from an empty kernel
    table."""
    device_layouts(request.param)
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(20240229)


@pytest.fixture(autouse=True)
def fresh_region_offsets(monkeypatch):
    """Each test starts with no region offsets seen (lazyarray turns offsets
    that keep changing into kernel arguments): kernel counts do not depend
    on the tests that ran before."""
    import lazyarray.ops.regions as regions
    monkeypatch.setattr(regions, "REGION_OFFSETS", regions.RegionOffsets())


@pytest.fixture
def run_benchmark_quick(tmp_path):
    """``run(script, timeout)``: ``benchmarks/<script>.py --quick`` with its JSON
    and Markdown written into *tmp_path*; checks that it succeeded and says it
    ran quick on a named device, and returns (JSON data, Markdown text, seconds)."""
    bench_dir = Path(__file__).resolve().parent.parent / "benchmarks"

    def run(script: str, timeout: float = 120):
        json_path, md_path = tmp_path / f"{script}.json", tmp_path / f"{script}.md"
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, str(bench_dir / f"{script}.py"), "--quick", "--json",
             str(json_path), "--markdown", str(md_path)],
            capture_output=True, text=True, timeout=timeout)
        elapsed = time.perf_counter() - t0
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        data = json.loads(json_path.read_text())
        assert data["quick"] is True
        assert data["environment"]["device"]["name"]
        return data, md_path.read_text(), elapsed
    return run
