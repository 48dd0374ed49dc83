"""Run loopy's own test files against kernelcore, with ``loopy`` aliased to ``kernelcore``.

Usage::

    git --git-dir=/work/.mirror/inducer+loopy/repo archive v2025.2 test | tar -x -C /tmp/loopy
    python scripts/loopy_suite.py /tmp/loopy [test_transform.py ...] [-k EXPR] [--timeout S]

Each file runs in its own Python process (a crash or hang in one file leaves the others
counted; after a crash, the test that crashed counts as an error and a new process
runs the rest of the file); the script prints passed/failed/error/skipped counts per
file and in total.
With no file names, every ``test_*.py`` under ``<checkout>/test`` runs. ``--list-failures``
also prints the id and the error message of each test that did not pass; ``--min-passed N``
makes the exit status 1 when fewer than N tests pass
(``tests/kernelcore/loopy/test_loopy_suite.py`` runs it so, as a slow test, when
``LOOPY_CHECKOUT`` names a checkout).

``--reference FILE`` names a list of test ids (one a line, as
``test_file.py::test_name[params]`` with a pyopencl context parameter written ``ctx``)
that pass on real loopy: the script then also prints how many of those pass on kernelcore,
per file and in total, and ``--list-failures`` lists only failures among them.
``--make-reference XML_DIR OUT`` writes such a list from the JUnit XML files
(``pytest --junitxml``) of a run of loopy's tests with loopy itself.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.abc
import importlib.machinery
import json
import os
import re
import subprocess
import sys
import tempfile
import types
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
#: child processes started for one file at most (each crash starts another)
MAX_CRASHES = 20


class _AliasLoader(importlib.abc.Loader):
    """Hands back an already-imported kernelcore module under a loopy name."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class LoopyAlias(importlib.abc.MetaPathFinder):
    """Import ``loopy`` and ``loopy.<x>`` as ``kernelcore`` and ``kernelcore.<x>``."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "loopy" and not fullname.startswith("loopy."):
            return None
        try:
            module = importlib.import_module("kernelcore" + fullname[len("loopy"):])
        except ModuleNotFoundError:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module))


def install_alias() -> None:
    """Make ``import loopy`` (and its submodules) give kernelcore's modules."""
    if not any(isinstance(f, LoopyAlias) for f in sys.meta_path):
        sys.meta_path.insert(0, LoopyAlias())


class _Recorder:
    """pytest plugin: one outcome per test id, with the last line of its error."""

    def __init__(self, journal: Path | None = None) -> None:
        self.results: dict[str, tuple[str, str]] = {}
        #: where each test's start and outcome are appended as they happen (what
        #: was recorded survives a crash of the process)
        self.journal = journal

    def _log(self, entry: list) -> None:
        if self.journal is not None:
            with open(self.journal, "a") as f:
                f.write(json.dumps(entry) + "\n")

    def pytest_runtest_logstart(self, nodeid, location) -> None:
        self._log(["start", nodeid])

    def pytest_runtest_logreport(self, report) -> None:
        if report.when == "call" or report.outcome != "passed":
            if report.when != "call" and report.outcome == "failed":
                outcome = "error"
            elif hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "xpassed"
            else:
                outcome = report.outcome
            if self.results.get(report.nodeid, ("passed",))[0] in ("passed", "skipped"):
                self.results[report.nodeid] = (outcome, _last_line(report))
                self._log(["result", report.nodeid, outcome, _last_line(report)])

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.results[report.nodeid or "<collection>"] = ("error", _last_line(report))


