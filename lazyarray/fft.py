"""Discrete Fourier transforms of lazy arrays: the names of ``numpy.fft`` as
``la.fft``, with NumPy's signatures, dtypes (float32 and complex64 input give
complex64, other input complex128) and normalizations.

The transforms run on the device with VkFFT (the optional ``pyvkfft``
package, OpenCL backend) when it is installed and every transformed length
has no prime factor above 13 (VkFFT's radix kernels); complex128 also needs a
device with double precision. Otherwise NumPy's pocketfft runs them on the
host: the input is computed and copied there, the result copied back as a lazy
array, with a :class:`~lazyarray.fallback.LazyArrayHostFallbackWarning` the
first time and a log line each call (``LAZYARRAY_LOG=info``).

On the device, zero-padding, cropping, casts and the normalization factor
are lazy operations around the transform; the transform itself computes its
input and runs at once (it is not part of ``la.jit`` traces). Real transforms
use complex transforms of the real input (``rfft`` keeps the first half;
``irfft`` rebuilds the Hermitian spectrum and keeps the real part).

``fftfreq``, ``rfftfreq``, ``fftshift`` and ``ifftshift`` are lazy device
operations. ``np.fft.f(lazy)`` calls ``la.fft.f`` once this module is imported.
"""

from __future__ import annotations

import math as _math
import operator as _operator
import threading as _threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index as _normalize_axis_index

import lazyarray.run as _run
from lazyarray.api.creation import arange
from lazyarray.api.manipulation import concatenate, flip, moveaxis, pad, roll
from lazyarray.api.ufuncs import conj, where
from lazyarray.deferred import deferred
from lazyarray.fallback import host_call
from lazyarray.graph import Input
from lazyarray.handle import LazyArray, asarray
from lazyarray.host.namespace import install as _install_host_tier

if TYPE_CHECKING:
    import pyopencl.array as cla
else:
    cla = deferred("pyopencl.array")        # (OpenCL loads with the first device transform)

_NORMS = (None, "backward", "ortho", "forward")
_RADICES = (2, 3, 5, 7, 11, 13)

# {{{ VkFFT plans

_vkfft_state: dict[str, Any] = {}
_plans: dict[tuple, Any] = {}
_plans_lock = _threading.Lock()


def _vkfft():
    """pyvkfft's OpenCL ``VkFFTApp``, or None where pyvkfft is missing or broken."""
    if "app" not in _vkfft_state:
        try:
            from pyvkfft.opencl import VkFFTApp  # (pyvkfft is optional)
        except Exception:
            VkFFTApp = None
        _vkfft_state["app"] = VkFFTApp
    return _vkfft_state["app"]


def _friendly(n: int) -> bool:
    """Whether *n* has no prime factor above 13."""
    for p in _RADICES:
        while n % p == 0:
            n //= p
    return n == 1


def _on_device(dtype: _np.dtype, sizes: Sequence[int]) -> bool:
    """Whether transforms of complex *dtype* and *sizes* run on the device."""
    if dtype not in (_np.complex64, _np.complex128) or _vkfft() is None \
            or not all(_friendly(n) for n in sizes):
        return False
    return dtype == _np.complex64 or "cl_khr_fp64" in _run.default_queue().device.extensions


def _plan(shape: tuple, dtype: _np.dtype, ndim: int):
    """A VkFFT plan for out-of-place, unnormalized transforms of the last
    *ndim* axes of C-ordered arrays of *shape* (cached per queue)."""
    queue = _run.default_queue()
    key = (shape, dtype, ndim, id(queue))
    with _plans_lock:
        if key not in _plans:           # (the queue kept with its plans: ids stay unique)
            plan = _vkfft()(shape, dtype, queue=queue, ndim=ndim, inplace=False, norm=0)
            _plans[key] = (plan, queue)
        return _plans[key][0]


def _vkfft_transform(x: LazyArray, axes: tuple[int, ...], forward: bool) -> LazyArray:
    """Unnormalized complex transforms of *x* over *axes* (distinct, at most
    three, none of length 1) with VkFFT."""
    k = len(axes)
    last = tuple(range(x.ndim - k, x.ndim))
    moved = moveaxis(x, axes, last)
    shape = moved.shape
    batched = (_math.prod(shape[:-k]), *shape[-k:])
    with _run.DEVICE_LOCK:
        data = moved._settle()
        if data.offset or not data.flags.c_contiguous:
            data = data.copy()
        data = data.reshape(batched)
        out = cla.empty(_run.default_queue(), batched, x.dtype)
        plan = _plan(batched, x.dtype, k)
        (plan.fft if forward else plan.ifft)(data, out)
    result = LazyArray(Input(out, owned=True))      # (a buffer nobody else writes)
    return moveaxis(result.reshape(shape), last, axes)


