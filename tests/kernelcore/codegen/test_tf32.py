"""TF32 rounding (kernelcore's ``round_tf32``) and the tensor-core product's
kernel: rounding bit-exact against NumPy's model of ``cvt.rna.tf32.f32`` on
the OpenCL and C targets; the kernel's tiling and PTX as designed (it runs on
NVIDIA GPUs only: ``benchmarks/ab_sgemm_gpu.py tf32`` checks its values)."""

import numpy as np
import pytest

import kernelcore as lp
from lazyarray.lower.tensorcore import (
    BK,
    BM,
    BN,
    THREADS,
    round_tf32,
    tensor_core_shapes,
    tf32_kernel,
)


def _values() -> np.ndarray:
    rng = np.random.default_rng(0)
    spread = (rng.standard_normal(20000) * 10.0 ** rng.uniform(-40, 38, 20000))
    bits = rng.integers(0, 2 ** 32, 5000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 3.4028235e38, -3.4028235e38, 1e-45,
               1 + 2 ** -11, 1 + 2 ** -12, -(1 + 2 ** -11), 1 + 3 * 2 ** -12]
    with np.errstate(over="ignore"):
        return np.concatenate([spread.astype(np.float32), bits, np.float32(special)])


def test_numpy_model_rounds_to_ten_mantissa_bits_ties_away():
    x = np.float32([1 + 2 ** -11, -(1 + 2 ** -11), 1 + 2 ** -12, 1 + 3 * 2 ** -11, 3.4028235e38])
    np.testing.assert_array_equal(
        round_tf32(x), np.float32([1 + 2 ** -10, -(1 + 2 ** -10), 1, 1 + 2 ** -9, np.inf]))
    y = round_tf32(_values())
    finite = np.isfinite(y)
    assert not (y[finite].view(np.uint32) & 0x1FFF).any()
    assert np.isnan(round_tf32(np.float32([np.nan]))).all()


@pytest.mark.parametrize("target", ["opencl", "c"])
def test_round_tf32_is_bit_exact(queue, target):
    args = [lp.GlobalArg("a", np.float32, shape="n"), lp.GlobalArg("out", np.float32, shape="n"),
            lp.ValueArg("n", np.int32)]
    extra = {"target": lp.ExecutableCTarget()} if target == "c" else {}
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = round_tf32(a[i])", args, **extra)
    a = _values()
    _, (out,) = knl(queue if target == "opencl" else None, a=a, n=np.int32(a.size))
    ref = round_tf32(a)
    nan = np.isnan(a)
    np.testing.assert_array_equal(out.view(np.uint32)[~nan], ref.view(np.uint32)[~nan])
    assert np.isnan(out[nan]).all()


def test_round_tf32_takes_float32_only():
    knl = lp.make_kernel("{[i]: 0 <= i < 4}", "out[i] = round_tf32(a[i])",
                         [lp.GlobalArg("a", np.float64, shape=(4,)),
                          lp.GlobalArg("out", np.float64, shape=(4,))])
    with pytest.raises(lp.KernelcoreError, match="round_tf32.*float32"):
        lp.generate_code_v2(knl)


def test_tensor_core_kernel_tiles_and_instructions():
    assert tensor_core_shapes(256, 384, 64) and not tensor_core_shapes(256, 384, 40)
    knl = tf32_kernel(256, 384, 64)
    code = lp.generate_code_v2(knl).device_code()
    assert f"reqd_work_group_size({THREADS}, 1, 1)" in code
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in code
    assert "cvt.rna.tf32.f32" in code
    # one group per BM x BN block of the result
    assert knl.get_grid_size_upper_bounds_as_exprs()[0] == (384 // BN, 256 // BM)
    assert f"k0 < 64; k0 += {BK}" in code


# {{{ la.matmul_precision

import threading  # noqa: E402

import lazyarray as la  # noqa: E402
from lazyarray import target as la_target  # noqa: E402


def _pair(m=64, k=48, n=80, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype))


def _tf32_reference(a, b):
    return round_tf32(a).astype(np.float64) @ round_tf32(b).astype(np.float64)


