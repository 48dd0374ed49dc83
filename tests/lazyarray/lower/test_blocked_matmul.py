"""Matrix products blocked in registers and local memory (the GPU schedule,
run here on the CPU through a replaced device profile)."""

import numpy as np
import pytest

import kernelcore as lp
import lazyarray as la
from lazyarray.run import steps as runtime


@pytest.fixture
def gpu(device_layouts):
    device_layouts("gpu", 4)


def _blocked(lazy) -> bool:
    step = runtime.plan([lazy.node])[-1]        # (the product: the last step)
    return any(n.endswith("_slab") for n in step.kernel.temporary_variables)


CASES = [
    ("square", lambda a, b: a @ b, (128, 64), (64, 128)),
    ("ragged edges", lambda a, b: a @ b, (200, 33), (33, 129)),
    ("batched", lambda a, b: a @ b, (3, 130, 40), (3, 40, 150)),
    ("transposed operand", lambda a, b: a @ b.T, (130, 20), (150, 20)),
    ("einsum", lambda a, b: np.einsum("ki,kj->ij", a, b), (24, 140), (24, 131)),
    ("tensordot", lambda a, b: np.tensordot(a, b, axes=([1], [0])), (128, 17), (17, 128)),
]


#: the operand roles of the cases above with the result's rows and columns
#: whole blocks (a ragged k at most): the same schedule, but compiled in
#: seconds, where the guards of ragged rows and columns take PoCL tens of
#: seconds (ragged rows and columns: tests/test_lazyarray_linalg.py's
#: test_gpu_blocked_products, and the cases above, ``slow``)
WHOLE_BLOCK_CASES = [
    ("batched, whole blocks", lambda a, b: a @ b, (2, 128, 16), (2, 16, 128)),
    ("transposed operand, whole blocks", lambda a, b: a @ b.T, (128, 20), (128, 20)),
    ("einsum, whole blocks", lambda a, b: np.einsum("ki,kj->ij", a, b), (24, 128), (24, 128)),
]
#: the cases whose rows or columns are ragged
_RAGGED = {"ragged edges", "batched", "transposed operand", "einsum"}


def _dtype_case(case, dtype):
    marks = [pytest.mark.slow] if case[0] in _RAGGED else []
    return pytest.param(*case, dtype, marks=marks, id=f"{case[0]}-{np.dtype(dtype).name}")


_DTYPE_CASES = [_dtype_case(c, np.float32) for c in CASES] + [
    _dtype_case(CASES[1], np.float64), _dtype_case(CASES[2], np.int32),
    _dtype_case(WHOLE_BLOCK_CASES[0], np.int32),
    _dtype_case(WHOLE_BLOCK_CASES[1], np.float32),
    _dtype_case(WHOLE_BLOCK_CASES[2], np.float32)]


@pytest.mark.parametrize("name, fn, sa, sb, dtype", _DTYPE_CASES)
def test_blocked_products_match_numpy(gpu, name, fn, sa, sb, dtype):
    rng = np.random.default_rng(0)
    a = (rng.random(sa) * 10).astype(dtype)
    b = (rng.random(sb) * 10).astype(dtype)
    lazy = fn(la.asarray(a), la.asarray(b))
    assert _blocked(lazy)
    expected = fn(a, b)
    got = np.asarray(lazy)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == np.float32 else 1e-12)


#: whole blocks by default; ragged rows and columns (tens of seconds of PoCL
#: compiling) ``slow``
@pytest.mark.parametrize("sa, sb", [
    pytest.param((128, 40), (40, 128), id="whole blocks"),
    pytest.param((130, 40), (40, 140), marks=pytest.mark.slow, id="ragged")])
def test_products_with_fused_operands(gpu, sa, sb):
    """Operands computed elementwise are stored first, then multiplied blocked."""
    rng = np.random.default_rng(1)
    a, b = rng.random(sa), rng.random(sb)
    lazy = np.exp(la.asarray(a)) @ (la.asarray(b) * 2)
    np.testing.assert_allclose(np.asarray(lazy), np.exp(a) @ (b * 2), rtol=1e-12)


@pytest.mark.parametrize("sa, sb", [((100, 64), (64, 300)), ((128, 8), (8, 128))])
def test_small_products_keep_the_reduction_schedule(gpu, sa, sb):
    a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
    lazy = la.asarray(a) @ la.asarray(b)
    assert not _blocked(lazy)
    np.testing.assert_array_equal(np.asarray(lazy), a @ b)


def test_an_operand_read_twice_is_stored_then_blocked(gpu):
    """``a @ a.T`` reads one array in both roles: its second reading is stored
    first (a copy), then the product of the two is blocked."""
    a = np.random.default_rng(2).random((130, 30)).astype(np.float32)
    x = la.asarray(a)
    lazy = x @ x.T
    assert len(runtime.plan([lazy.node])) == 2 and _blocked(lazy)
    np.testing.assert_allclose(np.asarray(lazy), a @ a.T, rtol=1e-5)



# {{{ the CPU schedule: rows by vectors of columns in registers

@pytest.fixture
def cpu(device_layouts):
    device_layouts("cpu", 2)


def _vector_blocked(lazy) -> bool:
    step = runtime.plan([lazy.node])[-1]        # (the product: the last step)
    code = lp.generate_code_v2(step.kernel).device_code()
    return "vload16" in code and "vstore16" in code


CPU_CASES = [
    ("square", lambda a, b: a @ b, (128, 64), (64, 128), True),
    ("ragged rows", lambda a, b: a @ b, (203, 33), (33, 144), True),
    ("one vector per row", lambda a, b: a @ b, (40, 20), (20, 48), True),
    ("batched", lambda a, b: a @ b, (3, 130, 40), (3, 40, 160), True),
    ("broadcast batch", lambda a, b: a @ b, (2, 30, 40), (40, 32), True),
    ("transposed A", lambda a, b: np.einsum("ki,kj->ij", a, b), (24, 140), (24, 128), True),
    ("ragged columns", lambda a, b: a @ b, (64, 33), (33, 129), False),
    # (B stored in the order the product reads it first: lazyarray.ops.linalg)
    ("transposed B", lambda a, b: a @ b.T, (130, 20), (160, 20), True),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("name, fn, sa, sb, vectors", CPU_CASES,
                         ids=[c[0] for c in CPU_CASES])
def test_cpu_products_match_numpy(cpu, name, fn, sa, sb, vectors, dtype):
    rng = np.random.default_rng(3)
    a = (rng.random(sa) * 10).astype(dtype)
    b = (rng.random(sb) * 10).astype(dtype)
    lazy = fn(la.asarray(a), la.asarray(b))
    assert _vector_blocked(lazy) == vectors
    expected = fn(a, b)
    got = np.asarray(lazy)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_cpu_products_of_mixed_types(cpu):
    a = np.arange(40 * 30, dtype=np.int32).reshape(40, 30) % 7
    b = np.random.default_rng(4).random((30, 64)).astype(np.float32)
    lazy = la.asarray(a) @ la.asarray(b)
    assert _vector_blocked(lazy)
    np.testing.assert_allclose(np.asarray(lazy), a @ b, rtol=1e-5)

# }}}
