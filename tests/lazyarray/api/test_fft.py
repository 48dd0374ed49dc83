"""la.fft against numpy.fft: values, shapes and dtypes of every transform and
normalization, the device path (VkFFT, where pyvkfft is installed) and the
host path (pocketfft, warned), and np.fft.f(lazy) dispatching to la.fft.f."""

import importlib.util
import warnings

import numpy as np
import pytest

import lazyarray as la
import lazyarray.fft as laf
from lazyarray import fallback
from tests.arrays import random_array

pytestmark = pytest.mark.filterwarnings("ignore::lazyarray.fallback.LazyArrayHostFallbackWarning")

HAVE_VKFFT = importlib.util.find_spec("pyvkfft") is not None and laf._vkfft() is not None
NORMS = [None, "backward", "ortho", "forward"]


_data = random_array


def _check(name, a, host=False, **kwargs):
    """la.fft.<name> of lazy *a* is lazy and equals NumPy's (shape, dtype,
    values); unless *host*, it runs on the device where pyvkfft is installed
    (a host fallback warning fails the test)."""
    expected = getattr(np.fft, name)(a, **kwargs)
    with warnings.catch_warnings():
        if HAVE_VKFFT and not host:
            warnings.simplefilter("error", la.LazyArrayHostFallbackWarning)
        got = getattr(laf, name)(la.asarray(a), **kwargs)
    assert isinstance(got, la.LazyArray), type(got)
    assert got.shape == expected.shape and got.dtype == expected.dtype, \
        (got.shape, expected.shape, got.dtype, expected.dtype)
    single = expected.dtype in (np.float32, np.complex64)
    scale = max(1.0, float(np.abs(expected).max(initial=0)))
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-4 if single else 1e-10,
                               atol=(2e-5 if single else 1e-12) * scale)
    return got


@pytest.fixture
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(fallback, "_warned", set())


# {{{ 1-d

@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_fft_ifft_norms(norm, dtype, fresh_warnings):
    a = _data((3, 8), dtype)
    _check("fft", a, norm=norm)
    _check("ifft", a, norm=norm)


@pytest.mark.parametrize("dtype,shape,kwargs", [
    (np.float32, (3, 8), {}), (np.float64, (3, 8), {"n": 12}), (np.float32, (3, 8), {"n": 4}),
    (np.int32, (8,), {}), (np.bool_, (8,), {}), (np.complex128, (2, 6, 8), {"axis": 1, "n": 9}),
    (np.complex64, (3, 8), {"axis": 0, "norm": "ortho"}), (np.complex128, (0, 8), {}),
    (np.float64, (3, 1), {}), (np.complex64, (2, 3 * 5 * 7 * 8), {})])
def test_fft_sizes_and_dtypes(dtype, shape, kwargs):
    _check("fft", _data(shape, dtype) if dtype is not np.bool_ else np.arange(8) % 3 == 0,
           **kwargs)
    _check("ifft", _data(shape, dtype) if dtype is not np.bool_ else np.arange(8) % 3 == 0,
           **kwargs)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 7])
def test_rfft_irfft(norm, n):
    _check("rfft", _data((3, 10), np.float64), n=n, norm=norm)
    _check("irfft", _data((3, 6), np.complex128), n=n, norm=norm)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 7])
def test_hfft_ihfft(norm, n):
    _check("hfft", _data((3, 6), np.complex128), n=n, norm=norm)
    _check("ihfft", _data((3, 10), np.float64), n=n, norm=norm)


def test_real_transforms_single_precision_and_axes():
    _check("rfft", _data((8, 3), np.float32), axis=0)
    c = _data((5, 3), np.complex64)
    _check("irfft", c, axis=0)
    _check("hfft", c, axis=0, n=1)
    with pytest.raises(TypeError):
        laf.rfft(la.asarray(c))
    with pytest.raises(TypeError):
        laf.ihfft(la.asarray(c))


def test_round_trip():
    a = _data((3, 10), np.float64)
    back = laf.irfft(laf.rfft(la.asarray(a)), n=10)
    np.testing.assert_allclose(np.asarray(back), a, atol=1e-12)

# }}}


# {{{ n-d

