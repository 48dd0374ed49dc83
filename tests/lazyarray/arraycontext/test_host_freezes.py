"""An array context's small work met for the first time on a CPU device
while a compiled operator is traced (a discretization's geometry, frozen on
first use) is computed by NumPy (no kernel built, none launched), the same
work met again is compiled with the program; both give NumPy's values (skipped where arraycontext
is not installed, see docs/pde-backend.md)."""

import numpy as np
import pytest

arraycontext = pytest.importorskip(
    "arraycontext", reason="arraycontext is not installed (the 'pde' extra plus "
    "arraycontext from its repository, docs/pde-backend.md): the context's tests did not run")

import pyopencl as cl  # noqa: E402

import lazyarray as la  # noqa: E402
from lazyarray.arraycontext import LazyarrayArrayContext, freeze, pending  # noqa: E402
from lazyarray.run import default_queue  # noqa: E402
from tests.helpers import counting  # noqa: E402

pytestmark = pytest.mark.skipif(
    not default_queue().device.type & cl.device_type.CPU,
    reason="small work is computed on the host only where the device is a CPU")


@pytest.fixture
def actx():
    # (the tier chosen automatically, as users run: the tests' default is "device")
    with la.tier("auto"):
        yield LazyarrayArrayContext(cl.CommandQueue(cl.Context([default_queue().device])))


def _geometry(actx, x, y, scale):
    """Work as a discretization's first freezes do it (a new structure per
    *scale*: its constant is written into the code)."""
    r = actx.np.sqrt(x * x + y * y) + scale
    return {"n": x / r, "area": actx.np.sum(r[:, 1:] - r[:, :-1], axis=1),
            "index": actx.np.where(x > 0, 1, -1) * 3}


def _expected(x, y, scale):
    r = np.sqrt(x * x + y * y) + scale
    return {"n": x / r, "area": np.sum(r[:, 1:] - r[:, :-1], axis=1),
            "index": np.where(x > 0, 1, -1) * 3}


def _operator(actx, x, y, memo, during):
    """A compiled operator reading geometry frozen on first use (as grudge
    keeps a discretization's), with what each freeze of it planned."""
    def operator(u):
        if "g" not in memo:
            with counting() as froze:
                memo["g"] = {key: actx.freeze(value)
                             for key, value in _geometry(actx, x, y, 0.25).items()}
            during.append((froze.planned, froze.launches,
                           all(pending.is_pending(a) for a in memo["g"].values())))
        g = {key: actx.thaw(value) for key, value in memo["g"].items()}
        return u * g["n"] + g["area"][:, None] + g["index"]
    return actx.compile(operator)


def test_geometry_frozen_first_is_computed_on_the_host(actx, rng):
    """Frozen while a compiled operator is traced: the first times its work
    is met it is computed at once, by NumPy (nothing planned, launched or
    put off); the same work met again and again (another discretization) is
    put off and compiled with the program. Both give NumPy's values."""
    for k in range(freeze.HOST_REPEATS + 1):
        x0, y0, u0 = rng.standard_normal((3, 40, 6))
        memo: dict = {}
        during: list = []
        rhs = _operator(actx, actx.from_numpy(x0), actx.from_numpy(y0), memo, during)
        got = actx.to_numpy(rhs(actx.from_numpy(u0)))
        want = _expected(x0, y0, 0.25)
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


def test_to_numpy_while_tracing_is_numpys_own_array(actx, rng):
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


def test_large_work_and_the_device_tier_compile(actx, rng):
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
