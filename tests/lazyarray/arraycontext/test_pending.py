"""Freezes put off while ``actx.compile`` traces (lazyarray.arraycontext.pending):
a discretization's geometry frozen on first use inside a compiled operator
runs no kernel while tracing, is computed with the program, and holds the
values that freezing at once gives (skipped where arraycontext is not
installed, see docs/pde-backend.md)."""

import numpy as np
import pytest

arraycontext = pytest.importorskip(
    "arraycontext", reason="arraycontext is not installed (the 'pde' extra plus "
    "arraycontext from its repository, docs/pde-backend.md): the context's tests did not run")

import pyopencl as cl  # noqa: E402

from lazyarray.arraycontext import LazyarrayArrayContext, pending  # noqa: E402
from lazyarray.run import STATS, default_queue  # noqa: E402


@pytest.fixture
def actx():
    return LazyarrayArrayContext(cl.CommandQueue(cl.Context([default_queue().device])))


def _geometry(actx, x, memo):
    """Frozen on first use, as grudge keeps a discretization's geometry."""
    if "g" not in memo:
        memo["g"] = actx.freeze(actx.np.sqrt(x * x + 1.0) * 0.5)
        memo["h"] = actx.freeze({"a": actx.np.sin(x) + x, "b": actx.np.cos(x) * x + 2.0})
    return actx.thaw(memo["g"]), actx.thaw(memo["h"])


def _expected(x0, u):
    g = np.sqrt(x0 * x0 + 1.0) * 0.5
    return u * g + (np.sin(x0) + x0) - (np.cos(x0) * x0 + 2.0), g


def test_freezes_while_tracing_run_with_the_program(actx):
    """The geometry's two freezes launch nothing while the operator is
    traced; the first call computes them with the program, and the frozen
    arrays kept hold their values."""
    x0 = np.linspace(-1.0, 2.0, 37)
    x = actx.from_numpy(x0)
    memo: dict = {}
    during = []

    def operator(u):
        g, h = _geometry(actx, x, memo)
        during.append(STATS["launches"])
        return u * g + h["a"] - h["b"]

    rhs = actx.compile(operator)
    before = STATS["launches"]
    u0 = np.cos(3 * x0)
    got = actx.to_numpy(rhs(actx.from_numpy(u0)))
    assert during == [before]
    expected, g = _expected(x0, u0)
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(memo["g"].get(), g, rtol=1e-15)
    np.testing.assert_allclose(memo["h"]["b"].get(), np.cos(x0) * x0 + 2.0, rtol=1e-15)
    assert not pending.plan_pending()
    # a later call replays the program, reading the frozen values
    again = actx.to_numpy(rhs(actx.from_numpy(2 * u0)))
    np.testing.assert_allclose(again, _expected(x0, 2 * u0)[0], rtol=1e-14, atol=1e-14)


def test_values_read_while_tracing_are_computed_first(actx):
    """Reading a put-off value on the host while tracing (through the
    context, thawed and computed on, or frozen as it is) gives its value."""
    x0 = np.linspace(0.0, 1.0, 11)
    x = actx.from_numpy(x0)
    memo: dict = {}
    seen = {}

    def operator(u):
        g, h = _geometry(actx, x, memo)
        seen["frozen"] = actx.to_numpy(memo["g"])
        seen["thawed"] = actx.to_numpy(g * 3.0)
        return u * g + h["a"] - h["b"]

    out = actx.to_numpy(actx.compile(operator)(actx.from_numpy(x0)))
    expected, g = _expected(x0, x0)
    np.testing.assert_allclose(seen["frozen"], g, rtol=1e-15)
    np.testing.assert_allclose(seen["thawed"], 3 * g, rtol=1e-15)
    np.testing.assert_allclose(out, expected, rtol=1e-14, atol=1e-14)


def test_a_failing_trace_still_computes_its_freezes(actx):
    x0 = np.linspace(0.0, 1.0, 9)
    x = actx.from_numpy(x0)
    memo: dict = {}

    def operator(u):
        _geometry(actx, x, memo)
        raise RuntimeError("the operator failed")

    with pytest.raises(RuntimeError, match="the operator failed"):
        actx.compile(operator)(actx.from_numpy(x0))
    np.testing.assert_allclose(memo["g"].get(), np.sqrt(x0 * x0 + 1.0) * 0.5, rtol=1e-15)
    assert not pending.plan_pending()


def test_freezes_of_the_call_are_computed_while_tracing(actx):
    """A freeze reading the call's arguments is not put off (its value is
    the traced call's, computed at once, as before)."""
    x0 = np.linspace(0.0, 1.0, 5)
    kept = {}

    def operator(u):
        kept["u"] = actx.freeze(u * 2.0)
        return u + 1.0

    out = actx.to_numpy(actx.compile(operator)(actx.from_numpy(x0)))
    np.testing.assert_allclose(out, x0 + 1.0)
    np.testing.assert_allclose(kept["u"].get(), 2 * x0)


def test_evaluations_sharing_nothing_leave_the_freezes_put_off(actx):
    """Work computed while tracing that neither reads a put-off value nor
    shares uncomputed work with one (a connection's index arrays) leaves
    the freezes put off; work sharing theirs computes them first."""
    x0 = np.linspace(0.0, 1.0, 13)
    x = actx.from_numpy(x0)
    other = actx.from_numpy(np.arange(13.0))
    memo: dict = {}
    seen = {}

    def operator(u):
        g, h = _geometry(actx, x, memo)
        seen["other"] = actx.to_numpy(other * 2.0 + 1.0)
        seen["put off"] = pending.is_pending(memo["g"])
        seen["shared"] = actx.to_numpy(actx.np.sin(x) + x)    # (the freeze's own work)
        seen["after"] = pending.is_pending(memo["g"])
        return u * g + h["a"] - h["b"]

    out = actx.to_numpy(actx.compile(operator)(actx.from_numpy(x0)))
    assert seen["put off"] and not seen["after"]
    np.testing.assert_array_equal(seen["other"], np.arange(13.0) * 2 + 1)
    np.testing.assert_allclose(seen["shared"], np.sin(x0) + x0, rtol=1e-15)
    np.testing.assert_allclose(out, _expected(x0, x0)[0], rtol=1e-14, atol=1e-14)
