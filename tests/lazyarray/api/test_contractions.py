"""matmul, dot, einsum and friends against NumPy; one kernel per contraction."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarray as la
from lazyarray import target as la_target
from tests.helpers import counting

_SETTINGS = settings(max_examples=25)
#: test_matmul_matches_numpy by default (every example compiles kernels of its
#: own); its ``_many`` twin, ``slow``, runs _SETTINGS
_FEW = settings(max_examples=10)


def _rand(shape, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-5, 5, shape).astype(dtype)
    return rng.random(shape).astype(dtype)


_MATMUL_ARGS = (
    st.lists(st.integers(1, 3), min_size=0, max_size=2), st.integers(1, 5),
    st.integers(1, 5), st.integers(1, 5), st.sampled_from(["mm", "vm", "mv", "vv"]),
    st.sampled_from([np.float32, np.float64, np.int32]))


@_FEW
@given(*_MATMUL_ARGS)
def test_matmul_matches_numpy(batch, n, k, m, kind, dtype):
    _check_matmul(batch, n, k, m, kind, dtype)


@pytest.mark.slow
@_SETTINGS
@given(*_MATMUL_ARGS)
def test_matmul_matches_numpy_many(batch, n, k, m, kind, dtype):
    _check_matmul(batch, n, k, m, kind, dtype)


def _check_matmul(batch, n, k, m, kind, dtype):
    a_shape = (k,) if kind[0] == "v" else (*batch, n, k)
    b_shape = (k,) if kind[1] == "v" else (*batch[1:], k, m)
    a, b = _rand(a_shape, dtype, 1), _rand(b_shape, dtype, 2)
    got = la.asarray(a) @ la.asarray(b)
    expected = a @ b
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5)


@pytest.mark.parametrize("spec,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->", [(3, 4)]),
    ("i,i->", [(6,), (6,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ijk,kj->i", [(2, 3, 4), (4, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("iij->j", [(3, 3, 2)]),
])
def test_einsum_matches_numpy(queue, spec, shapes):
    ops = [_rand(s, seed=k) for k, s in enumerate(shapes)]
    got = la.einsum(spec, *(la.asarray(o) for o in ops))
    np.testing.assert_allclose(np.asarray(got), np.einsum(spec, *ops), rtol=1e-12)
    # through NumPy's own function
    assert isinstance(np.einsum(spec, *(la.asarray(o) for o in ops)), la.LazyArray)


def test_products_match_numpy(queue):
    a, b, v = _rand((3, 4)), _rand((4, 5), seed=1), _rand(4, seed=2)
    A, B = _rand((2, 3, 4), seed=3), _rand((5, 4, 2), seed=4)
    np.testing.assert_allclose(la.dot(a, b).get(), np.dot(a, b))
    np.testing.assert_allclose(la.dot(A, B).get(), np.dot(A, B))
    np.testing.assert_allclose(float(la.dot(v, v)), np.dot(v, v))
    np.testing.assert_allclose(la.dot(2.0, v).get(), np.dot(2.0, v))
    np.testing.assert_allclose(la.inner(a, a).get(), np.inner(a, a))
    np.testing.assert_allclose(la.outer(v, b).get(), np.outer(v, b))
    np.testing.assert_allclose(float(la.vdot(a, a)), np.vdot(a, a))
    np.testing.assert_allclose(la.tensordot(A, B, axes=([2], [1])).get(),
                               np.tensordot(A, B, axes=([2], [1])))
    np.testing.assert_allclose(la.tensordot(a, a.T, axes=1).get(), np.tensordot(a, a.T, 1))
    np.testing.assert_allclose((v @ la.asarray(b)).get(), v @ b)
    np.testing.assert_allclose(la.asarray(a).dot(b).get(), a.dot(b))


def test_fused_contraction_is_one_kernel(queue):
    a, b = _rand((8, 6), np.float32), _rand((6, 7), np.float32, 1)
    x, y = la.asarray(a), la.asarray(b)
    with counting() as ran:
        got = ((x - 1) @ (y * 2)).get()
    assert ran.launches == 1
    np.testing.assert_allclose(got, (a - 1) @ (b * 2), rtol=1e-5)


def test_expensive_operands_of_contractions_are_stored(queue):
    """An exponential read by every column of a product (7 times per element
    here) is computed once into storage, then multiplied (at 256^3 on PoCL
    0.5 ms against 1.8 ms fused); cheap operands stay fused (above)."""
    a, b = _rand((8, 6), np.float32), _rand((6, 7), np.float32, 1)
    x, y = la.asarray(a), la.asarray(b)
    with counting() as ran:
        got = (np.exp(x) @ (y * 2)).get()
    assert ran.launches == 2
    np.testing.assert_allclose(got, np.exp(a) @ (b * 2), rtol=1e-5)


@pytest.mark.parametrize("spelling", ["matmul", "dot", "einsum"])
def test_an_array_times_its_own_transpose_is_a_blocked_product(queue, spelling):
    """X.T @ X reads one array as both operands: its second reading is stored
    (one copy), so that the product is the blocked contraction of two arrays
    (was a generic reduction: 280 ms against NumPy's 13 ms at 2000 x 800 on
    PoCL, 21 ms since)."""
    a = _rand((64, 48))
    x = la.asarray(a)
    product = {"matmul": lambda: x.T @ x, "dot": lambda: la.dot(x.T, x),
               "einsum": lambda: la.einsum("ij,ik->jk", x, x)}[spelling]()
    assert "an operand a product reads as both of its operands" in la.explain(
        product, print_it=False)
    with counting() as ran:
        got = product.get()
    assert ran.launches == 2
    np.testing.assert_allclose(got, a.T @ a, rtol=1e-12)


def test_a_transposed_right_operand_is_packed_on_cpus(queue):
    """A @ U.T: a CPU's product reads B's rows as vectors, so B is stored
    transposed first (295 ms -> 17 ms at 800 x 2000 on PoCL); a GPU stages
    it itself (one kernel)."""
    a, u = _rand((40, 32)), _rand((48, 32), seed=1)
    x, y = la.asarray(a), la.asarray(u)
    cpu = la_target.Target.of_queue(queue).kind == "cpu"
    assert ("packed for vector loads" in la.explain(x @ y.T, print_it=False)) == cpu
    with counting() as ran:
        got = (x @ y.T).get()
    assert ran.launches == (2 if cpu else 1)
    np.testing.assert_allclose(got, a @ u.T, rtol=1e-12)


def test_contraction_errors_name_the_problem():
    with pytest.raises(la.ShapeError, match="mismatch in its core dimension"):
        la.matmul(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(la.ShapeError, match="scalars are not allowed"):
        la.matmul(np.ones(3), 2.0)
    with pytest.raises(la.ShapeError, match="label 'j' has sizes"):
        la.einsum("ij,jk", np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(la.ShapeError, match="names 2"):
        la.einsum("ij", np.ones(3))
    with pytest.raises(la.ShapeError, match="one '...' at most"):
        la.einsum("..i->i", np.ones((2, 3)))
    with pytest.raises(la.ShapeError, match="must appear in the output"):
        la.einsum("...i->i", np.ones((2, 3)))
    with pytest.raises(la.ShapeError, match="label 'a' has sizes 2 and 3"):
        la.einsum("...ij,...jk", np.ones((2, 3, 4)), np.ones((3, 4, 5)))
    with pytest.raises(la.ShapeError, match="do not appear"):
        la.einsum("ij->k", np.ones((2, 3)))


@pytest.mark.parametrize("spec, shapes", [
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 3, 4), (1, 4, 5)]),          # broadcast ellipsis
    ("ij...->...", [(3, 4, 2, 5)]),
    ("...i,...i->...", [(3, 4), (4,)]),
    ("i...,i...", [(3, 2), (3, 2)]),
    ("ba...->...ab", [(2, 3, 4)]),
    ("...i->i", [(3,)]),                              # an empty ellipsis
])
def test_einsum_ellipsis_matches_numpy(spec, shapes):
    rng = np.random.default_rng(5)
    args = [rng.random(s) for s in shapes]
    got = np.asarray(la.einsum(spec, *(la.asarray(a) for a in args)))
    expected = np.einsum(spec, *args)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("n, k, m", [(37, 20, 16), (13, 9, 48), (30, 33, 96), (6, 64, 160),
                                     (25, 17, 256)])
def test_cpu_register_blocked_products(device_layouts, n, k, m):
    """The CPU's blocked products: as many vectors per work-item as divide the
    columns, rows in blocks with a ragged last one; NumPy's values."""
    import kernelcore as lp
    from lazyarray.lower import contraction as lower_contraction
    from lazyarray.run import steps as runtime
    device_layouts("cpu", 2)
    a, b = _rand((n, k), np.float32, 3), _rand((k, m), np.float32, 4)
    z = la.asarray(a) @ la.asarray(b)
    [step] = runtime.plan([z.node])
    code = lp.generate_code_v2(step.kernel).device_code()
    width = lower_contraction.CPU_WIDTH
    vectors = lower_contraction.CPU_VECTORS
    while m % (vectors * width):
        vectors //= 2
    [accumulators] = re.findall(rf"float{width} acc_\w+\[(\d+)\]", code)
    assert int(accumulators) == lower_contraction.CPU_ROWS * vectors
    assert f"vload{width}" in code
    np.testing.assert_allclose(np.asarray(z), a.astype(np.float64) @ b, rtol=1e-5)


