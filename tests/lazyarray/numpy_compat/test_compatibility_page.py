"""docs/compatibility.md is current (``scripts/compatibility.py`` writes it
from lazyarray's code), its classifications hold for known functions and
agree with what running them does, and NumPy functions lazyarray has no
version of run NumPy on host arrays quietly."""

from __future__ import annotations

import importlib
import sys
import warnings

import numpy as np
import pytest

import lazyarray as la
from tests.helpers import ROOT

sys.path.insert(0, str(ROOT / "scripts"))


@pytest.fixture(scope="module")
def compatibility():
    return importlib.import_module("compatibility")


@pytest.fixture(scope="module")
def sections(compatibility):
    return {title: {e.name: e for e in rows} for title, rows in compatibility.entries().items()}


def test_the_committed_page_is_current(compatibility):
    assert compatibility.PAGE.read_text() == compatibility.page(), \
        "docs/compatibility.md is out of date: run python scripts/compatibility.py"


@pytest.mark.parametrize("section,name,where", [
    ("numpy", "sin", "device"), ("numpy", "sum", "device"), ("numpy", "matmul", "device"),
    ("numpy", "pad", "device"), ("numpy", "unique", "host by design"),
    ("numpy", "unique_values", "host by design"), ("numpy", "searchsorted", "host by design"),
    ("numpy", "sinc", "host fallback"), ("numpy", "gcd", "host fallback"),
    ("numpy", "polyfit", "host fallback"), ("numpy", "vectorize", "host by design"),
    ("numpy.linalg", "solve", "host by design"), ("numpy.linalg", "norm", "device"),
    ("numpy.fft", "fft", "device"), ("numpy.random", "normal", "host by design"),
    ("numpy.ndarray", "sum", "device"), ("numpy.ndarray", "tofile", "not at all")])
def test_known_entries(sections, section, name, where):
    assert sections[section][name].where == where, sections[section][name]


def test_every_function_is_listed(sections):
    public = [n for n in dir(np) if not n.startswith("_") and callable(getattr(np, n))
              and not isinstance(getattr(np, n), type) and n != "test"]
    assert set(public) <= set(sections["numpy"])
    assert "some arguments on the host" in sections["numpy"]["pad"].detail
    assert "some arguments" not in sections["numpy"]["sin"].detail


def test_classifications_agree_with_running_them(sections):
    with la.tier("device"):
        y = la.asarray(np.linspace(0.5, 3.0, 6)) + 0
        for name, args, warns in [("sin", (), False), ("cumsum", (), False),
                                  ("sinc", (), True), ("unique", (), True)]:
            la.fallback._warned.clear()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                getattr(la, name)(y, *args).get()
            warned = any(issubclass(w.category, la.LazyArrayHostFallbackWarning)
                         for w in caught)
            assert warned == warns, name
            assert (sections["numpy"][name].where != "device") == warns


def test_fallback_on_host_arrays_is_numpys(compatibility, sections):
    a = np.linspace(-2.0, 2.0, 9)
    with la.tier("host"), warnings.catch_warnings():
        x = la.asarray(a)
        assert isinstance(x, la.HostArray)
        warnings.simplefilter("error", la.LazyArrayHostFallbackWarning)
        for name in ("sinc", "i0", "fix", "trim_zeros"):
            got = getattr(la, name)(x)
            assert isinstance(got, la.HostArray), name
            np.testing.assert_array_equal(got.get(), getattr(np, name)(a))
        assert isinstance(la.hanning(5), la.HostArray)
    assert sections["numpy"]["sinc"].host_tier == "NumPy"
