"""Linear algebra for lazy arrays: the names of ``numpy.linalg`` (and of the
Array API's ``linalg`` extension) as ``la.linalg``.

On the device, as lazy expressions that fuse with their neighbours: norms
(``norm``, ``vector_norm``, ``matrix_norm``; the spectral and nuclear matrix
norms take singular values from the host), products (``matmul``, ``vecdot``,
``tensordot``, ``outer``, ``multi_dot``, ``cross``), ``matrix_transpose``,
``diagonal``, ``trace`` and ``matrix_power`` with a non-negative exponent.

On the host, with NumPy's LAPACK (batched as NumPy batches): ``solve``,
``inv``, ``det``, ``slogdet``, ``eig``, ``eigvals``, ``eigh``, ``eigvalsh``,
``svd``, ``svdvals``, ``qr``, ``cholesky``, ``lstsq``, ``pinv``,
``matrix_rank``, ``cond``, ``tensorsolve`` and ``tensorinv``. Their inputs are
computed and copied to the host and their results copied back as lazy arrays
(NumPy's named tuples keep their fields); each warns once with
:class:`~lazyarray.fallback.LazyArrayHostFallbackWarning` and logs every call
(``LAZYARRAY_LOG=info``).

``np.linalg.f(lazy)`` calls ``la.linalg.f`` once this module is imported.
"""

from __future__ import annotations

import math as _math
import operator as _operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index as _normalize_axis_index
from numpy.lib.array_utils import normalize_axis_tuple as _normalize_axis_tuple

from lazyarray.api import linalg as _products
from lazyarray.api.creation import eye
from lazyarray.api.manipulation import broadcast_to, moveaxis, stack
from lazyarray.api.ufuncs import sqrt
from lazyarray.fallback import host_call
from lazyarray.handle import LazyArray, asarray
from lazyarray.host.namespace import install as _install_host_tier

LinAlgError = _np.linalg.LinAlgError

# {{{ helpers


def _inexact(x) -> LazyArray:
    """*x* as a lazy array, integers and booleans as float64 (NumPy's norms)."""
    x = asarray(x)
    if x.dtype.kind not in "fc":
        x = x.astype(_np.float64)
    return x


def _sum_squares(x: LazyArray, axis) -> LazyArray:
    """The sum of ``|x|**2`` over *axis*, in the real dtype of *x*."""
    if x.dtype.kind == "c":
        re, im = x.real, x.imag
        squares = re * re + im * im
    else:
        squares = x * x
    return squares.sum(axis=axis)


def _keep(result: LazyArray, shape: tuple, axes: tuple) -> LazyArray:
    """*result* reshaped as a reduction of *shape* over *axes* with ``keepdims``."""
    return result.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))


def _host_arrays(value: Any) -> Any:
    """NumPy scalars in *value* (a result of NumPy) as 0-d arrays."""
    if isinstance(value, _np.generic):
        return _np.asarray(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_host_arrays(v) for v in value))
    if type(value) is tuple:
        return tuple(_host_arrays(v) for v in value)
    return value


def _on_host(name: str, args: tuple, kwargs: dict | None = None) -> Any:
    """``np.linalg.<name>`` run on the host (warned and logged); arrays back lazy."""
    func: Callable = getattr(_np.linalg, name)
    for a in args:
        if isinstance(a, LazyArray):
            a._refuse_value(f"la.linalg.{name}")    # (while la.jit traces)

    def run(*a, **k):
        return _host_arrays(func(*a, **k))

    run.__name__ = name
    return host_call(run, args, kwargs or {}, f"la.linalg.{name}")

# }}}


# {{{ norms

def _vector_norm(x: LazyArray, ord, axis: int) -> LazyArray:
    """The *ord* norm of the vectors of *x* along *axis* (NumPy's vector orders)."""
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return sqrt(_sum_squares(x, axis))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord == _math.inf:
        return abs(x).max(axis=axis)
    if ord == -_math.inf:
        return abs(x).min(axis=axis)
    if ord == 0:
        return (x != 0).astype(x.real.dtype if x.dtype.kind == "c" else x.dtype).sum(axis=axis)
    if ord == 1:
        return abs(x).sum(axis=axis)
    try:
        p = float(ord)
    except (TypeError, ValueError):
        raise ValueError(f"Invalid norm order '{ord}' for vectors") from None
    return (abs(x) ** p).sum(axis=axis) ** (1.0 / p)


def _singular_values(x: LazyArray, row: int, col: int) -> LazyArray:
    """The singular values of the matrices of *x* in axes (*row*, *col*), on
    the host; the last axis of the result."""
    return svdvals(moveaxis(x, (row, col), (-2, -1)))