@pytest.mark.parametrize("n, k, m, dtype, batch", [
    (128, 16, 128, np.float32, ()), (130, 17, 129, np.float32, ()),
    (128, 32, 256, np.float64, (2,))])
def test_gpu_blocked_products(monkeypatch, n, k, m, dtype, batch, fresh_kernels):
    """The GPU's blocked products (run here on the CPU device): each
    work-item's outputs in runs of RUN neighbours, A's slab transposed, the
    columns' run one vector of aligned local memory; NumPy's values, ragged
    edges included."""
    import kernelcore as lp
    from lazyarray.lower import contraction as lower_contraction
    from lazyarray.run import steps as runtime
    monkeypatch.setattr(la_target, "device_profile", lambda device: ("gpu", 4))
    monkeypatch.setattr(la_target, "_TARGETS", {})
    fresh_kernels()
    monkeypatch.setattr(runtime, "_PLANS", {})
    a, b = _rand((*batch, n, k), dtype, 5), _rand((*batch, k, m), dtype, 6)
    z = la.asarray(a) @ la.asarray(b)
    [step] = runtime.plan([z.node])
    code = lp.generate_code_v2(step.kernel).device_code()
    run = lower_contraction.RUN
    ctype = "float" if dtype == np.float32 else "double"
    assert f"*(__local {ctype}{run} *)" in code and "__local" in code
    group, block = lower_contraction.GROUP, lower_contraction.BLOCK
    pad = lower_contraction.A_PAD
    rows = group[0] * block[0]
    # (A's slab holds K_TILE rows of `rows` words, each padded by A_PAD but the last)
    assert f"{ctype} in0_slab[{(lower_contraction.K_TILE - 1) * (rows + pad) + rows}]" in code
    np.testing.assert_allclose(np.asarray(z), a.astype(np.float64) @ b, rtol=1e-5)


