"""lazyarray: lazily evaluated NumPy-style arrays compiled to fused OpenCL kernels.

The ``la`` namespace mirrors NumPy's: ``asarray``, creation functions, ufuncs
(also as ``np.sin(x)`` through ``__array_ufunc__``/``__array_function__``)
with NumPy's broadcasting and type promotion, reductions and scans, views
(slicing, reshapes, transposes, concatenation, padding, ...), array indexing,
contractions (``einsum``, ``matmul``), and host-side sorting. Elementwise work
and views fuse into the kernel of the value that reads them; reductions,
results and values that would be recomputed too often are stored. ``jit``
traces a function once per argument signature and replays its kernels;
``explain`` shows the plan.
"""

from __future__ import annotations

import builtins as _builtins

import numpy as _np

import kernelcore as _lp

from lazyarray.array import VIEW_FUNCTIONS as _VIEW_FUNCTIONS, Device, LazyArray, asarray, copy
from lazyarray.errors import (ConcretizationError, DTypeError, IndexingError, LazyArrayError,
                              ShapeError, ViewWriteError)
from lazyarray.explain import explain, to_dot
from lazyarray.jit import jit
from lazyarray.runtime import synchronize
from lazyarray.ops import construct as _construct
from lazyarray.ops import host as _host
from lazyarray.ops import linalg as _linalg
from lazyarray.ops import manipulate as _manipulate
from lazyarray.ops import elementwise as _elementwise
from lazyarray.ops.elementwise import UFUNCS as _UFUNCS

__version__ = "0.1.0"


# LAZYARRAY_LOG=info (or debug) shows planning, lowering and kernel runs with
# their timings on stderr
_lp.configure_logging("lazyarray", "LAZYARRAY_LOG")

__array_api_version__ = "2023.12"

float32, float64, int32, int64, bool_ = (_np.float32, _np.float64, _np.int32, _np.int64,
                                         _np.bool_)
complex64, complex128, uint8, int8, int16, uint32 = (
    _np.complex64, _np.complex128, _np.uint8, _np.int8, _np.int16, _np.uint32)
uint16, uint64 = _np.uint16, _np.uint64

e, pi, inf, nan, newaxis = _np.e, _np.pi, _np.inf, _np.nan, None


def _ufunc_function(name, public_name=None):
    ufunc = getattr(_np, name)

    def f(*args):
        if len(args) != ufunc.nin:
            raise TypeError(f"{public_name or name}() takes {ufunc.nin} positional "
                            f"argument(s) but {len(args)} were given")
        if not _builtins.any(isinstance(a, LazyArray) for a in args):
            args = (asarray(args[0]),) + args[1:]
        return ufunc(*args)
    f.__name__ = public_name or name
    f.__doc__ = f"NumPy's {name}, lazily."
    return f


for _name in sorted(_UFUNCS):
    if hasattr(_np, _name):
        globals()[_name] = _ufunc_function(_name)

#: Array API (and NumPy alias) spellings of the ufuncs
_UFUNC_ALIASES = {
    "abs": "absolute", "acos": "arccos", "acosh": "arccosh", "asin": "arcsin",
    "asinh": "arcsinh", "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh",
    "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
    "bitwise_invert": "invert", "bitwise_not": "invert", "conj": "conjugate",
    "pow": "power"}
for _alias, _name in _UFUNC_ALIASES.items():
    globals()[_alias] = _ufunc_function(_name, _alias)


def where(condition, x, y) -> LazyArray:
    """Elements of *x* where *condition* holds, else of *y* (NumPy's where)."""
    from lazyarray.array import _node
    from lazyarray.ops.elementwise import elementwise
    return LazyArray(elementwise("where", _node(condition), _node(x), _node(y)))


def sum(x, axis=None, keepdims=False, dtype=None):   # noqa: A001 - NumPy's name
    return asarray(x).sum(axis, keepdims, dtype)


def all(x, axis=None, keepdims=False):                # noqa: A001
    """Whether every element (along *axis*) is nonzero."""
    return asarray(x).all(axis, keepdims)


def any(x, axis=None, keepdims=False):                # noqa: A001
    """Whether some element (along *axis*) is nonzero."""
    return asarray(x).any(axis, keepdims)


def max(x, axis=None, keepdims=False):                # noqa: A001
    return asarray(x).max(axis, keepdims)


def min(x, axis=None, keepdims=False):                # noqa: A001
    return asarray(x).min(axis, keepdims)


