"""array-api-extra's functions on lazy arrays agree with NumPy
(``scripts/array_api_extra_cases.py``), and the client runs' records render
on the compatibility page."""

from __future__ import annotations

import importlib
import sys

import pytest

import lazyarray as la
from tests.helpers import ROOT

sys.path.insert(0, str(ROOT / "scripts"))


@pytest.mark.parametrize("tier", ["auto", pytest.param("device", marks=pytest.mark.slow)])
def test_every_array_api_extra_case_agrees_with_numpy(tier):
    cases = importlib.import_module("array_api_extra_cases")
    with la.tier(tier):
        counts = cases.run(la)
    assert counts["failures"] == [] and counts["passed"] == len(cases.CASES)


def test_client_records_render():
    report = importlib.import_module("array_api_report")
    counts = {"passed": 3, "failed": 1, "errors": 0, "skipped": 2,
              "failures": ["TestX.test_correlate01_overlap[lazyarray]: AssertionError: differs"]}
    lines = report.render({"Client": {"version": "1.0", "tests": "some", "command": "run it",
                                      "date": "2026-12-02", "results": {"lazyarray": counts}}})
    text = "\n".join(lines)
    assert "| Client | 1.0 | some | 3 passed, 1 failed, 2 skipped | not run | not run |" in text
    assert "`TestX.test_correlate01_overlap[lazyarray]`: AssertionError: differs" in text
    assert "writing through" in text                 # (the explanation of that case)
    scipy_runner = importlib.import_module("array_api_scipy")
    assert scipy_runner._summary(["scipy/cluster/tests/test_vq.py",
                                  "scipy/stats/tests/test_stats.py::TestMoments"]) == \
        "`cluster` (vq); `stats` (TestMoments)"