def test_contractions_of_two_3d_operands_with_two_free_axes_each():
    rng = np.random.default_rng(4)
    t, u = rng.random((4, 30, 40)), rng.random((40, 30, 7))
    got = la.einsum("abc,cef->abef", la.asarray(t), la.asarray(u))
    np.testing.assert_allclose(np.asarray(got), np.einsum("abc,cef->abef", t, u), rtol=1e-12)
    got = la.tensordot(la.asarray(t), la.asarray(u), axes=1)
    np.testing.assert_allclose(np.asarray(got), np.tensordot(t, u, axes=1), rtol=1e-12)


def test_long_float32_products_with_vectors_are_accurate_and_split():
    # a vector operand (1-D @ 1-D, matrix @ vector, vector @ matrix) sums its
    # products as dot and einsum do: spread over the device, long runs added
    # in double precision (the 1-D @ 1-D form was one sequential float32 sum:
    # 7e-4 off at 2^17, 2^25 ones gave 2^24)
    n = 1 << 17
    a = np.full(n, 0.1, np.float32)
    rows = np.full((3, n), 0.1, np.float32)
    exact = np.float64(np.float32(0.1)) ** 2 * n
    x, m = la.asarray(a), la.asarray(rows)
    for what, result, shape in (("vector @ vector", x @ x, ()), ("matrix @ vector", m @ x, (3,)),
                                ("vector @ matrix", x @ m.T, (3,)),
                                ("stack @ vector", la.stack([m, m]) @ x, (2, 3))):
        got = np.asarray(result)
        assert got.shape == shape and got.dtype == np.float32, what
        assert np.max(np.abs(got - exact)) / exact < 3e-7, what
    with pytest.raises(la.ShapeError, match="mismatch in its core dimension"):
        x @ la.ones((3, 4), dtype=np.float32)


@pytest.mark.parametrize("tier", ["auto", "device"])
def test_contracted_axes_of_length_one_do_not_broadcast(tier):
    # NumPy's products contract axes of one length only (einsum broadcasts
    # a length of 1; dot, inner and tensordot do not)
    with la.tier(tier):
        for n in (5, 70001):
            a, b = la.ones((n, 1)), la.ones((4, 2))
            with pytest.raises(ValueError, match=rf"shapes \({n},1\) and \(4,2\) not aligned"):
                la.dot(a, b)
            with pytest.raises(ValueError, match="not aligned"):
                la.inner(a, b)
            with pytest.raises(ValueError, match="shape-mismatch for sum"):
                la.tensordot(a, b, 1)
        assert la.dot(la.ones((3, 2)), la.ones(2)).shape == (3,)
