"""Which modules' objects kernelcore's cache keys describe by name alone
(installed packages) and which by their code (the user's own)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from kernelcore.runtime import fingerprint


@pytest.fixture
def fresh_lookup():
    fingerprint._named_only.cache_clear()
    fingerprint._installed_folders.cache_clear()
    yield
    fingerprint._named_only.cache_clear()
    fingerprint._installed_folders.cache_clear()


def _package(folder: Path, name: str, installed: bool) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text("class Thing:\n    def f(self):\n        return 1\n")
    if installed:
        info = folder / f"{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (info / "top_level.txt").write_text(f"{name}\n")
        (info / "RECORD").write_text(f"{name}/__init__.py,,\n")


def test_a_package_installed_outside_site_packages_is_named_only(tmp_path, monkeypatch,
                                                                 fresh_lookup):
    """(``pip install --target DIR``: the GPU machine's packages; their classes
    were described by the code of every method, about a second per kernel)"""
    _package(tmp_path, "kc_installed_pkg", installed=True)
    _package(tmp_path, "kc_own_pkg", installed=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    installed = importlib.import_module("kc_installed_pkg")
    own = importlib.import_module("kc_own_pkg")
    try:
        assert fingerprint._named_only("kc_installed_pkg")
        assert not fingerprint._named_only("kc_own_pkg")
        assert fingerprint.describe(installed.Thing) == "kc_installed_pkg.Thing"
        # (the user's own class: by its methods' code, so an edit changes the key)
        assert fingerprint.describe(own.Thing).startswith("kc_own_pkg.Thing<")
    finally:
        sys.modules.pop("kc_installed_pkg", None)
        sys.modules.pop("kc_own_pkg", None)


def test_an_editable_install_is_described_by_its_code(fresh_lookup):
    """lazyarray, installed editable in the development environment, lies in
    the checkout, not in its distribution's folder."""
    import lazyarray.graph

    assert "site-packages" not in lazyarray.graph.__file__
    assert not fingerprint._named_only("lazyarray.graph")
