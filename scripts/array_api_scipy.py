"""Runs SciPy's own Array API tests (from the installed SciPy, under
``SCIPY_ARRAY_API=1``) once per namespace, lazyarray and array_api_strict,
and prints how many passed, failed, errored and were skipped for each.

SciPy's ``conftest.py`` knows a fixed list of backends for its ``xp``
fixture; this file, loaded as a pytest plugin, adds lazyarray to that list
(as a CPU backend, like array_api_strict) before pytest reads the conftest,
and keeps only the namespace being run (``LAZYARRAY_CLIENT_NAMESPACE``).
The namespace ``"lazyarray (device tier)"`` runs lazyarray with
``LAZYARRAY_TIER=device`` (every operation builds kernels).

Usage: python scripts/array_api_scipy.py [--namespaces lazyarray array_api_strict]
                                         [--tests scipy/cluster/tests/test_vq.py ...]
                                         [--record]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from array_api_clients import NAMESPACE_VARIABLE, outcomes

#: SciPy's test files run by default (relative to the installed package)
TESTS = ["scipy/_lib/tests/test_array_api.py::TestArrayAPI", "scipy/cluster/tests/test_vq.py",
         "scipy/special/tests/test_support_alternative_backends.py",
         "scipy/stats/tests/test_stats.py::TestDescribe",
         "scipy/stats/tests/test_stats.py::TestMoments",
         "scipy/stats/tests/test_stats.py::TestZmap",
         "scipy/stats/tests/test_stats.py::TestZscore",
         "scipy/signal/tests/test_signaltools.py::TestConvolve",
         "scipy/signal/tests/test_signaltools.py::TestFFTConvolve",
         "scipy/fft/tests/test_basic.py",
         *(f"scipy/ndimage/tests/test_filters.py::TestNdimageFilters::test_{name}"
           for name in ("correlate01", "correlate01_overlap", "prewitt01", "sobel01"))]


def pytest_configure(config) -> None:
    """(As a pytest plugin) lazyarray among SciPy's ``xp`` backends, and only
    the namespace named by the environment."""
    namespace = os.environ.get(NAMESPACE_VARIABLE)
    if namespace is None:
        return
    import pytest
    import scipy.conftest as conftest

    import lazyarray
    conftest.xp_known_backends.add("lazyarray")
    backends = [p for p in conftest.xp_available_backends if p.id == namespace]
    if namespace == "lazyarray":
        backends = [pytest.param(lazyarray, id="lazyarray",
                                 marks=pytest.mark.array_api_backends)]
    conftest.xp_available_backends[:] = backends
    original = conftest.xp._get_wrapped_function()
    conftest.xp = pytest.fixture(params=backends, name="xp")(original)


def _test_paths(relative: list[str]) -> list[str]:
    import scipy
    site = Path(scipy.__file__).parent.parent
    return [str(site / r) for r in relative]


def _summary(tests: list[str]) -> str:
    """*tests* in short: the test files, classes or tests by SciPy module."""
    modules: dict[str, list[str]] = {}
    for test in tests:
        module, _, rest = test.removeprefix("scipy/").partition("/tests/")
        name = rest.rpartition("::")[2].removesuffix(".py").removeprefix("test_")
        modules.setdefault(module.lstrip("_"), []).append(name)
    return "; ".join(f"`{m}` ({', '.join(names)})" for m, names in modules.items())


def run(namespace: str, tests: list[str]) -> dict[str, object]:
    """Counts of SciPy's *tests* with the ``xp`` fixture set to *namespace*,
    and the failed tests with their first error line."""
    import scipy
    package = Path(scipy.__file__).parent
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.xml"
        device_tier = namespace.endswith("(device tier)")
        env = dict(os.environ, SCIPY_ARRAY_API="1",
                   **{NAMESPACE_VARIABLE: namespace.partition(" ")[0]})
        if device_tier:
            env["LAZYARRAY_TIER"] = "device"
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).parent), str(Path(__file__).parents[1]),
             env.get("PYTHONPATH", "")])
        env.setdefault("LAZYARRAY_TIER", "auto")
        subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p",
                        "no:cacheprovider", "-p", Path(__file__).stem, "-q", "-o", "addopts=",
                        "-m", "array_api_backends", "--rootdir", str(package.parent),
                        "--confcutdir", str(package.parent), f"--junitxml={report}",
                        "-W", "ignore", *_test_paths(tests)],
                       env=env, cwd=scratch, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        if not report.exists():
            raise SystemExit(f"pytest wrote no report for {namespace}")
        return outcomes(report)


def main() -> None:
    """Run the namespaces' tests and print their counts (and write them as JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--namespaces", nargs="+", default=["lazyarray", "array_api_strict"])
    parser.add_argument("--tests", nargs="+", default=TESTS)
    parser.add_argument("--record", action="store_true",
                        help="keep the counts in docs/compatibility-clients.json")
    args = parser.parse_args()
    import scipy
    results = {name: run(name, args.tests) for name in args.namespaces}
    print(f"SciPy {scipy.__version__}")
    print(f"{'namespace':<20} {'passed':>7} {'failed':>7} {'errors':>7} {'skipped':>8}")
    for name, counts in results.items():
        print(f"{name:<20} {counts['passed']:>7} {counts['failed']:>7} {counts['errors']:>7} "
              f"{counts['skipped']:>8}")
    for name, counts in results.items():
        for line in counts["failures"]:                       # type: ignore[attr-defined]
            print(f"  {name}: {line}")
    if args.record:
        from array_api_report import record
        record("SciPy", {
            "version": scipy.__version__, "command": "python scripts/array_api_scipy.py",
            "date": time.strftime("%Y-%m-%d"), "results": results,
            "tests": "its Array API tests (`-m array_api_backends`) of " + _summary(args.tests),
            "notes": ["SciPy's `conftest.py` accepts a fixed list of backends; the script "
                      "adds lazyarray to it as a pytest plugin (no SciPy file is changed). "
                      "Tests run with `SCIPY_ARRAY_API=1`."]})

if __name__ == "__main__":
    main()