def _last_line(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message.strip().splitlines()[0][:300] if crash.message.strip() else ""
    text = str(report.longrepr or "").strip().splitlines()
    return text[-1][:300] if text else ""


def run_one_file(test_file: Path, keyword: str | None, timeout: int,
                 journal: Path | None = None, skip: Path | None = None
                 ) -> dict[str, tuple[str, str]]:
    """Run one loopy test file in this process; return outcome and message per test
    id (also appended to *journal* as they come); the ids listed in *skip* (a
    file, one a line) are deselected."""
    import pytest

    install_alias()
    sys.path.insert(0, str(test_file.parent))
    recorder = _Recorder(journal)
    args = [str(test_file), "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
            "--timeout", str(timeout), "-o", "addopts=", "--rootdir", str(test_file.parent)]
    if keyword:
        args += ["-k", keyword]
    if skip is not None:
        args += [f"--deselect={i}" for i in skip.read_text().splitlines() if i]
    pytest.main(args, plugins=[recorder])
    return recorder.results


def _run_in_subprocess(test_file: Path, keyword: str | None, timeout: int,
                       file_timeout: int) -> dict[str, tuple[str, str]]:
    """Run *test_file* in child processes: after a child crashes (a fault in a
    device compiler ends the process), the test it was running counts as an
    error and a new child runs the tests not yet run."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    results: dict[str, tuple[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        journal, skip = Path(tmp, "journal"), Path(tmp, "skip")
        for _ in range(MAX_CRASHES):
            journal.write_text("")
            skip.write_text("".join(i + "\n" for i in results))
            cmd = [sys.executable, __file__, "--child", str(test_file), "--timeout",
                   str(timeout), "--journal", str(journal), "--skip", str(skip)]
            if keyword:
                cmd += ["-k", keyword]
            try:
                proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                                      timeout=file_timeout, cwd=test_file.parent)
            except subprocess.TimeoutExpired:
                results[f"{test_file.name}::<file>"] = ("error",
                                                       f"file ran past {file_timeout} s")
                return results
            for line in reversed(proc.stdout.splitlines()):
                if line.startswith("LOOPY_SUITE_RESULTS "):
                    done = json.loads(line.split(" ", 1)[1])
                    results.update((k, tuple(v)) for k, v in done.items())
                    return results
            tail = (proc.stderr or proc.stdout).strip().splitlines()
            why = tail[-1] if tail else f"rc {proc.returncode}"
            started = None
            for entry in map(json.loads, journal.read_text().splitlines()):
                if entry[0] == "start":
                    started = entry[1]
                else:
                    results[entry[1]] = (entry[2], entry[3])
                    started = None
            if started is None:
                results[f"{test_file.name}::<file>"] = ("error", why)
                return results
            results[started] = ("error", f"crashed the test process: {why}")
    return results


def normalize_id(nodeid: str) -> str:
    """*nodeid* with a pyopencl context parameter written ``ctx`` (the device name
    differs between installations)."""
    return re.sub(r"<context factory for [^>]*>>", "ctx", nodeid)


def passed_ids_from_junit(xml_dir: Path) -> list[str]:
    """Normalized ids of the tests that passed in the JUnit XML files under *xml_dir*."""
    ids = []
    for xml_file in sorted(xml_dir.glob("*.xml")):
        for case in ET.parse(xml_file).getroot().iter("testcase"):
            if any(child.tag in ("failure", "error", "skipped") for child in case):
                continue
            module = case.get("classname", "").split(".")
            nodeid = f"{module[0]}.py::" + "::".join(module[1:] + [case.get("name", "")])
            ids.append(normalize_id(nodeid))
    return ids


def count(results: dict[str, tuple[str, str]]) -> dict[str, int]:
    """Number of tests per outcome."""
    counts = dict.fromkeys(OUTCOMES, 0)
    for outcome, _ in results.values():
        counts[outcome] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkout", nargs="?",
                        help="loopy checkout (or the folder holding its test/)")
    parser.add_argument("files", nargs="*", help="test file names (default: every test_*.py)")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per test")
    parser.add_argument("--file-timeout", type=int, default=3600, help="seconds per file")
    parser.add_argument("--list-failures", action="store_true")
    parser.add_argument("--min-passed", type=int, default=0,
                        help="exit with status 1 if fewer tests pass in total")
    parser.add_argument("--reference", type=Path,
                        help="file of the test ids that pass on loopy")
    parser.add_argument("--make-reference", nargs=2, metavar=("XML_DIR", "OUT"),
                        help="write the ids of the passed tests of JUnit XML files")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--journal", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--skip", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.make_reference:
        ids = passed_ids_from_junit(Path(args.make_reference[0]))
        Path(args.make_reference[1]).write_text("".join(i + "\n" for i in ids))
        print(f"{len(ids)} passed test ids written to {args.make_reference[1]}")
        return 0

    if args.child:
        results = run_one_file(Path(args.checkout), args.keyword, args.timeout,
                               args.journal, args.skip)
        print("LOOPY_SUITE_RESULTS " + json.dumps(results))
        return 0

    if args.checkout is None:
        parser.error("the loopy checkout is needed to run its tests")
    test_dir = Path(args.checkout)
    if (test_dir / "test").is_dir():
        test_dir = test_dir / "test"
    files = ([test_dir / f for f in args.files] if args.files
             else sorted(test_dir.glob("test_*.py")))
    reference = None
    if args.reference is not None:      # (ids may hold spaces: one a line)
        reference = {ln.strip() for ln in args.reference.read_text().splitlines()
                     if ln.strip()}
    total = dict.fromkeys(OUTCOMES, 0)
    ref_passed = ref_total = 0
    print(f"{'file':32s} " + " ".join(f"{o:>7s}" for o in OUTCOMES)
          + ("  of loopy's" if reference is not None else ""))
    for test_file in files:
        results = {normalize_id(k): v for k, v in _run_in_subprocess(
            test_file, args.keyword, args.timeout, args.file_timeout).items()}
        counts = count(results)
        total = {o: total[o] + counts[o] for o in OUTCOMES}
        line = f"{test_file.name:32s} " + " ".join(f"{counts[o]:7d}" for o in OUTCOMES)
        expected: set[str] = set()
        if reference is not None:
            prefix = test_file.name + "::"
            expected = {i for i in reference if i.startswith(prefix)}
            if args.keyword:
                expected &= set(results)
            passed = sum(results.get(i, ("missing",))[0] == "passed" for i in expected)
            ref_passed, ref_total = ref_passed + passed, ref_total + len(expected)
            line += f"  {passed:4d}/{len(expected)}"
        print(line, flush=True)
        if args.list_failures:
            for nodeid in sorted(set(results) | expected):
                outcome, message = results.get(nodeid, ("missing", "not run"))
                if outcome in ("failed", "error", "missing") and (
                        reference is None or nodeid in reference):
                    print(f"    {outcome:6s} {nodeid.split('::', 1)[-1]}: {message}")
    print(f"{'total':32s} " + " ".join(f"{total[o]:7d}" for o in OUTCOMES))
    if reference is not None:
        print(f"kernelcore passes {ref_passed} of the {ref_total} tests that pass on loopy")
    return 0 if total["passed"] >= args.min_passed else 1


if __name__ == "__main__":
    sys.exit(main())