def _matrix_norm(x: LazyArray, ord, row: int, col: int) -> LazyArray:
    """The *ord* norm of the matrices of *x* in axes (*row*, *col*)."""
    if row == col:
        raise ValueError("Duplicate axes given.")
    if ord is None or (isinstance(ord, str) and ord in ("fro", "f")):
        return sqrt(_sum_squares(x, (row, col)))
    if isinstance(ord, str):
        if ord == "nuc":
            return _singular_values(x, row, col).sum(axis=-1)
        raise ValueError("Invalid norm order for matrices.")
    if ord in (2, -2):
        s = _singular_values(x, row, col)
        return s.max(axis=-1) if ord == 2 else s.min(axis=-1)
    if ord in (1, -1):
        inner, outer_ = row, col          # column sums, then over the columns
    elif ord in (_math.inf, -_math.inf):
        inner, outer_ = col, row          # row sums, then over the rows
    else:
        raise ValueError("Invalid norm order for matrices.")
    sums = abs(x).sum(axis=inner)
    outer_ -= outer_ > inner
    return sums.max(axis=outer_) if ord > 0 else sums.min(axis=outer_)


def norm(x: Any, ord: Any = None, axis: int | tuple[int, ...] | None = None, keepdims: bool = False
         ) -> LazyArray:
    """NumPy's ``linalg.norm``: a vector norm (*axis* an integer, or ``None``
    for 1-d input) or a matrix norm (*axis* two integers, or ``None`` for 2-d
    input), for every order NumPy takes. ``ord=None`` with ``axis=None`` is the
    2-norm of all elements. Integers are promoted to float64; complex input
    gives its real dtype. Computed on the device, except the singular values
    that ``ord`` 2, -2 and ``'nuc'`` of matrices need (NumPy's SVD on the
    host: copied there and back, with a warning)."""
    x = _inexact(x)
    if axis is None:
        if ord is None or (x.ndim == 2 and isinstance(ord, str) and ord in ("f", "fro")) \
                or (x.ndim == 1 and not isinstance(ord, str) and ord == 2):
            result = sqrt(_sum_squares(x, None))
            return result.reshape((1,) * x.ndim) if keepdims else result
        axes = tuple(range(x.ndim))
    else:
        if not isinstance(axis, tuple):
            try:
                axis = (_operator.index(axis),)
            except TypeError:
                raise TypeError("'axis' must be None, an integer or a tuple of integers") \
                    from None
        axes = axis
    if len(axes) == 1:
        a = _normalize_axis_index(axes[0], x.ndim)
        result = _vector_norm(x, ord, a)
        kept = (a,)
    elif len(axes) == 2:
        row, col = (_normalize_axis_index(a, x.ndim) for a in axes)
        result = _matrix_norm(x, ord, row, col)
        kept = (row, col)  # type: ignore[assignment]
    else:
        raise ValueError("Improper number of dimensions to norm.")
    return _keep(result, x.shape, kept) if keepdims else result