def _c2c(x: LazyArray, axes: Sequence[int], forward: bool) -> LazyArray:
    """Unnormalized complex transforms of *x* over distinct *axes* on the device."""
    axes = [a for a in axes if x.shape[a] > 1]
    if x.size == 0 or not axes:
        return x
    for start in range(0, len(axes), 3):
        x = _vkfft_transform(x, tuple(axes[start:start + 3]), forward)
    return x

# }}}


# {{{ arguments

def _complex_dtype(dtype: _np.dtype) -> _np.dtype:
    """The dtype of NumPy's complex transforms of *dtype*."""
    if dtype in (_np.float32, _np.float16, _np.complex64):
        return _np.dtype(_np.complex64)
    if dtype.kind in "fc" and dtype.itemsize > (8 if dtype.kind == "f" else 16):
        return _np.dtype(_np.clongdouble)
    return _np.dtype(_np.complex128)


def _input(a, name: str) -> LazyArray:
    """*a* as a lazy array whose value a transform may read now (not while
    ``la.jit`` traces: transforms are not part of traces)."""
    x = asarray(a)
    x._refuse_value(f"la.fft.{name}")
    return x


def _check_norm(norm) -> None:
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or '
                         '"forward".')


def _check_size(n: int) -> int:
    n = _operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _axes_and_sizes(x: LazyArray, s, axes, inverse_real: bool = False
                    ) -> tuple[list[int], list[int]]:
    """The normalized *axes* and transform lengths *s* of an n-d transform of
    *x* (NumPy's rules: *s* alone names the last axes, -1 the input length;
    the last length of a real inverse defaults to ``2 * (m - 1)``)."""
    if axes is None:
        axes = range(-len(s), 0) if s is not None else range(x.ndim)
    axes = [_normalize_axis_index(_operator.index(a), x.ndim) for a in axes]
    if s is None:
        s = [x.shape[a] for a in axes]
        if inverse_real and axes:
            s[-1] = 2 * (s[-1] - 1)
    else:
        s = list(s)
        if len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
        s = [x.shape[a] if n == -1 else n for n, a in zip(s, axes)]
    return axes, [_check_size(n) for n in s]


def _resized(x: LazyArray, axis: int, n: int) -> LazyArray:
    """*x* cropped or zero-padded to length *n* along *axis*."""
    m = x.shape[axis]
    if n < m:
        return x[(slice(None),) * axis + (slice(0, n),)]
    if n > m:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (0, n - m)
        return pad(x, widths)
    return x


def _scaled(x: LazyArray, norm, size: int, forward: bool) -> LazyArray:
    """*x* times NumPy's normalization factor of a transform of *size* points."""
    if norm == "ortho":
        return x * (1.0 / _math.sqrt(size))
    if (norm == "forward") if forward else (norm in (None, "backward")):
        return x * (1.0 / size)
    return x


def _swapped(norm):
    """The normalization of the opposite direction (``hfft``/``ihfft``)."""
    return {None: "forward", "backward": "forward", "forward": "backward"}.get(norm, norm)


def _written(result: LazyArray, out) -> Any:
    if out is None:
        return result
    out[...] = result
    return out


def _host(name: str, args: tuple, kwargs: dict) -> Any:
    """``np.fft.<name>`` on the host (warned, logged); the result lazy."""
    return host_call(getattr(_np.fft, name), args, kwargs, f"la.fft.{name}")

# }}}


# {{{ transforms on the device

def _complex_nd(x: LazyArray, s: list[int], axes: list[int], norm, forward: bool
                ) -> LazyArray:
    """NumPy's ``fftn``/``ifftn`` of *x* (complex) on the device."""
    if len(set(axes)) == len(axes):
        for a, n in zip(axes, s):
            x = _resized(x, a, n)
        return _scaled(_c2c(x, axes, forward), norm, _math.prod(s), forward)
    for a, n in reversed(list(zip(axes, s))):      # repeated axes: one at a time
        x = _scaled(_c2c(_resized(x, a, n), [a], forward), norm, n, forward)
    return x


