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

from lazyarray.array import LazyArray, asarray
from lazyarray.errors import DTypeError, IndexingError, LazyArrayError, ShapeError
from lazyarray.explain import explain, to_dot
from lazyarray.jit import jit
from lazyarray.ops import construct as _construct
from lazyarray.ops import host as _host
from lazyarray.ops import linalg as _linalg
from lazyarray.ops import manipulate as _manipulate
from lazyarray.ops.elementwise import ELEMENTWISE as _ELEMENTWISE

__version__ = "0.1.0"

float32, float64, int32, int64, bool_ = (_np.float32, _np.float64, _np.int32, _np.int64,
                                         _np.bool_)
complex64, complex128, uint8, int8, int16, uint32 = (
    _np.complex64, _np.complex128, _np.uint8, _np.int8, _np.int16, _np.uint32)


def _ufunc_function(name):
    def f(*args):
        return getattr(_np, name)(*(asarray(a) if not isinstance(a, (int, float, complex))
                                    else a for a in args))
    f.__name__ = name
    f.__doc__ = f"NumPy's {name}, lazily."
    return f


for _name in _ELEMENTWISE:
    if _name not in ("where",) and hasattr(_np, _name):
        globals()[_name] = _ufunc_function(_name)


def where(condition, x, y) -> LazyArray:
    """Elements of *x* where *condition* holds, else of *y* (NumPy's where)."""
    from lazyarray.array import _node
    from lazyarray.ops.elementwise import elementwise
    return LazyArray(elementwise("where", _node(condition), _node(x), _node(y)))


def sum(x, axis=None, keepdims=False, dtype=None):   # noqa: A001 - NumPy's name
    return asarray(x).sum(axis, keepdims, dtype)


def max(x, axis=None, keepdims=False):                # noqa: A001
    return asarray(x).max(axis, keepdims)


def min(x, axis=None, keepdims=False):                # noqa: A001
    return asarray(x).min(axis, keepdims)


def mean(x, axis=None, keepdims=False, dtype=None):
    return asarray(x).mean(axis, keepdims, dtype)


def prod(x, axis=None, keepdims=False, dtype=None):
    return asarray(x).prod(axis, keepdims, dtype)


def var(x, axis=None, dtype=None, ddof=0, keepdims=False):
    return asarray(x).var(axis, dtype, ddof, keepdims)


def std(x, axis=None, dtype=None, ddof=0, keepdims=False):
    return asarray(x).std(axis, dtype, ddof, keepdims)


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


def count_nonzero(x, axis=None, keepdims=False):
    """The number of non-zero elements (NumPy's count_nonzero)."""
    from lazyarray.ops.reductions import count_nonzero as _count
    return LazyArray(_count(asarray(x).node, axis, keepdims))


# {{{ creation

def full(shape, fill_value, dtype=None) -> LazyArray:
    """An array of *shape* filled with *fill_value* (NumPy's full)."""
    return LazyArray(_construct.full(shape, fill_value, dtype))


def zeros(shape, dtype=float) -> LazyArray:
    return full(shape, 0, dtype)


def ones(shape, dtype=float) -> LazyArray:
    return full(shape, 1, dtype)


def empty(shape, dtype=float) -> LazyArray:
    """Like :func:`zeros` (lazy arrays are never uninitialized)."""
    return zeros(shape, dtype)


def full_like(x, fill_value, dtype=None, shape=None) -> LazyArray:
    x = asarray(x)
    return full(x.shape if shape is None else shape, fill_value,
                x.dtype if dtype is None else dtype)


def zeros_like(x, dtype=None, shape=None) -> LazyArray:
    return full_like(x, 0, dtype, shape)


def ones_like(x, dtype=None, shape=None) -> LazyArray:
    return full_like(x, 1, dtype, shape)


def empty_like(x, dtype=None, shape=None) -> LazyArray:
    return zeros_like(x, dtype, shape)


def arange(start, stop=None, step=1, dtype=None) -> LazyArray:
    """Evenly spaced values in ``[start, stop)`` (NumPy's arange)."""
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


def linspace(start, stop, num=50, endpoint=True, dtype=None) -> LazyArray:
    """*num* evenly spaced values from *start* to *stop* (NumPy's linspace)."""
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


def eye(N, M=None, k=0, dtype=float) -> LazyArray:
    """Ones on the *k*-th diagonal of an ``N x M`` array, zeros elsewhere."""
    shape = (int(N), int(N if M is None else M))
    rows = LazyArray(_construct.iota(shape, 0))
    cols = LazyArray(_construct.iota(shape, 1))
    return (rows + int(k) == cols).astype(dtype)


def identity(n, dtype=float) -> LazyArray:
    return eye(n, dtype=dtype)

# }}}


# {{{ joining

def concatenate(arrays, axis=0, dtype=None) -> LazyArray:
    """*arrays* joined along *axis* (NumPy's concatenate); no copies until used."""
    return LazyArray(_construct.concatenate([asarray(a).node for a in arrays], axis, dtype))


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

# }}}


for _name in _host.HOST_FUNCTIONS:
    if hasattr(_np, _name):
        globals()[_name] = _host.host_function(_name)


# {{{ shape manipulation

def _manipulation(name):
    impl = getattr(_manipulate, name)

    def f(x, *args, **kwargs):
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


def reshape(x, shape) -> LazyArray:
    return asarray(x).reshape(shape)


def ravel(x) -> LazyArray:
    return asarray(x).ravel()

# }}}


__all__ = ["LazyArray", "asarray", "jit", "explain", "to_dot", "where",
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
           "float32", "float64", "int32", "int64", "bool_", "complex64", "complex128",
           "uint8", "int8", "int16", "uint32", *[n for n in _ELEMENTWISE if n in globals()]]
