"""Everyday NumPy (``tests/everyday.py``) on lazy arrays: every call runs and
agrees with NumPy on the tier in force, and ``docs/where-it-runs.md`` says
truly where each one runs on the device tier (on the device, or on the host
with a LazyArrayHostFallbackWarning)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazyarray as la
from lazyarray import fallback
from tests.everyday import CALLS, IDX, A, B, M
from tests.helpers import ROOT

DOC = ROOT / "docs" / "where-it-runs.md"


def _host(value):
    if isinstance(value, la.LazyArray):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        return [_host(v) for v in value]
    return value


def _same(got, expected, dtypes: bool = False) -> None:
    """Equal shapes and values (and with *dtypes*, equal dtypes)."""
    if isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _same(g, e, dtypes)
        return
    expected = np.asarray(expected)
    got = np.asarray(got)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert not dtypes or got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)
    else:
        np.testing.assert_array_equal(got, expected)


def run_lazily(name: str, tier: str = "device"):
    """The call's result on lazy arrays under the tier *tier* and where it
    ran: "host" where lazyarray warned of a host fallback, else "device"."""
    with la.tier(tier), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", la.LazyArrayHostFallbackWarning)
        fallback._warned.clear()
        result = _host(CALLS[name](la, A, B, IDX, M))
    host = any(issubclass(w.category, la.LazyArrayHostFallbackWarning) for w in caught)
    return result, "host" if host else "device"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_everyday_numpy_runs_lazily_and_agrees(name):
    expected = CALLS[name](np, A, B, IDX, M)
    got, where = run_lazily(name)       # (the page is about the device tier)
    _same(got, expected)
    documented = _documented().get(name)
    if name in ("fft.fft", "fft.rfft", "fft.ifft") and not _HAVE_PYVKFFT:
        documented = "host"             # (FFTs run on the device through pyvkfft)
    assert documented == where, f"docs/where-it-runs.md says {documented} for {name}"
    if la.get_tier() != "device":
        # NumPy on the host tier: its own answer, and no fallback to warn of
        got, where = run_lazily(name, la.get_tier())
        _same(got, expected, dtypes=True)
        assert where == "device", f"{name} warned of a host fallback on the host tier"


try:
    import pyvkfft.opencl  # noqa: F401
    _HAVE_PYVKFFT = True
except ImportError:
    _HAVE_PYVKFFT = False


def _documented() -> dict[str, str]:
    rows = {}
    for line in DOC.read_text().splitlines():
        cells = [c.strip(" `") for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[1] in ("device", "host"):
            rows[cells[0]] = cells[1]
    return rows
