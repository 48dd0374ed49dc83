"""Runs scikit-learn's own Array API tests (``sklearn/utils/tests/test_array_api.py``
of the installed scikit-learn) once per namespace, lazyarray and a reference
(array_api_strict by default), and prints how many tests passed, failed,
errored and were skipped for each.

Usage: python scripts/array_api_clients.py [--namespaces lazyarray array_api_strict]
                                           [--tests sklearn/utils/tests/test_array_api.py]
                                           [--failures N] [--record]

Each namespace runs in its own pytest process with ``SCIPY_ARRAY_API=1``;
this file is also the pytest plugin that restricts scikit-learn's test
parametrization to that one namespace (``LAZYARRAY_CLIENT_NAMESPACE``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

NAMESPACE_VARIABLE = "LAZYARRAY_CLIENT_NAMESPACE"


def pytest_configure(config) -> None:
    """(As a pytest plugin) scikit-learn's tests parametrized over the one
    namespace named by the environment."""
    namespace = os.environ.get(NAMESPACE_VARIABLE)
    if namespace is None:
        return
    import sklearn.utils._array_api as array_api

    def only(include_numpy_namespaces: bool = True):
        yield namespace

    array_api.yield_namespaces = only


def _installed_test_file(relative: str) -> Path:
    """The installed scikit-learn's test file *relative* to its package."""
    import sklearn
    path = Path(sklearn.__file__).parent / Path(relative).relative_to("sklearn")
    if not path.exists():
        raise SystemExit(f"{path} is not installed (scikit-learn ships its tests in its wheel)")
    return path


def run(namespace: str, tests: Path) -> dict[str, object]:
    """Counts of scikit-learn's *tests* parametrized with *namespace*, and
    the names of the failed ones."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.xml"
        env = dict(os.environ, SCIPY_ARRAY_API="1", **{NAMESPACE_VARIABLE: namespace})
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).parent), str(Path(__file__).parents[1]),
             env.get("PYTHONPATH", "")])
        subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p",
                        "no:cacheprovider", "-p", Path(__file__).stem, "-q", "-o", "addopts=",
                        "-k", namespace, f"--junitxml={report}", "--rootdir", scratch,
                        str(tests)], env=env, cwd=scratch, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        if not report.exists():
            raise SystemExit(f"pytest wrote no report for {namespace}")
        return outcomes(report)


def outcomes(report: Path) -> dict[str, object]:
    """Counts of passed, failed, errored and skipped tests of a JUnit
    *report*, and each failed test's name with the first line of its error."""
    counts: dict[str, object] = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    failed = []
    for case in ElementTree.parse(report).iter("testcase"):
        outcome = next((child.tag for child in case
                        if child.tag in ("failure", "error", "skipped")), "passed")
        key = {"failure": "failed", "error": "errors"}.get(outcome, outcome)
        counts[key] = int(counts[key]) + 1        # type: ignore[call-overload]
        if key in ("failed", "errors"):
            lines = [line.strip() for line in next(iter(case)).get("message", "").splitlines()
                     if line.strip()]
            name = f"{case.get('classname', '').rpartition('.')[2]}.{case.get('name')}"
            failed.append(f"{name}: {' '.join(lines[:3])[:200]}")
    counts["failures"] = sorted(failed)
    return counts


def main() -> None:
    """Run the namespaces' tests and print their counts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--namespaces", nargs="+", default=["lazyarray", "array_api_strict"])
    parser.add_argument("--tests", default="sklearn/utils/tests/test_array_api.py")
    parser.add_argument("--failures", type=int, default=20,
                        help="how many failed tests to list per namespace")
    parser.add_argument("--record", action="store_true",
                        help="keep the counts in docs/compatibility-clients.json")
    args = parser.parse_args()
    tests = _installed_test_file(args.tests)
    print(f"{tests}")
    print(f"{'namespace':<20} {'passed':>7} {'failed':>7} {'errors':>7} {'skipped':>8}")
    results = {name: run(name, tests) for name in args.namespaces}
    for name, counts in results.items():
        print(f"{name:<20} {counts['passed']:>7} {counts['failed']:>7} {counts['errors']:>7} "
              f"{counts['skipped']:>8}")
    for name, counts in results.items():
        failures = counts["failures"]
        assert isinstance(failures, list)
        if failures:
            print(f"\n{name}: {len(failures)} failed or errored")
            for line in failures[:args.failures]:
                print(f"  {line}")

    if args.record:
        import sklearn
        from array_api_report import record
        default = parser.get_default("tests")
        record("scikit-learn" if args.tests == default else f"scikit-learn, {args.tests}", {
            "version": sklearn.__version__, "results": results,
            "command": "python scripts/array_api_clients.py",
            "date": time.strftime("%Y-%m-%d"), "tests": f"`{args.tests}`",
            "notes": ["scikit-learn's tests are parametrized over the namespaces it "
                      "knows; the script, as a pytest plugin, makes that list the one "
                      "namespace run (array_api_strict's count includes its two devices "
                      "and tests of its own)."]})

if __name__ == "__main__":
    main()