@pytest.mark.parametrize("name,dtype,shape,kwargs", [
    ("fft2", np.complex128, (2, 6, 8), {}),
    ("ifft2", np.complex64, (2, 6, 8), {"s": (4, 12), "norm": "ortho"}),
    ("fft2", np.float64, (2, 6, 8), {"axes": (0, 2)}),
    ("ifftn", np.float64, (2, 6, 8), {"axes": (0, 2), "norm": "forward"}),
    ("fftn", np.complex128, (2, 6, 8), {}),
    ("fftn", np.complex128, (2, 3, 2, 4), {"norm": "forward"}),
    ("fftn", np.complex128, (2, 6, 8), {"s": (-1, 10), "axes": (0, 2)}),
    ("fftn", np.complex128, (2, 6, 8), {"axes": (1, 1)}),
    ("fftn", np.complex64, (2, 6, 8), {"axes": ()}),
    ("rfft2", np.float64, (2, 6, 8), {}),
    ("rfft2", np.float32, (2, 6, 8), {"norm": "forward"}),
    ("irfft2", np.complex128, (2, 6, 5), {}),
    ("irfft2", np.complex64, (2, 6, 5), {"s": (5, 9), "norm": "ortho"}),
    ("rfftn", np.float64, (2, 6, 8), {"s": (3, 6, 10), "axes": (0, 1, 2)}),
    ("irfftn", np.complex128, (2, 6, 5), {"axes": (2, 0)}),
])
def test_nd_transforms(name, dtype, shape, kwargs):
    _check(name, _data(shape, dtype), **kwargs)


def test_nd_errors():
    x = la.asarray(_data((4, 6), np.complex128))
    with pytest.raises(ValueError):
        laf.fftn(x, s=(4,), axes=(0, 1))
    with pytest.raises(ValueError):
        laf.fft2(x, s=(0, 4))
    with pytest.raises(ValueError):
        laf.fft(x, n=0)
    with pytest.raises(ValueError):
        laf.fft(x, norm="both")
    with pytest.raises(np.exceptions.AxisError):
        laf.fft(x, axis=2)

# }}}


# {{{ device and host paths

def test_host_path_warns(fresh_warnings):
    a = _data((3, 17), np.complex128)          # 17: a prime above 13
    with pytest.warns(la.LazyArrayHostFallbackWarning, match="la.fft.fft"):
        _check("fft", a, host=True)
    with pytest.warns(la.LazyArrayHostFallbackWarning, match="la.fft.irfft"):
        _check("irfft", a, host=True, n=17)
    with pytest.warns(la.LazyArrayHostFallbackWarning, match="la.fft.rfftn"):
        _check("rfftn", _data((3, 19), np.float32), host=True)
    with pytest.warns(la.LazyArrayHostFallbackWarning, match="la.fft.ihfft"):
        _check("ihfft", _data((3, 23), np.float64), host=True)
    fallback._warned.discard("la.fft.fft")
    with pytest.warns(la.LazyArrayHostFallbackWarning, match="la.fft.fft"):
        _check("fft", _data((8,), np.longdouble), host=True)       # no long double on the device


def test_input_unchanged_and_lazy_input():
    a = _data((3, 8), np.complex64)
    x = la.asarray(a)
    y = laf.fft(x * 2 + 1, n=16)
    np.testing.assert_allclose(np.asarray(y), np.fft.fft(a * 2 + 1, n=16), rtol=1e-4, atol=1e-4)
    np.asarray(laf.fft(x))
    np.testing.assert_array_equal(np.asarray(x), a)


def test_out_argument():
    a = _data((3, 8), np.complex128)
    out = la.zeros((3, 8), dtype=np.complex128)
    result = laf.fft(la.asarray(a), out=out)
    assert result is out
    np.testing.assert_allclose(np.asarray(out), np.fft.fft(a), atol=1e-12)

# }}}


# {{{ frequencies and shifts

@pytest.mark.parametrize("n,d", [(1, 1.0), (8, 0.1), (9, 2.5)])
def test_frequencies(n, d):
    for name in ("fftfreq", "rfftfreq"):
        got, expected = getattr(laf, name)(n, d), getattr(np.fft, name)(n, d)
        assert isinstance(got, la.LazyArray) and got.dtype == expected.dtype
        np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.parametrize("axes", [None, 0, 1, (1,), (0, 1), [1, 0]])
def test_shifts(axes):
    a = _data((4, 5), np.float32)
    for name in ("fftshift", "ifftshift"):
        got = getattr(laf, name)(la.asarray(a), axes)
        assert isinstance(got, la.LazyArray)
        np.testing.assert_array_equal(np.asarray(got), getattr(np.fft, name)(a, axes))
    np.testing.assert_array_equal(np.asarray(laf.fftshift(la.asarray(a[0]))),
                                  np.fft.fftshift(a[0]))

# }}}


def test_numpy_dispatch():
    a = _data((3, 8), np.complex64)
    x = la.asarray(a)
    for got, expected in [(np.fft.fft(x), np.fft.fft(a)),
                          (np.fft.rfft(x.real), np.fft.rfft(a.real)),
                          (np.fft.ifftn(x, norm="ortho"), np.fft.ifftn(a, norm="ortho")),
                          (np.fft.fftshift(x), np.fft.fftshift(a))]:
        assert isinstance(got, la.LazyArray) and got.dtype == expected.dtype
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-4, atol=1e-4)