def mean(x, axis=None, keepdims=False, dtype=None):
    return asarray(x).mean(axis, keepdims, dtype)


def prod(x, axis=None, keepdims=False, dtype=None):
    return asarray(x).prod(axis, keepdims, dtype)


def var(x, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
    return asarray(x).var(axis, dtype, ddof, keepdims, correction=correction)


def std(x, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
    return asarray(x).std(axis, dtype, ddof, keepdims, correction=correction)


def argmax(x, axis=None, keepdims=False):
    return asarray(x).argmax(axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    return asarray(x).argmin(axis, keepdims)


def cumsum(x, axis=None, dtype=None):
    """Running sums along *axis* (NumPy's cumsum)."""
    return asarray(x).cumsum(axis, dtype)


def cumprod(x, axis=None, dtype=None):
    """Running products along *axis* (NumPy's cumprod)."""
    return asarray(x).cumprod(axis, dtype)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running sums along *axis* (the Array API's cumulative_sum: *axis* may be
    left out only for 0-d and 1-d arrays; *include_initial* starts with 0)."""
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ShapeError("cumulative_sum: axis is required for arrays of more than "
                             "one dimension")
        axis = 0
    if x.ndim == 0:
        x = x.reshape(1)
    result = x.cumsum(axis, dtype)
    if include_initial:
        axis = axis % x.ndim
        shape = x.shape[:axis] + (1,) + x.shape[axis + 1:]
        result = concatenate([zeros(shape, dtype=result.dtype), result], axis=axis)
    return result


def count_nonzero(x, axis=None, keepdims=False):
    """The number of non-zero elements (NumPy's count_nonzero)."""
    from lazyarray.ops.reductions import count_nonzero as _count
    return LazyArray(_count(asarray(x).node, axis, keepdims))


# {{{ ufunc-like functions that are not NumPy ufuncs

def real(x) -> LazyArray:
    """The real part (the array itself for real dtypes)."""
    return asarray(x).real


def imag(x) -> LazyArray:
    """The imaginary part (zeros for real dtypes)."""
    return asarray(x).imag


def round(x, decimals=0, out=None) -> LazyArray:    # noqa: A001 - NumPy's name
    """NumPy's round: half to even, at *decimals* digits."""
    if out is not None:
        raise TypeError("lazyarray.round does not take out=")
    return asarray(x).round(decimals)


around = round


def clip(x, a_min=None, a_max=None, /, out=None, *, min=None, max=None):  # noqa: A002
    """*x* limited to ``[min, max]`` (NumPy's clip; NaN stays NaN; either bound
    may be None). Python integers outside *x*'s integer type are clipped to it."""
    from lazyarray.array import _node
    if out is not None:
        raise TypeError("lazyarray.clip does not take out=")
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    x = asarray(x)

    def probe(v):
        return _np.empty(0, v.dtype) if isinstance(v, (LazyArray, _np.ndarray)) else v

    # (NumPy resolves the three operands together: clip(bool, 3, uint8(200)) is uint8)
    with _np.errstate(all="ignore"):
        dtype = _np.clip(probe(x), probe(lo), probe(hi)).dtype
    result = x.astype(dtype) if dtype != x.dtype else x
    for bound, name in ((lo, "maximum"), (hi, "minimum")):
        if bound is None:
            continue
        if isinstance(bound, int) and not isinstance(bound, _builtins.bool) \
                and dtype.kind in "iu":
            info = _np.iinfo(dtype)
            bound = _builtins.min(_builtins.max(bound, int(info.min)), int(info.max))
        result = LazyArray(_elementwise.elementwise(name, result.node, _node(bound)))
    return result


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> LazyArray:
    """NumPy's isclose, lazily."""
    from lazyarray.array import _node
    return LazyArray(_elementwise.isclose(_node(a), _node(b), rtol, atol, equal_nan))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> _builtins.bool:
    """Whether every element of *a* is close to *b* (computes now)."""
    return _builtins.bool(isclose(a, b, rtol, atol, equal_nan).all())


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None) -> LazyArray:
    """NaN replaced by *nan*, infinities by *posinf*/*neginf* (by default the
    largest finite values of the dtype), as NumPy's nan_to_num."""
    x = asarray(x)
    if x.dtype.kind in "biu":
        return x
    if x.dtype.kind == "c":
        raise DTypeError("nan_to_num of complex values is not supported yet")
    info = _np.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    result = where(isnan(x), x.dtype.type(nan), x)
    result = where(isinf(x) & (x > 0), x.dtype.type(big), result)
    return where(isinf(x) & (x < 0), x.dtype.type(small), result)


def angle(z, deg=False) -> LazyArray:
    """The argument of complex *z* (radians, or degrees with *deg*)."""
    z = asarray(z)
    if z.dtype.kind == "c":
        raise DTypeError("angle of complex values needs arctan2 of their parts, which "
                         "is not supported yet")
    result = arctan2(0, z) if z.dtype.kind == "f" else arctan2(0.0, z)
    return result * (180 / _np.pi) if deg else result


def diff(a, n=1, axis=-1, prepend=None, append=None) -> LazyArray:
    """The *n*-th differences along *axis* (NumPy's diff)."""
    a = asarray(a)
    if a.ndim == 0:
        raise ShapeError("diff requires input that is at least one dimensional")
    axis = axis % a.ndim
    parts = []
    for extra in (prepend, append):
        if extra is not None:
            extra = asarray(extra)
            if extra.ndim == 0:
                shape = a.shape[:axis] + (1,) + a.shape[axis + 1:]
                extra = broadcast_to(extra, shape)
        parts.append(extra)
    if parts[0] is not None or parts[1] is not None:
        a = concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis=axis)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    head = (slice(None),) * axis
    for _ in range(n):
        later, earlier = a[head + (slice(1, None),)], a[head + (slice(None, -1),)]
        a = not_equal(later, earlier) if a.dtype == _np.bool_ else later - earlier
    return a


def divmod(x, y):                                     # noqa: A001 - NumPy's name
    """NumPy's divmod: ``(x // y, x % y)``."""
    return floor_divide(x, y), remainder(x, y)


def modf(x):
    """NumPy's modf: the fractional and integral parts, with the sign of *x*."""
    x = asarray(x)
    if x.dtype.kind not in "f":
        x = x.astype(_np.modf(_np.zeros(0, x.dtype))[0].dtype)
    whole = trunc(x)
    frac = copysign(where(isinf(x), 0.0, x - whole), x)
    return frac, whole

# }}}


# {{{ data types

def astype(x, dtype, /, *, copy=True, device=None) -> LazyArray:
    """*x* converted to *dtype* (the Array API's astype)."""
    x = asarray(x)
    if device is not None:
        x = x.to_device(device)
    return x.astype(dtype, copy=copy)


def _dtype_of(x):
    return x.dtype if isinstance(x, LazyArray) else x


def result_type(*arrays_and_dtypes):
    """NumPy's result_type; lazy arrays count by their dtypes."""
    return _np.result_type(*(_dtype_of(x) for x in arrays_and_dtypes))


def can_cast(from_, to, /, casting="safe") -> _builtins.bool:
    """Whether *from_* (a dtype or an array's dtype) casts to *to* under *casting*."""
    return _builtins.bool(_np.can_cast(_dtype_of(from_), to, casting=casting))


def finfo(type, /):                                   # noqa: A002 - the API's name
    """Machine limits of a floating dtype (or of an array's dtype)."""
    return _np.finfo(_dtype_of(type))


def iinfo(type, /):                                   # noqa: A002
    """Machine limits of an integer dtype (or of an array's dtype)."""
    return _np.iinfo(_dtype_of(type))


def isdtype(dtype, kind) -> _builtins.bool:
    """Whether *dtype* is of *kind* (the Array API's isdtype)."""
    return _builtins.bool(_np.isdtype(_np.dtype(dtype), kind))


class _NamespaceInfo:
    """What ``la.__array_namespace_info__()`` returns: lazyarray's devices and
    dtypes, for the Array API's inspection functions."""

    _KINDS = {"bool": ("bool",), "signed integer": ("int8", "int16", "int32", "int64"),
              "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
              "real floating": ("float32", "float64"),
              "complex floating": ("complex64", "complex128")}
    _KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
    _KINDS["numeric"] = (_KINDS["integral"] + _KINDS["real floating"]
                         + _KINDS["complex floating"])

    def capabilities(self) -> dict:
        return {"boolean indexing": False, "data-dependent shapes": True,
                "max dimensions": None}

    def default_device(self) -> Device:
        from lazyarray.runtime import default_queue
        return Device(default_queue().device)

    def devices(self) -> list:
        return [self.default_device()]

    def default_dtypes(self, *, device=None) -> dict:
        return {"real floating": _np.dtype(_np.float64),
                "complex floating": _np.dtype(_np.complex128),
                "integral": _np.dtype(_np.int64), "indexing": _np.dtype(_np.int64)}

    def dtypes(self, *, device=None, kind=None) -> dict:
        if kind is None:
            names = self._KINDS["bool"] + self._KINDS["numeric"]
        else:
            kinds = (kind,) if isinstance(kind, str) else tuple(kind)
            names = []
            for k in kinds:
                if k not in self._KINDS:
                    raise ValueError(f"unknown dtype kind {k!r}")
                names += [n for n in self._KINDS[k] if n not in names]
        return {n: _np.dtype(n) for n in names}


def __array_namespace_info__() -> _NamespaceInfo:
    """The Array API inspection object (devices, default and supported dtypes)."""
    return _NamespaceInfo()

# }}}


# {{{ creation

def _check_device(device) -> None:
    if device is not None and device != __array_namespace_info__().default_device():
        raise LazyArrayError(f"lazyarray uses one device; cannot place an array on "
                             f"{device!r}")


def full(shape, fill_value, dtype=None, *, device=None) -> LazyArray:
    """An array of *shape* filled with *fill_value* (NumPy's full)."""
    _check_device(device)
    return LazyArray(_construct.full(shape, fill_value, dtype))


def zeros(shape, dtype=None, *, device=None) -> LazyArray:
    return full(shape, 0, float if dtype is None else dtype, device=device)


def ones(shape, dtype=None, *, device=None) -> LazyArray:
    return full(shape, 1, float if dtype is None else dtype, device=device)


def empty(shape, dtype=None, *, device=None) -> LazyArray:
    """Like :func:`zeros` (lazy arrays are never uninitialized)."""
    return zeros(shape, dtype, device=device)


def full_like(x, fill_value, dtype=None, shape=None, *, device=None) -> LazyArray:
    x = asarray(x)
    return full(x.shape if shape is None else shape, fill_value,
                x.dtype if dtype is None else dtype, device=device)


def zeros_like(x, dtype=None, shape=None, *, device=None) -> LazyArray:
    return full_like(x, 0, dtype, shape, device=device)


def ones_like(x, dtype=None, shape=None, *, device=None) -> LazyArray:
    return full_like(x, 1, dtype, shape, device=device)


def empty_like(x, dtype=None, shape=None, *, device=None) -> LazyArray:
    return zeros_like(x, dtype, shape, device=device)


def from_dlpack(x, /, *, device=None, copy=None) -> LazyArray:
    """A lazy array with the values of *x*, any object with ``__dlpack__``
    (read through NumPy, then copied to the device)."""
    _check_device(device)
    if isinstance(x, LazyArray):
        return x
    if copy is False:
        raise ValueError("from_dlpack(copy=False): lazyarray always copies to its device")
    return asarray(_np.from_dlpack(x))


def meshgrid(*arrays, indexing="xy", sparse=False, copy=True) -> list[LazyArray]:
    """Coordinate arrays from 1-D *arrays* (NumPy's meshgrid, as views)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    arrays = [asarray(a).reshape(-1) for a in arrays]
    n = len(arrays)
    shapes = [(1,) * k + (-1,) + (1,) * (n - k - 1) for k in range(n)]
    if indexing == "xy" and n > 1:
        shapes[0], shapes[1] = ((1, -1) + (1,) * (n - 2), (-1, 1) + (1,) * (n - 2))
    grids = [a.reshape(s) for a, s in zip(arrays, shapes)]
    if sparse:
        return grids
    return broadcast_arrays(*grids)


def _band(n_rows, n_cols, k, lower: _builtins.bool) -> LazyArray:
    """Whether each element of an ``n_rows x n_cols`` matrix is on or below
    (*lower*) / above the *k*-th diagonal."""
    rows = LazyArray(_construct.iota((n_rows, n_cols), 0))
    cols = LazyArray(_construct.iota((n_rows, n_cols), 1))
    return cols <= rows + int(k) if lower else cols >= rows + int(k)


def tri(N, M=None, k=0, dtype=float) -> LazyArray:
    """Ones at and below the *k*-th diagonal (NumPy's tri)."""
    return _band(int(N), int(N if M is None else M), k, True).astype(
        float if dtype is None else dtype)


def tril(x, k=0) -> LazyArray:
    """*x* with the elements above the *k*-th diagonal zeroed (last two axes)."""
    x = asarray(x)
    if x.ndim < 2:
        raise ShapeError("tril needs an array of at least 2 dimensions")
    return where(_band(x.shape[-2], x.shape[-1], k, True), x, zeros((), x.dtype))


def triu(x, k=0) -> LazyArray:
    """*x* with the elements below the *k*-th diagonal zeroed (last two axes)."""
    x = asarray(x)
    if x.ndim < 2:
        raise ShapeError("triu needs an array of at least 2 dimensions")
    return where(_band(x.shape[-2], x.shape[-1], k, False), x, zeros((), x.dtype))


def arange(start, stop=None, step=1, dtype=None, *, device=None) -> LazyArray:
    """Evenly spaced values in ``[start, stop)`` (NumPy's arange)."""
    _check_device(device)
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    natural = _np.result_type(start, stop, step)
    length = _builtins.max(0, int(_np.ceil((stop - start) / step)))
    index = LazyArray(_construct.iota((length,), 0))
    if natural.kind in "iub":
        values = index * int(step) + int(start)
    else:
        values = index * float(step) + float(start)
    return values.astype(natural if dtype is None else dtype)


def linspace(start, stop, num=50, endpoint=True, dtype=None, *, device=None) -> LazyArray:
    """*num* evenly spaced values from *start* to *stop* (NumPy's linspace)."""
    _check_device(device)
    num = int(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    index = LazyArray(_construct.iota((num,), 0))
    values = index * float(step) + float(start)
    if endpoint and num > 1:
        values = where(index == num - 1, float(stop), values)
    natural = _np.result_type(float(start), float(stop))
    return values.astype(natural if dtype is None else dtype)


def eye(N, M=None, k=0, dtype=None, *, n_cols=None, device=None) -> LazyArray:
    """Ones on the *k*-th diagonal of an ``N x M`` array, zeros elsewhere
    (*n_cols* is the Array API's name of *M*)."""
    _check_device(device)
    dtype = float if dtype is None else dtype
    if n_cols is not None and M is not None:
        raise TypeError("eye(): M and n_cols name the same argument")
    M = n_cols if M is None else M
    shape = (int(N), int(N if M is None else M))
    rows = LazyArray(_construct.iota(shape, 0))
    cols = LazyArray(_construct.iota(shape, 1))
    return (rows + int(k) == cols).astype(dtype)


def identity(n, dtype=None) -> LazyArray:
    return eye(n, dtype=dtype)

# }}}


# {{{ joining

def concatenate(arrays, axis=0, dtype=None) -> LazyArray:
    """*arrays* joined along *axis* (NumPy's concatenate); no copies until used."""
    return LazyArray(_construct.concatenate([asarray(a).node for a in arrays], axis, dtype))


def concat(arrays, /, *, axis=0) -> LazyArray:
    """*arrays* joined along *axis* (the Array API's concat; ``None``: flattened)."""
    return concatenate(arrays, axis=axis)


def unstack(x, /, *, axis=0) -> tuple[LazyArray, ...]:
    """Views of *x* split along *axis* into its slices (the Array API's unstack)."""
    x = asarray(x)
    if x.ndim == 0:
        raise ShapeError("unstack needs an array of at least 1 dimension")
    axis = _manipulate._one_axis(axis, x.ndim)
    head = (slice(None),) * axis
    return tuple(x[head + (k,)] for k in range(x.shape[axis]))


def stack(arrays, axis=0) -> LazyArray:
    """*arrays* of one shape joined along a new *axis* (NumPy's stack)."""
    return LazyArray(_construct.stack([asarray(a).node for a in arrays], axis))


def hstack(arrays) -> LazyArray:
    arrays = [asarray(a) for a in arrays]
    return concatenate(arrays, axis=0 if arrays and arrays[0].ndim == 1 else 1)


def vstack(arrays) -> LazyArray:
    arrays = [asarray(a) for a in arrays]
    return concatenate([a.reshape(1, -1) if a.ndim == 1 else a for a in arrays], axis=0)

# }}}


# {{{ products

def einsum(subscripts: str, *operands) -> LazyArray:
    """NumPy's einsum (subscripts without ellipsis); one fused kernel."""
    return LazyArray(_linalg.einsum(subscripts, *(asarray(x).node for x in operands)))


def _product(name):
    def f(a, b):
        return LazyArray(getattr(_linalg, name)(asarray(a).node, asarray(b).node))
    f.__name__ = name
    f.__doc__ = f"NumPy's {name}, lazily."
    return f


matmul, dot, inner, outer, vdot = (_product(n) for n in
                                   ("matmul", "dot", "inner", "outer", "vdot"))


def tensordot(a, b, axes=2) -> LazyArray:
    """NumPy's tensordot, lazily."""
    return LazyArray(_linalg.tensordot(asarray(a).node, asarray(b).node, axes))


def matrix_transpose(x) -> LazyArray:
    """The transpose of the last two axes (a view)."""
    return asarray(x).mT


def vecdot(x1, x2, /, *, axis=-1) -> LazyArray:
    """Dot products of vectors along *axis* (the first conjugated), broadcast
    over the other axes (NumPy's and the Array API's vecdot)."""
    from lazyarray.array import _node
    return LazyArray(_linalg.vecdot(_node(x1), _node(x2), axis))

# }}}


for _name in _host.HOST_FUNCTIONS:
    if hasattr(_np, _name):
        globals()[_name] = _host.host_function(_name)


# {{{ shape manipulation

def _manipulation(name):
    impl = getattr(_manipulate, name)

    def f(x, *args, **kwargs):
        if name in _VIEW_FUNCTIONS:
            return _VIEW_FUNCTIONS[name](asarray(x), *args, **kwargs)
        return LazyArray(impl(asarray(x).node, *args, **kwargs))
    f.__name__ = name
    f.__doc__ = f"NumPy's {name}, as a view (no copy until used)."
    return f


(broadcast_to, expand_dims, squeeze, moveaxis, swapaxes, flip, roll, tile, repeat,
 pad) = (_manipulation(n) for n in ("broadcast_to", "expand_dims", "squeeze", "moveaxis",
                                     "swapaxes", "flip", "roll", "tile", "repeat", "pad"))


def split(x, indices_or_sections, axis=0) -> list[LazyArray]:
    """NumPy's split: views of consecutive parts along *axis*."""
    return [LazyArray(n) for n in _manipulate.split(asarray(x).node, indices_or_sections,
                                                     axis)]


def broadcast_arrays(*arrays) -> list[LazyArray]:
    from lazyarray.ops.elementwise import broadcast_shapes
    arrays = [asarray(a) for a in arrays]
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return [broadcast_to(a, shape) for a in arrays]


def take(x, indices, axis=None) -> LazyArray:
    """NumPy's take: elements at integer *indices* along *axis*."""
    return asarray(x).take(indices, axis)


def transpose(x, axes=None) -> LazyArray:
    return asarray(x).transpose(axes)


permute_dims = transpose


def reshape(x, shape, *, copy=None) -> LazyArray:
    """NumPy's reshape (C order): a view where NumPy's is one."""
    return asarray(x).reshape(shape, copy=copy)


def ravel(x) -> LazyArray:
    return asarray(x).ravel()

# }}}


__all__ = ["LazyArray", "asarray", "jit", "synchronize", "explain", "to_dot", "where",
           "broadcast_to", "broadcast_arrays", "expand_dims", "squeeze", "moveaxis",
           "swapaxes", "flip", "roll", "tile", "repeat", "pad", "split", "transpose",
           "permute_dims", "reshape", "ravel", "take",
           *[n for n in _host.HOST_FUNCTIONS if hasattr(_np, n)],
           "var", "std", "argmax", "argmin", "count_nonzero", "cumsum", "cumprod",
           "einsum", "matmul", "dot", "inner", "outer", "vdot", "tensordot",
           "full", "zeros", "ones", "empty", "full_like", "zeros_like", "ones_like",
           "empty_like", "arange", "linspace", "eye", "identity",
           "concatenate", "stack", "hstack", "vstack", "sum", "max", "min", "mean", "prod",
           "LazyArrayError", "ShapeError", "DTypeError", "IndexingError", "__version__",
           "ConcretizationError", "ViewWriteError", "copy",
           "float32", "float64", "int32", "int64", "bool_", "complex64", "complex128",
           "uint8", "int8", "int16", "uint32", "uint16", "uint64", "bool",
           "e", "pi", "inf", "nan", "newaxis", "__array_api_version__",
           "__array_namespace_info__", "Device", "all", "any", "cumulative_sum",
           "real", "imag", "round", "around", "clip", "isclose", "allclose",
           "nan_to_num", "angle", "diff", "divmod", "modf", "astype", "result_type",
           "can_cast", "finfo", "iinfo", "isdtype", "from_dlpack", "meshgrid", "tri",
           "tril", "triu", "concat", "unstack", "matrix_transpose", "vecdot",
           *[n for n in _UFUNCS if n in globals()], *_UFUNC_ALIASES]

# the Array API's name of the boolean dtype (last: the module uses the builtin above)
bool = _np.bool_                                      # noqa: A001