PRODUCTS = {
    "matmul": (lambda x, y: x @ y, lambda a, b: a @ b),
    "einsum": (lambda x, y: la.einsum("ij,jk->ik", x, y), lambda a, b: a @ b),
    "dot": (lambda x, y: la.dot(x, y), lambda a, b: a @ b),
    "tensordot": (lambda x, y: la.tensordot(x, y, 1), lambda a, b: a @ b),
    "inner": (lambda x, y: la.inner(x, y.T), lambda a, b: a @ b),
    "vecdot": (lambda x, y: la.vecdot(x[:, None, :], y.T[None, :, :]), lambda a, b: a @ b),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_tf32_products_round_their_operands(name):
    lazy, _ = PRODUCTS[name]
    a, b = _pair()
    x, y = la.asarray(a), la.asarray(b)
    with la.matmul_precision("tf32"):
        rounded = np.asarray(lazy(x, y))
    plain = np.asarray(lazy(x, y))
    exact = a.astype(np.float64) @ b
    np.testing.assert_allclose(rounded, _tf32_reference(a, b), rtol=0, atol=2e-5)
    np.testing.assert_allclose(plain, exact, rtol=0, atol=2e-5)
    # (TF32 keeps 10 mantissa bits: the products of 48 terms move by ~1e-3)
    assert np.abs(rounded - exact).max() > 1e-4


def test_tf32_leaves_other_dtypes_and_elementwise_products_alone():
    a, b = _pair(dtype=np.float64)
    a32 = a.astype(np.float32)
    with la.matmul_precision("tf32"):
        f64 = np.asarray(la.asarray(a) @ la.asarray(b))
        mixed = np.asarray(la.asarray(a32) @ la.asarray(b))
        elementwise = np.asarray(la.asarray(a32) * la.asarray(a32))
    np.testing.assert_allclose(f64, a @ b, rtol=1e-12)
    np.testing.assert_allclose(mixed, a32.astype(np.float64) @ b, rtol=1e-12)
    np.testing.assert_array_equal(elementwise, a32 * a32)


def test_precision_setting_names_and_scope():
    assert la.get_matmul_precision() == "float32"
    with la.matmul_precision("high"):
        assert la.get_matmul_precision() == "tf32"
        seen = []
        worker = threading.Thread(target=lambda: seen.append(la.get_matmul_precision()))
        worker.start()
        worker.join()
        assert seen == ["float32"]          # (per thread: a new thread has the default)
    assert la.get_matmul_precision() == "float32"
    previous = la.set_matmul_precision("tf32")
    try:
        assert previous == "float32" and la.get_matmul_precision() == "tf32"
    finally:
        la.set_matmul_precision(previous)
    with pytest.raises(ValueError, match="'bf16' is not one of"):
        la.matmul_precision("bf16").__enter__()


def test_jit_traces_once_per_precision():
    a, b = _pair(32, 16, 24)
    x, y = la.asarray(a), la.asarray(b)
    f = la.jit(lambda p, q: p @ q)
    plain = np.asarray(f(x, y))
    with la.matmul_precision("tf32"):
        rounded = np.asarray(f(x, y))
        np.asarray(f(x, y))
    np.asarray(f(x, y))
    assert f.trace_count == 2
    np.testing.assert_allclose(plain, a.astype(np.float64) @ b, atol=2e-5, rtol=0)
    np.testing.assert_allclose(rounded, _tf32_reference(a, b), atol=2e-5, rtol=0)


@pytest.mark.parametrize("shape, transposed, precision, expected", [
    ((256, 64, 384), False, "tf32", True),
    ((2048, 1024, 1152), False, "tf32", True),    # (2^31+ elements of products: int64 indices)
    ((256, 40, 384), False, "tf32", False),       # k not whole slices
    ((200, 64, 384), False, "tf32", False),       # rows not whole blocks
    ((256, 64, 384), True, "tf32", False),        # A read transposed
    ((256, 64, 384), False, "float32", False),
])
def test_tensor_cores_take_plain_whole_tile_products(monkeypatch, shape, transposed,
                                                     precision, expected, device_layouts):
    """On a device with tensor cores (simulated: the kernels are planned and
    their code inspected, not run), TF32 products of row-major whole tiles
    get the mma.sync kernel; others the float32 blocking."""
    from lazyarray.run import steps as runtime
    device_layouts("gpu", 132)
    monkeypatch.setattr(la_target, "has_tf32_tensor_cores", lambda device: True)
    monkeypatch.setattr(la_target, "_TARGETS", {})
    monkeypatch.setattr(runtime, "_PLANS", {})
    m, k, n = shape
    a, b = _pair(m, k, n)
    x = la.asarray(np.ascontiguousarray(a.T)).T if transposed else la.asarray(a)
    with la.matmul_precision(precision):
        z = x @ la.asarray(b)
    [step] = runtime.plan([z.node])
    code = lp.generate_code_v2(step.kernel).device_code()
    assert ("mma.sync" in code) == expected
    assert isinstance(step.kernel, lp.LoopKernel)

# }}}


def test_profile_counts_of_the_tensor_core_kernel():
    """``explain(profile=True)`` counts the tensor-core kernel's work from the
    graph (kernelcore cannot count its PTX): 2 M N K tf32 operations, each
    operand read and the result written once; no peak of its own."""
    import lazyarray as la
    from lazyarray.explain import _has_c_code, c_code_counts
    from lazyarray.roofline import Peaks
    a = la.asarray(np.ones((256, 64), np.float32))
    b = la.asarray(np.ones((64, 384), np.float32))
    with la.matmul_precision("tf32"):
        y = a @ b
    knl = tf32_kernel(256, 384, 64)
    assert _has_c_code(knl)
    flops, dtype, accessed, by_array = c_code_counts(knl, y.node)
    assert (flops, dtype) == (2 * 256 * 384 * 64, "tf32")
    assert by_array == {("in0", "load"): 256 * 64 * 4, ("in1", "load"): 64 * 384 * 4,
                        ("out", "store"): 256 * 384 * 4}
    assert accessed == sum(by_array.values())
    peaks = Peaks("a GPU", 1e12, (("float32", 1e13),))
    assert peaks.flop_rate("tf32") is None and peaks.flop_rate("float32") == 1e13
