"""la.linalg against numpy.linalg: norms, products and matrix powers on the
device; LAPACK functions on the host (warned, results lazy); np.linalg.f(lazy)
dispatching to la.linalg.f."""

import math

import numpy as np
import pytest

import lazyarray as la
import lazyarray.linalg as lal
from lazyarray import fallback
from tests.arrays import random_array

pytestmark = pytest.mark.filterwarnings("ignore::lazyarray.fallback.LazyArrayHostFallbackWarning")

VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1, -2.5]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, np.inf, -np.inf, 2, -2]


_data = random_array


def _same(got, expected, rtol=None):
    """*got* is lazy and equals NumPy's *expected* (shape, dtype and values)."""
    assert isinstance(got, la.LazyArray), type(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype, \
        (got.shape, expected.shape, got.dtype, expected.dtype)
    if rtol is None:
        rtol = 2e-5 if expected.dtype in (np.float32, np.complex64) else 1e-11
    np.testing.assert_allclose(np.asarray(got), expected, rtol=rtol, atol=rtol)


@pytest.fixture
def fresh_warnings(monkeypatch):
    """Host functions warn again (the warning is given once per name)."""
    monkeypatch.setattr(fallback, "_warned", set())


# {{{ norms

@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_vector_norm_orders(ord):
    a = _data((3, 7), np.float64)
    a[0, 2] = 0.0
    with np.errstate(divide="ignore"):
        expected = np.linalg.norm(a, ord=ord, axis=1)
    _same(lal.norm(la.asarray(a), ord=ord, axis=1), expected)


@pytest.mark.parametrize("dtype,ord", [
    (np.float32, None), (np.float32, 3), (np.complex64, 1), (np.complex64, np.inf),
    (np.complex128, None), (np.complex128, -1), (np.int32, 1), (np.int32, 0)])
def test_vector_norm_dtypes(dtype, ord):
    a = _data((4, 5), dtype)
    _same(lal.norm(la.asarray(a), ord=ord, axis=0, keepdims=ord == 1),
          np.linalg.norm(a, ord=ord, axis=0, keepdims=ord == 1))


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norm_orders(ord):
    a = _data((2, 3, 4), np.float64)
    _same(lal.norm(la.asarray(a), ord=ord, axis=(1, 2)), np.linalg.norm(a, ord=ord, axis=(1, 2)))


@pytest.mark.parametrize("ord,axis", [(1, (2, 0)), (np.inf, (2, 0)), ("fro", (0, 1)),
                                      (-np.inf, (-1, -3)), (2, (0, 2))])
def test_matrix_norm_axes_keepdims_complex(ord, axis):
    a = _data((3, 2, 4), np.complex64)
    _same(lal.norm(la.asarray(a), ord=ord, axis=axis, keepdims=True),
          np.linalg.norm(a, ord=ord, axis=axis, keepdims=True))


@pytest.mark.parametrize("shape,ord,keepdims", [
    ((), None, False), ((5,), None, True), ((2, 3, 4), None, True), ((3, 4), "fro", False),
    ((6,), 2, False), ((0,), None, False), ((3, 4), 1, True), ((3, 4), "nuc", False),
    ((5,), -np.inf, False), ((3, 4), -2, True)])
def test_norm_whole_array(shape, ord, keepdims):
    a = _data(shape, np.float64, seed=3)
    _same(lal.norm(la.asarray(a), ord=ord, keepdims=keepdims),
          np.linalg.norm(a, ord=ord, keepdims=keepdims))


def test_norm_errors():
    x = la.asarray(_data((2, 3, 4), np.float64))
    for kwargs in [dict(ord=1), dict(axis=(0, 1, 2)), dict(ord="nuc", axis=1),
                   dict(ord=3, axis=(0, 1)), dict(ord="abc", axis=(0, 1)), dict(axis=(1, -2))]:
        with pytest.raises(ValueError):
            lal.norm(x, **kwargs)
    with pytest.raises(TypeError):
        lal.norm(x, axis=[0])
    with pytest.raises(ValueError):
        lal.norm(la.asarray(np.zeros((0, 3))), ord=np.inf, axis=0)


@pytest.mark.parametrize("axis,ord,keepdims", [
    (None, 2, False), (None, 1, True), ((0, 2), 2, False), ((2, 0), np.inf, True),
    (1, -np.inf, False), ((0, 1, 2), 0, False), (-1, 3, True)])
def test_vector_norm_function(axis, ord, keepdims):
    a = _data((2, 3, 4), np.float32, seed=1)
    _same(lal.vector_norm(la.asarray(a), axis=axis, ord=ord, keepdims=keepdims),
          np.linalg.vector_norm(a, axis=axis, ord=ord, keepdims=keepdims))


@pytest.mark.parametrize("ord,keepdims", [("fro", False), (1, True), ("nuc", False)])
def test_matrix_norm_function(ord, keepdims):
    a = _data((2, 3, 4), np.complex128, seed=2)
    _same(lal.matrix_norm(la.asarray(a), ord=ord, keepdims=keepdims),
          np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims))