def vector_norm(x: Any, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                ord: Any = 2) -> LazyArray:
    """The Array API's ``vector_norm``: the *ord* norm over *axis* (``None``:
    all elements; a tuple: those axes taken as one vector), on the device."""
    x = _inexact(x)
    shape = x.shape
    if axis is None:
        axes = tuple(range(x.ndim))
        flat = x.reshape(-1)
    else:
        axes = _normalize_axis_tuple(axis, x.ndim)
        rest = [i for i in range(x.ndim) if i not in axes]
        moved = moveaxis(x, axes, tuple(range(len(axes))))
        flat = moved.reshape((_math.prod(shape[i] for i in axes), *(shape[i] for i in rest)))
    result = norm(flat, ord=ord, axis=0)
    return _keep(result, shape, axes) if keepdims else result


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> LazyArray:
    """The Array API's ``matrix_norm``: the *ord* norm of the matrices in the
    last two axes (singular-value orders on the host, see :func:`norm`)."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)

# }}}


# {{{ products and views

def matmul(x1: Any, x2: Any, /) -> LazyArray:
    """The matrix product, batched and broadcast (NumPy's ``matmul``), lazily."""
    return _products.matmul(x1, x2)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> LazyArray:
    """Dot products along *axis*, the first argument conjugated, lazily."""
    return _products.vecdot(x1, x2, axis=axis)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> LazyArray:
    """NumPy's ``tensordot`` (sums over *axes*), lazily."""
    return _products.tensordot(x1, x2, axes)


def matrix_transpose(x: Any, /) -> LazyArray:
    """The matrices of *x* (last two axes) transposed: a view."""
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return x.mT


def outer(x1: Any, x2: Any, /) -> LazyArray:
    """The outer product of two vectors (1-d arrays), lazily."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError("Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} and x2.ndim={x2.ndim}.")
    return _products.outer(x1, x2)


def multi_dot(arrays: Sequence, *, out: Any = None) -> LazyArray:
    """The product of a chain of matrices (the first and last may be vectors),
    lazily; the products are taken in the order that needs the fewest
    multiplications."""
    arrays = [asarray(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    first_vector, last_vector = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vector:
        arrays[0] = arrays[0].reshape((1, -1))
    if last_vector:
        arrays[-1] = arrays[-1].reshape((-1, 1))
    for a in arrays:
        if a.ndim != 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    result = _chain(arrays)
    if first_vector or last_vector:
        result = result.reshape(result.shape[first_vector:2 - last_vector])
    if out is not None:
        out[...] = result
        return out
    return result


def _chain(arrays: list[LazyArray]) -> LazyArray:
    """The product of 2-d *arrays*, parenthesized by the cheapest order."""
    dims = [arrays[0].shape[0]] + [a.shape[1] for a in arrays]
    n = len(arrays)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = _math.inf  # type: ignore[call-overload]
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    return _chain_product(arrays, split, 0, n - 1)


def _chain_product(arrays: list[LazyArray], split: list[list[int]], i: int, j: int
                   ) -> LazyArray:
    """The product of ``arrays[i:j + 1]`` split as *split* says (a function
    of the module, not a recursive closure, whose cell would keep the
    arrays alive until the cycle collector ran)."""
    if i == j:
        return arrays[i]
    k = split[i][j]
    return _products.matmul(_chain_product(arrays, split, i, k),
                            _chain_product(arrays, split, k + 1, j))


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> LazyArray:
    """Cross products of 3-element vectors along *axis* (broadcast), lazily."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim == 0 or x2.ndim == 0 or x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they are {x1.shape[axis] if x1.ndim else 0} and "
                         f"{x2.shape[axis] if x2.ndim else 0} dimensional instead.")
    a, b = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    result = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(result, -1, _normalize_axis_index(axis, result.ndim))


def _diagonal(x, offset: int = 0, axis1: int = 0, axis2: int = 1) -> LazyArray:
    """The diagonal of *x* in the plane (*axis1*, *axis2*) as its last axis,
    the other axes first: ``x[..., i, i + offset]``."""
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    a1, a2 = _normalize_axis_index(axis1, x.ndim), _normalize_axis_index(axis2, x.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    x = moveaxis(x, (a1, a2), (-2, -1))
    n, m = x.shape[-2:]
    offset = _operator.index(offset)
    if offset >= 0:
        start, length = offset, max(0, min(n, m - offset))
    else:
        start, length = -offset * m, max(0, min(n + offset, m))
    flat = x.reshape((*x.shape[:-2], n * m))
    if length == 0:
        return flat[..., 0:0]
    return flat[..., start:start + (length - 1) * (m + 1) + 1:m + 1]


def diagonal(x: Any, /, *, offset: int = 0) -> LazyArray:
    """The diagonals of the matrices of *x* (last two axes), *offset* above
    the main one (below if negative), lazily."""
    return _diagonal(x, offset, -2, -1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> LazyArray:
    """The sums of the diagonals of the matrices of *x* (last two axes), in
    NumPy's sum dtype (or *dtype*), lazily."""
    return _diagonal(x, offset, -2, -1).sum(axis=-1, dtype=dtype)


def matrix_power(a: Any, n: int) -> LazyArray:
    """The matrices of *a* (last two axes, square) to the integer power *n*:
    repeated matrix products on the device (squaring); a negative *n* first
    inverts *a* on the host (see :func:`inv`)."""
    a = asarray(a)
    if a.ndim < 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least "
                          "two-dimensional")
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    try:
        n = _operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n == 0:
        return broadcast_to(eye(a.shape[-1], dtype=a.dtype), a.shape).copy()
    if n < 0:
        a, n = inv(a), -n
    result, square = None, a
    while True:
        if n & 1:
            result = square if result is None else _products.matmul(result, square)
        n >>= 1
        if not n:
            break
        square = _products.matmul(square, square)
    return result.copy() if result is a else result  # type: ignore[return-value]

# }}}


# {{{ LAPACK on the host

_HOST_NOTE = ("Runs NumPy's LAPACK on the host: the input is computed and copied "
              "there, the result copied back (a LazyArrayHostFallbackWarning the first "
              "time, a log line each call).")


def solve(a: Any, b: Any) -> LazyArray:
    """The solutions x of ``a @ x = b`` (batched as NumPy's ``solve``)."""
    return _on_host("solve", (a, b))


def inv(a: Any) -> LazyArray:
    """The inverses of the square matrices of *a*."""
    return _on_host("inv", (a,))


def det(a: Any) -> LazyArray:
    """The determinants of the square matrices of *a*."""
    return _on_host("det", (a,))


def slogdet(a: Any) -> Any:
    """``SlogdetResult(sign, logabsdet)``: signs and logarithms of the absolute
    determinants of the square matrices of *a* (lazy arrays)."""
    return _on_host("slogdet", (a,))


def eig(a: Any) -> Any:
    """``EigResult(eigenvalues, eigenvectors)`` of the square matrices of *a*
    (complex where any eigenvalue is)."""
    return _on_host("eig", (a,))


def eigvals(a: Any) -> LazyArray:
    """The eigenvalues of the square matrices of *a*."""
    return _on_host("eigvals", (a,))


def eigh(a: Any, UPLO: str = "L") -> Any:
    """``EighResult(eigenvalues, eigenvectors)`` of the Hermitian matrices of
    *a* (the *UPLO* triangle read), eigenvalues ascending."""
    return _on_host("eigh", (a,), {"UPLO": UPLO})


def eigvalsh(a: Any, UPLO: str = "L") -> LazyArray:
    """The eigenvalues (ascending) of the Hermitian matrices of *a*."""
    return _on_host("eigvalsh", (a,), {"UPLO": UPLO})


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
        ) -> Any:
    """``SVDResult(U, S, Vh)`` of the matrices of *a* (only ``S`` if not
    *compute_uv*)."""
    return _on_host("svd", (a,), {"full_matrices": full_matrices, "compute_uv": compute_uv,
                                  "hermitian": hermitian})


