"""NumPy's arguments that scripts pass, on both tiers (the device tier is
what arrays over the host tier's size, ``la.jit`` and ``LAZYARRAY_TIER=device``
run): ``order`` of reshape/ravel/flatten, ``item`` with indices, linspace's
``retstep``, ``take``'s ``mode``, einsum's ``optimize``, ``angle`` of complex
values."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarray as la

A = np.random.default_rng(0).random((3, 4, 5))
VIEWS = {"whole": lambda t: t, "permuted": lambda t: t.transpose(2, 0, 1),
         "strided": lambda t: t[:, ::2, ::-1], "transposed": lambda t: t.T,
         "picked": lambda t: t[1:, :, 2]}


@pytest.fixture(params=["host", "device"])
def tier(request):
    with la.tier(request.param):
        yield request.param


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("order", ["C", "F", "A", "K", "f", None])
def test_ravel_flatten_and_reshape_follow_numpys_order(tier, view, order):
    x, a = VIEWS[view](la.asarray(A)), VIEWS[view](A)
    for method in ("ravel", "flatten"):
        np.testing.assert_array_equal(np.asarray(getattr(x, method)(order)),
                                      getattr(a, method)(order))
    np.testing.assert_array_equal(np.asarray(np.ravel(x, order=order)), np.ravel(a, order))
    if order not in ("K",):
        shape = (a.size // 2, 2) if a.size % 2 == 0 else (a.size,)
        np.testing.assert_array_equal(np.asarray(x.reshape(shape, order=order)),
                                      a.reshape(shape, order=order))
        np.testing.assert_array_equal(np.asarray(la.reshape(x, shape, order)),
                                      np.reshape(a, shape, order))


def test_a_column_major_ravel_of_a_transpose_is_a_view_as_in_numpy(tier):
    a = A.copy()
    x = la.asarray(a)
    x.T.ravel("F")[0] = 100.0
    a.T.ravel("F")[0] = 100.0
    np.testing.assert_array_equal(np.asarray(x), a)
    x.ravel("F")[0] = -1.0                   # (a copy in NumPy too)
    np.testing.assert_array_equal(np.asarray(x), a)


def test_bad_orders_raise_numpys_error(tier):
    x = la.asarray(A)
    with pytest.raises(ValueError, match="order must be one of"):
        x.ravel("Q")
    with pytest.raises(ValueError, match="order 'K' is not permitted"):
        x.reshape((60,), order="K")


def test_item_takes_a_flat_index_or_one_index_per_axis(tier):
    x = la.asarray(A)
    for args in [(5,), (-1,), (1, 2, 3), ((2, 3, 4),)]:
        got = x.item(*args)
        assert type(got) is float and got == A.item(*args)
    with pytest.raises(IndexError):
        x.item(60)
    with pytest.raises(ValueError):
        x.item(1, 2)


@pytest.mark.parametrize("args", [(0, 1, 5), (0, 2, 41), (1, 1, 1), (0, 1, 0), (2, -3, 7, False)])
def test_linspace_returns_its_step(tier, args):
    values, step = la.linspace(*args, retstep=True)
    want, want_step = np.linspace(*args, retstep=True)
    np.testing.assert_array_equal(np.asarray(values), want)
    np.testing.assert_array_equal(float(step), want_step)


def test_linspace_step_inside_jit():
    @la.jit
    def f(u):
        x, dx = la.linspace(0, 2, 41, retstep=True)
        return u + x * dx
    np.testing.assert_array_equal(np.asarray(f(la.ones(41))),
                                  1 + np.linspace(0, 2, 41) * 0.05)


@pytest.mark.parametrize("mode", ["wrap", "clip"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_take_brings_indices_inside_by_mode(tier, mode, axis):
    a = np.arange(12.0).reshape(3, 4)
    x = la.asarray(a)
    for indices in ([5, -7, 13, 0], [[1, 40], [-13, 2]], 17, -20):
        want = np.take(a, indices, axis=axis, mode=mode)
        for got in (la.take(x, indices, axis=axis, mode=mode),
                    x.take(indices, axis, mode=mode), np.take(x, indices, axis=axis, mode=mode)):
            np.testing.assert_array_equal(np.asarray(got), want)


def test_einsum_takes_optimize(tier):
    a = np.arange(6.0).reshape(2, 3)
    for optimize in (True, False, "greedy", "optimal"):
        got = la.einsum("ij,kj->ik", la.asarray(a), la.asarray(a), optimize=optimize)
        np.testing.assert_array_equal(np.asarray(got), np.einsum("ij,kj->ik", a, a))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_angle_of_complex_values(tier, dtype):
    z = np.array([1 + 1j, -1 + 0j, complex(-1, -0.0), 0j, complex(-0.0, 0), 1j,
                  complex(np.nan, 1), complex(0, np.inf), -2 - 3j], dtype)
    for deg in (False, True):
        got = np.asarray(la.angle(la.asarray(z), deg=deg))
        want = np.angle(z, deg=deg)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == np.complex64 else 1e-15)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.uint16,
                                   np.int32, np.uint64, np.float32, np.float64])
def test_angle_of_real_values_has_numpys_dtype_or_refuses_float16(tier, dtype):
    a = np.array([3, 0, 1, 0], dtype) if dtype in (np.bool_, np.uint8, np.uint16, np.uint64) \
        else np.array([-3, 0, 2, -0.0 if np.dtype(dtype).kind == "f" else 5], dtype)
    for deg in (False, True):
        want = np.angle(a, deg=deg)
        if want.dtype == np.float16 and tier == "device":
            with pytest.raises(la.DTypeError, match="float16"):
                la.angle(la.asarray(a), deg=deg)
            continue
        got = np.asarray(la.angle(la.asarray(a), deg=deg))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_round_of_bool_is_numpys_float16_or_refused(tier):
    a = np.array([True, False])
    if tier == "host":
        got = np.round(la.asarray(a))
        assert np.asarray(got).dtype == np.float16
        np.testing.assert_array_equal(np.asarray(got), np.round(a))
        return
    with pytest.raises(la.DTypeError, match="float16"):
        np.round(la.asarray(a))
    with pytest.raises(TypeError):
        np.round(la.asarray(a), 1)


def test_transpose_axes_are_checked_as_numpy_checks_them(tier):
    x = la.ones((300, 400))
    for axes in [(1, 2), (0, 3), (-3, 0)]:
        with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
            x.transpose(*axes)
        with pytest.raises(np.exceptions.AxisError):
            la.permute_dims(x, axes)
    with pytest.raises(ValueError, match="repeated axis"):
        x.transpose(0, 0)
    with pytest.raises(ValueError, match="don't match"):
        x.transpose(0)
    assert x.transpose(1, -2).shape == (400, 300)


def test_clip_writes_into_out(tier):
    a = np.linspace(1, 2, 150_000)
    x = la.asarray(a)
    assert la.clip(x, 1.2, 1.8, out=x) is x
    np.testing.assert_array_equal(np.asarray(x), np.clip(a, 1.2, 1.8))
    target = la.zeros(6)
    np.clip(la.arange(6.0), 1, 4, out=target)
    np.testing.assert_array_equal(np.asarray(target), [1, 1, 2, 3, 4, 4])
    with pytest.raises(TypeError, match="same_kind"):
        la.clip(la.arange(5), 0.5, 2.5, out=la.arange(5))


def test_memory_order_of_views_of_host_arrays_on_the_device_tier():
    # (a host array's buffer may itself be a NumPy view: its strides decide)
    a = np.arange(12.0).reshape(3, 4)
    with la.tier("auto"):
        x = la.asarray(a)
    with la.tier("device"):
        for view, want in [(x.T, a.T), (x.T[::-1], a.T[::-1]), (x.T[1:], a.T[1:]),
                           (x[:, ::2], a[:, ::2])]:
            for order in "CFAK":
                np.testing.assert_array_equal(np.asarray(view.ravel(order)), want.ravel(order))
                np.testing.assert_array_equal(np.asarray(view.flatten(order)),
                                              want.flatten(order))