# }}}


# {{{ products and views

def test_products_match_numpy():
    a, b = _data((2, 3, 4), np.float64, 1), _data((4, 5), np.float64, 2)
    u, v = _data((4,), np.complex128, 3), _data((4,), np.complex128, 4)
    A, B = la.asarray(a), la.asarray(b)
    _same(lal.matmul(A, B), np.linalg.matmul(a, b))
    _same(lal.vecdot(la.asarray(u), la.asarray(v)), np.linalg.vecdot(u, v))
    _same(lal.vecdot(A, la.asarray(b[:, 0]), axis=-1), np.linalg.vecdot(a, b[:, 0]))
    _same(lal.tensordot(A, B, axes=1), np.linalg.tensordot(a, b, axes=1))
    _same(lal.tensordot(A, la.asarray(a), axes=([1, 2], [1, 2])),
          np.linalg.tensordot(a, a, axes=([1, 2], [1, 2])))
    _same(lal.matrix_transpose(A), np.linalg.matrix_transpose(a))
    _same(lal.outer(la.asarray(u), la.asarray(v)), np.linalg.outer(u, v))
    with pytest.raises(ValueError):
        lal.outer(A, B)
    with pytest.raises(ValueError):
        lal.matrix_transpose(la.asarray(u))


@pytest.mark.parametrize("shapes", [[(3, 4), (4, 5)], [(4,), (4, 6), (6, 2), (2, 3)],
                                    [(5, 2), (2, 6), (6,)], [(3,), (3, 4), (4,)]])
def test_multi_dot(shapes):
    arrays = [_data(s, np.float64, k) for k, s in enumerate(shapes)]
    _same(lal.multi_dot([la.asarray(a) for a in arrays]), np.linalg.multi_dot(arrays))


def test_cross():
    a, b = _data((4, 3), np.float64, 1), _data((3,), np.float64, 2)
    _same(lal.cross(la.asarray(a), la.asarray(b)), np.linalg.cross(a, b))
    c, d = _data((3, 2), np.float32, 3), _data((3, 2), np.float32, 4)
    _same(lal.cross(la.asarray(c), la.asarray(d), axis=0), np.linalg.cross(c, d, axis=0))
    with pytest.raises(ValueError):
        lal.cross(la.asarray(a[:, :2]), la.asarray(b[:2]))


@pytest.mark.parametrize("shape,offset", [((4, 4), 0), ((3, 5), 2), ((3, 5), -1), ((2, 4, 3), 1),
                                          ((2, 4, 3), -3), ((3, 3), 5)])