def svdvals(x: Any, /) -> LazyArray:
    """The singular values (descending) of the matrices of *x*."""
    return _on_host("svdvals", (x,))


def qr(a: Any, mode: str = "reduced") -> Any:
    """``QRResult(Q, R)`` of the matrices of *a* (NumPy's *mode* values)."""
    return _on_host("qr", (a,), {"mode": mode})


def cholesky(a: Any, /, *, upper: bool = False) -> LazyArray:
    """The Cholesky factors (lower, or upper if *upper*) of the Hermitian
    positive-definite matrices of *a*."""
    return _on_host("cholesky", (a,), {"upper": upper})


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple:
    """``(x, residuals, rank, s)``: the least-squares solution of ``a @ x = b``
    (NumPy's ``lstsq``; *rank* a 0-d lazy array)."""
    return _on_host("lstsq", (a, b), {"rcond": rcond})


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> LazyArray:
    """The Moore-Penrose pseudo-inverses of the matrices of *a* (NumPy's
    *rcond*, *hermitian* and *rtol*)."""
    extra = {} if rtol is None else {"rtol": rtol}
    return _on_host("pinv", (a,), {"rcond": rcond, "hermitian": hermitian, **extra})


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> LazyArray:
    """The ranks of the matrices of *A* (singular values above the tolerance)."""
    return _on_host("matrix_rank", (A,), {"tol": tol, "hermitian": hermitian, "rtol": rtol})


def cond(x: Any, p: Any = None) -> LazyArray:
    """The condition numbers of the matrices of *x* in the norm *p*."""
    return _on_host("cond", (x,), {"p": p})


def tensorsolve(a: Any, b: Any, axes: Any = None) -> LazyArray:
    """The x of ``tensordot(a, x, axes=x.ndim) = b`` (NumPy's ``tensorsolve``)."""
    return _on_host("tensorsolve", (a, b), {"axes": axes})


def tensorinv(a: Any, ind: int = 2) -> LazyArray:
    """The inverse of *a* under ``tensordot`` over its first *ind* axes."""
    return _on_host("tensorinv", (a,), {"ind": ind})


for _f in (solve, inv, det, slogdet, eig, eigvals, eigh, eigvalsh, svd, svdvals, qr, cholesky,
           lstsq, pinv, matrix_rank, cond, tensorsolve, tensorinv):
    _f.__doc__ = f"{_f.__doc__}\n\n    {_HOST_NOTE}"

# }}}


__all__ = ["LinAlgError", "norm", "vector_norm", "matrix_norm", "matmul", "vecdot",
           "tensordot", "matrix_transpose", "outer", "multi_dot", "cross", "diagonal",
           "trace", "matrix_power", "solve", "inv", "det", "slogdet", "eig", "eigvals", "eigh",
           "eigvalsh", "svd", "svdvals", "qr", "cholesky", "lstsq", "pinv", "matrix_rank",
           "cond", "tensorsolve", "tensorinv"]


# the host tier in front of the functions (NumPy's on host arrays)
_install_host_tier(globals(), _np.linalg, __all__)


def __dir__() -> list[str]:
    """The namespace's API (its helpers and imports are private)."""
    return sorted(__all__)
