"""Freezes put off while ``actx.compile`` traces (lazyarray.arraycontext.pending):
a discretization's geometry frozen on first use inside a compiled operator
runs no kernel while tracing, is computed with the program, and holds the
values that freezing at once gives; small work met for the first times is
computed by NumPy at once instead (skipped where arraycontext is not
installed, see docs/pde-backend.md)."""

import numpy as np
import pytest

arraycontext = pytest.importorskip(
    "arraycontext", reason="arraycontext is not installed (the 'pde' extra plus "
    "arraycontext from its repository, docs/pde-backend.md): the context's tests did not run")

import pyopencl as cl  # noqa: E402

import lazyarray as la  # noqa: E402
from lazyarray.arraycontext import LazyarrayArrayContext, freeze, pending  # noqa: E402
from lazyarray.run import STATS, default_queue  # noqa: E402
from tests.helpers import counting  # noqa: E402


@pytest.fixture
def actx():
    return LazyarrayArrayContext(cl.CommandQueue(cl.Context([default_queue().device])))


@pytest.fixture
def auto_actx():
    """A context with the tier chosen automatically, as users run (the
    tests' default is ``"device"``)."""
    with la.tier("auto"):
        yield LazyarrayArrayContext(cl.CommandQueue(cl.Context([default_queue().device])))


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


# {{{ small work met for the first times, on the host

def _first_geometry(actx, x, y, scale):
    """Work as a discretization's first freezes do it (a new structure per
    *scale*: its constant is written into the code)."""
    r = actx.np.sqrt(x * x + y * y) + scale
    return {"n": x / r, "area": actx.np.sum(r[:, 1:] - r[:, :-1], axis=1),
            "index": actx.np.where(x > 0, 1, -1) * 3}


def _first_expected(x, y, scale):
    r = np.sqrt(x * x + y * y) + scale
    return {"n": x / r, "area": np.sum(r[:, 1:] - r[:, :-1], axis=1),
            "index": np.where(x > 0, 1, -1) * 3}


def _geometry_operator(actx, x, y, memo, during):
    """A compiled operator reading geometry frozen on first use (as grudge
    keeps a discretization's), with what each freeze of it planned."""
    def operator(u):
        if "g" not in memo:
            with counting() as froze:
                memo["g"] = {key: actx.freeze(value)
                             for key, value in _first_geometry(actx, x, y, 0.25).items()}
            during.append((froze.planned, froze.launches,
                           all(pending.is_pending(a) for a in memo["g"].values())))
        g = {key: actx.thaw(value) for key, value in memo["g"].items()}
        return u * g["n"] + g["area"][:, None] + g["index"]
    return actx.compile(operator)


def test_geometry_frozen_first_is_computed_on_the_host(auto_actx, rng):
    """Frozen while a compiled operator is traced: the first times its work
    is met it is computed at once, by NumPy (nothing planned, launched or
    put off); the same work met again and again (another discretization) is
    put off and compiled with the program. Both give NumPy's values."""
    actx = auto_actx
    for k in range(freeze.HOST_REPEATS + 1):
        x0, y0, u0 = rng.standard_normal((3, 40, 6))
        memo: dict = {}
        during: list = []
        rhs = _geometry_operator(actx, actx.from_numpy(x0), actx.from_numpy(y0), memo, during)
        got = actx.to_numpy(rhs(actx.from_numpy(u0)))
        want = _first_expected(x0, y0, 0.25)
        if k < freeze.HOST_REPEATS:
            assert during == [(0, 0, False)]
            for key in want:
                np.testing.assert_array_equal(memo["g"][key].get(), want[key])
                assert memo["g"][key].dtype == want[key].dtype
        else:
            assert during[0][2]             # (put off)
            for key in want:
                np.testing.assert_allclose(memo["g"][key].get(), want[key], rtol=1e-14,
                                           atol=1e-14)
        np.testing.assert_allclose(
            got, u0 * want["n"] + want["area"][:, None] + want["index"], rtol=1e-14,
            atol=1e-14)


def test_to_numpy_while_tracing_is_numpys_own_array(auto_actx, rng):
    actx = auto_actx
    x0 = rng.standard_normal((5, 7))
    x = actx.from_numpy(x0)
    seen = []

    def operator(u):
        with counting() as ran:
            seen.append(actx.to_numpy(actx.np.cos(actx.thaw(actx.freeze(x))[::2, 1:]) ** 2
                                      - 0.5))
        seen.append(ran.launches)
        return u * 2

    actx.to_numpy(actx.compile(operator)(actx.from_numpy(x0)))
    got, launches = seen
    assert launches == 0
    np.testing.assert_array_equal(got, np.cos(x0[::2, 1:]) ** 2 - 0.5)
    got[0, 0] = 7.0                         # (an array of its own, writable)
    assert got.flags.writeable and got.flags.c_contiguous


def test_large_work_and_the_device_tier_compile(auto_actx, rng):
    actx = auto_actx
    big = rng.standard_normal(70_000)
    with counting() as ran:
        got = actx.to_numpy(actx.np.sin(actx.from_numpy(big)) * 1.5)
    assert ran.launches > 0
    np.testing.assert_allclose(got, np.sin(big) * 1.5, rtol=1e-14)
    small = rng.standard_normal(30)
    with la.tier("device"), counting() as forced:
        got = actx.to_numpy(actx.np.cos(actx.from_numpy(small)) * 1.75)
    assert forced.launches > 0
    np.testing.assert_allclose(got, np.cos(small) * 1.75, rtol=1e-14)


def test_hoisted_work_is_computed_on_the_host(rng):
    """Work a compiled operator hoists out of its calls (reading no
    argument) is computed by NumPy where it is small and new: its first call
    launches the program alone (the device tier also launches the hoisted
    work's kernels), the same values."""
    x0, u0 = rng.standard_normal((2, 30, 4))
    launches, results = {}, {}
    for tier in ("device", "auto"):
        with la.tier(tier):
            actx = LazyarrayArrayContext(cl.CommandQueue(cl.Context([default_queue().device])))
            x = actx.thaw(actx.freeze(actx.from_numpy(x0)))
            scale = {"device": 1.25, "auto": 1.5}[tier]

            def operator(u, x=x, scale=scale, actx=actx):
                return u * (actx.np.sqrt(x * x + scale) + actx.np.sin(x).sum(axis=1)[:, None])

            with counting() as ran:
                results[tier] = actx.to_numpy(actx.compile(operator)(actx.from_numpy(u0)))
            launches[tier] = ran.launches
        want = u0 * (np.sqrt(x0 * x0 + scale) + np.sin(x0).sum(axis=1)[:, None])
        np.testing.assert_allclose(results[tier], want, rtol=1e-14, atol=1e-14)
    assert launches["auto"] == 1 < launches["device"]

# }}}