def test_diagonal_and_trace(shape, offset):
    a = _data(shape, np.int32)
    x = la.asarray(a)
    _same(lal.diagonal(x, offset=offset), np.linalg.diagonal(a, offset=offset))
    _same(lal.trace(x, offset=offset), np.linalg.trace(a, offset=offset))
    f = a.astype(np.float32)
    _same(lal.trace(la.asarray(f), offset=offset, dtype=np.float64),
          np.linalg.trace(f, offset=offset, dtype=np.float64))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 6, -1, -3])
def test_matrix_power(n):
    a = _data((2, 3, 3), np.float64) + 2 * np.eye(3)
    _same(lal.matrix_power(la.asarray(a), n), np.linalg.matrix_power(a, n), rtol=1e-9)


def test_matrix_power_integers_and_errors():
    a = _data((3, 3), np.int64)
    _same(lal.matrix_power(la.asarray(a), 5), np.linalg.matrix_power(a, 5))
    c = _data((4, 4), np.complex64)
    _same(lal.matrix_power(la.asarray(c), 3), np.linalg.matrix_power(c, 3), rtol=1e-4)
    with pytest.raises(np.linalg.LinAlgError):
        lal.matrix_power(la.asarray(np.ones((2, 3))), 2)
    with pytest.raises(TypeError):
        lal.matrix_power(la.asarray(a), 1.5)

# }}}


# {{{ LAPACK on the host