def _real_nd(x: LazyArray, s: list[int], axes: list[int], norm, forward: bool
             ) -> LazyArray:
    """NumPy's ``rfftn`` of *x* (real, as complex) on the device."""
    last, n = axes[-1], s[-1]
    full = _complex_nd(_resized(x, last, n), [n], [last], norm, forward)
    half = full[(slice(None),) * last + (slice(0, n // 2 + 1),)]
    return _complex_nd(half, s[:-1], axes[:-1], norm, forward) if len(axes) > 1 else half


def _inverse_real_nd(x: LazyArray, s: list[int], axes: list[int], norm) -> LazyArray:
    """NumPy's ``irfftn`` of *x* (complex) on the device: real output."""
    if len(axes) > 1:
        x = _complex_nd(x, s[:-1], axes[:-1], norm, False)
    last, n = axes[-1], s[-1]
    half = _resized(x, last, n // 2 + 1)
    mirrored = flip(conj(half[(slice(None),) * last + (slice(1, n - n // 2),)]), axis=last)
    full = concatenate([half, mirrored], axis=last)
    return _scaled(_c2c(full, [last], False), norm, n, False).real


def _transform(name: str, a, s, axes, norm, kind: str, forward: bool, host_args: tuple,
               host_kwargs: dict) -> LazyArray:
    """The transform *name* of *a*: on the device where VkFFT takes it, else
    NumPy's on the host. *kind*: 'c2c', 'r2c' or 'c2r'."""
    _check_norm(norm)
    x = _input(a, name)
    axes, s = _axes_and_sizes(x, s, axes, inverse_real=kind == "c2r")
    if not axes:
        return x if kind != "c2r" else _host(name, host_args, host_kwargs)
    if kind == "r2c" and x.dtype.kind == "c":
        raise TypeError(f"{name} transforms real input; got {x.dtype}")
    dtype = _complex_dtype(x.dtype)
    if not _on_device(dtype, s):
        return _host(name, host_args, host_kwargs)
    x = x.astype(dtype, copy=False)
    if kind == "c2c":
        return _complex_nd(x, s, axes, norm, forward)
    if kind == "r2c":
        return _real_nd(x, s, axes, norm, forward)
    return _inverse_real_nd(x, s, axes, norm)

# }}}


# {{{ NumPy's functions

def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
        ) -> LazyArray:
    """The 1-d discrete Fourier transform of *a* along *axis* (cropped or
    zero-padded to *n* points)."""
    return _written(_transform("fft", a, None if n is None else [n], [axis], norm, "c2c", True,
                               (a,), {"n": n, "axis": axis, "norm": norm}), out)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
         ) -> LazyArray:
    """The inverse of :func:`fft` along *axis*."""
    return _written(_transform("ifft", a, None if n is None else [n], [axis], norm, "c2c",
                               False, (a,), {"n": n, "axis": axis, "norm": norm}), out)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
         ) -> LazyArray:
    """The transform of real *a* along *axis*: the ``n // 2 + 1`` non-negative
    frequencies."""
    return _written(_transform("rfft", a, None if n is None else [n], [axis], norm, "r2c", True,
                               (a,), {"n": n, "axis": axis, "norm": norm}), out)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
          ) -> LazyArray:
    """The real inverse of :func:`rfft`: *n* (default ``2 * (m - 1)``) real
    points along *axis*."""
    return _written(_transform("irfft", a, None if n is None else [n], [axis], norm, "c2r",
                               False, (a,), {"n": n, "axis": axis, "norm": norm}), out)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
         ) -> LazyArray:
    """The (real) transform of a signal with Hermitian symmetry, given by its
    first half *a*: *n* (default ``2 * (m - 1)``) points along *axis*."""
    _check_norm(norm)
    x = _input(a, "hfft")
    kwargs = {"n": n, "axis": axis, "norm": norm}
    axes, s = _axes_and_sizes(x, None if n is None else [n], [axis], inverse_real=True)
    if not _on_device(_complex_dtype(x.dtype), s):
        return _written(_host("hfft", (a,), kwargs), out)
    y = conj(x.astype(_complex_dtype(x.dtype), copy=False))
    return _written(_inverse_real_nd(y, s, axes, _swapped(norm)), out)


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
          ) -> LazyArray:
    """The inverse of :func:`hfft`: the first ``n // 2 + 1`` points of the
    transform of real *a*."""
    _check_norm(norm)
    x = _input(a, "ihfft")
    kwargs = {"n": n, "axis": axis, "norm": norm}
    axes, s = _axes_and_sizes(x, None if n is None else [n], [axis])
    if x.dtype.kind == "c":
        raise TypeError(f"ihfft transforms real input; got {x.dtype}")
    dtype = _complex_dtype(x.dtype)
    if not _on_device(dtype, s):
        return _written(_host("ihfft", (a,), kwargs), out)
    half = _real_nd(x.astype(dtype, copy=False), s, axes, _swapped(norm), True)
    return _written(conj(half), out)


def _nd(name: str, kind: str, forward: bool, default_axes):
    def transform(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = default_axes,
                  norm: str | None = None, out=None) -> LazyArray:
        return _written(_transform(name, a, s, axes, norm, kind, forward, (a,),
                                   {"s": s, "axes": axes, "norm": norm}), out)
    transform.__name__ = transform.__qualname__ = name
    return transform


fft2 = _nd("fft2", "c2c", True, (-2, -1))
ifft2 = _nd("ifft2", "c2c", False, (-2, -1))
rfft2 = _nd("rfft2", "r2c", True, (-2, -1))
irfft2 = _nd("irfft2", "c2r", False, (-2, -1))
fftn = _nd("fftn", "c2c", True, None)
ifftn = _nd("ifftn", "c2c", False, None)
rfftn = _nd("rfftn", "r2c", True, None)
irfftn = _nd("irfftn", "c2r", False, None)
fft2.__doc__ = "The 2-d transform of *a* over *axes* (lengths *s*)."
ifft2.__doc__ = "The inverse of :func:`fft2`."
rfft2.__doc__ = "The 2-d transform of real *a*: half the frequencies of the last axis."
irfft2.__doc__ = "The real inverse of :func:`rfft2`."
fftn.__doc__ = ("The n-d transform of *a* over *axes* (default: all, or the last ``len(s)``), "
                "cropped or zero-padded to the lengths *s*.")
ifftn.__doc__ = "The inverse of :func:`fftn`."
rfftn.__doc__ = ("The n-d transform of real *a*: the last of *axes* keeps its ``s[-1] // 2 + "
                 "1`` non-negative frequencies.")
irfftn.__doc__ = ("The real inverse of :func:`rfftn` (the last length defaults to "
                  "``2 * (m - 1)``).")


def fftfreq(n: int, d: float = 1.0, device: Any = None, *, dtype: Any = None) -> LazyArray:
    """The sample frequencies of an *n*-point transform with sample spacing
    *d*: ``[0, 1, ..., -(n // 2), ..., -1] / (d * n)`` (float64 unless
    *dtype*), lazily."""
    n = _operator.index(n)
    k = arange(n, dtype=_np.int64)
    result = where(k < (n + 1) // 2, k, k - n) * (1.0 / (n * d))
    return result if dtype is None else result.astype(dtype)


def rfftfreq(n: int, d: float = 1.0, device: Any = None, *, dtype: Any = None) -> LazyArray:
    """The ``n // 2 + 1`` non-negative sample frequencies of :func:`rfft` of
    *n* points with spacing *d* (float64 unless *dtype*), lazily."""
    n = _operator.index(n)
    result = arange(n // 2 + 1, dtype=_np.int64) * (1.0 / (n * d))
    return result if dtype is None else result.astype(dtype)


def _shift(x, axes, sign: int) -> LazyArray:
    x = asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif not isinstance(axes, (tuple, list)):
        return roll(x, sign * (x.shape[axes] // 2), axis=axes)
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in axes), axis=tuple(axes))


def fftshift(x: Any, axes: Any = None) -> LazyArray:
    """*x* rolled so that the zero frequency is in the middle of *axes*
    (default: all), lazily."""
    return _shift(x, axes, 1)


def ifftshift(x: Any, axes: Any = None) -> LazyArray:
    """The inverse of :func:`fftshift`, lazily."""
    return _shift(x, axes, -1)

# }}}


__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


# the host tier in front of the functions (NumPy's on host arrays)
_install_host_tier(globals(), _np.fft, __all__)


def __dir__() -> list[str]:
    """The namespace's API (its helpers and imports are private)."""
    return sorted(__all__)
