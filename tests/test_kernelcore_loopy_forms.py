"""Issue 40: loopy's forms that its own test-suite uses, each checked against kernelcore
(and, where a kernel runs, against NumPy)."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import kernelcore as lp


@pytest.mark.parametrize("name", ["diagnostic", "kernel", "match", "options", "schedule",
                                  "statistics", "symbolic", "target", "transform",
                                  "translation_unit", "types", "version"])
def test_submodules_are_package_attributes(name):
    assert getattr(lp, name) is importlib.import_module(f"kernelcore.{name}")


def test_symbolic_names_through_attribute():
    class HasFloorDiv(lp.symbolic.CombineMapper):
        def combine(self, values):
            return any(values)

        def map_floor_div(self, expr):
            return True

        def map_variable(self, expr):
            return False

        def map_constant(self, expr):
            return False

    assert HasFloorDiv()(lp.symbolic.parse("a // 2 + b"))
    assert not HasFloorDiv()(lp.symbolic.parse("a / 2"))
    assert issubclass(lp.diagnostic.ReductionIsNotTriangularError, lp.LoopyError)


def test_loopy_suite_alias_maps_submodules(monkeypatch):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    try:
        import loopy_suite
    finally:
        sys.path.pop(0)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    loopy_suite.install_alias()
    try:
        assert importlib.import_module("loopy") is lp
        assert importlib.import_module("loopy.symbolic") is lp.symbolic
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("loopy.no_such_module")
    finally:
        for name in [n for n in sys.modules if n == "loopy" or n.startswith("loopy.")]:
            del sys.modules[name]


def test_c_kernel_runs_without_queue():
    knl = lp.make_kernel("{ [i]: 0<=i<n }", "out[i] = 2*a[i]",
                         [lp.GlobalArg("out", np.float32, shape=lp.auto),
                          lp.GlobalArg("a", np.float32, shape=lp.auto), "..."],
                         target=lp.ExecutableCTarget())
    a = np.arange(16, dtype=np.float32)
    _, (out,) = knl(a=a)
    assert np.array_equal(out, 2 * a)


def test_undeclared_domain_parameter_is_an_argument_to_fix():
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "a[i] = 3*i",
                         [lp.GlobalArg("a", shape=(10,), dtype=np.int32)])
    assert knl.default_entrypoint.arg_dict["n"].name == "n"
    _, (a,) = lp.fix_parameters(knl, n=10)(a=np.zeros(10, dtype=np.int32))
    assert np.array_equal(a, 3 * np.arange(10))
    with pytest.raises(lp.LoopyError, match="undeclared variable"):
        lp.make_kernel("{[i]: 0 <= i < 4}", "a[i] = b[i]",
                       [lp.GlobalArg("a", shape=(4,), dtype=np.int32)])