def _spd(shape, dtype, seed=0):
    a = _data(shape, dtype, seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


HOST_CASES = [
    ("solve", lambda dt: (_spd((2, 3, 3), dt), _data((2, 3, 2), dt, 1)), {}),
    ("inv", lambda dt: (_spd((2, 4, 4), dt),), {}),
    ("det", lambda dt: (_data((3, 3), dt),), {}),
    ("det", lambda dt: (_data((2, 3, 3), dt),), {}),
    ("slogdet", lambda dt: (_data((2, 3, 3), dt),), {}),
    ("eig", lambda dt: (_data((2, 3, 3), dt),), {}),
    ("eigvals", lambda dt: (_data((3, 3), dt),), {}),
    ("eigh", lambda dt: (_spd((2, 3, 3), dt),), {"UPLO": "U"}),
    ("eigvalsh", lambda dt: (_spd((3, 3), dt),), {}),
    ("svd", lambda dt: (_data((2, 4, 3), dt),), {"full_matrices": False}),
    ("svd", lambda dt: (_data((4, 3), dt),), {"compute_uv": False}),
    ("svdvals", lambda dt: (_data((2, 3, 5), dt),), {}),
    ("qr", lambda dt: (_data((2, 5, 3), dt),), {}),
    ("qr", lambda dt: (_data((5, 3), dt),), {"mode": "r"}),
    ("cholesky", lambda dt: (_spd((2, 3, 3), dt),), {}),
    ("cholesky", lambda dt: (_spd((3, 3), dt),), {"upper": True}),
    ("lstsq", lambda dt: (_data((5, 3), dt), _data((5, 2), dt, 1)), {"rcond": None}),
    ("pinv", lambda dt: (_data((2, 4, 3), dt),), {}),
    ("matrix_rank", lambda dt: (_data((2, 4, 3), dt),), {}),
    ("cond", lambda dt: (_data((2, 3, 3), dt),), {}),
    ("cond", lambda dt: (_data((3, 3), dt),), {"p": "fro"}),
    ("tensorinv", lambda dt: (_spd((6, 6), dt).reshape(6, 2, 3),), {"ind": 1}),
    ("tensorsolve", lambda dt: (_spd((6, 6), dt).reshape(2, 3, 6), _data((2, 3), dt)), {}),
]


def _same_result(got, expected):
    if isinstance(expected, tuple):
        assert type(got) is type(expected) and len(got) == len(expected)
        if hasattr(expected, "_fields"):
            assert got._fields == expected._fields
        for g, e in zip(got, expected):
            _same_result(g, e)
        return
    rtol = 1e-4 if np.asarray(expected).dtype in (np.float32, np.complex64) else 1e-10
    _same(got, expected, rtol=rtol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("name,make,kwargs", HOST_CASES,
                         ids=[f"{c[0]}{k}" for k, c in enumerate(HOST_CASES)])
def test_host_functions(name, make, kwargs, dtype, fresh_warnings):
    args = make(dtype)
    expected = getattr(np.linalg, name)(*args, **kwargs)
    with pytest.warns(la.LazyArrayHostFallbackWarning, match=f"la.linalg.{name}"):
        got = getattr(lal, name)(*(la.asarray(a) for a in args), **kwargs)
    _same_result(got, expected)


def test_host_named_tuples_and_docs():
    a = _spd((3, 3), np.float64)
    w, v = lal.eigh(la.asarray(a))
    result = lal.eigh(la.asarray(a))
    assert result.eigenvalues is not None and isinstance(result.eigenvectors, la.LazyArray)
    _same(la.asarray(a) @ v, np.asarray(v) * np.asarray(w))
    assert isinstance(lal.svd(la.asarray(a)).Vh, la.LazyArray)
    assert isinstance(lal.qr(la.asarray(a)).R, la.LazyArray)
    assert isinstance(lal.slogdet(la.asarray(a)).logabsdet, la.LazyArray)
    for name in ["solve", "inv", "det", "slogdet", "eigh", "eigvalsh", "eig", "eigvals", "svd",
                 "svdvals", "qr", "cholesky", "lstsq", "pinv", "matrix_rank", "cond"]:
        assert "host" in getattr(lal, name).__doc__, name


def test_host_input_is_lazy_expression(fresh_warnings):
    a = _spd((3, 3), np.float64)
    b = _data((3,), np.float64)
    with pytest.warns(la.LazyArrayHostFallbackWarning):
        x = lal.solve(la.asarray(a) * 2, la.asarray(b) + 1)
    _same(x, np.linalg.solve(a * 2, b + 1))
    with pytest.raises(np.linalg.LinAlgError):
        lal.inv(la.asarray(np.zeros((2, 2))))


def test_empty_and_singular_inputs():
    _same(lal.inv(la.asarray(np.zeros((0, 2, 2)))), np.linalg.inv(np.zeros((0, 2, 2))))
    _same(lal.det(la.asarray(np.zeros((0, 0)))), np.linalg.det(np.zeros((0, 0))))
    _same(lal.norm(la.asarray(np.zeros((2, 0)))), np.linalg.norm(np.zeros((2, 0))))
    _same(lal.matrix_power(la.asarray(np.zeros((0, 3, 3))), 3),
          np.linalg.matrix_power(np.zeros((0, 3, 3)), 3))

# }}}


# {{{ np.linalg.f(lazy)

def test_numpy_dispatch(fresh_warnings):
    a = _data((3, 4), np.float64)
    x = la.asarray(a)
    got = np.linalg.norm(x, ord=1, axis=0)
    _same(got, np.linalg.norm(a, ord=1, axis=0))
    _same(np.linalg.norm(x), np.linalg.norm(a))
    _same(np.linalg.vector_norm(x, ord=np.inf), np.linalg.vector_norm(a, ord=np.inf))
    _same(np.linalg.matrix_power(la.asarray(a[:, :3]), 2), np.linalg.matrix_power(a[:, :3], 2))
    _same(np.linalg.trace(x), np.linalg.trace(a))
    with pytest.warns(la.LazyArrayHostFallbackWarning, match="la.linalg.svd"):
        s = np.linalg.svd(x, compute_uv=False)
    _same(s, np.linalg.svd(a, compute_uv=False))
    q, r = np.linalg.qr(x)
    assert isinstance(q, la.LazyArray) and isinstance(r, la.LazyArray)
    assert math.isclose(float(np.linalg.det(la.asarray(a[:, :3]))), np.linalg.det(a[:, :3]))

# }}}
